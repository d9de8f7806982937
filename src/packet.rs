//! Four leaf triangles side by side, tested against one ray in one pass.
//!
//! The leaves store their triangles in packets of four, coordinates as struct of arrays
//! (`a[axis][lane]`), so Cramer's sign tests run on all four at once in SIMD (the `wide`
//! crate). The arithmetic is the scalar test's, operation for operation, so every lane's
//! `D`, `D1`, `D2` have the same bits as [`LeafTriangle::intersect`] computes; only lanes that
//! pass go on to the scalar tail (`t` in `f64`, the range, `u` and `v`). Unused lanes hold
//! NaN corners, which fail every test.

use crate::Culling;
use crate::triangle::{LeafTriangle, TriangleHit, accept};
use wide::f32x4;

/// Triangles per packet.
pub(crate) const LANES: usize = 4;

/// Four triangles' corners, struct of arrays: `a[axis][lane]`. 144 bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub(crate) struct TrianglePacket {
    pub a: [[f32; LANES]; 3],
    pub b: [[f32; LANES]; 3],
    pub c: [[f32; LANES]; 3],
}

impl TrianglePacket {
    /// A packet of unused lanes (NaN corners: never hit).
    pub const EMPTY: TrianglePacket = TrianglePacket {
        a: [[f32::NAN; LANES]; 3],
        b: [[f32::NAN; LANES]; 3],
        c: [[f32::NAN; LANES]; 3],
    };

    /// Puts `tri` in `lane`.
    pub fn set(&mut self, lane: usize, tri: &LeafTriangle) {
        for axis in 0..3 {
            self.a[axis][lane] = tri.a[axis];
            self.b[axis][lane] = tri.b[axis];
            self.c[axis][lane] = tri.c[axis];
        }
    }

    /// The triangle in `lane`.
    pub fn get(&self, lane: usize) -> LeafTriangle {
        LeafTriangle {
            a: [0, 1, 2].map(|axis| self.a[axis][lane]),
            b: [0, 1, 2].map(|axis| self.b[axis][lane]),
            c: [0, 1, 2].map(|axis| self.c[axis][lane]),
        }
    }

    /// Whether `lane` is unused (bit for bit [`EMPTY`](Self::EMPTY)'s lane).
    pub fn lane_is_empty(&self, lane: usize) -> bool {
        let nan = |x: f32| x.to_bits() == f32::NAN.to_bits();
        (0..3).all(|axis| {
            nan(self.a[axis][lane]) && nan(self.b[axis][lane]) && nan(self.c[axis][lane])
        })
    }

    /// Cramer's test on all four lanes; calls `found(lane, hit)` for each lane that hits
    /// within `[t_min, t_max]`, in lane order, with `t_max` as it stands at that lane
    /// (`found` returns the new `t_max`, so the closest-hit query shrinks it as it goes).
    /// Returns `true` as soon as `found` asks to stop (by returning `None`).
    #[inline(always)]
    pub fn intersect(
        &self,
        ray: &PacketRay,
        t_min: f32,
        t_max: &mut f32,
        culling: Culling,
        mut found: impl FnMut(usize, TriangleHit) -> Option<f32>,
    ) -> bool {
        let load = |v: &[[f32; LANES]; 3]| v.map(f32x4::from);
        let (a, b, c) = (load(&self.a), load(&self.b), load(&self.c));
        let e1 = sub(&b, &a);
        let e2 = sub(&c, &a);
        let n = cross(&e1, &e2);
        let det = -dot(&n, &ray.direction);
        let zero = f32x4::ZERO;
        let culled = match culling {
            Culling::None => f32x4::splat(f32::from_bits(u32::MAX)),
            Culling::Back => det.simd_gt(zero),
            Culling::Front => det.simd_lt(zero),
        };
        let s = sub(&ray.origin, &a);
        let w = cross(&ray.direction, &s);
        // Flip every numerator by the sign of D, as the scalar test does.
        let sign = det & f32x4::splat(-0.0);
        let abs_det = det ^ sign;
        let d1 = -dot(&e2, &w) ^ sign;
        let d2 = dot(&e1, &w) ^ sign;
        let inside = culled
            & abs_det.simd_gt(zero)
            & d1.simd_ge(zero)
            & d2.simd_ge(zero)
            & (d1 + d2).simd_le(abs_det);
        let mut lanes = inside.to_bitmask();
        if lanes == 0 {
            return false;
        }
        let (n, abs_det, d1, d2) = (
            n.map(f32x4::to_array),
            abs_det.to_array(),
            d1.to_array(),
            d2.to_array(),
        );
        while lanes != 0 {
            let lane = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            let normal = [n[0][lane], n[1][lane], n[2][lane]];
            let tri = self.get(lane);
            if let Some(hit) = accept(
                &tri,
                &normal,
                abs_det[lane],
                d1[lane],
                d2[lane],
                &ray.origin_scalar,
                &ray.direction_scalar,
                t_min,
                *t_max,
            ) {
                match found(lane, hit) {
                    Some(t) => *t_max = t,
                    None => return true,
                }
            }
        }
        false
    }
}

