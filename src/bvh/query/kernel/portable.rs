//! The walk on portable lanes (WebAssembly, ARM, an x86 without AVX2 and FMA, or
//! `MESHRAY_SIMD=portable`): [`Portable`], the [`Lanes`] of `wide`'s eight `f32` (SSE2,
//! NEON, simd128 or scalar code), with the same bits as the x86 lanes, so the same nodes in
//! the same order and the same answers. Also the walk of trees deeper than the x86 walk's
//! stack, of Cramer's rule (which only the portable leaves have), and of queries that report
//! what they tested ([`Tally`]).
//!
//! A leaf lane goes to the caller ([`walk()`]), which for a mesh's closest or any hit
//! ([`cast`]) is the packet test ([`LeafTest`]), so every hit is the scalar test's, and ties
//! go to the lowest triangle through [`keep_closer`].

use super::lanes::{Axis, Lanes, PacketLanes, Row};
use super::network::sorted_lanes;
use super::slabs::Grow;
use super::walk::{self, Leaves, Visit, octant};
use super::{Found, Tree};
use crate::bvh::leaf::{LANES, TrianglePacket};
use crate::bvh::packet::LeafTest;
use crate::bvh::ray_hits::{Tally, keep_closer};
use crate::bvh::ray_node::COMPACT;
use crate::bvh::wide::{WIDTH, WideNode};
use crate::{QueryOptions, Ray};
use std::mem::MaybeUninit;
use wide::{f32x4, f32x8};

/// Eight boxes' coordinates on one axis, one lane each.
type BoxLanes = f32x8;

/// `$min(a, b)`: `if a < b { a } else { b }` lane by lane, and `$max(a, b)`: `if a > b { a }
/// else { b }`, for `wide`'s `$t`, with x86's rule (`minps(a, b)`, `maxps(a, b)`: `b` on a
/// `NaN` or a tie), which the x86 lanes' bits need: x86's own instructions where the target
/// has SSE, else a compare and a select (`$min_select`, `$max_select`, compiled in tests
/// everywhere so that x86 checks them against its instructions).
macro_rules! x86_min_max {
    ($t:ty, $min:ident, $max:ident, $min_select:ident, $max_select:ident) => {
        #[inline(always)]
        fn $min(a: $t, b: $t) -> $t {
            #[cfg(target_feature = "sse")]
            {
                a.fast_min(b)
            }
            #[cfg(not(target_feature = "sse"))]
            {
                $min_select(a, b)
            }
        }

        #[inline(always)]
        fn $max(a: $t, b: $t) -> $t {
            #[cfg(target_feature = "sse")]
            {
                a.fast_max(b)
            }
            #[cfg(not(target_feature = "sse"))]
            {
                $max_select(a, b)
            }
        }

        #[cfg(any(test, not(target_feature = "sse")))]
        #[inline(always)]
        fn $min_select(a: $t, b: $t) -> $t {
            a.simd_lt(b).bitselect(a, b)
        }

        #[cfg(any(test, not(target_feature = "sse")))]
        #[inline(always)]
        fn $max_select(a: $t, b: $t) -> $t {
            a.simd_gt(b).bitselect(a, b)
        }
    };
}

x86_min_max!(f32x8, min8, max8, min8_select, max8_select);
x86_min_max!(f32x4, min4, max4, min4_select, max4_select);

/// `wide`'s lanes as the walk's [`Lanes`]: they run on every target.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Portable;

impl Lanes for Portable {
    type F = BoxLanes;
    type U = [u32; WIDTH];
    /// The lanes' bits.
    type M = u8;

