//! The invariants a built BVH keeps, checked in full.

use super::Bvh;
use super::build::MAX_DEPTH;
use crate::triangle::LeafTriangle;
use crate::{Aabb, Error, Result};

impl Bvh {
    /// Checks every invariant of the tree, in O(n): children lie in range and inside their
    /// parent's box, every node is reached once, leaves hold 1 to `max_leaf_size` triangles,
    /// each leaf's box is exactly the box of
    /// its triangles, every mesh triangle sits in exactly one leaf, the stored leaf
    /// triangles match the mesh, there are at most `2n − 1` nodes and the depth fits the
    /// traversal stack. Builds run it in debug builds; tests run it after every build.
    ///
    /// ```
    /// let mesh = meshray::Mesh::load_obj(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// meshray::Bvh::build(mesh).validate()?;
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidBvh`] naming the first broken invariant.
    pub fn validate(&self) -> Result<()> {
        let fail = |reason: String| Err(Error::InvalidBvh { reason });
        let n = self.mesh.triangle_count();
        let nodes = &self.nodes;
        if self.leaf_triangles.len() != n || self.triangle_index.len() != n {
            return fail(format!(
                "{} leaf triangles and {} map entries for {n} triangles",
                self.leaf_triangles.len(),
                self.triangle_index.len()
            ));
        }
        if nodes.is_empty() || nodes.len() > 2 * n - 1 {
            return fail(format!("{} nodes for {n} triangles", nodes.len()));
        }
        let mut seen_node = vec![false; nodes.len()];
        let mut seen_triangle = vec![false; n];
        let mut stack = vec![(0usize, 0usize)];
        seen_node[0] = true;
        while let Some((i, depth)) = stack.pop() {
            let node = &nodes[i];
            let bounds = node.bounds();
            if depth >= MAX_DEPTH {
                return fail(format!(
                    "node {i} at depth {depth}, deeper than {MAX_DEPTH}"
                ));
            }
            if node.is_leaf() {
                let (first, count) = (node.first as usize, node.count as usize);
                let max_leaf = self.options.max_leaf_size.clamp(1, super::MAX_LEAF_SIZE);
                if count > max_leaf {
                    return fail(format!(
                        "leaf {i} holds {count} triangles, more than {max_leaf}"
                    ));
                }
                if first + count > n {
                    return fail(format!("leaf {i} holds slots {first}..{}", first + count));
                }
                let mut tight = Aabb::EMPTY;
                for slot in first..first + count {
                    let t = self.triangle_index[slot] as usize;
                    if t >= n || std::mem::replace(&mut seen_triangle[t], true) {
                        return fail(format!(
                            "triangle {t} (slot {slot}) is out of range or in two leaves"
                        ));
                    }
                    let [a, b, c] = self.mesh.triangle(t);
                    if self.leaf_triangles[slot] != LeafTriangle::new(&a, &b, &c) {
                        return fail(format!("slot {slot} does not match triangle {t}"));
                    }
                    tight = tight.union(&Aabb::from_points(&[a, b, c]));
                }
                if tight != bounds {
                    return fail(format!(
                        "leaf {i} box {bounds:?} is not its triangles' box {tight:?}"
                    ));
                }
            } else {
                let left = node.first as usize;
                if left == 0 || left + 1 >= nodes.len() {
                    return fail(format!(
                        "node {i} has children {left}, {} of {}",
                        left + 1,
                        nodes.len()
                    ));
                }
                for child in [left, left + 1] {
                    if std::mem::replace(&mut seen_node[child], true) {
                        return fail(format!("node {child} is reached twice"));
                    }
                    if !bounds.contains(&nodes[child].bounds()) {
                        return fail(format!("node {child} sticks out of its parent {i}"));
                    }
                    stack.push((child, depth + 1));
                }
            }
        }
        if let Some(i) = seen_node.iter().position(|s| !s) {
            return fail(format!("node {i} is not reachable"));
        }
        if let Some(t) = seen_triangle.iter().position(|s| !s) {
            return fail(format!("triangle {t} is in no leaf"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
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
        let good = Bvh::build(grid(64));
        let mut b = good.clone();
        b.nodes[1].min[0] -= 1.0; // no longer tight / sticks out
        assert!(b.validate().is_err());
        let mut b = good.clone();
        b.triangle_index.swap(0, 5); // leaf triangles no longer match
        assert!(b.validate().is_err());
        let mut b = good.clone();
        let last = b.triangle_index.len() - 1;
        b.triangle_index[last] = b.triangle_index[0]; // a triangle twice
        assert!(b.validate().is_err());
        let mut b = good.clone();
        b.nodes[0].first = 0; // a cycle
        assert!(b.validate().is_err());
        let mut b = good;
        b.leaf_triangles[3].b[1] += 1.0;
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
