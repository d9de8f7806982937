//! Rays: an origin, a direction and a parametric range.

use nalgebra::{Point3, Vector3};

/// A ray `origin + t·direction`, `t` in `[t_min, t_max]`, with its inverse direction cached.
///
/// A ray is the set of points `origin + t·direction` for `t` in `[t_min, t_max]`. The
/// direction is **not** normalized: `t` is parametric, so a transform applied to origin and
/// direction keeps `t` (and with a unit direction `t` is a distance).
///
/// The slab test divides by the direction on every box; the ray caches `1/direction` and the
/// sign of each component once, so traversal only multiplies. A component of `+0.0` or `-0.0`
/// gives an inverse of `+inf` or `-inf`, which the slab test handles (see [`crate::Aabb`]).
///
/// ```
/// use meshray::Ray;
/// use nalgebra::{Point3, Vector3};
///
/// let ray = Ray::new(Point3::new(0.0, 0.0, -5.0), Vector3::new(0.0, 0.0, 2.0));
/// assert_eq!(ray.at(2.0), Point3::new(0.0, 0.0, -1.0));
/// assert!(ray.is_valid());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    origin: Point3<f32>,
    direction: Vector3<f32>,
    t_min: f32,
    t_max: f32,
    inv_direction: Vector3<f32>,
    negative: [bool; 3],
    /// Whether the origin and direction are usable ([`Ray::is_valid`] adds the range),
    /// decided once here rather than by every query.
    usable: bool,
}

impl Ray {
    /// A ray over `t` in `[0, +inf)`. Origin and direction may be nalgebra's `Point3` and
    /// `Vector3`, `[f32; 3]`, or any math crate's types that convert into `mint`'s (glam's
    /// `Vec3`, cgmath's, ultraviolet's...).
    ///
    /// ```
    /// use meshray::Ray;
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let ray = Ray::new(Point3::new(1.0, 2.0, 3.0), Vector3::new(0.0, 0.0, -2.0));
    /// assert_eq!((ray.t_min(), ray.t_max()), (0.0, f32::INFINITY));
    /// assert_eq!(ray.at(1.0), Point3::new(1.0, 2.0, 1.0)); // not normalized: t = 1 is 2 units away
    /// ```
    pub fn new(
        origin: impl Into<mint::Point3<f32>>,
        direction: impl Into<mint::Vector3<f32>>,
    ) -> Ray {
        Ray::with_range(origin, direction, 0.0, f32::INFINITY)
    }

    /// A ray over `t` in `[t_min, t_max]` (`t_max` may be `+inf`).
    ///
    /// Never fails: a ray that cannot hit anything (NaN, infinite or out-of-range origin or
    /// direction, zero direction, NaN range, `t_min > t_max`) is kept as given, reports
    /// [`is_valid`](Ray::is_valid) `false`, and every query answers "no hit" for it.
    ///
    /// ```
    /// use meshray::Ray;
    /// use nalgebra::{Point3, Vector3};
    ///
    /// // A line of sight from a to b: t in [0, 1] covers exactly the segment.
    /// let (a, b) = (Point3::new(0.0, 1.0, 0.0), Point3::new(4.0, 1.0, 0.0));
    /// let segment = Ray::with_range(a, b - a, 0.0, 1.0);
    /// assert_eq!(segment.at(segment.t_max()), b);
    /// // Never a panic: a zero direction gives a ray that hits nothing.
    /// assert!(!Ray::with_range(a, Vector3::zeros(), 0.0, 1.0).is_valid());
    /// ```
    #[inline]
    pub fn with_range(
        origin: impl Into<mint::Point3<f32>>,
        direction: impl Into<mint::Vector3<f32>>,
        t_min: f32,
        t_max: f32,
    ) -> Ray {
        let origin = Point3::from(origin.into());
        let direction = Vector3::from(direction.into());
        Ray {
            origin,
            direction,
            t_min,
            t_max,
            inv_direction: direction.map(|d| 1.0 / d),
            negative: [
                direction.x.is_sign_negative(),
                direction.y.is_sign_negative(),
                direction.z.is_sign_negative(),
            ],
            usable: usable(&origin, &direction),
        }
    }

    /// The same ray with another range, its cached reciprocals, signs and checks kept (users
    /// build rays with [`Ray::with_range`]).
    #[inline(always)]
    pub(crate) fn with_t_range(&self, t_min: f32, t_max: f32) -> Ray {
        Ray {
            t_min,
            t_max,
            ..*self
        }
    }

