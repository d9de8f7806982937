//! Regions of space and the exact triangle tests behind `Bvh::triangles_in_box`,
//! `triangles_in_sphere` and `triangles_in_frustum`: boxes, balls and frusta (a frustum is
//! made from a camera's screen rectangle in `picking`, the layer above).
//!
//! A triangle overlaps a convex region when no separating axis exists (the separating axis
//! theorem; for a box, Akenine-Möller 2001): the region's face normals, the triangle's
//! normal, and the cross products of the triangle's edges with the region's edge
//! directions. Touching counts as overlapping (both are closed). Everything runs in `f64`
//! from the `f32` inputs.

use crate::Aabb;
use crate::closest_point::{box_distance_squared, nearest_on_triangle, nearest_on_triangle64};
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

    /// Whether the triangle overlaps the region (closed sets).
    pub fn overlaps_triangle(&self, tri: &[Point3<f32>; 3]) -> bool {
        self.overlaps_triangle64(&tri.map(|p| p.cast::<f64>()))
    }

    /// [`overlaps_triangle`](Polytope::overlaps_triangle) for a triangle in `f64` (a scene's,
    /// moved to world space).
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
/// and far planes: what box select selects.
///
/// ```
/// use meshray::{Bvh, Frustum, Mesh};
/// use nalgebra::{Isometry3, Perspective3, Point2, Point3, Vector2, Vector3};
///
/// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
/// let view = Isometry3::look_at_rh(&Point3::new(0.0, 1.0, 6.0), &Point3::new(0.0, 1.0, 0.0), &Vector3::y());
/// let projection = Perspective3::new(800.0 / 600.0, 0.8, 0.1, 100.0);
/// let (view, projection) = (view.to_homogeneous(), projection.to_homogeneous());
/// let viewport = Vector2::new(800.0, 600.0);
/// // A rectangle around the middle of the screen, where the sphere is.
/// let frustum = Frustum::from_screen_rect(view, projection, viewport,
///     Point2::new(350.0, 250.0), Point2::new(450.0, 350.0))?;
/// let all = bvh.triangles_in_frustum(&frustum);
/// let visible = bvh.visible_triangles(view, projection, viewport,
///     Point2::new(350.0, 250.0), Point2::new(450.0, 350.0), 1, &Default::default())?;
/// assert!(!visible.is_empty() && visible.len() < all.len());
/// assert!(visible.iter().all(|t| all.contains(t)));
/// # Ok::<(), meshray::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Frustum {
    pub(crate) region: Polytope,
}

impl Frustum {
    /// Whether the triangle `a, b, c` overlaps the frustum (touching counts).
    ///
    /// ```
    /// use meshray::Frustum;
    /// # use nalgebra::{Isometry3, Perspective3, Point2, Point3, Vector2, Vector3};
    /// # let view = Isometry3::look_at_rh(&Point3::new(0.0, 1.0, 6.0), &Point3::new(0.0, 1.0, 0.0), &Vector3::y()).to_homogeneous();
    /// # let projection = Perspective3::new(800.0 / 600.0, 0.8, 0.1, 100.0).to_homogeneous();
    /// # let viewport = Vector2::new(800.0, 600.0);
    ///
    /// let frustum = Frustum::from_screen_rect(view, projection, viewport,
    ///     Point2::new(350.0, 250.0), Point2::new(450.0, 350.0))?;
    /// // The camera at (0, 1, 6) looks at (0, 1, 0): a triangle there is inside, one behind the
    /// // camera is not.
    /// let (a, b, c) = (Point3::new(-0.1, 1.0, 0.0), Point3::new(0.1, 1.0, 0.0), Point3::new(0.0, 1.1, 0.0));
    /// assert!(frustum.overlaps_triangle(&a, &b, &c));
    /// let behind = [a, b, c].map(|p| p + Vector3::new(0.0, 0.0, 10.0));
    /// assert!(!frustum.overlaps_triangle(&behind[0], &behind[1], &behind[2]));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn overlaps_triangle(&self, a: &Point3<f32>, b: &Point3<f32>, c: &Point3<f32>) -> bool {
        self.region.overlaps_triangle(&[*a, *b, *c])
    }
}

/// A selection region as the tree walks need it, for a mesh and for a scene's instances
/// alike: whether a box may hold part of it (conservative, for culling) and whether a
/// triangle, in `f64`, overlaps it (exact).
pub(crate) trait Region {
    fn may_hold(&self, min: [f32; 3], max: [f32; 3]) -> bool;
    fn overlaps(&self, triangle: &[Point3<f64>; 3]) -> bool;
}

/// A box as a [`Region`].
pub(crate) struct BoxRegion {
    aabb: Aabb,
    polytope: Polytope,
}

impl BoxRegion {
    /// `None` for an empty box or one with a NaN, which selects nothing.
    pub fn new(aabb: &Aabb) -> Option<BoxRegion> {
        (0..3)
            .all(|a| aabb.min[a] <= aabb.max[a])
            .then(|| BoxRegion {
                aabb: *aabb,
                polytope: Polytope::from_box(aabb),
            })
    }
}

