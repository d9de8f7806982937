//! 2D ray queries: ray–segment and ray–rectangle.
//!
//! These are the planar relatives of the 3D ray queries, for picking in 2D views,
//! sprite/tile maps and cross-sections. Everything is `f32`, the ray direction is not
//! normalized and `t` is the ray parameter, so a hit point is always `origin + t·direction`.
//!
//! # Ray–segment (Cramer's rule)
//!
//! A ray point `o + t·d` meets a segment point `a + s·e`, with `e = b − a`, when
//!
//! ```text
//! [ d  −e ] · (t, s)ᵀ = w,        w = a − o.
//! ```
//!
//! With `cross(u, v) = u.x·v.y − u.y·v.x` the determinants are
//!
//! ```text
//! D  = det[d, −e] = cross(e, d)
//! Dt = det[w, −e] = cross(e, w)        t = Dt / D
//! Ds = det[d,  w] = cross(d, w)        s = Ds / D
//! ```
//!
//! The crossing counts when `s ∈ [0, 1]` and `t ∈ [t_min, t_max]`. Both tests are made on
//! the numerators against `D` (after moving the sign of `D` onto them), so a ray that misses
//! never divides, and the quotients are only formed for the hit that is returned.
//!
//! # Ray–rectangle (slab test)
//!
//! On axis `i` the ray is inside the slab `[min_i, max_i]` for `t` between
//! `(min_i − o_i)/d_i` and `(max_i − o_i)/d_i`. The ray meets the rectangle on the
//! intersection of both slab intervals with `[t_min, t_max]`; it hits when that interval is
//! non-empty. The quotients are computed as products with the cached `1/d_i`, which is `±∞`
//! for a `±0` component; see [`Rect::intersect_ray`] for how the resulting infinities and
//! `0·∞ = NaN` are handled.

use nalgebra::{Point2, Vector2};

/// A 2D ray: `origin + t·direction` for `t` in `[t_min, t_max]`.
///
/// The direction is not normalized and `t` is parametric, so `t` values are comparable
/// between queries on the same ray, not between rays.
///
/// ```
/// use meshray::plane::Ray2;
/// use nalgebra::{Point2, Vector2};
///
/// let ray = Ray2::new(Point2::new(1.0, 2.0), Vector2::new(2.0, 0.0));
/// assert_eq!(ray.at(1.5), Point2::new(4.0, 2.0));
/// assert!(ray.is_valid());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray2 {
    /// Where the ray starts, at `t = 0`.
    pub origin: Point2<f32>,
    /// The direction, as given (not normalized).
    pub direction: Vector2<f32>,
    /// The start of the range.
    pub t_min: f32,
    /// The end of the range (may be `+∞`).
    pub t_max: f32,
}

impl Ray2 {
    /// A ray over `t ∈ [0, +∞)`. Takes anything that converts into `mint`'s types.
    ///
    /// ```
    /// # use meshray::plane::Ray2; use nalgebra::{Point2, Vector2};
    /// let ray = Ray2::new(Point2::new(0.0, 1.0), Vector2::new(3.0, 0.0));
    /// assert_eq!((ray.t_min, ray.t_max), (0.0, f32::INFINITY));
    /// assert_eq!(ray.origin, ray.at(0.0));
    /// ```
    pub fn new(
        origin: impl Into<mint::Point2<f32>>,
        direction: impl Into<mint::Vector2<f32>>,
    ) -> Ray2 {
        Ray2::with_range(origin, direction, 0.0, f32::INFINITY)
    }

    /// A ray restricted to `t ∈ [t_min, t_max]`, e.g. a segment-shaped probe or a ray that
    /// should ignore hits beyond the closest one found so far.
    ///
    /// Nothing is validated here so construction never panics; queries reject rays for
    /// which [`Ray2::is_valid`] is false.
    ///
    /// ```
    /// use meshray::plane::{Ray2, ray_segment};
    /// use nalgebra::{Point2, Vector2};
    ///
    /// let probe = Ray2::with_range(Point2::new(0.0, 0.0), Vector2::new(1.0, 0.0), 0.0, 2.0);
    /// // A wall at x = 3 lies beyond t_max = 2.
    /// assert!(ray_segment(&probe, Point2::new(3.0, -1.0), Point2::new(3.0, 1.0)).is_none());
    /// assert!(!Ray2::with_range(Point2::origin(), Vector2::x(), 1.0, f32::NAN).is_valid());
    /// ```
    pub fn with_range(
        origin: impl Into<mint::Point2<f32>>,
        direction: impl Into<mint::Vector2<f32>>,
        t_min: f32,
        t_max: f32,
    ) -> Ray2 {
        Ray2 {
            origin: origin.into().into(),
            direction: direction.into().into(),
            t_min,
            t_max,
        }
    }

    /// The point `origin + t·direction`.
    ///
    /// ```
    /// # use meshray::plane::Ray2; use nalgebra::{Point2, Vector2};
    /// let ray = Ray2::new(Point2::new(1.0, 1.0), Vector2::new(0.0, -2.0));
    /// assert_eq!(ray.at(0.5), Point2::new(1.0, 0.0));
    /// ```
    pub fn at(&self, t: f32) -> Point2<f32> {
        self.origin + self.direction * t
    }

    /// Whether queries can give a meaningful answer: origin and direction finite, direction
    /// non-zero (`-0.0` counts as zero), and `t_min <= t_max` with neither NaN.
    /// `t_max` (and `t_min`) may be infinite.
    ///
    /// ```
    /// use meshray::plane::{Ray2, Rect};
    /// use nalgebra::{Point2, Vector2};
    ///
    /// let still = Ray2::new(Point2::origin(), Vector2::new(-0.0, 0.0));
    /// assert!(!still.is_valid());
    /// let rect = Rect::new(Point2::new(-1.0, -1.0), Point2::new(1.0, 1.0));
    /// assert!(rect.intersect_ray(&still).is_none()); // "no hit", never a panic
    /// ```
    pub fn is_valid(&self) -> bool {
        let finite = self.origin.iter().all(|c| c.is_finite())
            && self.direction.iter().all(|c| c.is_finite());
        let nonzero = self.direction.x != 0.0 || self.direction.y != 0.0;
        let range = !self.t_min.is_nan() && !self.t_max.is_nan() && self.t_min <= self.t_max;
        finite && nonzero && range
    }
}

/// Where a ray crosses a segment `a → b`.
///
/// ```
/// use meshray::plane::{ray_segment, Ray2};
/// use nalgebra::{Point2, Vector2};
///
/// let ray = Ray2::new(Point2::new(0.0, 0.0), Vector2::new(1.0, 1.0));
/// let hit = ray_segment(&ray, Point2::new(0.0, 2.0), Point2::new(2.0, 0.0)).unwrap();
/// assert_eq!((hit.t, hit.s, hit.point), (1.0, 0.5, Point2::new(1.0, 1.0)));
/// assert_eq!(hit.point, ray.at(hit.t));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegmentHit {
    /// Ray parameter of the crossing, within the ray's `[t_min, t_max]`.
    pub t: f32,
    /// Segment parameter in `[0, 1]`: 0 at `a`, 1 at `b`.
    pub s: f32,
    /// The crossing point, computed on the segment as `a + s·(b − a)`.
    pub point: Point2<f32>,
}

