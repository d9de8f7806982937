//! The eight-lane operations the walk ([`walk`](super::walk)) is written in, one lane per
//! child of a [`WideNode`]: the slab test's arithmetic, a minimum and maximum with one rule
//! for `NaN`, compares into lane masks, and the permutations and compression that put the
//! entered children on the stack in order. The walk is written once over [`Lanes`]; x86
//! implements it with AVX2 intrinsics (`x86::Avx`, compiled for AVX2 and again for AVX-512),
//! every other target with `wide`'s portable lanes ([`Portable`](super::portable::Portable):
//! SSE2, NEON, simd128 or scalar code). Each operation rounds as the scalar slab test does and
//! both implementations give the same bits, so the two walks visit the same nodes in the same
//! order by construction.

use crate::bvh::wide::{WIDTH, WideNode};
use std::mem::MaybeUninit;

/// Which of a node's six rows of box planes to read: axis `0..3`, its `min` or its `max`.
/// Only [`Row::new`] makes one, so the axis is always in range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Row {
    axis: usize,
    max: bool,
}

impl Row {
    /// The row of the planes on `axis` (`z` for anything above 2) at the boxes' minimum or
    /// maximum.
    #[inline(always)]
    pub(crate) fn new(axis: usize, max: bool) -> Row {
        Row {
            axis: axis.min(2),
            max,
        }
    }

    /// The row's byte offset in a [`WideNode`]: a multiple of 32 inside its first 192 bytes
    /// (how the x86 lanes read it).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn offset(self) -> usize {
        const ROW: usize = std::mem::size_of::<[f32; WIDTH]>();
        const MAX: usize = std::mem::offset_of!(WideNode, max);
        self.axis * ROW + usize::from(self.max) * MAX
    }

    /// The row's eight planes.
    #[inline(always)]
    pub(crate) fn of(self, node: &WideNode) -> &[f32; WIDTH] {
        if self.max {
            &node.max[self.axis]
        } else {
            &node.min[self.axis]
        }
    }
}

/// Eight lanes of `f32` ([`Lanes::F`]), of `u32` ([`Lanes::U`]) and of a compare's outcome
/// ([`Lanes::M`]), and what the walk does with them. A value of the implementing type is the
/// proof that the instructions it uses run here (a zero-sized token); every method is
/// `#[inline(always)]`, so it takes the instructions of the function it is inlined into.
pub(crate) trait Lanes: Copy {
    /// Eight `f32`.
    type F: Copy;
    /// Eight `u32`: child words, order words, lane numbers.
    type U: Copy;
    /// Eight lanes of a compare's outcome.
    type M: Copy;

    /// `x` in every lane.
    fn splat(self, x: f32) -> Self::F;
    /// `x` in every lane.
    fn splat_u(self, x: u32) -> Self::U;
    /// A node's row of planes.
    fn row(self, node: &WideNode, row: Row) -> Self::F;
    /// A node's child words.
    fn children(self, node: &WideNode) -> Self::U;
    /// A node's order words, each shifted right by `shift` (its lane for an octant in the
    /// low three bits).
    fn order(self, node: &WideNode, shift: Self::U) -> Self::U;
    /// `a − b`, lane by lane.
    fn sub(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a · b`, lane by lane.
    fn mul(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a + b`, lane by lane.
    fn add(self, a: Self::F, b: Self::F) -> Self::F;
    /// `if t > bound { t } else { bound }`, lane by lane: a `NaN` `t` keeps the bound (x86's
    /// `maxps(t, bound)`).
    fn raise(self, bound: Self::F, t: Self::F) -> Self::F;
    /// `if t < bound { t } else { bound }`, lane by lane (x86's `minps(t, bound)`).
    fn lower(self, bound: Self::F, t: Self::F) -> Self::F;
    /// Where `a ≤ b` (false on a `NaN`).
    fn le(self, a: Self::F, b: Self::F) -> Self::M;
    /// A compare's lanes as bits, lane `k` in bit `k`.
    fn bits(self, m: Self::M) -> u8;
    /// The lanes of `m` permuted: lane `k` takes lane `lanes[k] & 7`.
    fn permute_m(self, m: Self::M, lanes: Self::U) -> Self::M;
    /// The lanes of `v` permuted: lane `k` takes lane `lanes[k] & 7`.
    fn permute_u(self, v: Self::U, lanes: Self::U) -> Self::U;
    /// The lanes of `v` permuted: lane `k` takes lane `lanes[k] & 7`.
    fn permute_f(self, v: Self::F, lanes: Self::U) -> Self::F;
    /// The lane numbers of `mask`'s set bits (`mask < 256`), lowest first, then zeros: the
    /// permutation that compresses those lanes to the front.
    fn compact(self, mask: u32) -> Self::U;
    /// The lanes of `entered` ordered by their `key` largest first (the lanes not entered
    /// after them), as [`sorted_lanes`](super::network::sorted_lanes) orders them, key for
    /// key.
    fn sorted(self, key: Self::F, entered: Self::M) -> Self::U;
    /// The eight `f32` as an array.
    fn to_array(self, v: Self::F) -> [f32; WIDTH];
    /// Writes eight `u32` to `to` (eight stack entries).
    fn store_u(self, to: &mut [MaybeUninit<u32>; WIDTH], v: Self::U);
    /// Writes eight `f32` to `to`.
    fn store_f(self, to: &mut [MaybeUninit<f32>; WIDTH], v: Self::F);
}

/// Which of a packet corner's three rows (`x`, `y`, `z` of four triangles) to read: only
/// [`Axis::new`] makes one, so it is always in range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Axis(usize);

impl Axis {
    /// Axis `a` (`z` for anything above 2: a compare and a move, where a modulo would be a
    /// multiplication per axis and query).
    #[inline(always)]
    pub(crate) fn new(a: usize) -> Axis {
        Axis(a.min(2))
    }