    #[inline(always)]
    fn splat(self, x: f32) -> BoxLanes {
        BoxLanes::splat(x)
    }
    #[inline(always)]
    fn splat_u(self, x: u32) -> [u32; WIDTH] {
        [x; WIDTH]
    }
    #[inline(always)]
    fn row(self, node: &WideNode, row: Row) -> BoxLanes {
        BoxLanes::from(*row.of(node))
    }
    #[inline(always)]
    fn children(self, node: &WideNode) -> [u32; WIDTH] {
        node.child
    }
    #[inline(always)]
    fn order(self, node: &WideNode, shift: [u32; WIDTH]) -> [u32; WIDTH] {
        std::array::from_fn(|k| node.order[k] >> (shift[k] & 31))
    }
    #[inline(always)]
    fn sub(self, a: BoxLanes, b: BoxLanes) -> BoxLanes {
        a - b
    }
    #[inline(always)]
    fn mul(self, a: BoxLanes, b: BoxLanes) -> BoxLanes {
        a * b
    }
    #[inline(always)]
    fn add(self, a: BoxLanes, b: BoxLanes) -> BoxLanes {
        a + b
    }
    #[inline(always)]
    fn raise(self, bound: BoxLanes, t: BoxLanes) -> BoxLanes {
        max8(t, bound)
    }
    #[inline(always)]
    fn lower(self, bound: BoxLanes, t: BoxLanes) -> BoxLanes {
        min8(t, bound)
    }
    #[inline(always)]
    fn le(self, a: BoxLanes, b: BoxLanes) -> u8 {
        a.simd_le(b).to_bitmask() as u8
    }
    #[inline(always)]
    fn bits(self, m: u8) -> u8 {
        m
    }
    #[inline(always)]
    fn permute_m(self, m: u8, lanes: [u32; WIDTH]) -> u8 {
        (0..WIDTH).fold(0, |bits, k| bits | ((m >> (lanes[k] & 7)) & 1) << k)
    }
    #[inline(always)]
    fn permute_u(self, v: [u32; WIDTH], lanes: [u32; WIDTH]) -> [u32; WIDTH] {
        std::array::from_fn(|k| v[(lanes[k] & 7) as usize])
    }
    #[inline(always)]
    fn permute_f(self, v: BoxLanes, lanes: [u32; WIDTH]) -> BoxLanes {
        let v = v.to_array();
        BoxLanes::from(std::array::from_fn::<f32, WIDTH, _>(|k| {
            v[(lanes[k] & 7) as usize]
        }))
    }
    #[inline(always)]
    fn compact(self, mask: u32) -> [u32; WIDTH] {
        COMPACT[mask as usize & 0xff].map(u32::from)
    }
    #[inline(always)]
    fn sorted(self, key: BoxLanes, entered: u8) -> [u32; WIDTH] {
        sorted_lanes(u32::from(entered), &key.to_array()).map(|k| k as u32)
    }
    #[inline(always)]
    fn to_array(self, v: BoxLanes) -> [f32; WIDTH] {
        v.to_array()
    }
    #[inline(always)]
    fn store_u(self, to: &mut [MaybeUninit<u32>; WIDTH], v: [u32; WIDTH]) {
        for (to, v) in to.iter_mut().zip(v) {
            to.write(v);
        }
    }
    #[inline(always)]
    fn store_f(self, to: &mut [MaybeUninit<f32>; WIDTH], v: BoxLanes) {
        for (to, v) in to.iter_mut().zip(v.to_array()) {
            to.write(v);
        }
    }
}

impl PacketLanes for Portable {
    type F4 = f32x4;
    type M4 = f32x4;

