//! The invariants a built BVH keeps, checked in full.

use super::Bvh;
use super::build::MAX_DEPTH;
use super::wide::WIDTH;
use crate::packet::LANES;
use crate::triangle::LeafTriangle;
use crate::{Aabb, Error, Result};

impl Bvh {
    /// Checks every invariant of the tree, in O(n): children lie in range, after their parent
    /// in the array and inside their parent's box, every node is reached once and uses two to eight lanes (packed first,
    /// unused lanes empty), leaves hold 1 to `max_leaf_size` triangles in packets of their
    /// own (unused packet lanes empty), each leaf's box is exactly the box of its triangles,
    /// every mesh triangle sits in exactly one leaf, the stored leaf triangles match the mesh, there are at most `n` nodes, the depth fits
    /// the traversal stack, the mesh itself is valid (indices in range, every used coordinate
    /// finite and within ±[`Mesh::MAX_COORDINATE`](crate::Mesh::MAX_COORDINATE)) and the SAH
    /// cost is finite. Builds run it in debug builds; tests run it after every build.
    ///
    /// ```
    /// let mesh = meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// meshray::Bvh::build(mesh).validate()?;
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidBvh`] naming the first broken invariant.
    pub fn validate(&self) -> Result<()> {
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
        let mut seen_packet = vec![false; packets.len()];
        if nodes.is_empty() || nodes.len() > n {
            return fail(format!("{} nodes for {n} triangles", nodes.len()));
        }
        let max_leaf = self.options.max_leaf_size.clamp(1, super::MAX_LEAF_SIZE);
        let mut seen_node = vec![false; nodes.len()];
        let mut seen_triangle = vec![false; n];
        let mut stack = vec![(0usize, 0usize)];
        seen_node[0] = true;
        while let Some((i, depth)) = stack.pop() {
            let node = &nodes[i];
            if depth >= MAX_DEPTH {
                return fail(format!(
                    "node {i} at depth {depth}, deeper than {MAX_DEPTH}"
                ));
            }
            let used = node.lanes().count();
            if used == 0 || (used == 1 && i != 0) || node.lanes().any(|k| k >= used) {
                return fail(format!(
                    "node {i} uses lanes {:?}: a node needs two or more (the root one), packed first",
                    node.lanes().collect::<Vec<_>>()
                ));
            }
            for k in used..WIDTH {
                if node.lane_bounds(k) != Aabb::EMPTY || node.count[k] != 0 {
                    return fail(format!("node {i} lane {k} is unused but not empty"));
                }
            }
            for k in 0..used {
                let bounds = node.lane_bounds(k);
                let (child, count) = (node.child[k] as usize, node.count[k] as usize);
                if count > 0 {
                    if count > max_leaf {
                        return fail(format!(
                            "leaf {i}.{k} holds {count} triangles, more than {max_leaf}"
                        ));
                    }
                    let owned = child..child + count.div_ceil(LANES);
                    if owned.end > packets.len() {
                        return fail(format!("leaf {i}.{k} holds packets {owned:?}"));
                    }
                    let mut tight = Aabb::EMPTY;
                    for p in owned {
                        if std::mem::replace(&mut seen_packet[p], true) {
                            return fail(format!("packet {p} is in two leaves"));
                        }
                        for lane in 0..LANES {
                            let slot = p * LANES + lane;
                            let t = self.triangle_index[slot];
                            if slot >= child * LANES + count {
                                if t != u32::MAX || !packets[p].lane_is_empty(lane) {
                                    return fail(format!("slot {slot} should be empty"));
                                }
                                continue;
                            }
                            let t = t as usize;
                            if t >= n || std::mem::replace(&mut seen_triangle[t], true) {
                                return fail(format!(
                                    "triangle {t} (slot {slot}) is out of range or in two leaves"
                                ));
                            }
                            let [a, b, c] = self.mesh.triangle(t);
                            if packets[p].get(lane) != LeafTriangle::new(&a, &b, &c) {
                                return fail(format!("slot {slot} does not match triangle {t}"));
                            }
                            tight = tight.union(&Aabb::from_points(&[a, b, c]));
                        }
                    }
                    if tight != bounds {
                        return fail(format!(
                            "leaf {i}.{k} box {bounds:?} is not its triangles' box {tight:?}"
                        ));
                    }
                } else {
                    // After their parent: refit sweeps the array backwards.
                    if child <= i || child >= nodes.len() {
                        return fail(format!(
                            "node {i} lane {k} points to node {child} of {}",
                            nodes.len()
                        ));
                    }
                    if std::mem::replace(&mut seen_node[child], true) {
                        return fail(format!("node {child} is reached twice"));
                    }
                    if !bounds.contains(&nodes[child].bounds()) {
                        return fail(format!("node {child} sticks out of its parent {i}.{k}"));
                    }
                    stack.push((child, depth + 1));
                }
            }
        }
        if let Some(i) = seen_node.iter().position(|s| !s) {
            return fail(format!("node {i} is not reachable"));
        }
        if let Some(p) = seen_packet.iter().position(|s| !s) {
            return fail(format!("packet {p} is in no leaf"));
        }
        if let Some(t) = seen_triangle.iter().position(|s| !s) {
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

#[cfg(test)]
mod tests {
    use super::WIDTH;
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
        let interior = (0..WIDTH).find(|&k| b.nodes[0].count[k] == 0).unwrap();
        b.nodes[0].child[interior] = 0; // a cycle
        assert!(b.validate().is_err());
        let mut b = good.clone();
        b.nodes[0].count[3] = 1; // a leaf in no lane's place
        assert!(b.validate().is_err());
        let mut b = good.clone();
        b.nodes[1].child[1] = super::super::wide::NO_CHILD; // a hole in the lanes
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
