//! Refit: after the vertices move, a refit tree answers exactly what a brute force over the
//! moved triangles answers, and what a fresh build answers; bad positions are errors that
//! leave the tree as it was. Prints the SAH cost of refit and rebuilt trees (the rebuild hint).

mod common;

use common::{Chunks, Rng};
use meshray::prelude::*;
use meshray::{Bvh, Error, Mesh, QueryOptions, Ray};
use nalgebra::{Point3, Vector3};

/// A twist about the vertical axis through the centre (up to `turns` radians at the top and
/// bottom) and a ripple of `ripple`·h: triangles move relative to each other.
fn deform(mesh: &Mesh, turns: f32, ripple: f32) -> Vec<Point3<f32>> {
    let (c, h) = common::frame(mesh);
    mesh.positions()
        .iter()
        .map(|p| {
            let q = p - c;
            let angle = turns * q.y / h;
            let (s, k) = angle.sin_cos();
            let bump = ripple * h * (7.0 * q.x / h).sin();
            c + Vector3::new(k * q.x - s * q.z, q.y + bump, s * q.x + k * q.z)
        })
        .collect()
}

fn check_against_brute_force(bvh: &Bvh, rays: &[Ray]) {
    let mesh = bvh.mesh();
    let chunks = Chunks::new(mesh);
    let fresh = Bvh::build(mesh.clone());
    for options in [
        QueryOptions::default(),
        QueryOptions {
            watertight: true,
            ..Default::default()
        },
    ] {
        let mut hits = 0;
        for ray in rays {
            let brute = common::brute_all_f32(mesh, &chunks, ray, &options);
            let all: Vec<(f32, u32)> = bvh
                .all_hits(ray, &options)
                .iter()
                .map(|h| (h.t, h.triangle))
                .collect();
            assert_eq!(all, brute, "all hits, {ray:?}");
            let closest = bvh.closest_hit(ray, &options).map(|h| (h.t, h.triangle));
            match brute.first() {
                Some(&(t, _)) => {
                    let (got_t, got) = closest.expect("a hit");
                    assert_eq!(got_t.to_bits(), t.to_bits(), "{ray:?}");
                    assert!(brute.contains(&(got_t, got)), "{ray:?}");
                    hits += 1;
                }
                None => assert!(closest.is_none(), "{ray:?}"),
            }
            let fresh_t = fresh.closest_hit(ray, &options).map(|h| h.t.to_bits());
            assert_eq!(
                closest.map(|(t, _)| t.to_bits()),
                fresh_t,
                "refit vs rebuild"
            );
            if let Some(h) = bvh.any_hit(ray, &options) {
                assert!(brute.contains(&(h.t, h.triangle)), "{ray:?}");
            } else {
                assert!(brute.is_empty());
            }
        }
        assert!(hits > rays.len() / 10, "{hits} hits");
    }
}

fn rays_for(mesh: &Mesh, seed: u64) -> Vec<Ray> {
    let mut rng = Rng::new(seed);
    let mut rays = common::random_rays(mesh, 1500, &mut rng);
    rays.extend(common::surface_rays(mesh, 500, &mut rng));
    rays.extend(common::camera_rays(mesh, 32));
    rays
}

fn refit_and_check(name: &str, mesh: Mesh) {
    let mut bvh = Bvh::build(mesh.clone());
    let built_cost = bvh.stats().sah_cost;
    for (turns, ripple) in [(0.3, 0.01), (1.5, 0.05)] {
        let moved = deform(&mesh, turns, ripple);
        bvh.refit(&moved).unwrap();
        meshray::diagnostics::validate(&bvh).unwrap();
        assert_eq!(bvh.mesh().positions(), &moved[..]);
        let refit_cost = bvh.stats().sah_cost;
        let rebuilt_cost = Bvh::build(bvh.mesh().clone()).stats().sah_cost;
        println!(
            "{name}: twist {turns} rad, ripple {ripple}·h: SAH cost built {built_cost:.2}, refit {refit_cost:.2}, rebuilt {rebuilt_cost:.2} (refit/rebuilt {:.2})",
            refit_cost / rebuilt_cost
        );
        check_against_brute_force(&bvh, &rays_for(bvh.mesh(), 31));
    }
    // Back to the original positions: the original tree, box for box.
    bvh.refit(mesh.positions()).unwrap();
    assert_eq!(bvh.stats(), Bvh::build(mesh).stats());
}

#[test]
fn refit_equals_brute_force_on_the_scene() {
    let mesh = Mesh::load(common::asset("scene.obj")).unwrap();
    refit_and_check("scene", mesh);
}

#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
fn refit_equals_brute_force_on_shared_meshes() {
    for name in ["stanford-bunny/stanford-bunny.obj", "spot/spot.obj"] {
        let Some(mesh) = common::shared_mesh(name) else {
            return;
        };
        refit_and_check(name, mesh);
    }
}