/// Intersects a ray with the closed segment `a → b` using Cramer's rule (see the module docs).
///
/// The policy:
/// - Endpoints belong to the segment: `s == 0` and `s == 1` are hits, as are
///   `t == t_min` and `t == t_max`.
/// - A ray parallel to the segment (`D == 0`) returns `None`, **including** the collinear
///   case where the ray runs along the segment: there is no single crossing point to report.
/// - A degenerate segment (`a == b`) returns `None`: it has no direction to cross.
/// - An invalid ray ([`Ray2::is_valid`]), a non-finite endpoint or an arithmetic overflow
///   returns `None`; this function never panics.
///
/// The range tests compare the numerators `Dt`, `Ds` against `D` before dividing:
/// `s ∈ [0, 1]` is `0 <= Ds·sign(D) <= |D|`, and `t ∈ [t_min, t_max]` is
/// `t_min·|D| <= Dt·sign(D) <= t_max·|D|`, evaluated in `f64` where the product of two `f32`
/// is exact. The returned `t` and `s` are `Dt / D` and `Ds / D`, which rounding keeps
/// inside `[t_min, t_max]` and `[0, 1]`.
///
/// ```
/// use meshray::plane::{Ray2, ray_segment};
/// use nalgebra::{Point2, Vector2};
///
/// let ray = Ray2::new(Point2::new(0.0, 0.0), Vector2::new(2.0, 0.0));
/// let hit = ray_segment(&ray, Point2::new(4.0, -1.0), Point2::new(4.0, 3.0)).unwrap();
/// assert_eq!(hit.t, 2.0); // parametric: 2 · |direction| = 4 units
/// assert_eq!(hit.s, 0.25);
/// assert_eq!(hit.point, Point2::new(4.0, 0.0));
///
/// // Parallel segments never hit, even when collinear with the ray.
/// assert!(ray_segment(&ray, Point2::new(1.0, 0.0), Point2::new(3.0, 0.0)).is_none());
/// ```
pub fn ray_segment(
    ray: &Ray2,
    a: impl Into<mint::Point2<f32>>,
    b: impl Into<mint::Point2<f32>>,
) -> Option<SegmentHit> {
    let (a, b): (Point2<f32>, Point2<f32>) = (a.into().into(), b.into().into());
    let finite = |p: Point2<f32>| p.x.is_finite() && p.y.is_finite();
    if !ray.is_valid() || !finite(a) || !finite(b) || a == b {
        return None;
    }
    let d = ray.direction;
    let e = b - a;
    let w = a - ray.origin;
    let det = cross(e, d);
    let det_t = cross(e, w);
    let det_s = cross(d, w);
    // D == 0: parallel or collinear. Non-finite values come from overflow and mean nothing.
    if det == 0.0 || !det.is_finite() || !det_t.is_finite() || !det_s.is_finite() {
        return None;
    }
    // Carry the sign of D onto the numerators (negation is exact), so each range test is a
    // plain comparison against |D| > 0.
    let (abs_det, num_t, num_s) = if det > 0.0 {
        (det, det_t, det_s)
    } else {
        (-det, -det_t, -det_s)
    };
    if num_s < 0.0 || num_s > abs_det {
        return None;
    }
    // t_min·|D| is exact in f64, so this is exactly `t_min <= Dt/D <= t_max`; the quotient
    // rounded to f32 then cannot leave the range because t_min and t_max are f32 values.
    let (num_t64, abs_det64) = (f64::from(num_t), f64::from(abs_det));
    if num_t64 < f64::from(ray.t_min) * abs_det64 || num_t64 > f64::from(ray.t_max) * abs_det64 {
        return None;
    }
    let t = num_t / abs_det;
    let s = num_s / abs_det;
    Some(SegmentHit {
        t,
        s,
        point: a + e * s,
    })
}

/// `u.x·v.y − u.y·v.x`, the determinant of the 2×2 matrix with columns `u`, `v`.
fn cross(u: Vector2<f32>, v: Vector2<f32>) -> f32 {
    u.x * v.y - u.y * v.x
}

/// An axis-aligned rectangle. It is closed: its boundary belongs to it.
///
/// A rectangle with `min > max` on an axis is empty; one with `min == max` on an axis is a
/// segment (or a point) and can still be hit.
///
/// ```
/// use meshray::plane::{Ray2, Rect};
/// use nalgebra::{Point2, Vector2};
///
/// let tile = Rect { min: Point2::new(0.0, 0.0), max: Point2::new(1.0, 1.0) };
/// assert_eq!(tile, Rect::new(Point2::new(0.0, 0.0), Point2::new(1.0, 1.0)));
/// // A ray that passes exactly through a corner touches the closed rectangle.
/// let corner = Ray2::new(Point2::new(2.0, 0.0), Vector2::new(-1.0, 1.0));
/// let hit = tile.intersect_ray(&corner).unwrap();
/// assert_eq!((hit.t_near, hit.t_far), (1.0, 1.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    /// Lower-left corner (smallest coordinates).
    pub min: Point2<f32>,
    /// Upper-right corner (largest coordinates).
    pub max: Point2<f32>,
}

/// Entry and exit of a ray through a rectangle, clipped to the ray's `[t_min, t_max]`.
///
/// ```
/// use meshray::plane::{Ray2, Rect};
/// use nalgebra::{Point2, Vector2};
///
/// let rect = Rect::new(Point2::new(-1.0, -1.0), Point2::new(1.0, 1.0));
/// // Starting inside: t_near is the ray's start, `near` its origin.
/// let ray = Ray2::new(Point2::new(0.0, 0.0), Vector2::new(2.0, 0.0));
/// let hit = rect.intersect_ray(&ray).unwrap();
/// assert_eq!((hit.t_near, hit.t_far), (0.0, 0.5));
/// assert_eq!((hit.near, hit.far), (Point2::new(0.0, 0.0), Point2::new(1.0, 0.0)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RectHit {
    /// Ray parameter where the ray enters the rectangle (or `t_min` if it starts inside).
    pub t_near: f32,
    /// Ray parameter where the ray leaves the rectangle (or `t_max` if it ends inside).
    pub t_far: f32,
    /// `ray.at(t_near)`.
    pub near: Point2<f32>,
    /// `ray.at(t_far)`.
    pub far: Point2<f32>,
}

impl Rect {
    /// The rectangle spanning `min` to `max`. Not validated: an inverted rectangle is
    /// simply empty.
    ///
    /// ```
    /// use meshray::plane::{Ray2, Rect};
    /// use nalgebra::{Point2, Vector2};
    ///
    /// let ray = Ray2::new(Point2::new(0.0, 0.5), Vector2::x());
    /// assert!(Rect::new(Point2::new(1.0, 0.0), Point2::new(2.0, 1.0)).intersect_ray(&ray).is_some());
    /// // Corners swapped: an empty rectangle, never hit.
    /// assert!(Rect::new(Point2::new(2.0, 1.0), Point2::new(1.0, 0.0)).intersect_ray(&ray).is_none());
    /// ```
    pub fn new(min: impl Into<mint::Point2<f32>>, max: impl Into<mint::Point2<f32>>) -> Rect {
        Rect {
            min: min.into().into(),
            max: max.into().into(),
        }
    }

