//! The invariants a built BVH keeps, checked in full.

use crate::bvh::Bvh;
use crate::bvh::leaf::LANES;
use crate::bvh::tree::{self, CheckedLeaves, Leaves};
use crate::triangle::LeafTriangle;
use crate::{Aabb, Error, Result};

impl Bvh {
    /// [`diagnostics::validate`](crate::diagnostics::validate).
    pub(crate) fn validate(&self) -> Result<()> {
        let fail = |reason: String| Err(Error::InvalidBvh { reason });
        if let Err(e) = self.mesh.check() {
            return fail(format!("its mesh is invalid: {e}"));
        }
        let n = self.mesh.triangle_count();
        let nodes = &self.nodes;
        let packets = &self.leaf_packets;
        if packets.len() < n.div_ceil(LANES) || self.triangle_index.len() != packets.len() * LANES {
            return fail(format!(
                "{} leaf packets and {} map entries for {n} triangles",
                packets.len(),
                self.triangle_index.len()
            ));
        }
        if nodes.is_empty() || nodes.len() > n {
            return fail(format!("{} nodes for {n} triangles", nodes.len()));
        }
        // Every leaf lane is one packet.
        let max_leaf = self.options.max_leaf_size.clamp(1, LANES);
        let mut leaves = MeshLeaves {
            bvh: self,
            seen_packet: vec![false; packets.len()],
            seen_triangle: vec![false; n],
        };
        if let Err(reason) = tree::check_shape(nodes, &mut leaves, max_leaf) {
            return fail(reason);
        }
        if let Some(p) = leaves.seen_packet.iter().position(|s| !s) {
            return fail(format!("packet {p} is in no leaf"));
        }
        if let Some(t) = leaves.seen_triangle.iter().position(|s| !s) {
            return fail(format!("triangle {t} is in no leaf"));
        }
        // Finite once the coordinates are in range; a NaN here would mean the build's costs
        // were meaningless.
        let cost = self.stats().sah_cost;
        if !cost.is_finite() {
            return fail(format!("its SAH cost is {cost}, not finite"));
        }
        Ok(())
    }
}

/// The mesh tree's leaves as the shape check sees them: a leaf lane names `count`
/// triangles in whole packets from packet `first`; each packet and triangle in one leaf, the
/// packets' unused lanes empty, each slot a copy of its mesh triangle.
struct MeshLeaves<'a> {
    bvh: &'a Bvh,
    seen_packet: Vec<bool>,
    seen_triangle: Vec<bool>,
}

impl Leaves for MeshLeaves<'_> {
    /// The box of the mesh's triangles the leaf's slots name (the slots are checked to
    /// match them first).
    fn leaf_box(&self, first: u32, count: u32) -> Aabb {
        let first = first as usize * LANES;
        self.bvh.triangle_index[first..first + count as usize]
            .iter()
            .fold(Aabb::EMPTY, |b, &t| {
                b.union(&Aabb::from_points(&self.bvh.mesh.triangle(t as usize)))
            })
    }
}

impl CheckedLeaves for MeshLeaves<'_> {
    fn check_leaf(&mut self, (i, k): (usize, usize), first: u32, count: u32) -> Result<(), String> {
        let (child, count) = (first as usize, count as usize);
        let n = self.bvh.mesh.triangle_count();
        let owned = child..child + count.div_ceil(LANES);
        if owned.end > self.bvh.leaf_packets.len() {
            return Err(format!("leaf {i}.{k} holds packets {owned:?}"));
        }
        for p in owned {
            if std::mem::replace(&mut self.seen_packet[p], true) {
                return Err(format!("packet {p} is in two leaves"));
            }
            for lane in 0..LANES {
                let slot = p * LANES + lane;
                let t = self.bvh.triangle_index[slot];
                if slot >= child * LANES + count {
                    if t != u32::MAX || !self.bvh.leaf_packets[p].lane_is_empty(lane) {
                        return Err(format!("slot {slot} should be empty"));
                    }
                    continue;
                }
                let t = t as usize;
                if t >= n || std::mem::replace(&mut self.seen_triangle[t], true) {
                    return Err(format!(
                        "triangle {t} (slot {slot}) is out of range or in two leaves"
                    ));
                }
                let [a, b, c] = self.bvh.mesh.triangle(t);
                if self.bvh.leaf_packets[p].get(lane) != LeafTriangle::new(&a, &b, &c) {
                    return Err(format!("slot {slot} does not match triangle {t}"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::bvh::wide::{Child, WIDTH};
    use crate::{Bvh, Mesh};
    use nalgebra::Point3;

    fn grid(n: usize) -> Mesh {
        let mut positions = Vec::new();
        let mut triangles = Vec::new();
        for i in 0..n {
            let x = i as f32;
            let base = positions.len() as u32;
            positions.extend([
                Point3::new(x, 0.0, 0.0),
                Point3::new(x + 1.0, 0.0, 0.0),
                Point3::new(x, 1.0, 0.5),
            ]);
            triangles.push([base, base + 1, base + 2]);
        }
        Mesh::from_buffers(positions, triangles).unwrap()
    }

    #[test]
    fn a_fresh_build_is_valid() {
        for n in [1, 2, 3, 17, 1000] {
            Bvh::build(grid(n)).validate().unwrap();
        }
    }

    #[test]
    fn broken_trees_are_caught() {
        let good = Bvh::build(grid(2000));
        assert!(good.nodes.len() > 2);
        let mut b = good.clone();
        b.nodes[1].min[0][0] -= 1.0; // no longer tight / sticks out
        assert!(b.validate().is_err());
        let mut b = good.clone();
        b.triangle_index.swap(0, 5); // leaf triangles no longer match
        assert!(b.validate().is_err());
        let mut b = good.clone();
        let last = b.triangle_index.len() - 1;
        b.triangle_index[last] = b.triangle_index[0]; // a triangle twice
        assert!(b.validate().is_err());
        let mut b = good.clone();
        let interior = (0..WIDTH)
            .find(|&k| matches!(b.nodes[0].lane(k), Child::Node(_)))
            .unwrap();
        b.nodes[0].child[interior] = 0; // a cycle
        assert!(b.validate().is_err());
        let mut b = good.clone();
        b.nodes[0].order[interior] |= 1 << 25; // an interior lane counting triangles
        assert!(b.validate().is_err());
        let mut b = good.clone();
        b.nodes[1].child[1] = crate::bvh::wide::NO_CHILD; // a hole in the lanes
        assert!(b.validate().is_err());
        let mut b = good;
        b.leaf_packets[1].b[1][0] += 1.0;
        assert!(b.validate().is_err());
    }

    #[test]
    fn coincident_centroids_fall_back_to_median_splits() {
        // 100 copies of one triangle: no SAH plane separates them
        let positions = vec![
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(1.0, 0.0, 0.0),
            Point3::new(0.0, 1.0, 0.0),
        ];
        let mesh = Mesh::from_buffers(positions, vec![[0, 1, 2]; 100]).unwrap();
        let bvh = Bvh::build(mesh);
        bvh.validate().unwrap();
        let s = bvh.stats();
        assert!(s.max_leaf_size <= 8 && s.depth <= 8, "{s:?}");
    }
}
