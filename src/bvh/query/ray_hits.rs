//! Ray queries: closest hit, any hit, all hits, the count.
//!
//! Every one runs the ray walk of [`kernel`]: each node's children in
//! the order made for the ray's octant. Closest and any hit test their packets inside the
//! walk; every hit and the count hand each entered packet to the packet test
//! ([`LeafTest`]) with the range's end left where it is; the measured cost runs the walk's
//! portable twin, which visits the same nodes in the same order, counting as it goes. None
//! of them allocates (every hit, only to grow the caller's list).

use crate::bvh::Bvh;
use crate::bvh::kernel::{self, Tree};
use crate::bvh::leaf::LANES;
use crate::bvh::packet::LeafTest;
use crate::bvh::ray_query::RayQuery;
use crate::triangle::{LeafTriangle, TriangleHit};
use crate::{QueryOptions, Ray};
use nalgebra::{Point2, Point3, Unit, Vector3};

/// Everything a ray hit tells about the mesh at that point.
///
/// Barycentrics follow `P = (1 − u − v)·A + u·B + v·C` for the triangle's corners `A, B, C`
/// in the order the file or buffer gave them.
///
/// ```
/// use meshray::prelude::*;
/// use meshray::{QueryOptions, Ray};
/// use nalgebra::{Point3, Vector3};
/// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
///
/// let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), -Vector3::z());
/// let hit = bvh.closest_hit(&ray, &QueryOptions::default()).unwrap();
/// let mesh = bvh.mesh();
/// assert_eq!(mesh.objects()[hit.object as usize], "sphere");
/// assert_eq!(mesh.materials()[hit.material.unwrap() as usize], "sphere_red");
/// // The point is where the ray is at t, and where the barycentrics put it.
/// assert!((hit.point - ray.at(hit.t)).norm() < 1e-5);
/// let [a, b, c] = mesh.triangle(hit.triangle as usize);
/// let p = a.coords * (1.0 - hit.u - hit.v) + b.coords * hit.u + c.coords * hit.v;
/// assert!((hit.point.coords - p).norm() < 1e-5);
/// // The sphere has normals and texture coordinates; its front faces face the ray.
/// assert!(hit.front_face && hit.normal.dot(&ray.direction()) < 0.0);
/// assert!(hit.shading_normal.unwrap().z > 0.99 && hit.uv.is_some());
/// # Ok::<(), meshray::Error>(())
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    /// The ray parameter: the hit is at `origin + t·direction`.
    pub t: f32,
    /// The triangle's number in the mesh (file order).
    pub triangle: u32,
    /// Weight of corner `B`.
    pub u: f32,
    /// Weight of corner `C`.
    pub v: f32,
    /// The point, `(1 − u − v)·A + u·B + v·C`.
    pub point: Point3<f32>,
    /// The unit geometric normal `(B − A) × (C − A)`, normalized: it points out of the front
    /// face whichever side the ray came from.
    pub normal: Unit<Vector3<f32>>,
    /// Whether the ray hit the front face (the side the normal points to).
    pub front_face: bool,
    /// The corner normals interpolated with the barycentrics and normalized, when the mesh
    /// has normals for this triangle (and they do not cancel out).
    pub shading_normal: Option<Unit<Vector3<f32>>>,
    /// The corner texture coordinates interpolated with the barycentrics, when present.
    pub uv: Option<Point2<f32>>,
    /// The triangle's object, an index into [`Mesh::objects`](crate::Mesh::objects).
    pub object: u32,
    /// The triangle's material, an index into [`Mesh::materials`](crate::Mesh::materials).
    pub material: Option<u32>,
}

/// The short answer of [`Bvh::cast_ray`](crate::query::RayCast::cast_ray) and [`Bvh::cast_rays`](crate::query::RayCast::cast_rays): which triangle,
/// where along the ray and where on the triangle. 16 bytes; [`Bvh::hit_details`](crate::query::RayCast::hit_details) turns it
/// into a full [`Hit`].
///
/// ```
/// use meshray::prelude::*;
/// use meshray::{QueryOptions, Ray, CompactHit};
/// use nalgebra::{Point3, Vector3};
/// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
///
/// let ray = Ray::new(Point3::new(0.3, 5.0, 3.1), -Vector3::y()); // down onto the ground
/// let CompactHit { t, triangle, u, v } = bvh.cast_ray(&ray, meshray::RayQuery::Closest, &QueryOptions::default()).unwrap();
/// assert_eq!(t, 5.0);
/// assert!(u >= 0.0 && v >= 0.0 && u + v <= 1.0);
/// assert_eq!(bvh.mesh().attributes(triangle as usize).object, 0); // the ground
/// # Ok::<(), meshray::Error>(())
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompactHit {
    /// The ray parameter: the hit is at `origin + t·direction`.
    pub t: f32,
    /// The triangle's number in the mesh (file order).
    pub triangle: u32,
    /// Weight of corner `B` (as in [`Hit::u`]).
    pub u: f32,
    /// Weight of corner `C` (as in [`Hit::v`]).
    pub v: f32,
}

