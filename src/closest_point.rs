//! The closest point of a triangle to a point (Ericson, "Real-Time Collision Detection",
//! 5.1.5: find the Voronoi region of the triangle the point projects into, then project onto
//! that vertex, edge or the face), computed in `f64` from the `f32` inputs so a brute force
//! and the BVH's query agree to the bit and ties are real ties.

use nalgebra::{Point3, Vector3};

/// Where a point is nearest to a triangle: the point on the triangle, its barycentrics
/// (`P = (1 − u − v)·A + u·B + v·C`) and the squared distance, all in `f64`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Nearest {
    pub point: Point3<f64>,
    pub u: f64,
    pub v: f64,
    pub distance_squared: f64,
}

/// The closest point of the triangle `a, b, c` to `p`; a degenerate triangle (a segment or
/// a point) gives the closest point of its edges.
#[cfg(test)]
pub(crate) fn nearest_on_triangle(
    p: &Point3<f32>,
    a: &Point3<f32>,
    b: &Point3<f32>,
    c: &Point3<f32>,
) -> Nearest {
    nearest_on_triangle64(p.cast(), a.cast(), b.cast(), c.cast())
}

/// [`nearest_on_triangle`] on `f64` points (a scene moves triangles to world space first).
pub(crate) fn nearest_on_triangle64(
    p: Point3<f64>,
    a: Point3<f64>,
    b: Point3<f64>,
    c: Point3<f64>,
) -> Nearest {
    let at = |u: f64, v: f64| {
        let point = Point3::from(a.coords * (1.0 - u - v) + b.coords * u + c.coords * v);
        Nearest {
            point,
            u,
            v,
            distance_squared: (point - p).norm_squared(),
        }
    };
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return at(0.0, 0.0); // vertex A
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return at(1.0, 0.0); // vertex B
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 && d1 - d3 > 0.0 {
        return at(d1 / (d1 - d3), 0.0); // edge AB
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return at(0.0, 1.0); // vertex C
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 && d2 - d6 > 0.0 {
        return at(0.0, d2 / (d2 - d6)); // edge AC
    }
    let va = d3 * d6 - d5 * d4;
    let (e, f) = (d4 - d3, d5 - d6);
    if va <= 0.0 && e >= 0.0 && f >= 0.0 && e + f > 0.0 {
        let w = e / (e + f);
        return at(1.0 - w, w); // edge BC
    }
    let sum = va + vb + vc;
    if sum > 0.0 && ab.cross(&ac).norm_squared() > 0.0 {
        return at(vb / sum, vc / sum); // the face
    }
    // Degenerate: the nearest of the three edges.
    [
        segment(&p, &a, &b, |t| (t, 0.0)),
        segment(&p, &a, &c, |t| (0.0, t)),
        segment(&p, &b, &c, |t| (1.0 - t, t)),
    ]
    .into_iter()
    .map(|(u, v)| at(u, v))
    .min_by(|x, y| x.distance_squared.total_cmp(&y.distance_squared))
    .expect("three edges")
}

/// The parameter of the closest point of the segment `a`–`b` to `p`, mapped to barycentrics.
fn segment(
    p: &Point3<f64>,
    a: &Point3<f64>,
    b: &Point3<f64>,
    bary: impl Fn(f64) -> (f64, f64),
) -> (f64, f64) {
    let d: Vector3<f64> = b - a;
    let len = d.norm_squared();
    let t = if len > 0.0 {
        ((p - a).dot(&d) / len).clamp(0.0, 1.0)
    } else {
        0.0
    };
    bary(t)
}

/// A distance query's point in `f64` and its limit squared; `None` (the query answers no
/// point) for a NaN or infinite point, or a NaN or negative `max_distance`.
pub(crate) fn distance_query(
    point: impl Into<mint::Point3<f32>>,
    max_distance: f32,
) -> Option<(Point3<f64>, f64)> {
    let point = Point3::from(point.into());
    if !point.iter().all(|c| c.is_finite()) || !(max_distance >= 0.0) {
        return None;
    }
    Some((
        point.cast(),
        f64::from(max_distance) * f64::from(max_distance),
    ))
}

/// The squared distance from `p` to the box `[min, max]` (0 inside), in `f64`.
pub(crate) fn box_distance_squared(p: &Point3<f64>, min: [f32; 3], max: [f32; 3]) -> f64 {
    (0..3)
        .map(|a| gap(f64::from(min[a]), f64::from(max[a]), p[a]).powi(2))
        .sum()
}

/// How far `x` lies outside `[lo, hi]` (0 inside), branch-free so that lanes of boxes
/// vectorize; the same arithmetic for every box test of the closest-point query.
#[inline(always)]
pub(crate) fn gap(lo: f64, hi: f64, x: f64) -> f64 {
    (lo - x).max(x - hi).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against sampling the triangle densely: the nearest sample is never nearer than the
    /// computed point, and the computed point lies on the triangle.
    #[test]
    fn nearest_point_beats_dense_sampling() {
        let mut rng = crate::test_support::Rng::new(5);
        let mut next = move || rng.range(-1.0, 1.0);
        for round in 0..400 {
            let mut q = || Point3::new(next(), next(), next());
            let (a, b, mut c) = (q(), q(), q());
            if round % 20 == 0 {
                c = a + (b - a) * 0.5; // degenerate: collinear
            }
            let p = Point3::new(next() * 2.0, next() * 2.0, next() * 2.0);
            let n = nearest_on_triangle(&p, &a, &b, &c);
            assert!(
                n.u >= 0.0 && n.v >= 0.0 && n.u + n.v <= 1.0 + 1e-12,
                "{n:?}"
            );
            let steps = 60;
            for i in 0..=steps {
                for j in 0..=steps - i {
                    let (u, v) = (i as f64 / steps as f64, j as f64 / steps as f64);
                    let s = a.cast::<f64>().coords * (1.0 - u - v)
                        + b.cast::<f64>().coords * u
                        + c.cast::<f64>().coords * v;
                    let d2 = (s - p.cast::<f64>().coords).norm_squared();
                    assert!(
                        n.distance_squared <= d2 + 1e-12,
                        "round {round}: {n:?} vs {d2}"
                    );
                }
            }
        }
    }

    #[test]
    fn regions() {
        let (a, b, c) = (
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(1.0, 0.0, 0.0),
            Point3::new(0.0, 1.0, 0.0),
        );
        let face = nearest_on_triangle(&Point3::new(0.25, 0.25, 2.0), &a, &b, &c);
        assert_eq!((face.u, face.v, face.distance_squared), (0.25, 0.25, 4.0));
        let vertex = nearest_on_triangle(&Point3::new(-1.0, -1.0, 0.0), &a, &b, &c);
        assert_eq!(
            (vertex.u, vertex.v, vertex.distance_squared),
            (0.0, 0.0, 2.0)
        );
        let edge = nearest_on_triangle(&Point3::new(1.0, 1.0, 0.0), &a, &b, &c);
        assert_eq!((edge.u, edge.v, edge.distance_squared), (0.5, 0.5, 0.5));
        assert_eq!(
            box_distance_squared(&Point3::new(2.0, 0.5, -1.0), [0.0; 3], [1.0; 3]),
            2.0
        );
    }
}
