//! A sphere or a capsule moving along a line, against one triangle: the first time they
//! touch, where, and from which side. In `f64` from the `f32` inputs, as the closest point
//! is, so a brute force over every triangle and the trees' walks agree to the bit.
//!
//! A capsule is every point within `radius` of its axis, the segment from `E` to `E + S`
//! (a sphere: `S = 0`); it moves by `τ·D`. It touches the triangle when its axis comes
//! within `radius` of it: when the moving point `E + τ·D` enters the Minkowski sum of the
//! triangle, the reflected axis and a ball. That sum's surface is made of flat pieces (the
//! triangle's face offset by the radius at either end of the axis, and the parallelograms
//! an edge sweeps along the axis, offset), cylinders (about each edge at either end of the
//! axis, and about the axis at each corner) and spheres (about each corner at either end of
//! the axis). Since the distance from a moving convex shape to a convex one is convex in
//! time, the first contact is the earliest entry into any one piece, each found in closed
//! form (a plane: linear; a cylinder or a sphere: a quadratic) and kept only where the
//! piece is (within its face, along its edge). Ericson, *Real-Time Collision Detection*,
//! 5.5.7 (sphere against triangle) and 5.1.9 (closest points of two segments), and the
//! same decomposition for the capsule.

use crate::closest_point::{Nearest, nearest_on_triangle64};
use nalgebra::{Point3, Vector3};

type P = Point3<f64>;
type V = Vector3<f64>;

/// A moving capsule (a sphere when `axis` is zero), in `f64`: its axis runs from `start` to
/// `start + axis` when `τ = 0`, and it moves by `τ·direction`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Moving {
    pub start: P,
    pub axis: V,
    pub direction: V,
    pub radius: f64,
}

/// Where a moving shape first touches a triangle: at `τ`, the point of the triangle
/// (`u`, `v` its barycentrics), the point of the shape's axis nearest it, and the unit
/// normal of the contact, from the triangle towards the axis (the way to push the shape
/// out; where the axis itself touches, or the radius is zero, the face's normal against
/// the motion).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Contact {
    pub tau: f64,
    pub point: P,
    pub u: f64,
    pub v: f64,
    pub axis_point: P,
    pub normal: V,
}

impl Moving {
    /// The axis' first end at `τ`.
    fn at(&self, tau: f64) -> P {
        self.start + self.direction * tau
    }

    /// The first contact with triangle `a, b, c` at `τ` in `[0, tau_max]`: at `0` when the
    /// shape already touches it (within `radius`, the boundary included), else the earliest
    /// entry into any piece of the Minkowski sum. `None` when they never touch in range.
    // Inlined into the walks, where the sphere's test is compiled with their instruction set
    // (the same operations, so the same roundings as anywhere else).
    #[inline(always)]
    pub fn first_contact(&self, [a, b, c]: [P; 3], tau_max: f64) -> Option<Contact> {
        if self.axis == V::zeros() {
            return self.sphere_contact([a, b, c], tau_max);
        }
        self.capsule_contact([a, b, c], tau_max)
    }

