//! Which triangles of two meshes or scenes, or of one, intersect
//! (`Overlap::intersecting_triangles`, `Overlap::self_intersections`): equal to a brute
//! force over every pair of triangles, which
//! decides by another route — the distance between two triangles in f64, the least over
//! their six edges of the edge's nearest approach to the other triangle (convex along the
//! edge, found by golden section) — on the asset scene placed against itself, on random
//! soups and on a folded grid; pairs within rounding of touching are left to either answer.
mod common;

use common::*;
use meshray::prelude::*;
use meshray::query::SceneTriangle;
use meshray::{Bvh, Error, Mesh, QueryOptions, Scene, SceneOptions};
use nalgebra::{Matrix4, Point3, Vector3};
use std::sync::Arc;

fn all() -> QueryOptions {
    QueryOptions::default()
}

type P = [f64; 3];

/// The distance between two triangles, by their edges' nearest approaches.
fn distance(t: &[P; 3], u: &[P; 3]) -> f64 {
    let edge_to = |p: P, q: P, tri: &[P; 3]| {
        let at = |s: f64| {
            let x = [0, 1, 2].map(|k| p[k] + s * (q[k] - p[k]));
            point_triangle_distance(x, tri[0], tri[1], tri[2])
        };
        golden(0.0, 1.0, at).1.min(at(0.0)).min(at(1.0))
    };
    let mut d = f64::INFINITY;
    for (a, b) in [(t, u), (u, t)] {
        for k in 0..3 {
            d = d.min(edge_to(a[k], a[(k + 1) % 3], b));
        }
    }
    d
}

