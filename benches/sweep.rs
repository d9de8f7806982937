//! Sweep throughput: `cargo bench --bench sweep`. Criterion reports elements/s = sweeps/s,
//! one thread: a sphere of a small radius (0.1 % and 1 % of the mesh's half diagonal) and a
//! capsule moving along random rays (from a sphere around the mesh into its bounds), beside
//! the closest hit of the same rays, the yardstick (a sweep at ≥ 0.5× its rate).
#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use meshray::prelude::*;
use meshray::{Bvh, QueryOptions, RayQuery};
use std::hint::black_box;

fn sweep(c: &mut Criterion) {
    let options = QueryOptions::default();
    for (name, mesh) in common::bench_meshes() {
        let mut rng = common::Rng::new(7);
        let rays = common::random_rays(&mesh, 16_384, &mut rng);
        let (_, h) = common::frame(&mesh);
        let bvh = Bvh::build(mesh);
        let mut group = c.benchmark_group(format!("sweep/{name}"));
        group.sample_size(10);
        group.throughput(Throughput::Elements(rays.len() as u64));
        group.bench_function("closest ray", |b| {
            b.iter(|| {
                rays.iter()
                    .filter(|r| {
                        bvh.cast_ray(black_box(r), RayQuery::Closest, &options)
                            .is_some()
                    })
                    .count()
            })
        });
        for (label, radius) in [("sphere 0.1%", 0.001 * h), ("sphere 1%", 0.01 * h)] {
            group.bench_function(label, |b| {
                b.iter(|| {
                    rays.iter()
                        .filter(|r| {
                            matches!(bvh.cast_sphere(black_box(r), radius, &options), Ok(Some(_)))
                        })
                        .count()
                })
            });
        }
        let axis = [0.0, 0.02 * h, 0.0];
        group.bench_function("capsule 1%", |b| {
            b.iter(|| {
                rays.iter()
                    .filter(|r| {
                        matches!(
                            bvh.cast_capsule(black_box(r), axis, 0.01 * h, &options),
                            Ok(Some(_))
                        )
                    })
                    .count()
            })
        });
        group.finish();
    }
}

criterion_group!(benches, sweep);
criterion_main!(benches);
