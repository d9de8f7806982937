//! Mesh against mesh: `cargo bench --bench overlap` (`RAYON_NUM_THREADS=1` for one thread).
//! Criterion reports the time of one `intersecting_triangles` call: a shared mesh against a
//! copy of itself moved by a twentieth of its size (their surfaces cross along closed
//! curves, as two parts of an assembly do), and `self_intersections` of each.
#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, criterion_group, criterion_main};
use meshray::prelude::*;
use meshray::{Bvh, QueryOptions};
use nalgebra::{Matrix4, Vector3};
use std::hint::black_box;

fn overlap(c: &mut Criterion) {
    let all = QueryOptions::default();
    for (name, mesh) in common::bench_meshes() {
        let (_, h) = common::frame(&mesh);
        let bvh = Bvh::build(mesh);
        let moved = Matrix4::new_translation(&Vector3::new(0.1 * h, 0.05 * h, 0.0));
        let pairs = bvh.intersecting_triangles(&bvh, moved, &all).unwrap().len();
        let mut group = c.benchmark_group(format!("overlap/{name}"));
        group.sample_size(10);
        group.bench_function(format!("against itself moved ({pairs} pairs)"), |b| {
            b.iter(|| {
                bvh.intersecting_triangles(black_box(&bvh), moved, &all)
                    .unwrap()
                    .len()
            })
        });
        group.bench_function("self_intersections", |b| {
            b.iter(|| black_box(&bvh).self_intersections(&all).len())
        });
        group.finish();
    }
}

criterion_group!(benches, overlap);
criterion_main!(benches);
