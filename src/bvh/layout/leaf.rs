//! The leaves: their triangles, stored four to a packet, and the tests a query runs on them.
//!
//! A leaf owns whole packets of four triangles, corners as struct of arrays
//! (`a[axis][lane]`), so one SIMD pass tests four triangles: Cramer's sign tests
//! ([`TrianglePacket::intersect`]) or the watertight test's edge functions
//! ([`TrianglePacket::watertight_edges`]). The arithmetic is the scalar tests', operation
//! for operation, so every lane's `D`, `D1`, `D2` (and edge functions) have the bits
//! [`LeafTriangle::intersect`] and [`WatertightRay::intersect`] compute; only lanes that pass
//! go on to the scalar tail, which takes `t` from the plane in `f64` ([`plane_t`]), checks the
//! range and computes `u` and `v`. Unused lanes hold NaN corners, which fail every test.
//!
//! [`plane_t`]: crate::triangle::plane_t

use crate::bvh::wide::{Collapsed, WIDTH};
use crate::triangle::{LeafTriangle, TriangleHit, accept};
use crate::watertight::WatertightRay;
use crate::{Aabb, Culling, QueryOptions, Ray};
use nalgebra::Point3;
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
    #[inline(always)]
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

    /// The watertight test's edge functions in SIMD, operation for operation as
    /// [`WatertightRay::intersect`] computes them, so with the same bits. Returns the lanes
    /// that may hit (a bit per lane): those whose edge functions are all non-zero, of one
    /// sign, and whose face `culling` keeps — what [`WatertightRay::finish`] then needs only
    /// to confirm — and the lanes with an edge function exactly zero (which `intersect`
    /// re-evaluates in f64; a subset of the first); and every lane's edge functions
    /// (`w[edge][lane]`) for [`WatertightRay::finish`].
    #[inline(always)]
    pub fn watertight_edges(
        &self,
        w: &WatertightRay,
        culling: Culling,
    ) -> (u32, u32, [[f32; LANES]; 3]) {
        let (kx, ky, kz) = (w.kx, w.ky, w.kz);
        let origin = w.origin();
        let [ox, oy, oz] = [kx, ky, kz].map(|k| f32x4::splat(origin[k]));
        let (sx, sy) = (f32x4::splat(w.sx), f32x4::splat(w.sy));
        // The corners relative to the origin, sheared: as `intersect`, axis by axis.
        let corner = |p: &[[f32; LANES]; 3]| {
            let z = f32x4::from(p[kz]) - oz;
            (
                (f32x4::from(p[kx]) - ox) - sx * z,
                (f32x4::from(p[ky]) - oy) - sy * z,
            )
        };
        let (ax, ay) = corner(&self.a);
        let (bx, by) = corner(&self.b);
        let (cx, cy) = corner(&self.c);
        let wa = cx * by - cy * bx;
        let wb = ax * cy - ay * cx;
        let wc = bx * ay - by * ax;
        let zero = f32x4::ZERO;
        let on_edge = wa.simd_eq(zero) | wb.simd_eq(zero) | wc.simd_eq(zero);
        let all_positive = wa.simd_gt(zero) & wb.simd_gt(zero) & wc.simd_gt(zero);
        let all_negative = wa.simd_lt(zero) & wb.simd_lt(zero) & wc.simd_lt(zero);
        // All non-zero and of one sign: the determinant (their sum) has that sign.
        let kept = match culling {
            Culling::None => all_positive | all_negative,
            Culling::Back => all_positive,
            Culling::Front => all_negative,
        };
        let on_edge = on_edge.to_bitmask();
        (
            kept.to_bitmask() | on_edge,
            on_edge,
            [wa.to_array(), wb.to_array(), wc.to_array()],
        )
    }
}

