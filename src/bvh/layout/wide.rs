//! The 8-wide tree the queries walk ([`WideNode`]), collapsed from the binary SAH tree
//! ([`collapse`]) and laid out lane by lane by [`ray_tree`](crate::bvh::ray_node::ray_tree).
//!
//! A binary tree tests two boxes per step and spends most of a query on the step's
//! bookkeeping; a wide node tests all its children's boxes in one pass over struct-of-arrays
//! coordinates (`min_x[8]`, `max_x[8]`, …) with SIMD (the `wide` crate), and the tree is
//! about a third as deep. Which binary nodes become wide nodes is chosen by the SAH with
//! Ylitie, Karras and Laine's dynamic programme ([`collapse`]), which tests fewer boxes per
//! ray and fills nodes fuller than the greedy rule (open the child with the largest surface
//! area until a node has `WIDTH` children, as in Wald et al. 2008). Eight children rather
//! than four: the rays were as fast or faster on every mesh and set measured, for a few
//! bytes more per triangle. (The measurements: docs/benchmarks.md, "The ray kernel".)

use crate::Aabb;
use crate::aabb::RaySlabs;
use crate::bvh::Node;
use nalgebra::Point3;

/// Children per node.
pub(crate) const WIDTH: usize = 8;

/// SIMD lanes for one node's boxes.
pub(crate) type BoxLanes = ::wide::f32x8;

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
    const EMPTY: Collapsed = Collapsed {
        min: [[f32::INFINITY; WIDTH]; 3],
        max: [[f32::NEG_INFINITY; WIDTH]; 3],
        child: [NO_CHILD; WIDTH],
        count: [0; WIDTH],
    };

    fn set_lane(&mut self, k: usize, node: &Node, child: u32, count: u32) {
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

/// Collapses a binary tree (root at 0, children side by side) into wide nodes, root at 0,
/// choosing which binary nodes become wide nodes by the surface area heuristic: the
/// dynamic programme of Ylitie, Karras and Laine (2017, "Efficient incoherent ray traversal
/// on GPUs through compressed wide BVHs"), over the binary tree's own leaves. `cost[n][k]`
/// is the least SAH cost of covering the subtree of `n` with at most `k + 1` lanes of its
/// parent: `n` as one lane (a leaf, or a wide node whose eight lanes are shared among its
/// descendants), or the lanes shared between its two children.
pub(crate) fn collapse(
    binary: &[Node],
    traversal_cost: f32,
    intersection_cost: f32,
) -> Vec<Collapsed> {
    if binary[0].is_leaf() {
        // Only for a root that is a leaf: one lane.
        let mut wide = vec![Collapsed::EMPTY];
        wide[0].set_lane(0, &binary[0], binary[0].first, binary[0].count);
        return wide;
    }
    // Kept in `f32` (summed in `f64`): the array is the collapse's largest, 32 bytes per
    // binary node, at the build's peak (in a browser tab, what the page keeps).
    let mut cost = vec![[0.0f32; WIDTH]; binary.len()];
    let split = collapse_splits(binary, &mut cost, traversal_cost, intersection_cost);
    // Exactly the nodes it makes (256 bytes each), reserved while the costs still take
    // their place: in a browser tab, whose memory never shrinks, the costs' hole then
    // joins the builder's for the leaves' packets instead of holding the nodes.
    let mut wide = Vec::with_capacity(wide_count(binary, &split));
    drop(cost);
    wide.push(Collapsed::EMPTY);
    // (binary node, wide node that takes its lanes)
    let mut tasks = vec![(0usize, 0usize)];
    let mut lanes = Vec::with_capacity(WIDTH);
    while let Some((b, w)) = tasks.pop() {
        lanes_of_wide(binary, &split, b, &mut lanes);
        for (k, &n) in lanes.iter().enumerate() {
            let node = &binary[n];
            if node.is_leaf() {
                wide[w].set_lane(k, node, node.first, node.count);
            } else {
                let index = wide.len();
                wide.push(Collapsed::EMPTY);
                wide[w].set_lane(k, node, index as u32, 0);
                tasks.push((n, index));
            }
        }
    }
    wide
}

/// What the collapse chose for a binary node: `shared[k]`, when it covers its subtree with at
/// most `k + 1` lanes, how many of them (minus one) its left child takes, or `u8::MAX` when
/// it is best as one lane itself; `open`, the same for all [`WIDTH`] lanes when it is a wide
/// node.
#[derive(Clone, Copy)]
struct Split {
    shared: [u8; WIDTH],
    open: u8,
}

/// The collapse's choices for every binary node, from `cost[n][k]` (see [`collapse`]),
/// computed into `cost` (one entry per binary node).
fn collapse_splits(
    binary: &[Node],
    cost: &mut [[f32; WIDTH]],
    traversal_cost: f32,
    intersection_cost: f32,
) -> Vec<Split> {
    let mut split = vec![
        Split {
            shared: [u8::MAX; WIDTH],
            open: 0,
        };
        binary.len()
    ];
    // Children come after their parent in the array, so a backward sweep sees them first.
    for n in (0..binary.len()).rev() {
        let node = &binary[n];
        let area = f64::from(node.bounds().half_area());
        if node.is_leaf() {
            // Each packet of a leaf takes a lane of its own in the tree the queries walk
            // (`ray_node::ray_tree`): a leaf of `p` packets given fewer than `p` lanes
            // becomes a node of its own (a node visit more), and one of more than `WIDTH`
            // packets always does.
            let p = node.count.div_ceil(crate::bvh::leaf::LANES as u32) as usize;
            let tested = area * f64::from(intersection_cost) * p as f64;
            let own_node = area * f64::from(traversal_cost) + tested;
            cost[n] = std::array::from_fn(|k| {
                if p == 1 || (p <= WIDTH && k + 1 >= p) {
                    tested as f32
                } else {
                    own_node as f32
                }
            });
            continue;
        }
        let (l, r) = (node.first as usize, node.first as usize + 1);
        debug_assert!(l > n, "the builder puts children after their parent");
        // `shared[k]`: the children share at most `k + 1` lanes (k >= 1), left taking
        // `a + 1` of them.
        let mut shared = [(f64::INFINITY, u8::MAX); WIDTH];
        for (k, slot) in shared.iter_mut().enumerate().skip(1) {
            for a in 0..k {
                let c = f64::from(cost[l][a]) + f64::from(cost[r][k - 1 - a]);
                if c < slot.0 {
                    *slot = (c, a as u8);
                }
            }
        }
        cost[n][0] = (area * f64::from(traversal_cost) + shared[WIDTH - 1].0) as f32;
        split[n].open = shared[WIDTH - 1].1;
        for k in 1..WIDTH {
            if shared[k].0 < f64::from(cost[n][k - 1]) {
                cost[n][k] = shared[k].0 as f32;
                split[n].shared[k] = shared[k].1;
            } else {
                cost[n][k] = cost[n][k - 1];
                split[n].shared[k] = split[n].shared[k - 1];
            }
        }
    }
    split
}

/// How many wide nodes [`collapse`] makes.
fn wide_count(binary: &[Node], split: &[Split]) -> usize {
    let (mut count, mut tasks, mut lanes) = (0, vec![0usize], Vec::with_capacity(WIDTH));
    while let Some(b) = tasks.pop() {
        count += 1;
        lanes_of_wide(binary, split, b, &mut lanes);
        tasks.extend(lanes.iter().filter(|&&n| !binary[n].is_leaf()));
    }
    count
}

/// The lanes of the wide node that binary node `b` (not a leaf) becomes: its two children
/// share all [`WIDTH`] lanes, as the collapse chose. `lanes` is cleared first.
fn lanes_of_wide(binary: &[Node], split: &[Split], b: usize, lanes: &mut Vec<usize>) {
    lanes.clear();
    let (l, a) = (binary[b].first as usize, usize::from(split[b].open));
    lanes_of(binary, split, l, a, lanes);
    lanes_of(binary, split, l + 1, WIDTH - 2 - a, lanes);
}

/// Appends the binary nodes that cover the subtree of `n` with at most `k + 1` lanes, as the
/// collapse chose.
fn lanes_of(binary: &[Node], split: &[Split], n: usize, k: usize, lanes: &mut Vec<usize>) {
    let a = split[n].shared[k];
    if binary[n].is_leaf() || a == u8::MAX {
        lanes.push(n);
        return;
    }
    let (l, a) = (binary[n].first as usize, usize::from(a));
    lanes_of(binary, split, l, a, lanes);
    lanes_of(binary, split, l + 1, k - 1 - a, lanes);
}

/// How far (relative) the walk widens each box's exit before comparing it with the entry.
///
/// The slab test's `t` values and the triangle test's `t` are rounded differently, so a
/// triangle lying on its box's face can hit at a `t` a few ulps before the box's computed
/// entry. With a closer hit already found at a `t` in between, the exact comparison would cull
/// that box and lose the closer triangle (seen on the coplanar overlapping triangles of the
/// conference room). Widening by 2^-20 (8 ulps), as conservative traversal does (Ize 2013),
/// keeps such boxes; the triangle test still uses the exact range, so answers stay those of a
/// brute force.
pub(crate) const EXIT_SLACK: f32 = 1.0 / (1u32 << 20) as f32;

#[inline(always)]
pub(crate) fn widened(far: f32) -> f32 {
    far + far.abs() * EXIT_SLACK
}

/// How far each box grows before the slab test: to `[min − below, max + above]`. A moving
/// shape's reach (a sweep walks the boxes its path can reach as a ray walks boxes); nothing
/// for a ray.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Grow {
    pub below: [f32; 3],
    pub above: [f32; 3],
}