/// The ray splatted across the lanes, prepared once per query.
pub(crate) struct PacketRay {
    origin: [f32x4; 3],
    direction: [f32x4; 3],
    origin_scalar: [f32; 3],
    direction_scalar: [f32; 3],
}

impl PacketRay {
    pub fn new(origin: &[f32; 3], direction: &[f32; 3]) -> PacketRay {
        PacketRay {
            origin: origin.map(f32x4::splat),
            direction: direction.map(f32x4::splat),
            origin_scalar: *origin,
            direction_scalar: *direction,
        }
    }
}

#[inline(always)]
fn sub(p: &[f32x4; 3], q: &[f32x4; 3]) -> [f32x4; 3] {
    [p[0] - q[0], p[1] - q[1], p[2] - q[2]]
}

#[inline(always)]
fn cross(p: &[f32x4; 3], q: &[f32x4; 3]) -> [f32x4; 3] {
    [
        p[1] * q[2] - p[2] * q[1],
        p[2] * q[0] - p[0] * q[2],
        p[0] * q[1] - p[1] * q[0],
    ]
}

#[inline(always)]
fn dot(p: &[f32x4; 3], q: &[f32x4; 3]) -> f32x4 {
    p[0] * q[0] + p[1] * q[1] + p[2] * q[2]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every lane of a packet answers what the scalar test answers, bit for bit, over
    /// random triangles and rays (including degenerate triangles and empty lanes).
    #[test]
    fn lanes_equal_the_scalar_test() {
        let mut rng = crate::test_support::Lcg::new(99);
        let mut next = move || rng.uniform(-2.0, 2.0);
        let mut checked = 0;
        let mut hits = 0;
        for round in 0..20_000 {
            let mut packet = TrianglePacket::EMPTY;
            let mut tris = Vec::new();
            let used = 1 + round % LANES;
            for lane in 0..used {
                let mut tri = LeafTriangle {
                    a: [next(), next(), next()],
                    b: [next(), next(), next()],
                    c: [next(), next(), next()],
                };
                if round % 97 == 0 {
                    tri.c = tri.a; // degenerate
                }
                packet.set(lane, &tri);
                tris.push(tri);
            }
            assert!((used..LANES).all(|lane| packet.lane_is_empty(lane)));
            let origin = [next() * 3.0, next() * 3.0, next() * 3.0];
            // Mostly aimed at a point near one of the triangles (inside or just outside).
            let aim = &tris[round % used];
            let (u, v) = (next() * 0.3 + 0.3, next() * 0.3 + 0.3);
            let target =
                [0, 1, 2].map(|k| aim.a[k] + u * (aim.b[k] - aim.a[k]) + v * (aim.c[k] - aim.a[k]));
            let direction = if round % 5 == 0 {
                [next(), next(), next()]
            } else {
                [0, 1, 2].map(|k| target[k] - origin[k])
            };
            let ray = PacketRay::new(&origin, &direction);
            for culling in [Culling::None, Culling::Back, Culling::Front] {
                let t_min = if round % 3 == 0 { 0.5 } else { 0.0 };
                let mut t_max = f32::INFINITY;
                let mut got = [None; LANES];
                packet.intersect(&ray, t_min, &mut t_max, culling, |lane, hit| {
                    got[lane] = Some(hit);
                    Some(f32::INFINITY)
                });
                for (lane, tri) in tris.iter().enumerate() {
                    let want = tri.intersect(&origin, &direction, t_min, f32::INFINITY, culling);
                    assert_eq!(got[lane], want, "round {round} lane {lane} {culling:?}");
                    hits += usize::from(want.is_some());
                    checked += 1;
                }
                assert!(got[used..].iter().all(Option::is_none));
            }
        }
        assert!(
            checked > 100_000 && hits > 5_000,
            "{checked} checked, {hits} hits"
        );
    }
}