/// Packs the leaves of the collapsed `nodes` (a leaf lane's `child..child + count` are slots of `order`;
/// `corners(slot)` gives the corners of the triangle in that slot) into whole packets, pointing
/// each leaf lane at its first packet; returns the packets and the slot-to-triangle map
/// (`u32::MAX` for padding). Runs of nodes are packed on rayon's threads and joined in order,
/// so the result is the same on any number of threads.
pub(crate) fn pack(
    nodes: &mut [Collapsed],
    order: &[u32],
    corners: impl Fn(usize) -> [Point3<f32>; 3] + Sync,
) -> (Vec<TrianglePacket>, Vec<u32>) {
    // A run of nodes per thread: joining the runs copies all but the first.
    let nodes_per_task = nodes.len().div_ceil(crate::bvh::par::threads()).max(1);
    let parts = crate::bvh::par::map_chunks_mut(nodes, nodes_per_task, |nodes| {
        let packets: usize = nodes
            .iter()
            .flat_map(|node| leaf_lanes(node).map(|k| node.count[k].div_ceil(LANES as u32)))
            .sum::<u32>() as usize;
        let mut leaf_packets = Vec::with_capacity(packets);
        let mut triangle_index = Vec::with_capacity(packets * LANES);
        // Leaf lanes of this run point at packets counted from its start; moved below.
        for node in nodes.iter_mut() {
            for k in leaf_lanes(node) {
                let first = node.child[k] as usize;
                let range = first..first + node.count[k] as usize;
                node.child[k] = leaf_packets.len() as u32;
                for (start, slots) in range.clone().step_by(LANES).zip(order[range].chunks(LANES)) {
                    let mut packet = TrianglePacket::EMPTY;
                    for lane in 0..slots.len() {
                        let [a, b, c] = corners(start + lane);
                        packet.set(lane, &LeafTriangle::new(&a, &b, &c));
                    }
                    leaf_packets.push(packet);
                    triangle_index.extend_from_slice(slots);
                    triangle_index.extend(std::iter::repeat_n(u32::MAX, LANES - slots.len()));
                }
            }
        }
        (leaf_packets, triangle_index)
    });
    let mut parts = parts.into_iter();
    let (mut leaf_packets, mut triangle_index) = parts.next().unwrap_or_default();
    let count = nodes.len();
    for (run, (packets, index)) in parts.enumerate() {
        let start = (run + 1) * nodes_per_task;
        let offset = leaf_packets.len() as u32;
        for node in &mut nodes[start..(start + nodes_per_task).min(count)] {
            for k in leaf_lanes(node) {
                node.child[k] += offset;
            }
        }
        leaf_packets.extend_from_slice(&packets);
        triangle_index.extend_from_slice(&index);
    }
    (leaf_packets, triangle_index)
}

/// The box of `count` triangles in packets from `first` (a leaf lane's, or a run of packets'):
/// straight from the packets' lanes, four at a time per axis; a run's last packet may end in
/// empty (NaN) lanes, which are replaced by the min's and max's identities.
pub(crate) fn packets_box(packets: &[TrianglePacket], first: u32, count: u32) -> Aabb {
    let (mut lo, mut hi) = (
        [f32x4::splat(f32::INFINITY); 3],
        [f32x4::splat(f32::NEG_INFINITY); 3],
    );
    let n = (count as usize).div_ceil(LANES);
    for (k, packet) in packets[first as usize..][..n].iter().enumerate() {
        let used = USED[(count as usize - k * LANES).min(LANES)];
        for axis in 0..3 {
            let [a, b, c] = [&packet.a, &packet.b, &packet.c].map(|p| f32x4::from(p[axis]));
            let small = used.bitselect(a.fast_min(b).fast_min(c), lo[axis]);
            let big = used.bitselect(a.fast_max(b).fast_max(c), hi[axis]);
            lo[axis] = lo[axis].fast_min(small);
            hi[axis] = hi[axis].fast_max(big);
        }
    }
    let across = |v: f32x4, f: fn(f32, f32) -> f32| {
        let [x, y, z, w] = v.to_array();
        f(f(x, y), f(z, w))
    };
    Aabb {
        min: Point3::from(lo.map(|v| across(v, f32::min))),
        max: Point3::from(hi.map(|v| across(v, f32::max))),
    }
}

