//! Animated meshes, a frame at a time: `cargo bench --bench pose`. Each shared mesh gets a
//! skin of four joints stacked by height (every vertex weighs four of them, as a character's
//! do) and one morph target; a frame poses the vertices ([`Rig::pose_into`]), or poses them
//! and refits the tree ([`Bvh::pose`], the whole per-frame cost of picking an animated
//! mesh): the bunny and armadillo (when the shared meshes are there) and a 1M-triangle grid.
#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use meshray::pose::{Pose, Rig};
use meshray::{Bvh, Mesh};
use nalgebra::{Matrix4, Point3, Vector3};
use std::hint::black_box;

/// Four joints by height, each turning about x at its own level; every vertex blends the
/// four by its distance to each level.
fn rig(mesh: &Mesh) -> Rig {
    let (lo, hi) = (mesh.bounds().min.y, mesh.bounds().max.y);
    let (joints, weights) = mesh
        .positions()
        .iter()
        .map(|p| {
            let h = (p.y - lo) / (hi - lo).max(1e-6);
            let w = [0.125, 0.375, 0.625, 0.875].map(|c: f32| 1.0 / (0.05 + (h - c).abs()));
            let sum: f32 = w.iter().sum();
            ([0, 1, 2, 3], w.map(|x| x / sum))
        })
        .unzip();
    let ripple = mesh
        .positions()
        .iter()
        .map(|p| Vector3::new(0.0, 0.0, (p.x * 10.0).sin() * 1e-3))
        .collect();
    Rig::new(mesh)
        .with_skin(joints, weights)
        .unwrap()
        .with_morph_targets(vec![ripple])
        .unwrap()
}

/// Frame `f`'s joint matrices for a mesh of `bounds`: each joint turns a little more than
/// the one below.
fn joints(bounds: &meshray::geometry::Aabb, f: usize) -> [Matrix4<f32>; 4] {
    let (lo, hi) = (bounds.min, bounds.max);
    let angle = 0.1 * (f as f32 * 0.3).sin();
    std::array::from_fn(|j| {
        let level = lo.y + (hi.y - lo.y) * (0.125 + 0.25 * j as f32);
        let pivot = Vector3::new(0.5 * (lo.x + hi.x), level, 0.5 * (lo.z + hi.z));
        Matrix4::new_translation(&pivot)
            * Matrix4::from_scaled_axis(Vector3::x() * angle * j as f32)
            * Matrix4::new_translation(&-pivot)
    })
}

fn meshes() -> Vec<(String, Mesh)> {
    let mut meshes: Vec<_> = [
        "stanford-bunny/stanford-bunny.obj",
        "armadillo/armadillo.obj",
    ]
    .into_iter()
    .filter_map(|name| {
        Some((
            name.split('/').next()?.to_string(),
            common::shared_mesh(name)?,
        ))
    })
    .collect();
    // A million triangles (a 707 × 707 grid): how posing scales.
    meshes.push(("grid-1M".to_string(), common::wavy_grid(707)));
    meshes
}

fn pose(c: &mut Criterion) {
    let mut group = c.benchmark_group("pose");
    group.sample_size(20);
    for (name, mesh) in meshes() {
        let rig = rig(&mesh);
        let bounds = mesh.bounds();
        let mut posed = vec![Point3::origin(); rig.vertex_count()];
        let mut bvh = Bvh::build(mesh.clone());
        let mut frame = 0;
        group.bench_function(format!("pose_into/{name}"), |b| {
            b.iter(|| {
                frame += 1;
                let joints = joints(&bounds, frame);
                let pose = Pose {
                    joints: &joints,
                    morph_weights: &[0.5],
                };
                rig.pose_into(&pose, &mut posed).unwrap();
                black_box(&posed);
            })
        });
        let (mut rebuilds, mut growth) = (0, 0.0f32);
        group.bench_function(format!("pose_and_refit/{name}"), |b| {
            b.iter(|| {
                frame += 1;
                let joints = joints(&bounds, frame);
                let pose = Pose {
                    joints: &joints,
                    morph_weights: &[0.5],
                };
                let update = bvh.pose(&rig, &pose).unwrap();
                rebuilds += usize::from(update.rebuilt);
                growth = growth.max(update.growth);
            })
        });
        println!(
            "{name}: {} vertices, {}; {rebuilds} rebuilds, largest growth {growth:.2}",
            rig.vertex_count(),
            bvh.stats()
        );
    }
    group.finish();
}

criterion_group!(benches, pose);
criterion_main!(benches);