    /// [`first_contact`](Self::first_contact) for a capsule (a non-zero axis).
    fn capsule_contact(&self, [a, b, c]: [P; 3], tau_max: f64) -> Option<Contact> {
        let n = (b - a).cross(&(c - a));
        let unit = n.try_normalize(0.0);
        // The plane first: the shape touches nothing of the triangle before its axis comes
        // within the radius of the plane, nor after it has left that slab for good.
        let mut in_slab = true;
        if let Some(unit) = unit {
            let h = [
                unit.dot(&(self.start - a)),
                unit.dot(&(self.start + self.axis - a)),
            ];
            let (lo, hi) = (h[0].min(h[1]), h[0].max(h[1]));
            in_slab = slab(lo, hi, self.radius, unit.dot(&self.direction), tau_max)?.0;
        }
        if in_slab && let Some(contact) = self.touching(0.0, [a, b, c]) {
            return Some(contact);
        }
        // The earliest entry so far: `τ`, the triangle's point and its barycentrics, the
        // axis' point.
        let mut best: Option<(f64, P, (f64, f64), P)> = None;
        let mut offer = |tau: f64, point: P, uv: (f64, f64), axis_point: P| {
            if tau >= 0.0 && tau <= tau_max && best.is_none_or(|(t, ..)| tau < t) {
                best = Some((tau, point, uv, axis_point));
            }
        };
        // The barycentrics of the point at `u` along edge `i` (from `a`, `b`, `c` in turn).
        let on_edge = |i: usize, u: f64| match i {
            0 => (u, 0.0),
            1 => (1.0 - u, u),
            _ => (0.0, 1.0 - u),
        };
        const CORNERS: [(f64, f64); 3] = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)];
        for s in [0.0, 1.0] {
            let end = self.start + self.axis * s;
            // The face, offset by the radius on the side the end starts on.
            if let Some(unit) = unit {
                let (h0, rate) = (unit.dot(&(end - a)), unit.dot(&self.direction));
                let side = if h0 >= 0.0 { 1.0 } else { -1.0 };
                if side * rate < 0.0 {
                    let tau = (side * self.radius - h0) / rate;
                    let centre = end + self.direction * tau;
                    let point = centre - unit * (side * self.radius);
                    if let Some(uv) = inside(&point, [a, b, c], &n) {
                        offer(tau, point, uv, centre);
                    }
                }
            }
            // The edges' cylinders and the corners' spheres.
            for (i, (p, q)) in [(a, b), (b, c), (c, a)].into_iter().enumerate() {
                let e = q - p;
                if let Some(tau) = enter_cylinder(end - p, self.direction, e, self.radius) {
                    let u = (end + self.direction * tau - p).dot(&e) / e.norm_squared();
                    if (0.0..=1.0).contains(&u) {
                        offer(tau, p + e * u, on_edge(i, u), end + self.direction * tau);
                    }
                }
            }
            for (p, uv) in [a, b, c].into_iter().zip(CORNERS) {
                if let Some(tau) = enter_sphere(end - p, self.direction, self.radius) {
                    offer(tau, p, uv, end + self.direction * tau);
                }
            }
        }
        let axis = self.axis;
        // The corners against the axis' cylinder: a corner moving by −τ·D.
        for (p, uv) in [a, b, c].into_iter().zip(CORNERS) {
            if let Some(tau) = enter_cylinder(p - self.start, -self.direction, axis, self.radius) {
                let start = self.at(tau);
                let s = (p - start).dot(&axis) / axis.norm_squared();
                if (0.0..=1.0).contains(&s) {
                    offer(tau, p, uv, start + axis * s);
                }
            }
        }
        // Each edge against the axis, where both lines' nearest points are within them:
        // the parallelogram the edge sweeps along the axis, offset by the radius.
        for (i, (p, q)) in [(a, b), (b, c), (c, a)].into_iter().enumerate() {
            let e = q - p;
            let Some(m) = axis.cross(&e).try_normalize(0.0) else {
                continue; // parallel: the other pieces meet it first
            };
            let (h0, rate) = (m.dot(&(self.start - p)), m.dot(&self.direction));
            let side = if h0 >= 0.0 { 1.0 } else { -1.0 };
            if side * rate >= 0.0 {
                continue;
            }
            let tau = (side * self.radius - h0) / rate;
            let start = self.at(tau);
            if let Some((s, u)) = lines_nearest(start, axis, p, e)
                && (0.0..=1.0).contains(&s)
                && (0.0..=1.0).contains(&u)
            {
                offer(tau, p + e * u, on_edge(i, u), start + axis * s);
            }
        }
        let (tau, point, (u, v), axis_point) = best?;
        Some(self.contact(tau, point, u, v, axis_point, &n))
    }

    /// [`first_contact`](Self::first_contact) for a sphere (a zero axis): its pieces (the
    /// face offset on either side, the edges' cylinders, the corners' spheres) in the order
    /// a small sphere meets them most often. First a sphere starting within the slab of the
    /// plane with its centre over the face: it touches where it starts, at its foot, without
    /// the general nearest point. Then the plane's slab: a sphere reaching it only in range
    /// and meeting the face there touches nothing of the triangle earlier, so that answer
    /// returns at once, and only where the face is missed are the edges and corners tried.
    #[inline(always)]
    fn sphere_contact(&self, [a, b, c]: [P; 3], tau_max: f64) -> Option<Contact> {
        let (s, d, r) = (self.start, self.direction, self.radius);
        let n = (b - a).cross(&(c - a));
        // Starting within the radius of the plane with its centre over the face (its
        // foot's weights are the centre's: they do not change along `n`), it touches there
        // at its foot, `|h0| ≤ r` away. Decided on `n` as it is (the plane's distance times
        // `|n|` against `r·|n|`, the weights times `|n|²`), so no root or division stands
        // before the answer (every sweep leaving a surface takes this way): only the
        // answer's point, weights and normal need them.
        let (whole, f) = (n.norm_squared(), n.dot(&(s - a)));
        if whole > 0.0
            && f * f <= r * r * whole
            && let Some((u, v)) = inside(&s, [a, b, c], &n)
        {
            let unit = n / whole.sqrt();
            // Towards the centre: the face's normal on its side (on the plane, against the
            // motion, as `contact` turns it).
            let up = f > 0.0 || (f == 0.0 && n.dot(&d) <= 0.0);
            return Some(Contact {
                tau: 0.0,
                point: s - n * (f / whole),
                u,
                v,
                axis_point: s,
                normal: if up { unit } else { -unit },
            });
        }
        let mut in_slab = true;
        if let Some(unit) = n.try_normalize(0.0) {
            let (h0, rate) = (unit.dot(&(s - a)), unit.dot(&d));
            let enter;
            (in_slab, enter) = slab(h0, h0, r, rate, tau_max)?;
            if !in_slab {
                // Reaching the slab only now (at `enter`, on the side it starts on): where it
                // meets the face there, it touches nothing of the triangle earlier.
                let (side, tau) = (if h0 >= 0.0 { 1.0 } else { -1.0 }, enter);
                let centre = s + d * tau;
                let point = centre - unit * (side * r);
                if tau >= 0.0
                    && tau <= tau_max
                    && let Some((u, v)) = inside(&point, [a, b, c], &n)
                {
                    return Some(Contact {
                        tau,
                        point,
                        u,
                        v,
                        axis_point: centre,
                        // Towards the centre: the face's normal on the side it comes from.
                        normal: unit * side,
                    });
                }
            }
        }
        if in_slab && let Some(contact) = self.touching(0.0, [a, b, c]) {
            return Some(contact);
        }
        // Before the edges and corners, whether any contact can come by `tau_max` at all:
        // the distance from the centre to the triangle is convex in `τ`, so where the sphere
        // is still out of reach at `tau_max` and still closing in (its nearest point ahead
        // of it), it was farther at every earlier `τ`. Most triangles a walk tests and
        // misses are neighbours of its contact that it would reach only later. The margin
        // (a millionth of `r²`, half a millionth of `r`) is far above this test's roundings
        // while the coordinates and the path's length stay within 10⁸ radii (the closed
        // forms lose `τ`'s digits well before); a case within it takes the closed forms.
        if tau_max.is_finite() {
            let centre = s + d * tau_max;
            let near = nearest_on_triangle64(centre, a, b, c);
            if near.distance_squared > r * r * (1.0 + 1e-6) && (centre - near.point).dot(&d) <= 0.0
            {
                return None;
            }
        }
        // The edges' cylinders and the corners' spheres, the earliest entry in range.
        let mut best: Option<(f64, P, (f64, f64))> = None;
        let mut offer = |tau: f64, point: P, uv: (f64, f64)| {
            if tau >= 0.0 && tau <= tau_max && best.is_none_or(|(t, ..)| tau < t) {
                best = Some((tau, point, uv));
            }
        };
        let mut edge = |p: P, q: P, uv: fn(f64) -> (f64, f64)| {
            let e = q - p;
            if let Some(tau) = enter_cylinder(s - p, d, e, r) {
                let u = (s + d * tau - p).dot(&e) / e.norm_squared();
                if (0.0..=1.0).contains(&u) {
                    offer(tau, p + e * u, uv(u));
                }
            }
        };
        edge(a, b, |u| (u, 0.0));
        edge(b, c, |u| (1.0 - u, u));
        edge(c, a, |u| (0.0, 1.0 - u));
        let mut corner = |p: P, uv: (f64, f64)| {
            if let Some(tau) = enter_sphere(s - p, d, r) {
                offer(tau, p, uv);
            }
        };
        corner(a, (0.0, 0.0));
        corner(b, (1.0, 0.0));
        corner(c, (0.0, 1.0));
        let (tau, point, (u, v)) = best?;
        Some(self.contact(tau, point, u, v, self.at(tau), &n))
    }

    /// The contact at `τ` between `point` (on the triangle of normal `n`) and `axis_point`.
    fn contact(&self, tau: f64, point: P, u: f64, v: f64, axis_point: P, n: &V) -> Contact {
        let normal = (axis_point - point).try_normalize(0.0).unwrap_or_else(|| {
            let face = n.try_normalize(0.0).unwrap_or_else(V::z);
            if face.dot(&self.direction) > 0.0 {
                -face
            } else {
                face
            }
        });
        Contact {
            tau,
            point,
            u,
            v,
            axis_point,
            normal,
        }
    }

    /// The contact at `τ` when the shape then touches the triangle (its axis within the
    /// radius, the boundary included).
    fn touching(&self, tau: f64, [a, b, c]: [P; 3]) -> Option<Contact> {
        let start = self.at(tau);
        let (on_axis, near) = segment_triangle(start, self.axis, [a, b, c]);
        let n = (b - a).cross(&(c - a));
        (near.distance_squared <= self.radius * self.radius)
            .then(|| self.contact(tau, near.point, near.u, near.v, on_axis, &n))
    }

    /// The distance from the axis at `τ` to the triangle (for tests and the brute force).
    #[cfg(test)]
    pub fn distance_at(&self, tau: f64, tri: [P; 3]) -> f64 {
        segment_triangle(self.at(tau), self.axis, tri)
            .1
            .distance_squared
            .sqrt()
    }
}