/// Per count of used lanes (0 to 4), the mask of those lanes (all bits set).
const USED: [f32x4; LANES + 1] = {
    let on = f32::from_bits(u32::MAX);
    [
        f32x4::new([0.0; 4]),
        f32x4::new([on, 0.0, 0.0, 0.0]),
        f32x4::new([on, on, 0.0, 0.0]),
        f32x4::new([on, on, on, 0.0]),
        f32x4::new([on; 4]),
    ]
};

/// The lanes of `node` that are leaves (found first, so `node` may change meanwhile).
fn leaf_lanes(node: &Collapsed) -> impl Iterator<Item = usize> + use<> {
    let leaves = node
        .lanes()
        .fold(0u32, |m, k| m | u32::from(node.count[k] > 0) << k);
    (0..WIDTH).filter(move |k| leaves & (1 << k) != 0)
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
    Watertight(WatertightRay<'a>),
}

impl<'a> LeafTest<'a> {
    pub(crate) fn new(ray: &'a Ray, options: &QueryOptions) -> LeafTest<'a> {
        LeafTest {
            ray: if options.watertight {
                PreparedRay::Watertight(WatertightRay::new(ray))
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
                // The watertight test: a SIMD filter, then the scalar test's end on the lanes
                // it keeps (empty lanes have NaN corners, whose edge functions are NaN: never
                // kept, never zero).
                PreparedRay::Watertight(w) => {
                    let (mut lanes, on_edge, edges) = packet.watertight_edges(w, self.culling);
                    let mut stopped = false;
                    while lanes != 0 && !stopped {
                        let lane = lanes.trailing_zeros() as usize;
                        lanes &= lanes - 1;
                        let tri = packet.get(lane);
                        // An edge function exactly zero takes the scalar test's f64 path;
                        // the others go on from the edge functions just computed.
                        let hit = if on_edge & (1 << lane) != 0 {
                            w.intersect(&tri, self.t_min, *t_max, self.culling)
                        } else {
                            let e = [edges[0][lane], edges[1][lane], edges[2][lane]];
                            w.finish(&tri, e, self.t_min, *t_max, self.culling)
                        };
                        stopped = match hit {
                            Some(hit) => match found(base + lane as u32, hit) {
                                Some(t) => {
                                    *t_max = t;
                                    false
                                }
                                None => true,
                            },
                            None => false,
                        };
                    }
                    stopped
                }
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
    use nalgebra::Point3;

    /// The SIMD filter never drops a lane the scalar test hits (under every culling), and
    /// drops most misses and culled faces.
    #[test]
    fn packet_filter_keeps_every_hit() {
        let mut rng = crate::test_support::Rng::new(7);
        let mut next = move || rng.range(-2.0, 2.0);
        let (mut hits, mut dropped) = (0, 0);
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
            let source = Ray::new(o, target - o);
            let ray = WatertightRay::new(&source);
            for culling in [Culling::None, Culling::Back, Culling::Front] {
                let (mask, on_edge, edges) = packet.watertight_edges(&ray, culling);
                assert_eq!(on_edge & !mask, 0, "round {round}");
                for (lane, tri) in tris.iter().enumerate() {
                    let want = ray.intersect(tri, 0.0, f32::INFINITY, culling);
                    if want.is_some() {
                        hits += 1;
                        assert!(mask & (1 << lane) != 0, "round {round} lane {lane}");
                    }
                    // From the SIMD edge functions, the scalar test's answer, bit for bit.
                    if mask & !on_edge & (1 << lane) != 0 {
                        let e = [edges[0][lane], edges[1][lane], edges[2][lane]];
                        let got = ray.finish(tri, e, 0.0, f32::INFINITY, culling);
                        assert_eq!(got, want, "round {round} lane {lane} {culling:?}");
                    }
                    dropped += usize::from(mask & (1 << lane) == 0);
                }
            }
        }
        assert!(
            hits > 10_000 && dropped > 20_000,
            "{hits} hits, {dropped} dropped"
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
