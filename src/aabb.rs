//! Axis-aligned bounding boxes and the ray–box slab test.

use crate::Ray;
use nalgebra::{Point3, Vector3};

/// An axis-aligned box `[min, max]` (closed).
///
/// # The slab test
/// A box is the intersection of three slabs `min[a] <= x[a] <= max[a]`. Along the ray the slab
/// of axis `a` is crossed between `t0 = (min[a] - o[a]) / d[a]` and `t1 = (max[a] - o[a]) /
/// d[a]`, swapped when `d[a]` is negative. The ray is in the box where it is in all three slabs
/// and in its own range, so it hits when `max(t0s, t_min) <= min(t1s, t_max)`; that interval is
/// the answer (Kay & Kajiya 1986; Williams et al. 2005 for the sign trick). The division is a
/// multiplication by the ray's cached `1/d`, and the swap uses the cached sign, not a
/// comparison of `t0` and `t1`, so `-0.0` works like any negative number.
///
/// # Policy for the edge cases
/// - The box is **closed**: its faces belong to it. A ray that only touches a face, an edge
///   or a corner hits, with `t_near == t_far`.
/// - A direction component of `±0` gives `1/d = ±inf`. With the origin strictly inside that
///   slab the bounds are `-inf` and `+inf` (no constraint); strictly outside, both have the same
///   sign of infinity and the test misses.
/// - A ray lying in a face plane (`d[a] == 0` and `o[a] == min[a]` or `max[a]`) computes
///   `0 · inf = NaN` for that plane. Every update is written `if candidate > near { near =
///   candidate }` (and the mirror for `far`), which keeps the current bound when the candidate
///   is NaN: the plane adds no constraint, so a ray in a face plane is inside that slab and
///   touches the box (closed box, as above).
/// - An origin inside the box gives `t_near = t_min`.
/// - A ray with a NaN or an infinity in its origin or direction, a zero direction or a NaN
///   range ([`Ray::is_valid`] is false) never hits. An empty box (`min > max` on an axis, as
///   [`Aabb::EMPTY`]) never hits.
///
/// ```
/// use meshray::Ray;
/// use meshray::geometry::Aabb;
/// use nalgebra::{Point3, Vector3};
///
/// let aabb = Aabb::new(Point3::new(-1.0, -1.0, -1.0), Point3::new(1.0, 1.0, 1.0));
/// let ray = Ray::new(Point3::new(-5.0, 0.0, 0.0), Vector3::new(1.0, 0.0, 0.0));
/// assert_eq!(aabb.intersect_ray(&ray), Some((4.0, 6.0)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// The lowest corner.
    pub min: Point3<f32>,
    /// The highest corner.
    pub max: Point3<f32>,
}

impl Default for Aabb {
    fn default() -> Self {
        Aabb::EMPTY
    }
}

impl Aabb {
    /// The box `[min, max]`.
    ///
    /// ```
    /// # use meshray::geometry::Aabb; use nalgebra::Point3;
    /// let b = Aabb::new(Point3::new(0.0, 0.0, 0.0), Point3::new(2.0, 1.0, 1.0));
    /// assert_eq!(b.centroid(), Point3::new(1.0, 0.5, 0.5));
    /// assert!(Aabb::new(Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 1.0)).is_empty()); // min > max
    /// ```
    pub fn new(min: impl Into<mint::Point3<f32>>, max: impl Into<mint::Point3<f32>>) -> Aabb {
        Aabb {
            min: min.into().into(),
            max: max.into().into(),
        }
    }

    /// The empty box (`min = +inf`, `max = -inf`), the bounds of nothing (an empty scene's):
    /// it contains nothing and no ray hits it. Also `Aabb::default()`.
    ///
    /// ```
    /// # use meshray::geometry::Aabb;
    /// assert!(Aabb::EMPTY.is_empty() && Aabb::default() == Aabb::EMPTY);
    /// ```
    pub const EMPTY: Aabb = Aabb {
        min: Point3::new(f32::INFINITY, f32::INFINITY, f32::INFINITY),
        max: Point3::new(f32::NEG_INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY),
    };

