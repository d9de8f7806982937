//! Ray queries: closest hit, any hit, all hits, the count.
//!
//! Every one runs the ray walk of [`kernel`](crate::bvh::kernel): each node's children in
//! the order made for the ray's octant. Closest and any hit test their packets inside the
//! walk; every hit and the count hand each entered packet to the packet test
//! ([`LeafTest`]) with the range's end left where it is; the measured cost runs the walk's
//! portable twin, which visits the same nodes in the same order, counting as it goes. None
//! of them allocates (every hit, only to grow the caller's list).

use crate::bvh::Bvh;
use crate::bvh::batch::RayQuery;
use crate::bvh::kernel::{self, Tree, level};
use crate::bvh::leaf::{LANES, LeafTest};
use crate::triangle::{LeafTriangle, TriangleHit};
use crate::{QueryOptions, Ray};
use nalgebra::{Point2, Point3, Unit, Vector3};

/// Everything a ray hit tells about the mesh at that point.
///
/// Barycentrics follow `P = (1 − u − v)·A + u·B + v·C` for the triangle's corners `A, B, C`
/// in the order the file or buffer gave them.
///
/// ```
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

/// The short answer of [`Bvh::cast_ray`] and [`Bvh::cast_rays`]: which triangle,
/// where along the ray and where on the triangle. 16 bytes; [`Bvh::hit_details`] turns it
/// into a full [`Hit`].
///
/// ```
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