/// The plane's slab: an axis whose signed distances to the plane span `[lo, hi]` at `τ = 0`
/// and change at `rate` per unit `τ`, against a radius `r`: whether it starts within `r`,
/// and the `τ` at which it enters (when `lo + rate·τ ≤ r` and `hi + rate·τ ≥ −r`); `None`
/// when it is never within `r` over `[0, tau_max]`.
fn slab(lo: f64, hi: f64, r: f64, rate: f64, tau_max: f64) -> Option<(bool, f64)> {
    let starts_in = lo <= r && hi >= -r;
    let (enter, leave) = if rate > 0.0 {
        ((-r - hi) / rate, (r - lo) / rate)
    } else if rate < 0.0 {
        ((r - lo) / rate, (-r - hi) / rate)
    } else if starts_in {
        (f64::NEG_INFINITY, f64::INFINITY)
    } else {
        return None;
    };
    // A NaN passes, as it fails both comparisons: the pieces' own tests decide.
    (!(leave < 0.0 || enter > tau_max)).then_some((starts_in, enter))
}

/// The barycentrics `(u, v)` (the weights of `b` and `c`) of `p` moved along `n` into the
/// plane of triangle `a, b, c` (its foot; `p` itself where it lies in the plane), when that
/// lies inside, the edges included: the weights of `b` and `c` (times `|n|²`) as triple
/// products with `n`, which a move along `n` leaves as they are, that of `a` what they leave.
fn inside(p: &P, [a, b, c]: [P; 3], n: &V) -> Option<(f64, f64)> {
    let (q, whole) = (p - a, n.norm_squared());
    let u = q.cross(&(c - a)).dot(n);
    let v = (b - a).cross(&q).dot(n);
    (u >= 0.0 && v >= 0.0 && whole - u - v >= 0.0)
        .then(|| ((u / whole).min(1.0), (v / whole).min(1.0)))
}

