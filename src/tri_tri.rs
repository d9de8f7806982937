//! Whether two triangles share a point, exactly: every decision is the sign of an
//! orientation determinant (`orient3d`, `orient2d`) computed exactly by Shewchuk's adaptive
//! predicates (the `robust` crate), so touching, coplanar and shared-edge cases are decided
//! as the real numbers would, never by rounding.
//!
//! Two triangles that are not coplanar meet exactly when an edge of one meets the other
//! (their intersection is a segment of the two planes' line whose ends lie on edges); an
//! edge meets a triangle when its ends are not strictly on one side of the plane and the
//! edge's line passes through the closed triangle (the three signed volumes of the line
//! with the triangle's edges agree in sign, Plücker's test). Coplanar triangles are
//! compared in the plane of the two coordinates the normal leaves most of: they meet when an
//! edge of one crosses or touches an edge of the other, or one holds a corner of the other.
//! Triangles are closed: touching at a point counts. A triangle of zero area (collinear or
//! repeated corners) has no surface and meets nothing.

use nalgebra::Point3;
use robust::{Coord, Coord3D, orient2d, orient3d};

type P = Point3<f64>;

fn c3(p: &P) -> Coord3D<f64> {
    Coord3D {
        x: p.x,
        y: p.y,
        z: p.z,
    }
}

/// The sign of the orientation of `d` against the plane through `a, b, c`: −1, 0 or 1.
fn side(a: &P, b: &P, c: &P, d: &P) -> i8 {
    sign(orient3d(c3(a), c3(b), c3(c), c3(d)))
}

fn sign(x: f64) -> i8 {
    (x > 0.0) as i8 - (x < 0.0) as i8
}

/// The two coordinates a triangle's plane is projected onto (the normal's largest component
/// dropped), when the triangle has an area; `None` for a triangle of zero area.
fn plane_axes([a, b, c]: &[P; 3]) -> Option<(usize, usize)> {
    let at = |i: usize, j: usize| {
        let q = |p: &P| Coord { x: p[i], y: p[j] };
        sign(orient2d(q(a), q(b), q(c)))
    };
    // Exact: the triangle has an area when one projection of it does.
    if [(1, 2), (2, 0), (0, 1)].iter().all(|&(i, j)| at(i, j) == 0) {
        return None;
    }
    // The projection along the normal's largest component (estimated) keeps the most area;
    // any with an area would do, and the largest has one.
    let n = (b - a).cross(&(c - a));
    let drop = n.iamax();
    let axes = [(1, 2), (2, 0), (0, 1)][drop];
    if at(axes.0, axes.1) != 0 {
        return Some(axes);
    }
    [(1, 2), (2, 0), (0, 1)]
        .into_iter()
        .find(|&(i, j)| at(i, j) != 0)
}

/// Whether triangles `t` and `u` share a point (both closed).
///
/// The cheap rejections come first (most pairs a walk brings are apart: one triangle
/// wholly on one side of the other's plane), and zero area is decided by the planes'
/// signs where it can be: a corner off `t`'s plane (exactly) means `t` has a plane, so an
/// area; only the coplanar case asks each triangle's projection.
pub(crate) fn triangles_meet(t: &[P; 3], u: &[P; 3]) -> bool {
    let [a, b, c] = t;
    let su = u.map(|p| side(a, b, c, &p));
    if su.iter().all(|&s| s > 0) || su.iter().all(|&s| s < 0) {
        return false;
    }
    if su.iter().all(|&s| s == 0) {
        // Coplanar, or `t` has no area (every point is "on" its plane then).
        return match (plane_axes(t), plane_axes(u)) {
            (Some(axes), Some(_)) => coplanar_meet(t, u, axes),
            _ => false,
        };
    }
    // A corner of `u` off `t`'s plane: `t` has an area.
    let [d, e, f] = u;
    let st = t.map(|p| side(d, e, f, &p));
    if st.iter().all(|&s| s > 0) || st.iter().all(|&s| s < 0) {
        return false;
    }
    if st.iter().all(|&s| s == 0) {
        // `t` lies in `u`'s plane while `u` does not lie in `t`'s: only a `u` of no area
        // (whose "plane" holds every point) does that, and it meets nothing.
        return false;
    }
    edges_meet(t, u, &st) || edges_meet(u, t, &su)
}