/// What a query tested (see [`diagnostics::closest_hit_with_cost`](crate::diagnostics::closest_hit_with_cost)).
///
/// ```
/// use meshray::{QueryOptions, Ray};
/// use nalgebra::{Point3, Vector3};
/// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
///
/// let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), -Vector3::z());
/// let (_, cost) = meshray::diagnostics::closest_hit_with_cost(&bvh, &ray, &QueryOptions::default());
/// // Far fewer triangles tested than the mesh has: that is what the tree is for.
/// assert!(cost.triangles > 0 && cost.triangles < 100);
/// let miss = Ray::new(Point3::new(0.0, 50.0, 0.0), Vector3::y());
/// assert_eq!(meshray::diagnostics::closest_hit_with_cost(&bvh, &miss, &QueryOptions::default()).1.triangles, 0);
/// # Ok::<(), meshray::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryCost {
    /// Ray–box slab tests.
    pub boxes: u32,
    /// Ray–triangle tests.
    pub triangles: u32,
}

/// Where the walk reports its work; `()` ignores it, so plain queries pay nothing.
pub(crate) trait Tally {
    /// Whether it counts anything (only the portable twin reports its work).
    const COUNTS: bool;
    fn boxes(&mut self, n: u32);
    fn triangles(&mut self, n: u32);
}

impl Tally for () {
    const COUNTS: bool = false;
    #[inline(always)]
    fn boxes(&mut self, _: u32) {}
    #[inline(always)]
    fn triangles(&mut self, _: u32) {}
}

impl Tally for QueryCost {
    const COUNTS: bool = true;
    fn boxes(&mut self, n: u32) {
        self.boxes += n;
    }
    fn triangles(&mut self, n: u32) {
        self.triangles += n;
    }
}

impl Bvh {
    /// [`diagnostics::closest_hit_with_cost`](crate::diagnostics::closest_hit_with_cost).
    pub(crate) fn closest_hit_with_cost(
        &self,
        ray: &Ray,
        options: &QueryOptions,
    ) -> (Option<Hit>, QueryCost) {
        let mut cost = QueryCost::default();
        let hit = self.closest_hit_tallied(ray, options, &mut cost);
        (hit, cost)
    }

    #[inline(always)]
    fn closest_hit_tallied(
        &self,
        ray: &Ray,
        options: &QueryOptions,
        tally: &mut impl Tally,
    ) -> Option<Hit> {
        let found = self.closest_slot(ray, options, tally)?;
        Some(self.hit(&ray.direction(), self.ray_hit(found)))
    }

    /// [`RayCast::cast_ray`] for a mesh.
    #[inline]
    pub(crate) fn cast_ray(
        &self,
        ray: &Ray,
        query: RayQuery,
        options: &QueryOptions,
    ) -> Option<CompactHit> {
        match query {
            RayQuery::Closest => self.closest_triangle(ray, options),
            RayQuery::Any => self.any_triangle(ray, options),
        }
    }

    /// [`RayCast::cast_ray_normal`](crate::query::RayCast::cast_ray_normal) for a mesh: the
    /// cross product of the hit's leaf triangle, whose corners are the mesh's bit for bit.
    #[inline]
    pub(crate) fn cast_ray_normal(
        &self,
        ray: &Ray,
        query: RayQuery,
        options: &QueryOptions,
    ) -> Option<(CompactHit, Vector3<f32>)> {
        let (slot, hit) = match query {
            RayQuery::Closest => self.closest_slot(ray, options, &mut ())?,
            RayQuery::Any => self.any_slot(ray, options)?,
        };
        let (packet, lane) = (slot as usize / LANES, slot as usize % LANES);
        let normal = self.leaf_packets[packet].get(lane).normal();
        Some((self.ray_hit((slot, hit)), normal))
    }

