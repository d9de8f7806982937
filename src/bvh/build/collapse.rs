//! The collapse of the binary SAH tree into 8-wide nodes ([`Collapsed`]), which
//! [`ray_tree`](crate::bvh::ray_node::ray_tree) then lays out for the walks.

use crate::bvh::Node;
use crate::bvh::wide::{Collapsed, WIDTH};

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
