//! BVH build, refit and load (saved with serde/postcard) time:
//! `cargo bench --bench build`. Meshes: the project's scene and,
//! when the shared meshes are present (`MESHRAY_MESHES` or `../shared/meshes`), a few real
//! ones. The refit moves every vertex (a small shift that alternates between two shapes).
#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use meshray::Bvh;
use std::hint::black_box;

fn build(c: &mut Criterion) {
    let mut group = c.benchmark_group("build");
    group.sample_size(10);
    for (name, mesh) in common::bench_meshes() {
        group.throughput(Throughput::Elements(mesh.triangle_count() as u64));
        group.bench_function(&name, |b| b.iter(|| Bvh::build(black_box(mesh.clone()))));
    }
    group.finish();
}

fn refit(c: &mut Criterion) {
    let mut group = c.benchmark_group("refit");
    group.sample_size(10);
    for (name, mesh) in common::bench_meshes() {
        group.throughput(Throughput::Elements(mesh.triangle_count() as u64));
        let shifted: Vec<_> = mesh
            .positions()
            .iter()
            .map(|p| p + nalgebra::Vector3::new(1e-3, 0.0, 0.0))
            .collect();
        let original = mesh.positions().to_vec();
        let mut bvh = Bvh::build(mesh);
        let mut flip = false;
        group.bench_function(&name, |b| {
            b.iter(|| {
                flip = !flip;
                let positions = if flip { &shifted } else { &original };
                bvh.refit(black_box(positions)).unwrap();
            })
        });
    }
    group.finish();
}

/// Loading a saved tree (postcard bytes in memory, validated) against building it.
#[cfg(feature = "serde")]
fn load(c: &mut Criterion) {
    let mut group = c.benchmark_group("load");
    group.sample_size(10);
    for (name, mesh) in common::bench_meshes() {
        group.throughput(Throughput::Elements(mesh.triangle_count() as u64));
        let bytes = postcard::to_allocvec(&Bvh::build(mesh)).unwrap();
        group.bench_function(&name, |b| {
            b.iter(|| postcard::from_bytes::<Bvh>(black_box(&bytes)).unwrap())
        });
    }
    group.finish();
}

#[cfg(feature = "serde")]
criterion_group!(benches, build, refit, load);
#[cfg(not(feature = "serde"))]
criterion_group!(benches, build, refit);
criterion_main!(benches);