impl Grow {
    /// No growth: a ray's walk.
    pub(crate) const NONE: Grow = Grow {
        below: [0.0; 3],
        above: [0.0; 3],
    };

    /// Where the ray's origin moves for the planes it meets first (`near`) and last on axis
    /// `a` of a box so grown: a plane `min − below` met from `o` is `min` met from
    /// `o + below`, and `max + above` is `max` met from `o − above`. Both are `o` itself
    /// for [`Grow::NONE`].
    #[inline(always)]
    pub(crate) fn origins(&self, origin: f32, a: usize, negative: bool) -> (f32, f32) {
        let (from_min, from_max) = (origin + self.below[a], origin - self.above[a]);
        if *self == Grow::NONE {
            (origin, origin)
        } else if negative {
            (from_max, from_min)
        } else {
            (from_min, from_max)
        }
    }
}

/// The ray as the wide slab test wants it: the origin for the planes it meets first and for
/// those it meets last on each axis (the same point but for a [`Grow`]n walk), and the
/// inverse direction, splatted.
pub(crate) struct WideRay {
    pub near_origin: [BoxLanes; 3],
    pub far_origin: [BoxLanes; 3],
    pub inv_direction: [BoxLanes; 3],
    pub negative: [bool; 3],
}

impl WideRay {
    /// The direction's sign bits: bit `a` set when it is negative on axis `a` (which of the
    /// AVX2 walk's per-octant kernels runs, and which order the ray tree's walks follow).
    #[inline(always)]
    pub(crate) fn octant(&self) -> u8 {
        self.negative
            .iter()
            .enumerate()
            .fold(0, |bits, (a, &n)| bits | (u8::from(n) << a))
    }

