//! BVH build, refit, scene placement and load (saved with serde/postcard) time:
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

/// Placing instances of one mesh in a scene, then the first query (which builds the
/// top-level tree): `add` one at a time and `add_all` at once.
fn scene(c: &mut Criterion) {
    use meshray::{Ray, Scene, SceneOptions};
    use nalgebra::{Matrix4, Point3, Vector3};
    use std::sync::Arc;
    let mut group = c.benchmark_group("scene");
    group.sample_size(10);
    let bvh = Arc::new(Bvh::build(
        meshray::Mesh::load(common::asset("scene.obj")).unwrap(),
    ));
    let ray = Ray::new(Point3::new(1.0, 1.0, 10.0), -Vector3::z());
    for count in [1_600usize, 10_000] {
        let place = |i: usize| {
            let at = Vector3::new((i % 100) as f32 * 12.0, 0.0, (i / 100) as f32 * -12.0);
            (bvh.clone(), Matrix4::new_translation(&at))
        };
        group.throughput(Throughput::Elements(count as u64));
        group.bench_function(format!("add {count} then pick"), |b| {
            b.iter(|| {
                let mut scene = Scene::new();
                for i in 0..count {
                    let (bvh, at) = place(i);
                    scene.add(bvh, at).unwrap();
                }
                black_box(scene.closest_hit(&ray, &SceneOptions::default()))
            })
        });
        group.bench_function(format!("add_all {count} then pick"), |b| {
            b.iter(|| {
                let mut scene = Scene::new();
                scene.add_all((0..count).map(place)).unwrap();
                black_box(scene.closest_hit(&ray, &SceneOptions::default()))
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
criterion_group!(benches, build, refit, scene, load);
#[cfg(not(feature = "serde"))]
criterion_group!(benches, build, refit, scene);
criterion_main!(benches);
