//! The tests a query runs on a leaf's packets of four triangles, one SIMD pass for four:
//! Cramer's sign tests ([`TrianglePacket::intersect`]) or the watertight test's edge
//! functions ([`WatertightPacket`]). The arithmetic is the scalar tests', operation for
//! operation, so every lane's `D`, `D1`, `D2` (and edge functions) have the bits
//! [`LeafTriangle::intersect`](crate::triangle::LeafTriangle::intersect) and
//! [`WatertightRay::intersect`] compute; only lanes that pass
//! go on to the scalar tail, which takes `t` from the plane in `f64` ([`plane_t`]), checks
//! the range and computes `u` and `v`.
//!
//! [`plane_t`]: crate::triangle::plane_t

use crate::bvh::leaf::{LANES, TrianglePacket};
use crate::triangle::{TriangleHit, accept};
use crate::watertight::{WatertightRay, edge_functions_f64, mixed_signs};
use crate::{Culling, QueryOptions, Ray};
use wide::f32x4;

impl TrianglePacket {
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
        let (origin, direction) = (
            ray.origin.map(f32x4::splat),
            ray.direction.map(f32x4::splat),
        );
        let det = -dot(&n, &direction);
        let zero = f32x4::ZERO;
        let culled = match culling {
            Culling::None => f32x4::splat(f32::from_bits(u32::MAX)),
            Culling::Back => det.simd_gt(zero),
            Culling::Front => det.simd_lt(zero),
        };
        let s = sub(&origin, &a);
        let w = cross(&direction, &s);
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
                &ray.origin,
                &ray.direction,
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

/// The triangle test a query runs in the leaves, prepared once per ray.
pub(crate) struct LeafTest<'a> {
    ray: PreparedRay<'a>,
    culling: Culling,
    t_min: f32,
}

/// The ray as the chosen triangle test wants it.
enum PreparedRay<'a> {
    Cramer(PacketRay),
    Watertight(WatertightPacket<'a>),
}

impl<'a> LeafTest<'a> {
    pub(crate) fn new(ray: &'a Ray, options: &QueryOptions) -> LeafTest<'a> {
        LeafTest {
            ray: if options.watertight {
                PreparedRay::Watertight(WatertightPacket::new(ray, options.culling))
            } else {
                PreparedRay::Cramer(PacketRay::new(
                    &ray.origin().coords.into(),
                    &ray.direction().into(),
                ))
            },
            culling: options.culling,
            t_min: ray.t_min(),
        }
    }

    /// Tests a leaf's `count` triangles (whole packets from `first`) in slot order, calling
    /// `found(slot, hit)` for each hit within `[t_min, t_max]`; `found` returns the new
    /// `t_max`, or `None` to stop (then this returns `true`).
    #[inline(always)]
    pub(crate) fn run(
        &self,
        packets: &[TrianglePacket],
        first: usize,
        count: usize,
        t_max: &mut f32,
        mut found: impl FnMut(u32, TriangleHit) -> Option<f32>,
    ) -> bool {
        for (k, packet) in packets[first..first + count.div_ceil(LANES)]
            .iter()
            .enumerate()
        {
            let base = ((first + k) * LANES) as u32;
            let stopped = match &self.ray {
                PreparedRay::Watertight(test) => test.run(packet, base, t_max, &mut found),
                PreparedRay::Cramer(ray) => {
                    packet.intersect(ray, self.t_min, t_max, self.culling, |lane, hit| {
                        found(base + lane as u32, hit)
                    })
                }
            };
            if stopped {
                return true;
            }
        }
        false
    }
}

/// The watertight test of a packet's four triangles against one ray, over `wide`'s four
/// lanes: the portable twin's leaves and every other query's (every hit, the count, the
/// inside test's crossings). The x86 walk inlines its own copy in AVX2 intrinsics
/// (`kernel/x86.rs`, `PacketTest`), the same operations but for its filter's fused
/// multiply-adds: shared, this one cost the x86 walk more than its copy
/// (docs/how-it-works/ray-kernel.md §9). The edge functions in SIMD, operation for operation
/// as [`WatertightRay::intersect`] computes them, so with its bits; for a ray whose range
/// starts after 0 (one leaving a surface), the lanes kept only where the sheared `f32` `t`,
/// give or take a conservative bound on its error, can land in the range (Pharr, Jakob and
/// Humphreys, *Physically Based Rendering*, 3rd ed., §3.9.6); then the scalar test's end on
/// each lane left ([`WatertightRay::finish_boxed`], with the lane's box entry and exit
/// computed four at a time with the bits of [`box_bounds`](crate::triangle::box_bounds)),
/// so every hit is the scalar test's.
pub(crate) struct WatertightPacket<'a> {
    ray: WatertightRay<'a>,
    /// The origin on axes `kx`, `ky`, `kz`, four times.
    origin: [f32x4; 3],
    /// The shear `sx`, `sy` and `1/d[kz]`, four times.
    shear: [f32x4; 3],
    culling: Culling,
    t_min: f32,
    /// The lanes whose sign of the determinant `culling` keeps: positive, negative.
    keep: (u32, u32),
    /// Whether to filter the lanes inside their edges by their sheared `t` (see [`filters`]).
    filter: bool,
}

