//! The meshray backend against Bevy's own `MeshPickingPlugin`, in one run:
//! `cargo bench -p meshray-bevy`. Each sample is one frame of a headless app with one pointer
//! ray in `RayMap` (the frame's other work, the same in both apps, is measured too: an empty
//! frame with no ray). Two scenes:
//! - **one mesh of about 1M triangles**: the Stanford bunny split into 16 (1.11M triangles)
//!   when the shared meshes are present (`MESHRAY_MESHES` or `../shared/meshes`), else a
//!   wavy 708 × 708 grid (1.00M), rays from the camera through random points of its box;
//! - **10,000 entities**: instances of the asset scene (1,079 triangles) and a 12-triangle
//!   box in a 22 × 22 × 21 lattice, rays from one side through random points of the lattice.
use bevy_app::App;
use bevy_asset::{Assets, RenderAssetUsages};
use bevy_camera::primitives::Aabb;
use bevy_camera::visibility::Visibility;
use bevy_math::{Dir3, Quat, Vec3};
use bevy_mesh::{Indices, Mesh, Mesh3d, PrimitiveTopology};
use bevy_shape::Ray3d;
use bevy_transform::components::{GlobalTransform, Transform};
use criterion::{Criterion, criterion_group, criterion_main};

#[path = "../tests/common/mod.rs"]
mod common;
use common::{Rng, frame, headless_app, settle};
use std::path::PathBuf;

fn bevy_mesh(positions: Vec<[f32; 3]>, triangles: Vec<[u32; 3]>) -> (Mesh, Aabb) {
    let (lo, hi) = positions
        .iter()
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), q| {
            (lo.min(Vec3::from(*q)), hi.max(Vec3::from(*q)))
        });
    let mesh = Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
    .with_inserted_indices(Indices::U32(triangles.into_iter().flatten().collect()));
    (mesh, Aabb::from_min_max(lo, hi))
}

fn load(path: &str) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let mesh = meshray::Mesh::load(path).unwrap();
    let positions = mesh.positions().iter().map(|p| [p.x, p.y, p.z]).collect();
    (positions, mesh.triangles().to_vec())
}

/// Each triangle split into four at its edges' midpoints, `times` times.
fn split(
    (mut p, mut t): (Vec<[f32; 3]>, Vec<[u32; 3]>),
    times: usize,
) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    for _ in 0..times {
        let mut next = Vec::with_capacity(t.len() * 4);
        for [a, b, c] in t {
            let mid = |p: &mut Vec<[f32; 3]>, i: u32, j: u32| {
                let (x, y) = (p[i as usize], p[j as usize]);
                p.push([0, 1, 2].map(|k| 0.5 * (x[k] + y[k])));
                p.len() as u32 - 1
            };
            let (ab, bc, ca) = (mid(&mut p, a, b), mid(&mut p, b, c), mid(&mut p, c, a));
            next.extend([[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]);
        }
        t = next;
    }
    (p, t)
}

/// The big mesh and its name.
fn million() -> (String, Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let dir = std::env::var_os("MESHRAY_MESHES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/meshes"))
        });
    let bunny = dir.join("stanford-bunny/stanford-bunny.obj");
    if bunny.exists() {
        let (p, t) = split(load(bunny.to_str().unwrap()), 2);
        return (format!("bunny split in 16 ({} triangles)", t.len()), p, t);
    }
    let n = 708u32;
    let mut p = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            let (x, z) = (i as f32 / 100.0, j as f32 / 100.0);
            p.push([x, 0.3 * (x * 3.0).sin() * (z * 2.0).cos(), z]);
        }
    }
    let mut t = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let v = j * (n + 1) + i;
            t.push([v, v + n + 1, v + 1]);
            t.push([v + 1, v + n + 1, v + n + 2]);
        }
    }
    (format!("wavy grid ({} triangles)", t.len()), p, t)
}