    /// Slab test: where the ray enters and leaves the rectangle within `[t_min, t_max]`.
    ///
    /// Per axis `t0 = (min − o)·(1/d)` and `t1 = (max − o)·(1/d)` are ordered by the sign of
    /// `1/d`, and the ray hits when `max(t_min, t0s) <= min(t_max, t1s)`.
    ///
    /// The policy:
    /// - The rectangle is closed: grazing an edge or passing exactly through a corner is a
    ///   hit (with `t_near == t_far` for a single touching point).
    /// - A direction component of `+0.0` or `-0.0` makes `1/d = ±∞`; such a ray parallel to
    ///   an axis hits when its origin lies within that slab (boundary included) and misses
    ///   otherwise.
    /// - A ray lying in an edge's line (`d_i == 0` and `o_i == min_i` or `max_i`) gives
    ///   `0·∞ = NaN` for that slab bound. The NaN is ignored (it fails every comparison), so
    ///   that axis does not restrict `t`: the ray runs along the closed boundary and hits.
    /// - If the origin is inside at `t_min`, `t_near == t_min`, so `near` is the ray's start
    ///   point `ray.at(t_min)` (the origin itself for rays from [`Ray2::new`]).
    /// - An invalid ray ([`Ray2::is_valid`]) never hits, so a NaN anywhere in the ray gives
    ///   `None`, never a panic.
    /// - An empty rectangle (`min > max` on an axis) never hits; neither does one with NaN or
    ///   infinite bounds. A degenerate, zero-width rectangle is a segment and can be hit.
    ///
    /// ```
    /// use meshray::plane::{Ray2, Rect};
    /// use nalgebra::{Point2, Vector2};
    ///
    /// let rect = Rect::new(Point2::new(1.0, 0.0), Point2::new(3.0, 2.0));
    /// let ray = Ray2::new(Point2::new(0.0, 1.0), Vector2::new(1.0, 0.0));
    /// let hit = rect.intersect_ray(&ray).unwrap();
    /// assert_eq!((hit.t_near, hit.t_far), (1.0, 3.0));
    /// assert_eq!(hit.near, Point2::new(1.0, 1.0));
    ///
    /// // A ray running along the top edge touches the closed rectangle.
    /// let along_edge = Ray2::new(Point2::new(0.0, 2.0), Vector2::new(1.0, 0.0));
    /// assert!(rect.intersect_ray(&along_edge).is_some());
    /// ```
    pub fn intersect_ray(&self, ray: &Ray2) -> Option<RectHit> {
        if !ray.is_valid() || !self.is_well_formed() {
            return None;
        }
        let mut t_near = ray.t_min;
        let mut t_far = ray.t_max;
        for axis in 0..2 {
            let origin = ray.origin[axis];
            let inv = 1.0 / ray.direction[axis];
            let t0 = (self.min[axis] - origin) * inv;
            let t1 = (self.max[axis] - origin) * inv;
            // Order by the sign of 1/d, not by comparing t0 and t1: either may be NaN.
            let (enter, exit) = if inv.is_sign_negative() {
                (t1, t0)
            } else {
                (t0, t1)
            };
            // Written so that a NaN bound (ray in an edge line) fails the comparison and
            // leaves the interval unchanged; t_near and t_far themselves never become NaN.
            if enter > t_near {
                t_near = enter;
            }
            if exit < t_far {
                t_far = exit;
            }
        }
        (t_near <= t_far).then(|| RectHit {
            t_near,
            t_far,
            near: ray.at(t_near),
            far: ray.at(t_far),
        })
    }

