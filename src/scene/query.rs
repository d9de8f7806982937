//! The scene's ray queries (closest, any and all hits) and its nearest point: each walks the
//! top-level trees and queries the instances it reaches in their own object space.

use super::walk::InstanceVisitor;
use super::{Instance, InstanceId, Scene, SceneHit, SceneOptions};
use crate::bvh::facade::{WIDTH, WideNode, kernel, lanes_near};
use crate::closest_point::distance_query;
use crate::{ClosestPoint, CompactHit, Hit, Ray, RayQuery};
use nalgebra::{Matrix3, Point3, Unit, Vector3};

/// The point of a scene nearest to a query point (see [`Scene::closest_point`](crate::query::PointQuery::closest_point)): the instance
/// and, in world space, the point on its triangle.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SceneClosestPoint {
    /// The instance.
    pub instance: InstanceId,
    /// The triangle (its number in the instance's mesh), the point in world space, its
    /// barycentrics and the world-space distance.
    pub closest: ClosestPoint,
}

impl Scene {
    /// [`RayCast::cast_ray`] for a scene: the instance and its mesh's compact hit.
    pub(crate) fn cast_ray(
        &self,
        ray: &Ray,
        query: RayQuery,
        options: &SceneOptions<'_>,
    ) -> Option<(InstanceId, CompactHit)> {
        let found = match query {
            RayQuery::Closest => self.closest_in(ray, options),
            RayQuery::Any => self.any_in(ray, options),
        };
        found.map(|(id, _, hit)| (id, hit))
    }

    /// The closest hit: the instance, the ray in its object space and the hit.
    fn closest_in(
        &self,
        ray: &Ray,
        options: &SceneOptions<'_>,
    ) -> Option<(InstanceId, Ray, CompactHit)> {
        let mut best: Option<(InstanceId, Ray, CompactHit)> = None;
        self.walk(ray, options, true, |id, instance, t_max| {
            let local = object_ray(instance, ray, *t_max)?;
            let hit = instance.bvh.closest_triangle(&local, &options.query)?;
            // Of instances hit at the same `t`, the lowest number wins, in any walk order.
            if let Some((best_id, _, b)) = &best
                && b.t == hit.t
                && *best_id < id
            {
                return Some(false);
            }
            *t_max = hit.t;
            best = Some((id, local, hit));
            Some(false)
        });
        best
    }

    /// Some hit: the instance, the ray in its object space and the hit.
    fn any_in(
        &self,
        ray: &Ray,
        options: &SceneOptions<'_>,
    ) -> Option<(InstanceId, Ray, CompactHit)> {
        let mut found = None;
        self.walk(ray, options, false, |id, instance, t_max| {
            let local = object_ray(instance, ray, *t_max)?;
            let hit = instance.bvh.any_triangle(&local, &options.query)?;
            found = Some((id, local, hit));
            Some(true)
        });
        found
    }

    /// Calls `found` with every hit along the ray in its range, instance by instance, in
    /// walk order.
    pub(crate) fn each_hit(
        &self,
        ray: &Ray,
        options: &SceneOptions<'_>,
        mut found: impl FnMut(InstanceId, CompactHit),
    ) {
        let t_end = ray.t_max();
        self.walk(ray, options, false, |id, instance, _| {
            let local = object_ray(instance, ray, t_end)?;
            instance
                .bvh
                .each_hit(&local, &options.query, |h| found(id, h));
            Some(false)
        });
    }

    /// [`RayCast::count_hits`] for a scene.
    pub(crate) fn count_hits(&self, ray: &Ray, options: &SceneOptions<'_>) -> usize {
        let mut count = 0;
        let t_end = ray.t_max();
        self.walk(ray, options, false, |_, instance, _| {
            let local = object_ray(instance, ray, t_end)?;
            count += instance.bvh.count_hits(&local, &options.query);
            Some(false)
        });
        count
    }

