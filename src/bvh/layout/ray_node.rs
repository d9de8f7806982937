//! The tree the new ray walk reads (issue 38): 8-wide nodes whose every leaf lane is one
//! packet of up to four triangles under that packet's own box, with the children's order
//! for each of the eight ray octants chosen when the tree is made.
//!
//! The layout follows the design of the fastest CPU walkers (tinybvh's `BVH8_CPU`; the
//! per-octant order of Fuetterling et al., "Accelerated single ray tracing for wide vector
//! units", HPG 2017), written here from their descriptions:
//! - a node is six rows of eight floats (the children's boxes, struct of arrays), eight child
//!   words and eight order words: 256 bytes, four cache lines;
//! - a child word is either an interior node's index, or [`LEAF`] and a packet's index;
//! - `order[i]` holds, for each octant `q` at bits `3q..3q + 2`, the lane that comes `i`-th
//!   when the children are listed farthest first for rays of that octant (the direction's
//!   sign bits), so the walk reads one octant's permutation with one shift and pushes the
//!   entered children in that order with no sort;
//! - an unused lane has the inverted box (`+inf..−inf`), which no valid ray enters.
//!
//! It is made from the wide tree of a built [`Bvh`](crate::Bvh), sharing its packets: a leaf
//! lane of `k` packets becomes `k` lanes where the node has room, else a node of its own
//! (nodes of nodes for a leaf of more than eight packets).

// Off x86-64 the walk has no kernel yet (its portable twin comes when it replaces the old
// walk), so its helpers go unused there.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_imports))]

use crate::bvh::leaf::{LANES, TrianglePacket};
use crate::bvh::wide::{NO_CHILD, WIDTH, WideNode};

/// Marks a child word as a leaf packet (the low bits its index).
pub(crate) const LEAF: u32 = 1 << 31;

/// One node of the ray tree. 256 bytes, aligned to a cache line.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(64))]
pub(crate) struct RayNode {
    pub min: [[f32; WIDTH]; 3],
    pub max: [[f32; WIDTH]; 3],
    pub child: [u32; WIDTH],
    pub order: [u32; WIDTH],
}

const _: () = assert!(std::mem::size_of::<RayNode>() == 256);

impl RayNode {
    const EMPTY: RayNode = RayNode {
        min: [[f32::INFINITY; WIDTH]; 3],
        max: [[f32::NEG_INFINITY; WIDTH]; 3],
        child: [0; WIDTH],
        order: [0; WIDTH],
    };
}

/// A child of a ray node as the conversion places it.
#[derive(Clone, Copy)]
enum Lane {
    /// Wide node `index` of the source tree.
    Node(usize, [[f32; 3]; 2]),
    /// One packet.
    Packet(u32, [[f32; 3]; 2]),
    /// Packets `first..first + count`, as a node of their own.
    Packets(u32, u32),
}

/// Makes the ray tree (root at 0) of a wide tree `nodes` (root at 0) whose leaf lanes name
/// runs of `packets`; the packets are shared, not copied. Also returns the depth of the
/// deepest leaf (the root's lanes are at depth 1).
pub(crate) fn ray_nodes(nodes: &[WideNode], packets: &[TrianglePacket]) -> (Vec<RayNode>, usize) {
    let mut out = vec![RayNode::EMPTY];
    if nodes.is_empty() {
        return (out, 0);
    }
    // (source node, or packets, as ray node `at`, at depth `depth`)
    let mut tasks = vec![(Lane::Node(0, [[0.0; 3]; 2]), 0usize, 1usize)];
    let mut deepest = 0;
    while let Some((source, at, depth)) = tasks.pop() {
        let lanes = match source {
            Lane::Node(w, _) => lanes_of(&nodes[w], packets),
            Lane::Packets(first, count) => packet_lanes(first, count, packets),
            Lane::Packet(..) => unreachable!("a packet is never a task"),
        };
        deepest = deepest.max(depth);
        let mut node = RayNode::EMPTY;
        for (k, lane) in lanes.into_iter().enumerate() {
            let (word, bounds) = match lane {
                Lane::Packet(p, b) => (LEAF | p, b),
                Lane::Node(_, b) => {
                    out.push(RayNode::EMPTY);
                    tasks.push((lane, out.len() - 1, depth + 1));
                    (out.len() as u32 - 1, b)
                }
                Lane::Packets(first, count) => {
                    out.push(RayNode::EMPTY);
                    tasks.push((lane, out.len() - 1, depth + 1));
                    (out.len() as u32 - 1, packets_bounds(first, count, packets))
                }
            };
            for (a, (lo, hi)) in bounds[0].into_iter().zip(bounds[1]).enumerate() {
                node.min[a][k] = lo;
                node.max[a][k] = hi;
            }
            node.child[k] = word;
        }
        node.order = octant_orders(&node);
        out[at] = node;
    }
    (out, deepest)
}

