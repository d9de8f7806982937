//! BVH build time: `cargo bench --bench build`. Meshes: the project's scene and, when the
//! shared meshes are present (`MESHRAY_MESHES` or `../shared/meshes`), a few real ones.
#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use meshray::{Bvh, Mesh};
use std::hint::black_box;

pub const SHARED: [&str; 3] = [
    "stanford-bunny/stanford-bunny.obj",
    "crytek-sponza/sponza.obj",
    "armadillo/armadillo.obj",
];

fn meshes() -> Vec<(String, Mesh)> {
    let mut out = vec![(
        "scene".to_string(),
        Mesh::load_obj(common::asset("scene.obj")).unwrap(),
    )];
    for name in SHARED {
        if let Some(mesh) = common::shared_mesh(name) {
            out.push((name.split('/').next().unwrap().to_string(), mesh));
        }
    }
    out
}

fn build(c: &mut Criterion) {
    let mut group = c.benchmark_group("build");
    group.sample_size(10);
    for (name, mesh) in meshes() {
        group.throughput(Throughput::Elements(mesh.triangle_count() as u64));
        group.bench_function(&name, |b| b.iter(|| Bvh::build(black_box(mesh.clone()))));
    }
    group.finish();
}

criterion_group!(benches, build);
criterion_main!(benches);
