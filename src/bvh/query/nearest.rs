//! The closest point of the mesh to a query point: snapping, distance fields, "what is
//! under this 3D cursor".

use crate::bvh::Bvh;
use crate::bvh::leaf::{LANES, TrianglePacket};
use crate::bvh::walk::{Visitor, walk};
use crate::bvh::wide::{WIDTH, WideNode};
use crate::closest_point::{
    Nearest, box_distance_squared, distance_query, gap, nearest_on_triangle64,
};
use crate::transform::moved_box;
use nalgebra::{Matrix4, Point3};

/// The point of a mesh nearest to a query point (see [`Bvh::closest_point`](crate::query::PointQuery::closest_point)).
///
/// ```
/// use meshray::prelude::*;
/// use nalgebra::Point3;
/// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
///
/// // Snap a 3D cursor just above the ground onto the mesh.
/// let cursor = Point3::new(3.1, 0.25, 3.2);
/// let snapped = bvh.closest_point(cursor, 1.0, &Default::default()).unwrap();
/// assert_eq!(snapped.point, Point3::new(3.1, 0.0, 3.2));
/// assert_eq!(snapped.distance, 0.25);
/// assert_eq!(bvh.mesh().attributes(snapped.triangle as usize).object, 0); // the ground
/// assert!(snapped.u >= 0.0 && snapped.v >= 0.0 && snapped.u + snapped.v <= 1.0);
/// # Ok::<(), meshray::Error>(())
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClosestPoint {
    /// The triangle's number in the mesh (file order).
    pub triangle: u32,
    /// The point on the triangle, `(1 − u − v)·A + u·B + v·C`.
    pub point: Point3<f32>,
    /// Weight of corner `B`.
    pub u: f32,
    /// Weight of corner `C`.
    pub v: f32,
    /// The distance from the query point.
    pub distance: f32,
}

/// Boxes are compared with the best distance so far with this much relative slack, so f64
/// rounding in the box distance never skips a box holding a tie or a nearer triangle.
const BOX_SLACK: f64 = 1.0 + 1.0 / (1u64 << 40) as f64;

impl Bvh {
    /// The nearest triangle to `p` with squared distance at most `limit`, measured after
    /// moving the mesh by `to_world` (object to world; `None`: as is). Boxes moved by a
    /// transform are bounded by their moved corners, so the search stays exact.
    pub(crate) fn nearest_triangle(
        &self,
        p: &Point3<f64>,
        limit: f64,
        to_world: Option<&Matrix4<f64>>,
    ) -> Option<(u32, Nearest)> {
        let mut visitor = NearestVisitor {
            bvh: self,
            p,
            limit,
            to_world,
            best: None,
        };
        walk(&self.nodes, &mut visitor);
        visitor.best
    }

    /// [`PointQuery::closest_point`] for a mesh.
    pub(crate) fn closest_point(
        &self,
        point: impl Into<mint::Point3<f32>>,
        max_distance: f32,
    ) -> Option<ClosestPoint> {
        let (p, limit) = distance_query(point, max_distance)?;
        let best = self.nearest_triangle(&p, limit, None);
        best.map(|(triangle, n)| ClosestPoint {
            triangle,
            point: n.point.cast::<f32>(),
            u: n.u as f32,
            v: n.v as f32,
            distance: n.distance_squared.sqrt() as f32,
        })
    }
}

/// The nearest-triangle search: nearest box first, boxes beyond the best distance skipped.
struct NearestVisitor<'a> {
    bvh: &'a Bvh,
    p: &'a Point3<f64>,
    /// The best squared distance so far (the caller's limit at first).
    limit: f64,
    /// Object to world, when the mesh is measured moved.
    to_world: Option<&'a Matrix4<f64>>,
    best: Option<(u32, Nearest)>,
}

