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

use crate::bvh::kernel::lanes::{Axis, PacketLanes};
use crate::bvh::kernel::portable::Portable;
use crate::bvh::kernel::slabs::EXIT_SLACK;
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
    Watertight(WatertightPacket<'a, Portable>),
}

impl<'a> LeafTest<'a> {
    // Inlined: out of line, the prepared test (over a hundred bytes) is built in one frame
    // and copied into the caller's, on every query (ray-kernel.md §10 has the price).
    #[inline(always)]
    pub(crate) fn new(ray: &'a Ray, options: &QueryOptions) -> LeafTest<'a> {
        LeafTest {
            ray: if options.watertight {
                PreparedRay::Watertight(WatertightPacket::new(Portable, ray, options.culling))
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

/// The watertight test of a packet's four triangles against one ray, written once over the
/// four lanes of [`PacketLanes`]: the x86 walk's leaves (AVX2 and FMA), the portable walk's
/// and every other query's (every hit, the count, the inside test's crossings) on the
/// portable lanes. The edge functions in SIMD, operation for operation as
/// [`WatertightRay::intersect`] computes them, so with its bits; for a ray whose range
/// starts after 0 (one leaving a surface), the lanes kept only where the sheared `f32` `t`,
/// give or take a conservative bound on its error, can land in the range (Pharr, Jakob and
/// Humphreys, *Physically Based Rendering*, 3rd ed., §3.9.6); then the scalar test's end on
/// each lane left ([`WatertightRay::finish_boxed`], with the lane's box entry and exit
/// computed four at a time with the bits of [`box_bounds`](crate::triangle::box_bounds)),
/// so every hit is the scalar test's.
pub(crate) struct WatertightPacket<'a, P: PacketLanes> {
    lanes: P,
    ray: WatertightRay<'a>,
    /// The rows of a corner the axes `kx`, `ky`, `kz` are.
    axes: [Axis; 3],
    /// The origin on axes `kx`, `ky`, `kz`, four times.
    origin: [P::F4; 3],
    /// The shear `sx`, `sy` and `1/d[kz]`, four times.
    shear: [P::F4; 3],
    culling: Culling,
    t_min: f32,
    /// The lanes whose sign of the determinant `culling` keeps: positive, negative.
    keep: (u32, u32),
    /// Whether to filter the lanes inside their edges by their sheared `t` (see [`filters`]).
    filter: bool,
    /// The ray's origin, reciprocal direction and signs, for its triangles' box entries
    /// and exits ([`box_bounds`](Self::box_bounds)), copied here so the test reads them
    /// beside its other constants.
    ray_origin: [f32; 3],
    inv: [f32; 3],
    negative: [bool; 3],
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

impl<'a, P: PacketLanes> WatertightPacket<'a, P> {
    /// The test of `ray` (valid) with `culling`, on the lanes `lanes`.
    #[inline(always)]
    pub(crate) fn new(lanes: P, ray: &'a Ray, culling: Culling) -> WatertightPacket<'a, P> {
        let w = WatertightRay::new(ray);
        let (origin, direction) = (ray.origin_axes(), ray.direction_axes());
        WatertightPacket {
            lanes,
            axes: [Axis::new(w.kx), Axis::new(w.ky), Axis::new(w.kz)],
            origin: [
                lanes.splat4(origin[w.kx]),
                lanes.splat4(origin[w.ky]),
                lanes.splat4(origin[w.kz]),
            ],
            shear: [
                lanes.splat4(w.sx),
                lanes.splat4(w.sy),
                lanes.splat4(1.0 / direction[w.kz]),
            ],
            ray: w,
            culling,
            t_min: ray.t_min(),
            keep: kept_signs(culling),
            filter: filters(ray),
            ray_origin: *origin,
            inv: ray.inv_direction().into(),
            negative: ray.negative(),
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
        let l = self.lanes;
        let corners = self.sheared(packet);
        let w = edges(l, &corners);
        let [wa, wb, wc] = w;
        let zero = l.splat4(0.0);
        let positive = l.bits4(l.and4(l.gt4(wa, zero), l.and4(l.gt4(wb, zero), l.gt4(wc, zero))));
        let negative = l.bits4(l.and4(l.lt4(wa, zero), l.and4(l.lt4(wb, zero), l.lt4(wc, zero))));
        let on_edge = l.bits4(l.or4(l.eq4(wa, zero), l.or4(l.eq4(wb, zero), l.eq4(wc, zero))));
        let inside = (positive & self.keep.0) | (negative & self.keep.1);
        if inside | on_edge == 0 {
            return false;
        }
        let mut lanes = on_edge;
        // The lanes' own boxes, where the filter needs them (else computed below).
        let mut bounds = None;
        if !self.filter {
            lanes |= inside;
        } else if inside != 0 {
            let (enter, leave) = self.box_bounds(packet);
            bounds = Some((enter, leave));
            lanes |= inside & self.may_hit(&w, &corners, (enter, leave), *t_max);
        }
        if lanes == 0 {
            return false;
        }
        let [wa, wb, wc] = [l.array4(wa), l.array4(wb), l.array4(wc)];
        let (enter, leave) = match bounds {
            Some(bounds) => bounds,
            None => self.box_bounds(packet),
        };
        let (entries, exits) = (l.array4(enter), l.array4(leave));
        while lanes != 0 {
            let lane = lanes.trailing_zeros() as usize & (LANES - 1);
            lanes &= lanes - 1;
            let mut e = [wa[lane], wb[lane], wc[lane]];
            if on_edge & (1 << lane) != 0 {
                // The scalar test's `f64` path, from the same sheared corners.
                let [(ax, ay, _), (bx, by, _), (cx, cy, _)] = corners;
                let [ax, ay, bx, by, cx, cy] = [ax, ay, bx, by, cx, cy].map(|v| l.array4(v)[lane]);
                e = edge_functions_f64([ax, ay], [bx, by], [cx, cy]);
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

    /// The lanes (bits) whose sheared `t`, `sz·(wa·az + wb·bz + wc·cz) / det`, give or take
    /// the bound on its error (PBR §3.9.6, for this shear: the x and y errors from the
    /// unscaled z, which the shear multiplies), doubled, plus 2⁻²⁰·|t| for the f64 plane's
    /// rounding to f32, can land in `t_min..t_max` within the lane's box (`enter`, `leave`).
    /// The multiply-adds are fused where the lanes fuse them, which only lowers the error the
    /// bound counts.
    #[inline(always)]
    fn may_hit(
        &self,
        w: &[P::F4; 3],
        corners: &[(P::F4, P::F4, P::F4); 3],
        (enter, leave): (P::F4, P::F4),
        t_max: f32,
    ) -> u32 {
        let l = self.lanes;
        let [wa, wb, wc] = *w;
        let [(ax, ay, az), (bx, by, bz), (cx, cy, cz)] = *corners;
        let sz = self.shear[2];
        let det = l.add4(l.add4(wa, wb), wc);
        let t = l.div4(
            l.mul4(sz, l.mul_add4(wa, az, l.mul_add4(wb, bz, l.mul4(wc, cz)))),
            det,
        );
        let (max_x, max_y) = (max_abs3(l, ax, bx, cx), max_abs3(l, ay, by, cy));
        let max_z = max_abs3(l, az, bz, cz);
        let max_zs = l.mul4(max_z, l.abs4(sz));
        let delta_x = l.mul4(l.splat4(gamma(5.0)), l.add4(max_x, max_z));
        let delta_y = l.mul4(l.splat4(gamma(5.0)), l.add4(max_y, max_z));
        let delta_z = l.mul4(l.splat4(gamma(3.0)), max_zs);
        let delta_e = l.mul4(
            l.splat4(2.0),
            l.mul_add4(
                l.mul4(l.splat4(gamma(2.0)), max_x),
                max_y,
                l.mul_add4(delta_y, max_x, l.mul4(delta_x, max_y)),
            ),
        );
        let max_e = max_abs3(l, wa, wb, wc);
        let delta_t = l.div4(
            l.mul4(
                l.splat4(6.0),
                l.mul_add4(
                    l.mul4(l.splat4(gamma(3.0)), max_e),
                    max_zs,
                    l.mul_add4(delta_e, max_zs, l.mul4(delta_z, max_e)),
                ),
            ),
            l.abs4(det),
        );
        let delta = l.mul_add4(l.abs4(t), l.splat4(EXIT_SLACK), delta_t);
        // The scalar end keeps `t` within the lane's own box (`within_box`): at most the
        // greater of the plane's and the entry, at least the lesser of the plane's and the
        // exit. The bounds second in `max4` and `min4` (which return their second operand on
        // a NaN), and the comparisons negated: a NaN (corners near f32's limit) leaves the
        // lane to the scalar test.
        l.bits4(l.and4(
            l.not_lt4(l.max4(enter, l.add4(t, delta)), l.splat4(self.t_min)),
            l.not_gt4(l.min4(leave, l.sub4(t, delta)), l.splat4(t_max)),
        ))
    }

    /// A packet's corners translated to the origin and sheared so the ray runs along +z,
    /// operation for operation as [`WatertightRay::intersect`] (not fused), so a ray through
    /// an edge goes to the triangle the scalar test gives it: `(x, y, z)` per corner, `z`
    /// not yet scaled.
    #[inline(always)]
    fn sheared(&self, packet: &TrianglePacket) -> [(P::F4, P::F4, P::F4); 3] {
        [
            self.corner(&packet.a),
            self.corner(&packet.b),
            self.corner(&packet.c),
        ]
    }

    /// One corner of [`sheared`](Self::sheared).
    #[inline(always)]
    fn corner(&self, p: &[[f32; LANES]; 3]) -> (P::F4, P::F4, P::F4) {
        let l = self.lanes;
        let [kx, ky, kz] = self.axes;
        let [ox, oy, oz] = self.origin;
        let [sx, sy, _] = self.shear;
        let z = l.sub4(l.load_axis(p, kz), oz);
        (
            l.sub4(l.sub4(l.load_axis(p, kx), ox), l.mul4(sx, z)),
            l.sub4(l.sub4(l.load_axis(p, ky), oy), l.mul4(sy, z)),
            z,
        )
    }

    /// Where the ray enters and leaves each lane's triangle's bounding box: the scalar
    /// test's [`box_bounds`](crate::triangle::box_bounds), operation for operation (`min4`
    /// and `max4` keep the second operand unless the first is strictly beyond, as it does),
    /// so the same bits.
    #[inline(always)]
    fn box_bounds(&self, packet: &TrianglePacket) -> (P::F4, P::F4) {
        let l = self.lanes;
        let (origin, inv, negative) = (&self.ray_origin, &self.inv, &self.negative);
        let mut enter = l.splat4(f32::NEG_INFINITY);
        let mut leave = l.splat4(f32::INFINITY);
        for k in 0..3 {
            let (a, b, c) = (
                l.load4(&packet.a[k]),
                l.load4(&packet.b[k]),
                l.load4(&packet.c[k]),
            );
            let least = l.min4(l.min4(a, b), c);
            let greatest = l.max4(l.max4(a, b), c);
            let (first, last) = if negative[k] {
                (greatest, least)
            } else {
                (least, greatest)
            };
            let (o, inv) = (l.splat4(origin[k]), l.splat4(inv[k]));
            enter = l.max4(l.mul4(l.sub4(first, o), inv), enter);
            leave = l.min4(l.mul4(l.sub4(last, o), inv), leave);
        }
        (enter, leave)
    }
}

/// The edge functions of sheared corners, without fusing, so a shared edge gives exactly
/// negated values in its two triangles (and the scalar test's bits).
#[inline(always)]
fn edges<P: PacketLanes>(l: P, c: &[(P::F4, P::F4, P::F4); 3]) -> [P::F4; 3] {
    let [(ax, ay, _), (bx, by, _), (cx, cy, _)] = *c;
    [
        l.sub4(l.mul4(cx, by), l.mul4(cy, bx)),
        l.sub4(l.mul4(ax, cy), l.mul4(ay, cx)),
        l.sub4(l.mul4(bx, ay), l.mul4(by, ax)),
    ]
}

/// The largest magnitude of three, lane by lane.
#[inline(always)]
fn max_abs3<P: PacketLanes>(l: P, a: P::F4, b: P::F4, c: P::F4) -> P::F4 {
    l.max4(l.abs4(a), l.max4(l.abs4(b), l.abs4(c)))
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
                let test = WatertightPacket::new(Portable, &source, culling);
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
