//! The ray–triangle test (the narrow phase): Cramer's rule, and the choice between it and the
//! watertight test (`watertight`) that every query makes through [`QueryOptions`].

use crate::Ray;
use nalgebra::{Point3, Vector3};

/// Which faces a query may hit. The front face is the side from which the triangle's
/// corners `A, B, C` appear counter-clockwise (OBJ's convention for outward faces).
///
/// ```
/// use meshray::{Culling, QueryOptions, Ray};
/// use meshray::geometry::intersect_triangle;
/// use nalgebra::{Point3, Vector3};
///
/// // Counter-clockwise seen from +z: the front face looks up the z axis.
/// let (a, b, c) = (Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0));
/// let down = Ray::new(Point3::new(0.2, 0.2, 1.0), Vector3::new(0.0, 0.0, -1.0)); // meets the front
/// let up = Ray::new(Point3::new(0.2, 0.2, -1.0), Vector3::new(0.0, 0.0, 1.0)); // meets the back
/// for (culling, hits_down, hits_up) in [(Culling::None, true, true), (Culling::Back, true, false), (Culling::Front, false, true)] {
///     let options = QueryOptions { culling, ..Default::default() };
///     assert_eq!(intersect_triangle(&down, a, b, c, &options).is_some(), hits_down);
///     assert_eq!(intersect_triangle(&up, a, b, c, &options).is_some(), hits_up);
/// }
/// assert_eq!(Culling::default(), Culling::None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Culling {
    /// Both faces hit (two-sided): the default, right for picking.
    #[default]
    None,
    /// Back faces are culled: only front faces hit.
    Back,
    /// Front faces are culled: only back faces hit.
    Front,
}

/// Where a ray meets a triangle: the ray parameter and the barycentrics of the point,
/// `P = (1 − u − v)·A + u·B + v·C`.
///
/// ```
/// use meshray::{QueryOptions, Ray};
/// use meshray::geometry::intersect_triangle;
/// use nalgebra::{Point3, Vector3};
///
/// let (a, b, c) = (Point3::new(0.0, 0.0, 0.0), Point3::new(2.0, 0.0, 0.0), Point3::new(0.0, 2.0, 0.0));
/// let ray = Ray::new(Point3::new(0.5, 1.0, 3.0), Vector3::new(0.0, 0.0, -1.0));
/// let hit = intersect_triangle(&ray, a, b, c, &QueryOptions::default()).unwrap();
/// let p = a.coords * (1.0 - hit.u - hit.v) + b.coords * hit.u + c.coords * hit.v;
/// assert_eq!(Point3::from(p), ray.at(hit.t));
/// assert_eq!((hit.t, hit.u, hit.v), (3.0, 0.25, 0.5));
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleHit {
    /// The ray parameter of the hit, in the ray's range.
    pub t: f32,
    /// Weight of the second corner `B`.
    pub u: f32,
    /// Weight of the third corner `C`.
    pub v: f32,
}

/// Options of a query, which are those of the triangle test it applies
/// ([`intersect_triangle`]): which faces count, and which test. The ray's own
/// `[t_min, t_max]` is the range searched.
///
/// ```
/// use meshray::{Culling, QueryOptions};
/// let front_only = QueryOptions { culling: Culling::Back, ..Default::default() };
/// assert_ne!(front_only, QueryOptions::default());
/// assert!(QueryOptions::default().watertight);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueryOptions {
    /// Which faces may be hit; both by default.
    pub culling: Culling,
    /// The watertight triangle test of Woop, Benthin and Wald (2013), **on by default**:
    /// no ray slips between triangles that share an edge or a vertex. `false` selects
    /// Cramer's rule, a few per cent faster (see the benchmarks),
    /// which can let a ray aimed exactly at a shared edge or vertex pass between the two
    /// triangles (`tests/leaks.rs` counts such leaks; docs/robustness.md gives the figures).
    pub watertight: bool,
}