/// The first `τ ≥ 0` at which the point `w + τ·d` (relative to a point of the line) comes
/// within `r` of the line through the origin along `e`; `None` when it starts within, moves
/// away, runs parallel or passes wide. The roots of `|(w + τd) × e|² = r²|e|²`, the smaller
/// one in the form that does not cancel.
fn enter_cylinder(w: V, d: V, e: V, r: f64) -> Option<f64> {
    let (we, de) = (w.cross(&e), d.cross(&e));
    first_root(
        de.norm_squared(),
        we.dot(&de),
        we.norm_squared() - r * r * e.norm_squared(),
    )
}

/// The first `τ ≥ 0` at which `w + τ·d` (relative to a sphere's centre) comes within `r`.
fn enter_sphere(w: V, d: V, r: f64) -> Option<f64> {
    first_root(d.norm_squared(), w.dot(&d), w.norm_squared() - r * r)
}

/// The smaller root of `a·τ² + 2b·τ + c` when the value starts positive (`c > 0`) and
/// falls (`b < 0`) to zero: `c / (−b + √(b² − ac))`, which does not cancel.
fn first_root(a: f64, b: f64, c: f64) -> Option<f64> {
    let disc = b * b - a * c;
    (a > 0.0 && c > 0.0 && b < 0.0 && disc >= 0.0).then(|| c / (disc.sqrt() - b))
}

