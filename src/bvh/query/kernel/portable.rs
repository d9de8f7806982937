//! The walk on portable lanes (WebAssembly, ARM, an x86 without AVX2 and FMA, or
//! `MESHRAY_SIMD=portable`): [`Portable`], the [`Lanes`] of `wide`'s eight `f32` (SSE2,
//! NEON, simd128 or scalar code), with the same bits as the x86 lanes, so the same nodes in
//! the same order and the same answers. Also the walk of trees deeper than the x86 walk's
//! stack, of Cramer's rule (which only the portable leaves have), and of queries that report
//! what they tested ([`Tally`]).
//!
//! A leaf lane goes to the caller ([`walk`]), which for a mesh's closest or any hit
//! ([`cast`]) is the packet test ([`LeafTest`]), so every hit is the scalar test's, and ties
//! go to the lowest triangle through [`keep_closer`].

use super::lanes::{Lanes, Row};
use super::network::sorted_lanes;
use super::slabs::{BoxLanes, Grow, lower, raise};
use super::walk::{self, Leaves, Visit, octant};
use super::{Found, Tree, capacity};
use crate::bvh::leaf::{LANES, TrianglePacket};
use crate::bvh::packet::LeafTest;
use crate::bvh::ray_hits::{Tally, keep_closer};
use crate::bvh::ray_node::COMPACT;
use crate::bvh::wide::{WIDTH, WideNode};
use crate::{QueryOptions, Ray};
use std::mem::MaybeUninit;

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
        raise(bound, t)
    }
    #[inline(always)]
    fn lower(self, bound: BoxLanes, t: BoxLanes) -> BoxLanes {
        lower(bound, t)
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

/// The closest hit (`ANY == false`) or the first hit found (`ANY == true`) of `ray` (valid)
/// with `options`: what the x86 walk answers (the closest hit bit for bit; any
/// hit, a hit of the scalar test), or with Cramer's rule (`watertight: false`) what the
/// scalar Cramer test answers; the boxes and triangles tested counted into `tally`. `CAP`
/// stack entries must hold the tree ([`capacity`] of its depth, which is asserted).
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
/// entries must hold the tree ([`capacity`] of `depth`, which is asserted).
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
    if nodes.is_empty() {
        return;
    }
    assert!(capacity(depth) <= CAP);
    // SAFETY: the nodes are a ray tree made by `ray_tree` (or loaded, or refitted, and
    // validated), as every caller's are; its leaves are no deeper than `depth`, and `CAP`
    // holds `capacity(depth)` (asserted above, and chosen so by every caller, which makes
    // the assertion free).
    #[allow(unsafe_code)]
    unsafe {
        walk::walk::<_, LANE_ORDER, CAP, T, L>(
            Portable,
            nodes,
            ray,
            octant(ray),
            grow,
            t_max,
            tally,
            leaves,
        );
    }
}

/// [`walk`] with a caller's visit (`visit(entry, t_max)`, `true` to stop) as its leaves.
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