fn spawn(app: &mut App, mesh: &(Mesh, Aabb), transforms: &[Transform]) {
    let world = app.world_mut();
    let handle = world.resource_mut::<Assets<Mesh>>().add(mesh.0.clone());
    for t in transforms {
        world.spawn((
            Mesh3d(handle.clone()),
            *t,
            GlobalTransform::from(*t),
            mesh.1,
            Visibility::default(),
        ));
    }
}

fn compare(c: &mut Criterion, name: &str, setup: &dyn Fn(&mut App) -> usize, rays: &[Ray3d]) {
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    for meshray in [true, false] {
        let (mut app, camera) = headless_app(meshray);
        let entities = setup(&mut app);
        settle(&mut app, entities);
        let backend = if meshray { "meshray" } else { "bevy" };
        let mut k = 0;
        group.bench_function(format!("{backend}: frame with one pick"), |b| {
            b.iter(|| {
                k += 1;
                frame(&mut app, camera, Some(rays[k % rays.len()])).len()
            })
        });
        group.bench_function(format!("{backend}: frame without picks"), |b| {
            b.iter(|| frame(&mut app, camera, None).len())
        });
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    let mut rng = Rng(5);
    // One big mesh, framed by the camera: at z = -3 radii in front of it.
    let (name, positions, triangles) = million();
    let (big, bounds) = bevy_mesh(positions, triangles);
    let (centre, radius) = (Vec3::from(bounds.center), bounds.half_extents.length());
    let place = Transform::from_translation(-centre + Vec3::new(0.0, 0.0, -3.0 * radius));
    let rays: Vec<Ray3d> = (0..256)
        .map(|_| {
            let at = Vec3::new(0.0, 0.0, -3.0 * radius)
                + Vec3::new(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                ) * Vec3::from(bounds.half_extents);
            Ray3d::new(Vec3::ZERO, Dir3::new(at).unwrap())
        })
        .collect();
    compare(
        c,
        &format!("one mesh: {name}"),
        &|app| {
            spawn(app, &(big.clone(), bounds), &[place]);
            1
        },
        &rays,
    );

    // 10,000 entities in a lattice.
    let scene = load(concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/scene.obj"));
    let scene = bevy_mesh(scene.0, scene.1);
    let cube = bevy_mesh(
        (0..8)
            .map(|i| [(i & 1) as f32, (i >> 1 & 1) as f32, (i >> 2 & 1) as f32])
            .collect(),
        vec![
            [0, 2, 3],
            [0, 3, 1],
            [4, 5, 7],
            [4, 7, 6],
            [0, 1, 5],
            [0, 5, 4],
            [2, 6, 7],
            [2, 7, 3],
            [0, 4, 6],
            [0, 6, 2],
            [1, 3, 7],
            [1, 7, 5],
        ],
    );
    let side = 22;
    let spacing = 4.0;
    let mut lattice = [Vec::new(), Vec::new()];
    for i in 0..10_000usize {
        let cell = Vec3::new(
            (i % side) as f32,
            (i / side % side) as f32,
            (i / (side * side)) as f32,
        );
        let t = Transform {
            translation: cell * spacing + Vec3::new(0.0, 0.0, -10.0 - spacing * 21.0),
            rotation: Quat::from_rotation_y(i as f32),
            scale: Vec3::splat(if i % 2 == 0 { 0.25 } else { 1.5 }),
        };
        lattice[i % 2].push(t);
    }
    let extent = side as f32 * spacing;
    let rays: Vec<Ray3d> = (0..256)
        .map(|_| {
            let at = Vec3::new(
                rng.range(0.0, extent),
                rng.range(0.0, extent),
                -10.0 - rng.range(0.0, extent),
            );
            let from = Vec3::new(extent * 0.5, extent * 0.5, 0.0);
            Ray3d::new(from, Dir3::new(at - from).unwrap())
        })
        .collect();
    compare(
        c,
        "10,000 entities",
        &|app| {
            spawn(app, &scene, &lattice[0]);
            spawn(app, &cube, &lattice[1]);
            10_000
        },
        &rays,
    );
}

criterion_group!(picking, benches);
criterion_main!(picking);
