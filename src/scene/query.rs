//! The scene's ray queries (closest, any and all hits) and its nearest point: each walks the
//! top-level trees and queries the instances it reaches in their own object space.

use super::{Instance, InstanceId, Scene, SceneHit, SceneOptions};
use crate::bvh::kernel;
use crate::bvh::nearest::lanes_near;
use crate::bvh::walk::{Visitor, walk};
use crate::bvh::wide::{WIDTH, WideNode};
use crate::closest_point::distance_query;
use crate::{ClosestPoint, CompactHit, Hit, Ray, RayQuery};
use nalgebra::{Matrix3, Point3, Unit, Vector3};

/// The point of a scene nearest to a query point (see [`Scene::closest_point`]): the instance
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
    /// The first hit along the ray among the instances the options let the query see.
    /// `None` for a miss, an invalid ray or an empty scene. Allocates nothing (once the
    /// top-level trees are up to date, see [`update`](Scene::update)).
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// scene.add(triangle.clone(), Matrix4::identity())?;
    /// let front = scene.add(triangle, Matrix4::new_translation(&Vector3::new(0.0, 0.0, 1.0)))?;
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 5.0), -Vector3::z());
    /// let hit = scene.closest_hit(&ray, &SceneOptions::default()).unwrap();
    /// assert_eq!((hit.instance, hit.hit.t), (front, 4.0));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn closest_hit(&self, ray: &Ray, options: &SceneOptions<'_>) -> Option<SceneHit> {
        self.closest_in(ray, options)
            .map(|(id, local, hit)| self.details(id, &local, &hit))
    }

    /// The hit [`closest_hit`](Scene::closest_hit) (or, for [`RayQuery::Any`],
    /// [`any_hit`](Scene::any_hit)) finds, compact: the instance and the triangle, `t` and
    /// barycentrics, without moving the point and normals to world space (which reads the
    /// triangle's corners). `t` is the world ray's, so the point is `ray.at(t)`. Allocates
    /// nothing.
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Ray, RayQuery, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// scene.add(triangle.clone(), Matrix4::identity())?;
    /// let front = scene.add(triangle, Matrix4::new_translation(&Vector3::new(0.0, 0.0, 1.0)))?;
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 5.0), -Vector3::z());
    /// let options = SceneOptions::default();
    /// let (id, hit) = scene.cast_ray(&ray, RayQuery::Closest, &options).unwrap();
    /// let whole = scene.closest_hit(&ray, &options).unwrap();
    /// assert_eq!((id, hit.triangle, hit.t), (whole.instance, whole.hit.triangle, whole.hit.t));
    /// assert_eq!((id, hit.t), (front, 4.0));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn cast_ray(
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

    /// Some hit along the ray (the first found, not necessarily the closest).
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// scene.add(triangle, Matrix4::identity())?;
    /// // Is the segment from (0.2, 0.2, 1) to (0.2, 0.2, -1) blocked?
    /// let sight = Ray::with_range(Point3::new(0.2, 0.2, 1.0), Vector3::new(0.0, 0.0, -2.0), 0.0, 1.0);
    /// assert!(scene.any_hit(&sight, &SceneOptions::default()).is_some());
    /// assert!(scene.any_hit(&Ray::with_range(sight.origin(), sight.direction(), 0.0, 0.4), &SceneOptions::default()).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn any_hit(&self, ray: &Ray, options: &SceneOptions<'_>) -> Option<SceneHit> {
        self.any_in(ray, options)
            .map(|(id, local, hit)| self.details(id, &local, &hit))
    }

    /// Every hit along the ray, sorted by `t` (then instance, then triangle).
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// for z in [0.0, 1.0, 2.0] {
    ///     scene.add(triangle.clone(), Matrix4::new_translation(&Vector3::new(0.0, 0.0, z)))?;
    /// }
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 5.0), -Vector3::z());
    /// let hits = scene.all_hits(&ray, &SceneOptions::default());
    /// let order: Vec<_> = hits.iter().map(|h| (h.instance, h.hit.t)).collect();
    /// assert_eq!(order, [(2, 3.0), (1, 4.0), (0, 5.0)]);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn all_hits(&self, ray: &Ray, options: &SceneOptions<'_>) -> Vec<SceneHit> {
        let mut found = Vec::new();
        self.all_triangles(ray, options, &mut found);
        let t_end = ray.t_max();
        found
            .iter()
            .filter_map(|&(id, hit)| {
                let local = object_ray(self.get(id).ok()?, ray, t_end)?;
                Some(self.details(id, &local, &hit))
            })
            .collect()
    }

    /// Every hit along the ray, compact (the instance, and the triangle, `t` and
    /// barycentrics as [`cast_ray`](Scene::cast_ray) gives them), into `hits` (cleared
    /// first), in [`all_hits`](Scene::all_hits)' order: what it finds without moving each hit
    /// to world space, and without allocating once `hits` is large enough.
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// for z in [0.0, 1.0, 2.0] {
    ///     scene.add(triangle.clone(), Matrix4::new_translation(&Vector3::new(0.0, 0.0, z)))?;
    /// }
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 5.0), -Vector3::z());
    /// let mut hits = Vec::new();
    /// scene.all_triangles(&ray, &SceneOptions::default(), &mut hits);
    /// let order: Vec<_> = hits.iter().map(|(id, h)| (*id, h.t)).collect();
    /// assert_eq!(order, [(2, 3.0), (1, 4.0), (0, 5.0)]);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn all_triangles(
        &self,
        ray: &Ray,
        options: &SceneOptions<'_>,
        hits: &mut Vec<(InstanceId, CompactHit)>,
    ) {
        hits.clear();
        self.each_hit(ray, options, |id, h| hits.push((id, h)));
        hits.sort_unstable_by(|(a_id, a), (b_id, b)| in_hit_order((*a_id, a), (*b_id, b)));
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

    /// How many triangles the ray hits in its range, over every instance the options let
    /// it see: [`all_hits`](Scene::all_hits)`.len()` without making the hits, and without
    /// allocating (once the top-level trees are up to date).
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// for z in [0.0, 1.0, 2.0] {
    ///     scene.add(triangle.clone(), Matrix4::new_translation(&Vector3::new(0.0, 0.0, z)))?;
    /// }
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 5.0), -Vector3::z());
    /// assert_eq!(scene.count_hits(&ray, &SceneOptions::default()), 3);
    /// let upper = SceneOptions { filter: Some(&|id| id > 0), ..Default::default() };
    /// assert_eq!(scene.count_hits(&ray, &upper), 2);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn count_hits(&self, ray: &Ray, options: &SceneOptions<'_>) -> usize {
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
                kernel::visit::<false, _>(&tree.nodes, tree.depth, ray, start, leaf);
            } else {
                kernel::visit::<true, _>(&tree.nodes, tree.depth, ray, start, leaf);
            }
            if stopped {
                return;
            }
        }
    }

    /// The point of the scene nearest to `point` within `max_distance` (inclusive), among
    /// the instances the options let the query see (their `mask` and `filter`; culling and
    /// the triangle test do not apply): the instance and, in world space, the point,
    /// the triangle, its barycentrics and the distance. Distances are measured in world
    /// space (exact under any affine transform, non-uniform scales included: each
    /// instance's triangles and boxes are moved to world space as the search reaches them);
    /// ties go to the lowest instance, then triangle. `None` as for
    /// [`Bvh::closest_point`](crate::Bvh::closest_point).
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// scene.add(triangle.clone(), Matrix4::identity())?;
    /// // Stretched 4x along x and moved to z = 10: measured in world space, stretch included.
    /// let far = scene.add(triangle, Matrix4::new_translation(&Vector3::new(0.0, 0.0, 10.0))
    ///     * Matrix4::new_nonuniform_scaling(&Vector3::new(4.0, 1.0, 1.0)))?;
    /// let p = Point3::new(3.0, 0.1, 8.0);
    /// let all = SceneOptions::default();
    /// let near = scene.closest_point(p, f32::INFINITY, &all).unwrap();
    /// assert_eq!(near.instance, far);
    /// assert!((near.closest.distance - 2.0).abs() < 1e-5);
    /// assert!((near.closest.point - Point3::new(3.0, 0.1, 10.0)).norm() < 1e-5);
    /// // Nothing within 1, or with a mask no instance shares.
    /// assert!(scene.closest_point(p, 1.0, &all).is_none());
    /// let none = SceneOptions { mask: 0, ..Default::default() };
    /// assert!(scene.closest_point(p, f32::INFINITY, &none).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn closest_point(
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
            slots: &self.slots,
            order: &[],
            p,
            limit,
            options,
            best: None,
        };
        for tree in self.top().trees() {
            visitor.order = &tree.order;
            walk(&tree.nodes, &mut visitor);
        }
        visitor.best
    }

    /// The full hit of instance `id` for a short one found with the object-space ray `local`.
    fn details(&self, id: InstanceId, local: &Ray, hit: &CompactHit) -> SceneHit {
        let bvh = &self.get(id).expect("a hit names a live instance").bvh;
        self.to_world(id, bvh.own_hit_details(local, hit))
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
        let local = object_ray(instance, ray, ray.t_max())?;
        let whole = instance.bvh.hit_details(&local, hit)?;
        Some(self.to_world(id, whole))
    }

    /// An object-space hit of instance `id` moved to world space.
    fn to_world(&self, id: InstanceId, mut h: Hit) -> SceneHit {
        let instance = self.get(id).expect("a hit names a live instance");
        let m = &instance.to_world;
        h.point = m.transform_point(&h.point.cast::<f64>()).cast::<f32>();
        // Normals move by the inverse transpose. Under a mirror this keeps the object's front
        // side in front (the world winding turns over, the faces do not), as glTF, three.js
        // and Unity have it: a mirrored closed mesh still faces outwards.
        let normal_matrix: Matrix3<f64> = instance.to_object.fixed_view::<3, 3>(0, 0).transpose();
        let to_world_normal =
            |n: &Vector3<f32>| Unit::try_new((normal_matrix * n.cast::<f64>()).cast::<f32>(), 0.0);
        if let Some(n) = to_world_normal(&h.normal.into_inner()) {
            h.normal = n;
        }
        h.shading_normal = h
            .shading_normal
            .and_then(|n| to_world_normal(&n.into_inner()));
        // `front_face` stays the mesh's: the world ray meets the moved normal from the same
        // side (n·M⁻¹ · M·d = n·d), and it is the side the culling used.
        SceneHit {
            instance: id,
            hit: h,
        }
    }
}