#[test]
fn bad_positions_are_errors_and_change_nothing() {
    let mesh = Mesh::load(common::asset("scene.obj")).unwrap();
    let mut bvh = Bvh::build(mesh.clone());
    let stats = bvh.stats();
    let n = mesh.positions().len();
    assert!(matches!(
        bvh.refit(&mesh.positions()[1..]),
        Err(Error::VertexCount { expected, found }) if expected == n && found == n - 1
    ));
    let mut bad = mesh.positions().to_vec();
    bad[7].y = f32::NAN;
    assert!(matches!(
        bvh.refit(&bad),
        Err(Error::NonFiniteCoordinate { vertex: 7, .. })
    ));
    bad[7].y = f32::INFINITY;
    assert!(bvh.refit(&bad).is_err());
    // Beyond the range where the arithmetic is exact (the mesh's own limit).
    bad[7].y = 1e20;
    assert!(matches!(
        bvh.refit(&bad),
        Err(Error::CoordinateOutOfRange {
            vertex: 7,
            value: 1e20,
            ..
        })
    ));
    // Every vertex at one point: refused after the leaves were refilled, and undone.
    let point = vec![nalgebra::Point3::new(1.0, 2.0, 3.0); n];
    assert!(matches!(
        bvh.refit(&point),
        Err(Error::MeshTooSmall { extent, .. }) if extent == 0.0
    ));
    assert_eq!(bvh.stats(), stats);
    assert_eq!(bvh.mesh().positions(), mesh.positions());
    meshray::diagnostics::validate(&bvh).unwrap();
    let ray = Ray::new(Point3::new(0.3, 5.0, 3.1), -Vector3::y());
    let fresh = Bvh::build(mesh.clone());
    let key = |b: &Bvh| {
        b.closest_hit(&ray, &QueryOptions::default())
            .map(|h| (h.t, h.triangle))
    };
    assert_eq!(key(&bvh), key(&fresh));
}

#[test]
fn vertices_no_triangle_uses_are_not_checked() {
    // The asset scene with one extra vertex, used by no triangle.
    let scene = Mesh::load(common::asset("scene.obj")).unwrap();
    let mut positions = scene.positions().to_vec();
    positions.push(Point3::new(0.0, 0.0, 0.0));
    let mesh = Mesh::from_buffers(positions.clone(), scene.triangles().to_vec()).unwrap();
    let mut bvh = Bvh::build(mesh);
    let last = positions.len() - 1;
    positions[last] = Point3::new(f32::NAN, 0.0, 0.0);
    bvh.refit(&positions).unwrap();
    // A used one is: the first in the triangles' order is named.
    let used = scene.triangles()[5][1] as usize;
    positions[used].z = f32::INFINITY;
    assert!(matches!(
        bvh.refit(&positions),
        Err(Error::NonFiniteCoordinate { vertex, .. }) if vertex == used
    ));
}

/// The `v` lines of an OBJ file, read by the test itself: the array a user of the file holds.
fn file_vertices(text: &str) -> Vec<Point3<f32>> {
    text.lines()
        .filter_map(|line| line.strip_prefix("v "))
        .map(|rest| {
            let c: Vec<f32> = rest
                .split_whitespace()
                .map(|w| w.parse().unwrap())
                .collect();
            Point3::new(c[0], c[1], c[2])
        })
        .collect()
}

/// The OBJ text with its `v` lines replaced by `vertices`, in order (written so they read
/// back bit for bit).
fn with_vertices(text: &str, vertices: &[Point3<f32>]) -> String {
    let mut next = vertices.iter();
    let mut out = String::new();
    for line in text.lines() {
        if line.starts_with("v ") {
            let p = next.next().unwrap();
            out.push_str(&format!("v {:?} {:?} {:?}\n", p.x, p.y, p.z));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// A deforming OBJ: a user holds the file's vertex array, moves it, and refits with it. The
/// refit tree must be the tree of the moved file, as loaded from scratch, answering exactly.
/// (Loading once renumbered vertices per object in order of first use, dropped unused ones
/// and copied shared ones, so the file's array did not fit `refit`.)
fn refit_with_the_files_vertices(name: &str, path: &std::path::Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut bvh = Bvh::build(Mesh::load(path).unwrap());
    let vertices = file_vertices(&text);
    assert_eq!(
        bvh.mesh().positions(),
        &vertices[..],
        "{name}: positions() is the file's v"
    );
    for (frame, (turns, ripple)) in [(0.2, 0.02), (0.9, 0.04)].into_iter().enumerate() {
        // Deform the file's own array, around the file's own centre.
        let (c, h) = common::frame(bvh.mesh());
        let moved: Vec<Point3<f32>> = vertices
            .iter()
            .map(|p| {
                let q = p - c;
                let (s, k) = (turns * q.y / h).sin_cos();
                c + Vector3::new(
                    k * q.x - s * q.z,
                    q.y + ripple * h * (5.0 * q.z / h).cos(),
                    s * q.x + k * q.z,
                )
            })
            .collect();
        bvh.refit(&moved)
            .unwrap_or_else(|e| panic!("{name} frame {frame}: {e}"));
        let reloaded = Mesh::from_bytes(
            with_vertices(&text, &moved).as_bytes(),
            &meshray::LoadOptions {
                format: Some(meshray::mesh::Format::Obj),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(bvh.mesh().positions(), reloaded.positions());
        assert_eq!(bvh.mesh().triangles(), reloaded.triangles());
        for t in 0..reloaded.triangle_count() {
            assert_eq!(
                bvh.mesh().triangle(t),
                reloaded.triangle(t),
                "{name}: triangle {t}"
            );
        }
        check_against_brute_force(&bvh, &rays_for(bvh.mesh(), 40 + frame as u64));
    }
}

#[test]
fn refit_with_the_files_vertices_on_the_scene() {
    refit_with_the_files_vertices("scene", &common::asset("scene.obj"));
}

#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
fn refit_with_the_files_vertices_on_the_bunny() {
    let dir = common::meshes_dir().unwrap();
    // The bunny has 35,947 `v` lines of which 34,834 are used.
    refit_with_the_files_vertices("bunny", &dir.join("stanford-bunny/stanford-bunny.obj"));
}