/// The lanes of wide node `node`: its interior lanes as they are, each leaf lane's packets as
/// lanes of their own while they fit (leaves in lane order), a leaf that does not fit as one
/// lane of packets.
fn lanes_of(node: &WideNode, packets: &[TrianglePacket]) -> Vec<Lane> {
    let used: Vec<usize> = (0..WIDTH).filter(|&k| node.child[k] != NO_CHILD).collect();
    let mut room = WIDTH - used.len();
    let mut lanes = Vec::with_capacity(WIDTH);
    for k in used {
        let (min, max) = node.lane_corners(k);
        if node.count[k] == 0 {
            lanes.push(Lane::Node(node.child[k] as usize, [min, max]));
            continue;
        }
        let (first, count) = (node.child[k], node.count[k].div_ceil(LANES as u32));
        if count == 1 {
            lanes.push(Lane::Packet(first, packet_bounds(&packets[first as usize])));
        } else if (count - 1) as usize <= room {
            room -= (count - 1) as usize;
            for p in first..first + count {
                lanes.push(Lane::Packet(p, packet_bounds(&packets[p as usize])));
            }
        } else {
            lanes.push(Lane::Packets(first, count));
        }
    }
    lanes
}

/// The lanes of a node over packets `first..first + count` (more than one): each packet a
/// lane when they fit, else up to eight runs of them, as even as can be.
fn packet_lanes(first: u32, count: u32, packets: &[TrianglePacket]) -> Vec<Lane> {
    if count as usize <= WIDTH {
        return (first..first + count)
            .map(|p| Lane::Packet(p, packet_bounds(&packets[p as usize])))
            .collect();
    }
    let per = count.div_ceil(WIDTH as u32);
    (0..count.div_ceil(per))
        .map(|i| {
            let start = first + i * per;
            let n = per.min(first + count - start);
            if n == 1 {
                Lane::Packet(start, packet_bounds(&packets[start as usize]))
            } else {
                Lane::Packets(start, n)
            }
        })
        .collect()
}

/// The box around a packet's used lanes.
fn packet_bounds(packet: &TrianglePacket) -> [[f32; 3]; 2] {
    let mut b = [[f32::INFINITY; 3], [f32::NEG_INFINITY; 3]];
    for lane in (0..LANES).filter(|&l| !packet.lane_is_empty(l)) {
        let t = packet.get(lane);
        for p in [t.a, t.b, t.c] {
            for a in 0..3 {
                b[0][a] = b[0][a].min(p[a]);
                b[1][a] = b[1][a].max(p[a]);
            }
        }
    }
    b
}

/// The box around packets `first..first + count`.
fn packets_bounds(first: u32, count: u32, packets: &[TrianglePacket]) -> [[f32; 3]; 2] {
    (first..first + count).fold([[f32::INFINITY; 3], [f32::NEG_INFINITY; 3]], |acc, p| {
        let b = packet_bounds(&packets[p as usize]);
        [
            [0, 1, 2].map(|a| acc[0][a].min(b[0][a])),
            [0, 1, 2].map(|a| acc[1][a].max(b[1][a])),
        ]
    })
}

/// The order words of `node`: for each octant `q` (bit `a` set when the direction is
/// negative on axis `a`), the lanes sorted farthest first by their boxes' centres projected
/// on the octant's diagonal, unused lanes first of all (they are never entered); and
/// [`SORT`] where the walk orders the children by distance instead.
fn octant_orders(node: &RayNode) -> [u32; WIDTH] {
    let mut order = [0u32; WIDTH];
    for q in 0..8u32 {
        let key = |k: usize| {
            if node.min[0][k] > node.max[0][k] {
                return f32::INFINITY;
            }
            (0..3)
                .map(|a| {
                    let centre = 0.5 * node.min[a][k] + 0.5 * node.max[a][k];
                    if q & (1 << a) != 0 { -centre } else { centre }
                })
                .sum()
        };
        let mut lanes: [usize; WIDTH] = std::array::from_fn(|k| k);
        // Farthest (largest projection along the direction) first.
        lanes.sort_by(|&i, &j| key(j).total_cmp(&key(i)));
        for (i, &k) in lanes.iter().enumerate() {
            order[i] |= (k as u32) << (3 * q);
        }
    }
    if sorts_at_run_time(node) {
        order[0] |= SORT;
    }
    order
}