    /// The ray's lanes, its boxes grown by `grow`.
    pub(crate) fn new(ray: &RaySlabs, grow: &Grow) -> WideRay {
        // Element by element: `array::map` went through an out-of-line `try_map` per call.
        let (o, inv, n) = (&ray.origin, &ray.inv_direction, &ray.negative);
        let (x, y, z) = (
            grow.origins(o[0], 0, n[0]),
            grow.origins(o[1], 1, n[1]),
            grow.origins(o[2], 2, n[2]),
        );
        WideRay {
            near_origin: [
                BoxLanes::splat(x.0),
                BoxLanes::splat(y.0),
                BoxLanes::splat(z.0),
            ],
            far_origin: [
                BoxLanes::splat(x.1),
                BoxLanes::splat(y.1),
                BoxLanes::splat(z.1),
            ],
            inv_direction: [
                BoxLanes::splat(inv[0]),
                BoxLanes::splat(inv[1]),
                BoxLanes::splat(inv[2]),
            ],
            negative: ray.negative,
        }
    }
}

/// `if t > bound { t } else { bound }` lane by lane: a NaN `t` keeps the bound. On x86 that
/// is exactly what `maxps(t, bound)` computes.
#[inline(always)]
pub(crate) fn raise(bound: BoxLanes, t: BoxLanes) -> BoxLanes {
    #[cfg(target_feature = "sse")]
    {
        t.fast_max(bound)
    }
    #[cfg(not(target_feature = "sse"))]
    {
        raise_portable(bound, t)
    }
}

