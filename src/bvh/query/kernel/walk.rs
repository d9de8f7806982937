//! The walk, written once over the eight lanes of [`Lanes`] and instantiated for each
//! instruction set: AVX2 and AVX-512 (`x86`), and the portable lanes
//! ([`portable`](super::portable)). What it does per node is the kernel's notes'
//! ([`kernel`](super)); what it does with a leaf lane is its [`Leaves`]'.
//!
//! The stack is two arrays on the call's stack, left unwritten until pushed (zeroing them
//! costs a large share of a short query): a node visit writes eight entries above the top
//! (the entered children compressed to the front, in the order they are to be taken back,
//! the rest of the eight ignored) and raises the top by the number entered.

// Unsafe for the stack and the tree: the nodes read without bounds checks (the walk's
// callers promise the tree), the stack's entries written eight at a time above the top and
// read below it.
#![allow(unsafe_code)]

use super::lanes::{Lanes, Row};
use super::slabs::{EXIT_SLACK, Grow};
use super::{KEY_POINT, capacity};
use crate::Ray;
use crate::bvh::ray_hits::Tally;
use crate::bvh::wide::{LEAF, SORT, WIDTH, WideNode};
use std::mem::MaybeUninit;

/// What the walk does with each leaf lane the ray enters.
pub(crate) trait Leaves {
    /// Visits leaf lane `first` (a packet, or a place in a scene's instance order) with the
    /// current end of the range, which it may lower; `true` ends the walk.
    fn enter(&mut self, first: u32, t_max: &mut f32) -> bool;
}

/// A caller's leaf visit as [`Leaves`].
pub(crate) struct Visit<V>(pub V);

impl<V: FnMut(u32, &mut f32) -> bool> Leaves for Visit<V> {
    #[inline(always)]
    fn enter(&mut self, first: u32, t_max: &mut f32) -> bool {
        (self.0)(first, t_max)
    }
}

/// The octant of `ray`'s direction: bit `a` set where it is negative on axis `a`.
#[inline(always)]
pub(crate) fn octant(ray: &Ray) -> u8 {
    let n = ray.negative();
    u8::from(n[0]) | u8::from(n[1]) << 1 | u8::from(n[2]) << 2
}

/// [`walk`] for a tree a `Bvh` or a scene holds (as its callers' trees are: made by
/// `ray_tree`, or loaded, or refitted, and validated), whose deepest leaf lane is at `depth`:
/// no walk of an empty tree, and a stack of `CAP` entries that must hold
/// [`capacity`]`(depth)` (asserted, and chosen so by every caller, which makes the assertion
/// free).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn walk_tree<S, const LANE_ORDER: bool, const CAP: usize, T, L>(
    lanes: S,
    nodes: &[WideNode],
    depth: usize,
    ray: &Ray,
    octant: u8,
    grow: &Grow,
    t_max: f32,
    tally: &mut T,
    leaves: &mut L,
) where
    S: Lanes,
    T: Tally,
    L: Leaves,
{
    if nodes.is_empty() {
        return;
    }
    assert!(capacity(depth) <= CAP);
    // SAFETY: the nodes are a validated ray tree (every caller's are), no deeper than
    // `depth`, whose stack `CAP` holds (asserted above).
    unsafe {
        walk::<S, LANE_ORDER, CAP, T, L>(lanes, nodes, ray, octant, grow, t_max, tally, leaves)
    }
}

