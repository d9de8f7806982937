//! Figures that describe a built tree.

use super::Bvh;
use std::fmt;

/// Size and quality of a BVH (see [`Bvh::stats`]).
///
/// ```
/// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
/// let stats = bvh.stats();
/// println!("{stats}"); // one line: triangles, nodes, leaves, depth, SAH cost, bytes/triangle
/// assert_eq!(stats.triangles, 2090);
/// assert!(stats.leaves >= stats.triangles.div_ceil(stats.max_leaf_size));
/// assert!(stats.bytes_per_triangle < 64.0);
/// # Ok::<(), meshray::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Triangles in the mesh.
    pub triangles: usize,
    /// Nodes of the 8-wide tree the queries walk (each holds up to eight children: nodes or
    /// leaves).
    pub nodes: usize,
    /// Leaves.
    pub leaves: usize,
    /// Levels of wide nodes from the root to the deepest leaf.
    pub depth: usize,
    /// The most triangles in one leaf.
    pub max_leaf_size: usize,
    /// The tree's SAH cost: the expected cost of a ray through the root box,
    /// `Σ_nodes C_trav·A(n)/A(root) + Σ_leaves C_isect·N·A(n)/A(root)` over the wide tree (one
    /// node visit tests eight boxes), with the build's cost constants. Lower is better; compare between builds of the same mesh.
    pub sah_cost: f32,
    /// Bytes of nodes, leaf triangles and the leaf-to-mesh map per triangle (the mesh
    /// itself not counted).
    pub bytes_per_triangle: f32,
}

impl Bvh {
    /// Measures the tree.
    ///
    /// ```
    /// let mesh = meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// let stats = meshray::Bvh::build(mesh).stats();
    /// assert!(stats.nodes < stats.leaves && stats.max_leaf_size <= 8);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn stats(&self) -> Stats {
        let root_area = f64::from(self.bounds().half_area());
        let relative = |b: crate::Aabb| {
            if root_area > 0.0 {
                f64::from(b.half_area()) / root_area
            } else {
                1.0
            }
        };
        let (c_trav, c_isect) = (
            f64::from(self.options.traversal_cost),
            f64::from(self.options.intersection_cost),
        );
        let (mut leaves, mut depth, mut max_leaf, mut cost) = (0, 0, 0, 0.0f64);
        let mut stack = vec![(0usize, 0usize)];
        while let Some((i, d)) = stack.pop() {
            let node = &self.nodes[i];
            cost += c_trav * relative(node.bounds());
            for k in node.lanes() {
                let count = node.count[k];
                if count > 0 {
                    leaves += 1;
                    depth = depth.max(d + 1);
                    max_leaf = max_leaf.max(count as usize);
                    cost += c_isect * f64::from(count) * relative(node.lane_bounds(k));
                } else {
                    stack.push((node.child[k] as usize, d + 1));
                }
            }
        }
        let n = self.mesh.triangle_count();
        let bytes = std::mem::size_of_val(&self.nodes[..])
            + std::mem::size_of_val(&self.leaf_packets[..])
            + std::mem::size_of_val(&self.triangle_index[..]);
        Stats {
            triangles: n,
            nodes: self.nodes.len(),
            leaves,
            depth,
            max_leaf_size: max_leaf,
            sah_cost: cost as f32,
            bytes_per_triangle: bytes as f32 / n as f32,
        }
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} triangles, {} nodes, {} leaves (max {} triangles), depth {}, SAH cost {:.2}, {:.1} bytes/triangle",
            self.triangles,
            self.nodes,
            self.leaves,
            self.max_leaf_size,
            self.depth,
            self.sah_cost,
            self.bytes_per_triangle
        )
    }
}
