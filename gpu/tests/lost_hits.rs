//! Two rays, found by this spike's GPU comparison, on which `Bvh::cast_ray`'s closest hit is
//! not the least-t answer of the scalar watertight test over every triangle (ties to the
//! lowest triangle number), which `all_triangles` and a brute force agree on. Both rays are
//! aimed exactly at a mesh vertex. Ignored: they fail on main at c7bc057 (run with
//! `--ignored`); CPU only, no GPU needed.

use meshray::prelude::*;
use meshray::{Bvh, CompactHit, Mesh, QueryOptions, Ray, RayQuery};
use std::path::Path;

fn brute_force(bvh: &Bvh, ray: &Ray) -> Option<CompactHit> {
    let mut best: Option<CompactHit> = None;
    for t in 0..bvh.mesh().triangle_count() {
        let [a, b, c] = bvh.mesh().triangle(t);
        let hit = meshray::geometry::intersect_triangle(ray, a, b, c, &QueryOptions::default());
        if let Some(h) = hit
            && best.is_none_or(|b| h.t < b.t)
        {
            best = Some(CompactHit {
                t: h.t,
                triangle: t as u32,
                u: h.u,
                v: h.v,
            });
        }
    }
    best
}

fn check(mesh: &Path, origin: [f32; 3], direction: [f32; 3]) {
    let bvh = Bvh::build(Mesh::load(mesh).expect("the mesh loads"));
    let ray = Ray::new(origin, direction);
    let walk = bvh.cast_ray(&ray, RayQuery::Closest, &QueryOptions::default());
    let brute = brute_force(&bvh, &ray);
    let mut all = Vec::new();
    bvh.all_triangles(&ray, &QueryOptions::default(), &mut all);
    println!(
        "cast_ray {walk:?}\nbrute force {brute:?}\nall_triangles {:?}",
        &all[..all.len().min(4)]
    );
    assert_eq!(walk, brute);
}

/// Ties at one t: the walk answers triangle 1703, the tie rule says 1702.
#[test]
#[ignore = "fails on main at c7bc057: cast_ray breaks a tie to the higher triangle number"]
fn scene_tie_at_a_corner() {
    check(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/scene.obj"),
        [-7.7505608, -1.4317117, -1.9852571],
        [4.7278366, 1.9915197, 2.960257],
    );
}

/// A strictly closer hit lost: the walk answers t = 0.9999977 (triangle 12686), the scalar
/// test accepts triangle 13392 at t = 0.9999939 (at its corner, u ≈ 1, v = 0).
#[test]
#[ignore = "fails on main at c7bc057: cast_ray misses a closer hit at a shared corner"]
fn bunny_closer_hit_at_a_corner() {
    let path = Path::new("/work/shared/meshes/stanford-bunny/stanford-bunny.obj");
    if !path.exists() {
        println!("skipped: no bunny");
        return;
    }
    check(
        path,
        [0.0069963783, 0.12555596, 0.12626],
        [0.048597623, -0.06880896, -0.100492],
    );
}