/// Whether the packet test filters the lanes inside their edges by a conservative bound on
/// their sheared `f32` `t` before the scalar test's end: only for a ray whose range starts
/// after 0, as a ray leaving a surface does. Such a ray meets the triangle it leaves (and
/// often its neighbours) inside their edges at `t` within rounding of 0, below `t_min`, in
/// nearly every leaf near its origin, which the filter rejects for a few vector operations
/// where the scalar end spends a few hundred instructions each; elsewhere most lanes inside
/// their edges are hits in range, which the filter only delays (the figures:
/// docs/how-it-works/ray-kernel.md §8). The x86 walk's packet test asks it too.
#[inline(always)]
pub(crate) fn filters(ray: &Ray) -> bool {
    ray.t_min() > 0.0
}

/// `γ(n) = n·u / (1 − n·u)` for `f32` (`u = 2⁻²⁴`): the bound on the relative error of `n`
/// roundings (Higham; PBR §3.9.1).
pub(crate) const fn gamma(n: f32) -> f32 {
    let u = 1.0 / (1u32 << 24) as f32;
    n * u / (1.0 - n * u)
}

/// The lanes (of four) whose sign of the determinant `culling` keeps: positive, negative.
#[inline(always)]
pub(crate) fn kept_signs(culling: Culling) -> (u32, u32) {
    match culling {
        Culling::None => (0xf, 0xf),
        Culling::Back => (0xf, 0),
        Culling::Front => (0, 0xf),
    }
}

/// `if a < b { a } else { b }` lane by lane (x86's `minps(a, b)`: `b` on a NaN or a tie).
#[inline(always)]
fn min4(a: f32x4, b: f32x4) -> f32x4 {
    #[cfg(target_feature = "sse")]
    {
        a.fast_min(b)
    }
    #[cfg(not(target_feature = "sse"))]
    {
        min4_portable(a, b)
    }
}

/// `if a > b { a } else { b }` lane by lane (x86's `maxps(a, b)`).
#[inline(always)]
fn max4(a: f32x4, b: f32x4) -> f32x4 {
    #[cfg(target_feature = "sse")]
    {
        a.fast_max(b)
    }
    #[cfg(not(target_feature = "sse"))]
    {
        max4_portable(a, b)
    }
}

/// [`min4`] without x86's `minps` (WebAssembly, ARM): a compare and a select. Compiled in
/// tests everywhere, so x86 checks it against `minps` too.
#[cfg(any(test, not(target_feature = "sse")))]
#[inline(always)]
fn min4_portable(a: f32x4, b: f32x4) -> f32x4 {
    a.simd_lt(b).bitselect(a, b)
}

/// [`max4`] without x86's `maxps`.
#[cfg(any(test, not(target_feature = "sse")))]
#[inline(always)]
fn max4_portable(a: f32x4, b: f32x4) -> f32x4 {
    a.simd_gt(b).bitselect(a, b)
}

/// The largest magnitude of three, lane by lane.
#[inline(always)]
fn max_abs3(a: f32x4, b: f32x4, c: f32x4) -> f32x4 {
    max4(a.abs(), max4(b.abs(), c.abs()))
}