/// Walks `nodes` (root at 0, not empty) for `ray` (valid, its direction in `octant`) over
/// `ray.t_min()..t_max` and boxes grown by `grow`, with the lanes `lanes`, handing each leaf
/// lane the ray enters to `leaves`, and counting the boxes it tests into `tally`.
/// `LANE_ORDER == false`: nearest child first, a waiting child dropped once its entry lies
/// beyond the end; `LANE_ORDER == true`: the children in lane order where the node does not
/// sort, nothing dropped. No box that holds a hit up to the end is culled.
///
/// Inlined into each instantiation, where `octant` is a constant (x86) or a value
/// (portable).
///
/// # Safety
/// `nodes` is a ray tree made by `ray_tree` (or loaded, or refitted, and validated): its child
/// words index `nodes`; and its leaves are no deeper than `depth` with
/// [`capacity`]`(depth) <= CAP`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn walk<S, const LANE_ORDER: bool, const CAP: usize, T, L>(
    lanes: S,
    nodes: &[WideNode],
    ray: &Ray,
    octant: u8,
    grow: &Grow,
    mut t_max: f32,
    tally: &mut T,
    leaves: &mut L,
) where
    S: Lanes,
    T: Tally,
    L: Leaves,
{
    let o = ray.origin_axes();
    let inv = ray.inv_direction();
    let negative = [octant & 1 != 0, octant & 2 != 0, octant & 4 != 0];
    // The rows each axis meets first (`min` for a positive direction, `max` for a negative
    // one) and last.
    let near_rows = [
        Row::new(0, negative[0]),
        Row::new(1, negative[1]),
        Row::new(2, negative[2]),
    ];
    let far_rows = [
        Row::new(0, !negative[0]),
        Row::new(1, !negative[1]),
        Row::new(2, !negative[2]),
    ];
    let limit = |t: f32| t + t.abs() * EXIT_SLACK;
    let mut t_lim = limit(t_max);
    let mut words = [MaybeUninit::<u32>::uninit(); CAP];
    let mut entries = [MaybeUninit::<f32>::uninit(); CAP];
    let mut top = 0usize;
    let mut word = 0u32;
    // The origins the planes met first and last are met from: the origin itself, but for
    // boxes grown by a moving shape's reach ([`Grow::origins`]).
    let (x, y, z) = (
        grow.origins(o[0], 0, negative[0]),
        grow.origins(o[1], 1, negative[1]),
        grow.origins(o[2], 2, negative[2]),
    );
    // The far planes' reciprocals widened, so no box holding a hit is culled.
    let widen = 1.0 + EXIT_SLACK;
    let near_origin = [lanes.splat(x.0), lanes.splat(y.0), lanes.splat(z.0)];
    let far_origin = [lanes.splat(x.1), lanes.splat(y.1), lanes.splat(z.1)];
    let inv8 = [
        lanes.splat(inv[0]),
        lanes.splat(inv[1]),
        lanes.splat(inv[2]),
    ];
    let far_inv8 = [
        lanes.splat(inv[0] * widen),
        lanes.splat(inv[1] * widen),
        lanes.splat(inv[2] * widen),
    ];
    // One axis of the slab test of a node's eight boxes: the distances `(plane − o)·(1/d)`
    // to the planes the ray meets first and last on it. A macro, not a closure, so that its
    // intrinsics are inlined wherever the walk is.
    macro_rules! slab {
        ($node:expr, $a:literal) => {
            (
                lanes.mul(
                    lanes.sub(lanes.row($node, near_rows[$a]), near_origin[$a]),
                    inv8[$a],
                ),
                lanes.mul(
                    lanes.sub(lanes.row($node, far_rows[$a]), far_origin[$a]),
                    far_inv8[$a],
                ),
            )
        };
    }
    let t_min8 = lanes.splat(ray.t_min());
    let mut t_lim8 = lanes.splat(t_lim);
    let order_shift = lanes.splat_u(3 * u32::from(octant));
    'walk: loop {
        if word & LEAF == 0 {
            // SAFETY: child words index `nodes` (the caller's promise); the root is 0 and
            // `nodes` is not empty.
            let node = unsafe { nodes.get_unchecked(word as usize) };
            if T::COUNTS {
                tally.boxes(node.lanes().count() as u32);
            }
            let (x0, x1) = slab!(node, 0);
            let (y0, y1) = slab!(node, 1);
            let (z0, z1) = slab!(node, 2);
            // A NaN plane (a ray in it) keeps the bound.
            let near = lanes.raise(lanes.raise(lanes.raise(t_min8, z0), y0), x0);
            let far = lanes.lower(lanes.lower(lanes.lower(t_lim8, z1), y1), x1);
            let entered = lanes.le(near, far);
            let bits = lanes.bits(entered);
            let mask = u32::from(bits);
            if mask != 0 {
                if mask & (mask - 1) == 0 {
                    word = node.child[bits.trailing_zeros() as usize];
                    continue;
                }
                // SAFETY: a node of depth `k` (the root 0) is visited with at most `7k`
                // entries below the top, and the tree is no deeper than `CAP` allows
                // (the caller's promise), so the eight entries from the top lie in the
                // stack.
                let (to_words, to_entries) = unsafe {
                    (
                        &mut *(words.as_mut_ptr().add(top) as *mut [MaybeUninit<u32>; WIDTH]),
                        &mut *(entries.as_mut_ptr().add(top) as *mut [MaybeUninit<f32>; WIDTH]),
                    )
                };
                let child = lanes.children(node);
                let sorts = node.order[0] & SORT != 0;
                if LANE_ORDER && !sorts {
                    // Lane order: no distances, nothing culled at the pop.
                    lanes.store_u(to_words, lanes.permute_u(child, lanes.compact(mask)));
                } else if sorts {
                    // Farthest key first; two children by one compare (the lower lane first
                    // on a tie), more by the keys and sorting network of `network`.
                    let key = lanes.add(
                        near,
                        lanes.mul(lanes.splat(KEY_POINT), lanes.sub(far, near)),
                    );
                    let rest = mask & (mask - 1);
                    if rest & (rest - 1) == 0 {
                        let (a, b) = (
                            mask.trailing_zeros() as usize & (WIDTH - 1),
                            rest.trailing_zeros() as usize & (WIDTH - 1),
                        );
                        let (keys, nears) = (lanes.to_array(key), lanes.to_array(near));
                        let (first, second) = if keys[b] < keys[a] { (b, a) } else { (a, b) };
                        to_words[0].write(node.child[second]);
                        to_entries[0].write(nears[second]);
                        top += 1;
                        word = node.child[first];
                        continue;
                    }
                    let order = lanes.sorted(key, entered);
                    lanes.store_u(to_words, lanes.permute_u(child, order));
                    lanes.store_f(to_entries, lanes.permute_f(near, order));
                } else {
                    let order = lanes.order(node, order_shift);
                    let ordered = u32::from(lanes.bits(lanes.permute_m(entered, order)));
                    let order = lanes.permute_u(order, lanes.compact(ordered));
                    lanes.store_u(to_words, lanes.permute_u(child, order));
                    lanes.store_f(to_entries, lanes.permute_f(near, order));
                }
                top += mask.count_ones() as usize - 1;
                // SAFETY: entry `top` was just written (the nearest lane, pushed last).
                word = unsafe { words.get_unchecked(top).assume_init() };
                continue;
            }
        } else {
            let before = t_max;
            if leaves.enter(word & !LEAF, &mut t_max) {
                return;
            }
            if t_max != before {
                t_lim = limit(t_max);
                t_lim8 = lanes.splat(t_lim);
            }
        }
        // The next waiting child that can still matter.
        loop {
            if top == 0 {
                break 'walk;
            }
            top -= 1;
            // SAFETY: the entries below the top were written by the pushes that raised it
            // (an entry's distance only where the order is not the lane order).
            unsafe {
                if LANE_ORDER || entries.get_unchecked(top).assume_init() <= t_lim {
                    word = words.get_unchecked(top).assume_init();
                    break;
                }
            }
        }
    }
}
