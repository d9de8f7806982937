//! Random sequences of scene edits (add, add_all, remove, move, set_mesh, refit_mesh, enable,
//! explicit updates) interleaved with queries, each query's answers compared with those of a
//! scene built from scratch with the same instances (proptest). Whatever the top-level trees
//! did on the way (refits, the added instances' tree, rebuilds), the answers must be the same:
//! ray hits, all hits, the nearest point and box selection.

mod common;

use meshray::geometry::Aabb;
use meshray::prelude::*;
use meshray::selection::Region;
use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
use nalgebra::{Matrix4, Point3, Rotation3, Unit, Vector3};
use proptest::prelude::*;
use std::sync::{Arc, OnceLock};

/// The meshes instances are made of: the asset scene and a small wavy grid (72 triangles).
fn meshes() -> &'static [Arc<Bvh>] {
    static MESHES: OnceLock<Vec<Arc<Bvh>>> = OnceLock::new();
    MESHES.get_or_init(|| {
        let scene = Mesh::load(common::asset("scene.obj")).unwrap();
        let grid = common::wavy_grid(6);
        vec![Arc::new(Bvh::build(scene)), Arc::new(Bvh::build(grid))]
    })
}

/// One step of a sequence, its numbers drawn freely and read against the scene's state.
#[derive(Clone, Debug)]
enum Step {
    Add(usize, [f32; 7]),
    AddMany(u8, [f32; 7]),
    Remove(usize),
    Move(usize, [f32; 7]),
    SetMesh(usize, usize),
    Refit(usize, f32),
    Enable(usize, bool),
    Update,
    Query(u64),
}

fn numbers() -> impl Strategy<Value = [f32; 7]> {
    prop::array::uniform7(-1.0f32..1.0)
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (any::<usize>(), numbers()).prop_map(|(m, x)| Step::Add(m, x)),
        1 => (1u8..40, numbers()).prop_map(|(n, x)| Step::AddMany(n, x)),
        3 => any::<usize>().prop_map(Step::Remove),
        4 => (any::<usize>(), numbers()).prop_map(|(i, x)| Step::Move(i, x)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(i, m)| Step::SetMesh(i, m)),
        1 => (any::<usize>(), 0.5f32..1.5).prop_map(|(i, s)| Step::Refit(i, s)),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(i, e)| Step::Enable(i, e)),
        1 => Just(Step::Update),
        3 => any::<u64>().prop_map(Step::Query),
    ]
}

/// A transform from seven numbers in [-1, 1]: a rotation, a non-uniform scale (a mirror
/// when the first is negative) and a translation within ±20.
fn transform(x: &[f32; 7]) -> Matrix4<f32> {
    let axis = Unit::new_normalize(Vector3::new(x[0], x[1], x[2] + 1.5));
    let rotation = Rotation3::from_axis_angle(&axis, x[3] * 3.0);
    let s = |v: f32| 0.75 + 0.5 * v.abs();
    let scale = Vector3::new(s(x[4]).copysign(x[0] + 0.1), s(x[5]), s(x[6]));
    Matrix4::new_translation(&(Vector3::new(x[4], x[5], x[6]) * 20.0))
        * rotation.to_homogeneous()
        * Matrix4::new_nonuniform_scaling(&scale)
}

/// What the model knows of an instance.
#[derive(Clone)]
struct Placed {
    bvh: Arc<Bvh>,
    transform: Matrix4<f32>,
    enabled: bool,
}

/// The scene rebuilt from scratch: live instances added in id order (so ties between
/// instances go the same way), with the map from its ids to the edited scene's.
/// The mask that shows an instance to every query, or hides it from all.
fn mask(shown: bool) -> u32 {
    if shown { u32::MAX } else { 0 }
}

fn from_scratch(model: &[Option<Placed>]) -> (Scene, Vec<u32>) {
    let mut scene = Scene::new();
    let mut ids = Vec::new();
    for (id, p) in model.iter().enumerate() {
        if let Some(p) = p {
            let new = scene.add(p.bvh.clone(), p.transform).unwrap();
            scene.set_mask(new, mask(p.enabled)).unwrap();
            ids.push(id as u32);
        }
    }
    (scene, ids)
}