    /// Walks the top-level trees with the mesh's ray walk ([`kernel::visit`]): nearest box
    /// first, dropping the boxes beyond `t_max`, when `nearest` (a closest hit), else in the
    /// nodes' lane order; `visit(id, instance, t_max)` queries an instance the options let
    /// the query see (lowering `t_max` for closest hit) and returns `Some(true)` to stop.
    fn walk(
        &self,
        ray: &Ray,
        options: &SceneOptions<'_>,
        nearest: bool,
        mut visit: impl FnMut(InstanceId, &Instance, &mut f32) -> Option<bool>,
    ) {
        if !ray.is_valid() {
            return;
        }
        let mut t_max = ray.t_max();
        for tree in self.top().trees() {
            let mut stopped = false;
            let start = t_max;
            // One walk per tree and order, whatever the query (an instance's query is a walk
            // of its own, so the call through `dyn` is a small part of it).
            let mut leaf = |entry: u32, t: &mut f32| {
                let ids = std::slice::from_ref(&tree.order[entry as usize]);
                for (id, instance) in options.seen_in(&self.slots, ids) {
                    let stop = visit(id, instance, t) == Some(true);
                    t_max = *t;
                    if stop {
                        stopped = true;
                        return true;
                    }
                }
                false
            };
            let leaf: &mut dyn FnMut(u32, &mut f32) -> bool = &mut leaf;
            if nearest {
                kernel::visit::<{ kernel::NEAREST_FIRST }, _>(
                    &tree.nodes,
                    tree.depth,
                    ray,
                    start,
                    leaf,
                );
            } else {
                kernel::visit::<{ kernel::IN_LANE_ORDER }, _>(
                    &tree.nodes,
                    tree.depth,
                    ray,
                    start,
                    leaf,
                );
            }
            if stopped {
                return;
            }
        }
    }

    /// [`PointQuery::closest_point`] for a scene.
    pub(crate) fn closest_point(
        &self,
        point: impl Into<mint::Point3<f32>>,
        max_distance: f32,
        options: &SceneOptions<'_>,
    ) -> Option<SceneClosestPoint> {
        let (p, limit) = distance_query(point, max_distance)?;
        self.nearest(p, limit, options)
            .map(|(instance, triangle, n)| SceneClosestPoint {
                instance,
                closest: ClosestPoint {
                    triangle,
                    point: n.point.cast::<f32>(),
                    u: n.u as f32,
                    v: n.v as f32,
                    distance: n.distance_squared.sqrt() as f32,
                },
            })
    }

    /// The nearest triangle to `p` within squared distance `limit` among the instances
    /// `options` sees, in world space: its instance, its number and where it is nearest.
    pub(super) fn nearest(
        &self,
        p: Point3<f64>,
        limit: f64,
        options: &SceneOptions<'_>,
    ) -> Option<(InstanceId, u32, crate::closest_point::Nearest)> {
        let mut visitor = NearestInstance {
            p,
            limit,
            best: None,
        };
        self.walk_instances(options, &mut visitor);
        visitor.best
    }

    /// The whole answer, in world space, of a compact hit of instance `id` for the world
    /// `ray` ([`RayCast::hit_details`](crate::query::RayCast::hit_details)); `None` when `id`
    /// is no live instance or `hit` names no triangle of its mesh.
    pub(crate) fn compact_hit_details(
        &self,
        ray: &Ray,
        id: InstanceId,
        hit: &CompactHit,
    ) -> Option<SceneHit> {
        let instance = self.get(id).ok()?;
        // A hit's details read only the ray's direction (which side it meets).
        let whole = instance
            .bvh
            .hit_details_along(&object_direction(instance, ray), hit)?;
        Some(to_world(instance, id, whole))
    }

    /// [`RayCast::hit_normal`](crate::query::RayCast::hit_normal) for a scene: the
    /// instance's mesh's cached normal, in world space as [`to_world`] moves it.
    pub(crate) fn hit_normal(
        &self,
        id: InstanceId,
        hit: &CompactHit,
    ) -> Option<Unit<Vector3<f32>>> {
        let instance = self.get(id).ok()?;
        let n = instance.bvh.cached_normal(hit.triangle)?;
        Some(world_normal(instance, &n).unwrap_or(n))
    }
}