/// The nearest-point search over instances: nearest world box first, each instance searched
/// in world space; boxes beyond the best distance are skipped.
struct NearestInstance<'a> {
    slots: &'a [Option<Instance>],
    order: &'a [u32],
    p: Point3<f64>,
    /// The best squared distance so far (the caller's limit at first).
    limit: f64,
    options: &'a SceneOptions<'a>,
    best: Option<(u32, u32, crate::closest_point::Nearest)>,
}

impl Visitor for NearestInstance<'_> {
    type Key = f64;
    const ORDERED: bool = true;

    fn node(&mut self, _: u32, node: &WideNode) -> (u32, [f64; WIDTH]) {
        lanes_near(node, &self.p, None, |d2| self.worth(d2))
    }

    fn worth(&self, d2: f64) -> bool {
        d2 <= self.limit * (1.0 + 1e-9)
    }

    fn leaf(&mut self, first: u32, count: u32, _: f64) -> bool {
        let ids = &self.order[first as usize..(first + count) as usize];
        for (id, instance) in self.options.seen_in(self.slots, ids) {
            let Some((t, n)) =
                instance
                    .bvh
                    .nearest_triangle(&self.p, self.limit, Some(&instance.to_world))
            else {
                continue;
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
    let d = (m.fixed_view::<3, 3>(0, 0) * ray.direction().cast::<f64>()).cast::<f32>();
    let local = Ray::with_range(o, d, ray.t_min(), t_max);
    local.is_valid().then_some(local)
}
