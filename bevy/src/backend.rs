//! The backend proper: each pointer's ray (from `bevy_picking`'s `RayMap`) is cast into the
//! [`MeshrayScene`], and the entities hit are sent as `PointerHits`, following Bevy's own mesh
//! backend rule for rule: cameras (active, `MeshrayPickingCamera` when markers are required,
//! render layers), entities (`Pickable::is_hoverable`, markers, visibility, render layers),
//! back faces culled unless the entity has `RayCastBackfaces`, and every entity hit up to and
//! including the nearest one whose `Pickable` blocks those below it
//! (`Pickable::should_block_lower`; an entity without `Pickable` does not stop the list, as in
//! Bevy's backend, and hovering then treats it as blocking), each with its nearest hit.

use crate::sync::MeshrayScene;
use bevy_camera::Camera;
use bevy_camera::visibility::{InheritedVisibility, RenderLayers, ViewVisibility};
use bevy_ecs::prelude::*;
use bevy_math::Vec3;
use bevy_picking::Pickable;
use bevy_picking::backend::ray::RayMap;
use bevy_picking::backend::{HitData, PointerHits};
use bevy_picking::mesh_picking::ray_cast::RayCastBackfaces;
pub use bevy_picking::mesh_picking::ray_cast::RayCastVisibility;
use bevy_shape::Ray3d;
use meshray::prelude::*;
use meshray::query::{InstanceId, SceneHit};
use meshray::{Culling, QueryOptions, Ray, SceneOptions};

/// Marks the cameras the backend casts from when
/// [`MeshrayPickingSettings::require_markers`] is set.
#[derive(Component, Clone, Copy, Debug, Default)]
pub struct MeshrayPickingCamera;

/// How the backend picks.
#[derive(Resource, Clone, Copy)]
pub struct MeshrayPickingSettings {
    /// Only cameras with [`MeshrayPickingCamera`] and entities with `Pickable` take part.
    /// `false` by default.
    pub require_markers: bool,
    /// Which entities count by their visibility; by default, as in Bevy's backend, only
    /// those visible in a view ([`RayCastVisibility::VisibleInView`]).
    pub ray_cast_visibility: RayCastVisibility,
    /// Cull back faces (`true` by default, as Bevy's backend does for `Mesh3d`): an entity
    /// with `RayCastBackfaces` is hit from both sides either way.
    pub backface_culling: bool,
    /// meshray's watertight triangle test (Woop et al. 2013): a ray through a shared edge or
    /// vertex of a closed mesh never slips through. On by default; `false` selects plain
    /// Cramer's rule, a few per cent faster.
    pub watertight: bool,
}

impl Default for MeshrayPickingSettings {
    fn default() -> Self {
        MeshrayPickingSettings {
            require_markers: false,
            ray_cast_visibility: RayCastVisibility::VisibleInView,
            backface_culling: true,
            watertight: true,
        }
    }
}

impl std::fmt::Debug for MeshrayPickingSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let visibility = match self.ray_cast_visibility {
            RayCastVisibility::Any => "Any",
            RayCastVisibility::Visible => "Visible",
            RayCastVisibility::VisibleInView => "VisibleInView",
        };
        f.debug_struct("MeshrayPickingSettings")
            .field("require_markers", &self.require_markers)
            .field("ray_cast_visibility", &visibility)
            .field("backface_culling", &self.backface_culling)
            .field("watertight", &self.watertight)
            .finish()
    }
}

/// What meshray adds to a hit, in its `HitData::extra` (read it with
/// `hit.extra_as::<MeshrayHit>()`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshrayHit {
    /// The triangle's number in the mesh asset (its index triple's position / 3).
    pub triangle: u32,
    /// The barycentric weight of the triangle's second corner; the point is
    /// `(1 − u − v)·A + u·B + v·C` in the mesh's own space.
    pub u: f32,
    /// The barycentric weight of the third corner.
    pub v: f32,
    /// Whether the ray met the triangle's front face (counter-clockwise winding).
    pub front_face: bool,
}