fn area(t: &[P; 3]) -> f64 {
    let (e1, e2) = (
        [0, 1, 2].map(|k| t[1][k] - t[0][k]),
        [0, 1, 2].map(|k| t[2][k] - t[0][k]),
    );
    let n = [
        e1[1] * e2[2] - e1[2] * e2[1],
        e1[2] * e2[0] - e1[0] * e2[2],
        e1[0] * e2[1] - e1[1] * e2[0],
    ];
    (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt()
}

fn boxes_near(t: &[P; 3], u: &[P; 3], pad: f64) -> bool {
    (0..3).all(|k| {
        let (lo, hi) = (
            t.iter().map(|p| p[k]).fold(f64::INFINITY, f64::min),
            t.iter().map(|p| p[k]).fold(f64::NEG_INFINITY, f64::max),
        );
        let (ulo, uhi) = (
            u.iter().map(|p| p[k]).fold(f64::INFINITY, f64::min),
            u.iter().map(|p| p[k]).fold(f64::NEG_INFINITY, f64::max),
        );
        lo <= uhi + pad && ulo <= hi + pad
    })
}

/// Checks `found` against the brute force over every pair of `a` × `b` (`same`: one mesh,
/// `i < j`, pairs with a common corner left out). Returns how many pairs intersect.
fn check(
    label: &str,
    a: &[[P; 3]],
    b: &[[P; 3]],
    same: bool,
    found: &[(u32, u32)],
    scale: f64,
) -> usize {
    let tol = 1e-9 * scale;
    let mut sorted = found.to_vec();
    sorted.sort_unstable();
    assert_eq!(sorted, found, "{label}: sorted");
    sorted.dedup();
    assert_eq!(sorted.len(), found.len(), "{label}: no pair twice");
    let found: std::collections::HashSet<(u32, u32)> = found.iter().copied().collect();
    let mut meeting = 0;
    for (i, t) in a.iter().enumerate() {
        for (j, u) in b.iter().enumerate() {
            if same && (j <= i || t.iter().any(|p| u.contains(p))) {
                continue;
            }
            let pair = (i as u32, j as u32);
            let has = found.contains(&pair);
            if !boxes_near(t, u, tol) {
                assert!(!has, "{label}: {pair:?} reported, boxes apart");
                continue;
            }
            let flat = area(t) <= tol * tol || area(u) <= tol * tol;
            let d = distance(t, u);
            if d > tol {
                assert!(!has, "{label}: {pair:?} reported at distance {d}");
            } else if d < 1e-14 * scale && !flat {
                // Clearly crossing (not only grazing): must be found.
                assert!(has, "{label}: {pair:?} missed at distance {d}");
            }
            meeting += usize::from(has);
        }
    }
    meeting
}

#[test]
fn the_asset_scene_against_itself_placed() {
    let bvh = Bvh::build(Mesh::load(asset("scene.obj")).unwrap());
    let a = triangles64(bvh.mesh(), None);
    let placements = [
        Matrix4::new_translation(&Vector3::new(0.0, 1.5, 0.0)),
        Matrix4::new_translation(&Vector3::new(0.3, 0.2, -0.1))
            * Matrix4::from_axis_angle(&Vector3::y_axis(), 0.6)
            * Matrix4::new_nonuniform_scaling(&Vector3::new(1.0, 0.7, 1.3)),
        Matrix4::new_translation(&Vector3::new(40.0, 0.0, 0.0)),
    ];
    for (k, m) in placements.iter().enumerate() {
        let found = bvh.intersecting_triangles(&bvh, *m, &all()).unwrap();
        let b = triangles64(bvh.mesh(), Some(&m.cast::<f64>()));
        let n = check(&format!("placement {k}"), &a, &b, false, &found, 8.0);
        assert_eq!(n == 0, k == 2, "placement {k}: {n} pairs");
    }
    // The identity: every triangle meets itself and its neighbours.
    let found = bvh
        .intersecting_triangles(&bvh, Matrix4::identity(), &all())
        .unwrap();
    for i in 0..bvh.mesh().triangle_count() as u32 {
        assert!(found.binary_search(&(i, i)).is_ok(), "{i} meets itself");
    }
}

/// `n` random triangles of about `spread` in the cube `[-1, 1]³`.
fn soup(rng: &mut Rng, n: usize, spread: f32) -> Mesh {
    let mut points = Vec::new();
    let mut faces = Vec::new();
    for i in 0..n as u32 {
        let c = Point3::new(
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
        );
        for _ in 0..3 {
            points.push(c + rng.unit_vector() * spread);
        }
        faces.push([3 * i, 3 * i + 1, 3 * i + 2]);
    }
    Mesh::from_buffers(points, faces).unwrap()
}

#[test]
fn random_soups_against_each_other_and_themselves() {
    let mut rng = Rng::new(17);
    for soup_number in 0..4 {
        let soup = soup_number;
        let (x, y) = (
            self::soup(&mut rng, 400, 0.3),
            self::soup(&mut rng, 300, 0.25),
        );
        let (bx, by) = (Bvh::build(x), Bvh::build(y));
        let turn = Matrix4::from_axis_angle(&Vector3::x_axis(), 0.4 * soup as f64 as f32);
        let found = bx.intersecting_triangles(&by, turn, &all()).unwrap();
        assert!(bx.intersects(&by, turn, &all()).unwrap());
        let away = Matrix4::new_translation(&Vector3::new(2.6, 0.0, 0.0));
        assert_eq!(
            bx.intersects(&by, away, &all()).unwrap(),
            !bx.intersecting_triangles(&by, away, &all())
                .unwrap()
                .is_empty(),
            "soup {soup}: one pair or none, as the list says"
        );
        let far = Matrix4::new_translation(&Vector3::new(5.0, 0.0, 0.0));
        assert!(!bx.intersects(&by, far, &all()).unwrap());
        let (a, b) = (
            triangles64(bx.mesh(), None),
            triangles64(by.mesh(), Some(&turn.cast::<f64>())),
        );
        let n = check(&format!("soup {soup}"), &a, &b, false, &found, 2.0);
        assert!(n > 20, "soup {soup}: {n}");
        let found = bx.self_intersections(&all());
        let n = check(&format!("soup {soup} alone"), &a, &a, true, &found, 2.0);
        assert!(n > 20, "soup {soup} alone: {n}");
    }
}

#[test]
fn a_folded_grid_finds_its_fold_and_a_clean_one_nothing() {
    // A wavy grid is clean: neighbours share corners, nothing else meets.
    let grid = Bvh::build(wavy_grid(30));
    assert!(grid.self_intersections(&all()).is_empty());
    // The asset scene: the box and the cone stand on the ground (their bases lie in its
    // plane), the sphere touches it at a shared corner (left out).
    let scene = Bvh::build(Mesh::load(asset("scene.obj")).unwrap());
    let found = scene.self_intersections(&all());
    let a = triangles64(scene.mesh(), None);
    check("scene alone", &a, &a, true, &found, 8.0);
    let object = |i: u32| {
        let mesh = scene.mesh();
        mesh.objects()[mesh.attributes(i as usize).object as usize].clone()
    };
    let mut kinds: Vec<(String, String)> = found
        .iter()
        .map(|&(i, j)| {
            let (x, y) = (object(i), object(j));
            if x <= y { (x, y) } else { (y, x) }
        })
        .collect();
    kinds.sort();
    kinds.dedup();
    assert!(
        kinds.contains(&("box".into(), "ground".into())),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&("cone".into(), "ground".into())),
        "{kinds:?}"
    );
}

