//! The ray walk of issue 38 (`meshray::lab`), level by level, against the closest of every
//! hit along the ray (`Bvh::all_triangles`: the same tree, but the packet test of the walk's
//! portable twin with the range's end never lowered, children in lane order, so the two check
//! each other; tests/exact.rs checks both against brute forces) on the project's scene and
//! the shared meshes: camera, random and surface-leaving rays. The exact level is what
//! `Bvh::cast_ray` runs. A level below it may differ from the exact answer only where its
//! missing guarantee allows (the floor: rays through shared edges and rounding at the range's
//! ends; the watertight level: the `f32` `t` at the range's ends and between nearly equal
//! hits), and those rays must stay rare; every hit it reports must be a hit the exact test
//! confirms on that triangle, or within rounding of one. Without AVX2 and FMA (or with
//! `MESHRAY_SIMD=portable`, as `.ci/run` runs it again) every level runs the walk's portable
//! twin, which must answer as the exact level does.
mod common;

use common::*;
use meshray::lab::{Level, RayTree};
use meshray::prelude::*;
use meshray::{Bvh, CompactHit, Culling, Mesh, QueryOptions, Ray, RayQuery};
use nalgebra::{Point3, Vector3};

#[derive(Default, Debug)]
struct Count {
    rays: usize,
    hits: usize,
    differ: usize,
    examples: Vec<String>,
}

/// Whether `t` and `exact` are the same distance to within rounding of `f32` geometry.
fn close(t: f32, exact: f32) -> bool {
    (f64::from(t) - f64::from(exact)).abs() <= 1e-4 * f64::from(exact.abs()).max(1.0)
}

fn check(name: &str, mesh: Mesh) {
    let bvh = Bvh::build(mesh);
    let tree = RayTree::new(&bvh).expect("the tree is within the walk's depth limit");
    let mesh = bvh.mesh();
    let mut rng = Rng::new(38);
    let sets = [
        ("camera", camera_rays(mesh, 64)),
        ("random", random_rays(mesh, 4000, &mut rng)),
        ("surface", surface_rays(mesh, 4000, &mut rng)),
        ("axes", axis_rays(mesh, &mut rng)),
    ];
    let exact = QueryOptions::default();
    for (level, allowed_per_10k) in [
        (Level::Floor, 50),
        (Level::Watertight, 10),
        (Level::Exact, 0),
    ] {
        for (set, rays) in &sets {
            let mut closest = Count::default();
            let mut any = Count::default();
            for (k, ray) in rays.iter().enumerate() {
                let want = first_of_all(&bvh, ray, &exact);
                let got = tree.closest(ray, level);
                closest.rays += 1;
                closest.hits += usize::from(got.is_some());
                let agree = match (got, want) {
                    // The exact level: the same answer, bit for bit.
                    _ if level == Level::Exact => same(got, want),
                    (None, None) => true,
                    (Some(g), Some(w)) => {
                        g.triangle == w.triangle && close(g.t, w.t)
                            || close(g.t, w.t) && confirmed(&bvh, ray, g.triangle, g.t)
                    }
                    _ => false,
                };
                note(&mut closest, agree, || {
                    format!("{set} ray {k}: {got:?} against {want:?}")
                });
                let got = tree.any(ray, level);
                any.rays += 1;
                any.hits += usize::from(got.is_some());
                let agree = match got {
                    None => want.is_none(),
                    // The exact level: a hit the scalar test gives, bit for bit.
                    Some(g) if level == Level::Exact => {
                        want.is_some() && {
                            let [a, b, c] = bvh.mesh().triangle(g.triangle as usize);
                            let h = meshray::geometry::intersect_triangle(ray, a, b, c, &exact);
                            h.is_some_and(|h| (h.t, h.u, h.v) == (g.t, g.u, g.v))
                        }
                    }
                    Some(g) => confirmed(&bvh, ray, g.triangle, g.t),
                };
                note(&mut any, agree, || {
                    format!("{set} ray {k}: any {got:?}, closest {want:?}")
                });
            }
            for (query, count) in [("closest", &closest), ("any", &any)] {
                eprintln!(
                    "{name} {level:?} {set} {query}: {} rays, {} hits, {} differ",
                    count.rays, count.hits, count.differ
                );
                assert!(
                    count.differ * 10_000 <= count.rays * allowed_per_10k,
                    "{name} {level:?} {set} {query}: {} of {} rays differ: {:?}",
                    count.differ,
                    count.rays,
                    count.examples
                );
            }
            assert!(closest.hits > 0, "{name} {set}: no hits at all");
        }
    }
    // The exact level with each face culled, closest hit: the same answers, bit for bit.
    for culling in [Culling::Back, Culling::Front] {
        let options = QueryOptions {
            culling,
            ..Default::default()
        };
        for (set, rays) in &sets {
            let differ = rays
                .iter()
                .filter(|ray| {
                    let want = first_of_all(&bvh, ray, &options);
                    !same(tree.exact(ray, RayQuery::Closest, culling), want)
                        || !same(bvh.cast_ray(ray, RayQuery::Closest, &options), want)
                })
                .count();
            assert_eq!(differ, 0, "{name} {set} {culling:?}: {differ} rays differ");
        }
    }
}

