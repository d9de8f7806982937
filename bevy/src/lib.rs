//! A [`bevy_picking`] backend on meshray: every `Mesh3d` entity is an instance of its mesh
//! asset's BVH in a [`meshray::Scene`], and pointer rays are answered from it, exactly (the
//! same hits as testing every triangle), and watertight on request.
//!
//! Bevy's own mesh backend (`MeshPickingPlugin`) tests every triangle of each mesh whose box
//! the ray crosses; this one builds one BVH per `Mesh` asset, off the main thread (the async
//! compute pool), rebuilt when the asset changes, and keeps the scene's top-level tree up to
//! date as entities move, appear and go. It reports what Bevy's backend reports, for the same
//! entities (`Pickable`, visibility, render layers, `RayCastBackfaces`, markers), and adds the
//! triangle and its barycentrics ([`MeshrayHit`], in `HitData::extra`).
//!
//! ```no_run
//! use bevy_app::App;
//! use meshray_bevy::MeshrayPickingPlugin;
//!
//! App::new()
//!     // .add_plugins(DefaultPlugins) — without `MeshPickingPlugin`
//!     .add_plugins(MeshrayPickingPlugin)
//!     .run();
//! ```
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod backend;
mod sync;

pub use backend::{MeshrayHit, MeshrayPickingCamera, MeshrayPickingSettings, RayCastVisibility};
pub use sync::MeshrayScene;

use bevy_app::{App, Plugin, PreUpdate};
use bevy_ecs::schedule::IntoScheduleConfigs;
use bevy_picking::PickingSystems;

/// Adds the meshray picking backend: [`MeshrayPickingSettings`], the [`MeshrayScene`] kept in
/// step with the world, and the system that answers the pointers' rays.
#[derive(Clone, Debug, Default)]
pub struct MeshrayPickingPlugin;

impl Plugin for MeshrayPickingPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<MeshrayPickingSettings>()
            .init_resource::<MeshrayScene>()
            .add_systems(
                PreUpdate,
                (
                    sync::start_builds,
                    sync::finish_builds,
                    sync::place_entities,
                    sync::pose_entities,
                    backend::update_hits,
                )
                    .chain()
                    .in_set(PickingSystems::Backend),
            );
    }
}
