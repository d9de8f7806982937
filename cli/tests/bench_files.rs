//! `meshray bench`'s ray and hit files: the format round-trips, bad files are errors, and
//! the command's hit files, for ray files it did not make, equal a brute force over every
//! triangle (the crate's f32 test bit for bit, and the independent f64 solve within its
//! rounding bound).

#[path = "../../tests/common/mod.rs"]
mod common;

use common::{Chunks, ExactMesh, Rng};
use meshray::prelude::*;
use meshray::{Bvh, Mesh, QueryOptions, Ray};
use meshray_cli::rays::{self, HitRecord, Kind, RaySet};
use meshray_cli::subdivide;
use nalgebra::{Point3, Vector3};
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("meshray-bench-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn ray_files_round_trip_bit_for_bit() {
    let mesh = Mesh::load(common::asset("scene.obj")).unwrap();
    let mut set = rays::random(&mesh, 1000, 42);
    set.rays.push(Ray::with_range(
        Point3::new(f32::NAN, -0.0, 1e-40),
        Vector3::new(0.0, -0.0, f32::INFINITY),
        -1.0,
        f32::NEG_INFINITY,
    ));
    let bytes = set.to_bytes();
    assert_eq!(bytes.len(), 32 + 32 * set.rays.len());
    assert_eq!(&bytes[..8], b"BVHRAYS1");
    let back = RaySet::from_bytes(&bytes, Path::new("x.rays")).unwrap();
    assert_eq!((back.kind, back.seed, back.width), (Kind::Random, 42, 0));
    assert_eq!(
        back.to_bytes(),
        bytes,
        "decode then encode must give the same bytes"
    );
    let path = scratch("round.rays");
    set.write(&path).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(RaySet::read(&path).unwrap().rays.len(), set.rays.len());

    let hits = [
        HitRecord::MISS,
        HitRecord {
            t: 1.5,
            triangle: 7,
        },
    ];
    let encoded = rays::hits_to_bytes(&hits);
    assert_eq!(encoded.len(), 16);
    assert_eq!(
        rays::hits_from_bytes(&encoded, Path::new("h")).unwrap(),
        hits
    );
}

#[test]
fn bad_ray_files_are_errors_naming_the_file() {
    let mesh = Mesh::load(common::asset("scene.obj")).unwrap();
    let good = rays::random(&mesh, 3, 1).to_bytes();
    let name = Path::new("held-out.rays");
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("short header", good[..31].to_vec()),
        ("truncated ray", good[..good.len() - 1].to_vec()),
        ("extra bytes", [good.clone(), vec![0]].concat()),
    ];
    let mut magic = good.clone();
    magic[7] = b'2';
    cases.push(("magic", magic));
    let mut kind = good.clone();
    kind[24] = 3;
    cases.push(("kind", kind));
    let mut huge = good.clone();
    huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    cases.push(("count overflows", huge));
    for (what, bytes) in cases {
        let err = RaySet::from_bytes(&bytes, name).expect_err(what);
        assert!(
            err.to_string().starts_with("held-out.rays: "),
            "{what}: {err}"
        );
    }
    assert!(rays::hits_from_bytes(&[0; 12], name).is_err());
    assert!(RaySet::read(Path::new("/nonexistent/none.rays")).is_err());
}

