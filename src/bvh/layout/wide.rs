//! The 8-wide tree the queries walk ([`WideNode`]), collapsed from the binary SAH tree
//! ([`collapse`](crate::bvh::collapse::collapse), into [`Collapsed`] nodes) and laid out lane by lane by [`ray_tree`](crate::bvh::ray_node::ray_tree).
//!
//! A binary tree tests two boxes per step and spends most of a query on the step's
//! bookkeeping; a wide node tests all its children's boxes in one pass over struct-of-arrays
//! coordinates (`min_x[8]`, `max_x[8]`, …) with SIMD (the `wide` crate), and the tree is
//! about a third as deep. Which binary nodes become wide nodes is chosen by the SAH with
//! Ylitie, Karras and Laine's dynamic programme, which tests fewer boxes per
//! ray and fills nodes fuller than the greedy rule (open the child with the largest surface
//! area until a node has `WIDTH` children, as in Wald et al. 2008). Eight children rather
//! than four: the rays were as fast or faster on every mesh and set measured, for a few
//! bytes more per triangle. (The measurements: docs/benchmarks.md, "The ray kernel".)

use crate::Aabb;
use crate::bvh::Node;
use nalgebra::Point3;

/// Children per node.
pub(crate) const WIDTH: usize = 8;

/// The child word of an unused lane.
pub(crate) const NO_CHILD: u32 = u32::MAX;

/// Marks a child word as a leaf lane; the low bits name its first entry (a packet of a
/// mesh's tree, a leaf slot of the scene's top-level tree).
pub(crate) const LEAF: u32 = 1 << 31;

/// Set in `order[0]` where no static order suits the node: the ray walk sorts its entered
/// children by their distances along the ray instead (the octants' lanes use bits 0 to 23).
pub(crate) const SORT: u32 = 1 << 24;

/// Where a leaf lane's entry count sits in its order word (bits 25 to 31).
pub(crate) const COUNT_SHIFT: u32 = 25;

/// The most entries one leaf lane may name (the seven bits of its count).
pub(crate) const MAX_LANE_ENTRIES: u32 = u32::MAX >> COUNT_SHIFT;

/// What one lane of a [`WideNode`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Child {
    /// Unused: an inverted box, which every valid ray misses.
    Empty,
    /// The interior node at this index (always after its parent).
    Node(u32),
    /// A leaf lane: `count` entries (1 to [`MAX_LANE_ENTRIES`]) from `first`.
    Leaf { first: u32, count: u32 },
}

/// One node of the tree the queries walk: `WIDTH` children's boxes side by side (struct of
/// arrays, so one SIMD pass tests them all), each child's word (an interior node's index,
/// or [`LEAF`] and the lane's first entry, or [`NO_CHILD`]) and eight order words.
///
/// The order words serve the single-ray walk (`docs/how-it-works/ray-kernel.md`
/// §8): for each octant `q` of ray directions, bits `3q..3q + 2` of `order[i]` name the
/// lane that comes `i`-th when the children are listed farthest first for rays of that
/// octant, so the walk reads one octant's permutation with one shift; [`SORT`] in `order[0]`
/// marks a node whose children it sorts at run time instead; and bits 25 to 31 of `order[k]`
/// hold lane `k`'s entry count (0 for an interior or unused lane). 256 bytes: four cache
/// lines, aligned.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub(crate) struct WideNode {
    pub min: [[f32; WIDTH]; 3],
    pub max: [[f32; WIDTH]; 3],
    pub child: [u32; WIDTH],
    pub order: [u32; WIDTH],
}

const _: () = assert!(std::mem::size_of::<WideNode>() == 32 * WIDTH);

impl WideNode {
    pub(crate) const EMPTY: WideNode = WideNode {
        min: [[f32::INFINITY; WIDTH]; 3],
        max: [[f32::NEG_INFINITY; WIDTH]; 3],
        child: [NO_CHILD; WIDTH],
        order: [0; WIDTH],
    };

    /// What lane `k` is.
    #[inline(always)]
    pub fn lane(&self, k: usize) -> Child {
        let word = self.child[k];
        if word == NO_CHILD {
            Child::Empty
        } else if word & LEAF != 0 {
            Child::Leaf {
                first: word & !LEAF,
                count: self.count(k),
            }
        } else {
            Child::Node(word)
        }
    }

    /// Lane `k`'s entry count: 0 for an interior or unused lane.
    #[inline(always)]
    pub fn count(&self, k: usize) -> u32 {
        self.order[k] >> COUNT_SHIFT
    }

