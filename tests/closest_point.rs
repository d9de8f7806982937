//! `Bvh::closest_point` against an independent f64 brute force over every triangle (project
//! onto the plane, else the nearest of the three edges), on the scene and shared meshes, for
//! points far away, near the surface and exactly on vertices; and the distance limit.

mod common;

use common::Rng;
use meshray::prelude::*;
use meshray::{Bvh, Mesh};
use nalgebra::{Point3, Vector3};

fn f64p(p: &Point3<f32>) -> [f64; 3] {
    [p.x as f64, p.y as f64, p.z as f64]
}

fn check(name: &str, mesh: Mesh) {
    let bvh = Bvh::build(mesh.clone());
    let (c, h) = common::frame(&mesh);
    let tris: Vec<[[f64; 3]; 3]> = (0..mesh.triangle_count())
        .map(|i| mesh.triangle(i).map(|p| f64p(&p)))
        .collect();
    let mut rng = Rng::new(77);
    let mut queries: Vec<Point3<f32>> = (0..150)
        .map(|_| {
            c + Vector3::new(
                rng.range(-1.5, 1.5),
                rng.range(-1.5, 1.5),
                rng.range(-1.5, 1.5),
            ) * h
        })
        .collect();
    for _ in 0..150 {
        let [a, b, cc] = mesh.triangle(rng.below(mesh.triangle_count()));
        let (u, v) = (rng.f32() * 0.5, rng.f32() * 0.5);
        let on = a + (b - a) * u + (cc - a) * v;
        queries.push(on + rng.unit_vector() * (rng.f32() * 0.01 * h));
    }
    for _ in 0..50 {
        queries.push(mesh.positions()[rng.below(mesh.positions().len())]);
    }
    let tolerance = 1e-9 * h as f64;
    for q in &queries {
        let p = f64p(q);
        let distances: Vec<f64> = tris
            .iter()
            .map(|t| common::point_triangle_distance(p, t[0], t[1], t[2]))
            .collect();
        let min = distances.iter().copied().fold(f64::INFINITY, f64::min);
        let got = bvh
            .closest_point(*q, f32::INFINITY, &Default::default())
            .expect("a mesh is always somewhere");
        assert!(
            (got.distance as f64 - min).abs() <= tolerance + 1e-6 * min,
            "{name} {q:?}: {} vs brute {min}",
            got.distance
        );
        assert!(
            (distances[got.triangle as usize] - min).abs() <= tolerance + 1e-12 * min,
            "{name} {q:?}: triangle {} is not among the nearest",
            got.triangle
        );
        // The reported point is on that triangle, at the reported barycentrics and distance.
        let [a, b, cc] = mesh.triangle(got.triangle as usize);
        let w = 1.0 - got.u - got.v;
        let at = a.coords * w + b.coords * got.u + cc.coords * got.v;
        assert!(
            (at - got.point.coords).norm() <= 1e-5 * h,
            "{name}: barycentrics"
        );
        assert!(((got.point - q).norm() - got.distance).abs() <= 1e-5 * h);
        // The distance limit: inclusive, and a hard cut below.
        if min > 1e-3 * h as f64 {
            assert!(
                bvh.closest_point(*q, (min * 0.999) as f32, &Default::default())
                    .is_none()
            );
            let within = bvh
                .closest_point(*q, (min * 1.001) as f32, &Default::default())
                .expect("within the limit");
            assert_eq!(within, got);
        }
    }
}

#[test]
fn closest_point_equals_brute_force_on_the_scene() {
    check("scene", Mesh::load(common::asset("scene.obj")).unwrap());
}

#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
fn closest_point_equals_brute_force_on_shared_meshes() {
    for name in [
        "stanford-bunny/stanford-bunny.obj",
        "crytek-sponza/sponza.obj",
    ] {
        let Some(mesh) = common::shared_mesh(name) else {
            return;
        };
        check(name, mesh);
    }
}

#[test]
fn bad_queries_are_none() {
    let bvh = Bvh::build(Mesh::load(common::asset("scene.obj")).unwrap());
    let p = Point3::new(0.0, 1.0, 0.0);
    assert!(
        bvh.closest_point(p, f32::NAN, &Default::default())
            .is_none()
    );
    assert!(bvh.closest_point(p, -1.0, &Default::default()).is_none());
    assert!(
        bvh.closest_point(Point3::new(f32::NAN, 0.0, 0.0), 10.0, &Default::default())
            .is_none()
    );
    assert!(
        bvh.closest_point(
            Point3::new(f32::INFINITY, 0.0, 0.0),
            f32::INFINITY,
            &Default::default()
        )
        .is_none()
    );
    // A limit of 0 finds only points on the surface.
    let vertex = bvh.mesh().positions()[5];
    assert_eq!(
        bvh.closest_point(vertex, 0.0, &Default::default())
            .map(|c| c.distance),
        Some(0.0)
    );
    let above = vertex + Vector3::new(0.0, 100.0, 0.0);
    assert!(bvh.closest_point(above, 0.0, &Default::default()).is_none());
}
