//! The walk's portable twin: the same tree, the same visiting order and the same answers as
//! the x86 walk, from portable parts (WebAssembly, ARM, an x86 without AVX2
//! and FMA, or `MESHRAY_SIMD=portable`); also the walk of trees deeper than the x86 walk's
//! stack, and of queries that report what they tested ([`Tally`]).
//!
//! A node's eight boxes take the 8-lane slab test ([`lane_slabs`], [`entered`]:
//! `(bound − o)·(1/d)`, a `NaN` plane keeping the bound, the exit widened by
//! [`EXIT_SLACK`](super::slabs::EXIT_SLACK)), which never culls a box holding a hit; the
//! entered children are pushed farthest first in the node's order for the ray's octant (or,
//! at a node flagged [`SORT`], by the x86 walk's keys and sorting network); a leaf lane goes
//! to the caller ([`walk`]), which for a mesh's closest or any hit ([`cast`]) is the packet
//! test ([`LeafTest`]: the watertight packet test the x86 walk inlines, written once), so
//! every hit is the scalar test's, and ties go to the lowest triangle through
//! [`keep_closer`]. The stack is two arrays on the call's stack: nothing is allocated.

use super::network::sorted_lanes;
use super::slabs::{Grow, WideRay, entered, lane_slabs, widened};
use super::{Found, KEY_POINT, Tree};
use crate::aabb::RaySlabs;
use crate::bvh::leaf::LANES;
use crate::bvh::packet::LeafTest;
use crate::bvh::ray_hits::{Tally, keep_closer};
use crate::bvh::wide::{LEAF, SORT, WIDTH, WideNode};
use crate::{QueryOptions, Ray};
use std::mem::MaybeUninit;

/// The closest hit (`ANY == false`) or the first hit found (`ANY == true`) of `ray` (valid)
/// with `options`: what the x86 walk answers (the closest hit bit for bit; any
/// hit, a hit of the scalar test), or with Cramer's rule (`watertight: false`) what the
/// scalar Cramer test answers. `CAP` stack entries must hold the tree
/// ([`capacity`](super::capacity)).
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
    let Tree {
        nodes,
        packets,
        index,
        ..
    } = tree;
    let leaf = LeafTest::new(ray, options);
    let mut best: Option<Found> = None;
    let mut triangles = 0;
    walk::<ANY, CAP, T, _>(
        nodes,
        ray,
        &Grow::NONE,
        ray.t_max(),
        tally,
        |packet, t_max| {
            if T::COUNTS {
                let slots = &index[packet as usize * LANES..][..LANES];
                triangles += slots.iter().filter(|&&i| i != u32::MAX).count() as u32;
            }
            leaf.run(packets, packet as usize, LANES, t_max, |slot, hit| {
                if ANY {
                    best = Some((slot, hit));
                    return None;
                }
                keep_closer(index, &mut best, slot, hit);
                Some(hit.t)
            })
        },
    );
    tally.triangles(triangles);
    best
}

/// Walks `nodes` (root at 0; none, no walk) for `ray` (valid) over `t_min..t_max`,
/// calling `visit(entry, t_max)` with each leaf lane the ray enters (its first entry: a
/// packet, or an index into a scene's instance order) and the current end of the range,
/// which it may lower; `visit` returns `true` to stop. `LANE_ORDER == false`: nearest child first,
/// and a waiting child dropped once its entry lies beyond the end; `LANE_ORDER == true`: the
/// children in lane order where the node does not sort, nothing dropped. The stack holds
/// `CAP` entries: [`capacity`](super::capacity) of the tree's depth or more.
#[inline(always)]
pub(crate) fn walk<const LANE_ORDER: bool, const CAP: usize, T: Tally, V>(
    nodes: &[WideNode],
    ray: &Ray,
    grow: &Grow,
    mut t_max: f32,
    tally: &mut T,
    mut visit: V,
) where
    V: FnMut(u32, &mut f32) -> bool,
{
    if nodes.is_empty() {
        return;
    }
    let slabs = WideRay::new(&RaySlabs::new(ray), grow);
    let octant = slabs.octant();
    let t_min = ray.t_min();
    // Left unwritten until pushed: zeroing them costs a large share of a short query.
    let mut words = [MaybeUninit::<u32>::uninit(); CAP];
    let mut entries = [MaybeUninit::<f32>::uninit(); CAP];
    let mut top = 0usize;
    let mut word = 0u32;
    'walk: loop {
        if word & LEAF == 0 {
            let node = &nodes[word as usize];
            if T::COUNTS {
                tally.boxes(node.lanes().count() as u32);
            }
            let (near, far) = lane_slabs(&node.min, &node.max, &slabs, t_min, t_max);
            let mask = entered(near, far);
            if mask != 0 {
                let count = mask.count_ones() as usize;
                if count == 1 {
                    word = node.child[mask.trailing_zeros() as usize];
                    continue;
                }
                let near = near.to_array();
                // The entered lanes pushed with the one to visit first on top, then taken
                // back off; without a branch per lane (whether a lane was entered is what a
                // CPU cannot predict): every lane is written, the top advanced by the
                // entered ones. A node of depth `d` is visited with at most `7d` entries
                // waiting, so the eight written fit in `capacity(depth)`.
                let mut push = |k: usize| {
                    words[top].write(node.child[k]);
                    entries[top].write(near[k]);
                    top += ((mask >> k) & 1) as usize;
                };
                let sorts = node.order[0] & SORT != 0;
                if LANE_ORDER && !sorts {
                    // Lane order: no distances, nothing culled at the pop.
                    (0..WIDTH).for_each(push);
                } else if sorts {
                    // As the x86 walk orders them: two by one compare of their keys (the
                    // lower lane first on a tie), more by the sorting network.
                    let far = far.to_array();
                    let keys: [f32; WIDTH] =
                        std::array::from_fn(|k| near[k] + KEY_POINT * (far[k] - near[k]));
                    if count == 2 {
                        let rest = mask & (mask - 1);
                        let (a, b) = (
                            mask.trailing_zeros() as usize,
                            rest.trailing_zeros() as usize,
                        );
                        if keys[b] < keys[a] {
                            [a, b].into_iter().for_each(push);
                        } else {
                            [b, a].into_iter().for_each(push);
                        }
                    } else {
                        sorted_lanes(mask, &keys)[..count]
                            .iter()
                            .copied()
                            .for_each(push);
                    }
                } else {
                    for w in node.order {
                        push(((w >> (3 * u32::from(octant))) & 7) as usize);
                    }
                }
                top -= 1;
                // SAFETY: entry `top` was just written (the nearest lane, pushed last).
                #[allow(unsafe_code)]
                {
                    word = unsafe { words[top].assume_init() };
                }
                continue;
            }
        } else {
            if visit(word & !LEAF, &mut t_max) {
                return;
            }
        }
        // The next waiting child that can still matter.
        let limit = widened(t_max);
        loop {
            if top == 0 {
                break 'walk;
            }
            top -= 1;
            // SAFETY: the entries below the top were written by the pushes that raised it.
            #[allow(unsafe_code)]
            let (entry, waiting) =
                unsafe { (entries[top].assume_init(), words[top].assume_init()) };
            if LANE_ORDER || entry <= limit {
                word = waiting;
                break;
            }
        }
    }
}
