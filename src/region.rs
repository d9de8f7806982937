//! Regions of space and the exact triangle tests behind `Bvh::triangles_in` and
//! `Scene::triangles_in`: boxes, balls and frusta (a frustum is made from a camera's screen
//! rectangle in `picking`, the layer above).
//!
//! A triangle overlaps a convex region when no separating axis exists (the separating axis
//! theorem; for a box, Akenine-Möller 2001): the region's face normals, the triangle's
//! normal, and the cross products of the triangle's edges with the region's edge
//! directions. Touching counts as overlapping (both are closed). Everything runs in `f64`
//! from the `f32` inputs.

use crate::Aabb;
use crate::closest_point::{box_distance_squared, nearest_on_triangle64};
use nalgebra::{Point3, Vector3};

/// A convex region as the separating axis test needs it: corners, outward face normals with
/// their plane offsets (`n·x <= d` inside), and edge directions.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Polytope {
    pub(crate) corners: Vec<Point3<f64>>,
    pub(crate) faces: Vec<(Vector3<f64>, f64)>,
    pub(crate) edges: Vec<Vector3<f64>>,
}

impl Polytope {
    pub fn from_box(b: &Aabb) -> Polytope {
        let (lo, hi) = (b.min.cast::<f64>(), b.max.cast::<f64>());
        let corners = (0..8)
            .map(|i| {
                Point3::new(
                    if i & 1 == 0 { lo.x } else { hi.x },
                    if i & 2 == 0 { lo.y } else { hi.y },
                    if i & 4 == 0 { lo.z } else { hi.z },
                )
            })
            .collect();
        let mut faces = Vec::new();
        for a in 0..3 {
            let mut n = Vector3::zeros();
            n[a] = 1.0;
            faces.push((n, hi[a]));
            faces.push((-n, -lo[a]));
        }
        Polytope {
            corners,
            faces,
            edges: vec![Vector3::x(), Vector3::y(), Vector3::z()],
        }
    }

    /// Whether the triangle overlaps the region (closed sets), in `f64` (a scene's triangles
    /// are moved to world space in `f64`).
    pub fn overlaps_triangle64(&self, t: &[Point3<f64>; 3]) -> bool {
        let e = [t[1] - t[0], t[2] - t[1], t[0] - t[2]];
        let separated = |axis: &Vector3<f64>| {
            if axis.norm_squared() == 0.0 {
                return false;
            }
            let (mut tmin, mut tmax) = (f64::INFINITY, f64::NEG_INFINITY);
            for p in t {
                let x = axis.dot(&p.coords);
                tmin = tmin.min(x);
                tmax = tmax.max(x);
            }
            let (mut pmin, mut pmax) = (f64::INFINITY, f64::NEG_INFINITY);
            for p in &self.corners {
                let x = axis.dot(&p.coords);
                pmin = pmin.min(x);
                pmax = pmax.max(x);
            }
            tmax < pmin || pmax < tmin
        };
        if self.faces.iter().any(|(n, _)| separated(n)) {
            return false;
        }
        if separated(&e[0].cross(&e[1])) {
            return false;
        }
        !e.iter()
            .any(|edge| self.edges.iter().any(|d| separated(&edge.cross(d))))
    }

    /// Whether the box may overlap the region: false only when the box lies wholly outside
    /// one face's plane (conservative, for culling; a tiny slack absorbs rounding).
    pub fn may_overlap_box(&self, min: [f32; 3], max: [f32; 3]) -> bool {
        self.faces.iter().all(|(n, d)| {
            // The box corner farthest along -n is the one nearest the inside.
            let nearest: f64 = (0..3)
                .map(|a| n[a] * f64::from(if n[a] >= 0.0 { min[a] } else { max[a] }))
                .sum();
            nearest <= d + 1e-9 * (d.abs() + 1.0)
        })
    }
}

/// The region of space a camera sees through a rectangle of its viewport, between the near
/// and far planes: what box select selects. Made by [`Camera::frustum`]; selected in with
/// [`Region::Frustum`].
///
/// [`Camera::frustum`]: crate::Camera::frustum
#[derive(Clone, Debug, PartialEq)]
pub struct Frustum {
    pub(crate) region: Polytope,
}

/// A region of space to select triangles in, with [`Bvh::triangles_in`] or
/// [`Scene::triangles_in`]: every triangle overlapping it counts, touching included (both are
/// closed sets), hidden or not. Each test is exact, in `f64` from the `f32` inputs.
///
/// ```
/// use meshray::{Bvh, Mesh};
/// use meshray::geometry::Aabb;
/// use meshray::selection::Region;
/// use nalgebra::Point3;
///
/// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
/// let everything = bvh.triangles_in(&Region::Box(bvh.mesh().bounds()));
/// assert_eq!(everything.len(), bvh.mesh().triangle_count());
/// let far_away = Region::Box(Aabb::new([100.0, 100.0, 100.0], [101.0, 101.0, 101.0]));
/// assert!(bvh.triangles_in(&far_away).is_empty());
///
/// // The sphere of the scene (centre (0, 1, 0), radius 1) is a hollow shell.
/// let centre = Point3::new(0.0, 1.0, 0.0);
/// assert!(bvh.triangles_in(&Region::Sphere { centre, radius: 0.5 }).is_empty());
/// assert!(!bvh.triangles_in(&Region::Sphere { centre, radius: 1.0 }).is_empty());
/// # Ok::<(), meshray::Error>(())
/// ```
///
/// [`Bvh::triangles_in`]: crate::Bvh::triangles_in
/// [`Scene::triangles_in`]: crate::Scene::triangles_in
#[derive(Clone, Debug, PartialEq)]
pub enum Region {
    /// The box (the separating axis test of Akenine-Möller, 2001). An empty box (`min > max`
    /// on an axis, or a NaN) holds nothing.
    Box(Aabb),
    /// The points within `radius` of `centre` (a triangle's closest point is compared). A NaN
    /// or infinite centre, or a NaN or negative radius, holds nothing.
    Sphere {
        /// The centre.
        centre: Point3<f32>,
        /// The radius.
        radius: f32,
    },
    /// What a camera sees through a rectangle of its viewport (box select; see
    /// [`Camera::frustum`](crate::Camera::frustum)).
    Frustum(Frustum),
}