    /// The same direction from another origin, over another range: the cached reciprocals
    /// and signs kept, the checks made again for the origin.
    #[inline(always)]
    pub(crate) fn with_origin(&self, origin: [f32; 3], t_min: f32, t_max: f32) -> Ray {
        let origin = Point3::from(origin);
        Ray {
            origin,
            t_min,
            t_max,
            usable: usable(&origin, &self.direction),
            ..*self
        }
    }

    /// Where the ray starts at `t = 0`.
    ///
    /// ```
    /// # use meshray::Ray; use nalgebra::{Point3, Vector3};
    /// let ray = Ray::new(Point3::new(1.0, 2.0, 3.0), Vector3::y());
    /// assert_eq!(ray.origin(), Point3::new(1.0, 2.0, 3.0));
    /// assert_eq!(ray.origin(), ray.at(0.0));
    /// ```
    pub fn origin(&self) -> Point3<f32> {
        self.origin
    }

    /// The direction, as given (not normalized).
    ///
    /// ```
    /// # use meshray::Ray; use nalgebra::{Point3, Vector3};
    /// let ray = Ray::new(Point3::origin(), Vector3::new(0.0, 3.0, 4.0));
    /// assert_eq!(ray.direction().norm(), 5.0); // kept as given
    /// ```
    pub fn direction(&self) -> Vector3<f32> {
        self.direction
    }

    /// The origin's coordinates, borrowed: indexed by an axis chosen at run time, they are
    /// read where the ray is rather than from a copy made for the purpose.
    #[inline(always)]
    pub(crate) fn origin_axes(&self) -> &[f32; 3] {
        self.origin.coords.as_ref()
    }

    /// The direction's components, borrowed (see [`Ray::origin_axes`]).
    #[inline(always)]
    pub(crate) fn direction_axes(&self) -> &[f32; 3] {
        self.direction.as_ref()
    }

    /// `1 / direction`, per component; `±inf` where a component is `±0`.
    pub(crate) fn inv_direction(&self) -> Vector3<f32> {
        self.inv_direction
    }

    /// Per axis, whether the direction's sign bit is set (true for `-0.0` too), which
    /// decides which slab plane the ray meets first.
    pub(crate) fn negative(&self) -> [bool; 3] {
        self.negative
    }

    /// The start of the range.
    ///
    /// ```
    /// # use meshray::Ray; use nalgebra::{Point3, Vector3};
    /// let ray = Ray::with_range(Point3::origin(), Vector3::x(), 0.5, 2.0);
    /// assert_eq!(ray.t_min(), 0.5);
    /// ```
    pub fn t_min(&self) -> f32 {
        self.t_min
    }

    /// The end of the range (may be `+inf`).
    ///
    /// ```
    /// # use meshray::Ray; use nalgebra::{Point3, Vector3};
    /// assert_eq!(Ray::new(Point3::origin(), Vector3::x()).t_max(), f32::INFINITY);
    /// assert_eq!(Ray::with_range(Point3::origin(), Vector3::x(), 0.0, 2.0).t_max(), 2.0);
    /// ```
    pub fn t_max(&self) -> f32 {
        self.t_max
    }

    /// The point at parameter `t`.
    ///
    /// ```
    /// # use meshray::Ray; use nalgebra::{Point3, Vector3};
    /// let ray = Ray::new(Point3::new(1.0, 0.0, 0.0), Vector3::new(0.0, 2.0, 0.0));
    /// assert_eq!(ray.at(1.5), Point3::new(1.0, 3.0, 0.0));
    /// ```
    pub fn at(&self, t: f32) -> Point3<f32> {
        self.origin + self.direction * t
    }

    /// The largest origin coordinate magnitude a valid ray may have: 2^41 ≈ 2.2e12, twice
    /// [`Mesh::MAX_COORDINATE`](crate::Mesh::MAX_COORDINATE).
    pub const MAX_ORIGIN: f32 = 2_199_023_255_552.0;
    /// The largest direction component magnitude a valid ray may have: 2^40 ≈ 1.1e12.
    pub const MAX_DIRECTION: f32 = 1_099_511_627_776.0;
    /// The smallest magnitude the direction's largest component may have: 2^-40 ≈ 9.1e-13.
    pub const MIN_DIRECTION: f32 = 1.0 / 1_099_511_627_776.0;

