//! Inside or outside: the generalized winding number of a point, summed over the tree as
//! Barill et al. (2018) do: a subtree far enough from the point counts as one far-field
//! term ([`FarField`]), one near it is opened, and a leaf near it sums its triangles' solid
//! angles exactly. The far-field terms are computed the first time a winding query runs
//! (one pass over the tree, O(n)) and kept with the tree until a refit.

use crate::bvh::Bvh;
use crate::bvh::leaf::LANES;
use crate::bvh::walk::{Visitor, walk};
use crate::bvh::wide::{WIDTH, WideNode};
use crate::closest_point::distance_query;
use crate::winding::{FarField, FarFieldLanes, Moments, WindingAccuracy, solid_angles_x4};
use nalgebra::{Point3, Vector3};
use std::f64::consts::PI;

/// The far-field terms of each wide node's lanes, in the nodes' order.
pub(crate) type FarFields = Vec<FarFieldLanes>;

impl Bvh {
    /// [`PointQuery::winding_number`] for a mesh.
    pub(crate) fn winding_number(
        &self,
        point: impl Into<mint::Point3<f32>>,
        accuracy: WindingAccuracy,
    ) -> f64 {
        let point = Point3::from(point.into());
        if !point.iter().all(|c| c.is_finite()) {
            return f64::NAN;
        }
        self.winding_number_at(point.cast::<f64>().into(), accuracy)
    }

    /// [`PointQuery::contains`] for a mesh.
    pub(crate) fn contains(&self, point: impl Into<mint::Point3<f32>>) -> bool {
        let point = Point3::from(point.into());
        point.iter().all(|c| c.is_finite()) && self.contains_at(point.cast::<f64>().into())
    }

    /// [`PointQuery::signed_distance`] for a mesh.
    pub(crate) fn signed_distance(
        &self,
        point: impl Into<mint::Point3<f32>>,
        max_distance: f32,
    ) -> Option<f64> {
        let (p, limit) = distance_query(point, max_distance)?;
        let (_, nearest) = self.nearest_triangle(&p, limit, None)?;
        let distance = nearest.distance_squared.sqrt();
        Some(if self.contains_at(p.into()) {
            -distance
        } else {
            distance
        })
    }

    /// [`winding_number`](crate::query::PointQuery::winding_number) at an `f64` point (a scene's instance moves
    /// the point into the mesh's frame in `f64`).
    pub(crate) fn winding_number_at(&self, p: [f64; 3], accuracy: WindingAccuracy) -> f64 {
        self.winding_number_and_contact(p, accuracy).0
    }

    /// [`winding_number_at`](Bvh::winding_number_at), and whether `p` lies on a triangle
    /// (where the winding number is not defined: the sum then says nothing of either side).
    pub(crate) fn winding_number_and_contact(
        &self,
        p: [f64; 3],
        accuracy: WindingAccuracy,
    ) -> (f64, bool) {
        let beta = match accuracy {
            WindingAccuracy::FarField { beta } if beta >= 1.0 => beta,
            WindingAccuracy::FarField { .. } => 1.0,
            WindingAccuracy::Exact => f64::INFINITY,
        };
        let far_fields = self.far_fields();
        let mut visitor = WindingVisitor {
            bvh: self,
            far_fields,
            p,
            beta_squared: beta * beta,
            sum: 0.0,
            on_surface: false,
        };
        walk(&self.nodes, &mut visitor);
        (visitor.sum / (4.0 * PI), visitor.on_surface)
    }

    /// The far-field terms, computed on first use.
    fn far_fields(&self) -> &FarFields {
        self.far_fields.get_or_init(|| {
            let mut lanes = vec![[FarField::default(); WIDTH]; self.nodes.len()];
            if !self.nodes.is_empty() {
                self.node_moments(0, &mut lanes);
            }
            lanes.iter().map(FarFieldLanes::new).collect()
        })
    }