    /// [`cast_ray`](crate::query::RayCast::cast_ray)'s closest hit.
    pub(crate) fn closest_triangle(&self, ray: &Ray, options: &QueryOptions) -> Option<CompactHit> {
        self.closest_slot(ray, options, &mut ())
            .map(|found| self.ray_hit(found))
    }

    /// [`cast_ray`](crate::query::RayCast::cast_ray)'s first hit found.
    pub(crate) fn any_triangle(&self, ray: &Ray, options: &QueryOptions) -> Option<CompactHit> {
        self.any_slot(ray, options).map(|found| self.ray_hit(found))
    }

    /// [`RayCast::hit_details`] for a mesh.
    pub(crate) fn hit_details(&self, ray: &Ray, hit: &CompactHit) -> Option<Hit> {
        self.hit_details_along(&ray.direction(), hit)
    }

    /// [`hit_details`](Self::hit_details) for a ray of this `direction`: all a hit's details
    /// read of the ray (the side it meets the triangle from).
    pub(crate) fn hit_details_along(
        &self,
        direction: &Vector3<f32>,
        hit: &CompactHit,
    ) -> Option<Hit> {
        ((hit.triangle as usize) < self.mesh.triangle_count()).then(|| self.hit(direction, *hit))
    }

    /// The closest hit's leaf slot and triangle answer.
    #[inline(always)]
    fn closest_slot<T: Tally>(
        &self,
        ray: &Ray,
        options: &QueryOptions,
        tally: &mut T,
    ) -> Option<(u32, TriangleHit)> {
        if !ray.is_valid() {
            return None;
        }
        if T::COUNTS {
            return kernel::cast_tallied::<false, T>(self.ray_tree(), ray, options, tally);
        }
        kernel::cast::<false>(self.ray_tree(), ray, options)
    }

    /// The first hit the walk meets: its leaf slot and triangle answer.
    #[inline(always)]
    fn any_slot(&self, ray: &Ray, options: &QueryOptions) -> Option<(u32, TriangleHit)> {
        if !ray.is_valid() {
            return None;
        }
        kernel::cast::<true>(self.ray_tree(), ray, options)
    }