fn compare(edited: &Scene, model: &[Option<Placed>], seed: u64) -> Result<(), TestCaseError> {
    let (fresh, ids) = from_scratch(model);
    prop_assert_eq!(edited.len(), fresh.len());
    let live: Vec<u32> = edited.ids().collect();
    prop_assert_eq!(&live, &ids);
    let mut rng = common::Rng::new(seed);
    let options = SceneOptions::default();
    for _ in 0..24 {
        let o = Point3::new(
            rng.range(-35.0, 35.0),
            rng.range(-35.0, 35.0),
            rng.range(-35.0, 35.0),
        );
        let target = Point3::new(
            rng.range(-22.0, 22.0),
            rng.range(-22.0, 22.0),
            rng.range(-22.0, 22.0),
        );
        let ray = Ray::new(o, target - o);
        let key = |h: meshray::query::SceneHit| (h.instance, h.hit.triangle, h.hit.t.to_bits());
        let fresh_key = |h: meshray::query::SceneHit| {
            (ids[h.instance as usize], h.hit.triangle, h.hit.t.to_bits())
        };
        prop_assert_eq!(
            edited.closest_hit(&ray, &options).map(key),
            fresh.closest_hit(&ray, &options).map(fresh_key)
        );
        prop_assert_eq!(
            edited.any_hit(&ray, &options).is_some(),
            fresh.any_hit(&ray, &options).is_some()
        );
        let all: Vec<_> = edited
            .all_hits(&ray, &options)
            .into_iter()
            .map(key)
            .collect();
        let want: Vec<_> = fresh
            .all_hits(&ray, &options)
            .into_iter()
            .map(fresh_key)
            .collect();
        prop_assert_eq!(all, want);
        let near = |s: &Scene, map: &dyn Fn(u32) -> u32| {
            s.closest_point(target, 15.0, &options).map(|c| {
                (
                    map(c.instance),
                    c.closest.triangle,
                    c.closest.distance.to_bits(),
                )
            })
        };
        prop_assert_eq!(near(edited, &|i| i), near(&fresh, &|i| ids[i as usize]));
        let region = Aabb::new(target - Vector3::repeat(3.0), target + Vector3::repeat(3.0));
        let selected: Vec<_> = edited
            .triangles_in(&Region::Box(region), &options)
            .into_iter()
            .map(|t| (t.instance, t.triangle))
            .collect();
        let mut want: Vec<_> = fresh
            .triangles_in(&Region::Box(region), &options)
            .into_iter()
            .map(|t| (ids[t.instance as usize], t.triangle))
            .collect();
        want.sort_unstable();
        prop_assert_eq!(selected, want);
    }
    Ok(())
}

