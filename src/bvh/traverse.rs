//! Queries: closest hit, any hit, all hits.
//!
//! All three walk the tree the same way: test both children's boxes, descend into the nearer
//! one and push the other with its entry distance, and drop a popped node whose entry lies
//! beyond the current `t_max` (which the closest-hit query shrinks to the best hit so far).
//! The stack lives on the call's stack frame: closest and any hit allocate nothing.

use super::Bvh;
use super::build::MAX_DEPTH;
use crate::aabb::{RaySlabs, slab_interval};
use crate::triangle::{LeafTriangle, TriangleHit};
use crate::watertight::WatertightRay;
use crate::{Culling, Ray};
use nalgebra::{Point2, Point3, Unit, Vector3};
use smallvec::SmallVec;
use std::ops::Range;

/// Options of a query. The ray's own `[t_min, t_max]` is the range searched.
///
/// ```
/// use meshray::{Culling, QueryOptions};
/// let front_only = QueryOptions { culling: Culling::Back, ..Default::default() };
/// assert_ne!(front_only, QueryOptions::default());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryOptions {
    /// Which faces may be hit; both by default.
    pub culling: Culling,
    /// Use the watertight triangle test ([`intersect_triangle_watertight`]) instead of
    /// Cramer's rule ([`intersect_triangle`]): no ray slips between triangles that share an
    /// edge or a vertex. Measured at 0.94–1.03× Cramer's throughput (traversal dominates).
    /// Off by default.
    ///
    /// [`intersect_triangle_watertight`]: crate::intersect_triangle_watertight
    /// [`intersect_triangle`]: crate::intersect_triangle
    pub watertight: bool,
}

/// The triangle test a query runs in the leaves, prepared once per ray.
struct LeafTest {
    origin: [f32; 3],
    direction: [f32; 3],
    watertight: Option<WatertightRay>,
    culling: Culling,
    t_min: f32,
}

impl LeafTest {
    fn new(ray: &Ray, options: &QueryOptions) -> LeafTest {
        LeafTest {
            origin: ray.origin().coords.into(),
            direction: ray.direction().into(),
            watertight: options.watertight.then(|| WatertightRay::new(ray)),
            culling: options.culling,
            t_min: ray.t_min(),
        }
    }

    #[inline(always)]
    fn run(&self, tri: &LeafTriangle, t_max: f32) -> Option<TriangleHit> {
        match &self.watertight {
            Some(w) => w.intersect(tri, self.t_min, t_max, self.culling),
            None => tri.intersect(
                &self.origin,
                &self.direction,
                self.t_min,
                t_max,
                self.culling,
            ),
        }
    }
}

/// Everything a ray hit tells about the mesh at that point.
///
/// Barycentrics follow `P = (1 − u − v)·A + u·B + v·C` for the triangle's corners `A, B, C`
/// in the order the file or buffer gave them.
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

/// How far (relative) the walk widens each box's exit before comparing it with the entry.
///
/// The slab test's `t` values and the triangle test's `t` are rounded differently, so a
/// triangle lying on its box's face can hit at a `t` a few ulps before the box's computed
/// entry. With a closer hit already found at a `t` in between, the exact comparison would cull
/// that box and lose the closer triangle (seen on the coplanar overlapping triangles of the
/// conference room). Widening by 2^-20 (8 ulps), as conservative traversal does (Ize 2013),
/// keeps such boxes; the triangle test still uses the exact range, so answers stay those of a
/// brute force.
const EXIT_SLACK: f32 = 1.0 / (1u32 << 20) as f32;

#[inline(always)]
fn widened(far: f32) -> f32 {
    far + far.abs() * EXIT_SLACK
}

/// What a query tested (see [`Bvh::closest_hit_with_cost`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryCost {
    /// Ray–box slab tests.
    pub boxes: u32,
    /// Ray–triangle tests.
    pub triangles: u32,
}

/// Where the walk reports its work; `()` ignores it, so plain queries pay nothing.
trait Tally {
    fn boxes(&mut self, n: u32);
    fn triangles(&mut self, n: u32);
}

impl Tally for () {
    #[inline(always)]
    fn boxes(&mut self, _: u32) {}
    #[inline(always)]
    fn triangles(&mut self, _: u32) {}
}

impl Tally for QueryCost {
    fn boxes(&mut self, n: u32) {
        self.boxes += n;
    }
    fn triangles(&mut self, n: u32) {
        self.triangles += n;
    }
}

/// One stack entry: a node and the ray's entry distance into its box.
type Stack = SmallVec<[(u32, f32); 64]>;
const _: () = assert!(
    MAX_DEPTH <= 64,
    "the stack must hold a path of the deepest tree"
);

impl Bvh {
    /// The first triangle along the ray within its range: the smallest `t`, as a test of
    /// every triangle would find. `None` for a miss and for an invalid ray
    /// ([`Ray::is_valid`]). Allocates nothing.
    pub fn closest_hit(&self, ray: &Ray, options: &QueryOptions) -> Option<Hit> {
        self.closest_hit_tallied(ray, options, &mut ())
    }

