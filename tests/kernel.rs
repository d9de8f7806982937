//! The ray walk (`Bvh::cast_ray`: closest and any hit, each face culled or neither) against
//! the closest of every hit along the ray (`Bvh::all_triangles`: the same tree, but the
//! packet test of the walk's portable twin with the range's end never lowered, children in
//! lane order, so the two check each other; tests/exact.rs checks both against brute forces)
//! on the project's scene and the shared meshes: camera, random, surface-leaving and
//! axis-aligned rays. The closest hit must be the same answer bit for bit; any hit, a hit of
//! the scalar test's where the closest hit has one. `.ci/run` runs it again with
//! `MESHRAY_SIMD=avx2` and `MESHRAY_SIMD=portable`, each of which must answer alike.
mod common;

use common::*;
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

fn check(name: &str, mesh: Mesh) {
    let bvh = Bvh::build(mesh);
    let mesh = bvh.mesh();
    let mut rng = Rng::new(38);
    let sets = [
        ("camera", camera_rays(mesh, 64)),
        ("random", random_rays(mesh, 4000, &mut rng)),
        ("surface", surface_rays(mesh, 4000, &mut rng)),
        ("axes", axis_rays(mesh, &mut rng)),
    ];
    for culling in [Culling::None, Culling::Back, Culling::Front] {
        let options = QueryOptions {
            culling,
            ..Default::default()
        };
        for (set, rays) in &sets {
            let mut closest = Count::default();
            let mut any = Count::default();
            for (k, ray) in rays.iter().enumerate() {
                let want = first_of_all(&bvh, ray, &options);
                // The closest hit: the same answer, bit for bit.
                let got = bvh.cast_ray(ray, RayQuery::Closest, &options);
                closest.rays += 1;
                closest.hits += usize::from(got.is_some());
                note(&mut closest, same(got, want), || {
                    format!("{set} ray {k}: {got:?} against {want:?}")
                });
                // Any hit: a hit exactly where the closest has one, and the scalar test's
                // answer on its triangle, bit for bit.
                let got = bvh.cast_ray(ray, RayQuery::Any, &options);
                any.rays += 1;
                any.hits += usize::from(got.is_some());
                let agree = match got {
                    None => want.is_none(),
                    Some(g) => {
                        want.is_some() && {
                            let [a, b, c] = bvh.mesh().triangle(g.triangle as usize);
                            let h = meshray::geometry::intersect_triangle(ray, a, b, c, &options);
                            h.is_some_and(|h| (h.t, h.u, h.v) == (g.t, g.u, g.v))
                        }
                    }
                };
                note(&mut any, agree, || {
                    format!("{set} ray {k}: any {got:?}, closest {want:?}")
                });
            }
            for (query, count) in [("closest", &closest), ("any", &any)] {
                eprintln!(
                    "{name} {culling:?} {set} {query}: {} rays, {} hits, {} differ",
                    count.rays, count.hits, count.differ
                );
                assert_eq!(
                    count.differ, 0,
                    "{name} {culling:?} {set} {query}: {} of {} rays differ: {:?}",
                    count.differ, count.rays, count.examples
                );
            }
            if culling == Culling::None {
                assert!(closest.hits > 0, "{name} {set}: no hits at all");
            }
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