#[test]
fn a_bad_transform_is_refused_and_flat_triangles_meet_nothing() {
    let bvh = Bvh::build(Mesh::load(asset("scene.obj")).unwrap());
    for bad in [
        Matrix4::zeros(),
        Matrix4::from_element(f32::NAN),
        Matrix4::new(
            1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0,
        ),
    ] {
        let e = bvh.intersecting_triangles(&bvh, bad, &all()).unwrap_err();
        assert!(matches!(e, Error::InvalidTransform { .. }), "{e}");
    }
    // Triangles of zero area have no surface: they meet nothing, not even each other.
    let p = [
        [0.0f32, 0.0, 0.0],
        [1.0, 1.0, 1.0],
        [2.0, 2.0, 2.0],
        [0.5, 0.5, 0.5],
    ];
    let flat = Bvh::build(Mesh::from_buffers(p.to_vec(), vec![[0, 1, 2], [3, 1, 2]]).unwrap());
    assert!(flat.self_intersections(&all()).is_empty());
    assert!(
        bvh.intersecting_triangles(&flat, Matrix4::identity(), &all())
            .unwrap()
            .is_empty()
    );
    assert!(
        flat.intersecting_triangles(&bvh, Matrix4::identity(), &all())
            .unwrap()
            .is_empty()
    );
}

/// A scene's pairs, instance pair by instance pair, against the brute force over the
/// instances' world triangles (`b`'s moved by `to_first` first); `same`: one scene, each
/// instance pair once. Returns how many pairs meet.
fn check_scenes(
    label: &str,
    first: &Scene,
    second: &Scene,
    to_first: &Matrix4<f64>,
    same: bool,
    found: &[(SceneTriangle, SceneTriangle)],
) -> usize {
    let mut sorted = found.to_vec();
    sorted.sort_unstable();
    assert_eq!(sorted, found, "{label}: sorted");
    let seen = |scene: &Scene| -> Vec<(u32, Vec<[P; 3]>)> {
        scene
            .ids()
            .filter_map(|id| {
                let view = scene.instance(id)?;
                (view.mask != 0).then(|| {
                    let m = view.transform.cast::<f64>();
                    (id, triangles64(view.bvh.mesh(), Some(&m)))
                })
            })
            .collect()
    };
    let (mine, mut theirs) = (seen(first), seen(second));
    for (_, triangles) in &mut theirs {
        for t in triangles.iter_mut() {
            *t = t.map(|p| {
                let q = to_first.transform_point(&Point3::from(p));
                [q.x, q.y, q.z]
            });
        }
    }
    let mut meeting = 0;
    for (a, ta) in &mine {
        for (b, tb) in &theirs {
            if same && b < a {
                continue;
            }
            let pairs: Vec<(u32, u32)> = found
                .iter()
                .filter(|(s, t)| (s.instance, t.instance) == (*a, *b))
                .map(|(s, t)| (s.triangle, t.triangle))
                .collect();
            let label = format!("{label}: instances {a} and {b}");
            meeting += check(&label, ta, tb, same && a == b, &pairs, 4.0);
        }
    }
    let named = |id: u32, scene: &Scene| scene.instance(id).is_some_and(|v| v.mask != 0);
    assert!(
        found
            .iter()
            .all(|(s, t)| named(s.instance, first) && named(t.instance, second)),
        "{label}: only seen instances"
    );
    meeting
}

