//! The walk of one ray through the wide tree: the loop the closest-, any-, all- and
//! count-hit queries of a mesh run, written for the vector unit.
//!
//! Per node visit: the slab test of the eight child boxes in one pass ([`lane_intervals`],
//! or its AVX2 twin), then
//! - no child entered: pop the next waiting child whose entry can still matter;
//! - one child entered (the common case deep in the tree): go there, no stack work;
//! - two: the nearer next, the other on the stack;
//! - three or more: order them in registers, push all but the nearest in one store per
//!   array, the farthest first, and go to the nearest, found by a minimum of the keys
//!   beside the sort (three steps instead of the sort's six, so the next node's address
//!   waits on less). The order is a sort of eight integer keys — each
//!   lane's entry distance, its bits made monotonic as an integer, the low three bits
//!   replaced by the lane number, and `i32::MIN` for a lane not entered — by a sorting
//!   network of 19 comparators in six layers (Knuth, *The Art of Computer Programming*
//!   vol. 3, §5.3.4), largest first; the lane numbers then permute the children's words and
//!   distances into stack order. No per-lane loop, no branch on the count.
//!
//! Beside each waiting child the stack keeps its entry distance, so a child pushed before
//! the best hit moved closer is dropped when popped (compared with the exit slack of
//! [`widened`]).
//!
//! The order differs from the exact entry order only between entries within eight ulps of
//! each other, and it never changes a closest hit (ties go to the lowest triangle number
//! whatever the order). The portable kernel computes the same keys and sorts them the same
//! way, so both kernels visit the same nodes in the same order (tested below), and even
//! any-hit answers, which depend on the order, agree.

use crate::bvh::build::MAX_WIDE_DEPTH;
use crate::bvh::traverse::Tally;
use crate::bvh::wide::{LEAF, WIDTH, WideNode, WideRay, lane_intervals, widened};
use std::mem::MaybeUninit;

/// A child waiting to be visited: an interior node (`count == 0`) or a leaf lane of `count`
/// triangles in the packet its child word names (with the [`LEAF`] mark), and the distance
/// at which the ray enters its box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Waiting {
    pub child: u32,
    pub count: u32,
    pub entry: f32,
}

impl Waiting {
    /// Lane `k` of `node`, entered at `entry`.
    #[inline(always)]
    pub(crate) fn lane(node: &WideNode, k: usize, entry: f32) -> Waiting {
        Waiting {
            child: node.child[k],
            count: node.count(k),
            entry,
        }
    }
}

/// Entries the stack can hold: a node visit adds at most `WIDTH − 1` (it pushes `WIDTH`
/// and takes one), at most once per level of the deepest tree (the wide tree is no deeper
/// than the binary one, and `validate` refuses a deeper one), and a push writes all
/// `WIDTH` lanes past the top.
const CAPACITY: usize = (WIDTH - 1) * MAX_WIDE_DEPTH + 1 + WIDTH;

/// The walk's stack: the children's words and entry distances in three arrays
/// ([`RaySlots`]), so a node's ordered lanes go on in one vector store each, and the length.
///
/// The arrays live apart from the length (the walk owns them, the stack borrows them): in one
/// struct, the length shared an object with the arrays' variable-offset vector stores, and
/// LLVM kept it in memory, a store on every push and pop.
pub(crate) struct RayStack<'a> {
    slots: &'a mut RaySlots,
    len: usize,
}

/// The stack's arrays, left uninitialized (zeroing 5 KB would cost more than a typical ray's
/// whole walk); only the slots below the length are read, and every one of those was
/// written.
pub(crate) struct RaySlots {
    child: [MaybeUninit<u32>; CAPACITY],
    count: [MaybeUninit<u32>; CAPACITY],
    entry: [MaybeUninit<f32>; CAPACITY],
}

impl RaySlots {
    #[inline(always)]
    pub(crate) fn new() -> RaySlots {
        RaySlots {
            child: uninit_array(),
            count: uninit_array(),
            entry: uninit_array(),
        }
    }
}