    /// The axis, in `0..3`.
    #[inline(always)]
    pub(crate) fn get(self) -> usize {
        self.0
    }
}

/// Four lanes of `f32` ([`PacketLanes::F4`]) and of a compare's outcome
/// ([`PacketLanes::M4`]), one lane per triangle of a packet, and what the watertight packet
/// test ([`WatertightPacket`](crate::bvh::packet::WatertightPacket)) does with them. As for
/// [`Lanes`], a value of the implementing type proves its instructions run here, and every
/// method is `#[inline(always)]`. Every operation has the bits of the scalar one (`min4` and
/// `max4` with x86's rule), but `mul_add4`, fused where the lanes fuse it, which the test
/// uses only in its conservative filter.
pub(crate) trait PacketLanes: Copy {
    /// Four `f32`.
    type F4: Copy;
    /// Four lanes of a compare's outcome.
    type M4: Copy;

    /// `x` in every lane.
    fn splat4(self, x: f32) -> Self::F4;
    /// A packet's row of four.
    fn load4(self, row: &[f32; 4]) -> Self::F4;
    /// A packet corner's row `axis`.
    fn load_axis(self, corner: &[[f32; 4]; 3], axis: Axis) -> Self::F4;
    /// `a + b`.
    fn add4(self, a: Self::F4, b: Self::F4) -> Self::F4;
    /// `a − b`.
    fn sub4(self, a: Self::F4, b: Self::F4) -> Self::F4;
    /// `a · b`.
    fn mul4(self, a: Self::F4, b: Self::F4) -> Self::F4;
    /// `a / b`.
    fn div4(self, a: Self::F4, b: Self::F4) -> Self::F4;
    /// `a · b + c`, fused where the instructions have it (x86), else rounded twice.
    fn mul_add4(self, a: Self::F4, b: Self::F4, c: Self::F4) -> Self::F4;
    /// `if a < b { a } else { b }` (x86's `minps(a, b)`: `b` on a `NaN` or a tie).
    fn min4(self, a: Self::F4, b: Self::F4) -> Self::F4;
    /// `if a > b { a } else { b }` (x86's `maxps(a, b)`).
    fn max4(self, a: Self::F4, b: Self::F4) -> Self::F4;
    /// `|a|`.
    fn abs4(self, a: Self::F4) -> Self::F4;
    /// Where `a > b`.
    fn gt4(self, a: Self::F4, b: Self::F4) -> Self::M4;
    /// Where `a < b`.
    fn lt4(self, a: Self::F4, b: Self::F4) -> Self::M4;
    /// Where `a == b`.
    fn eq4(self, a: Self::F4, b: Self::F4) -> Self::M4;
    /// Where not `a < b` (true on a `NaN`).
    fn not_lt4(self, a: Self::F4, b: Self::F4) -> Self::M4;
    /// Where not `a > b` (true on a `NaN`).
    fn not_gt4(self, a: Self::F4, b: Self::F4) -> Self::M4;
    /// Both.
    fn and4(self, a: Self::M4, b: Self::M4) -> Self::M4;
    /// Either.
    fn or4(self, a: Self::M4, b: Self::M4) -> Self::M4;
    /// A compare's lanes as bits, lane `k` in bit `k`.
    fn bits4(self, m: Self::M4) -> u32;
    /// The four `f32` as an array.
    fn array4(self, v: Self::F4) -> [f32; 4];
}