    /// Every lane's entry count.
    #[inline(always)]
    pub fn counts(&self) -> [u32; WIDTH] {
        self.order.map(|w| w >> COUNT_SHIFT)
    }

    /// Lane `k`'s child word without the [`LEAF`] mark: the interior node's index or the
    /// leaf's first entry.
    #[inline(always)]
    pub fn target(&self, k: usize) -> u32 {
        self.child[k] & !LEAF
    }

    /// Makes lane `k` the child `child` with box `bounds` (the node's order words are made
    /// afterwards, [`set_orders`](crate::bvh::ray_node::set_orders)).
    pub fn set_lane(&mut self, k: usize, [lo, hi]: [[f32; 3]; 2], child: Child) {
        for (a, (lo, hi)) in lo.into_iter().zip(hi).enumerate() {
            self.min[a][k] = lo;
            self.max[a][k] = hi;
        }
        let (word, count) = match child {
            Child::Empty => (NO_CHILD, 0),
            Child::Node(index) => (index, 0),
            Child::Leaf { first, count } => {
                debug_assert!((1..=MAX_LANE_ENTRIES).contains(&count) && first & LEAF == 0);
                (LEAF | first, count)
            }
        };
        self.child[k] = word;
        self.order[k] = (self.order[k] & !(MAX_LANE_ENTRIES << COUNT_SHIFT)) | count << COUNT_SHIFT;
    }

    /// Sets lane `k`'s box.
    pub fn set_lane_bounds(&mut self, k: usize, bounds: &Aabb) {
        for a in 0..3 {
            self.min[a][k] = bounds.min[a];
            self.max[a][k] = bounds.max[a];
        }
    }

    /// Lane `k`'s box.
    pub fn lane_bounds(&self, k: usize) -> Aabb {
        let (min, max) = self.lane_corners(k);
        Aabb::new(Point3::from(min), Point3::from(max))
    }

    /// Lane `k`'s box as its two corners.
    pub fn lane_corners(&self, k: usize) -> ([f32; 3], [f32; 3]) {
        (
            [0, 1, 2].map(|a| self.min[a][k]),
            [0, 1, 2].map(|a| self.max[a][k]),
        )
    }

    /// The used lanes.
    pub fn lanes(&self) -> impl Iterator<Item = usize> + '_ {
        (0..WIDTH).filter(|&k| self.child[k] != NO_CHILD)
    }

    /// The box around all used lanes.
    pub fn bounds(&self) -> Aabb {
        self.lanes()
            .fold(Aabb::EMPTY, |b, k| b.union(&self.lane_bounds(k)))
    }
}

/// A node of the collapsed tree, before its leaves are laid out in lanes: a lane is a leaf
/// of `count[k] > 0` entries from `child[k]`, an interior node `child[k]` (`count[k] == 0`),
/// or nothing (`child[k] == NO_CHILD`). The builders' step between the binary tree and the
/// [`WideNode`]s ([`ray_tree`](crate::bvh::ray_node::ray_tree)).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub(crate) struct Collapsed {
    pub min: [[f32; WIDTH]; 3],
    pub max: [[f32; WIDTH]; 3],
    pub child: [u32; WIDTH],
    pub count: [u32; WIDTH],
}

const _: () = assert!(
    std::mem::size_of::<Collapsed>() == std::mem::size_of::<WideNode>()
        && std::mem::align_of::<Collapsed>() == std::mem::align_of::<WideNode>()
);

impl Collapsed {
    pub(crate) const EMPTY: Collapsed = Collapsed {
        min: [[f32::INFINITY; WIDTH]; 3],
        max: [[f32::NEG_INFINITY; WIDTH]; 3],
        child: [NO_CHILD; WIDTH],
        count: [0; WIDTH],
    };

    pub(crate) fn set_lane(&mut self, k: usize, node: &Node, child: u32, count: u32) {
        for a in 0..3 {
            self.min[a][k] = node.min[a];
            self.max[a][k] = node.max[a];
        }
        self.child[k] = child;
        self.count[k] = count;
    }

    /// Lane `k`'s box as its two corners.
    pub fn lane_corners(&self, k: usize) -> [[f32; 3]; 2] {
        [
            [0, 1, 2].map(|a| self.min[a][k]),
            [0, 1, 2].map(|a| self.max[a][k]),
        ]
    }

    /// The used lanes.
    pub fn lanes(&self) -> impl Iterator<Item = usize> + '_ {
        (0..WIDTH).filter(|&k| self.child[k] != NO_CHILD)
    }
}