impl Visitor for NearestVisitor<'_> {
    type Key = f64;
    const ORDERED: bool = true;

    fn node(&mut self, _: u32, node: &WideNode) -> (u32, [f64; WIDTH]) {
        lanes_near(node, self.p, self.to_world, |d2| self.worth(d2))
    }

    fn worth(&self, d2: f64) -> bool {
        d2 <= self.limit * BOX_SLACK
    }

    fn leaf(&mut self, first: u32, count: u32, _: f64) -> bool {
        let first = first as usize * LANES;
        let end = first + count as usize;
        for (k, packet) in self.bvh.leaf_packets[first / LANES..end.div_ceil(LANES)]
            .iter()
            .enumerate()
        {
            // Each triangle's own box, four at a time, skips most exact tests: a point deep
            // inside a mesh reaches leaves whose boxes are near but most of whose triangles
            // are not. (Moved meshes are measured in world space, where these boxes are not.)
            let near = match self.to_world {
                None => triangle_box_distances(packet, self.p),
                Some(_) => [0.0; LANES],
            };
            let base = first + k * LANES;
            for (lane, &box_d2) in near.iter().enumerate().take(end - base) {
                if !self.worth(box_d2) {
                    continue;
                }
                let tri = packet.get(lane);
                let [a, b, c] = [tri.a, tri.b, tri.c].map(|q| Point3::from(q).cast());
                let n = match self.to_world {
                    None => nearest_on_triangle64(*self.p, a, b, c),
                    Some(m) => {
                        let [a, b, c] = [a, b, c].map(|q| m.transform_point(&q));
                        nearest_on_triangle64(*self.p, a, b, c)
                    }
                };
                let t = self.bvh.triangle_index[base + lane];
                let better = match &self.best {
                    None => n.distance_squared <= self.limit,
                    Some((bt, bn)) => {
                        n.distance_squared < bn.distance_squared
                            || (n.distance_squared == bn.distance_squared && t < *bt)
                    }
                };
                if better {
                    self.limit = n.distance_squared;
                    self.best = Some((t, n));
                }
            }
        }
        false
    }
}

/// The squared distance from `p` to each of the packet's triangles' boxes, in `f64` as
/// [`box_distance_squared`] measures a node's box (so the same slack covers its rounding).
fn triangle_box_distances(packet: &TrianglePacket, p: &Point3<f64>) -> [f64; LANES] {
    let mut d2 = [0.0; LANES];
    for axis in 0..3 {
        for (lane, d2) in d2.iter_mut().enumerate() {
            let [a, b, c] = [&packet.a, &packet.b, &packet.c].map(|q| q[axis][lane]);
            let (lo, hi) = (f64::from(a.min(b).min(c)), f64::from(a.max(b).max(c)));
            *d2 += gap(lo, hi, p[axis]).powi(2);
        }
    }
    d2
}

/// The squared distance from `p` to each used lane's box of `node` (moved by `to_world` when
/// given), and a bit for each lane whose distance `near_enough` accepts.
pub(crate) fn lanes_near(
    node: &WideNode,
    p: &Point3<f64>,
    to_world: Option<&Matrix4<f64>>,
    near_enough: impl Fn(f64) -> bool,
) -> (u32, [f64; WIDTH]) {
    let mut keys = [0.0; WIDTH];
    let mut mask = 0;
    let Some(m) = to_world else {
        // All lanes at once, an axis at a time (the compiler keeps this in vector registers);
        // unused lanes' inverted boxes give infinite keys, and their bits are left out.
        for axis in 0..3 {
            for (k, key) in keys.iter_mut().enumerate() {
                let (lo, hi) = (f64::from(node.min[axis][k]), f64::from(node.max[axis][k]));
                *key += gap(lo, hi, p[axis]).powi(2);
            }
        }
        for k in node.lanes() {
            if near_enough(keys[k]) {
                mask |= 1 << k;
            }
        }
        return (mask, keys);
    };
    for k in node.lanes() {
        let (min, max) = moved_box(m, node.lane_corners(k).0, node.lane_corners(k).1);
        keys[k] = box_distance_squared(p, min, max);
        if near_enough(keys[k]) {
            mask |= 1 << k;
        }
    }
    (mask, keys)
}