#[test]
fn standard_sets_have_the_documented_shape() {
    let mesh = Mesh::load(common::asset("scene.obj")).unwrap();
    let bvh = Bvh::build(mesh.clone());
    let primary = rays::primary(&mesh, 64);
    assert_eq!((primary.rays.len(), primary.width), (64 * 64, 64));
    let random = rays::random(&mesh, 5000, 9);
    assert_eq!(random.rays.len(), 5000);
    let secondary = rays::secondary(&bvh, &primary, 2);
    let primary_hits = primary
        .rays
        .iter()
        .filter(|r| bvh.closest_hit(r, &QueryOptions::default()).is_some())
        .count();
    assert_eq!(secondary.rays.len(), primary_hits);
    assert!(primary_hits > 1000, "the camera frames the scene");
    for set in [&primary, &random, &secondary] {
        for ray in &set.rays {
            assert!(ray.is_valid());
            assert!((ray.direction().norm() - 1.0).abs() < 1e-6);
            assert_eq!(ray.t_max(), f32::INFINITY);
        }
    }
    // Every random ray starts outside the bounds and aims inside them.
    let b = mesh.bounds();
    for ray in &random.rays {
        assert!(!b.contains(&meshray::geometry::Aabb::new(ray.origin(), ray.origin())));
        assert!(b.intersect_ray(ray).is_some());
    }
    // Same seed, same rays; another seed, other rays.
    assert_eq!(
        rays::random(&mesh, 5000, 9).to_bytes(),
        random.to_bytes(),
        "a seed names a ray set"
    );
    assert_ne!(rays::random(&mesh, 5000, 10).to_bytes(), random.to_bytes());
}

#[test]
fn subdivision_keeps_the_surface() {
    let mesh = Mesh::load(common::asset("scene.obj")).unwrap();
    let fine = subdivide::subdivide(&mesh, 2);
    assert_eq!(fine.triangle_count(), 16 * mesh.triangle_count());
    assert_eq!(fine.bounds(), mesh.bounds());
    let (coarse, fine) = (Bvh::build(mesh.clone()), Bvh::build(fine));
    let options = QueryOptions::default();
    let set = rays::random(&mesh, 2000, 5);
    for ray in &set.rays {
        let (a, b) = (
            coarse.closest_hit(ray, &options),
            fine.closest_hit(ray, &options),
        );
        assert_eq!(a.is_some(), b.is_some(), "{ray:?}");
        if let (Some(a), Some(b)) = (a, b) {
            assert!(
                (a.t - b.t).abs() <= 1e-4 * a.t.max(1.0),
                "{} vs {}",
                a.t,
                b.t
            );
        }
    }
}

/// Held-out rays: made here, not by the bench, from points in and around the bounds in
/// uniform directions, with finite and infinite ranges and a few invalid rays.
fn held_out_rays(mesh: &Mesh, n: usize, seed: u64) -> RaySet {
    let (c, h) = common::frame(mesh);
    let mut rng = Rng::new(seed);
    let mut rays: Vec<Ray> = (0..n)
        .map(|i| {
            let origin = c + Vector3::new(
                rng.range(-1.2, 1.2),
                rng.range(-1.2, 1.2),
                rng.range(-1.2, 1.2),
            ) * h;
            let t_max = if i % 3 == 0 {
                rng.range(0.1, 2.0) * h
            } else {
                f32::INFINITY
            };
            Ray::with_range(origin, rng.unit_vector(), 0.0, t_max)
        })
        .collect();
    rays.push(Ray::new(c, Vector3::zeros()));
    rays.push(Ray::new(Point3::new(f32::NAN, 0.0, 0.0), Vector3::x()));
    rays.push(Ray::with_range(c, Vector3::x(), 1.0, 0.5));
    RaySet {
        kind: Kind::Random,
        seed,
        width: 0,
        rays,
    }
}