    /// Fills the far-field terms of node `index`'s lanes (and their subtrees') and returns
    /// the node's moments and radius, for its parent's lane.
    fn node_moments(&self, index: u32, out: &mut [[FarField; WIDTH]]) -> (Moments, f64) {
        let node = &self.nodes[index as usize];
        let mut lanes: [Option<(Moments, f64)>; WIDTH] = [None; WIDTH];
        for k in node.lanes() {
            let (moments, radius) = if node.count(k) > 0 {
                self.leaf_moments(node, k)
            } else {
                self.node_moments(node.target(k), out)
            };
            out[index as usize][k] = FarField::new(&moments, radius);
            lanes[k] = Some((moments, radius));
        }
        let used = lanes.iter().flatten();
        let centre = centre_of(
            used.clone().map(|(m, _)| (m.centre, m.area)),
            &node.bounds(),
        );
        let mut total = Moments {
            centre,
            ..Moments::default()
        };
        let mut radius: f64 = 0.0;
        for (moments, r) in used {
            total.add(&moments.moved_to(centre));
            radius = radius.max((moments.centre - centre).norm() + r);
        }
        (total, radius)
    }

    /// The moments and radius of leaf lane `k` of `node`, from its triangles.
    fn leaf_moments(&self, node: &WideNode, k: usize) -> (Moments, f64) {
        let first = node.target(k) as usize * LANES;
        let triangles = (first..first + node.count(k) as usize)
            .map(|slot| self.leaf_packets[slot / LANES].get(slot % LANES));
        let centre = centre_of(
            triangles.clone().map(|t| {
                let m = Moments::of_triangle(Vector3::zeros(), t.a, t.b, t.c);
                let corners = [t.a, t.b, t.c].map(|q| Vector3::from(q.map(f64::from)));
                ((corners[0] + corners[1] + corners[2]) / 3.0, m.area)
            }),
            &node.lane_bounds(k),
        );
        let mut total = Moments {
            centre,
            ..Moments::default()
        };
        let mut radius: f64 = 0.0;
        for t in triangles {
            total.add(&Moments::of_triangle(centre, t.a, t.b, t.c));
            for q in [t.a, t.b, t.c] {
                radius = radius.max((Vector3::from(q.map(f64::from)) - centre).norm());
            }
        }
        (total, radius)
    }
}

/// The area-weighted mean of `(centre, area)` pairs, rounded to `f32` (the far-field term
/// stores it so); the middle of `bounds` when the areas sum to zero.
fn centre_of(
    parts: impl Iterator<Item = (Vector3<f64>, f64)>,
    bounds: &crate::Aabb,
) -> Vector3<f64> {
    let (mut weighted, mut area) = (Vector3::zeros(), 0.0);
    for (centre, a) in parts {
        weighted += centre * a;
        area += a;
    }
    let centre = if area > 0.0 && (weighted / area).iter().all(|c| c.is_finite()) {
        weighted / area
    } else {
        (bounds.min.coords.cast::<f64>() + bounds.max.coords.cast::<f64>()) * 0.5
    };
    centre.map(|c| c as f32 as f64)
}

/// The sum of solid angles: far lanes by their terms, near leaves triangle by triangle.
struct WindingVisitor<'a> {
    bvh: &'a Bvh,
    far_fields: &'a FarFields,
    p: [f64; 3],
    beta_squared: f64,
    sum: f64,
    /// Whether the point lies on a triangle of a leaf the sum opened.
    on_surface: bool,
}

impl Visitor for WindingVisitor<'_> {
    type Key = ();
    const ORDERED: bool = false;

    fn node(&mut self, index: u32, node: &WideNode) -> (u32, [(); WIDTH]) {
        let used = node.lanes().fold(0, |m, k| m | 1 << k);
        let (far, near) = self.far_fields[index as usize].far_sum(self.p, self.beta_squared, used);
        self.sum += far;
        (near, [(); WIDTH])
    }

    fn worth(&self, _: ()) -> bool {
        true
    }

    fn leaf(&mut self, first: u32, count: u32, _: ()) -> bool {
        let first = first as usize;
        let count = count as usize;
        for (k, packet) in self.bvh.leaf_packets[first..first + count.div_ceil(LANES)]
            .iter()
            .enumerate()
        {
            let used = (count - k * LANES).min(LANES);
            let (sum, on) = solid_angles_x4(self.p, &packet.a, &packet.b, &packet.c, used);
            self.sum += sum;
            self.on_surface |= on;
        }
        false
    }
}
