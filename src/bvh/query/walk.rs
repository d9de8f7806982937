//! The generic walk over a wide tree: the nearest point, selections, and the statistics and validation sweeps go through it. (A single ray, of a
//! mesh or of a scene's top level, has a walk of its own, [`kernel`](crate::bvh::kernel),
//! written for the vector unit.) What differs between them is a [`Visitor`]: which of a
//! node's children to enter and in what order, whether a child still waiting on the stack can
//! matter, and what to do in a leaf. The walk itself keeps the stack, takes the nearest child
//! straight away and pushes the others, as madmann91/bvh's `intersect` and parry's
//! `traverse` do for their trees; so every improvement to the loop is made once.
//!
//! The stack lives on the call's stack frame: the walk allocates nothing for a tree the
//! builder made (deeper hand-edited trees only reach [`diagnostics::validate`], whose walk may spill
//! to the heap).
//!
//! [`diagnostics::validate`]: crate::diagnostics::validate

use crate::bvh::build::MAX_WIDE_DEPTH;
use crate::bvh::wide::{WIDTH, WideNode};
use smallvec::SmallVec;

/// A lane of a [`WideNode`] to visit: an interior node (`count == 0`) or a leaf of `count`
/// items from `child`, with the visitor's key (entry distance, squared distance...).
#[derive(Clone, Copy, Default)]
struct Entry<K> {
    child: u32,
    count: u32,
    key: K,
}

/// Stack entries: at most `WIDTH − 1` children wait per level of the deepest tree (the wide
/// tree is no deeper than the binary one), so the stack never outgrows its inline space.
const STACK: usize = (WIDTH - 1) * MAX_WIDE_DEPTH + 1;

/// What a query does at the nodes and leaves the walk reaches.
pub(crate) trait Visitor {
    /// How children are ordered (entry distance, squared distance; `()` for any order).
    type Key: Copy + Default + PartialOrd;

    /// Whether children are visited smallest key first (ray and distance queries) or in
    /// any order (selections and sweeps, which skip the sort).
    const ORDERED: bool;

    /// The lanes of node `index` to enter, a bit each, and their keys.
    fn node(&mut self, index: u32, node: &WideNode) -> (u32, [Self::Key; WIDTH]);

    /// Whether a child that has waited on the stack with `key` can still matter (the best
    /// hit or distance may have moved since it was pushed). `false` for every key ends the
    /// walk early (a sweep that found a broken invariant).
    fn worth(&self, key: Self::Key) -> bool;

    /// A leaf of `count` items from `first` (packets of triangles, or instances), with the
    /// key its parent gave it; returns `true` to stop the walk.
    fn leaf(&mut self, first: u32, count: u32, key: Self::Key) -> bool;
}

/// Walks `nodes` (root at 0) with `visitor`, smallest key first when it asks for order.
#[inline(always)]
pub(crate) fn walk<V: Visitor>(nodes: &[WideNode], visitor: &mut V) {
    if nodes.is_empty() {
        return;
    }
    // A SmallVec leaves its inline space uninitialized; an array this size would be zeroed
    // on every query.
    let mut stack = SmallVec::<[Entry<V::Key>; STACK]>::new();
    let mut current = Entry::<V::Key>::default(); // the root, interior node 0
    loop {
        if current.count > 0 {
            if visitor.leaf(current.child, current.count, current.key) {
                return;
            }
        } else {
            let node = &nodes[current.child as usize];
            let (mask, keys) = visitor.node(current.child, node);
            let entry = |k: usize| Entry {
                child: node.target(k),
                count: node.count(k),
                key: keys[k],
            };
            let first = mask.trailing_zeros() as usize;
            let more = mask & mask.wrapping_sub(1);
            match (mask, more) {
                (0, _) => {}
                // One child entered (the common case deep in the tree): no stack.
                (_, 0) => {
                    current = entry(first);
                    continue;
                }
                // Two: the nearer next, the other waits.
                (_, _) if more & (more - 1) == 0 => {
                    let (a, b) = (entry(first), entry(more.trailing_zeros() as usize));
                    let (near, far) = if V::ORDERED && b.key < a.key {
                        (b, a)
                    } else {
                        (a, b)
                    };
                    stack.push(far);
                    current = near;
                    continue;
                }
                _ => {
                    let mut hit = [Entry::<V::Key>::default(); WIDTH];
                    let mut hits = 0;
                    let mut lanes = mask;
                    while lanes != 0 {
                        hit[hits] = entry(lanes.trailing_zeros() as usize);
                        lanes &= lanes - 1;
                        hits += 1;
                    }
                    let hit = &mut hit[..hits];
                    if V::ORDERED {
                        // Largest key first, so the smallest is taken next and the rest are
                        // pushed farthest first (popped nearest first).
                        for i in 1..hit.len() {
                            let mut j = i;
                            while j > 0 && hit[j - 1].key < hit[j].key {
                                hit.swap(j - 1, j);
                                j -= 1;
                            }
                        }
                    }
                    let (next, rest) = hit.split_last().expect("three or more");
                    // One push each: `extend_from_slice` goes through SmallVec's out-of-line
                    // `insert_from_slice` and two `memcpy` calls, about 80 instructions a node.
                    for &entry in rest {
                        stack.push(entry);
                    }
                    current = *next;
                    continue;
                }
            }
        }
        // Pop the next child that can still matter.
        loop {
            match stack.pop() {
                Some(next) if visitor.worth(next.key) => {
                    current = next;
                    break;
                }
                Some(_) => {}
                None => return,
            }
        }
    }
}