    /// The smallest box holding all the points.
    pub(crate) fn from_points<'a>(points: impl IntoIterator<Item = &'a Point3<f32>>) -> Aabb {
        points.into_iter().fold(Aabb::EMPTY, |b, p| b.grow(p))
    }

    /// Whether `min > max` on some axis.
    ///
    /// ```
    /// # use meshray::geometry::Aabb; use nalgebra::Point3;
    /// let point = Aabb::new(Point3::new(1.0, 1.0, 1.0), Point3::new(1.0, 1.0, 1.0));
    /// assert!(!point.is_empty()); // closed: a single point is a box
    /// assert!(Aabb::EMPTY.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        (0..3).any(|a| !(self.min[a] <= self.max[a]))
    }

    /// This box grown to hold `p`.
    #[inline]
    pub(crate) fn grow(&self, p: &Point3<f32>) -> Aabb {
        self.union(&Aabb { min: *p, max: *p })
    }

    /// The smallest box holding both.
    #[inline]
    pub(crate) fn union(&self, other: &Aabb) -> Aabb {
        // Written out per component as plain comparisons, which compile to single min/max
        // instructions (the builder calls this for every primitive at every level).
        let lo = |a: f32, b: f32| if b < a { b } else { a };
        let hi = |a: f32, b: f32| if b > a { b } else { a };
        let (a, b) = (self, other);
        Aabb {
            min: Point3::new(
                lo(a.min.x, b.min.x),
                lo(a.min.y, b.min.y),
                lo(a.min.z, b.min.z),
            ),
            max: Point3::new(
                hi(a.max.x, b.max.x),
                hi(a.max.y, b.max.y),
                hi(a.max.z, b.max.z),
            ),
        }
    }

    /// `max - min`.
    ///
    /// ```
    /// # use meshray::geometry::Aabb; use nalgebra::Point3;
    /// let b = Aabb::new(Point3::new(1.0, 1.0, 1.0), Point3::new(3.0, 2.0, 1.5));
    /// assert_eq!(b.extent(), nalgebra::Vector3::new(2.0, 1.0, 0.5));
    /// ```
    pub fn extent(&self) -> Vector3<f32> {
        self.max - self.min
    }

    /// The centre.
    ///
    /// ```
    /// # use meshray::geometry::Aabb; use nalgebra::Point3;
    /// let b = Aabb::new(Point3::new(-1.0, 0.0, 2.0), Point3::new(1.0, 2.0, 4.0));
    /// assert_eq!(b.centroid(), Point3::new(0.0, 1.0, 3.0));
    /// ```
    pub fn centroid(&self) -> Point3<f32> {
        nalgebra::center(&self.min, &self.max)
    }

    /// Half the surface area, `xy + yz + zx` (0 for an empty box): the SAH only compares
    /// areas, so the factor 2 is left out.
    #[inline]
    pub(crate) fn half_area(&self) -> f32 {
        if self.is_empty() {
            return 0.0;
        }
        let e = self.extent();
        e.x * e.y + e.y * e.z + e.z * e.x
    }

    /// Whether `other` lies inside this box (an empty `other` lies in any box).
    ///
    /// ```
    /// # use meshray::geometry::Aabb; use nalgebra::Point3;
    /// let big = Aabb::new(Point3::origin(), Point3::new(4.0, 4.0, 4.0));
    /// let small = Aabb::new(Point3::new(1.0, 1.0, 1.0), Point3::new(2.0, 2.0, 4.0));
    /// assert!(big.contains(&small) && !small.contains(&big));
    /// assert!(small.contains(&Aabb::EMPTY));
    /// ```
    pub fn contains(&self, other: &Aabb) -> bool {
        other.is_empty()
            || (0..3).all(|a| self.min[a] <= other.min[a] && other.max[a] <= self.max[a])
    }

    /// The slab test: the interval `(t_near, t_far)` of the ray's range inside the box, or
    /// `None` when the ray misses it. See the [type docs](Aabb) for the policy on zero
    /// direction components, rays in a face plane, origins inside, and NaN.
    ///
    /// ```
    /// use meshray::Ray;
    /// use meshray::geometry::Aabb;
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let b = Aabb::new(Point3::origin(), Point3::new(1.0, 1.0, 1.0));
    /// // Starting inside: t_near is the ray's t_min.
    /// let inside = Ray::new(Point3::new(0.5, 0.5, 0.5), Vector3::x());
    /// assert_eq!(b.intersect_ray(&inside), Some((0.0, 0.5)));
    /// // Along a face plane (y = 1, direction y = 0): the closed box is touched.
    /// let along = Ray::new(Point3::new(-1.0, 1.0, 0.5), Vector3::x());
    /// assert_eq!(b.intersect_ray(&along), Some((1.0, 2.0)));
    /// // Parallel to a slab and outside it: a miss.
    /// assert_eq!(b.intersect_ray(&Ray::new(Point3::new(-1.0, 2.0, 0.5), Vector3::x())), None);
    /// ```
    #[inline]
    pub fn intersect_ray(&self, ray: &Ray) -> Option<(f32, f32)> {
        if !ray.is_valid() {
            return None;
        }
        let (near, far) = slab_interval(
            self.min.coords.as_ref(),
            self.max.coords.as_ref(),
            &RaySlabs::new(ray),
            ray.t_min(),
            ray.t_max(),
        );
        (near <= far).then_some((near, far))
    }
}