impl Default for QueryOptions {
    /// Both faces, the watertight test.
    fn default() -> Self {
        QueryOptions {
            culling: Culling::None,
            watertight: true,
        }
    }
}

/// Intersects a ray with the triangle `a, b, c` as every query does: with the options'
/// culling, by the watertight test of Woop, Benthin and Wald (2013) by default, or by
/// Cramer's rule with `watertight: false` (both described in the crate's source:
/// `src/watertight.rs`, `src/triangle.rs`). `None` for a miss, a hit outside the ray's range,
/// a culled face, a ray parallel to the plane, a degenerate triangle or an invalid ray.
/// Barycentrics follow `P = (1 − u − v)·A + u·B + v·C`.
///
/// ```
/// use meshray::{Culling, QueryOptions, Ray};
/// use meshray::geometry::intersect_triangle;
/// use nalgebra::{Point3, Vector3};
///
/// let (a, b, c) = (Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0));
/// let ray = Ray::new(Point3::new(0.25, 0.5, 2.0), Vector3::new(0.0, 0.0, -1.0));
/// let hit = intersect_triangle(&ray, a, b, c, &QueryOptions::default()).unwrap();
/// assert_eq!((hit.t, hit.u, hit.v), (2.0, 0.25, 0.5));
/// // Exactly through the edge B–C: the watertight test (the default) hits it.
/// let edge = Ray::new(Point3::new(0.5, 0.5, 2.0), Vector3::new(0.0, 0.0, -1.0));
/// let hit = intersect_triangle(&edge, a, b, c, &QueryOptions::default()).unwrap();
/// assert_eq!((hit.t, hit.u + hit.v), (2.0, 1.0));
/// // Seen from below the triangle is a back face; Cramer's rule, front faces only.
/// let up = Ray::new(Point3::new(0.25, 0.5, -2.0), Vector3::new(0.0, 0.0, 1.0));
/// let front_only = QueryOptions { culling: Culling::Back, watertight: false };
/// assert!(intersect_triangle(&up, a, b, c, &front_only).is_none());
/// ```
pub fn intersect_triangle(
    ray: &Ray,
    a: impl Into<mint::Point3<f32>>,
    b: impl Into<mint::Point3<f32>>,
    c: impl Into<mint::Point3<f32>>,
    options: &QueryOptions,
) -> Option<TriangleHit> {
    let [a, b, c] = [a.into(), b.into(), c.into()].map(Point3::from);
    if options.watertight {
        crate::watertight::intersect_watertight(ray, &a, &b, &c, options.culling)
    } else {
        intersect_cramer(ray, &a, &b, &c, options.culling)
    }
}

/// Intersects a ray with the triangle `a, b, c` by Cramer's rule (the method
/// is described below); `None` for a miss, a hit outside the ray's range, a culled face, a ray
/// parallel to the plane, a degenerate triangle or an invalid ray.
///
/// A point of the triangle `A, B, C` is `A + u·(B − A) + v·(C − A)` with `u, v >= 0` and
/// `u + v <= 1`; a point of the ray is `O + t·d`. Equating them gives the 3×3 system
///
/// ```text
/// [e1  e2  −d] · (u, v, t)ᵀ = s        e1 = B − A,  e2 = C − A,  s = O − A
/// ```
///
/// solved by Cramer's rule: `D = det[e1, e2, −d]`, `u = D1/D`, `v = D2/D`, `t = D3/D`, where
/// `Dk` is `D` with column `k` replaced by `s`. Each determinant is a scalar triple product;
/// with `n = e1 × e2` and `w = d × s` they are
///
/// ```text
/// D = −n·d     D1 = −e2·w     D2 = e1·w     D3 = n·s
/// ```
///
/// so a test costs two cross products and four dot products. The barycentric conditions are
/// checked on the **signs** of `D1`, `D2` and `D1 + D2` against `D` before anything is
/// divided; only a ray that passes them pays for divisions: `t = D3/D` evaluated in `f64`
/// (the `f32` `D3` loses digits to cancellation when the corners lie far from the origin
/// compared with `t`, and the BVH's box culling needs `t` within a few ulps), then the one
/// reciprocal `1/D` for `u` and `v`.
///
/// `D > 0` exactly when the ray meets the side from which `A, B, C` turn counter-clockwise
/// (the front face, whose normal `n` points against the ray). A ray parallel to the plane has
/// `D = 0`, and so does every ray against a degenerate (zero-area) triangle whose cross product
/// rounds to zero: both never hit. So does a ray within about 1e-12 radians of the plane
/// (`|D| <= 2^-40·|n|₁·|d|₁`), where D is rounding noise. A NaN anywhere fails every
/// comparison and never hits.
///
/// The hit's barycentrics follow the convention `P = (1 − u − v)·A + u·B + v·C`.
///
pub(crate) fn intersect_cramer(
    ray: &Ray,
    a: &Point3<f32>,
    b: &Point3<f32>,
    c: &Point3<f32>,
    culling: Culling,
) -> Option<TriangleHit> {
    if !ray.is_valid() {
        return None;
    }
    let tri = LeafTriangle::new(a, b, c);
    tri.intersect(
        ray.origin().coords.as_ref(),
        ray.direction().as_ref(),
        ray.t_min(),
        ray.t_max(),
        culling,
    )
}