impl<'a> RayStack<'a> {
    /// An empty stack over `slots`.
    #[inline(always)]
    pub(crate) fn new(slots: &'a mut RaySlots) -> RayStack<'a> {
        RayStack { slots, len: 0 }
    }

    /// Writes all `WIDTH` lanes above the top and keeps the first `k` of them. Panics
    /// (bounds check) rather than overflow on a tree deeper than any the builder or
    /// `validate` lets through.
    #[inline(always)]
    pub(crate) fn push_lanes(
        &mut self,
        child: [u32; WIDTH],
        count: [u32; WIDTH],
        entry: [f32; WIDTH],
        k: usize,
    ) {
        let at = self.len;
        for (slot, x) in self.slots.child[at..at + WIDTH].iter_mut().zip(child) {
            *slot = MaybeUninit::new(x);
        }
        for (slot, x) in self.slots.count[at..at + WIDTH].iter_mut().zip(count) {
            *slot = MaybeUninit::new(x);
        }
        for (slot, x) in self.slots.entry[at..at + WIDTH].iter_mut().zip(entry) {
            *slot = MaybeUninit::new(x);
        }
        self.len = at + k.min(WIDTH);
    }

    /// Pushes one entry.
    #[inline(always)]
    pub(crate) fn push(&mut self, entry: Waiting) {
        let at = self.len;
        self.slots.child[at] = MaybeUninit::new(entry.child);
        self.slots.count[at] = MaybeUninit::new(entry.count);
        self.slots.entry[at] = MaybeUninit::new(entry.entry);
        self.len = at + 1;
    }

    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<Waiting> {
        let i = self.len.checked_sub(1)?;
        self.len = i;
        #[allow(unsafe_code)]
        // SAFETY: `len` only grows in `push_lanes`, by at most the lanes it has just written,
        // so every slot below it holds a written value.
        unsafe {
            Some(Waiting {
                child: self.slots.child[i].assume_init(),
                count: self.slots.count[i].assume_init(),
                entry: self.slots.entry[i].assume_init(),
            })
        }
    }
}

/// An array of uninitialized slots, for free. (`[MaybeUninit::uninit(); N]` compiled to a
/// `memset` of the whole array on every query.)
#[inline(always)]
fn uninit_array<T: Copy>() -> [MaybeUninit<T>; CAPACITY] {
    #[allow(unsafe_code)]
    // SAFETY: an array of `MaybeUninit` needs no initialization (the pattern of
    // `MaybeUninit`'s own documentation, "initializing an array element-by-element").
    unsafe {
        MaybeUninit::<[MaybeUninit<T>; CAPACITY]>::uninit().assume_init()
    }
}

/// What a node visit did with the node's children.
pub(crate) enum Entered {
    /// The ray enters none of them.
    None,
    /// Visit this one next, the nearest entered; any others wait on the stack, the farthest
    /// deepest.
    One(Waiting),
}

/// A node visit: the slab test of a node's boxes and the ordering of the entered children.
pub(crate) trait RayKernel: Copy {
    /// Runs `leaf` on a leaf of `count` triangles from packet `first` with the current
    /// `t_max`: a call the walk keeps out of its loop (each per-octant walk shares one leaf),
    /// compiled with the kernel's instructions.
    #[inline(always)]
    fn leaf<L: FnMut(usize, usize, &mut f32) -> bool>(
        self,
        leaf: &mut L,
        first: usize,
        count: usize,
        t_max: &mut f32,
    ) -> bool {
        leaf(first, count, t_max)
    }

