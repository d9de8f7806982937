//! How the tree the queries walk is made from the collapsed tree: every leaf lane one
//! packet of up to four triangles (a mesh's tree) or one instance (a scene's top level)
//! under its own box, and the children's order for each of the eight ray octants chosen
//! when the tree is made (`docs/how-it-works/ray-kernel.md` §8).
//!
//! The layout follows the design of the fastest CPU walkers (tinybvh's `BVH8_CPU`; the
//! per-octant order of Fuetterling et al., "Accelerated single ray tracing for wide vector
//! units", HPG 2017), written here from their descriptions: the order words of a
//! [`WideNode`] list, for each octant, the lanes farthest first, so the walk pushes the
//! entered children in that order with no sort. A collapsed leaf of `k` lanes' worth of
//! entries becomes `k` lanes where the node has room, else a node of its own (nodes of
//! nodes for a leaf of more than eight lanes' worth).

use crate::Aabb;
use crate::bvh::wide::{COUNT_SHIFT, Child, Collapsed, SORT, WIDTH, WideNode};

/// A child of a node as the conversion places it.
#[derive(Clone, Copy)]
enum Lane {
    /// Collapsed node `index`, with its box.
    Node(usize, [[f32; 3]; 2]),
    /// One lane's entries: `count` from `first`, and their box where the collapsed tree
    /// had it (a leaf of one lane).
    Entries(u32, u32, Option<[[f32; 3]; 2]>),
    /// A run of `count` entries from `first`, more than one lane holds: a node of its own.
    Run(u32, u32),
}

/// A node's lanes as the conversion places them (never more than [`WIDTH`]).
type Lanes = smallvec::SmallVec<[Lane; WIDTH]>;

/// Makes the tree the queries walk (root at 0) from the collapsed tree `nodes` (root at 0),
/// whose leaf lanes name runs of entries: each run is cut into lanes of at most `per_lane`
/// entries, lane `j` of a run from `first` naming `first + j` (a mesh's runs start at a
/// packet and count triangles, four to a packet; a scene's name one instance each), and
/// `entries_box(first, count)` gives the box of a lane's or a run's entries. Also returns
/// the depth of the deepest leaf lane (the root's lanes are at depth 1).
///
/// Where every leaf fits one lane (the default trees), each node becomes its own ray node
/// in the collapsed tree's memory, so a build never holds both trees: a WebAssembly page,
/// whose memory never shrinks, keeps a build's peak. Otherwise the new nodes are counted
/// first and allocated once.
pub(crate) fn ray_tree(
    nodes: Vec<Collapsed>,
    per_lane: u32,
    entries_box: &dyn Fn(u32, u32) -> Aabb,
) -> (Vec<WideNode>, usize) {
    if nodes.is_empty() {
        return (vec![WideNode::EMPTY], 0);
    }
    if nodes
        .iter()
        .all(|n| n.lanes().all(|k| n.count[k] <= per_lane))
    {
        return in_place(nodes);
    }
    let mut out = Vec::with_capacity(node_count(&nodes, per_lane));
    out.push(WideNode::EMPTY);
    let corners = |b: Aabb| -> [[f32; 3]; 2] { [b.min.coords.into(), b.max.coords.into()] };
    // (source node, or a run, as node `at`, at depth `depth`)
    let mut tasks = vec![(Lane::Node(0, [[0.0; 3]; 2]), 0usize, 1usize)];
    let mut deepest = 0;
    while let Some((source, at, depth)) = tasks.pop() {
        let lanes = match source {
            Lane::Node(c, _) => lanes_of(&nodes[c], per_lane),
            Lane::Run(first, count) => run_lanes(first, count, per_lane),
            Lane::Entries(..) => unreachable!("a lane's entries are never a task"),
        };
        deepest = deepest.max(depth);
        let mut node = WideNode::EMPTY;
        for (k, lane) in lanes.into_iter().enumerate() {
            match lane {
                Lane::Entries(first, count, bounds) => node.set_lane(
                    k,
                    bounds.unwrap_or_else(|| corners(entries_box(first, count))),
                    Child::Leaf { first, count },
                ),
                Lane::Node(_, bounds) => {
                    out.push(WideNode::EMPTY);
                    tasks.push((lane, out.len() - 1, depth + 1));
                    node.set_lane(k, bounds, Child::Node(out.len() as u32 - 1));
                }
                Lane::Run(first, count) => {
                    out.push(WideNode::EMPTY);
                    tasks.push((lane, out.len() - 1, depth + 1));
                    let bounds = corners(entries_box(first, count));
                    node.set_lane(k, bounds, Child::Node(out.len() as u32 - 1));
                }
            }
        }
        set_orders(&mut node);
        out[at] = node;
    }
    (out, deepest)
}