/// Set in `order[0]` where no static order suits the node: the walk sorts its entered
/// children by their distances along the ray instead (the bits the octants' lanes use end at
/// bit 23).
pub(crate) const SORT: u32 = 1 << 24;

/// How far two children's boxes may overlap along an axis, as a share of the shorter of
/// their two extents there, and still count as apart on it.
///
/// Two boxes apart along some axis (a plane across it between them) are met in the same
/// order by every ray of an octant, the one on the ray's side first; two that overlap on
/// every axis (one inside the other, or walls through a room's furniture) are met in an
/// order that depends on where the ray starts, which no order made ahead can follow.
/// Measured (issue 38, callgrind, the exact level's closest hit; docs/how-it-works/
/// ray-kernel.md §8): at 0.6 the architectural scenes' nodes sort and the scans' and lost
/// empire's almost never do; 0.0 to 0.6 flag the same nodes of Crytek Sponza and the
/// conference room, and the bunny's fewer as it grows.
const APART: f32 = 0.6;

/// Whether `node`'s children are better ordered at run time ([`SORT`]): some two of them
/// overlap by more than [`APART`] on every axis.
fn sorts_at_run_time(node: &RayNode) -> bool {
    let used: Vec<usize> = (0..WIDTH)
        .filter(|&k| node.min[0][k] <= node.max[0][k])
        .collect();
    used.iter().enumerate().any(|(i, &a)| {
        used[i + 1..].iter().any(|&b| {
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
/// table that compacts a node's entered lanes into one store.
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
        let mut node = RayNode::EMPTY;
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
        let mut node = RayNode::EMPTY;
        let place = |node: &mut RayNode, k: usize, lo: [f32; 3], hi: [f32; 3]| {
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
    use super::*;
    use crate::{BuildOptions, Bvh, Mesh};

    /// Every packet of the BVH is reached exactly once, each lane's box holds its packet's
    /// triangles (or its nodes' boxes), and every node's orders are permutations: for leaves
    /// of one to many packets (`max_leaf_size` 1, 8 and 64).
    #[test]
    fn every_packet_once_inside_its_box() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj");
        for max_leaf_size in [1, 8, 64] {
            let options = BuildOptions {
                max_leaf_size,
                ..Default::default()
            };
            let bvh = Bvh::build_with(Mesh::load(path).unwrap(), &options);
            let (nodes, depth) = ray_nodes(&bvh.nodes, &bvh.leaf_packets);
            assert!(depth >= 1);
            let mut seen = vec![0u32; bvh.leaf_packets.len()];
            let mut visits = 0;
            let mut stack = vec![(0usize, [[f32::NEG_INFINITY; 3], [f32::INFINITY; 3]])];
            while let Some((n, outer)) = stack.pop() {
                visits += 1;
                let node = &nodes[n];
                for q in 0..8 {
                    let mut lanes: Vec<u32> =
                        node.order.iter().map(|w| (w >> (3 * q)) & 7).collect();
                    lanes.sort();
                    assert_eq!(lanes, (0..8).collect::<Vec<_>>());
                }
                for k in 0..WIDTH {
                    let b = [
                        [0, 1, 2].map(|a| node.min[a][k]),
                        [0, 1, 2].map(|a| node.max[a][k]),
                    ];
                    if b[0][0] > b[1][0] {
                        continue;
                    }
                    for a in 0..3 {
                        assert!(outer[0][a] <= b[0][a] && b[1][a] <= outer[1][a]);
                    }
                    let word = node.child[k];
                    if word & LEAF != 0 {
                        let p = (word & !LEAF) as usize;
                        seen[p] += 1;
                        let packet = &bvh.leaf_packets[p];
                        for lane in (0..LANES).filter(|&l| !packet.lane_is_empty(l)) {
                            let t = packet.get(lane);
                            for c in [t.a, t.b, t.c] {
                                for a in 0..3 {
                                    assert!(b[0][a] <= c[a] && c[a] <= b[1][a]);
                                }
                            }
                        }
                    } else {
                        stack.push((word as usize, b));
                    }
                }
            }
            assert_eq!(visits, nodes.len(), "every node reached once");
            assert!(seen.iter().all(|&s| s == 1), "every packet once");
        }
    }
}