    /// Tests `node`'s boxes for a ray in `[t_min, t_max]` and hands over the entered
    /// children: the nearest directly, the others on `stack` (see [`Entered`]).
    fn enter(
        self,
        node: &WideNode,
        ray: &WideRay,
        t_min: f32,
        t_max: f32,
        stack: &mut RayStack,
    ) -> Entered;
}

/// The sort key of a lane whose entry distance is `entry`: its bits as an `i32` ordered as
/// the floats are (negative values' magnitude bits flipped), the low three bits replaced by
/// the lane number, so keys are distinct and the lane can be read back from the sorted key.
#[inline(always)]
pub(crate) fn order_key(entry: f32, lane: usize) -> i32 {
    let bits = entry.to_bits() as i32;
    let monotonic = bits ^ (((bits >> 31) as u32) >> 1) as i32;
    (monotonic & !7) | lane as i32
}

/// The sorting network of the ordering, layer by layer: each pair `(i, j)`, `i < j`, leaves
/// the larger key in lane `i`. The AVX2 kernel runs each layer as one permutation, a
/// minimum, a maximum and a blend.
pub(crate) const NETWORK: [&[(usize, usize)]; 6] = [
    &[(0, 2), (1, 3), (4, 6), (5, 7)],
    &[(0, 4), (1, 5), (2, 6), (3, 7)],
    &[(0, 1), (2, 3), (4, 5), (6, 7)],
    &[(2, 4), (3, 5)],
    &[(1, 4), (3, 6)],
    &[(1, 2), (3, 4), (5, 6)],
];

/// The key of a lane the ray does not enter: below every entered lane's.
pub(crate) const NOT_ENTERED: i32 = i32::MIN;

/// The lanes of `mask` farthest first by [`order_key`] of their `t` (the lanes not in it
/// after them), sorted by [`NETWORK`]: the scalar twin of the AVX2 sort, key for key.
#[inline(always)]
pub(crate) fn sorted_lanes(mask: u32, t: &[f32; WIDTH]) -> [usize; WIDTH] {
    let mut keys = [NOT_ENTERED; WIDTH];
    for (k, key) in keys.iter_mut().enumerate() {
        if mask & (1 << k) != 0 {
            *key = order_key(t[k], k);
        }
    }
    for layer in NETWORK {
        for &(i, j) in layer {
            (keys[i], keys[j]) = (keys[i].max(keys[j]), keys[i].min(keys[j]));
        }
    }
    keys.map(|key| (key & 7) as usize)
}

/// The portable node visit: [`lane_intervals`] and a sort of the entered lanes' keys.
#[derive(Clone, Copy)]
pub(crate) struct PortableKernel;

impl RayKernel for PortableKernel {
    #[inline(always)]
    fn enter(
        self,
        node: &WideNode,
        ray: &WideRay,
        t_min: f32,
        t_max: f32,
        stack: &mut RayStack,
    ) -> Entered {
        let (mask, near) = lane_intervals(node, ray, t_min, t_max);
        order_lanes(node, mask, &near, stack)
    }
}

/// Hands over the lanes of `mask` (entry distances `near`) as [`Entered`]: the scalar twin
/// of the AVX2 ordering, key for key.
#[inline(always)]
pub(crate) fn order_lanes(
    node: &WideNode,
    mask: u32,
    near: &[f32; WIDTH],
    stack: &mut RayStack,
) -> Entered {
    if mask == 0 {
        return Entered::None;
    }
    if mask & (mask - 1) == 0 {
        let k = mask.trailing_zeros() as usize;
        return Entered::One(Waiting::lane(node, k, near[k]));
    }
    let rest = mask & (mask - 1);
    if rest & (rest - 1) == 0 {
        let (a, b) = (
            mask.trailing_zeros() as usize,
            rest.trailing_zeros() as usize,
        );
        return two_lanes(node, (a, near[a]), (b, near[b]), stack);
    }
    let lane = sorted_lanes(mask, near);
    let entered = mask.count_ones() as usize;
    stack.push_lanes(
        lane.map(|k| node.child[k]),
        lane.map(|k| node.count(k)),
        lane.map(|k| near[k]),
        entered - 1,
    );
    let k = lane[entered - 1];
    Entered::One(Waiting::lane(node, k, near[k]))
}

/// Exactly two children entered, lanes `a < b` with their entry distances: the farther
/// waits on the stack, the nearer is next (`a` when they tie). A float comparison, not
/// [`order_key`]'s keys, which cost more per visit: any order of the children finds the
/// same closest hit (the keys matter only where the sort needs distinct ones).
#[inline(always)]
pub(crate) fn two_lanes(
    node: &WideNode,
    (a, entry_a): (usize, f32),
    (b, entry_b): (usize, f32),
    stack: &mut RayStack,
) -> Entered {
    let (near, far) = if entry_b < entry_a {
        (
            Waiting::lane(node, b, entry_b),
            Waiting::lane(node, a, entry_a),
        )
    } else {
        (
            Waiting::lane(node, a, entry_a),
            Waiting::lane(node, b, entry_b),
        )
    };
    stack.push(far);
    Entered::One(near)
}

/// Walks `nodes` (root at 0) with `kernel`, nearest child first, calling `leaf` with each
/// reached leaf's first packet, triangle count and the current `t_max`, which it may lower;
/// `leaf` returns `true` to stop.
#[inline(always)]
pub(crate) fn walk<K, T, L>(
    kernel: K,
    nodes: &[WideNode],
    ray: &WideRay,
    t_min: f32,
    mut t_max: f32,
    tally: &mut T,
    mut leaf: L,
) where
    K: RayKernel,
    T: Tally,
    L: FnMut(usize, usize, &mut f32) -> bool,
{
    if nodes.is_empty() {
        return;
    }
    let mut slots = RaySlots::new();
    let mut stack = RayStack::new(&mut slots);
    let mut current = Waiting {
        child: 0,
        count: 0,
        entry: t_min,
    };
    loop {
        if current.count > 0 {
            tally.triangles(current.count);
            let (first, count) = ((current.child & !LEAF) as usize, current.count as usize);
            if kernel.leaf(&mut leaf, first, count, &mut t_max) {
                return;
            }
        } else {
            let node = &nodes[current.child as usize];
            tally.boxes(node.lanes().count() as u32);
            match kernel.enter(node, ray, t_min, t_max, &mut stack) {
                Entered::One(next) => {
                    current = next;
                    continue;
                }
                Entered::None => {}
            }
        }
        // The next waiting child that can still matter.
        loop {
            match stack.pop() {
                Some(next) if next.entry <= widened(t_max) => {
                    current = next;
                    break;
                }
                Some(_) => {}
                None => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The six layers of 19 comparators sort every input: by the 0-1 principle, checking the
    /// 256 inputs of zeros and ones is enough. (The AVX2 kernel runs the same layers.)
    #[test]
    fn the_network_sorts() {
        for bits in 0u32..256 {
            let mut v = [0i32; WIDTH];
            for (k, x) in v.iter_mut().enumerate() {
                *x = ((bits >> k) & 1) as i32;
            }
            for layer in NETWORK {
                for &(i, j) in layer {
                    let (hi, lo) = (v[i].max(v[j]), v[i].min(v[j]));
                    (v[i], v[j]) = (hi, lo);
                }
            }
            assert!(v.windows(2).all(|w| w[0] >= w[1]), "{bits:08b}: {v:?}");
        }
    }

    /// Keys order as the distances do (to within the three lane bits), negative, signed-zero
    /// and infinite distances included.
    #[test]
    fn keys_order_as_the_distances() {
        let xs = [
            f32::NEG_INFINITY,
            -1e30,
            -2.5,
            -1e-30,
            -0.0,
            0.0,
            1e-30,
            1.0,
            1.5,
            1e30,
            f32::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(
                order_key(w[0], 7) < order_key(w[1], 0) || w[0] == w[1],
                "{} {}",
                w[0],
                w[1]
            );
            assert!(order_key(w[0], 0) > NOT_ENTERED);
        }
    }
}