/// [`ray_tree`] where every leaf lane fits one lane: node for node, in place (the two node
/// types have one size and alignment, so `collect` reuses the allocation).
fn in_place(nodes: Vec<Collapsed>) -> (Vec<WideNode>, usize) {
    // Children come after their parent: one pass gives every node's depth.
    let mut depth = vec![1u32; nodes.len()];
    let mut deepest = 0;
    for (i, node) in nodes.iter().enumerate() {
        for k in node.lanes() {
            if node.count[k] == 0 {
                depth[node.child[k] as usize] = depth[i] + 1;
            } else {
                deepest = deepest.max(depth[i] as usize);
            }
        }
    }
    let out = nodes
        .into_iter()
        .map(|c| {
            let mut node = WideNode::EMPTY;
            for k in c.lanes() {
                let (child, count) = (c.child[k], c.count[k]);
                let lane = if count == 0 {
                    Child::Node(child)
                } else {
                    Child::Leaf {
                        first: child,
                        count,
                    }
                };
                node.set_lane(k, c.lane_corners(k), lane);
            }
            set_orders(&mut node);
            node
        })
        .collect();
    (out, deepest)
}

/// How many nodes [`ray_tree`] makes of `nodes`: one each, and the nodes of the runs too
/// long for their node's free lanes.
fn node_count(nodes: &[Collapsed], per_lane: u32) -> usize {
    fn run_nodes(first: u32, count: u32, per_lane: u32) -> usize {
        1 + run_lanes(first, count, per_lane)
            .into_iter()
            .map(|lane| match lane {
                Lane::Run(f, n) => run_nodes(f, n, per_lane),
                _ => 0,
            })
            .sum::<usize>()
    }
    nodes
        .iter()
        .map(|node| {
            1 + lanes_of(node, per_lane)
                .into_iter()
                .map(|lane| match lane {
                    Lane::Run(f, n) => run_nodes(f, n, per_lane),
                    _ => 0,
                })
                .sum::<usize>()
        })
        .sum()
}

/// The lanes of collapsed node `node`: its interior lanes as they are, each leaf lane's
/// entries in lanes of their own while they fit (leaves in lane order), a leaf that does not
/// fit as one run.
fn lanes_of(node: &Collapsed, per_lane: u32) -> Lanes {
    let mut room = WIDTH - node.lanes().count();
    let mut lanes = Lanes::new();
    for k in node.lanes() {
        let (first, count) = (node.child[k], node.count[k]);
        if count == 0 {
            lanes.push(Lane::Node(first as usize, node.lane_corners(k)));
            continue;
        }
        let cut = count.div_ceil(per_lane);
        if cut == 1 {
            lanes.push(Lane::Entries(first, count, Some(node.lane_corners(k))));
        } else if (cut - 1) as usize <= room {
            room -= (cut - 1) as usize;
            lanes.extend(chunks(first, count, per_lane, 1).map(|(f, n)| Lane::Entries(f, n, None)));
        } else {
            lanes.push(Lane::Run(first, count));
        }
    }
    lanes
}

/// The lanes of a node over a run of `count` entries from `first` (more than one lane's
/// worth): a lane each when they fit, else up to eight runs of them, as even as can be.
fn run_lanes(first: u32, count: u32, per_lane: u32) -> Lanes {
    let cut = count.div_ceil(per_lane);
    if cut as usize <= WIDTH {
        return chunks(first, count, per_lane, 1)
            .map(|(f, n)| Lane::Entries(f, n, None))
            .collect();
    }
    let lanes_per_run = cut.div_ceil(WIDTH as u32);
    chunks(first, count, per_lane, lanes_per_run)
        .map(|(f, n)| {
            if n <= per_lane {
                Lane::Entries(f, n, None)
            } else {
                Lane::Run(f, n)
            }
        })
        .collect()
}

/// A run of `count` entries from `first` cut into pieces of `lanes` lanes of `per_lane`
/// entries (the last piece what is left): each piece's first word and entry count.
fn chunks(first: u32, count: u32, per_lane: u32, lanes: u32) -> impl Iterator<Item = (u32, u32)> {
    let piece = per_lane * lanes;
    (0..count.div_ceil(piece)).map(move |i| (first + i * lanes, piece.min(count - i * piece)))
}

/// Writes `node`'s order words from its boxes (see [`WideNode`]), keeping its lanes' counts:
/// for each octant `q` (bit `a` set when the direction is negative on axis `a`), the lanes
/// sorted farthest first by their boxes' centres projected on the octant's diagonal, unused
/// lanes first of all (they are never entered); and [`SORT`] where the walk orders the
/// children by distance instead.
pub(crate) fn set_orders(node: &mut WideNode) {
    let counts = node.counts();
    let order = octant_orders(node);
    for (k, count) in counts.into_iter().enumerate() {
        node.order[k] = order[k] | count << COUNT_SHIFT;
    }
}