    /// Finite bounds with `min <= max` per axis (false for any NaN).
    fn is_well_formed(&self) -> bool {
        let finite = self
            .min
            .iter()
            .chain(self.max.iter())
            .all(|c| c.is_finite());
        finite && self.min.x <= self.max.x && self.min.y <= self.max.y
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Rng;

    fn p(x: f32, y: f32) -> Point2<f32> {
        Point2::new(x, y)
    }

    fn v(x: f32, y: f32) -> Vector2<f32> {
        Vector2::new(x, y)
    }

    fn unit_rect() -> Rect {
        Rect::new(p(0.0, 0.0), p(1.0, 1.0))
    }

    fn hit_rect(rect: &Rect, ray: &Ray2) -> RectHit {
        rect.intersect_ray(ray)
            .unwrap_or_else(|| panic!("expected a hit: {rect:?} {ray:?}"))
    }

    fn hit_seg(ray: &Ray2, a: Point2<f32>, b: Point2<f32>) -> SegmentHit {
        ray_segment(ray, a, b).unwrap_or_else(|| panic!("expected a hit: {ray:?} {a} {b}"))
    }

    /// Rays that must be rejected by every query.
    fn invalid_rays() -> Vec<Ray2> {
        let o = p(-1.0, 0.5);
        let d = v(1.0, 0.0);
        vec![
            Ray2::new(p(f32::NAN, 0.5), d),
            Ray2::new(p(-1.0, f32::INFINITY), d),
            Ray2::new(o, v(f32::NAN, 0.0)),
            Ray2::new(o, v(f32::INFINITY, 0.0)),
            Ray2::new(o, v(1.0, f32::NEG_INFINITY)),
            Ray2::new(o, v(0.0, 0.0)),
            Ray2::new(o, v(-0.0, 0.0)),
            Ray2::new(o, v(0.0, -0.0)),
            Ray2::with_range(o, d, f32::NAN, 10.0),
            Ray2::with_range(o, d, 0.0, f32::NAN),
            Ray2::with_range(o, d, 5.0, 1.0),
        ]
    }

    #[test]
    fn ray_accessors_and_range() {
        let r = Ray2::new(p(1.0, 2.0), v(3.0, -4.0));
        assert_eq!(r.origin, p(1.0, 2.0));
        assert_eq!(r.direction, v(3.0, -4.0));
        assert_eq!((r.t_min, r.t_max), (0.0, f32::INFINITY));
        assert_eq!(r.at(2.0), p(7.0, -6.0));
        let r = Ray2::with_range(p(0.0, 0.0), v(1.0, 0.0), -2.0, 3.0);
        assert_eq!((r.t_min, r.t_max), (-2.0, 3.0));
    }

    #[test]
    fn ray_validity() {
        assert!(Ray2::new(p(0.0, 0.0), v(0.0, 1.0)).is_valid());
        assert!(Ray2::new(p(0.0, 0.0), v(-0.0, 1.0)).is_valid());
        assert!(Ray2::with_range(p(0.0, 0.0), v(1.0, 0.0), 2.0, 2.0).is_valid());
        assert!(
            Ray2::with_range(p(0.0, 0.0), v(1.0, 0.0), f32::NEG_INFINITY, f32::INFINITY).is_valid()
        );
        for r in invalid_rays() {
            assert!(!r.is_valid(), "{r:?}");
        }
    }

    // ---------------------------------------------------------------- ray_segment

    #[test]
    fn segment_crossing() {
        let ray = Ray2::new(p(0.0, 0.0), v(1.0, 1.0));
        let h = hit_seg(&ray, p(2.0, 0.0), p(0.0, 2.0));
        assert_eq!((h.t, h.s), (1.0, 0.5));
        assert_eq!(h.point, p(1.0, 1.0));
        // Reversing the segment flips s, not t.
        let h = hit_seg(&ray, p(0.0, 2.0), p(2.0, 0.0));
        assert_eq!((h.t, h.s), (1.0, 0.5));
        // Parametric t: doubling the direction halves t.
        let ray = Ray2::new(p(0.0, 0.0), v(2.0, 2.0));
        assert_eq!(hit_seg(&ray, p(2.0, 0.0), p(0.0, 2.0)).t, 0.5);
    }

    #[test]
    fn segment_misses_beside_it() {
        let ray = Ray2::new(p(0.0, 0.0), v(1.0, 0.0));
        assert!(ray_segment(&ray, p(2.0, 0.5), p(2.0, 3.0)).is_none());
        assert!(ray_segment(&ray, p(2.0, -3.0), p(2.0, -0.5)).is_none());
        assert!(ray_segment(&ray, p(2.0, 1e-6), p(3.0, 1.0)).is_none());
    }

    #[test]
    fn segment_endpoints_are_hits() {
        let ray = Ray2::new(p(0.0, -1.0), v(0.0, 1.0));
        let h = hit_seg(&ray, p(0.0, 0.0), p(1.0, 0.0));
        assert_eq!((h.t, h.s, h.point), (1.0, 0.0, p(0.0, 0.0)));
        let h = hit_seg(&ray, p(-1.0, 0.0), p(0.0, 0.0));
        assert_eq!((h.t, h.s, h.point), (1.0, 1.0, p(0.0, 0.0)));
        // Just past either endpoint misses.
        assert!(ray_segment(&ray, p(0.125, 0.0), p(1.0, 0.0)).is_none());
        assert!(ray_segment(&ray, p(-1.0, 0.0), p(-0.125, 0.0)).is_none());
    }

    #[test]
    fn segment_parallel_and_collinear_are_none() {
        let ray = Ray2::new(p(0.0, 0.0), v(1.0, 0.0));
        assert!(ray_segment(&ray, p(1.0, 1.0), p(5.0, 1.0)).is_none());
        // Collinear, overlapping the ray, in either orientation, and containing the origin.
        assert!(ray_segment(&ray, p(1.0, 0.0), p(5.0, 0.0)).is_none());
        assert!(ray_segment(&ray, p(5.0, 0.0), p(1.0, 0.0)).is_none());
        assert!(ray_segment(&ray, p(-1.0, 0.0), p(1.0, 0.0)).is_none());
        let diag = Ray2::new(p(0.0, 0.0), v(1.0, 1.0));
        assert!(ray_segment(&diag, p(1.0, 1.0), p(3.0, 3.0)).is_none());
    }

    #[test]
    fn segment_degenerate_is_none() {
        let ray = Ray2::new(p(0.0, 0.0), v(1.0, 0.0));
        // The point lies on the ray, still no hit.
        assert!(ray_segment(&ray, p(2.0, 0.0), p(2.0, 0.0)).is_none());
    }

    #[test]
    fn segment_behind_origin_is_none() {
        let ray = Ray2::new(p(0.0, 0.0), v(1.0, 0.0));
        assert!(ray_segment(&ray, p(-2.0, -1.0), p(-2.0, 1.0)).is_none());
        // Through the origin itself: t == 0 == t_min is a hit.
        let h = hit_seg(&ray, p(0.0, -1.0), p(0.0, 1.0));
        assert_eq!((h.t, h.s), (0.0, 0.5));
    }

    #[test]
    fn segment_respects_t_range() {
        let (a, b) = (p(4.0, -1.0), p(4.0, 1.0)); // crossed at t = 4
        let d = v(1.0, 0.0);
        let with = |t_min, t_max| Ray2::with_range(p(0.0, 0.0), d, t_min, t_max);
        assert!(ray_segment(&with(0.0, 3.0), a, b).is_none());
        assert!(ray_segment(&with(5.0, 9.0), a, b).is_none());
        assert_eq!(hit_seg(&with(0.0, 4.0), a, b).t, 4.0);
        assert_eq!(hit_seg(&with(4.0, 9.0), a, b).t, 4.0);
        assert_eq!(hit_seg(&with(4.0, 4.0), a, b).t, 4.0);
        // Negative t allowed by the range: the segment behind the origin.
        let line = Ray2::with_range(p(0.0, 0.0), d, f32::NEG_INFINITY, f32::INFINITY);
        assert_eq!(hit_seg(&line, p(-4.0, -1.0), p(-4.0, 1.0)).t, -4.0);
        // One ulp past the bound misses: the test is exact, no tolerance.
        let just_short = with(0.0, 4.0f32.next_down());
        assert!(ray_segment(&just_short, a, b).is_none());
    }

    #[test]
    fn segment_rejects_invalid_input() {
        let (a, b) = (p(0.0, -1.0), p(0.0, 1.0));
        for r in invalid_rays() {
            assert!(ray_segment(&r, a, b).is_none(), "{r:?}");
        }
        let ray = Ray2::new(p(-1.0, 0.0), v(1.0, 0.0));
        assert!(ray_segment(&ray, p(f32::NAN, -1.0), b).is_none());
        assert!(ray_segment(&ray, a, p(0.0, f32::INFINITY)).is_none());
        // Overflow in the determinants is rejected, not reported as an infinite hit.
        let big = Ray2::new(p(-1.0, 0.0), v(3e38, 3e38));
        assert!(ray_segment(&big, p(-3e38, 3e38), p(3e38, -3e38)).is_none());
    }

    #[test]
    fn small_integer_inputs_answer_as_exact_arithmetic_does() {
        // An independent oracle: o + t·d = a + s·(b − a) solved by Cramer's rule in exact
        // integers. With coordinates in [-16, 16] every determinant is exact in f32 too, so
        // hit or miss must be the exact rule's, for either sign of D, and t, s within an ulp
        // of the exact quotients.
        let mut rng = Rng::new(0x2545_f491_4f6c_dd1d);
        let mut int = || rng.below(33) as i64 - 16;
        let close = |got: f32, num: i64, den: i64| {
            let exact = num as f64 / den as f64;
            let ulp = (exact as f32).abs().max(f32::MIN_POSITIVE) * f32::EPSILON;
            (f64::from(got) - exact).abs() <= f64::from(ulp)
        };
        let (mut hits, mut misses) = (0, 0);
        for _ in 0..200_000 {
            let (a, b, o, d) = (
                [int(), int()],
                [int(), int()],
                [int(), int()],
                [int(), int()],
            );
            let (e, w) = ([b[0] - a[0], b[1] - a[1]], [a[0] - o[0], a[1] - o[1]]);
            // [d, −e]·(t, s) = w
            let det = -d[0] * e[1] + e[0] * d[1];
            let det_t = -w[0] * e[1] + e[0] * w[1];
            let det_s = d[0] * w[1] - d[1] * w[0];
            let sg = det.signum();
            let hit = det != 0 && det_t * sg >= 0 && det_s * sg >= 0 && det_s * sg <= det * sg;
            let f = |x: [i64; 2]| p(x[0] as f32, x[1] as f32);
            let ray = Ray2::new(f(o), f(d).coords);
            let got = ray_segment(&ray, f(a), f(b));
            assert_eq!(got.is_some(), hit, "{a:?}–{b:?} from {o:?} along {d:?}");
            if let Some(h) = got {
                hits += 1;
                assert!(close(h.t, det_t, det), "t {} vs {det_t}/{det}", h.t);
                assert!(close(h.s, det_s, det), "s {} vs {det_s}/{det}", h.s);
            } else {
                misses += 1;
            }
        }
        assert!(
            hits > 10_000 && misses > 10_000,
            "{hits} hits, {misses} misses"
        );
    }

    #[test]
    fn segment_sign_is_tested_before_division() {
        // D < 0 and Dt < 0: t > 0, a hit. Comparing Dt >= 0 without the sign of D would miss.
        let ray = Ray2::new(p(0.0, 0.0), v(1.0, 0.0));
        let (a, b) = (p(2.0, 1.0), p(2.0, -1.0)); // e = (0, -2): D = cross(e, d) = 2 > 0
        let (a2, b2) = (b, a); // D = -2
        assert_eq!(hit_seg(&ray, a, b).t, 2.0);
        assert_eq!(hit_seg(&ray, a2, b2).t, 2.0);
        // D < 0 and Dt > 0: t < 0, behind, a miss.
        assert!(ray_segment(&ray, p(-2.0, -1.0), p(-2.0, 1.0)).is_none());
        assert!(ray_segment(&ray, p(-2.0, 1.0), p(-2.0, -1.0)).is_none());
    }

    // ---------------------------------------------------------------- Rect

    #[test]
    fn rect_hits_from_each_side() {
        let r = Rect::new(p(1.0, 1.0), p(3.0, 2.0));
        let cases = [
            (p(0.0, 1.5), v(1.0, 0.0), 1.0, 3.0),  // from the left
            (p(4.0, 1.5), v(-1.0, 0.0), 1.0, 3.0), // from the right
            (p(2.0, -1.0), v(0.0, 2.0), 1.0, 1.5), // from below
            (p(2.0, 4.0), v(0.0, -1.0), 2.0, 3.0), // from above
            (p(0.0, 0.5), v(2.0, 1.0), 0.5, 1.5),  // diagonal, through two edges
        ];
        for (o, d, t_near, t_far) in cases {
            let ray = Ray2::new(o, d);
            let h = hit_rect(&r, &ray);
            assert_eq!((h.t_near, h.t_far), (t_near, t_far), "{ray:?}");
            assert_eq!((h.near, h.far), (ray.at(t_near), ray.at(t_far)));
        }
    }

    #[test]
    fn rect_misses_from_each_side() {
        let r = Rect::new(p(1.0, 1.0), p(3.0, 2.0));
        let cases = [
            (p(0.0, 1.5), v(-1.0, 0.0)), // pointing away, left
            (p(4.0, 1.5), v(1.0, 0.0)),  // pointing away, right
            (p(2.0, -1.0), v(0.0, -1.0)),
            (p(2.0, 4.0), v(0.0, 1.0)),
            (p(0.0, 0.0), v(1.0, 3.0)), // above: already at y = 3 when x = 1
            (p(0.0, 0.0), v(4.0, 0.2)), // below: only at y = 0.15 when x = 3
        ];
        for (o, d) in cases {
            assert!(r.intersect_ray(&Ray2::new(o, d)).is_none(), "{o} {d}");
        }
    }

    #[test]
    fn rect_axis_parallel_with_signed_zero() {
        let r = unit_rect();
        for zero in [0.0f32, -0.0] {
            // Horizontal rays, both directions, inside and outside the y slab.
            for (dx, ox) in [(1.0, -1.0), (-1.0, 2.0)] {
                let inside = Ray2::new(p(ox, 0.5), v(dx, zero));
                let h = hit_rect(&r, &inside);
                assert_eq!((h.t_near, h.t_far), (1.0, 2.0));
                assert_eq!(h.near.y, 0.5);
                for oy in [-0.5, 1.5, 1.0f32.next_up(), 0.0f32.next_down()] {
                    let outside = Ray2::new(p(ox, oy), v(dx, zero));
                    assert!(r.intersect_ray(&outside).is_none(), "{outside:?}");
                }
            }
            // Vertical rays.
            for (dy, oy) in [(1.0, -1.0), (-1.0, 2.0)] {
                let inside = Ray2::new(p(0.25, oy), v(zero, dy));
                assert_eq!(hit_rect(&r, &inside).t_near, 1.0);
                let outside = Ray2::new(p(1.25, oy), v(zero, dy));
                assert!(r.intersect_ray(&outside).is_none());
            }
        }
    }

    #[test]
    fn rect_origin_inside_starts_at_origin() {
        let r = unit_rect();
        let o = p(0.25, 0.5);
        for d in [v(1.0, 0.0), v(-0.0, -1.0), v(-3.0, 2.0)] {
            let h = hit_rect(&r, &Ray2::new(o, d));
            assert_eq!(h.t_near, 0.0);
            assert_eq!(h.near, o);
            assert!(h.t_far > 0.0);
        }
        // With t_min > 0 the start point is ray.at(t_min).
        let ray = Ray2::with_range(o, v(1.0, 0.0), 0.5, 10.0);
        let h = hit_rect(&r, &ray);
        assert_eq!((h.t_near, h.near), (0.5, p(0.75, 0.5)));
        assert_eq!((h.t_far, h.far), (0.75, p(1.0, 0.5)));
    }

    #[test]
    fn rect_origin_on_edge() {
        let r = unit_rect();
        // On the left edge, pointing in.
        let h = hit_rect(&r, &Ray2::new(p(0.0, 0.5), v(1.0, 0.0)));
        assert_eq!((h.t_near, h.t_far), (0.0, 1.0));
        // On the left edge, pointing out: touches at t = 0 only.
        let h = hit_rect(&r, &Ray2::new(p(0.0, 0.5), v(-1.0, 0.25)));
        assert_eq!((h.t_near, h.t_far), (0.0, 0.0));
        // On the right edge, going up inside the edge: the 0·inf = NaN case on x.
        let h = hit_rect(&r, &Ray2::new(p(1.0, 0.5), v(0.0, 1.0)));
        assert_eq!((h.t_near, h.t_far), (0.0, 0.5));
        // On a corner, pointing diagonally out.
        let h = hit_rect(&r, &Ray2::new(p(1.0, 1.0), v(1.0, 1.0)));
        assert_eq!((h.t_near, h.t_far), (0.0, 0.0));
    }

    #[test]
    fn rect_ray_along_edge_line_hits() {
        let r = Rect::new(p(0.0, 0.0), p(2.0, 1.0));
        for zero in [0.0f32, -0.0] {
            // Along x = min.x and x = max.x, upwards and downwards.
            for x in [0.0, 2.0] {
                let up = hit_rect(&r, &Ray2::new(p(x, -2.0), v(zero, 1.0)));
                assert_eq!((up.t_near, up.t_far), (2.0, 3.0));
                assert_eq!((up.near, up.far), (p(x, 0.0), p(x, 1.0)));
                let down = hit_rect(&r, &Ray2::new(p(x, 3.0), v(zero, -0.5)));
                assert_eq!((down.t_near, down.t_far), (4.0, 6.0));
            }
            // Along y = min.y and y = max.y.
            for y in [0.0, 1.0] {
                let right = hit_rect(&r, &Ray2::new(p(-1.0, y), v(1.0, zero)));
                assert_eq!((right.t_near, right.t_far), (1.0, 3.0));
                let left = hit_rect(&r, &Ray2::new(p(5.0, y), v(-1.0, zero)));
                assert_eq!((left.t_near, left.t_far), (3.0, 5.0));
                // In the edge line but moving away from the rectangle.
                assert!(
                    r.intersect_ray(&Ray2::new(p(5.0, y), v(1.0, zero)))
                        .is_none()
                );
            }
            // One ulp outside the edge line misses.
            let off = Ray2::new(p(2.0f32.next_up(), -2.0), v(zero, 1.0));
            assert!(r.intersect_ray(&off).is_none());
        }
    }

    #[test]
    fn rect_through_corner() {
        let r = unit_rect();
        // Touches only the corner (0, 1).
        let h = hit_rect(&r, &Ray2::new(p(-1.0, 0.0), v(1.0, 1.0)));
        assert_eq!((h.t_near, h.t_far), (1.0, 1.0));
        assert_eq!(h.near, p(0.0, 1.0));
        // Touches only the corner (1, 0), coming from the other side.
        let h = hit_rect(&r, &Ray2::new(p(2.0, 1.0), v(-1.0, -1.0)));
        assert_eq!((h.near, h.far), (p(1.0, 0.0), p(1.0, 0.0)));
        // The diagonal enters at one corner and leaves at the opposite one.
        let h = hit_rect(&r, &Ray2::new(p(-1.0, -1.0), v(1.0, 1.0)));
        assert_eq!((h.near, h.far), (p(0.0, 0.0), p(1.0, 1.0)));
        // Shifted by one ulp of the corner coordinate: misses.
        let miss = Ray2::new(p(-1.0, f32::EPSILON), v(1.0, 1.0));
        assert!(r.intersect_ray(&miss).is_none());
    }

    #[test]
    fn rect_clips_to_t_range() {
        let r = Rect::new(p(2.0, 0.0), p(4.0, 1.0)); // entered at t = 2, left at t = 4
        let with = |t_min, t_max| Ray2::with_range(p(0.0, 0.5), v(1.0, 0.0), t_min, t_max);
        assert!(r.intersect_ray(&with(0.0, 1.5)).is_none());
        assert!(r.intersect_ray(&with(4.5, 9.0)).is_none());
        let h = hit_rect(&r, &with(0.0, 3.0));
        assert_eq!((h.t_near, h.t_far, h.far), (2.0, 3.0, p(3.0, 0.5)));
        let h = hit_rect(&r, &with(2.5, 9.0));
        assert_eq!((h.t_near, h.t_far, h.near), (2.5, 4.0, p(2.5, 0.5)));
        let h = hit_rect(&r, &with(0.0, 2.0)); // range ends on the entry edge
        assert_eq!((h.t_near, h.t_far), (2.0, 2.0));
        let h = hit_rect(&r, &with(f32::NEG_INFINITY, f32::INFINITY));
        assert_eq!((h.t_near, h.t_far), (2.0, 4.0));
    }

    #[test]
    fn rect_rejects_invalid_rays() {
        let r = Rect::new(p(0.0, 0.0), p(1.0, 1.0));
        for ray in invalid_rays() {
            assert!(r.intersect_ray(&ray).is_none(), "{ray:?}");
        }
    }

    #[test]
    fn rect_empty_or_nan_never_hits() {
        let inverted_x = Rect::new(p(1.0, 0.0), p(0.0, 1.0));
        let inverted_y = Rect::new(p(0.0, 1.0), p(1.0, 0.0));
        let nan = Rect::new(p(0.0, f32::NAN), p(1.0, 1.0));
        let infinite = Rect::new(p(0.0, 0.0), p(f32::INFINITY, 1.0));
        let rays = [
            Ray2::new(p(-1.0, 0.5), v(1.0, 0.0)),
            Ray2::new(p(0.5, -1.0), v(0.0, 1.0)),
            Ray2::new(p(0.5, 0.5), v(1.0, 1.0)),
            // In the lines of the inverted bounds, where 0·inf = NaN appears.
            Ray2::new(p(0.0, -1.0), v(0.0, 1.0)),
            Ray2::new(p(1.0, -1.0), v(-0.0, 1.0)),
            Ray2::new(p(-1.0, 0.0), v(1.0, 0.0)),
            Ray2::new(p(-1.0, 1.0), v(1.0, -0.0)),
        ];
        for rect in [inverted_x, inverted_y, nan, infinite] {
            for ray in rays {
                assert!(rect.intersect_ray(&ray).is_none(), "{rect:?} {ray:?}");
            }
        }
    }

    #[test]
    fn rect_degenerate_is_a_segment() {
        let seg = Rect::new(p(1.0, 0.0), p(1.0, 2.0)); // zero width: x = 1, y in [0, 2]
        let h = hit_rect(&seg, &Ray2::new(p(0.0, 1.0), v(1.0, 0.0)));
        assert_eq!((h.t_near, h.t_far, h.near), (1.0, 1.0, p(1.0, 1.0)));
        let h = hit_rect(&seg, &Ray2::new(p(3.0, 0.0), v(-1.0, 0.0)));
        assert_eq!(h.near, p(1.0, 0.0));
        assert!(
            seg.intersect_ray(&Ray2::new(p(0.0, 2.5), v(1.0, 0.0)))
                .is_none()
        );
        // Along the segment's own line.
        let h = hit_rect(&seg, &Ray2::new(p(1.0, -1.0), v(0.0, 1.0)));
        assert_eq!((h.t_near, h.t_far), (1.0, 3.0));
        // A point rectangle.
        let point = Rect::new(p(1.0, 1.0), p(1.0, 1.0));
        assert!(
            point
                .intersect_ray(&Ray2::new(p(0.0, 0.0), v(1.0, 1.0)))
                .is_some()
        );
        assert!(
            point
                .intersect_ray(&Ray2::new(p(0.0, 1.0), v(1.0, 0.0)))
                .is_some()
        );
        assert!(
            point
                .intersect_ray(&Ray2::new(p(0.0, 0.0), v(1.0, 2.0)))
                .is_none()
        );
    }

    // ---------------------------------------------------------------- randomized

    /// The test inputs on grids, where every product below stays exact in f32.
    trait Grid {
        fn grid(&mut self) -> f32;
        fn grid_dir(&mut self) -> f32;
    }

    impl Grid for Rng {
        /// Multiple of 1/4 in [-8, 8]: all products below stay exact in f32.
        fn grid(&mut self) -> f32 {
            (self.below(65) as f32 - 32.0) * 0.25
        }

        /// Zero (either sign) or a power of two, so 1/d is exact.
        fn grid_dir(&mut self) -> f32 {
            const D: [f32; 12] = [
                0.0, -0.0, 0.25, -0.25, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0,
            ];
            D[self.below(D.len() as u64) as usize]
        }
    }

    /// Reference for ray–segment in f64 by a different route than the implementation:
    /// signed distances of `a` and `b` from the ray's line give `s`, then `t` follows
    /// from projecting the crossing point onto `d`.
    /// `t = num / den` is kept as a fraction so that grid inputs are decided exactly.
    enum SegRef {
        Parallel,
        Miss,
        Hit { t: f64, s: f64 },
        Ambiguous,
    }

    fn seg_reference(ray: &Ray2, a: Point2<f32>, b: Point2<f32>, margin: f64) -> SegRef {
        let f = |x: f32| f64::from(x);
        let (ox, oy, dx, dy) = (
            f(ray.origin.x),
            f(ray.origin.y),
            f(ray.direction.x),
            f(ray.direction.y),
        );
        let (ax, ay, bx, by) = (f(a.x) - ox, f(a.y) - oy, f(b.x) - ox, f(b.y) - oy);
        let side_a = dx * ay - dy * ax;
        let side_b = dx * by - dy * bx;
        let denom = side_a - side_b; // sign-flipped D in exact arithmetic
        let (ex, ey) = (bx - ax, by - ay);
        let d_len = (dx * dx + dy * dy).sqrt();
        let e_len = (ex * ex + ey * ey).sqrt();
        if denom.abs() <= margin * d_len * e_len {
            return if denom == 0.0 {
                SegRef::Parallel
            } else {
                SegRef::Ambiguous
            };
        }
        // s in [0, 1]  <=>  side_a·denom >= 0 and side_b·denom <= 0.
        let s_lo = side_a * denom.signum();
        let s_hi = -side_b * denom.signum();
        let s_tol = margin * denom.abs();
        if margin > 0.0 && (s_lo.abs() <= s_tol || s_hi.abs() <= s_tol) {
            return SegRef::Ambiguous;
        }
        let s_in = s_lo >= 0.0 && s_hi >= 0.0;
        // t = ((a−o)·d · denom + side_a · (e·d)) / (|d|² · denom)
        let mut num = (ax * dx + ay * dy) * denom + side_a * (ex * dx + ey * dy);
        let mut den = (dx * dx + dy * dy) * denom;
        if den < 0.0 {
            (num, den) = (-num, -den);
        }
        let t_tol = margin * den * (1.0 + (num / den).abs());
        let above_min = num - f(ray.t_min) * den;
        let below_max = f(ray.t_max) * den - num;
        let t_in = above_min >= 0.0 && below_max >= 0.0;
        if !s_in {
            return SegRef::Miss;
        }
        if margin > 0.0 && (above_min.abs() <= t_tol || below_max.abs() <= t_tol) {
            return SegRef::Ambiguous;
        }
        if t_in {
            SegRef::Hit {
                t: num / den,
                s: side_a / denom,
            }
        } else {
            SegRef::Miss
        }
    }

    fn random_t_range(rng: &mut Rng, grid: bool) -> (f32, f32) {
        let t_min = match rng.below(4) {
            0 => f32::NEG_INFINITY,
            1 if grid => rng.grid() * 0.5,
            1 => rng.range(-2.0, 2.0),
            _ => 0.0,
        };
        let t_max = match rng.below(3) {
            0 => f32::INFINITY,
            _ if grid => t_min.max(-4.0) + rng.below(17) as f32 * 0.25,
            _ => t_min.max(-4.0) + rng.range(0.0, 6.0),
        };
        (t_min, t_max)
    }

    fn close(x: f32, reference: f64, tol: f64) -> bool {
        (f64::from(x) - reference).abs() <= tol * (1.0 + reference.abs())
    }

    #[test]
    fn random_ray_segment_matches_f64_reference() {
        let mut rng = Rng::new(0x5EED_0001);
        let (mut hits, mut misses, mut parallel, mut skipped, mut endpoint_hits) = (0, 0, 0, 0, 0);
        for i in 0..200_000 {
            // Odd iterations use a coarse grid: f32 is exact there, so ties (endpoints,
            // t at the range bounds, parallel) must be decided exactly like the reference.
            let grid = i % 2 == 1;
            let pt = |rng: &mut Rng| {
                if grid {
                    p(rng.grid(), rng.grid())
                } else {
                    p(rng.range(-10.0, 10.0), rng.range(-10.0, 10.0))
                }
            };
            let o = pt(&mut rng);
            let mut a = pt(&mut rng);
            let mut b = pt(&mut rng);
            let d = if grid {
                v(rng.grid(), rng.grid())
            } else {
                v(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0))
            };
            if grid {
                // Integer steps along d keep every coordinate on the exact grid.
                let step = |rng: &mut Rng| rng.below(5) as f32 - 1.0;
                match rng.below(6) {
                    0 => a = o + d * step(&mut rng), // endpoint on the ray's line
                    1 => b = o + d * step(&mut rng),
                    2 => b = a + d * (step(&mut rng) + 0.5), // parallel (collinear if a is on it)
                    _ => {}
                }
            }
            let (t_min, t_max) = random_t_range(&mut rng, grid);
            let ray = Ray2::with_range(o, d, t_min, t_max);
            let got = ray_segment(&ray, a, b);
            if !ray.is_valid() || a == b {
                assert!(got.is_none());
                continue;
            }
            let margin = if grid { 0.0 } else { 1e-4 };
            match seg_reference(&ray, a, b, margin) {
                SegRef::Ambiguous => skipped += 1,
                SegRef::Parallel => {
                    assert!(got.is_none(), "parallel: {ray:?} {a} {b} -> {got:?}");
                    parallel += 1;
                }
                SegRef::Miss => {
                    assert!(got.is_none(), "miss expected: {ray:?} {a} {b} -> {got:?}");
                    misses += 1;
                }
                SegRef::Hit { t, s } => {
                    let h =
                        got.unwrap_or_else(|| panic!("hit expected: {ray:?} {a} {b} t={t} s={s}"));
                    assert!(
                        close(h.t, t, 1e-4) && close(h.s, s, 1e-4),
                        "{ray:?} {a} {b}: {h:?} vs t={t} s={s}"
                    );
                    assert!((0.0..=1.0).contains(&h.s) && h.t >= t_min && h.t <= t_max);
                    assert!((h.point - ray.at(h.t)).norm() <= 1e-3 * (1.0 + h.point.coords.norm()));
                    if s == 0.0 || s == 1.0 {
                        assert_eq!(f64::from(h.s), s);
                        endpoint_hits += 1;
                    }
                    hits += 1;
                }
            }
        }
        // Guard against a generator that makes the comparison vacuous.
        assert!(
            hits > 20_000 && misses > 50_000,
            "hits {hits} misses {misses}"
        );
        assert!(
            parallel > 100 && endpoint_hits > 100,
            "parallel {parallel} endpoints {endpoint_hits}"
        );
        assert!(skipped < 10_000, "skipped {skipped}");
    }