#[test]
fn a_scenes_instances_overlap_as_their_placed_triangles_do() {
    let mut rng = Rng::new(29);
    let x = Arc::new(Bvh::build(soup(&mut rng, 150, 0.3)));
    let y = Arc::new(Bvh::build(soup(&mut rng, 120, 0.25)));
    let turn = |angle: f32| Matrix4::from_axis_angle(&Vector3::z_axis(), angle);
    let at = |x: f32, y: f32| Matrix4::new_translation(&Vector3::new(x, y, 0.0));
    let mut scene = Scene::new();
    scene.add(x.clone(), Matrix4::identity()).unwrap();
    // Overlapping the first: turned and squashed (a non-uniform scale), moved a little.
    scene
        .add(
            y.clone(),
            at(0.4, 0.1)
                * turn(0.7)
                * Matrix4::new_nonuniform_scaling(&Vector3::new(1.0, 0.5, 1.3)),
        )
        .unwrap();
    // Mirrored and overlapping both; far away; hidden (mask 0) on top of the first.
    scene
        .add(
            x.clone(),
            at(-0.5, 0.3) * Matrix4::new_nonuniform_scaling(&Vector3::new(-1.0, 1.0, 1.0)),
        )
        .unwrap();
    scene.add(y.clone(), at(50.0, 0.0)).unwrap();
    let hidden = scene.add(x.clone(), Matrix4::identity()).unwrap();
    scene.set_mask(hidden, 0).unwrap();
    let everything = SceneOptions::default();
    let found = scene.self_intersections(&everything);
    let n = check_scenes(
        "scene alone",
        &scene,
        &scene,
        &Matrix4::identity(),
        true,
        &found,
    );
    assert!(n > 100, "{n}");
    let across = |s: &SceneTriangle, t: &SceneTriangle| s.instance != t.instance;
    assert!(found.iter().any(|(s, t)| across(s, t)));
    // Against a second scene placed by a turn: pairs from each scene's instances.
    let mut other = Scene::new();
    other.add(y, at(0.2, -0.3)).unwrap();
    other.add(x, turn(1.1)).unwrap();
    let place = at(0.1, 0.2) * turn(0.3);
    let found = scene
        .intersecting_triangles(&other, place, &everything)
        .unwrap();
    let n = check_scenes("two scenes", &scene, &other, &place.cast(), false, &found);
    assert!(n > 100, "{n}");
    assert!(scene.intersects(&other, place, &everything).unwrap());
    let far = at(500.0, 0.0);
    assert!(!scene.intersects(&other, far, &everything).unwrap());
    assert!(
        scene
            .intersecting_triangles(&other, far, &everything)
            .unwrap()
            .is_empty()
    );
    // A filter leaves instances out on both sides.
    let first_only = |id: u32| id == 0;
    let some = SceneOptions {
        filter: Some(&first_only),
        ..Default::default()
    };
    let found = scene.intersecting_triangles(&other, place, &some).unwrap();
    assert!(!found.is_empty());
    assert!(
        found
            .iter()
            .all(|(s, t)| s.instance == 0 && t.instance == 0)
    );
    assert!(matches!(
        scene.intersecting_triangles(&other, Matrix4::zeros(), &everything),
        Err(Error::InvalidTransform { .. })
    ));
}
