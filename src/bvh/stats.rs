//! Figures that describe a built tree.

use super::Bvh;
use super::walk::{Visitor, walk};
use super::wide::{WIDTH, WideNode};
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
        let mut sweep = StatsVisitor {
            relative,
            traversal: c_trav,
            intersection: c_isect,
            depth_of: vec![0; self.nodes.len()],
            leaves: 0,
            depth: 0,
            max_leaf: 0,
            cost: 0.0,
        };
        walk(&self.nodes, &mut sweep);
        let (leaves, depth, max_leaf, cost) =
            (sweep.leaves, sweep.depth, sweep.max_leaf, sweep.cost);
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

/// The statistics sweep: every node once, in any order; leaves are counted at their parent.
struct StatsVisitor<F> {
    /// A box's area relative to the root's.
    relative: F,
    traversal: f64,
    intersection: f64,
    /// Each node's depth (the root's is 0), set when its parent is visited.
    depth_of: Vec<usize>,
    leaves: usize,
    depth: usize,
    max_leaf: usize,
    cost: f64,
}

impl<F: Fn(crate::Aabb) -> f64> Visitor for StatsVisitor<F> {
    type Key = ();
    const ORDERED: bool = false;

    fn node(&mut self, index: u32, node: &WideNode) -> (u32, [(); WIDTH]) {
        let d = self.depth_of[index as usize];
        self.cost += self.traversal * (self.relative)(node.bounds());
        let mut interior = 0;
        for k in node.lanes() {
            let count = node.count[k];
            if count > 0 {
                self.leaves += 1;
                self.depth = self.depth.max(d + 1);
                self.max_leaf = self.max_leaf.max(count as usize);
                self.cost +=
                    self.intersection * f64::from(count) * (self.relative)(node.lane_bounds(k));
            } else {
                self.depth_of[node.child[k] as usize] = d + 1;
                interior |= 1 << k;
            }
        }
        (interior, [(); WIDTH])
    }

    fn worth(&self, _: ()) -> bool {
        true
    }

    fn leaf(&mut self, _: u32, _: u32, _: ()) -> bool {
        false
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