/// What a query tested (see [`Bvh::closest_hit_with_cost`]).
///
/// ```
/// use meshray::{QueryOptions, Ray};
/// use nalgebra::{Point3, Vector3};
/// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
///
/// let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), -Vector3::z());
/// let (_, cost) = bvh.closest_hit_with_cost(&ray, &QueryOptions::default());
/// // Far fewer triangles tested than the mesh has: that is what the tree is for.
/// assert!(cost.triangles > 0 && cost.triangles < 100);
/// let miss = Ray::new(Point3::new(0.0, 50.0, 0.0), Vector3::y());
/// assert_eq!(bvh.closest_hit_with_cost(&miss, &QueryOptions::default()).1.triangles, 0);
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
    /// The first triangle along the ray within its range: the smallest `t`, as a test of
    /// every triangle would find. `None` for a miss and for an invalid ray
    /// ([`Ray::is_valid`]). Allocates nothing.
    ///
    /// ```
    /// use meshray::{Culling, QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// // Towards the sphere (centre (0, 1, 0), radius 1) from z = 10.
    /// let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), -Vector3::z());
    /// let hit = bvh.closest_hit(&ray, &QueryOptions::default()).unwrap();
    /// assert!((hit.t - 9.0).abs() < 1e-2 && hit.front_face);
    ///
    /// // From inside the sphere, front faces only: its inside is all back faces, so the ray
    /// // leaves it unseen and finds nothing behind.
    /// let inside = Ray::new(Point3::new(0.0, 1.0, 0.0), -Vector3::z());
    /// let front_only = QueryOptions { culling: Culling::Back, ..Default::default() };
    /// assert!(bvh.closest_hit(&inside, &front_only).is_none());
    /// assert!(!bvh.closest_hit(&inside, &QueryOptions::default()).unwrap().front_face);
    ///
    /// // A range that stops short of the sphere: no hit.
    /// assert!(bvh.closest_hit(&Ray::with_range(ray.origin(), ray.direction(), 0.0, 8.0), &QueryOptions::default()).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn closest_hit(&self, ray: &Ray, options: &QueryOptions) -> Option<Hit> {
        self.closest_hit_tallied(ray, options, &mut ())
    }

    /// [`closest_hit`](Bvh::closest_hit), also reporting what the query cost: the boxes and
    /// triangles it tested (every triangle of each packet of four it reached). For cost
    /// heatmaps and for judging a tree; the same answer, from the walk's portable twin,
    /// which visits the same nodes in the same order as the walk `closest_hit` runs (and so
    /// runs slower than it).
    ///
    /// ```
    /// use meshray::{Bvh, Mesh, QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), Vector3::new(0.0, 0.0, -1.0));
    /// let (hit, cost) = bvh.closest_hit_with_cost(&ray, &QueryOptions::default());
    /// assert_eq!(hit, bvh.closest_hit(&ray, &QueryOptions::default()));
    /// assert!(cost.boxes > 0 && cost.triangles > 0 && (cost.triangles as usize) < bvh.mesh().triangle_count());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn closest_hit_with_cost(
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
        Some(self.hit(ray, self.ray_hit(found)))
    }

    /// The answer to one ray as [`cast_rays`](Bvh::cast_rays) gives it: for
    /// [`RayQuery::Closest`] the closest hit as [`closest_hit`](Bvh::closest_hit) finds it,
    /// for [`RayQuery::Any`] the hit [`any_hit`](Bvh::any_hit) finds, reporting only the
    /// triangle, `t` and barycentrics. It reads nothing of the mesh, so batch work
    /// (visibility, scan simulation, benchmarks) skips the cache misses of gathering normals,
    /// texture coordinates and ids; [`hit_details`](Bvh::hit_details) fills those in later.
    ///
    /// ```
    /// use meshray::{Bvh, Mesh, QueryOptions, Ray, RayQuery};
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), Vector3::new(0.0, 0.0, -1.0));
    /// let options = QueryOptions::default();
    /// let short = bvh.cast_ray(&ray, RayQuery::Closest, &options).expect("the sphere is there");
    /// assert_eq!(bvh.hit_details(&ray, &short), bvh.closest_hit(&ray, &options));
    ///
    /// // Is the line of sight from a to b blocked? (The sphere is in between.)
    /// let (a, b) = (Point3::new(0.0, 1.0, 5.0), Point3::new(0.0, 1.0, -3.0));
    /// let sight = Ray::with_range(a, b - a, 0.0, 1.0);
    /// let blocker = bvh.cast_ray(&sight, RayQuery::Any, &options).expect("blocked");
    /// assert!(blocker.t > 0.0 && blocker.t < 1.0);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    #[inline]
    pub fn cast_ray(
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

    /// [`cast_ray`](Bvh::cast_ray)'s closest hit.
    pub(crate) fn closest_triangle(&self, ray: &Ray, options: &QueryOptions) -> Option<CompactHit> {
        self.closest_slot(ray, options, &mut ())
            .map(|found| self.ray_hit(found))
    }

    /// [`cast_ray`](Bvh::cast_ray)'s first hit found.
    pub(crate) fn any_triangle(&self, ray: &Ray, options: &QueryOptions) -> Option<CompactHit> {
        self.any_slot(ray, options).map(|found| self.ray_hit(found))
    }

    /// Everything [`Hit`] tells about a hit [`cast_ray`](Bvh::cast_ray) or
    /// [`cast_rays`](Bvh::cast_rays) found for this `ray`.
    ///
    /// ```
    /// use meshray::{QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), -Vector3::z());
    /// let short = bvh.cast_ray(&ray, meshray::RayQuery::Closest, &QueryOptions::default()).unwrap();
    /// let hit = bvh.hit_details(&ray, &short).unwrap();
    /// assert_eq!((hit.t, hit.triangle), (short.t, short.triangle));
    /// assert_eq!(bvh.mesh().objects()[hit.object as usize], "sphere");
    /// assert!(hit.uv.is_some()); // the sphere has texture coordinates
    ///
    /// // A hand-made CompactHit naming no triangle of the mesh has no details.
    /// let bogus = meshray::CompactHit { triangle: u32::MAX, ..short };
    /// assert!(bvh.hit_details(&ray, &bogus).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// `None` when `hit.triangle` is not a triangle of the mesh (`CompactHit`'s fields are
    /// public, so a caller can make one); pass hits this BVH's queries returned.
    pub fn hit_details(&self, ray: &Ray, hit: &CompactHit) -> Option<Hit> {
        ((hit.triangle as usize) < self.mesh.triangle_count()).then(|| self.hit(ray, *hit))
    }

    /// [`hit_details`](Bvh::hit_details) for a hit this BVH returned (so its triangle exists).
    pub(crate) fn own_hit_details(&self, ray: &Ray, hit: &CompactHit) -> Hit {
        self.hit(ray, *hit)
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
        kernel::cast::<{ level::EXACT }, false>(self.ray_tree(), ray, options)
    }

    /// The first hit the walk meets: its leaf slot and triangle answer.
    #[inline(always)]
    fn any_slot(&self, ray: &Ray, options: &QueryOptions) -> Option<(u32, TriangleHit)> {
        if !ray.is_valid() {
            return None;
        }
        kernel::cast::<{ level::EXACT }, true>(self.ray_tree(), ray, options)
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

    /// Some hit within the ray's range, the first the walk meets (not necessarily the
    /// closest): the cheap question "is anything there?", for shadows and lines of sight.
    /// Allocates nothing.
    ///
    /// ```
    /// use meshray::{QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// // A shadow ray from a point on the ground towards a light high above the sphere.
    /// let ground = Point3::new(0.3, 0.0, 0.2);
    /// let light = Point3::new(0.0, 10.0, 0.0);
    /// // t_min skips the ground point itself; t_max stops at the light.
    /// let shadow = Ray::with_range(ground, light - ground, 1e-4, 1.0);
    /// assert!(bvh.any_hit(&shadow, &QueryOptions::default()).is_some()); // in the sphere's shadow
    /// let open_sky = Ray::with_range(Point3::new(3.0, 0.0, 3.0), Vector3::new(0.0, 10.0, 0.0), 1e-4, 1.0);
    /// assert!(bvh.any_hit(&open_sky, &QueryOptions::default()).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn any_hit(&self, ray: &Ray, options: &QueryOptions) -> Option<Hit> {
        let found = self.any_slot(ray, options)?;
        Some(self.hit(ray, self.ray_hit(found)))
    }

    /// Every hit within the ray's range, sorted by `t` (ties by triangle number).
    ///
    /// ```
    /// use meshray::{Culling, QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// // Through the sphere: in at its front, out at its back.
    /// let ray = Ray::new(Point3::new(0.1, 1.05, 10.0), -Vector3::z());
    /// let hits = bvh.all_hits(&ray, &QueryOptions::default());
    /// assert_eq!(hits.len(), 2);
    /// assert!(hits[0].t < hits[1].t && hits[0].front_face && !hits[1].front_face);
    /// let front_only = QueryOptions { culling: Culling::Back, ..Default::default() };
    /// assert_eq!(bvh.all_hits(&ray, &front_only).len(), 1);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn all_hits(&self, ray: &Ray, options: &QueryOptions) -> Vec<Hit> {
        let mut found = Vec::new();
        self.all_triangles(ray, options, &mut found);
        found.iter().map(|&h| self.hit(ray, h)).collect()
    }

    /// Every hit along the ray in its range, compact (the triangle, `t` and barycentrics),
    /// into `hits` (cleared first), sorted by `t`, then triangle: what
    /// [`all_hits`](Bvh::all_hits) finds, without making each hit whole
    /// ([`hit_details`](Bvh::hit_details) does that for one) and without allocating once
    /// `hits` is large enough. For listing every crossing of many rays.
    ///
    /// ```
    /// use meshray::{QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// // Through the sphere and on to the ground.
    /// let ray = Ray::new(Point3::new(0.1, 3.0, 0.05), -Vector3::y());
    /// let options = QueryOptions::default();
    /// let mut hits = Vec::new();
    /// bvh.all_triangles(&ray, &options, &mut hits);
    /// let whole = bvh.all_hits(&ray, &options);
    /// assert_eq!(hits.len(), 3);
    /// for (compact, whole) in hits.iter().zip(&whole) {
    ///     assert_eq!((compact.t, compact.triangle), (whole.t, whole.triangle));
    /// }
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn all_triangles(&self, ray: &Ray, options: &QueryOptions, hits: &mut Vec<CompactHit>) {
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

    /// How many triangles the ray hits in its range: [`all_hits`](Bvh::all_hits)`.len()`
    /// without building the hits, and without allocating. With the watertight test on a
    /// closed mesh, an odd count from a point means the point is inside (crossing parity),
    /// unless the ray passes exactly through an edge or vertex, which both neighbours count.
    ///
    /// ```
    /// use meshray::{QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// // From the sphere's centre: out through its shell once, then the ground.
    /// let ray = Ray::new(Point3::new(0.1, 1.05, 0.05), -Vector3::y());
    /// let options = QueryOptions { watertight: true, ..Default::default() };
    /// assert_eq!(bvh.count_hits(&ray, &options), bvh.all_hits(&ray, &options).len());
    /// assert_eq!(bvh.count_hits(&ray, &options), 2);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn count_hits(&self, ray: &Ray, options: &QueryOptions) -> usize {
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
        kernel::visit::<true, _>(
            &self.nodes,
            self.depth,
            ray,
            ray.t_max(),
            #[inline(always)]
            |packet, t_max| leaf(packet as usize, t_max),
        );
    }

    /// Fills in a hit's details from the mesh.
    fn hit(&self, ray: &Ray, h: CompactHit) -> Hit {
        let i = h.triangle as usize;
        let mesh = &self.mesh;
        let [a, b, c] = mesh.triangle(i);
        let w = 1.0 - h.u - h.v;
        let point = Point3::from(a.coords * w + b.coords * h.u + c.coords * h.v);
        // The leaves store the corners bit for bit, so this is the normal the test used.
        let n = LeafTriangle::new(&a, &b, &c).normal();
        let normal = unit(&n).unwrap_or_else(|| Unit::new_unchecked(Vector3::z()));
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
            front_face: n.dot(&ray.direction()) < 0.0,
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

/// Normalizes without overflow or underflow (scaling by the largest component first);
/// `None` for a zero or non-finite vector.
fn unit(v: &Vector3<f32>) -> Option<Unit<Vector3<f32>>> {
    let m = v.amax();
    if !(m > 0.0 && m.is_finite()) {
        return None;
    }
    Some(Unit::new_normalize(v / m))
}
