//! Ray throughput: `cargo bench --bench query`. Criterion reports elements/s = rays/s, one
//! thread, for closest hit and any hit on camera rays (a 256×256 image framing the mesh)
//! and random rays (from a sphere around the mesh into its bounds).
#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use meshray::prelude::*;
use meshray::{Bvh, QueryOptions};
use std::hint::black_box;

fn query(c: &mut Criterion) {
    let options = QueryOptions::default();
    for (name, mesh) in common::bench_meshes() {
        let mut rng = common::Rng::new(7);
        let sets = [
            ("camera", common::camera_rays(&mesh, 256)),
            ("random", common::random_rays(&mesh, 65_536, &mut rng)),
        ];
        let bvh = Bvh::build(mesh);
        let mut group = c.benchmark_group(format!("query/{name}"));
        group.sample_size(20);
        for (set, rays) in &sets {
            group.throughput(Throughput::Elements(rays.len() as u64));
            group.bench_function(format!("closest/{set}"), |b| {
                b.iter(|| {
                    rays.iter()
                        .filter(|r| bvh.closest_hit(black_box(r), &options).is_some())
                        .count()
                })
            });
            group.bench_function(format!("any/{set}"), |b| {
                b.iter(|| {
                    rays.iter()
                        .filter(|r| bvh.any_hit(black_box(r), &options).is_some())
                        .count()
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, query);
criterion_main!(benches);
