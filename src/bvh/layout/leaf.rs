//! The leaves: their triangles, stored four to a packet.
//!
//! A leaf owns whole packets of four triangles, corners as struct of arrays
//! (`a[axis][lane]`), so one SIMD pass tests four triangles (the tests are the queries':
//! `bvh/query/packet.rs`). Unused lanes hold NaN corners, which fail every test.

use crate::Aabb;
use crate::bvh::wide::{Collapsed, WIDTH};
use crate::triangle::LeafTriangle;
use nalgebra::Point3;
use wide::f32x4;

/// Triangles per packet.
pub(crate) const LANES: usize = 4;

/// Four triangles' corners, struct of arrays: `a[axis][lane]`. 144 bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub(crate) struct TrianglePacket {
    pub a: [[f32; LANES]; 3],
    pub b: [[f32; LANES]; 3],
    pub c: [[f32; LANES]; 3],
}

impl TrianglePacket {
    /// A packet of unused lanes (NaN corners: never hit).
    pub const EMPTY: TrianglePacket = TrianglePacket {
        a: [[f32::NAN; LANES]; 3],
        b: [[f32::NAN; LANES]; 3],
        c: [[f32::NAN; LANES]; 3],
    };

    /// Puts `tri` in `lane`.
    pub fn set(&mut self, lane: usize, tri: &LeafTriangle) {
        for axis in 0..3 {
            self.a[axis][lane] = tri.a[axis];
            self.b[axis][lane] = tri.b[axis];
            self.c[axis][lane] = tri.c[axis];
        }
    }

    /// The triangle in `lane`.
    #[inline(always)]
    pub fn get(&self, lane: usize) -> LeafTriangle {
        LeafTriangle {
            a: [0, 1, 2].map(|axis| self.a[axis][lane]),
            b: [0, 1, 2].map(|axis| self.b[axis][lane]),
            c: [0, 1, 2].map(|axis| self.c[axis][lane]),
        }
    }

    /// Whether `lane` is unused (bit for bit [`EMPTY`](Self::EMPTY)'s lane).
    pub fn lane_is_empty(&self, lane: usize) -> bool {
        let nan = |x: f32| x.to_bits() == f32::NAN.to_bits();
        (0..3).all(|axis| {
            nan(self.a[axis][lane]) && nan(self.b[axis][lane]) && nan(self.c[axis][lane])
        })
    }
}

/// Packs the leaves of the collapsed `nodes` (a leaf lane's `child..child + count` are slots of `order`;
/// `corners(slot)` gives the corners of the triangle in that slot) into whole packets, pointing
/// each leaf lane at its first packet; returns the packets and the slot-to-triangle map
/// (`u32::MAX` for padding). Runs of nodes are packed on rayon's threads and joined in order,
/// so the result is the same on any number of threads.
pub(crate) fn pack(
    nodes: &mut [Collapsed],
    order: &[u32],
    corners: impl Fn(usize) -> [Point3<f32>; 3] + Sync,
) -> (Vec<TrianglePacket>, Vec<u32>) {
    // A run of nodes per thread: joining the runs copies all but the first.
    let nodes_per_task = nodes.len().div_ceil(crate::bvh::par::threads()).max(1);
    let parts = crate::bvh::par::map_chunks_mut(nodes, nodes_per_task, |nodes| {
        let packets: usize = nodes
            .iter()
            .flat_map(|node| leaf_lanes(node).map(|k| node.count[k].div_ceil(LANES as u32)))
            .sum::<u32>() as usize;
        let mut leaf_packets = Vec::with_capacity(packets);
        let mut triangle_index = Vec::with_capacity(packets * LANES);
        // Leaf lanes of this run point at packets counted from its start; moved below.
        for node in nodes.iter_mut() {
            for k in leaf_lanes(node) {
                let first = node.child[k] as usize;
                let range = first..first + node.count[k] as usize;
                node.child[k] = leaf_packets.len() as u32;
                for (start, slots) in range.clone().step_by(LANES).zip(order[range].chunks(LANES)) {
                    let mut packet = TrianglePacket::EMPTY;
                    for lane in 0..slots.len() {
                        let [a, b, c] = corners(start + lane);
                        packet.set(lane, &LeafTriangle::new(&a, &b, &c));
                    }
                    leaf_packets.push(packet);
                    triangle_index.extend_from_slice(slots);
                    triangle_index.extend(std::iter::repeat_n(u32::MAX, LANES - slots.len()));
                }
            }
        }
        (leaf_packets, triangle_index)
    });
    let mut parts = parts.into_iter();
    let (mut leaf_packets, mut triangle_index) = parts.next().unwrap_or_default();
    let count = nodes.len();
    for (run, (packets, index)) in parts.enumerate() {
        let start = (run + 1) * nodes_per_task;
        let offset = leaf_packets.len() as u32;
        for node in &mut nodes[start..(start + nodes_per_task).min(count)] {
            for k in leaf_lanes(node) {
                node.child[k] += offset;
            }
        }
        leaf_packets.extend_from_slice(&packets);
        triangle_index.extend_from_slice(&index);
    }
    (leaf_packets, triangle_index)
}

/// The box of `count` triangles in packets from `first` (a leaf lane's, or a run of packets'):
/// straight from the packets' lanes, four at a time per axis; a run's last packet may end in
/// empty (NaN) lanes, which are replaced by the min's and max's identities.
pub(crate) fn packets_box(packets: &[TrianglePacket], first: u32, count: u32) -> Aabb {
    let (mut lo, mut hi) = (
        [f32x4::splat(f32::INFINITY); 3],
        [f32x4::splat(f32::NEG_INFINITY); 3],
    );
    let n = (count as usize).div_ceil(LANES);
    for (k, packet) in packets[first as usize..][..n].iter().enumerate() {
        let used = USED[(count as usize - k * LANES).min(LANES)];
        for axis in 0..3 {
            let [a, b, c] = [&packet.a, &packet.b, &packet.c].map(|p| f32x4::from(p[axis]));
            let small = used.bitselect(a.fast_min(b).fast_min(c), lo[axis]);
            let big = used.bitselect(a.fast_max(b).fast_max(c), hi[axis]);
            lo[axis] = lo[axis].fast_min(small);
            hi[axis] = hi[axis].fast_max(big);
        }
    }
    let across = |v: f32x4, f: fn(f32, f32) -> f32| {
        let [x, y, z, w] = v.to_array();
        f(f(x, y), f(z, w))
    };
    Aabb {
        min: Point3::from(lo.map(|v| across(v, f32::min))),
        max: Point3::from(hi.map(|v| across(v, f32::max))),
    }
}

/// Per count of used lanes (0 to 4), the mask of those lanes (all bits set).
const USED: [f32x4; LANES + 1] = {
    let on = f32::from_bits(u32::MAX);
    [
        f32x4::new([0.0; 4]),
        f32x4::new([on, 0.0, 0.0, 0.0]),
        f32x4::new([on, on, 0.0, 0.0]),
        f32x4::new([on, on, on, 0.0]),
        f32x4::new([on; 4]),
    ]
};

/// The lanes of `node` that are leaves (found first, so `node` may change meanwhile).
fn leaf_lanes(node: &Collapsed) -> impl Iterator<Item = usize> + use<> {
    let leaves = node
        .lanes()
        .fold(0u32, |m, k| m | u32::from(node.count[k] > 0) << k);
    (0..WIDTH).filter(move |k| leaves & (1 << k) != 0)
}