    #[test]
    fn random_segment_t_stays_in_range_at_ulp_boundaries() {
        // The range test is exact, so pinning the range to the returned t (or one ulp beside
        // it) must never produce a t outside [t_min, t_max], and a range that excludes the
        // rounded t by an ulp must miss.
        let mut rng = Rng::new(0x5EED_0003);
        let (mut checked, mut pinned_hits) = (0, 0);
        for _ in 0..100_000 {
            let mut pt = || p(rng.range(-10.0, 10.0), rng.range(-10.0, 10.0));
            let (o, a, b) = (pt(), pt(), pt());
            let d = v(rng.range(-3.0, 3.0), rng.range(-3.0, 3.0));
            let Some(h0) = ray_segment(&Ray2::new(o, d), a, b) else {
                continue;
            };
            let t = h0.t;
            if t == 0.0 {
                continue;
            }
            checked += 1;
            let at =
                |t_min: f32, t_max: f32| ray_segment(&Ray2::with_range(o, d, t_min, t_max), a, b);
            for (t_min, t_max) in [
                (t, f32::INFINITY),
                (0.0, t),
                (t, t),
                (t.next_down(), t.next_up()),
            ] {
                if let Some(h) = at(t_min, t_max) {
                    assert!(
                        h.t >= t_min && h.t <= t_max,
                        "{h:?} outside [{t_min}, {t_max}]"
                    );
                    assert_eq!(h.t, t);
                    pinned_hits += 1;
                }
            }
            assert!(at(t.next_up(), f32::INFINITY).is_none());
            assert!(at(0.0, t.next_down()).is_none());
        }
        assert!(
            checked > 10_000 && pinned_hits > checked,
            "{checked} {pinned_hits}"
        );
    }