/// An object-space normal of `instance` in world space, unit: moved by the inverse
/// transpose, in `f64`. Under a mirror this keeps the object's front side in front (the
/// world winding turns over, the faces do not), as glTF, three.js and Unity have it: a
/// mirrored closed mesh still faces outwards. `None` when it does not normalize.
fn world_normal(instance: &Instance, n: &Unit<Vector3<f32>>) -> Option<Unit<Vector3<f32>>> {
    let normal_matrix: Matrix3<f64> = instance.to_object.fixed_view::<3, 3>(0, 0).transpose();
    Unit::try_new(
        (normal_matrix * n.into_inner().cast::<f64>()).cast::<f32>(),
        0.0,
    )
}

/// An object-space hit of `instance` (number `id`) moved to world space.
fn to_world(instance: &Instance, id: InstanceId, mut h: Hit) -> SceneHit {
    let m = &instance.to_world;
    h.point = m.transform_point(&h.point.cast::<f64>()).cast::<f32>();
    h.normal = world_normal(instance, &h.normal).unwrap_or(h.normal);
    h.shading_normal = h.shading_normal.and_then(|n| world_normal(instance, &n));
    // `front_face` stays the mesh's: the world ray meets the moved normal from the same
    // side (n·M⁻¹ · M·d = n·d), and it is the side the culling used.
    SceneHit {
        instance: id,
        hit: h,
    }
}

/// The nearest-point search over instances: nearest world box first, each instance searched
/// in world space; boxes beyond the best distance are skipped.
struct NearestInstance {
    p: Point3<f64>,
    /// The best squared distance so far (the caller's limit at first).
    limit: f64,
    best: Option<(u32, u32, crate::closest_point::Nearest)>,
}

impl InstanceVisitor for NearestInstance {
    type Key = f64;
    const ORDERED: bool = true;

    fn node(&mut self, node: &WideNode) -> (u32, [f64; WIDTH]) {
        lanes_near(node, &self.p, None, |d2| self.worth(d2))
    }

    fn worth(&self, d2: f64) -> bool {
        d2 <= self.limit * (1.0 + 1e-9)
    }

    fn instance(&mut self, id: InstanceId, instance: &Instance) -> bool {
        let Some((t, n)) =
            instance
                .bvh
                .nearest_triangle(&self.p, self.limit, Some(&instance.to_world))
        else {
            return false;
        };
        let better = match &self.best {
            None => true,
            Some((bid, _, bn)) => {
                n.distance_squared < bn.distance_squared
                    || (n.distance_squared == bn.distance_squared && id < *bid)
            }
        };
        if better {
            self.limit = n.distance_squared;
            self.best = Some((id, t, n));
        }
        false
    }
}

/// The ray in the instance's object space, its range `[t_min, t_max]` kept (the direction is
/// transformed, not normalized, so `t` means the same point). `None` when it does not fit f32.
/// The order of a scene's every hit: by `t`, then instance, then triangle.
pub(crate) fn in_hit_order(
    (a_id, a): (InstanceId, &CompactHit),
    (b_id, b): (InstanceId, &CompactHit),
) -> std::cmp::Ordering {
    a.t.total_cmp(&b.t)
        .then(a_id.cmp(&b_id))
        .then(a.triangle.cmp(&b.triangle))
}

fn object_ray(instance: &Instance, ray: &Ray, t_max: f32) -> Option<Ray> {
    let m = &instance.to_object;
    let o = m.transform_point(&ray.origin().cast::<f64>()).cast::<f32>();
    let local = Ray::with_range(o, object_direction(instance, ray), ray.t_min(), t_max);
    local.is_valid().then_some(local)
}

/// The world ray's direction in `instance`'s object space (not normalized: `t` is the same
/// in both spaces).
fn object_direction(instance: &Instance, ray: &Ray) -> Vector3<f32> {
    let m = instance.to_object.fixed_view::<3, 3>(0, 0);
    (m * ray.direction().cast::<f64>()).cast::<f32>()
}