impl<'a> WatertightPacket<'a> {
    /// The test of `ray` (valid) with `culling`.
    #[inline(always)]
    pub(crate) fn new(ray: &'a Ray, culling: Culling) -> WatertightPacket<'a> {
        let w = WatertightRay::new(ray);
        let (origin, direction) = (ray.origin_axes(), ray.direction_axes());
        WatertightPacket {
            origin: [w.kx, w.ky, w.kz].map(|k| f32x4::splat(origin[k])),
            shear: [w.sx, w.sy, 1.0 / direction[w.kz]].map(f32x4::splat),
            ray: w,
            culling,
            t_min: ray.t_min(),
            keep: kept_signs(culling),
            filter: filters(ray),
        }
    }

    /// Tests `packet`'s four lanes (slots from `first_slot`) in lane order, calling
    /// `found(slot, hit)` for each hit within `[t_min, t_max]`; `found` returns the new
    /// `t_max`, or `None` to stop (then this returns `true`).
    #[inline(always)]
    pub(crate) fn run(
        &self,
        packet: &TrianglePacket,
        first_slot: u32,
        t_max: &mut f32,
        mut found: impl FnMut(u32, TriangleHit) -> Option<f32>,
    ) -> bool {
        let [(ax, ay, az), (bx, by, bz), (cx, cy, cz)] = self.sheared(packet);
        // The edge functions, not fused, so a shared edge gives exactly negated values in
        // its two triangles (and the scalar test's bits).
        let wa = cx * by - cy * bx;
        let wb = ax * cy - ay * cx;
        let wc = bx * ay - by * ax;
        let zero = f32x4::ZERO;
        let positive = (wa.simd_gt(zero) & wb.simd_gt(zero) & wc.simd_gt(zero)).to_bitmask();
        let negative = (wa.simd_lt(zero) & wb.simd_lt(zero) & wc.simd_lt(zero)).to_bitmask();
        let on_edge = (wa.simd_eq(zero) | wb.simd_eq(zero) | wc.simd_eq(zero)).to_bitmask();
        let inside = (positive & self.keep.0) | (negative & self.keep.1);
        if inside | on_edge == 0 {
            return false;
        }
        let mut lanes = on_edge;
        let (enter, leave) = if !self.filter {
            lanes |= inside;
            self.box_bounds(packet)
        } else {
            let (enter, leave) = self.box_bounds(packet);
            if inside != 0 {
                // The sheared t, `sz·(wa·az + wb·bz + wc·cz) / det`, and the bound on its
                // error (PBR §3.9.6, for this shear: the x and y errors from the unscaled z,
                // which the shear multiplies), doubled, plus 2⁻²⁰·|t| for the f64 plane's
                // rounding to f32. Unfused, as the bound counts its roundings.
                let sz = self.shear[2];
                let det = (wa + wb) + wc;
                let t = (sz * (wa * az + (wb * bz + wc * cz))) / det;
                let splat = f32x4::splat;
                let (max_x, max_y) = (max_abs3(ax, bx, cx), max_abs3(ay, by, cy));
                let max_z = max_abs3(az, bz, cz);
                let max_zs = max_z * sz.abs();
                let delta_x = splat(gamma(5.0)) * (max_x + max_z);
                let delta_y = splat(gamma(5.0)) * (max_y + max_z);
                let delta_z = splat(gamma(3.0)) * max_zs;
                let delta_e = splat(2.0)
                    * ((splat(gamma(2.0)) * max_x) * max_y + (delta_y * max_x + delta_x * max_y));
                let max_e = max_abs3(wa, wb, wc);
                let delta_t = (splat(6.0)
                    * ((splat(gamma(3.0)) * max_e) * max_zs
                        + (delta_e * max_zs + delta_z * max_e)))
                    / det.abs();
                let delta = t.abs() * splat(crate::bvh::kernel::slabs::EXIT_SLACK) + delta_t;
                // The scalar end keeps `t` within the lane's own box (`within_box`): at most
                // the greater of the plane's and the entry, at least the lesser of the
                // plane's and the exit. The bounds second in `max4` and `min4` (which return
                // their second operand on a NaN), and the comparisons negated: a NaN (corners
                // near f32's limit) leaves the lane to the scalar test.
                let early = max4(enter, t + delta).simd_lt(splat(self.t_min));
                let late = min4(leave, t - delta).simd_gt(splat(*t_max));
                lanes |= inside & !(early | late).to_bitmask();
            }
            (enter, leave)
        };
        if lanes == 0 {
            return false;
        }
        let (w, entries, exits) = (
            [wa.to_array(), wb.to_array(), wc.to_array()],
            enter.to_array(),
            leave.to_array(),
        );
        while lanes != 0 {
            let lane = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            let mut e = [w[0][lane], w[1][lane], w[2][lane]];
            if on_edge & (1 << lane) != 0 {
                // The scalar test's `f64` path, from the same sheared corners.
                let at = |v: f32x4| v.to_array()[lane];
                e = edge_functions_f64([at(ax), at(ay)], [at(bx), at(by)], [at(cx), at(cy)]);
                if mixed_signs(e) {
                    continue;
                }
            }
            let tri = packet.get(lane);
            let Some(hit) = self.ray.finish_boxed(
                &tri,
                e,
                (entries[lane], exits[lane]),
                self.t_min,
                *t_max,
                self.culling,
            ) else {
                continue;
            };
            match found(first_slot + lane as u32, hit) {
                Some(t) => *t_max = t,
                None => return true,
            }
        }
        false
    }

    /// A packet's corners translated to the origin and sheared so the ray runs along +z,
    /// operation for operation as [`WatertightRay::intersect`] (not fused), so a ray through
    /// an edge goes to the triangle the scalar test gives it: `(x, y, z)` per corner, `z`
    /// not yet scaled.
    #[inline(always)]
    fn sheared(&self, packet: &TrianglePacket) -> [(f32x4, f32x4, f32x4); 3] {
        let (kx, ky, kz) = (self.ray.kx, self.ray.ky, self.ray.kz);
        let [ox, oy, oz] = self.origin;
        let [sx, sy, _] = self.shear;
        // A function, not a closure: inlined into the x86 walk, it takes the walk's
        // instructions, where a closure may be compiled apart for the crate's baseline.
        #[inline(always)]
        fn corner(
            p: &[[f32; LANES]; 3],
            [kx, ky, kz]: [usize; 3],
            [ox, oy, oz]: [f32x4; 3],
            [sx, sy]: [f32x4; 2],
        ) -> (f32x4, f32x4, f32x4) {
            let z = f32x4::from(p[kz]) - oz;
            (
                (f32x4::from(p[kx]) - ox) - sx * z,
                (f32x4::from(p[ky]) - oy) - sy * z,
                z,
            )
        }
        let (k, shear) = ([kx, ky, kz], [sx, sy]);
        let o = [ox, oy, oz];
        [
            corner(&packet.a, k, o, shear),
            corner(&packet.b, k, o, shear),
            corner(&packet.c, k, o, shear),
        ]
    }

    /// Where the ray enters and leaves each lane's triangle's bounding box: the scalar
    /// test's [`box_bounds`](crate::triangle::box_bounds), operation for operation, so the
    /// same bits.
    #[inline(always)]
    fn box_bounds(&self, packet: &TrianglePacket) -> (f32x4, f32x4) {
        let ray = self.ray.ray;
        let (origin, inv, negative) = (ray.origin_axes(), ray.inv_direction(), ray.negative());
        let mut enter = f32x4::splat(f32::NEG_INFINITY);
        let mut leave = f32x4::splat(f32::INFINITY);
        for k in 0..3 {
            let (a, b, c) = (
                f32x4::from(packet.a[k]),
                f32x4::from(packet.b[k]),
                f32x4::from(packet.c[k]),
            );
            let least = min4(min4(a, b), c);
            let greatest = max4(max4(a, b), c);
            let (first, last) = if negative[k] {
                (greatest, least)
            } else {
                (least, greatest)
            };
            let (o, inv) = (f32x4::splat(origin[k]), f32x4::splat(inv[k]));
            enter = max4((first - o) * inv, enter);
            leave = min4((last - o) * inv, leave);
        }
        (enter, leave)
    }
}

/// The ray for the Cramer test on packets, splatted across the lanes where it is used
/// (splatting once per ray cost more than it saved: most rays test one or two packets).
pub(crate) struct PacketRay {
    origin: [f32; 3],
    direction: [f32; 3],
}

impl PacketRay {
    pub fn new(origin: &[f32; 3], direction: &[f32; 3]) -> PacketRay {
        PacketRay {
            origin: *origin,
            direction: *direction,
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
    use crate::Ray;
    use crate::triangle::LeafTriangle;
    use nalgebra::Point3;

    /// The portable min and max (what WebAssembly and ARM run) give x86's bits, NaN lanes
    /// and signed zeros included.
    #[test]
    fn portable_min_and_max_equal_the_x86_ones() {
        let special = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            3.5e-39,
        ];
        let bits = |x: f32x4| x.to_array().map(f32::to_bits);
        for &a in &special {
            for &b in &special {
                let (p, q) = (f32x4::from([a, b, -a, b]), f32x4::from([b, a, b, -b]));
                assert_eq!(bits(min4(p, q)), bits(min4_portable(p, q)), "{a} {b}");
                assert_eq!(bits(max4(p, q)), bits(max4_portable(p, q)), "{a} {b}");
            }
        }
    }

    /// The watertight packet test answers every lane as the scalar test does, bit for bit
    /// (under every culling, from 0 and from after 0, where the `t` filter runs), on random
    /// triangles, degenerate ones and exact shared-edge-like values.
    #[test]
    fn the_watertight_packet_equals_the_scalar_test() {
        let mut rng = crate::test_support::Rng::new(7);
        let mut next = move || rng.range(-2.0, 2.0);
        let (mut hits, mut misses) = (0, 0);
        for round in 0..20_000 {
            let mut packet = TrianglePacket::EMPTY;
            let mut tris = Vec::new();
            for lane in 0..LANES {
                let mut tri = LeafTriangle {
                    a: [next(), next(), next()],
                    b: [next(), next(), next()],
                    c: [next(), next(), next()],
                };
                if round % 50 == 0 {
                    tri.b = tri.a; // degenerate
                }
                if round % 7 == 0 {
                    tri.a[0] = 0.25; // shared-edge-like exact values
                    tri.b[0] = 0.25;
                }
                packet.set(lane, &tri);
                tris.push(tri);
            }
            let o = Point3::new(next(), next(), next());
            let aim = &tris[round % LANES];
            let target = Point3::new(
                (aim.a[0] + aim.b[0] + aim.c[0]) / 3.0 + next() * 0.3,
                (aim.a[1] + aim.b[1] + aim.c[1]) / 3.0 + next() * 0.3,
                (aim.a[2] + aim.b[2] + aim.c[2]) / 3.0,
            );
            let t_min = [0.0, 1e-4, 0.5][round % 3];
            let source = Ray::with_range(o, target - o, t_min, 1.5);
            let ray = WatertightRay::new(&source);
            for culling in [Culling::None, Culling::Back, Culling::Front] {
                let test = WatertightPacket::new(&source, culling);
                let mut got = [None; LANES];
                let mut t_max = source.t_max();
                let stopped = test.run(&packet, 0, &mut t_max, |slot, hit| {
                    got[slot as usize] = Some(hit);
                    Some(source.t_max())
                });
                assert!(!stopped);
                for (lane, tri) in tris.iter().enumerate() {
                    let want = ray.intersect(tri, t_min, source.t_max(), culling);
                    assert_eq!(got[lane], want, "round {round} lane {lane} {culling:?}");
                    hits += usize::from(want.is_some());
                    misses += usize::from(want.is_none());
                }
            }
        }
        assert!(
            hits > 10_000 && misses > 20_000,
            "{hits} hits, {misses} misses"
        );
    }

    /// Every lane of a packet answers what the scalar test answers, bit for bit, over
    /// random triangles and rays (including degenerate triangles and empty lanes).
    #[test]
    fn lanes_equal_the_scalar_test() {
        let mut rng = crate::test_support::Rng::new(99);
        let mut next = move || rng.range(-2.0, 2.0);
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
