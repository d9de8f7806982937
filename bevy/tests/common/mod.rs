//! What the headless test and the benchmark against Bevy's backend share: a seeded RNG, a
//! headless app with one of the two backends, frames until its BVHs are built and placed,
//! and a frame that casts one pointer ray.
#![allow(dead_code)]

use bevy_app::{App, TaskPoolPlugin};
use bevy_asset::{AssetApp, AssetPlugin};
use bevy_camera::Camera;
use bevy_ecs::message::Messages;
use bevy_ecs::prelude::*;
use bevy_mesh::Mesh;
use bevy_picking::backend::ray::{RayId, RayMap};
use bevy_picking::backend::{HitData, PointerHits};
use bevy_picking::mesh_picking::ray_cast::RayCastVisibility;
use bevy_picking::mesh_picking::{MeshPickingPlugin, MeshPickingSettings};
use bevy_picking::pointer::PointerId;
use bevy_shape::Ray3d;
use bevy_transform::TransformPlugin;
use bevy_transform::components::GlobalTransform;
use meshray_bevy::{MeshrayPickingPlugin, MeshrayPickingSettings, MeshrayScene};

/// splitmix64, for repeatable scenes and rays.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> f32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 40) as f32 / (1u64 << 24) as f32
    }

    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next()
    }
}

/// A headless app (task pools, assets, transforms; no window, no renderer) with meshray's
/// backend or Bevy's (`meshray` false), visibility not consulted (no renderer computes it),
/// and a camera at the origin, which it returns.
pub fn headless_app(meshray: bool) -> (App, Entity) {
    let mut app = App::new();
    app.add_plugins((
        TaskPoolPlugin::default(),
        AssetPlugin::default(),
        TransformPlugin,
    ))
    .init_asset::<Mesh>()
    .init_resource::<RayMap>()
    .add_message::<PointerHits>();
    if meshray {
        app.add_plugins(MeshrayPickingPlugin)
            .insert_resource(MeshrayPickingSettings {
                ray_cast_visibility: RayCastVisibility::Any,
                ..Default::default()
            });
    } else {
        app.add_plugins(MeshPickingPlugin)
            .insert_resource(MeshPickingSettings {
                require_markers: false,
                ray_cast_visibility: RayCastVisibility::Any,
            });
    }
    let camera = app
        .world_mut()
        .spawn((Camera::default(), GlobalTransform::IDENTITY))
        .id();
    (app, camera)
}

/// Frames until meshray's BVHs are built (on the async compute pool) and `instances`
/// entities placed in its scene; at once in an app without meshray. Panics after 100,000
/// frames 1 ms apart.
pub fn settle(app: &mut App, instances: usize) {
    for _ in 0..100_000 {
        app.update();
        let ready = app
            .world()
            .get_resource::<MeshrayScene>()
            .is_none_or(|s| s.builds_in_progress() == 0 && s.scene().len() == instances);
        if ready {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    panic!("the BVHs were not built");
}

/// One frame with `ray` (if any) as the mouse pointer's ray in `RayMap`, as `bevy_picking`'s
/// pointer systems would put it; returns the hits the backend sent.
pub fn frame(app: &mut App, camera: Entity, ray: Option<Ray3d>) -> Vec<(Entity, HitData)> {
    let world = app.world_mut();
    world.resource_mut::<Messages<PointerHits>>().clear();
    let mut map = world.resource_mut::<RayMap>();
    map.map.clear();
    if let Some(ray) = ray {
        map.map.insert(RayId::new(camera, PointerId::Mouse), ray);
    }
    app.update();
    app.world_mut().resource_mut::<RayMap>().map.clear();
    let sent: Vec<PointerHits> = app
        .world_mut()
        .resource_mut::<Messages<PointerHits>>()
        .drain()
        .collect();
    assert!(sent.len() <= 1, "one message per ray");
    sent.into_iter().flat_map(|h| h.picks).collect()
}