/// The live id the number `i` picks, if any instance is live.
fn pick(model: &[Option<Placed>], i: usize) -> Option<u32> {
    let live: Vec<usize> = (0..model.len()).filter(|&k| model[k].is_some()).collect();
    (!live.is_empty()).then(|| live[i % live.len()] as u32)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn edited_scenes_answer_as_scenes_built_from_scratch(steps in prop::collection::vec(step(), 1..60)) {
        let meshes = meshes();
        let mut scene = Scene::new();
        let mut model: Vec<Option<Placed>> = Vec::new();
        let mut queries = 0;
        for step in &steps {
            match step {
                Step::Add(m, x) => {
                    let bvh = meshes[m % meshes.len()].clone();
                    let id = scene.add(bvh.clone(), transform(x)).unwrap() as usize;
                    if id == model.len() {
                        model.push(None);
                    }
                    prop_assert!(model[id].is_none(), "add reused a live id");
                    model[id] = Some(Placed { bvh, transform: transform(x), enabled: true });
                }
                Step::AddMany(n, x) => {
                    let items: Vec<_> = (0..*n)
                        .map(|k| {
                            let mut y = *x;
                            y[4] = (y[4] + 0.05 * f32::from(k)).clamp(-1.0, 1.0);
                            (meshes[usize::from(k) % meshes.len()].clone(), transform(&y))
                        })
                        .collect();
                    for (bvh, transform) in items {
                        let id = scene.add(bvh.clone(), transform).unwrap() as usize;
                        if id == model.len() {
                            model.push(None);
                        }
                        prop_assert!(model[id].is_none(), "add reused a live id");
                        model[id] = Some(Placed { bvh, transform, enabled: true });
                    }
                }
                Step::Remove(i) => {
                    if let Some(id) = pick(&model, *i) {
                        scene.remove(id).unwrap();
                        model[id as usize] = None;
                        prop_assert!(scene.remove(id).is_err());
                    }
                }
                Step::Move(i, x) => {
                    if let Some(id) = pick(&model, *i) {
                        scene.set_transform(id, transform(x)).unwrap();
                        model[id as usize].as_mut().unwrap().transform = transform(x);
                    }
                }
                Step::SetMesh(i, m) => {
                    if let Some(id) = pick(&model, *i) {
                        let bvh = meshes[m % meshes.len()].clone();
                        scene.set_mesh(id, bvh.clone()).unwrap();
                        model[id as usize].as_mut().unwrap().bvh = bvh;
                    }
                }
                Step::Refit(i, s) => {
                    if let Some(id) = pick(&model, *i) {
                        let placed = model[id as usize].clone().unwrap();
                        let mesh = placed.bvh.mesh();
                        let moved: Vec<_> = mesh
                            .positions()
                            .iter()
                            .map(|p| Point3::new(p.x * s, p.y, p.z / s))
                            .collect();
                        let others: Vec<_> = (0..model.len() as u32)
                            .filter(|&k| k != id)
                            .filter_map(|k| scene.instance(k).map(|i| (k, i.bvh.mesh().positions().to_vec())))
                            .collect();
                        scene.refit_mesh(id, &moved).unwrap();
                        // Copy on write: the others keep their shapes.
                        for (k, positions) in others {
                            prop_assert_eq!(scene.instance(k).unwrap().bvh.mesh().positions(), &positions[..]);
                        }
                        prop_assert_eq!(scene.instance(id).unwrap().bvh.mesh().positions(), &moved[..]);
                        // The model rebuilds the moved mesh from scratch.
                        let rebuilt = Mesh::from_buffers(moved, mesh.triangles().to_vec()).unwrap();
                        let placed = model[id as usize].as_mut().unwrap();
                        placed.bvh = Arc::new(Bvh::build(rebuilt));
                    }
                }
                Step::Enable(i, e) => {
                    if let Some(id) = pick(&model, *i) {
                        scene.set_mask(id, mask(*e)).unwrap();
                        model[id as usize].as_mut().unwrap().enabled = *e;
                    }
                }
                Step::Update => scene.update(),
                Step::Query(seed) => {
                    compare(&scene, &model, *seed)?;
                    queries += 1;
                }
            }
        }
        compare(&scene, &model, steps.len() as u64)?;
        prop_assert!(queries <= steps.len());
    }
}

/// Many small batches of moves one after another refit the top-level tree along the moved
/// leaves' paths (a few moves among thousands of instances), then, as it grows worse, it
/// is rebuilt; either way answers stay those of a fresh scene.
#[test]
fn long_runs_of_moves_stay_exact() {
    let meshes = meshes();
    let mut rng = common::Rng::new(3);
    let mut scene = Scene::new();
    let mut model = Vec::new();
    let mut numbers = || [(); 7].map(|_| rng.range(-1.0, 1.0));
    for k in 0..3000 {
        let x = numbers();
        let bvh = meshes[k % 2].clone();
        scene.add(bvh.clone(), transform(&x)).unwrap();
        model.push(Some(Placed {
            bvh,
            transform: transform(&x),
            enabled: true,
        }));
    }
    for frame in 0..30u64 {
        for _ in 0..12 {
            let x = numbers();
            let id = (x[0].abs() * 2999.0) as usize;
            scene.set_transform(id as u32, transform(&x)).unwrap();
            model[id].as_mut().unwrap().transform = transform(&x);
        }
        scene.update();
        compare(&scene, &model, frame).unwrap();
    }
}