/// Casts every pointer ray and sends the hits.
#[allow(clippy::too_many_arguments)]
pub(crate) fn update_hits(
    settings: Res<MeshrayPickingSettings>,
    ray_map: Res<RayMap>,
    state: Res<MeshrayScene>,
    cameras: Query<(&Camera, Has<MeshrayPickingCamera>, Option<&RenderLayers>)>,
    pickables: Query<&Pickable>,
    layers: Query<&RenderLayers>,
    visibility: Query<(&InheritedVisibility, &ViewVisibility)>,
    both_sides: Query<(), With<RayCastBackfaces>>,
    mut writer: MessageWriter<PointerHits>,
) {
    for (&ray_id, &ray) in ray_map.iter() {
        let Ok((camera, marked, camera_layers)) = cameras.get(ray_id.camera) else {
            continue;
        };
        if settings.require_markers && !marked {
            continue;
        }
        let camera_layers = camera_layers.cloned().unwrap_or_default();
        let sees = |entity: Entity| {
            let marker = !settings.require_markers || pickables.get(entity).is_ok();
            let on_layer =
                camera_layers.intersects(&layers.get(entity).cloned().unwrap_or_default());
            let hoverable = pickables.get(entity).map_or(true, |p| p.is_hoverable);
            let visible = match settings.ray_cast_visibility {
                RayCastVisibility::Any => true,
                RayCastVisibility::Visible => visibility.get(entity).is_ok_and(|(v, _)| v.get()),
                RayCastVisibility::VisibleInView => {
                    visibility.get(entity).is_ok_and(|(_, v)| v.get())
                }
            };
            marker && on_layer && hoverable && visible
        };
        // As in Bevy's backend: only an explicit `Pickable` blocks what lies behind it here
        // (hovering later treats an entity without one as blocking).
        let blocks = |entity: Entity| pickables.get(entity).is_ok_and(|p| p.should_block_lower);
        let mut picks = Vec::new();
        // Entities already reported: the next cast looks past them.
        let mut reported: Vec<InstanceId> = Vec::new();
        while let Some(found) = nearest(
            &state,
            &settings,
            ray,
            &|id| !reported.contains(&id) && state.entity(id).is_some_and(sees),
            &both_sides,
        ) {
            let Some(entity) = state.entity(found.instance) else {
                break;
            };
            let hit = &found.hit;
            let extra = MeshrayHit {
                triangle: hit.triangle,
                u: hit.u,
                v: hit.v,
                front_face: hit.front_face,
            };
            let point = Vec3::new(hit.point.x, hit.point.y, hit.point.z);
            // The vertex normals interpolated when the mesh has them (as Bevy's backend
            // reports; a skinned entity's are not posed, so it gets its posed triangle's
            // normal), else the triangle's.
            let skinned = state.is_posed(entity);
            let n = match hit.shading_normal {
                Some(n) if !skinned => n,
                _ => hit.normal,
            };
            let normal = Vec3::new(n.x, n.y, n.z);
            picks.push((
                entity,
                HitData::new_with_extra(ray_id.camera, hit.t, Some(point), Some(normal), extra),
            ));
            if blocks(entity) {
                break;
            }
            reported.push(found.instance);
        }
        if !picks.is_empty() {
            writer.write(PointerHits::new(ray_id.pointer, picks, camera.order as f32));
        }
    }
}

/// The nearest hit among the instances `sees` accepts: back faces culled except on entities
/// with `RayCastBackfaces` (two casts, the nearer kept; ties to the lower instance).
fn nearest(
    state: &MeshrayScene,
    settings: &MeshrayPickingSettings,
    ray: Ray3d,
    sees: &(dyn Fn(InstanceId) -> bool + Sync),
    both_sides: &Query<(), With<RayCastBackfaces>>,
) -> Option<SceneHit> {
    let ray = Ray::new(ray.origin.to_array(), ray.direction.to_array());
    let scene = state.scene();
    let options = |culling| QueryOptions {
        culling,
        watertight: settings.watertight,
    };
    if !settings.backface_culling {
        let all = SceneOptions {
            query: options(Culling::None),
            filter: Some(sees),
            ..Default::default()
        };
        return scene.closest_hit(&ray, &all);
    }
    let two_sided = |id: InstanceId| state.entity(id).is_some_and(|e| both_sides.contains(e));
    let front = |id| sees(id) && !two_sided(id);
    let both = |id| sees(id) && two_sided(id);
    let culled = scene.closest_hit(
        &ray,
        &SceneOptions {
            query: options(Culling::Back),
            filter: Some(&front),
            ..Default::default()
        },
    );
    let open = scene.closest_hit(
        &ray,
        &SceneOptions {
            query: options(Culling::None),
            filter: Some(&both),
            ..Default::default()
        },
    );
    match (culled, open) {
        (Some(a), Some(b)) => Some(if (b.hit.t, b.instance) < (a.hit.t, a.instance) {
            b
        } else {
            a
        }),
        (a, b) => a.or(b),
    }
}