    /// Whether the ray can hit anything: an origin within ±[`MAX_ORIGIN`](Ray::MAX_ORIGIN),
    /// a direction whose largest component has a magnitude in
    /// [[`MIN_DIRECTION`](Ray::MIN_DIRECTION), [`MAX_DIRECTION`](Ray::MAX_DIRECTION)] (so not
    /// zero, NaN or infinite), and a range with `t_min <= t_max` and no NaN. Queries check
    /// this once per ray, so an invalid ray costs no traversal.
    ///
    /// The bounds are where the promise of exactness ends: with a mesh inside
    /// ±[`Mesh::MAX_COORDINATE`](crate::Mesh::MAX_COORDINATE), every product in the triangle
    /// tests stays below about 2^125 and every `t` below 2^122, far from f32's overflow at
    /// 2^128, so no test meets an infinity. Beyond them an overflow could turn a hit into a
    /// miss, or into a hit with NaN barycentrics; refusing such a ray whole is the
    /// documented alternative.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    /// # let bvh = Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// let nan = Ray::new(Point3::new(f32::NAN, 1.0, 10.0), -Vector3::z());
    /// assert!(!nan.is_valid());
    /// // An invalid ray is a documented "no hit", never a panic.
    /// assert_eq!(meshray::diagnostics::closest_hit_with_cost(&bvh, &nan, &QueryOptions::default()).1.boxes, 0);
    /// assert!(bvh.closest_hit(&nan, &QueryOptions::default()).is_none());
    /// // So is one from beyond the range.
    /// assert!(!Ray::new(Point3::new(0.0, 1.0, 1e13), -Vector3::z()).is_valid());
    /// assert!(Ray::new(Point3::new(0.0, 1.0, Ray::MAX_ORIGIN), -Vector3::z() * 1e-12).is_valid());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    #[inline]
    pub fn is_valid(&self) -> bool {
        // `<=` fails for a NaN end.
        self.usable && self.t_min <= self.t_max
    }
}

/// The origin and direction part of [`Ray::is_valid`].
#[inline]
fn usable(origin: &Point3<f32>, direction: &Vector3<f32>) -> bool {
    let largest = |v: &[f32]| v.iter().fold(0.0f32, |m, c| m.max(c.abs()));
    let (o, d) = (origin.coords.as_slice(), direction.as_slice());
    // NaN fails each comparison (`f32::max` skips a NaN, so test every component).
    o.iter().all(|c| c.abs() <= Ray::MAX_ORIGIN)
        && d.iter().all(|c| c.abs() <= Ray::MAX_DIRECTION)
        && largest(d) >= Ray::MIN_DIRECTION
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caches_inverse_and_signs() {
        let r = Ray::new(Point3::origin(), Vector3::new(2.0, -0.0, 0.0));
        assert_eq!(r.inv_direction().x, 0.5);
        assert_eq!(r.inv_direction().y, f32::NEG_INFINITY);
        assert_eq!(r.inv_direction().z, f32::INFINITY);
        assert_eq!(r.negative(), [false, true, false]);
        assert!(r.is_valid());
    }

    #[test]
    fn invalid_rays() {
        let o = Point3::origin();
        let d = Vector3::x();
        assert!(!Ray::new(o, Vector3::zeros()).is_valid());
        assert!(!Ray::new(o, Vector3::new(f32::NAN, 1.0, 0.0)).is_valid());
        assert!(!Ray::new(o, Vector3::new(f32::INFINITY, 1.0, 0.0)).is_valid());
        assert!(!Ray::new(Point3::new(f32::NAN, 0.0, 0.0), d).is_valid());
        assert!(!Ray::new(Point3::new(0.0, f32::NEG_INFINITY, 0.0), d).is_valid());
        assert!(!Ray::with_range(o, d, 2.0, 1.0).is_valid());
        assert!(!Ray::with_range(o, d, f32::NAN, 1.0).is_valid());
        assert!(!Ray::with_range(o, d, 0.0, f32::NAN).is_valid());
        assert!(Ray::with_range(o, d, 1.0, 1.0).is_valid());
        assert!(Ray::with_range(o, d, -1.0, f32::INFINITY).is_valid());
        // the range where the arithmetic is exact, and just beyond it
        let big = Ray::MAX_ORIGIN;
        assert!(Ray::new(Point3::new(-big, big, 0.0), d).is_valid());
        assert!(!Ray::new(Point3::new(0.0, big * 1.0001, 0.0), d).is_valid());
        assert!(Ray::new(o, Vector3::new(0.0, -Ray::MAX_DIRECTION, 1.0)).is_valid());
        assert!(!Ray::new(o, Vector3::new(0.0, -Ray::MAX_DIRECTION * 1.0001, 1.0)).is_valid());
        assert!(Ray::new(o, Vector3::new(0.0, Ray::MIN_DIRECTION, 1e-30)).is_valid());
        assert!(!Ray::new(o, Vector3::new(0.0, Ray::MIN_DIRECTION * 0.9999, 1e-30)).is_valid());
        assert!(!Ray::new(o, Vector3::new(f32::NAN, 1.0, 1.0)).is_valid());
    }
}