impl Region {
    /// Whether the triangle `a, b, c` overlaps the region (touching counts): the test
    /// [`Bvh::triangles_in`](crate::Bvh::triangles_in) applies to every triangle.
    ///
    /// ```
    /// use meshray::geometry::Aabb;
    /// use meshray::selection::Region;
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let unit = Region::Box(Aabb::new([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]));
    /// // A big triangle slicing through the box with no corner inside it.
    /// let (a, b, c) = (Point3::new(-5.0, 0.5, -5.0), Point3::new(5.0, 0.5, -5.0), Point3::new(0.0, 0.5, 5.0));
    /// assert!(unit.overlaps_triangle(a, b, c));
    /// let up = Vector3::new(0.0, 2.0, 0.0);
    /// assert!(!unit.overlaps_triangle(a + up, b + up, c + up));
    /// assert!(!Region::Box(Aabb::EMPTY).overlaps_triangle(a, b, c)); // holds nothing
    ///
    /// // 0.5 above a triangle's face: a ball of radius 0.5 touches it, a smaller one does not.
    /// let (a, b, c) = ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
    /// let centre = Point3::new(0.25, 0.25, 0.5);
    /// assert!(Region::Sphere { centre, radius: 0.5 }.overlaps_triangle(a, b, c));
    /// assert!(!Region::Sphere { centre, radius: 0.49 }.overlaps_triangle(a, b, c));
    /// assert!(!Region::Sphere { centre, radius: -1.0 }.overlaps_triangle(a, b, c));
    /// ```
    pub fn overlaps_triangle(
        &self,
        a: impl Into<mint::Point3<f32>>,
        b: impl Into<mint::Point3<f32>>,
        c: impl Into<mint::Point3<f32>>,
    ) -> bool {
        let corner = |p: mint::Point3<f32>| Point3::from(p).cast::<f64>();
        let triangle = [corner(a.into()), corner(b.into()), corner(c.into())];
        self.selector().is_some_and(|s| s.overlaps(&triangle))
    }

    /// The region as the tree walks test it; `None` for one that holds nothing.
    pub(crate) fn selector(&self) -> Option<Selector<'_>> {
        match self {
            Region::Box(aabb) => {
                (!aabb.is_empty()).then(|| Selector::Box(*aabb, Polytope::from_box(aabb)))
            }
            Region::Sphere { centre, radius } => (centre.iter().all(|c| c.is_finite())
                && *radius >= 0.0)
                .then(|| Selector::Ball(centre.cast(), f64::from(*radius))),
            Region::Frustum(frustum) => Some(Selector::Frustum(&frustum.region)),
        }
    }
}

/// A [`Region`] as the tree walks need it, for a mesh and for a scene's instances alike:
/// whether a box may hold part of it (conservative, for culling) and whether a triangle, in
/// `f64`, overlaps it (exact).
pub(crate) enum Selector<'a> {
    /// A box, with its corners, faces and edges for the separating axis test.
    Box(Aabb, Polytope),
    /// A ball: centre and radius.
    Ball(Point3<f64>, f64),
    /// A frustum's planes and corners.
    Frustum(&'a Polytope),
}

impl Selector<'_> {
    pub(crate) fn may_hold(&self, min: [f32; 3], max: [f32; 3]) -> bool {
        match self {
            Selector::Box(aabb, _) => {
                (0..3).all(|a| min[a] <= aabb.max[a] && aabb.min[a] <= max[a])
            }
            Selector::Ball(centre, radius) => {
                // A hair of slack, so f64 rounding in the box distance never culls a touching
                // box.
                let limit = radius * radius * (1.0 + 1.0 / (1u64 << 40) as f64);
                box_distance_squared(centre, min, max) <= limit
            }
            Selector::Frustum(polytope) => polytope.may_overlap_box(min, max),
        }
    }

    pub(crate) fn overlaps(&self, triangle: &[Point3<f64>; 3]) -> bool {
        match self {
            Selector::Box(_, polytope) => polytope.overlaps_triangle64(triangle),
            Selector::Ball(centre, radius) => {
                let [a, b, c] = *triangle;
                nearest_on_triangle64(*centre, a, b, c).distance_squared <= radius * radius
            }
            Selector::Frustum(polytope) => polytope.overlaps_triangle64(triangle),
        }
    }
}