    #[inline(always)]
    fn splat4(self, x: f32) -> f32x4 {
        f32x4::splat(x)
    }
    #[inline(always)]
    fn load4(self, row: &[f32; 4]) -> f32x4 {
        f32x4::from(*row)
    }
    #[inline(always)]
    fn load_axis(self, corner: &[[f32; 4]; 3], axis: Axis) -> f32x4 {
        f32x4::from(corner[axis.get()])
    }
    #[inline(always)]
    fn add4(self, a: f32x4, b: f32x4) -> f32x4 {
        a + b
    }
    #[inline(always)]
    fn sub4(self, a: f32x4, b: f32x4) -> f32x4 {
        a - b
    }
    #[inline(always)]
    fn mul4(self, a: f32x4, b: f32x4) -> f32x4 {
        a * b
    }
    #[inline(always)]
    fn div4(self, a: f32x4, b: f32x4) -> f32x4 {
        a / b
    }
    #[inline(always)]
    fn mul_add4(self, a: f32x4, b: f32x4, c: f32x4) -> f32x4 {
        a * b + c
    }
    #[inline(always)]
    fn min4(self, a: f32x4, b: f32x4) -> f32x4 {
        min4(a, b)
    }
    #[inline(always)]
    fn max4(self, a: f32x4, b: f32x4) -> f32x4 {
        max4(a, b)
    }
    #[inline(always)]
    fn abs4(self, a: f32x4) -> f32x4 {
        a.abs()
    }
    #[inline(always)]
    fn gt4(self, a: f32x4, b: f32x4) -> f32x4 {
        a.simd_gt(b)
    }
    #[inline(always)]
    fn lt4(self, a: f32x4, b: f32x4) -> f32x4 {
        a.simd_lt(b)
    }
    #[inline(always)]
    fn eq4(self, a: f32x4, b: f32x4) -> f32x4 {
        a.simd_eq(b)
    }
    #[inline(always)]
    fn not_lt4(self, a: f32x4, b: f32x4) -> f32x4 {
        !a.simd_lt(b)
    }
    #[inline(always)]
    fn not_gt4(self, a: f32x4, b: f32x4) -> f32x4 {
        !a.simd_gt(b)
    }
    #[inline(always)]
    fn and4(self, a: f32x4, b: f32x4) -> f32x4 {
        a & b
    }
    #[inline(always)]
    fn or4(self, a: f32x4, b: f32x4) -> f32x4 {
        a | b
    }
    #[inline(always)]
    fn bits4(self, m: f32x4) -> u32 {
        m.to_bitmask()
    }
    #[inline(always)]
    fn array4(self, v: f32x4) -> [f32; 4] {
        v.to_array()
    }
}

/// The closest hit (`ANY == false`) or the first hit found (`ANY == true`) of `ray` (valid)
/// with `options`: what the x86 walk answers (the closest hit bit for bit; any
/// hit, a hit of the scalar test), or with Cramer's rule (`watertight: false`) what the
/// scalar Cramer test answers; the boxes and triangles tested counted into `tally`. `CAP`
/// stack entries must hold the tree ([`capacity`](super::capacity) of its depth, which is
/// asserted).
// Out of line on x86-64, where it is the fallback (no AVX2, Cramer's rule, a deep tree), so
// the query that picks between the walks keeps the x86 walk's set-up lean; inlined
// elsewhere, where it is the walk.
#[cfg_attr(target_arch = "x86_64", inline(never))]
#[cfg_attr(not(target_arch = "x86_64"), inline(always))]
pub(crate) fn cast<const ANY: bool, const CAP: usize, T: Tally>(
    tree: Tree,
    ray: &Ray,
    options: &QueryOptions,
    tally: &mut T,
) -> Option<Found> {
    let mut leaves = PacketLeaves::<ANY, T> {
        leaf: LeafTest::new(ray, options),
        packets: tree.packets,
        index: tree.index,
        best: None,
        triangles: 0,
        tally: std::marker::PhantomData,
    };
    walk::<ANY, CAP, T, _>(
        tree.nodes,
        tree.depth,
        ray,
        &Grow::NONE,
        ray.t_max(),
        tally,
        &mut leaves,
    );
    tally.triangles(leaves.triangles);
    leaves.best
}

/// A mesh's packets tested by [`LeafTest`] as the walk's leaves: the closest hit kept by
/// [`keep_closer`], or the first hit found ending the walk (`ANY`); the triangles reached
/// counted where `T` counts.
struct PacketLeaves<'a, const ANY: bool, T> {
    leaf: LeafTest<'a>,
    packets: &'a [TrianglePacket],
    index: &'a [u32],
    best: Option<Found>,
    triangles: u32,
    tally: std::marker::PhantomData<T>,
}