impl Region for BoxRegion {
    fn may_hold(&self, min: [f32; 3], max: [f32; 3]) -> bool {
        (0..3).all(|a| min[a] <= self.aabb.max[a] && self.aabb.min[a] <= max[a])
    }

    fn overlaps(&self, triangle: &[Point3<f64>; 3]) -> bool {
        self.polytope.overlaps_triangle64(triangle)
    }
}

/// A ball (the points within `radius` of `centre`) as a [`Region`].
pub(crate) struct Ball {
    centre: Point3<f64>,
    radius: f64,
}

impl Ball {
    /// `None` for a NaN or infinite centre or a NaN or negative radius, which select nothing.
    pub fn new(centre: &Point3<f32>, radius: f32) -> Option<Ball> {
        (centre.iter().all(|c| c.is_finite()) && radius >= 0.0).then(|| Ball {
            centre: centre.cast(),
            radius: f64::from(radius),
        })
    }
}

impl Region for Ball {
    fn may_hold(&self, min: [f32; 3], max: [f32; 3]) -> bool {
        // A hair of slack, so f64 rounding in the box distance never culls a touching box.
        let limit = self.radius * self.radius * (1.0 + 1.0 / (1u64 << 40) as f64);
        box_distance_squared(&self.centre, min, max) <= limit
    }

    fn overlaps(&self, [a, b, c]: &[Point3<f64>; 3]) -> bool {
        nearest_on_triangle64(self.centre, *a, *b, *c).distance_squared <= self.radius * self.radius
    }
}

impl Region for Frustum {
    fn may_hold(&self, min: [f32; 3], max: [f32; 3]) -> bool {
        self.region.may_overlap_box(min, max)
    }

    fn overlaps(&self, triangle: &[Point3<f64>; 3]) -> bool {
        self.region.overlaps_triangle64(triangle)
    }
}

/// Whether the triangle `a, b, c` overlaps the box (closed sets; the separating axis test
/// of Akenine-Möller (2001) in `f64`). What [`Bvh::triangles_in_box`](crate::Bvh::triangles_in_box) tests.
///
/// An empty box (`min > max` on an axis, or a NaN) overlaps nothing, as in
/// [`Bvh::triangles_in_box`](crate::Bvh::triangles_in_box).
///
/// ```
/// use meshray::{triangle_overlaps_box, Aabb};
/// use nalgebra::Point3;
///
/// let unit = Aabb::new(Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 1.0, 1.0));
/// // A big triangle slicing through the box with no corner inside it.
/// let (a, b, c) = (Point3::new(-5.0, 0.5, -5.0), Point3::new(5.0, 0.5, -5.0), Point3::new(0.0, 0.5, 5.0));
/// assert!(triangle_overlaps_box(&a, &b, &c, &unit));
/// let lifted = [a, b, c].map(|p| p + nalgebra::Vector3::new(0.0, 2.0, 0.0));
/// assert!(!triangle_overlaps_box(&lifted[0], &lifted[1], &lifted[2], &unit));
/// assert!(!triangle_overlaps_box(&a, &b, &c, &Aabb::EMPTY)); // an empty box holds nothing
/// ```
pub fn triangle_overlaps_box(
    a: &Point3<f32>,
    b: &Point3<f32>,
    c: &Point3<f32>,
    aabb: &Aabb,
) -> bool {
    (0..3).all(|k| aabb.min[k] <= aabb.max[k])
        && Polytope::from_box(aabb).overlaps_triangle(&[*a, *b, *c])
}

/// Whether the triangle `a, b, c` comes within `radius` of `centre` (its closest point, in
/// `f64`). What [`Bvh::triangles_in_sphere`](crate::Bvh::triangles_in_sphere) tests.
///
/// A negative or NaN radius (or a NaN centre) overlaps nothing, as in
/// [`Bvh::triangles_in_sphere`](crate::Bvh::triangles_in_sphere).
///
/// ```
/// use meshray::triangle_overlaps_sphere;
/// use nalgebra::Point3;
///
/// let (a, b, c) = (Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0));
/// // 0.5 above the triangle's face: a radius of 0.5 touches it, a smaller one does not.
/// let centre = Point3::new(0.25, 0.25, 0.5);
/// assert!(triangle_overlaps_sphere(&a, &b, &c, &centre, 0.5));
/// assert!(!triangle_overlaps_sphere(&a, &b, &c, &centre, 0.49));
/// assert!(!triangle_overlaps_sphere(&a, &b, &c, &centre, -1.0)); // nor does a negative one
/// ```
pub fn triangle_overlaps_sphere(
    a: &Point3<f32>,
    b: &Point3<f32>,
    c: &Point3<f32>,
    centre: &Point3<f32>,
    radius: f32,
) -> bool {
    let r = f64::from(radius);
    r >= 0.0 && nearest_on_triangle(centre, a, b, c).distance_squared <= r * r
}