/// A triangle as the leaves store it: its three corners, exactly as the mesh gives them,
/// 36 bytes, in leaf order so a leaf's triangles are read in one sweep. Corners rather than
/// a corner and two edges: the watertight test needs the shared vertices bit for bit (an
/// edge `B − A` rounds), and recomputing the edges costs the Cramer test nothing measurable.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub(crate) struct LeafTriangle {
    pub a: [f32; 3],
    pub b: [f32; 3],
    pub c: [f32; 3],
}

/// A ray within about 1e-12 radians of the triangle's plane (`|n·d| <= 2^-40·|n|₁·|d|₁`): D is
/// then rounding noise and no hit is reported, as for an exactly parallel ray (the "D ≈ 0"
/// rule). Checked only for candidates that passed the barycentric tests.
#[inline(always)]
pub(crate) fn nearly_parallel(abs_det: f32, n: &[f32; 3], d: &[f32; 3]) -> bool {
    let l1 = |v: &[f32; 3]| v[0].abs() + v[1].abs() + v[2].abs();
    abs_det <= (l1(n) * (1.0 / (1u64 << 40) as f32)) * l1(d)
}

#[inline(always)]
pub(crate) fn sub(a: &[f32; 3], b: &[f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

#[inline(always)]
pub(crate) fn cross(a: &[f32; 3], b: &[f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

#[inline(always)]
pub(crate) fn dot(a: &[f32; 3], b: &[f32; 3]) -> f32 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Where the ray meets the triangle's plane: `t = n·(A − O) / n·d` with
/// `n = (B − A) × (C − A)`, computed in `f64` from the `f32` inputs and rounded once (`+0.0`,
/// never `-0.0`, so equal `t` are equal bits). Both triangle tests take `t` from here once a
/// candidate has passed their `f32` inside/outside tests.
///
/// Why: in `f32`, `t` comes out of a difference of terms as large as the corners' distance
/// from the origin, so a large triangle hit from close by (a floor under a camera) gets a
/// `t` tens of ulps off. The traversal culls a box whose entry lies beyond the best `t` so
/// far (plus 2^-20 of slack), so such an error could hide a nearer, nearly coplanar
/// triangle that a brute force finds; seen on the conference room with the watertight test
/// (18 ulps). In `f64` the error is 2^29 times smaller, well inside the slack. The tests
/// then keep it within the triangle's box ([`box_bounds`]), for a ray that grazes the plane.
#[inline]
pub(crate) fn plane_t(tri: &LeafTriangle, origin: &[f32; 3], direction: &[f32; 3]) -> f32 {
    let wide = |p: &[f32; 3]| p.map(f64::from);
    let (a, b, c) = (wide(&tri.a), wide(&tri.b), wide(&tri.c));
    let (o, d) = (wide(origin), wide(direction));
    let sub = |p: [f64; 3], q: [f64; 3]| [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
    let dot = |p: [f64; 3], q: [f64; 3]| p[0] * q[0] + p[1] * q[1] + p[2] * q[2];
    let (e1, e2) = (sub(b, a), sub(c, a));
    let n = [
        e1[1] * e2[2] - e1[2] * e2[1],
        e1[2] * e2[0] - e1[0] * e2[2],
        e1[0] * e2[1] - e1[1] * e2[0],
    ];
    (dot(n, sub(a, o)) / dot(n, d)) as f32 + 0.0
}

/// Where the ray enters and leaves the triangle's bounding box, as the walks' slab test
/// computes them: per axis `(bound − o)·(1/d)` in `f32`, the bound the ray meets first (the
/// corners' least coordinate, or their greatest going down) for the entry and the one it
/// meets last for the exit, the greatest entry and the least exit of the three (a `NaN` plane
/// bounds nothing; `(−∞, +∞)` when none does). The exact walk computes both for four
/// triangles at once with the same operations.
///
/// Why: a hit's `t` is kept between them ([`within_box`]). The inside tests decide in `f32`
/// whether the ray passes through the triangle, and a ray through a vertex or along an edge
/// passes it within their rounding; where the ray grazes the plane (a degree off it, say),
/// the plane's `t` of such a ray can lie far from the triangle, before its box or past it.
/// The walks cull a box entered after the best `t` so far (plus `2⁻²⁰` of slack), so a `t`
/// before the box hid the box of a triangle sharing the vertex that the brute force answers
/// (seen on the Stanford bunny and the asset scene, rays through vertices); they cull a box
/// the range starts after, so with `t_min` between the exit and a `t` past it the brute
/// force answered a hit that no walk reaches (tests/grazing.rs: a fifth of the grazing hits
/// there). Kept within its own box, a hit's `t` is never before the entry nor after the exit
/// of any box that holds its triangle (that box's planes lie no further in, and the rounding
/// is monotone), so no walk culls it.
#[inline(always)]
pub(crate) fn box_bounds(
    tri: &LeafTriangle,
    origin: &[f32; 3],
    inv: &[f32; 3],
    negative: &[bool; 3],
) -> (f32, f32) {
    let (mut enter, mut exit) = (f32::NEG_INFINITY, f32::INFINITY);
    for k in 0..3 {
        let (a, b, c) = (tri.a[k], tri.b[k], tri.c[k]);
        // The corners' least and greatest coordinates, as x86's `min`/`max` choose them (the
        // first operand only when strictly beyond).
        let least = {
            let m = if a < b { a } else { b };
            if m < c { m } else { c }
        };
        let greatest = {
            let m = if a > b { a } else { b };
            if m > c { m } else { c }
        };
        let (first, last) = if negative[k] {
            (greatest, least)
        } else {
            (least, greatest)
        };
        let near = (first - origin[k]) * inv[k];
        let far = (last - origin[k]) * inv[k];
        // `NaN > enter` and `NaN < exit` are false.
        if near > enter {
            enter = near;
        }
        if far < exit {
            exit = far;
        }
    }
    (enter, exit)
}

/// A hit's `t` raised to its triangle's box entry (see [`box_bounds`]) where that lies more
/// than `2⁻²²` of `t` beyond it: within that, the walks' slack (`2⁻²⁰`) covers it, and the
/// plane's `t` keeps its accuracy (a floor's box is entered where its plane is, give or
/// take the entry's own rounding).
#[inline(always)]
pub(crate) fn raised(t: f32, entry: f32) -> f32 {
    if entry > t + t.abs() * (1.0 / (1u32 << 22) as f32) {
        entry
    } else {
        t
    }
}

/// A hit's `t` kept within its triangle's own box: [`raised`] to the entry, then lowered to
/// the exit ([`box_bounds`]) where that lies more than `2⁻²²` of `t` before it, the walks'
/// slack covering the rest. Where the ray misses the box by rounding (its entry after its
/// exit) it is lowered to the entry instead, so a hit's `t` is never before its own box's
/// entry (a walk prunes a box entered after its best hit) and otherwise as near the exit as
/// that allows. Never `-0.0`.
#[inline(always)]
pub(crate) fn within_box(t: f32, entry: f32, exit: f32) -> f32 {
    let t = raised(t, entry);
    let cap = if exit >= entry { exit } else { entry };
    // `+ 0.0`: a box's entry or exit can be `-0.0` (a corner at the origin, a negative
    // reciprocal), and equal `t` are equal bits, as `plane_t`'s are.
    let t = if cap < t - t.abs() * (1.0 / (1u32 << 22) as f32) {
        cap
    } else {
        t
    };
    t + 0.0
}

/// [`plane_t`] for the watertight test, with the two rules that need the plane's normal, here
/// the f64 one: `None` for a degenerate triangle (a normal exactly zero: a segment or a
/// point) and for a ray within about 1e-12 radians of the plane (`|n·d| <= 2^-40·|n|₁·|d|₁`,
/// as [`nearly_parallel`]). Computing the normal once in f64 for both, instead of once in f32
/// for the rules and again in f64 for `t`, is what the watertight test's candidates cost.
#[inline]
pub(crate) fn plane_t_checked(
    tri: &LeafTriangle,
    origin: &[f32; 3],
    direction: &[f32; 3],
) -> Option<f32> {
    let wide = |p: &[f32; 3]| p.map(f64::from);
    let (a, b, c) = (wide(&tri.a), wide(&tri.b), wide(&tri.c));
    let (o, d) = (wide(origin), wide(direction));
    let sub = |p: [f64; 3], q: [f64; 3]| [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
    let dot = |p: [f64; 3], q: [f64; 3]| p[0] * q[0] + p[1] * q[1] + p[2] * q[2];
    let l1 = |p: [f64; 3]| p[0].abs() + p[1].abs() + p[2].abs();
    let (e1, e2) = (sub(b, a), sub(c, a));
    let n = [
        e1[1] * e2[2] - e1[2] * e2[1],
        e1[2] * e2[0] - e1[0] * e2[2],
        e1[0] * e2[1] - e1[1] * e2[0],
    ];
    let along = dot(n, d);
    // `!(>)`: a NaN fails too (it cannot arise from valid inputs).
    if !(along.abs() > l1(n) * (1.0 / (1u64 << 40) as f64) * l1(d)) {
        return None;
    }
    Some((dot(n, sub(a, o)) / along) as f32 + 0.0)
}

/// The end of the Cramer test for a ray that passed the sign tests (`D > 0` after the flip,
/// `D1, D2 >= 0`, `D1 + D2 <= D`): the nearly-parallel rule, `t` from the plane, the range,
/// and `u, v` from one reciprocal. Shared by the scalar test and the packet test, so both
/// answer alike bit for bit.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn accept(
    tri: &LeafTriangle,
    n: &[f32; 3],
    abs_det: f32,
    d1: f32,
    d2: f32,
    origin: &[f32; 3],
    direction: &[f32; 3],
    t_min: f32,
    t_max: f32,
) -> Option<TriangleHit> {
    if nearly_parallel(abs_det, n, direction) {
        return None;
    }
    let (inv, negative) = (
        direction.map(|d| 1.0 / d),
        direction.map(f32::is_sign_negative),
    );
    let (entry, exit) = box_bounds(tri, origin, &inv, &negative);
    let t = within_box(plane_t(tri, origin, direction), entry, exit);
    if !(t >= t_min && t <= t_max && t < f32::INFINITY) {
        return None;
    }
    let inv = 1.0 / abs_det;
    // `+ 0.0` turns a -0.0 (from the sign flip) into +0.0 for tidy output.
    Some(TriangleHit {
        t,
        u: d1 * inv + 0.0,
        v: d2 * inv + 0.0,
    })
}

impl LeafTriangle {
    pub fn new(a: &Point3<f32>, b: &Point3<f32>, c: &Point3<f32>) -> LeafTriangle {
        LeafTriangle {
            a: a.coords.into(),
            b: b.coords.into(),
            c: c.coords.into(),
        }
    }

    /// The Cramer test; `t` must land in `[t_min, t_max]`.
    #[inline(always)]
    pub fn intersect(
        &self,
        origin: &[f32; 3],
        direction: &[f32; 3],
        t_min: f32,
        t_max: f32,
        culling: Culling,
    ) -> Option<TriangleHit> {
        let e1 = sub(&self.b, &self.a);
        let e2 = sub(&self.c, &self.a);
        let n = cross(&e1, &e2);
        let det = -dot(&n, direction);
        match culling {
            Culling::None => {}
            Culling::Back if det > 0.0 => {}
            Culling::Front if det < 0.0 => {}
            _ => return None,
        }
        let s = sub(origin, &self.a);
        let w = cross(direction, &s);
        // Flip every numerator by the sign of D, so the tests below read as for D > 0.
        let sign = det.to_bits() & 0x8000_0000;
        let flip = |x: f32| f32::from_bits(x.to_bits() ^ sign);
        let abs_det = flip(det);
        let d1 = flip(-dot(&e2, &w));
        let d2 = flip(dot(&e1, &w));
        // `!(x >= 0)` rather than `x < 0`, so that NaN rejects.
        if !(abs_det > 0.0 && d1 >= 0.0 && d2 >= 0.0 && d1 + d2 <= abs_det) {
            return None;
        }
        accept(self, &n, abs_det, d1, d2, origin, direction, t_min, t_max)
    }

    /// The unnormalized geometric normal `(B − A) × (C − A)`.
    pub fn normal(&self) -> Vector3<f32> {
        Vector3::from(cross(&sub(&self.b, &self.a), &sub(&self.c, &self.a)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::{p, unit_triangle as tri};

    fn cast(o: Point3<f32>, d: Vector3<f32>, culling: Culling) -> Option<TriangleHit> {
        let [a, b, c] = tri();
        intersect_cramer(&Ray::new(o, d), &a, &b, &c, culling)
    }

    #[test]
    fn hit_gives_t_and_barycentrics() {
        let h = cast(
            p(0.25, 0.25, 3.0),
            Vector3::new(0.0, 0.0, -2.0),
            Culling::None,
        )
        .unwrap();
        assert_eq!((h.t, h.u, h.v), (1.5, 0.25, 0.25));
        let [a, b, c] = tri();
        let point = a.coords * (1.0 - h.u - h.v) + b.coords * h.u + c.coords * h.v;
        assert_eq!(point, Vector3::new(0.25, 0.25, 0.0));
    }

    #[test]
    fn misses_outside_each_edge() {
        let d = Vector3::new(0.0, 0.0, -1.0);
        assert!(cast(p(-0.1, 0.5, 1.0), d, Culling::None).is_none()); // u < 0
        assert!(cast(p(0.5, -0.1, 1.0), d, Culling::None).is_none()); // v < 0
        assert!(cast(p(0.6, 0.6, 1.0), d, Culling::None).is_none()); // u + v > 1
    }

    #[test]
    fn edges_and_corners_are_inside() {
        let d = Vector3::new(0.0, 0.0, -1.0);
        for o in [
            p(0.0, 0.5, 1.0),
            p(0.5, 0.0, 1.0),
            p(0.5, 0.5, 1.0),
            p(0.0, 0.0, 1.0),
            p(1.0, 0.0, 1.0),
        ] {
            assert!(cast(o, d, Culling::None).is_some(), "{o}");
        }
    }

    #[test]
    fn culling_modes() {
        let down = (p(0.2, 0.2, 1.0), Vector3::new(0.0, 0.0, -1.0)); // sees the front
        let up = (p(0.2, 0.2, -1.0), Vector3::new(0.0, 0.0, 1.0)); // sees the back
        assert!(cast(down.0, down.1, Culling::None).is_some());
        assert!(cast(up.0, up.1, Culling::None).is_some());
        assert!(cast(down.0, down.1, Culling::Back).is_some());
        assert!(cast(up.0, up.1, Culling::Back).is_none());
        assert!(cast(down.0, down.1, Culling::Front).is_none());
        assert!(cast(up.0, up.1, Culling::Front).is_some());
    }

    #[test]
    fn parallel_and_in_plane_rays_never_hit() {
        assert!(cast(p(0.2, 0.2, 1.0), Vector3::new(1.0, 0.0, 0.0), Culling::None).is_none());
        // lying in the triangle's plane, through its interior
        assert!(
            cast(
                p(-1.0, 0.2, 0.0),
                Vector3::new(1.0, 0.0, 0.0),
                Culling::None
            )
            .is_none()
        );
    }

    #[test]
    fn rays_within_rounding_of_the_plane_never_hit() {
        // dx = 1e-38: the ray lies in the plane x = -0.0625 of the triangle, up to rounding
        let r = Ray::new(
            p(-0.0625, -3.3125, 16.03125),
            Vector3::new(f32::MIN_POSITIVE, -3.9375, -1024.0),
        );
        let (a, b, c) = (
            p(-0.0625, -10.0, 0.0),
            p(-0.0625, 10.0, 0.0),
            p(-0.0625, 0.0, 20.0),
        );
        assert!(intersect_cramer(&r, &a, &b, &c, Culling::None).is_none());
        // a steep but real crossing still hits
        let r = Ray::new(
            p(-0.0625 - 1e-3, 0.0, 6.0),
            Vector3::new(1.0, -3.9375, -1024.0),
        );
        assert!(intersect_cramer(&r, &a, &b, &c, Culling::None).is_some());
    }

    #[test]
    fn degenerate_triangles_never_hit() {
        let r = Ray::new(p(0.5, 0.0, 1.0), Vector3::new(0.0, 0.0, -1.0));
        let c = Culling::None;
        // collinear
        assert!(
            intersect_cramer(
                &r,
                &p(0.0, 0.0, 0.0),
                &p(1.0, 0.0, 0.0),
                &p(2.0, 0.0, 0.0),
                c
            )
            .is_none()
        );
        // repeated vertex
        assert!(
            intersect_cramer(
                &r,
                &p(0.0, 0.0, 0.0),
                &p(0.0, 0.0, 0.0),
                &p(1.0, 0.0, 0.0),
                c
            )
            .is_none()
        );
        // a point
        let q = p(0.5, 0.0, 0.0);
        assert!(intersect_cramer(&r, &q, &q, &q, c).is_none());
    }

    #[test]
    fn range_is_respected() {
        let r = Ray::new(p(0.2, 0.2, 1.0), Vector3::new(0.0, 0.0, -1.0));
        let [a, b, c] = tri();
        assert!(intersect_cramer(&r.with_t_range(0.0, 0.99), &a, &b, &c, Culling::None).is_none());
        assert!(intersect_cramer(&r.with_t_range(1.01, 5.0), &a, &b, &c, Culling::None).is_none());
        assert_eq!(
            intersect_cramer(&r.with_t_range(1.0, 1.0), &a, &b, &c, Culling::None)
                .unwrap()
                .t,
            1.0
        );
        // behind the origin
        let back = Ray::new(p(0.2, 0.2, 1.0), Vector3::new(0.0, 0.0, 1.0));
        assert!(intersect_cramer(&back, &a, &b, &c, Culling::None).is_none());
    }

    #[test]
    fn nan_never_hits() {
        let nan = f32::NAN;
        let d = Vector3::new(0.0, 0.0, -1.0);
        assert!(cast(p(nan, 0.2, 1.0), d, Culling::None).is_none());
        assert!(
            cast(
                p(0.2, 0.2, 1.0),
                Vector3::new(nan, 0.0, -1.0),
                Culling::None
            )
            .is_none()
        );
        let r = Ray::new(p(0.2, 0.2, 1.0), d);
        let t = LeafTriangle::new(&p(nan, 0.0, 0.0), &p(1.0, 0.0, 0.0), &p(0.0, 1.0, 0.0));
        let o = r.origin().coords.into();
        assert!(
            t.intersect(&o, &d.into(), 0.0, f32::INFINITY, Culling::None)
                .is_none()
        );
    }

    /// The f32 result within `ulps` units in the last place of the exact rational `num/den`.
    fn within_ulps(got: f32, num: i64, den: i64, ulps: f32) -> bool {
        let exact = num as f64 / den as f64; // correctly rounded in f64: far finer than f32
        let ulp = (exact as f32).abs().max(f32::MIN_POSITIVE) * f32::EPSILON;
        (f64::from(got) - exact).abs() <= f64::from(ulps * ulp)
    }

    #[test]
    fn small_integer_inputs_answer_as_exact_arithmetic_does() {
        // An independent oracle: with integer corners, origin and direction in [-16, 16],
        // every determinant of Cramer's rule is an exact i64 here (and exact in f32 inside
        // the test too, being below 2^24), so the hit or miss must be exactly the exact
        // rule's, and u, v, t within an ulp or two of the exact quotients.
        let mut rng = crate::test_support::Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut int = || rng.below(33) as i64 - 16;
        let (mut hits, mut misses) = (0, 0);
        for _ in 0..200_000 {
            let mut v3 = || [int(), int(), int()];
            let (a, b, c, o, d) = (v3(), v3(), v3(), v3(), v3());
            let sub = |x: [i64; 3], y: [i64; 3]| [x[0] - y[0], x[1] - y[1], x[2] - y[2]];
            let cross = |x: [i64; 3], y: [i64; 3]| {
                [
                    x[1] * y[2] - x[2] * y[1],
                    x[2] * y[0] - x[0] * y[2],
                    x[0] * y[1] - x[1] * y[0],
                ]
            };
            let dot = |x: [i64; 3], y: [i64; 3]| x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
            // [e1 e2 -d]·(u, v, t) = s by Cramer's rule, in exact integers.
            let (e1, e2, s) = (sub(b, a), sub(c, a), sub(o, a));
            let neg_d = [-d[0], -d[1], -d[2]];
            let det = dot(e1, cross(e2, neg_d));
            let d1 = dot(s, cross(e2, neg_d));
            let d2 = dot(e1, cross(s, neg_d));
            let d3 = dot(e1, cross(e2, s));
            // Exact rule: D != 0, u, v >= 0, u + v <= 1, t >= 0 (signs taken against D).
            let sign = det.signum();
            let inside = det != 0
                && d1 * sign >= 0
                && d2 * sign >= 0
                && (d1 + d2) * sign <= det * sign
                && d3 * sign >= 0;
            let f = |x: [i64; 3]| Point3::new(x[0] as f32, x[1] as f32, x[2] as f32);
            let ray = Ray::new(f(o), f(d).coords);
            let got = intersect_cramer(&ray, &f(a), &f(b), &f(c), Culling::None);
            assert_eq!(
                got.is_some(),
                inside,
                "{a:?} {b:?} {c:?} from {o:?} along {d:?}"
            );
            if let Some(h) = got {
                hits += 1;
                assert!(within_ulps(h.t, d3, det, 1.0), "t {} vs {d3}/{det}", h.t);
                assert!(within_ulps(h.u, d1, det, 2.0), "u {} vs {d1}/{det}", h.u);
                assert!(within_ulps(h.v, d2, det, 2.0), "v {} vs {d2}/{det}", h.v);
            } else {
                misses += 1;
            }
        }
        assert!(
            hits > 5_000 && misses > 10_000,
            "{hits} hits, {misses} misses"
        );
    }
}
