//! The watertight ray–triangle test (Woop, Benthin & Wald, "Watertight Ray/Triangle
//! Intersection", JCGT 2013).

use crate::Ray;
use crate::triangle::{
    Culling, LeafTriangle, TriangleHit, box_bounds, plane_t_checked, within_box,
};
use nalgebra::Point3;

/// A ray prepared for the watertight test: the axis along which the direction is largest
/// becomes z, and a shear maps the direction onto (0, 0, 1).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WatertightRay<'a> {
    /// The ray itself, read where its origin and direction are needed rather than copied
    /// into every query's set-up.
    pub(crate) ray: &'a Ray,
    pub(crate) kx: usize,
    pub(crate) ky: usize,
    pub(crate) kz: usize,
    pub(crate) sx: f32,
    pub(crate) sy: f32,
}

impl<'a> WatertightRay<'a> {
    #[inline]
    pub fn new(ray: &'a Ray) -> WatertightRay<'a> {
        let d = ray.direction_axes();
        let kz = largest_axis(d);
        WatertightRay::with_axes(ray, sheared_axes(kz, d[kz] < 0.0))
    }

    /// The ray prepared on axes `[kx, ky, kz]` as [`sheared_axes`] gives them for its
    /// direction (a walk compiled for one choice of axes passes them as constants).
    #[inline(always)]
    pub fn with_axes(ray: &'a Ray, [kx, ky, kz]: [usize; 3]) -> WatertightRay<'a> {
        let d = ray.direction_axes();
        WatertightRay {
            ray,
            kx,
            ky,
            kz,
            sx: d[kx] / d[kz],
            sy: d[ky] / d[kz],
        }
    }

    /// The ray's origin.
    #[inline(always)]
    pub fn origin(&self) -> [f32; 3] {
        *self.ray.origin_axes()
    }

    /// The ray's direction.
    #[inline(always)]
    pub fn dir(&self) -> [f32; 3] {
        self.ray.direction().into()
    }

    /// The watertight test; `t` must land in `[t_min, t_max]`.
    #[inline(always)]
    pub fn intersect(
        &self,
        tri: &LeafTriangle,
        t_min: f32,
        t_max: f32,
        culling: Culling,
    ) -> Option<TriangleHit> {
        let (kx, ky, kz) = (self.kx, self.ky, self.kz);
        let o = self.origin();
        // Translate to the ray's origin, then shear so the ray runs along +z.
        let a = [tri.a[0] - o[0], tri.a[1] - o[1], tri.a[2] - o[2]];
        let b = [tri.b[0] - o[0], tri.b[1] - o[1], tri.b[2] - o[2]];
        let c = [tri.c[0] - o[0], tri.c[1] - o[1], tri.c[2] - o[2]];
        let ax = a[kx] - self.sx * a[kz];
        let ay = a[ky] - self.sy * a[kz];
        let bx = b[kx] - self.sx * b[kz];
        let by = b[ky] - self.sy * b[kz];
        let cx = c[kx] - self.sx * c[kz];
        let cy = c[ky] - self.sy * c[kz];
        // Edge functions: twice the signed areas of the sub-triangles the ray's point makes
        // with each edge; u_e weights the corner opposite that edge.
        let mut wa = cx * by - cy * bx;
        let mut wb = ax * cy - ay * cx;
        let mut wc = bx * ay - by * ax;
        // On an edge (an edge function exactly 0), f32 cannot say which side; f64 can, since
        // the products of two f32 values are exact in f64. This makes shared edges tight.
        if wa == 0.0 || wb == 0.0 || wc == 0.0 {
            [wa, wb, wc] = edge_functions_f64([ax, ay], [bx, by], [cx, cy]);
        }
        if mixed_signs([wa, wb, wc]) {
            return None;
        }
        self.finish(tri, [wa, wb, wc], t_min, t_max, culling)
    }

    /// The rest of [`intersect`](Self::intersect) from edge functions `w` that passed its
    /// sign test (none of them zero, or re-evaluated in f64 where one was; not of strictly
    /// mixed signs): the face, the degenerate and nearly-parallel rules, `t` from the plane
    /// and the barycentrics. The packet test calls it with the edge functions its SIMD pass
    /// computed and sign-tested, the same bits.
    #[inline(always)]
    pub fn finish(
        &self,
        tri: &LeafTriangle,
        w: [f32; 3],
        t_min: f32,
        t_max: f32,
        culling: Culling,
    ) -> Option<TriangleHit> {
        let bounds = self.box_bounds(tri);
        self.finish_boxed(tri, w, bounds, t_min, t_max, culling)
    }

    /// Where the ray enters and leaves the triangle's bounding box ([`box_bounds`]).
    #[inline(always)]
    pub fn box_bounds(&self, tri: &LeafTriangle) -> (f32, f32) {
        let (origin, inv, negative) = (
            self.origin(),
            self.ray.inv_direction().into(),
            self.ray.negative(),
        );
        box_bounds(tri, &origin, &inv, &negative)
    }

    /// [`finish`](Self::finish) given where the ray enters and leaves the triangle's box
    /// (which the exact walk computes four lanes at a time, with the same bits).
    #[inline(always)]
    pub fn finish_boxed(
        &self,
        tri: &LeafTriangle,
        [wa, wb, wc]: [f32; 3],
        (entry, exit): (f32, f32),
        t_min: f32,
        t_max: f32,
        culling: Culling,
    ) -> Option<TriangleHit> {
        let det = wa + wb + wc;
        match culling {
            Culling::None if det != 0.0 => {}
            Culling::Back if det > 0.0 => {}
            Culling::Front if det < 0.0 => {}
            _ => return None,
        }
        // t from the plane in f64 (see `plane_t`): the sheared form's t is as cancellation-prone
        // as Cramer's. The plane's normal also decides the two rules: a degenerate triangle (a
        // segment or a point, whose sheared corners round off the line they lie on, so the edge
        // functions alone could accept it) and a ray nearly parallel to the plane never hit.
        let t = within_box(
            plane_t_checked(tri, &self.origin(), &self.dir())?,
            entry,
            exit,
        );
        if !(t >= t_min && t <= t_max && t < f32::INFINITY) {
            return None;
        }
        let inv = 1.0 / det;
        Some(TriangleHit {
            t,
            u: wb * inv + 0.0,
            v: wc * inv + 0.0,
        })
    }
}

/// The edge functions of sheared corners `a`, `b`, `c` (`x`, `y`) evaluated in `f64`, where
/// the products of two `f32` values are exact, then rounded: what the test takes where an
/// `f32` edge function is exactly zero (on an edge, where `f32` cannot say which side).
#[inline(always)]
pub(crate) fn edge_functions_f64(a: [f32; 2], b: [f32; 2], c: [f32; 2]) -> [f32; 3] {
    let f = f64::from;
    [
        (f(c[0]) * f(b[1]) - f(c[1]) * f(b[0])) as f32,
        (f(a[0]) * f(c[1]) - f(a[1]) * f(c[0])) as f32,
        (f(b[0]) * f(a[1]) - f(b[1]) * f(a[0])) as f32,
    ]
}

/// Whether edge functions `w` have strictly mixed signs: the ray passes outside an edge.
#[inline(always)]
pub(crate) fn mixed_signs([wa, wb, wc]: [f32; 3]) -> bool {
    let any_negative = wa < 0.0 || wb < 0.0 || wc < 0.0;
    let any_positive = wa > 0.0 || wb > 0.0 || wc > 0.0;
    any_negative && any_positive
}

/// The axis of the largest component of `d`, the first of equal ones: the watertight test's
/// `kz` (written out: `iamax`'s generic loop cost more per ray than these comparisons).
#[inline(always)]
pub(crate) fn largest_axis(d: &[f32; 3]) -> usize {
    let [x, y, z] = d.map(f32::abs);
    if x >= y && x >= z {
        0
    } else if y >= z {
        1
    } else {
        2
    }
}

/// The watertight test's axes `[kx, ky, kz]` for a largest axis `kz`: the next two after it,
/// cyclically, swapped when the direction along `kz` is `negative`, which keeps the
/// triangles' winding, so the sign of the determinant tells the face.
#[inline(always)]
pub(crate) const fn sheared_axes(kz: usize, negative: bool) -> [usize; 3] {
    let kx = if kz == 2 { 0 } else { kz + 1 };
    let ky = if kx == 2 { 0 } else { kx + 1 };
    if negative { [ky, kx, kz] } else { [kx, ky, kz] }
}

/// Intersects a ray with the triangle `a, b, c` by the **watertight** test of Woop, Benthin
/// and Wald (2013): translate the triangle to the ray's origin, permute the axes so the ray
/// runs along its largest component, shear so it runs along +z, and decide inside or outside
/// by the signs of three 2D edge functions, re-evaluated in `f64` when one is exactly zero.
/// A ray that passes through a shared edge or vertex of a closed mesh hits at least one of
/// the triangles sharing it: nothing slips through the cracks that rounding opens in the
/// Cramer test. Same conventions and culling as [`intersect_cramer`](crate::triangle::intersect_cramer);
/// `t`, `u` and `v` can differ from Cramer's in the last bits.
///
pub(crate) fn intersect_watertight(
    ray: &Ray,
    a: &Point3<f32>,
    b: &Point3<f32>,
    c: &Point3<f32>,
    culling: Culling,
) -> Option<TriangleHit> {
    if !ray.is_valid() {
        return None;
    }
    WatertightRay::new(ray).intersect(
        &LeafTriangle::new(a, b, c),
        ray.t_min(),
        ray.t_max(),
        culling,
    )
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::triangle::intersect_cramer;
    use nalgebra::Vector3;

    use crate::test_support::{p, unit_triangle as tri};

    fn cast(o: Point3<f32>, d: Vector3<f32>, culling: Culling) -> Option<TriangleHit> {
        let [a, b, c] = tri();
        intersect_watertight(&Ray::new(o, d), &a, &b, &c, culling)
    }

    #[test]
    fn agrees_with_cramer_inside() {
        let h = cast(
            p(0.25, 0.5, 3.0),
            Vector3::new(0.0, 0.0, -2.0),
            Culling::None,
        )
        .unwrap();
        assert_eq!((h.t, h.u, h.v), (1.5, 0.25, 0.5));
    }

    #[test]
    fn culling_matches_cramer() {
        let [a, b, c] = tri();
        for (o, d) in [
            (p(0.2, 0.2, 1.0), Vector3::new(0.0, 0.0, -1.0)),
            (p(0.2, 0.2, -1.0), Vector3::new(0.0, 0.0, 1.0)),
            (p(0.2, 3.0, 1.0), Vector3::new(0.0, -2.8, -1.0)),
            (p(5.0, 0.2, -1.0), Vector3::new(-4.8, 0.0, 1.0)),
        ] {
            let r = Ray::new(o, d);
            for culling in [Culling::None, Culling::Back, Culling::Front] {
                assert_eq!(
                    intersect_watertight(&r, &a, &b, &c, culling).is_some(),
                    intersect_cramer(&r, &a, &b, &c, culling).is_some(),
                    "{o} {d} {culling:?}"
                );
            }
        }
    }

    #[test]
    fn misses_and_edges() {
        let d = Vector3::new(0.0, 0.0, -1.0);
        assert!(cast(p(-0.1, 0.5, 1.0), d, Culling::None).is_none());
        assert!(cast(p(0.6, 0.6, 1.0), d, Culling::None).is_none());
        for o in [
            p(0.0, 0.5, 1.0),
            p(0.5, 0.0, 1.0),
            p(0.5, 0.5, 1.0),
            p(0.0, 0.0, 1.0),
        ] {
            assert!(cast(o, d, Culling::None).is_some(), "{o}");
        }
    }

    #[test]
    fn parallel_degenerate_nan_never_hit() {
        assert!(cast(p(0.2, 0.2, 1.0), Vector3::new(1.0, 0.0, 0.0), Culling::None).is_none());
        assert!(
            cast(
                p(-1.0, 0.2, 0.0),
                Vector3::new(1.0, 0.0, 0.0),
                Culling::None
            )
            .is_none()
        );
        let r = Ray::new(p(0.5, 0.0, 1.0), Vector3::new(0.0, 0.0, -1.0));
        let c = Culling::None;
        let (o, x, y) = (p(0.0, 0.0, 0.0), p(1.0, 0.0, 0.0), p(2.0, 0.0, 0.0));
        assert!(intersect_watertight(&r, &o, &x, &y, c).is_none());
        assert!(intersect_watertight(&r, &o, &o, &x, c).is_none());
        assert!(intersect_watertight(&r, &x, &x, &x, c).is_none());
        // found by the fuzzer: collinear corners, a ray through the segment they span
        let ray = Ray::new(p(81.62745, 22.0, -33.0), Vector3::new(-77.0, -22.0, 33.0));
        let (a, b, d) = (p(0.0, 0.0, 0.0), p(3.8, 0.0, 0.0), p(10.0, 0.0, 0.0));
        assert!(intersect_watertight(&ray, &a, &b, &d, c).is_none());
        assert!(cast(p(f32::NAN, 0.2, 1.0), Vector3::new(0.0, 0.0, -1.0), c).is_none());
        assert!(cast(p(0.2, 0.2, 1.0), Vector3::zeros(), c).is_none());
    }

    #[test]
    fn a_shared_edge_is_hit_from_both_sides_exactly() {
        // Two triangles sharing the diagonal of the unit square, hit exactly on it with awkward
        // values: at least one must answer, for every ray.
        let (a, b, c, d) = (
            p(0.0, 0.0, 0.0),
            p(1.0, 0.0, 0.0),
            p(1.0, 1.0, 0.0),
            p(0.0, 1.0, 0.0),
        );
        let mut leaks = 0;
        for i in 1..1000 {
            let s = i as f32 / 1000.0 * 0.999_9;
            let origin = p(0.1 + 0.37 * s, -0.3 + 0.11 * s, 1.7);
            let target = p(s, s, 0.0);
            let r = Ray::new(origin, target - origin);
            let one = intersect_watertight(&r, &a, &b, &c, Culling::None);
            let two = intersect_watertight(&r, &a, &c, &d, Culling::None);
            leaks += (one.is_none() && two.is_none()) as usize;
        }
        assert_eq!(leaks, 0);
    }
}