/// A ray's data laid out for the slab test in the traversal loop.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RaySlabs {
    pub origin: [f32; 3],
    pub inv_direction: [f32; 3],
    pub negative: [bool; 3],
}

impl RaySlabs {
    #[inline]
    pub fn new(ray: &Ray) -> RaySlabs {
        RaySlabs {
            origin: ray.origin().coords.into(),
            inv_direction: ray.inv_direction().into(),
            negative: ray.negative(),
        }
    }
}

/// The slab test on raw corners: `(t_near, t_far)`, a hit when `t_near <= t_far`.
///
/// NaN candidates (from `0 · inf`) never replace a bound, as the module docs explain.
#[inline(always)]
pub(crate) fn slab_interval(
    min: &[f32; 3],
    max: &[f32; 3],
    ray: &RaySlabs,
    t_min: f32,
    t_max: f32,
) -> (f32, f32) {
    let mut near = t_min;
    let mut far = t_max;
    for a in 0..3 {
        let (lo, hi) = if ray.negative[a] {
            (max[a], min[a])
        } else {
            (min[a], max[a])
        };
        let t0 = (lo - ray.origin[a]) * ray.inv_direction[a];
        let t1 = (hi - ray.origin[a]) * ray.inv_direction[a];
        if t0 > near {
            near = t0;
        }
        if t1 < far {
            far = t1;
        }
    }
    (near, far)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_box() -> Aabb {
        Aabb::new(Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 1.0, 1.0))
    }

    fn ray(o: [f32; 3], d: [f32; 3]) -> Ray {
        Ray::new(Point3::from(o), Vector3::from(d))
    }

    #[test]
    fn grows_unions_and_measures() {
        let p = Point3::new(1.0, 2.0, 3.0);
        assert_eq!(Aabb::EMPTY.grow(&p), Aabb::new(p, p));
        let b = Aabb::from_points(&[Point3::new(1.0, 5.0, 0.0), Point3::new(-1.0, 2.0, 3.0)]);
        assert_eq!(b, Aabb::new([-1.0, 2.0, 0.0], [1.0, 5.0, 3.0]));
        assert!(Aabb::from_points(&[]).is_empty());
        let grown = unit_box().grow(&Point3::new(3.0, 0.5, 0.5));
        assert_eq!(grown.max, Point3::new(3.0, 1.0, 1.0));
        let far = Aabb::new([2.0, 0.0, 0.0], [3.0, 1.0, 1.0]);
        let both = unit_box().union(&far);
        assert!(both.contains(&unit_box()) && both.contains(&far));
        assert_eq!(unit_box().union(&Aabb::EMPTY), unit_box());
        let b = Aabb::new([0.0, 0.0, 0.0], [1.0, 2.0, 3.0]);
        assert_eq!(b.half_area(), 1.0 * 2.0 + 2.0 * 3.0 + 3.0 * 1.0);
        assert_eq!(Aabb::EMPTY.half_area(), 0.0);
    }

    #[test]
    fn hits_from_every_side() {
        let b = unit_box();
        for a in 0..3 {
            for s in [-1.0f32, 1.0] {
                let mut o = [0.5; 3];
                o[a] = 0.5 - 2.0 * s;
                let mut d = [0.0; 3];
                d[a] = s;
                assert_eq!(
                    b.intersect_ray(&ray(o, d)),
                    Some((1.5, 2.5)),
                    "axis {a} sign {s}"
                );
                // pointing away
                d[a] = -s;
                assert_eq!(b.intersect_ray(&ray(o, d)), None);
            }
        }
    }

    #[test]
    fn signed_zero_components() {
        let b = unit_box();
        for z in [0.0f32, -0.0] {
            // parallel to x, inside the y and z slabs: hits
            assert!(
                b.intersect_ray(&ray([-1.0, 0.5, 0.5], [1.0, z, z]))
                    .is_some()
            );
            // parallel to x but outside the y slab: misses
            assert!(
                b.intersect_ray(&ray([-1.0, 1.5, 0.5], [1.0, z, z]))
                    .is_none()
            );
            assert!(
                b.intersect_ray(&ray([-1.0, -0.5, 0.5], [1.0, z, -z]))
                    .is_none()
            );
        }
    }

    #[test]
    fn origin_inside_clips_to_t_min() {
        let b = unit_box();
        let r = ray([0.5, 0.5, 0.5], [1.0, 0.0, 0.0]);
        assert_eq!(b.intersect_ray(&r), Some((0.0, 0.5)));
        let r = r.with_t_range(-10.0, 10.0);
        assert_eq!(b.intersect_ray(&r), Some((-0.5, 0.5)));
    }

    #[test]
    fn origin_on_a_face() {
        let b = unit_box();
        // on the min-x face, going in
        assert_eq!(
            b.intersect_ray(&ray([0.0, 0.5, 0.5], [1.0, 0.0, 0.0])),
            Some((0.0, 1.0))
        );
        // on the min-x face, going out: touches at t = 0 (closed box)
        assert_eq!(
            b.intersect_ray(&ray([0.0, 0.5, 0.5], [-1.0, 0.0, 0.0])),
            Some((0.0, 0.0))
        );
    }

    #[test]
    fn ray_in_a_face_plane_touches() {
        let b = unit_box();
        for z in [0.0f32, -0.0] {
            for plane in [0.0f32, 1.0] {
                let r = ray([-1.0, plane, 0.5], [1.0, z, 0.0]);
                assert_eq!(
                    b.intersect_ray(&r),
                    Some((1.0, 2.0)),
                    "plane y={plane}, dy={z}"
                );
            }
        }
        // along an edge
        assert_eq!(
            b.intersect_ray(&ray([-1.0, 1.0, 1.0], [1.0, 0.0, -0.0])),
            Some((1.0, 2.0))
        );
        // in the plane but beside the face
        assert_eq!(
            b.intersect_ray(&ray([-1.0, 1.0, 2.0], [1.0, 0.0, 0.0])),
            None
        );
    }

    #[test]
    fn touching_a_corner() {
        let b = unit_box();
        // passes through the corner (1, 1, 1) at t = 1 and nowhere else
        let r = ray([2.0, 0.0, 2.0], [-1.0, 1.0, -1.0]);
        assert_eq!(b.intersect_ray(&r), Some((1.0, 1.0)));
        // along the diagonal of the top face (in its plane): inside from t = 1 to 2
        let r = ray([2.0, 2.0, 1.0], [-1.0, -1.0, 0.0]);
        assert_eq!(b.intersect_ray(&r), Some((1.0, 2.0)));
    }

    #[test]
    fn range_clips() {
        let b = unit_box();
        let r = ray([-1.0, 0.5, 0.5], [1.0, 0.0, 0.0]);
        assert_eq!(b.intersect_ray(&r.with_t_range(0.0, 0.5)), None);
        assert_eq!(b.intersect_ray(&r.with_t_range(2.5, 9.0)), None);
        assert_eq!(
            b.intersect_ray(&r.with_t_range(1.5, 1.75)),
            Some((1.5, 1.75))
        );
    }

    #[test]
    fn nan_and_degenerate_rays_never_hit() {
        let b = unit_box();
        let nan = f32::NAN;
        for r in [
            ray([nan, 0.5, 0.5], [1.0, 0.0, 0.0]),
            ray([-1.0, 0.5, 0.5], [nan, 0.0, 0.0]),
            ray([-1.0, 0.5, 0.5], [1.0, nan, 0.0]),
            ray([0.5, 0.5, 0.5], [0.0, 0.0, 0.0]),
            ray([0.5, 0.5, 0.5], [f32::INFINITY, 0.0, 0.0]),
            ray([0.5, 0.5, 0.5], [1.0, 0.0, 0.0]).with_t_range(nan, 1.0),
            ray([0.5, 0.5, 0.5], [1.0, 0.0, 0.0]).with_t_range(0.0, nan),
            ray([0.5, 0.5, 0.5], [1.0, 0.0, 0.0]).with_t_range(1.0, 0.0),
        ] {
            assert_eq!(b.intersect_ray(&r), None, "{r:?}");
        }
    }

    #[test]
    fn empty_box_never_hits() {
        let r = ray([-1.0, 0.0, 0.0], [1.0, 0.0, 0.0]);
        assert_eq!(Aabb::EMPTY.intersect_ray(&r), None);
        assert!(Aabb::EMPTY.is_empty());
        assert_eq!(Aabb::EMPTY.half_area(), 0.0);
    }

    #[test]
    fn flat_box_is_hit_through_its_plane() {
        let b = Aabb::new(Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 1.0));
        assert_eq!(
            b.intersect_ray(&ray([0.5, 1.0, 0.5], [0.0, -1.0, 0.0])),
            Some((1.0, 1.0))
        );
    }

    #[test]
    fn grow_union_area() {
        let b = Aabb::from_points(&[Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 2.0, 3.0)]);
        assert_eq!(b.half_area(), 2.0 + 6.0 + 3.0);
        let c = b.union(&Aabb::new(
            Point3::new(-1.0, 0.0, 0.0),
            Point3::new(0.0, 0.0, 0.0),
        ));
        assert!(c.contains(&b));
        assert!(!b.contains(&c));
        assert_eq!(c.centroid(), Point3::new(0.0, 1.0, 1.5));
    }
}