    /// [`closest_hit`](Bvh::closest_hit), also reporting what the query cost: the boxes and
    /// triangles it tested. For cost heatmaps and for judging a tree; the same answer.
    ///
    /// ```
    /// use meshray::{Bvh, Mesh, QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let bvh = Bvh::build(Mesh::load_obj(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
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
        if !ray.is_valid() {
            return None;
        }
        let test = LeafTest::new(ray, options);
        let mut best: Option<(u32, TriangleHit)> = None;
        self.walk(ray, tally, |range, t_max| {
            for slot in range {
                if let Some(h) = test.run(&self.leaf_triangles[slot], *t_max) {
                    *t_max = h.t;
                    best = Some((slot as u32, h));
                }
            }
            false
        });
        best.map(|(slot, h)| self.hit(ray, slot, h))
    }

    /// Some hit within the ray's range, the first the walk meets (not necessarily the
    /// closest): the cheap question "is anything there?", for shadows and lines of sight.
    /// Allocates nothing.
    pub fn any_hit(&self, ray: &Ray, options: &QueryOptions) -> Option<Hit> {
        if !ray.is_valid() {
            return None;
        }
        let test = LeafTest::new(ray, options);
        let mut found = None;
        self.walk(ray, &mut (), |range, t_max| {
            for slot in range {
                if let Some(h) = test.run(&self.leaf_triangles[slot], *t_max) {
                    found = Some((slot as u32, h));
                    return true;
                }
            }
            false
        });
        found.map(|(slot, h)| self.hit(ray, slot, h))
    }

    /// Every hit within the ray's range, sorted by `t` (ties by triangle number).
    pub fn all_hits(&self, ray: &Ray, options: &QueryOptions) -> Vec<Hit> {
        let mut hits = Vec::new();
        self.all_hits_into(ray, options, &mut hits);
        hits
    }

    /// [`all_hits`](Bvh::all_hits) into a vector the caller reuses (cleared first), so a loop
    /// over many rays allocates only while the vector grows.
    pub fn all_hits_into(&self, ray: &Ray, options: &QueryOptions, hits: &mut Vec<Hit>) {
        hits.clear();
        if !ray.is_valid() {
            return;
        }
        let test = LeafTest::new(ray, options);
        self.walk(ray, &mut (), |range, t_max| {
            for slot in range {
                if let Some(h) = test.run(&self.leaf_triangles[slot], *t_max) {
                    hits.push(self.hit(ray, slot as u32, h));
                }
            }
            false
        });
        hits.sort_by(|a, b| a.t.total_cmp(&b.t).then(a.triangle.cmp(&b.triangle)));
    }

    /// Walks the tree near child first, calling `leaf` with each reached leaf's slots and the
    /// current `t_max` (which it may lower); `leaf` returns `true` to stop.
    #[inline(always)]
    fn walk(
        &self,
        ray: &Ray,
        tally: &mut impl Tally,
        mut leaf: impl FnMut(Range<usize>, &mut f32) -> bool,
    ) {
        let slabs = RaySlabs::new(ray);
        let t_min = ray.t_min();
        let mut t_max = ray.t_max();
        let nodes = &self.nodes[..];
        let root = &nodes[0];
        tally.boxes(1);
        let (near, far) = slab_interval(&root.min, &root.max, &slabs, t_min, t_max);
        if !(near <= widened(far)) {
            return;
        }
        let mut stack = Stack::new();
        let mut index = 0usize;
        loop {
            let node = &nodes[index];
            if node.is_leaf() {
                tally.triangles(node.count);
                let first = node.first as usize;
                if leaf(first..first + node.count as usize, &mut t_max) {
                    return;
                }
            } else {
                let left = node.first as usize;
                let (l, r) = (&nodes[left], &nodes[left + 1]);
                tally.boxes(2);
                let (l_near, l_far) = slab_interval(&l.min, &l.max, &slabs, t_min, t_max);
                let (r_near, r_far) = slab_interval(&r.min, &r.max, &slabs, t_min, t_max);
                match (l_near <= widened(l_far), r_near <= widened(r_far)) {
                    (true, true) => {
                        let (near, far, far_entry) = if l_near <= r_near {
                            (left, left + 1, r_near)
                        } else {
                            (left + 1, left, l_near)
                        };
                        stack.push((far as u32, far_entry));
                        index = near;
                        continue;
                    }
                    (true, false) => {
                        index = left;
                        continue;
                    }
                    (false, true) => {
                        index = left + 1;
                        continue;
                    }
                    (false, false) => {}
                }
            }
            // Pop the next node the ray can still reach before t_max.
            loop {
                match stack.pop() {
                    Some((i, entry)) if entry <= widened(t_max) => {
                        index = i as usize;
                        break;
                    }
                    Some(_) => {}
                    None => return,
                }
            }
        }
    }

    /// Fills in a hit's details from the mesh.
    fn hit(&self, ray: &Ray, slot: u32, h: TriangleHit) -> Hit {
        let triangle = self.triangle_index[slot as usize];
        let i = triangle as usize;
        let mesh = &self.mesh;
        let [a, b, c] = mesh.triangle(i);
        let w = 1.0 - h.u - h.v;
        let point = Point3::from(a.coords * w + b.coords * h.u + c.coords * h.v);
        let n = self.leaf_triangles[slot as usize].normal();
        let normal = unit(&n).unwrap_or_else(|| Unit::new_unchecked(Vector3::z()));
        let shading_normal = mesh
            .corner_normals(i)
            .and_then(|[na, nb, nc]| unit(&(na * w + nb * h.u + nc * h.v)));
        let uv = mesh
            .corner_uvs(i)
            .map(|[ta, tb, tc]| Point2::from(ta.coords * w + tb.coords * h.u + tc.coords * h.v));
        Hit {
            t: h.t,
            triangle,
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

/// Normalizes without overflow or underflow (scaling by the largest component first);
/// `None` for a zero or non-finite vector.
fn unit(v: &Vector3<f32>) -> Option<Unit<Vector3<f32>>> {
    let m = v.amax();
    if !(m > 0.0 && m.is_finite()) {
        return None;
    }
    Some(Unit::new_normalize(v / m))
}