/// Whether an edge of `t` meets triangle `u`, given the sides of `t`'s corners against `u`'s
/// plane (not all zero: the triangles are not coplanar).
fn edges_meet(t: &[P; 3], u: &[P; 3], sides: &[i8; 3]) -> bool {
    [(0, 1), (1, 2), (2, 0)].iter().any(|&(i, j)| {
        if sides[i] * sides[j] > 0 {
            return false; // both ends strictly on one side
        }
        if sides[i] == 0 && sides[j] == 0 {
            // The edge lies in `u`'s plane while `t` does not: it meets `u` where the planes'
            // line does, which the other edges of `t` (those crossing the plane) find, or
            // along this edge; test it in the plane.
            return edge_in_plane_meets(&t[i], &t[j], u);
        }
        line_through(&t[i], &t[j], u)
    })
}

/// Whether the line through `p` and `q` passes through the closed triangle `u` (not in its
/// plane): the signed volumes of the line with `u`'s three edges agree in sign (zeros
/// allowed).
fn line_through(p: &P, q: &P, [a, b, c]: &[P; 3]) -> bool {
    let v = [side(p, q, a, b), side(p, q, b, c), side(p, q, c, a)];
    !(v.contains(&1) && v.contains(&-1))
}

/// Whether the segment `p`–`q`, lying in triangle `u`'s plane, meets `u`.
fn edge_in_plane_meets(p: &P, q: &P, u: &[P; 3]) -> bool {
    let Some(axes) = plane_axes(u) else {
        return false;
    };
    let proj = |x: &P| Coord {
        x: x[axes.0],
        y: x[axes.1],
    };
    let tri = u.map(|x| proj(&x));
    let (p, q) = (proj(p), proj(q));
    point_in_triangle(p, &tri)
        || point_in_triangle(q, &tri)
        || (0..3).any(|k| segments_meet(p, q, tri[k], tri[(k + 1) % 3]))
}

/// Whether coplanar triangles `t` and `u` meet, compared on the coordinates `axes`.
fn coplanar_meet(t: &[P; 3], u: &[P; 3], axes: (usize, usize)) -> bool {
    let proj = |x: &P| Coord {
        x: x[axes.0],
        y: x[axes.1],
    };
    let (a, b) = (t.map(|x| proj(&x)), u.map(|x| proj(&x)));
    (0..3).any(|i| (0..3).any(|j| segments_meet(a[i], a[(i + 1) % 3], b[j], b[(j + 1) % 3])))
        || point_in_triangle(a[0], &b)
        || point_in_triangle(b[0], &a)
}

/// Whether `p` lies in the closed triangle `t` (of nonzero area), in the plane.
fn point_in_triangle(p: Coord<f64>, t: &[Coord<f64>; 3]) -> bool {
    let s = [
        sign(orient2d(t[0], t[1], p)),
        sign(orient2d(t[1], t[2], p)),
        sign(orient2d(t[2], t[0], p)),
    ];
    !(s.contains(&1) && s.contains(&-1))
}

