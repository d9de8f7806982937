//! Sweep throughput: `cargo bench --bench sweep`. Criterion reports elements/s = sweeps/s,
//! one thread: a sphere of a small radius (0.1 % and 1 % of the mesh's half diagonal) and a
//! capsule moving along random rays (from a sphere around the mesh into its bounds), beside
//! the closest hit of the same rays, the yardstick (a sweep at ≥ 0.5× its rate).
//! The `sweep/placed` group does the same in a scene of four copies of the first shared mesh
//! (the asset scene without them): two moved by translations alone (the shape moved back
//! into the mesh's space) and two turned or scaled (culled in the mesh's space by a bound
//! of the shape, tested in the world).
#[path = "../tests/common/mod.rs"]
mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use meshray::prelude::*;
use meshray::{Bvh, Mesh, QueryOptions, Ray, RayQuery, Scene, SceneOptions};
use nalgebra::{Matrix4, Rotation3, Vector3};
use std::hint::black_box;
use std::sync::Arc;

/// How many of `rays` hit `g` (closest hits).
fn hits<G: RayCast>(g: &G, rays: &[Ray], options: &G::Options<'_>) -> usize {
    rays.iter()
        .filter(|r| {
            g.cast_ray(black_box(r), RayQuery::Closest, options)
                .is_some()
        })
        .count()
}

/// How many sweeps of the capsule of `axis` and `radius` along `rays` touch `g` (a zero
/// axis: a sphere, which is what `cast_sphere` casts).
fn contacts<G: Sweep>(
    g: &G,
    rays: &[Ray],
    axis: [f32; 3],
    radius: f32,
    options: &G::Options<'_>,
) -> usize {
    rays.iter()
        .filter(|r| {
            matches!(
                g.cast_capsule(black_box(r), axis, radius, options),
                Ok(Some(_))
            )
        })
        .count()
}

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
        group.bench_function("closest ray", |b| b.iter(|| hits(&bvh, &rays, &options)));
        for (label, radius) in [("sphere 0.1%", 0.001 * h), ("sphere 1%", 0.01 * h)] {
            group.bench_function(label, |b| {
                b.iter(|| contacts(&bvh, &rays, [0.0; 3], radius, &options))
            });
        }
        let axis = [0.0, 0.02 * h, 0.0];
        group.bench_function("capsule 1%", |b| {
            b.iter(|| contacts(&bvh, &rays, axis, 0.01 * h, &options))
        });
        group.finish();
    }
}

/// Four copies of `mesh` side by side along x, `2.5·h` apart: the first two translated,
/// the third turned a quarter about y, the fourth turned about x and scaled by 1.5.
fn placed(mesh: Mesh) -> (Scene, Vec<Ray>, f32) {
    let (c, h) = common::frame(&mesh);
    let bvh = Arc::new(Bvh::build(mesh));
    let mut scene = Scene::new();
    let to_origin = Matrix4::new_translation(&(-c.coords));
    for k in 0..4 {
        let shift = Matrix4::new_translation(&Vector3::new(2.5 * h * k as f32, 0.0, 0.0));
        let linear = match k {
            2 => {
                Rotation3::from_euler_angles(0.0, std::f32::consts::FRAC_PI_2, 0.0).to_homogeneous()
            }
            3 => {
                Rotation3::from_euler_angles(0.7, 0.0, 0.0).to_homogeneous()
                    * Matrix4::new_scaling(1.5)
            }
            _ => Matrix4::identity(),
        };
        let at = Matrix4::new_translation(&c.coords) * shift * linear * to_origin;
        scene.add(bvh.clone(), at).unwrap();
    }
    scene.update();
    let rays = common::random_rays_in(&scene.bounds(), 16_384, &mut common::Rng::new(11));
    (scene, rays, h)
}

fn sweep_placed(c: &mut Criterion) {
    let mut meshes = common::bench_meshes();
    let (_, mesh) = meshes.swap_remove(meshes.len().min(2) - 1);
    let (scene, rays, h) = placed(mesh);
    let options = SceneOptions::default();
    let mut group = c.benchmark_group("sweep/placed");
    group.sample_size(10);
    group.throughput(Throughput::Elements(rays.len() as u64));
    group.bench_function("closest ray", |b| b.iter(|| hits(&scene, &rays, &options)));
    group.bench_function("sphere 0.1%", |b| {
        b.iter(|| contacts(&scene, &rays, [0.0; 3], 0.001 * h, &options))
    });
    group.finish();
}

criterion_group!(benches, sweep, sweep_placed);
criterion_main!(benches);