impl<const ANY: bool, T: Tally> Leaves for PacketLeaves<'_, ANY, T> {
    #[inline(always)]
    fn enter(&mut self, packet: u32, t_max: &mut f32) -> bool {
        let (index, best) = (self.index, &mut self.best);
        if T::COUNTS {
            let slots = &index[packet as usize * LANES..][..LANES];
            self.triangles += slots.iter().filter(|&&i| i != u32::MAX).count() as u32;
        }
        self.leaf
            .run(self.packets, packet as usize, LANES, t_max, |slot, hit| {
                if ANY {
                    *best = Some((slot, hit));
                    return None;
                }
                keep_closer(index, best, slot, hit);
                Some(hit.t)
            })
    }
}

/// Walks `nodes` (root at 0; none, no walk), whose deepest leaf lane is at `depth`, for
/// `ray` (valid) over `ray.t_min()..t_max` and boxes grown by `grow`, on the portable lanes,
/// handing each leaf lane the ray enters to `leaves` (as [`walk::walk`] says). `CAP` stack
/// entries must hold the tree ([`capacity`](super::capacity) of `depth`, which is asserted).
#[inline(always)]
pub(crate) fn walk<const LANE_ORDER: bool, const CAP: usize, T: Tally, L: Leaves>(
    nodes: &[WideNode],
    depth: usize,
    ray: &Ray,
    grow: &Grow,
    t_max: f32,
    tally: &mut T,
    leaves: &mut L,
) {
    walk::walk_tree::<_, LANE_ORDER, CAP, T, L>(
        Portable,
        nodes,
        depth,
        ray,
        octant(ray),
        grow,
        t_max,
        tally,
        leaves,
    );
}

/// [`walk()`] with a caller's visit (`visit(entry, t_max)`, `true` to stop) as its leaves.
#[inline(always)]
pub(crate) fn visit<const LANE_ORDER: bool, const CAP: usize, V>(
    nodes: &[WideNode],
    depth: usize,
    ray: &Ray,
    grow: &Grow,
    t_max: f32,
    visit: V,
) where
    V: FnMut(u32, &mut f32) -> bool,
{
    walk::<LANE_ORDER, CAP, (), _>(nodes, depth, ray, grow, t_max, &mut (), &mut Visit(visit));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The portable minima and maxima (what WebAssembly and ARM run) give x86's bits at both
    /// widths, NaN lanes and signed zeros included: the second operand on a NaN or a tie.
    #[test]
    fn selects_equal_the_x86_min_and_max() {
        let special = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            3.5e-39,
            1e30,
        ];
        let mut checked = 0;
        for (i, &a) in special.iter().enumerate() {
            for &b in &special {
                let p = [a, b, a, b, -a, -b, b, a];
                let q = [b, a, special[(i + 3) % 10], b, a, -b, -a, b];
                let bits8 = |x: f32x8| x.to_array().map(f32::to_bits);
                let (p8, q8) = (f32x8::from(p), f32x8::from(q));
                assert_eq!(bits8(min8(p8, q8)), bits8(min8_select(p8, q8)), "{a} {b}");
                assert_eq!(bits8(max8(p8, q8)), bits8(max8_select(p8, q8)), "{a} {b}");
                let bits4 = |x: f32x4| x.to_array().map(f32::to_bits);
                let (p4, q4) = (
                    f32x4::from([p[0], p[1], p[2], p[3]]),
                    f32x4::from([q[4], q[5], q[6], q[7]]),
                );
                assert_eq!(bits4(min4(p4, q4)), bits4(min4_select(p4, q4)), "{a} {b}");
                assert_eq!(bits4(max4(p4, q4)), bits4(max4_select(p4, q4)), "{a} {b}");
                checked += 1;
            }
        }
        assert_eq!(checked, 100);
    }
}