/// Runs `meshray bench` on `mesh_path` with two held-out ray files and checks its hit files.
/// The bench's hit files (closest hit, `--any`, or `--batch`: the batch query, whose
/// neighbouring camera rays walk together, for closest or with `--any` any hit) against a
/// brute force.
fn check_bench_hits(mesh_path: &Path, mode: &str) {
    let mesh = Mesh::load(mesh_path).unwrap();
    let any = mode.contains("--any");
    let tag = format!(
        "{}-{}",
        mesh_path.file_stem().unwrap().to_string_lossy(),
        mode.replace([' ', '-'], "")
    );
    let sets = [
        held_out_rays(&mesh, 4000, 11),
        rays::secondary(&Bvh::build(mesh.clone()), &rays::primary(&mesh, 48), 3),
        rays::primary(&mesh, 64),
    ];
    let mut command = Command::new(env!("CARGO_BIN_EXE_meshray"));
    command
        .arg("bench")
        .arg(mesh_path)
        .args(["--passes", "1", "--threads", "2"]);
    command.args(mode.split_whitespace());
    let mut outputs = Vec::new();
    for (k, set) in sets.iter().enumerate() {
        let (rays_path, hits_path) = (
            scratch(&format!("{tag}-{k}.rays")),
            scratch(&format!("{tag}-{k}.hits")),
        );
        set.write(&rays_path).unwrap();
        command.arg("--rays").arg(&rays_path);
        command.arg("--hits-out").arg(&hits_path);
        outputs.push(hits_path);
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "bench failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let chunks = Chunks::new(&mesh);
    let exact = ExactMesh::new(&mesh);
    let options = QueryOptions::default();
    for (set, hits_path) in sets.iter().zip(&outputs) {
        let bytes = std::fs::read(hits_path).unwrap();
        let hits = rays::hits_from_bytes(&bytes, hits_path).unwrap();
        assert_eq!(hits.len(), set.rays.len(), "one record per ray");
        let (mut hit_count, mut checked_f64) = (0, 0);
        for (ray, record) in set.rays.iter().zip(&hits) {
            let brute = common::brute_all_f32(&mesh, &chunks, ray, &options);
            if any {
                match brute.iter().find(|(_, t)| *t == record.triangle) {
                    Some((t, _)) => assert_eq!(t.to_bits(), record.t.to_bits()),
                    None => assert!(!record.is_hit() && brute.is_empty(), "{ray:?}"),
                }
            } else {
                match brute.first() {
                    Some(&(t, _)) => {
                        assert_eq!(t.to_bits(), record.t.to_bits(), "{ray:?}");
                        assert!(
                            brute.contains(&(record.t, record.triangle)),
                            "the triangle is one the brute force hits at that t: {ray:?}"
                        );
                    }
                    None => assert_eq!(*record, HitRecord::MISS, "{ray:?}"),
                }
            }
            hit_count += usize::from(record.is_hit());
            // The f64 oracle: unless f32 could answer either way, the same first triangle
            // distance within the rounding bound.
            let answers = exact.hits(&chunks, ray, &options);
            if ray.is_valid() && !any && answers.iter().all(|e| !e.borderline) {
                checked_f64 += 1;
                let closest = answers.iter().min_by(|a, b| a.t.total_cmp(&b.t));
                match closest {
                    Some(e) => assert!(
                        (f64::from(record.t) - e.t).abs() <= e.t_tolerance,
                        "f64 says t = {} ({}), bench says {:?}",
                        e.t,
                        e.triangle,
                        record
                    ),
                    None => assert!(!record.is_hit(), "f64 sees no hit: {ray:?}"),
                }
            }
        }
        assert!(hit_count > 0, "the rays must find something to compare");
        if !any {
            assert!(checked_f64 * 10 >= set.rays.len() * 9, "{checked_f64}");
        }
    }
}

#[test]
fn bench_hits_equal_brute_force_on_the_scene() {
    for mode in ["", "--any", "--batch", "--any --batch", "--details"] {
        check_bench_hits(&common::asset("scene.obj"), mode);
    }
}

#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
fn bench_hits_equal_brute_force_on_shared_meshes() {
    let Some(dir) = common::meshes_dir() else {
        return;
    };
    for name in [
        "stanford-bunny/stanford-bunny.obj",
        "crytek-sponza/sponza.obj",
    ] {
        check_bench_hits(&dir.join(name), "");
        check_bench_hits(&dir.join(name), "--batch");
    }
    check_bench_hits(&dir.join("stanford-bunny/stanford-bunny.obj"), "--any");
}