/// `if t < bound { t } else { bound }` lane by lane (`minps(t, bound)` on x86).
#[inline(always)]
pub(crate) fn lower(bound: BoxLanes, t: BoxLanes) -> BoxLanes {
    #[cfg(target_feature = "sse")]
    {
        t.fast_min(bound)
    }
    #[cfg(not(target_feature = "sse"))]
    {
        lower_portable(bound, t)
    }
}

/// [`raise`] without x86's `maxps` (WebAssembly, ARM): a compare and a select. Compiled in
/// tests everywhere, so x86 checks it against `maxps` too.
#[cfg(any(test, not(target_feature = "sse")))]
#[inline(always)]
fn raise_portable(bound: BoxLanes, t: BoxLanes) -> BoxLanes {
    t.simd_gt(bound).bitselect(t, bound)
}

/// [`lower`] without x86's `minps`.
#[cfg(any(test, not(target_feature = "sse")))]
#[inline(always)]
fn lower_portable(bound: BoxLanes, t: BoxLanes) -> BoxLanes {
    t.simd_lt(bound).bitselect(t, bound)
}

/// The entries and exits (not yet widened) of eight boxes given as rows of corners (`min`,
/// `max`: x, y, z), clamped to `t_min..t_max`: the
/// node visit of the ray walk's portable twin.
#[inline(always)]
pub(crate) fn lane_slabs(
    min: &[[f32; WIDTH]; 3],
    max: &[[f32; WIDTH]; 3],
    ray: &WideRay,
    t_min: f32,
    t_max: f32,
) -> (BoxLanes, BoxLanes) {
    let mut near = BoxLanes::splat(t_min);
    let mut far = BoxLanes::splat(t_max);
    for a in 0..3 {
        let (lo, hi) = if ray.negative[a] {
            (max[a], min[a])
        } else {
            (min[a], max[a])
        };
        let (lo, hi) = (BoxLanes::from(lo), BoxLanes::from(hi));
        (near, far) = slab_axis(
            (near, far),
            (lo, hi),
            (ray.near_origin[a], ray.far_origin[a]),
            ray.inv_direction[a],
        );
    }
    (near, far)
}

/// One axis of the slab test, lane by lane: `near` raised to the entry `(lo − o)·inv` and
/// `far` lowered to the exit `(hi − o')·inv` (`lo`, `hi` the planes the ray meets first and
/// last, `o`, `o'` the origins it meets them from: [`WideRay`]), as
/// [`slab_interval`](crate::aabb::slab_interval) rounds it.
#[inline(always)]
pub(crate) fn slab_axis(
    (near, far): (BoxLanes, BoxLanes),
    (lo, hi): (BoxLanes, BoxLanes),
    (near_origin, far_origin): (BoxLanes, BoxLanes),
    inv_direction: BoxLanes,
) -> (BoxLanes, BoxLanes) {
    let t0 = (lo - near_origin) * inv_direction;
    let t1 = (hi - far_origin) * inv_direction;
    (raise(near, t0), lower(far, t1))
}

/// A bit per lane whose entry `near` is no later than its exit `far` widened by
/// [`EXIT_SLACK`].
#[inline(always)]
pub(crate) fn entered(near: BoxLanes, far: BoxLanes) -> u32 {
    let far = far + far.abs() * BoxLanes::splat(EXIT_SLACK);
    near.simd_le(far).to_bitmask()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The portable min and max (what WebAssembly and ARM run) give the same bits as x86's,
    /// NaN lanes and signed zeros included: a NaN `t` keeps the bound, ties keep the bound.
    #[test]
    fn portable_raise_and_lower_equal_the_x86_ones() {
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
                let bound = BoxLanes::from([a, b, a, b, -a, -b, b, a]);
                let t = BoxLanes::from([b, a, special[(i + 3) % 10], b, a, -b, -a, b]);
                let bits = |x: BoxLanes| x.to_array().map(f32::to_bits);
                assert_eq!(
                    bits(raise(bound, t)),
                    bits(raise_portable(bound, t)),
                    "{a} {b}"
                );
                assert_eq!(
                    bits(lower(bound, t)),
                    bits(lower_portable(bound, t)),
                    "{a} {b}"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 100);
    }
}