    /// The tree as the ray walk reads it.
    #[inline(always)]
    pub(in crate::bvh) fn ray_tree(&self) -> Tree<'_> {
        Tree {
            nodes: &self.nodes,
            packets: &self.leaf_packets,
            index: &self.triangle_index,
            depth: self.depth,
        }
    }

    pub(in crate::bvh) fn ray_hit(&self, (slot, h): (u32, TriangleHit)) -> CompactHit {
        CompactHit {
            t: h.t,
            triangle: self.triangle_index[slot as usize],
            u: h.u,
            v: h.v,
        }
    }

    /// [`RayCast::all_triangles`] for a mesh.
    pub(crate) fn all_triangles(
        &self,
        ray: &Ray,
        options: &QueryOptions,
        hits: &mut Vec<CompactHit>,
    ) {
        hits.clear();
        self.each_hit(ray, options, |h| hits.push(h));
        hits.sort_unstable_by(|a, b| a.t.total_cmp(&b.t).then(a.triangle.cmp(&b.triangle)));
    }

    /// Calls `found` with every hit along the ray in its range, in walk order.
    #[inline(always)]
    pub(crate) fn each_hit(
        &self,
        ray: &Ray,
        options: &QueryOptions,
        mut found: impl FnMut(CompactHit),
    ) {
        if !ray.is_valid() {
            return;
        }
        let test = LeafTest::new(ray, options);
        let t_max = ray.t_max();
        self.visit_packets(
            ray,
            #[inline(always)]
            |packet, range_end| {
                test.run(&self.leaf_packets, packet, LANES, range_end, |slot, h| {
                    found(self.ray_hit((slot, h)));
                    Some(t_max)
                })
            },
        );
    }

    /// [`RayCast::count_hits`] for a mesh.
    pub(crate) fn count_hits(&self, ray: &Ray, options: &QueryOptions) -> usize {
        if !ray.is_valid() {
            return 0;
        }
        let test = LeafTest::new(ray, options);
        let t_max = ray.t_max();
        let mut count = 0;
        self.visit_packets(
            ray,
            #[inline(always)]
            |packet, range_end| {
                test.run(&self.leaf_packets, packet, LANES, range_end, |_, _| {
                    count += 1;
                    Some(t_max)
                })
            },
        );
        count
    }

    /// Walks the tree for `ray` (valid) in its range, children in lane order, nothing
    /// dropped ([`kernel::visit`]), calling `leaf` with each entered packet and the range's
    /// end; `leaf` returns `true` to stop. For the queries that want every hit in the
    /// range: the order is the cheapest, and the end never moves.
    #[inline(always)]
    pub(crate) fn visit_packets(&self, ray: &Ray, mut leaf: impl FnMut(usize, &mut f32) -> bool) {
        kernel::visit::<{ kernel::IN_LANE_ORDER }, _>(
            &self.nodes,
            self.depth,
            ray,
            ray.t_max(),
            #[inline(always)]
            |packet, t_max| leaf(packet as usize, t_max),
        );
    }

    /// The unit geometric normal of triangle `triangle` (as [`Hit::normal`] gives it) from
    /// the tree's table of them, made on first use (on all cores); `None` for a number that
    /// names no triangle. While another thread makes the table, the normal is computed
    /// from the corners, as the table computes it (see `lazy` for why nothing waits).
    pub(crate) fn cached_normal(&self, triangle: u32) -> Option<Unit<Vector3<f32>>> {
        let mesh = &self.mesh;
        let normal = |i: usize| {
            let [a, b, c] = mesh.triangle(i);
            unit_normal(&LeafTriangle::new(&a, &b, &c).normal())
        };
        let table = self.normals.get_or_make(|| {
            crate::bvh::par::map_indexed(mesh.triangle_count(), normal).into_boxed_slice()
        });
        match table {
            Some(table) => table.get(triangle as usize).copied(),
            None => {
                ((triangle as usize) < mesh.triangle_count()).then(|| normal(triangle as usize))
            }
        }
    }

    /// Fills in a hit's details from the mesh.
    fn hit(&self, direction: &Vector3<f32>, h: CompactHit) -> Hit {
        let i = h.triangle as usize;
        let mesh = &self.mesh;
        let [a, b, c] = mesh.triangle(i);
        let w = 1.0 - h.u - h.v;
        let point = Point3::from(a.coords * w + b.coords * h.u + c.coords * h.v);
        // The leaves store the corners bit for bit, so this is the normal the test used.
        let n = LeafTriangle::new(&a, &b, &c).normal();
        let normal = unit_normal(&n);
        let shading_normal = mesh
            .corner_normals(i)
            .and_then(|[na, nb, nc]| unit(&(na * w + nb * h.u + nc * h.v)));
        let uv = mesh
            .corner_uvs(i)
            .map(|[ta, tb, tc]| Point2::from(ta.coords * w + tb.coords * h.u + tc.coords * h.v));
        Hit {
            t: h.t,
            triangle: h.triangle,
            u: h.u,
            v: h.v,
            point,
            normal,
            front_face: n.dot(direction) < 0.0,
            shading_normal,
            uv,
            object: mesh.object_id(i),
            material: mesh.material_id(i),
        }
    }
}

/// Makes `(slot, h)` the best hit if it is closer, or as close with a lower triangle number
/// (`index` maps slots to triangle numbers): ties go to the lowest, whatever order the walk
/// met them in. (The leaf tests only report hits within the current best `t`.) Every walk's
/// closest hit keeps its best through this.
#[inline(always)]
pub(in crate::bvh) fn keep_closer(
    index: &[u32],
    best: &mut Option<(u32, TriangleHit)>,
    slot: u32,
    h: TriangleHit,
) {
    let closer = match best {
        Some((s, b)) if h.t == b.t => index[slot as usize] < index[*s as usize],
        _ => true,
    };
    if closer {
        *best = Some((slot, h));
    }
}

/// A triangle's unit normal from its cross product; +z for a degenerate triangle (which no
/// ray hits).
fn unit_normal(n: &Vector3<f32>) -> Unit<Vector3<f32>> {
    unit(n).unwrap_or_else(|| Unit::new_unchecked(Vector3::z()))
}

/// Normalizes without overflow or underflow (scaling by the largest component first);
/// `None` for a zero or non-finite vector.
fn unit(v: &Vector3<f32>) -> Option<Unit<Vector3<f32>>> {
    let m = v.amax();
    if !(m > 0.0 && m.is_finite()) {
        return None;
    }
    Some(Unit::new_normalize(v / m))
}
