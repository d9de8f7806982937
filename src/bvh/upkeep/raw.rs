//! The tree as plain words, for a reader outside the crate that uploads it to a GPU (the
//! `meshray-gpu` crate): the 8-wide nodes and the leaf packets copied word
//! by word, the slot-to-triangle map borrowed. Hidden from the documentation: the layout is
//! the walk's own and may change with it; [`RawTree::LAYOUT`] names the version a reader
//! was written for.

use crate::bvh::Bvh;
use crate::bvh::leaf::{LANES, TrianglePacket};
use crate::bvh::wide::{COUNT_SHIFT, LEAF, NO_CHILD, SORT, WIDTH, WideNode};

/// A [`Bvh`]'s ray tree in plain `u32` words (`f32` coordinates by their bits), laid out as
/// the walk reads it. Per node, [`NODE_WORDS`](Self::NODE_WORDS) words: the children's box
/// minima (`min[axis][lane]`, 3 × 8), maxima (3 × 8), child words (8: an interior node's
/// index, [`LEAF`](Self::LEAF) and the lane's first packet, or [`NO_CHILD`](Self::NO_CHILD))
/// and order words (8: bits `3q..3q + 2` of word `i` the lane `i`-th farthest for rays of
/// octant `q` — bit `a` of `q` set for a negative direction on axis `a` —, [`SORT`](Self::SORT)
/// in word 0 where the node has no static order, and lane `k`'s packet count in bits
/// [`COUNT_SHIFT`](Self::COUNT_SHIFT) up of word `k`). The root is node 0. Per packet,
/// [`PACKET_WORDS`](Self::PACKET_WORDS) words: the four triangles' corners `a`, `b`, `c`,
/// each `[axis][lane]`; an empty lane's corners are NaN. Slot `packet · 4 + lane` is the
/// mesh's triangle `triangle_index[slot]` (`u32::MAX` for an empty lane).
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct RawTree<'a> {
    /// The nodes, [`NODE_WORDS`](Self::NODE_WORDS) words each, the root first.
    pub nodes: Vec<u32>,
    /// The leaf packets, [`PACKET_WORDS`](Self::PACKET_WORDS) words each.
    pub packets: Vec<u32>,
    /// Slot → the mesh's triangle number; `u32::MAX` for an empty lane.
    pub triangle_index: &'a [u32],
}

impl RawTree<'_> {
    /// The version of the layout described above; changed whenever it changes.
    pub const LAYOUT: u32 = 1;
    /// Words per node.
    pub const NODE_WORDS: usize = std::mem::size_of::<WideNode>() / 4;
    /// Words per packet.
    pub const PACKET_WORDS: usize = std::mem::size_of::<TrianglePacket>() / 4;
    /// Children per node.
    pub const WIDTH: usize = WIDTH;
    /// Triangles per packet.
    pub const LANES: usize = LANES;
    /// The mark of a leaf lane's child word.
    pub const LEAF: u32 = LEAF;
    /// The child word of an unused lane.
    pub const NO_CHILD: u32 = NO_CHILD;
    /// The mark, in order word 0, of a node with no static order.
    pub const SORT: u32 = SORT;
    /// Where a lane's packet count sits in its order word.
    pub const COUNT_SHIFT: u32 = COUNT_SHIFT;
}

const _: () = assert!(RawTree::NODE_WORDS == 64 && RawTree::PACKET_WORDS == 36);

impl Bvh {
    /// The ray tree as plain words ([`RawTree`]), copied: for the GPU crate, not a stable
    /// interface.
    #[doc(hidden)]
    pub fn raw_tree(&self) -> RawTree<'_> {
        let mut nodes = Vec::with_capacity(self.nodes.len() * RawTree::NODE_WORDS);
        for n in &self.nodes {
            for side in [&n.min, &n.max] {
                nodes.extend(side.iter().flatten().map(|x| x.to_bits()));
            }
            nodes.extend_from_slice(&n.child);
            nodes.extend_from_slice(&n.order);
        }
        let mut packets = Vec::with_capacity(self.leaf_packets.len() * RawTree::PACKET_WORDS);
        for p in &self.leaf_packets {
            for corner in [&p.a, &p.b, &p.c] {
                packets.extend(corner.iter().flatten().map(|x| x.to_bits()));
            }
        }
        RawTree {
            nodes,
            packets,
            triangle_index: self.raw_triangle_index(),
        }
    }

    /// [`RawTree::triangle_index`] alone, borrowed (no copy of the tree): what a reader of
    /// the GPU's answers, which name slots, needs to name triangles.
    #[doc(hidden)]
    pub fn raw_triangle_index(&self) -> &[u32] {
        &self.triangle_index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Mesh;

    #[test]
    fn words_are_the_nodes_and_packets() {
        let mesh = Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj")).unwrap();
        let bvh = Bvh::build(mesh);
        let raw = bvh.raw_tree();
        assert_eq!(raw.nodes.len(), bvh.nodes.len() * RawTree::NODE_WORDS);
        assert_eq!(
            raw.packets.len(),
            bvh.leaf_packets.len() * RawTree::PACKET_WORDS
        );
        let n = &bvh.nodes[0];
        assert_eq!(f32::from_bits(raw.nodes[8 + 3]), n.min[1][3]);
        assert_eq!(f32::from_bits(raw.nodes[24 + 16 + 5]), n.max[2][5]);
        assert_eq!(raw.nodes[48 + 7], n.child[7]);
        assert_eq!(raw.nodes[56 + 2], n.order[2]);
        let p = &bvh.leaf_packets[1];
        let words = &raw.packets[RawTree::PACKET_WORDS..];
        assert_eq!(f32::from_bits(words[4 + 2]).to_bits(), p.a[1][2].to_bits());
        assert_eq!(
            f32::from_bits(words[24 + 8 + 1]).to_bits(),
            p.c[2][1].to_bits()
        );
    }
}