/// Whether every octant's order in `node`'s order words names each lane once, as the walk
/// trusts (a refit keeps the orders made from the boxes it started from: still
/// permutations, perhaps no longer the best).
pub(crate) fn orders_are_permutations(node: &WideNode) -> bool {
    (0..8).all(|q| {
        let seen = node
            .order
            .iter()
            .fold(0u32, |seen, w| seen | 1 << ((w >> (3 * q)) & 7));
        seen == 0xff
    })
}

/// The octant-order bits of `node`'s order words (with [`SORT`]), counts left out.
fn octant_orders(node: &WideNode) -> [u32; WIDTH] {
    let mut order = [0u32; WIDTH];
    let used: [bool; WIDTH] = std::array::from_fn(|k| node.min[0][k] <= node.max[0][k]);
    let unused = used.iter().filter(|u| !**u).count();
    let centre: [[f32; WIDTH]; 3] = std::array::from_fn(|a| {
        std::array::from_fn(|k| 0.5 * node.min[a][k] + 0.5 * node.max[a][k])
    });
    // Octant `7 − q` projects on the opposite diagonal: its order is octant `q`'s with the
    // used lanes reversed (the unused ones, never entered, first in both).
    for q in 0..4u32 {
        let sign = |a: usize| if q & (1 << a) != 0 { -1.0 } else { 1.0 };
        let (sx, sy, sz) = (sign(0), sign(1), sign(2));
        let key: [f32; WIDTH] = std::array::from_fn(|k| {
            if used[k] {
                sx * centre[0][k] + sy * centre[1][k] + sz * centre[2][k]
            } else {
                f32::INFINITY
            }
        });
        // Farthest (largest projection along the direction) first; equal keys in lane
        // order (an insertion sort, stable), so the unused lanes (+inf) come first.
        let mut lanes = [0usize, 1, 2, 3, 4, 5, 6, 7];
        for i in 1..WIDTH {
            let mut j = i;
            while j > 0 && key[lanes[j - 1]] < key[lanes[j]] {
                lanes.swap(j - 1, j);
                j -= 1;
            }
        }
        for (i, &k) in lanes.iter().enumerate() {
            order[i] |= (k as u32) << (3 * q);
            let opposite = if i < unused {
                k
            } else {
                lanes[WIDTH - 1 - (i - unused)]
            };
            order[i] |= (opposite as u32) << (3 * (7 - q));
        }
    }
    if sorts_at_run_time(node) {
        order[0] |= SORT;
    }
    order
}

/// How far two children's boxes may overlap along an axis, as a share of the shorter of
/// their two extents there, and still count as apart on it.
///
/// Two boxes apart along some axis (a plane across it between them) are met in the same
/// order by every ray of an octant, the one on the ray's side first; two that overlap on
/// every axis (one inside the other, or walls through a room's furniture) are met in an
/// order that depends on where the ray starts, which no order made ahead can follow.
/// At this threshold the architectural scenes' nodes sort and the scans' almost never do
/// (the measurements: docs/how-it-works/ray-kernel.md §8).
const APART: f32 = 0.6;

/// Whether `node`'s children are better ordered at run time ([`SORT`]): some two of them
/// overlap by more than [`APART`] on every axis.
fn sorts_at_run_time(node: &WideNode) -> bool {
    let used = |k: usize| node.min[0][k] <= node.max[0][k];
    (0..WIDTH).filter(|&a| used(a)).any(|a| {
        (a + 1..WIDTH).filter(|&b| used(b)).any(|b| {
            (0..3).all(|x| {
                let overlap =
                    node.max[x][a].min(node.max[x][b]) - node.min[x][a].max(node.min[x][b]);
                let extent = (node.max[x][a] - node.min[x][a]).min(node.max[x][b] - node.min[x][b]);
                overlap > APART * extent
            })
        })
    })
}

