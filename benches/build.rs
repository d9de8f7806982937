//! BVH build time: `cargo bench --bench build`. Meshes: the project's scene and, when the
//! shared meshes are present (`MESHRAY_MESHES` or `../shared/meshes`), a few real ones.
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

criterion_group!(benches, build);
criterion_main!(benches);