/// Whether the closed segments `a`–`b` and `c`–`d` share a point, in the plane.
fn segments_meet(a: Coord<f64>, b: Coord<f64>, c: Coord<f64>, d: Coord<f64>) -> bool {
    let (d1, d2) = (sign(orient2d(a, b, c)), sign(orient2d(a, b, d)));
    let (d3, d4) = (sign(orient2d(c, d, a)), sign(orient2d(c, d, b)));
    if d1 * d2 < 0 && d3 * d4 < 0 {
        return true;
    }
    let within = |p: Coord<f64>, q: Coord<f64>, r: Coord<f64>| {
        p.x.min(q.x) <= r.x && r.x <= p.x.max(q.x) && p.y.min(q.y) <= r.y && r.y <= p.y.max(q.y)
    };
    (d1 == 0 && within(a, b, c))
        || (d2 == 0 && within(a, b, d))
        || (d3 == 0 && within(c, d, a))
        || (d4 == 0 && within(c, d, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(p: [[f64; 3]; 3]) -> [P; 3] {
        p.map(P::from)
    }

    #[test]
    fn crossing_touching_and_apart() {
        let flat = t([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0]]);
        // Piercing the face.
        let pierce = t([[0.5, 0.5, -1.0], [0.5, 0.5, 1.0], [1.5, 0.5, 1.0]]);
        assert!(triangles_meet(&flat, &pierce) && triangles_meet(&pierce, &flat));
        // Standing on it at one corner: touching counts.
        let stand = t([[0.5, 0.5, 0.0], [0.5, 0.5, 1.0], [1.0, 0.5, 1.0]]);
        assert!(triangles_meet(&flat, &stand));
        // A hair above: apart.
        let above = t([[0.5, 0.5, 1e-300], [0.5, 0.5, 1.0], [1.0, 0.5, 1.0]]);
        assert!(!triangles_meet(&flat, &above));
        // Beyond the hypotenuse, through the plane: apart.
        let beyond = t([[1.5, 1.5, -1.0], [1.5, 1.5, 1.0], [2.0, 1.5, 1.0]]);
        assert!(!triangles_meet(&flat, &beyond));
        // Sharing an edge (a fold): they meet along it.
        let fold = t([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 2.0]]);
        assert!(triangles_meet(&flat, &fold));
        // Zero area: nothing.
        let sliver = t([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]);
        assert!(!triangles_meet(&flat, &sliver));
    }

    #[test]
    fn coplanar_overlap_touch_and_apart() {
        let a = t([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 2.0, 0.0]]);
        let inside = t([[0.2, 0.2, 0.0], [0.5, 0.2, 0.0], [0.2, 0.5, 0.0]]);
        assert!(triangles_meet(&a, &inside) && triangles_meet(&inside, &a));
        let crossing = t([[1.0, -1.0, 0.0], [1.0, 3.0, 0.0], [3.0, 1.0, 0.0]]);
        assert!(triangles_meet(&a, &crossing));
        let touching = t([[2.0, 0.0, 0.0], [3.0, 0.0, 0.0], [3.0, 1.0, 0.0]]);
        assert!(triangles_meet(&a, &touching));
        let apart = t([[2.1, 0.0, 0.0], [3.0, 0.0, 0.0], [3.0, 1.0, 0.0]]);
        assert!(!triangles_meet(&a, &apart));
    }

    #[test]
    fn random_pairs_agree_with_sampling() {
        // Where the test says apart, no sampled point of one triangle lies on the other
        // within rounding; where it says they meet, the closest points of a dense sampling
        // come near.
        let mut rng = crate::splitmix::SplitMix64(9);
        let mut unit = || rng.unit_f64() * 2.0 - 1.0;
        let (mut meet, mut apart) = (0, 0);
        for _ in 0..2000 {
            let a = [0; 3].map(|_| P::new(unit(), unit(), unit()));
            let b = [0; 3].map(|_| P::new(unit(), unit(), unit()));
            let found = triangles_meet(&a, &b);
            assert_eq!(found, triangles_meet(&b, &a));
            // Distance between the triangles by the closest point of each's samples.
            let mut d: f64 = f64::INFINITY;
            for i in 0..=20 {
                for j in 0..=(20 - i) {
                    let (u, v) = (f64::from(i) / 20.0, f64::from(j) / 20.0);
                    let p =
                        P::from(a[0].coords * (1.0 - u - v) + a[1].coords * u + a[2].coords * v);
                    let q = crate::closest_point::nearest_on_triangle64(p, b[0], b[1], b[2]);
                    d = d.min(q.distance_squared.sqrt());
                }
            }
            if found {
                meet += 1;
                assert!(d < 0.15, "{a:?} {b:?}: {d}");
            } else {
                apart += 1;
            }
        }
        assert!(meet > 200 && apart > 200, "{meet} {apart}");
    }
}