/// The parameters `(s, u)` of the nearest points of the lines `p + s·d` and `q + u·e`;
/// `None` for parallel lines.
fn lines_nearest(p: P, d: V, q: P, e: V) -> Option<(f64, f64)> {
    let r = p - q;
    let (a, b, c) = (d.norm_squared(), d.dot(&e), e.norm_squared());
    let (f, g) = (d.dot(&r), e.dot(&r));
    let denom = a * c - b * b;
    if !(denom > 0.0) {
        return None;
    }
    let s = (b * g - c * f) / denom;
    let u = (a * g - b * f) / denom;
    Some((s, u))
}

/// The nearest points of the segment `p`–`p + d` and the segment `q`–`q + e` (Ericson
/// 5.1.9): the parameters, clamped to both.
fn segments_nearest(p: P, d: V, q: P, e: V) -> (f64, f64) {
    let r = p - q;
    let (a, c, f) = (d.norm_squared(), e.norm_squared(), e.dot(&r));
    if a == 0.0 && c == 0.0 {
        return (0.0, 0.0);
    }
    if a == 0.0 {
        return (0.0, (f / c).clamp(0.0, 1.0));
    }
    let cc = d.dot(&r);
    if c == 0.0 {
        return ((-cc / a).clamp(0.0, 1.0), 0.0);
    }
    let b = d.dot(&e);
    let denom = a * c - b * b;
    let mut s = if denom > 0.0 {
        ((b * f - cc * c) / denom).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mut u = (b * s + f) / c;
    if u < 0.0 {
        u = 0.0;
        s = (-cc / a).clamp(0.0, 1.0);
    } else if u > 1.0 {
        u = 1.0;
        s = ((b - cc) / a).clamp(0.0, 1.0);
    }
    (s, u)
}

/// The nearest point of the axis segment `start`–`start + axis` to the triangle, and the
/// triangle's point nearest it (a point where the segment crosses the triangle, at distance
/// zero, when it does).
fn segment_triangle(start: P, axis: V, [a, b, c]: [P; 3]) -> (P, Nearest) {
    let from_start = nearest_on_triangle64(start, a, b, c);
    if axis == V::zeros() {
        return (start, from_start);
    }
    let end = start + axis;
    let mut best = (start, from_start);
    let mut offer = |on_axis: P, near: Nearest| {
        if near.distance_squared < best.1.distance_squared {
            best = (on_axis, near);
        }
    };
    offer(end, nearest_on_triangle64(end, a, b, c));
    for (p, q) in [(a, b), (b, c), (c, a)] {
        let (s, _) = segments_nearest(start, axis, p, q - p);
        let on_axis = start + axis * s;
        offer(on_axis, nearest_on_triangle64(on_axis, a, b, c));
    }
    // The segment crossing the face: where it meets the plane, inside the triangle.
    let n = (b - a).cross(&(c - a));
    let (h0, h1) = (n.dot(&(start - a)), n.dot(&(end - a)));
    if (h0 <= 0.0) != (h1 <= 0.0) || h0 == 0.0 || h1 == 0.0 {
        let s = if h0 == h1 { 0.0 } else { h0 / (h0 - h1) };
        let on_axis = start + axis * s.clamp(0.0, 1.0);
        offer(on_axis, nearest_on_triangle64(on_axis, a, b, c));
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tri() -> [P; 3] {
        [
            P::new(0.0, 0.0, 0.0),
            P::new(1.0, 0.0, 0.0),
            P::new(0.0, 1.0, 0.0),
        ]
    }

    fn sphere(start: [f64; 3], direction: [f64; 3], radius: f64) -> Moving {
        Moving {
            start: P::from(start),
            axis: V::zeros(),
            direction: V::from(direction),
            radius,
        }
    }

    #[test]
    fn a_sphere_falls_on_the_face_an_edge_and_a_corner() {
        // Onto the face: its lowest point meets the plane at z = 0.
        let c = sphere([0.2, 0.2, 5.0], [0.0, 0.0, -1.0], 0.5)
            .first_contact(tri(), f64::INFINITY)
            .unwrap();
        assert_eq!(c.tau, 4.5);
        assert_eq!(c.point, P::new(0.2, 0.2, 0.0));
        assert_eq!(c.axis_point, P::new(0.2, 0.2, 0.5));
        // Beside the edge y = 0: the sphere's side meets it.
        let c = sphere([0.5, -0.3, 5.0], [0.0, 0.0, -1.0], 0.5)
            .first_contact(tri(), f64::INFINITY)
            .unwrap();
        assert!((c.tau - (5.0 - 0.4)).abs() < 1e-12, "{c:?}");
        assert!((c.point - P::new(0.5, 0.0, 0.0)).norm() < 1e-12);
        // Beyond the corner at the origin.
        let c = sphere([-0.3, -0.4, 5.0], [0.0, 0.0, -1.0], 1.0)
            .first_contact(tri(), f64::INFINITY)
            .unwrap();
        assert!((c.tau - (5.0 - 0.75f64.sqrt())).abs() < 1e-12, "{c:?}");
        assert_eq!(c.point, P::origin());
        // Wide of it: no contact; out of range: none either.
        assert!(
            sphere([3.0, 3.0, 5.0], [0.0, 0.0, -1.0], 0.5)
                .first_contact(tri(), f64::INFINITY)
                .is_none()
        );
        assert!(
            sphere([0.2, 0.2, 5.0], [0.0, 0.0, -1.0], 0.5)
                .first_contact(tri(), 4.0)
                .is_none()
        );
    }

    #[test]
    fn touching_at_the_start_and_moving_away() {
        let c = sphere([0.2, 0.2, 0.3], [0.0, 0.0, 1.0], 0.5)
            .first_contact(tri(), f64::INFINITY)
            .unwrap();
        assert_eq!(c.tau, 0.0);
        assert!((c.point - P::new(0.2, 0.2, 0.0)).norm() < 1e-15);
        // Just out of reach and moving away: never.
        assert!(
            sphere([0.2, 0.2, 0.6], [0.0, 0.0, 1.0], 0.5)
                .first_contact(tri(), f64::INFINITY)
                .is_none()
        );
        // Exactly at the radius: touching (the boundary counts).
        let c = sphere([0.2, 0.2, 0.5], [0.0, 0.0, 1.0], 0.5).first_contact(tri(), 1.0);
        assert_eq!(c.map(|c| c.tau), Some(0.0));
    }

    #[test]
    fn a_capsule_lying_flat_lands_along_its_length() {
        // Its axis crosses over the triangle (x = 0.8) with both ends outside it: its
        // underside lands on the edge y = 0 (and the face) between them.
        let m = Moving {
            start: P::new(0.8, -0.5, 2.0),
            axis: V::new(0.0, 1.0, 0.0),
            direction: V::new(0.0, 0.0, -1.0),
            radius: 0.25,
        };
        let c = m.first_contact(tri(), f64::INFINITY).unwrap();
        assert!((c.tau - 1.75).abs() < 1e-12, "{c:?}");
        assert!(c.point.z.abs() < 1e-12 && (c.axis_point.z - 0.25).abs() < 1e-12);
        assert!((c.point.x - 0.8).abs() < 1e-12);
        // Crossing the edge x + y = 1 at a right angle in its plane, high above: the edge's
        // parallelogram.
        let m = Moving {
            start: P::new(0.0, 0.0, 3.0),
            axis: V::new(1.0, 1.0, 0.0),
            direction: V::new(0.0, 0.0, -1.0),
            radius: 0.5,
        };
        let c = m.first_contact(tri(), f64::INFINITY).unwrap();
        assert!((c.tau - 2.5).abs() < 1e-12, "{c:?}");
    }

    /// The first time the distance falls to the radius, by bisection on the convex
    /// distance: an independent check of the closed forms.
    fn bisected(m: &Moving, tri: [P; 3], tau_max: f64) -> Option<f64> {
        if m.distance_at(0.0, tri) <= m.radius {
            return Some(0.0);
        }
        // Golden-section search for the nearest approach, then bisection before it.
        let (mut lo, mut hi) = (0.0, tau_max);
        for _ in 0..200 {
            let (x, y) = (lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618);
            if m.distance_at(x, tri) < m.distance_at(y, tri) {
                hi = y;
            } else {
                lo = x;
            }
        }
        let nearest = (lo + hi) / 2.0;
        if m.distance_at(nearest, tri) > m.radius {
            return None;
        }
        let (mut lo, mut hi) = (0.0, nearest);
        for _ in 0..200 {
            let mid = (lo + hi) / 2.0;
            if m.distance_at(mid, tri) <= m.radius {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Some(hi)
    }

    #[test]
    fn closed_forms_agree_with_bisection_on_random_cases() {
        let mut rng = crate::splitmix::SplitMix64(41);
        let mut unit = || rng.unit_f64() * 2.0 - 1.0;
        let (mut hits, mut misses) = (0, 0);
        for k in 0..4000 {
            let tri = [0, 1, 2].map(|_| P::new(unit(), unit(), unit()));
            let start = P::new(unit() * 3.0, unit() * 3.0, unit() * 3.0);
            let target = P::new(unit() * 0.5, unit() * 0.5, unit() * 0.5);
            let axis = if k % 2 == 0 {
                V::zeros()
            } else {
                V::new(unit(), unit(), unit()) * 0.7
            };
            let m = Moving {
                start,
                axis,
                direction: target - start,
                radius: (unit() + 1.0) * 0.3,
            };
            let found = m.first_contact(tri, 2.0).map(|c| c.tau);
            let want = bisected(&m, tri, 2.0);
            match (found, want) {
                (Some(a), Some(b)) => {
                    hits += 1;
                    assert!(
                        (a - b).abs() <= 1e-9 * (1.0 + b),
                        "{k}: {a} vs {b}, {m:?} {tri:?}"
                    );
                    let c = m.first_contact(tri, 2.0).unwrap();
                    let d = (c.point - c.axis_point).norm();
                    assert!((d - m.radius).abs() < 1e-9 || c.tau == 0.0, "{k}: {d}");
                    assert!((m.distance_at(c.tau, tri) - d).abs() < 1e-9, "{k}");
                }
                (None, None) => misses += 1,
                // A graze: the nearest approach is the radius itself, within rounding.
                (a, b) => {
                    let tau = a.or(b).unwrap();
                    let d = m.distance_at(tau, tri);
                    assert!(
                        (d - m.radius).abs() < 1e-9,
                        "{k}: {a:?} vs {b:?}, {d} {m:?}"
                    );
                }
            }
        }
        assert!(hits > 500 && misses > 500, "{hits} hits, {misses} misses");
    }
}