    /// Reference for the slab test: clip the parametric line against the four half-planes
    /// `x >= min.x`, `x <= max.x`, `y >= min.y`, `y <= max.y` in f64, handling a zero
    /// direction component by an explicit inside/outside test instead of infinities.
    fn rect_reference(rect: &Rect, ray: &Ray2) -> Option<(f64, f64)> {
        let f = |x: f32| f64::from(x);
        let (mut lo, mut hi) = (f(ray.t_min), f(ray.t_max));
        let o = [f(ray.origin.x), f(ray.origin.y)];
        let d = [f(ray.direction.x), f(ray.direction.y)];
        for axis in 0..2 {
            // Half-plane n·x <= c, written as (n, c) with n = ±1.
            for (n, c) in [(-1.0, -f(rect.min[axis])), (1.0, f(rect.max[axis]))] {
                let nd = n * d[axis];
                let slack = c - n * o[axis]; // >= 0 when the origin is inside
                if nd == 0.0 {
                    if slack < 0.0 {
                        return None;
                    }
                } else if nd > 0.0 {
                    hi = hi.min(slack / nd);
                } else {
                    lo = lo.max(slack / nd);
                }
            }
        }
        Some((lo, hi))
    }

    #[test]
    fn random_ray_rect_matches_f64_reference() {
        let mut rng = Rng::new(0x5EED_0002);
        let (mut hits, mut misses, mut skipped, mut touching, mut axis_parallel) = (0, 0, 0, 0, 0);
        for i in 0..200_000 {
            let grid = i % 2 == 1;
            let (rect, o, d) = if grid {
                let (x0, x1, y0, y1) = (rng.grid(), rng.grid(), rng.grid(), rng.grid());
                // Mostly proper rectangles, some degenerate and some inverted.
                let rect = match rng.below(8) {
                    0 => Rect::new(p(x0, y0), p(x0, y1.max(y0))),
                    1 => Rect::new(p(x0.max(x1), y0), p(x0.min(x1), y1)),
                    _ => Rect::new(p(x0.min(x1), y0.min(y1)), p(x0.max(x1), y0.max(y1))),
                };
                // Often put the origin on a bound so edge-line rays occur.
                let coord = |rng: &mut Rng, lo: f32, hi: f32| match rng.below(4) {
                    0 => lo,
                    1 => hi,
                    _ => rng.grid(),
                };
                let o = p(
                    coord(&mut rng, rect.min.x, rect.max.x),
                    coord(&mut rng, rect.min.y, rect.max.y),
                );
                (rect, o, v(rng.grid_dir(), rng.grid_dir()))
            } else {
                let (x0, x1) = (rng.range(-5.0, 5.0), rng.range(-5.0, 5.0));
                let (y0, y1) = (rng.range(-5.0, 5.0), rng.range(-5.0, 5.0));
                let rect = Rect::new(p(x0.min(x1), y0.min(y1)), p(x0.max(x1), y0.max(y1)));
                let o = p(rng.range(-8.0, 8.0), rng.range(-8.0, 8.0));
                let mut d = v(rng.range(-2.0, 2.0), rng.range(-2.0, 2.0));
                if rng.below(8) == 0 {
                    d[rng.below(2) as usize] = if rng.below(2) == 0 { 0.0 } else { -0.0 };
                }
                (rect, o, d)
            };
            let (t_min, t_max) = random_t_range(&mut rng, grid);
            let ray = Ray2::with_range(o, d, t_min, t_max);
            let got = rect.intersect_ray(&ray);
            if !ray.is_valid() || rect.min.x > rect.max.x || rect.min.y > rect.max.y {
                assert!(got.is_none(), "{rect:?} {ray:?} -> {got:?}");
                continue;
            }
            if d.x == 0.0 || d.y == 0.0 {
                axis_parallel += 1;
            }
            let Some((lo, hi)) = rect_reference(&rect, &ray) else {
                assert!(
                    got.is_none(),
                    "outside a parallel slab: {rect:?} {ray:?} -> {got:?}"
                );
                misses += 1;
                continue;
            };
            if grid {
                // Grid inputs are exact in f32 (1/d is a power of two): decide and compare
                // exactly, including touching cases with lo == hi.
                match got {
                    Some(h) => {
                        assert!(lo <= hi, "miss expected: {rect:?} {ray:?} -> {h:?}");
                        assert_eq!((f64::from(h.t_near), f64::from(h.t_far)), (lo, hi));
                        assert_eq!((h.near, h.far), (ray.at(h.t_near), ray.at(h.t_far)));
                        if lo == hi {
                            touching += 1;
                        }
                        hits += 1;
                    }
                    None => {
                        assert!(lo > hi, "hit expected: {rect:?} {ray:?} {lo}..{hi}");
                        misses += 1;
                    }
                }
                continue;
            }
            let gap = hi - lo;
            if gap.abs() <= 1e-4 * (1.0 + lo.abs() + hi.abs()) {
                skipped += 1;
            } else if gap > 0.0 {
                let h = got.unwrap_or_else(|| panic!("hit expected: {rect:?} {ray:?} {lo}..{hi}"));
                assert!(
                    close(h.t_near, lo, 1e-4) && close(h.t_far, hi, 1e-4),
                    "{rect:?} {ray:?}: {h:?} vs {lo}..{hi}"
                );
                assert!(h.t_near >= t_min && h.t_far <= t_max);
                assert_eq!((h.near, h.far), (ray.at(h.t_near), ray.at(h.t_far)));
                hits += 1;
            } else {
                assert!(got.is_none(), "miss expected: {rect:?} {ray:?} -> {got:?}");
                misses += 1;
            }
        }
        assert!(
            hits > 20_000 && misses > 50_000,
            "hits {hits} misses {misses}"
        );
        assert!(
            touching > 1_000 && axis_parallel > 20_000,
            "touching {touching} axis-parallel {axis_parallel}"
        );
        assert!(skipped < 5_000, "skipped {skipped}");
    }
}