/// For each 8-bit mask, the positions of its set bits, lowest first (the rest 0): the
/// permutation that compresses a node's entered lanes to the front (the walk's, on every
/// instruction set).
pub(crate) static COMPACT: [[u8; WIDTH]; 256] = {
    let mut table = [[0u8; WIDTH]; 256];
    let mut m = 0;
    while m < 256 {
        let (mut k, mut n) = (0, 0);
        while k < WIDTH {
            if m & (1 << k) != 0 {
                table[m][n] = k as u8;
                n += 1;
            }
            k += 1;
        }
        m += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_set_bits() {
        assert_eq!(COMPACT[0b1010_0110][..4], [1, 2, 5, 7]);
        assert_eq!(COMPACT[0xff], [0, 1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn orders_are_permutations_and_nearest_last() {
        let mut node = WideNode::EMPTY;
        for k in 0..5 {
            let x = k as f32;
            for a in 0..3 {
                node.min[a][k] = x;
                node.max[a][k] = x + 0.5;
            }
        }
        let order = octant_orders(&node);
        for q in 0..8 {
            let lanes: Vec<u32> = order.iter().map(|w| (w >> (3 * q)) & 7).collect();
            let mut sorted = lanes.clone();
            sorted.sort();
            assert_eq!(sorted, (0..8).collect::<Vec<_>>());
            // Octant 0 (all positive): the lowest box is nearest, so listed last.
            if q == 0 {
                assert_eq!(lanes[7], 0);
            }
            if q == 7 {
                assert_eq!(lanes[7], 4);
            }
        }
    }

    #[test]
    fn nodes_sort_where_children_overlap_on_every_axis() {
        let mut node = WideNode::EMPTY;
        let place = |node: &mut WideNode, k: usize, lo: [f32; 3], hi: [f32; 3]| {
            for a in 0..3 {
                node.min[a][k] = lo[a];
                node.max[a][k] = hi[a];
            }
        };
        // Apart along x, overlapping along y and z: one order suits every ray.
        place(&mut node, 0, [0.0; 3], [1.0; 3]);
        place(&mut node, 1, [0.9, 0.0, 0.0], [2.0, 1.0, 1.0]);
        assert!(!sorts_at_run_time(&node));
        assert_eq!(octant_orders(&node)[0] & SORT, 0);
        // A box inside another's span on every axis: no order suits every ray.
        place(&mut node, 2, [0.2; 3], [0.5; 3]);
        assert!(sorts_at_run_time(&node));
        assert_eq!(octant_orders(&node)[0] & SORT, SORT);
        // The flag stays out of the octants' lanes.
        for q in 0..8 {
            let mut lanes: Vec<u32> = octant_orders(&node)
                .iter()
                .map(|w| (w >> (3 * q)) & 7)
                .collect();
            lanes.sort();
            assert_eq!(lanes, (0..8).collect::<Vec<_>>());
        }
    }
}

#[cfg(test)]
mod tree_tests {
    use crate::bvh::leaf::LANES;
    use crate::bvh::wide::{Child, WIDTH};
    use crate::{BuildOptions, Bvh, Mesh};

    /// Every packet of the BVH is one leaf lane, reached exactly once, with its triangle
    /// count and a box holding its triangles inside its parents' boxes, and every node's
    /// orders are permutations: for binary leaves of one to many packets (`max_leaf_size`
    /// 1, 4, 8 and 64: lanes spread over a node's free lanes, or nodes of their own).
    #[test]
    fn every_packet_once_inside_its_box() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj");
        for max_leaf_size in [1, 4, 8, 64] {
            let options = BuildOptions {
                max_leaf_size,
                ..Default::default()
            };
            let bvh = Bvh::build_with(Mesh::load(path).unwrap(), &options);
            bvh.validate().unwrap();
            let nodes = &bvh.nodes;
            let mut seen = vec![0u32; bvh.leaf_packets.len()];
            let mut visits = 0;
            let mut stack = vec![(0usize, [[f32::NEG_INFINITY; 3], [f32::INFINITY; 3]])];
            while let Some((n, outer)) = stack.pop() {
                visits += 1;
                let node = &nodes[n];
                assert!(super::orders_are_permutations(node));
                for k in 0..WIDTH {
                    let (lo, hi) = node.lane_corners(k);
                    for a in 0..3 {
                        assert!(node.lane(k) == Child::Empty || outer[0][a] <= lo[a]);
                        assert!(node.lane(k) == Child::Empty || hi[a] <= outer[1][a]);
                    }
                    match node.lane(k) {
                        Child::Empty => assert!(lo[0] > hi[0]),
                        Child::Node(c) => stack.push((c as usize, [lo, hi])),
                        Child::Leaf { first, count } => {
                            seen[first as usize] += 1;
                            let slots = &bvh.triangle_index[first as usize * LANES..][..LANES];
                            let used = slots.iter().filter(|&&t| t != u32::MAX).count();
                            assert_eq!(count as usize, used);
                            let packet = &bvh.leaf_packets[first as usize];
                            for lane in 0..used {
                                let t = packet.get(lane);
                                for c in [t.a, t.b, t.c] {
                                    for a in 0..3 {
                                        assert!(lo[a] <= c[a] && c[a] <= hi[a]);
                                    }
                                }
                            }
                        }
                    }
                }
            }
            assert_eq!(visits, nodes.len(), "every node reached once");
            assert!(seen.iter().all(|&s| s == 1), "every packet once");
            assert!(bvh.depth >= 1 && bvh.depth == bvh.stats().depth);
        }
    }
}
