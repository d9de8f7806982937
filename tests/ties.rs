//! Deterministic ties: among triangles hit at exactly the same `t`, the closest hit is the
//! lowest triangle number, whatever the build options, the batch path or the triangle test,
//! asked through the ray trait of a tree and of a scene of that tree placed where it is;
//! among scene instances hit at the same `t`, the lowest instance number.
mod common;

use common::Rng;
use meshray::geometry::intersect_triangle;
use meshray::prelude::*;
use meshray::{BuildOptions, Bvh, Mesh, QueryOptions, Ray, RayQuery, Scene, SceneOptions};
use nalgebra::{Matrix4, Point3, Vector3};
use std::sync::Arc;

/// A 12 × 12 grid of unit squares in the plane y = 0, each square's two triangles written
/// four times in shuffled file order: as they are, and with their winding reversed, each
/// twice. The copies share their corners bit for bit, so a ray hits all of them at the
/// same `t`.
fn layered_grid() -> Mesh {
    let side = 12;
    let mut positions = Vec::new();
    for z in 0..=side {
        for x in 0..=side {
            positions.push(Point3::new(x as f32 * 0.37, 0.0, z as f32 * 0.29));
        }
    }
    let at = |x: u32, z: u32| z * (side + 1) + x;
    let mut triangles = Vec::new();
    for z in 0..side {
        for x in 0..side {
            let (a, b, c, d) = (at(x, z), at(x + 1, z), at(x + 1, z + 1), at(x, z + 1));
            for [p, q, r] in [[a, b, c], [a, c, d]] {
                triangles.extend([[p, q, r], [p, r, q], [p, q, r], [p, r, q]]);
            }
        }
    }
    // Shuffle, so the copies of a triangle land far apart in file order and in leaves.
    let mut rng = Rng::new(5);
    for i in (1..triangles.len()).rev() {
        triangles.swap(i, rng.below(i + 1));
    }
    Mesh::from_buffers(positions, triangles).unwrap()
}

/// The brute force: the smallest `t`, then the lowest triangle number among those at it.
fn brute(mesh: &Mesh, ray: &Ray, watertight: bool) -> Option<(f32, u32)> {
    let mut best: Option<(f32, u32)> = None;
    for i in 0..mesh.triangle_count() {
        let [a, b, c] = mesh.triangle(i);
        let options = QueryOptions {
            watertight,
            ..Default::default()
        };
        let hit = intersect_triangle(ray, a, b, c, &options);
        if let Some(h) = hit
            && best.is_none_or(|(t, _)| h.t < t)
        {
            best = Some((h.t, i as u32));
        }
    }
    best
}

fn rays(n: usize) -> Vec<Ray> {
    let mut rng = Rng::new(17);
    (0..n)
        .map(|_| {
            let o = Point3::new(
                rng.range(-1.0, 5.5),
                rng.range(0.5, 4.0),
                rng.range(-1.0, 4.5),
            );
            let target = Point3::new(rng.range(0.0, 4.4), 0.0, rng.range(0.0, 3.5));
            Ray::new(o, target - o)
        })
        .collect()
}

/// The closest hit of every ray through the ray trait (whole, compact, batched) is `want`'s
/// `(t, triangle)`.
fn closest_through_the_trait<G: RayCast>(
    g: &G,
    rays: &[Ray],
    options: &G::Options<'_>,
    want: &[Option<(f32, u32)>],
    what: &str,
) {
    let mut batch = Vec::new();
    g.cast_rays(rays, RayQuery::Closest, options, &mut batch);
    let as_mesh = |h: &G::Compact| {
        let (_, h) = G::mesh_hit(h);
        (h.t, h.triangle)
    };
    for (i, ray) in rays.iter().enumerate() {
        let short = g.cast_ray(ray, RayQuery::Closest, options);
        assert_eq!(short.as_ref().map(as_mesh), want[i], "ray {i}, {what}");
        assert_eq!(
            g.closest_hit(ray, options).is_some(),
            want[i].is_some(),
            "ray {i}, the whole hit, {what}"
        );
        assert_eq!(
            batch[i].as_ref().map(as_mesh),
            want[i],
            "ray {i}, batch, {what}"
        );
    }
}

#[test]
fn the_lowest_triangle_wins_a_tie_under_every_build_and_test() {
    let mesh = layered_grid();
    let rays = rays(3000);
    let builds = [
        BuildOptions::default(),
        BuildOptions {
            max_leaf_size: 1,
            ..Default::default()
        },
        BuildOptions {
            max_leaf_size: 3,
            bins: 4,
            ..Default::default()
        },
        BuildOptions {
            max_leaf_size: 32,
            bins: 64,
            ..Default::default()
        },
    ];
    let mut ties = 0;
    for watertight in [false, true] {
        let want: Vec<_> = rays.iter().map(|r| brute(&mesh, r, watertight)).collect();
        // Each hit point lies on four copies at least: every hit is a tie.
        ties += want.iter().flatten().count();
        let options = QueryOptions {
            watertight,
            ..Default::default()
        };
        for build in &builds {
            let bvh = Arc::new(Bvh::build_with(mesh.clone(), build));
            let what = format!("{build:?}, watertight {watertight}");
            closest_through_the_trait(&*bvh, &rays, &options, &want, &what);
            // A scene of that one tree placed where it is: the same ties, the same winners.
            let mut scene = Scene::new();
            scene.add(bvh, Matrix4::identity()).unwrap();
            let scene_options = SceneOptions::from(options);
            closest_through_the_trait(&scene, &rays, &scene_options, &want, &what);
        }
    }
    assert!(ties > 4000, "only {ties} rays hit the grid");
}

#[test]
fn the_lowest_instance_wins_a_tie() {
    let mesh = layered_grid();
    let bvh = Arc::new(Bvh::build(mesh));
    // Five instances in the same place, then one moved off; the scene's tree orders them by
    // their boxes, not by number.
    let mut scene = Scene::new();
    scene
        .add(
            bvh.clone(),
            Matrix4::new_translation(&Vector3::new(9.0, 0.0, 0.0)),
        )
        .unwrap();
    for _ in 0..5 {
        scene.add(bvh.clone(), Matrix4::identity()).unwrap();
    }
    let mut hits = 0;
    for ray in rays(500) {
        let single = bvh.closest_hit(&ray, &QueryOptions::default());
        let hit = scene.closest_hit(&ray, &SceneOptions::default());
        assert_eq!(hit.map(|h| h.instance), single.map(|_| 1));
        assert_eq!(hit.map(|h| h.hit.triangle), single.map(|h| h.triangle));
        hits += usize::from(hit.is_some());
    }
    assert!(hits > 300);
}
