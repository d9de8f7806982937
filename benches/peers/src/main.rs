//! Runs the same rays through meshray and peer crates in one process and prints Mrays/s and
//! the ratio, so shared-machine noise hits both alike. Closest hit, one thread.
//!
//! ```text
//! cargo run --release -p meshray-peers -- MESH.obj...
//! ```
//!
//! Rays: camera rays (a 512×512 pinhole image framing the mesh, as the tests' camera set) and
//! 262,144 random rays from a sphere of radius 1.5·h around the bounds into the bounds. Each
//! figure is the median of 5 passes, the crates alternating pass by pass. Hit counts are
//! printed too: they must agree. meshray's watertight mode is timed in the same passes.
#[path = "../../../tests/common/mod.rs"]
mod common;

use meshray::{Bvh, Mesh, QueryOptions, Ray};
use parry3d::math::Vector;
use parry3d::query::RayCast;
use std::time::Instant;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: meshray-peers MESH.obj...");
        std::process::exit(2);
    }
    for path in paths {
        let mesh = Mesh::load_obj(&path).unwrap_or_else(|e| panic!("{e}"));
        let mut rng = common::Rng::new(7);
        let sets = [
            ("camera", common::camera_rays(&mesh, 512)),
            ("random", common::random_rays(&mesh, 262_144, &mut rng)),
        ];
        let started = Instant::now();
        let bvh = Bvh::build(mesh.clone());
        let meshray_build = started.elapsed().as_secs_f64() * 1e3;
        let vertices: Vec<Vector> = mesh
            .positions()
            .iter()
            .map(|p| Vector::new(p.x, p.y, p.z))
            .collect();
        let started = Instant::now();
        let parry = parry3d::shape::TriMesh::new(vertices, mesh.triangles().to_vec())
            .expect("parry3d TriMesh");
        let parry_build = started.elapsed().as_secs_f64() * 1e3;
        println!(
            "{path}: {} triangles; build ms: meshray {meshray_build:.1}, parry3d {parry_build:.1} (ratio {:.2})",
            mesh.triangle_count(),
            parry_build / meshray_build
        );
        let options = QueryOptions::default();
        for (name, rays) in &sets {
            let parry_rays: Vec<parry3d::query::Ray> = rays
                .iter()
                .map(|r: &Ray| {
                    let (o, d) = (r.origin(), r.direction());
                    parry3d::query::Ray::new(Vector::new(o.x, o.y, o.z), Vector::new(d.x, d.y, d.z))
                })
                .collect();
            let watertight = QueryOptions {
                watertight: true,
                ..options
            };
            let (mut ours, mut theirs, mut tight) = (Vec::new(), Vec::new(), Vec::new());
            let (mut our_hits, mut their_hits, mut tight_hits) = (0, 0, 0);
            for _ in 0..5 {
                let started = Instant::now();
                our_hits = rays
                    .iter()
                    .filter(|r| bvh.closest_hit(r, &options).is_some())
                    .count();
                ours.push(rays.len() as f64 / started.elapsed().as_secs_f64() / 1e6);
                let started = Instant::now();
                tight_hits = rays
                    .iter()
                    .filter(|r| bvh.closest_hit(r, &watertight).is_some())
                    .count();
                tight.push(rays.len() as f64 / started.elapsed().as_secs_f64() / 1e6);
                let started = Instant::now();
                their_hits = parry_rays
                    .iter()
                    .filter(|r| parry.cast_local_ray(r, f32::MAX, false).is_some())
                    .count();
                theirs.push(rays.len() as f64 / started.elapsed().as_secs_f64() / 1e6);
            }
            let (ours, theirs, tight) = (median(ours), median(theirs), median(tight));
            println!(
                "  {name}: {} rays, hits {our_hits} / {their_hits}; Mrays/s meshray {ours:.2}, parry3d {theirs:.2}; \
                 meshray/parry3d {:.2}; watertight {tight:.2} ({tight_hits} hits, {:.2} of Cramer's speed)",
                rays.len(),
                ours / theirs,
                tight / ours
            );
        }
    }
}