/// Rays along the 26 directions whose components are -1, 0 or 1, each zero as +0 and as -0
/// (every octant a walk is compiled for, and the ties between equal components that choose
/// its largest axis), at three lengths, from outside the mesh through random points of it.
fn axis_rays(mesh: &Mesh, rng: &mut Rng) -> Vec<Ray> {
    let (_, h) = frame(mesh);
    let b = mesh.bounds();
    let values = [0.0f32, -0.0, 1.0, -1.0];
    let mut rays = Vec::new();
    for code in 0..64 {
        let d = Vector3::from_fn(|k, _| values[(code >> (2 * k)) & 3]);
        if d.iter().all(|x| *x == 0.0) {
            continue;
        }
        for scale in [0.25f32, 1.0, 8.0] {
            let target = Point3::new(
                rng.range(b.min.x, b.max.x),
                rng.range(b.min.y, b.max.y),
                rng.range(b.min.z, b.max.z),
            );
            rays.push(Ray::new(target - d * (2.0 * h), d * scale));
        }
    }
    rays
}

/// The closest hit as the first of every hit (sorted by `t`, then triangle: ties to the
/// lowest triangle, as the closest hit's rule).
fn first_of_all(bvh: &Bvh, ray: &Ray, options: &QueryOptions) -> Option<CompactHit> {
    let mut hits = Vec::new();
    bvh.all_triangles(ray, options, &mut hits);
    hits.first().copied()
}

/// The same answer, bit for bit (`t`, `u` and `v` by their bits).
fn same(got: Option<CompactHit>, want: Option<CompactHit>) -> bool {
    let bits = |h: Option<CompactHit>| {
        h.map(|h| (h.triangle, h.t.to_bits(), h.u.to_bits(), h.v.to_bits()))
    };
    bits(got) == bits(want)
}

fn note(count: &mut Count, agree: bool, example: impl FnOnce() -> String) {
    if !agree {
        count.differ += 1;
        if count.examples.len() < 5 {
            count.examples.push(example());
        }
    }
}

/// Whether the exact test hits `triangle` at about `t` (with the ray's range widened by
/// rounding, so a hit a level reports a few ulps past an end still counts).
fn confirmed(bvh: &Bvh, ray: &Ray, triangle: u32, t: f32) -> bool {
    let [a, b, c] = bvh.mesh().triangle(triangle as usize);
    let slack = 1e-4 * ray.t_max().abs().clamp(1.0, f32::MAX);
    let wide = Ray::with_range(
        ray.origin(),
        ray.direction(),
        ray.t_min() - 1e-4 * ray.t_min().abs().max(1.0),
        ray.t_max() + slack,
    );
    let hit = meshray::geometry::intersect_triangle(&wide, a, b, c, &QueryOptions::default());
    hit.is_some_and(|h| close(t, h.t))
}

#[test]
fn scene_asset() {
    check("scene", Mesh::load(asset("scene.obj")).unwrap());
}

#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
fn shared_meshes() {
    for (name, mesh) in bench_meshes().into_iter().skip(1) {
        check(&name, mesh);
    }
    let conference = shared_mesh("conference/conference.obj").expect("the shared meshes");
    check("conference", conference);
}
