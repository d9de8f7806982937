//! Figures that describe a built tree.

use crate::bvh::Bvh;
use crate::bvh::walk::{Visitor, walk};
use crate::bvh::wide::{WIDTH, WideNode};
use crate::splitmix::SplitMix64;
use crate::{Aabb, QueryOptions, Ray};
use nalgebra::Vector3;
use std::fmt;

/// Size and quality of a BVH (see [`Bvh::stats`]): figures read off the tree, cheap enough to
/// check after every refit. What a query costs, measured with rays, is
/// [`diagnostics::measured_cost`](crate::diagnostics::measured_cost).
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
    /// Leaf lanes: each a packet of one to four triangles under a box of its own.
    pub leaves: usize,
    /// Levels of wide nodes from the root to the deepest leaf.
    pub depth: usize,
    /// The most triangles in one leaf lane (at most four).
    pub max_leaf_size: usize,
    /// The tree's SAH cost: the expected cost of a ray through the root box,
    /// `Σ_nodes C_trav·A(n)/A(root) + Σ_leaves C_isect·N·A(n)/A(root)` over the wide tree (one
    /// node visit tests eight boxes), with the build's cost constants. Lower is better; compare between builds of the same mesh.
    pub sah_cost: f32,
    /// Bytes of nodes, leaf triangles and the leaf-to-mesh map per triangle (the mesh
    /// itself not counted).
    pub bytes_per_triangle: f32,
}

/// What a closest-hit query tests per ray, measured over a standard set of random rays (see
/// [`diagnostics::measured_cost`](crate::diagnostics::measured_cost)): what [`Stats::sah_cost`] estimates.
///
/// ```
/// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
/// let cost = meshray::diagnostics::measured_cost(&bvh);
/// assert!(cost.boxes_per_ray > 0.0 && cost.triangles_per_ray < 100.0);
/// # Ok::<(), meshray::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeasuredCost {
    /// Boxes tested per ray.
    pub boxes_per_ray: f32,
    /// Triangles tested per ray.
    pub triangles_per_ray: f32,
}

/// Rays in the set behind [`diagnostics::measured_cost`](crate::diagnostics::measured_cost).
const STANDARD_RAYS: u32 = 4096;

/// The standard random rays through `bounds` (see [`diagnostics::measured_cost`](crate::diagnostics::measured_cost)), from a
/// splitmix64 sequence.
fn standard_rays(bounds: &Aabb) -> impl Iterator<Item = Ray> + '_ {
    let mut rng = SplitMix64(0x6d65_7368_7261_7921);
    let mut uniform = move || rng.unit_f64();
    let (lo, hi) = (bounds.min.cast::<f64>(), bounds.max.cast::<f64>());
    let centre = nalgebra::center(&lo, &hi);
    let radius = 1.5 * (hi - lo).norm() / 2.0;
    (0..STANDARD_RAYS).map(move |_| {
        // A uniform direction: a point of the unit ball by rejection, pushed to the sphere.
        let on_sphere = loop {
            let v = Vector3::new(uniform(), uniform(), uniform()) * 2.0 - Vector3::repeat(1.0);
            let r = v.norm();
            if r > 1e-3 && r <= 1.0 {
                break v / r;
            }
        };
        let origin = centre + on_sphere * radius;
        let target = lo + (hi - lo).component_mul(&Vector3::new(uniform(), uniform(), uniform()));
        Ray::new(origin.cast::<f32>(), (target - origin).cast::<f32>())
    })
}

impl Bvh {
    /// The tree's figures, from one sweep over its nodes (no rays are cast: cheap enough to
    /// watch [`Stats::sah_cost`] after every [`refit`](Bvh::refit)).
    ///
    /// ```
    /// let mesh = meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// let stats = meshray::Bvh::build(mesh).stats();
    /// assert!(stats.nodes < stats.leaves && stats.max_leaf_size <= 4);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn stats(&self) -> Stats {
        let sweep = self.sweep();
        let n = self.mesh.triangle_count();
        let bytes = std::mem::size_of_val(&self.nodes[..])
            + std::mem::size_of_val(&self.leaf_packets[..])
            + std::mem::size_of_val(&self.triangle_index[..]);
        Stats {
            triangles: n,
            nodes: self.nodes.len(),
            leaves: sweep.leaves,
            depth: sweep.depth,
            max_leaf_size: sweep.max_leaf,
            sah_cost: self.sah_cost() as f32,
            bytes_per_triangle: bytes as f32 / n as f32,
        }
    }

    /// [`diagnostics::measured_cost`](crate::diagnostics::measured_cost).
    pub(crate) fn measured_cost(&self) -> MeasuredCost {
        let (mut boxes_tested, mut triangles_tested) = (0u64, 0u64);
        for ray in standard_rays(&self.bounds()) {
            let (_, cost) = self.closest_hit_with_cost(&ray, &QueryOptions::default());
            boxes_tested += u64::from(cost.boxes);
            triangles_tested += u64::from(cost.triangles);
        }
        let per_ray = |tested: u64| (tested as f64 / f64::from(STANDARD_RAYS)) as f32;
        MeasuredCost {
            boxes_per_ray: per_ray(boxes_tested),
            triangles_per_ray: per_ray(triangles_tested),
        }
    }

    /// The SAH cost ([`Stats::sah_cost`]): each node's traversal and each leaf's triangles,
    /// weighted by their box's area relative to the root's. One pass over the node array,
    /// allocating nothing, so [`pose`](Bvh::pose) can watch it every frame.
    pub(crate) fn sah_cost(&self) -> f64 {
        let root_area = f64::from(self.bounds().half_area());
        let relative = |b: Aabb| {
            if root_area > 0.0 {
                f64::from(b.half_area()) / root_area
            } else {
                1.0
            }
        };
        let (traversal, intersection) = (
            f64::from(self.options.traversal_cost),
            f64::from(self.options.intersection_cost),
        );
        self.nodes
            .iter()
            .map(|node| {
                let leaves: f64 = node
                    .lanes()
                    .filter(|&k| node.count(k) > 0)
                    .map(|k| f64::from(node.count(k)) * relative(node.lane_bounds(k)))
                    .sum();
                traversal * relative(node.bounds()) + intersection * leaves
            })
            .sum()
    }

    /// One sweep over the nodes: leaves, depth and the largest leaf.
    pub(in crate::bvh) fn sweep(&self) -> StatsVisitor {
        let mut sweep = StatsVisitor {
            depth_of: vec![0; self.nodes.len()],
            leaves: 0,
            depth: 0,
            max_leaf: 0,
        };
        walk(&self.nodes, &mut sweep);
        sweep
    }
}

/// The statistics sweep: every node once, in any order; leaves are counted at their parent.
pub(in crate::bvh) struct StatsVisitor {
    /// Each node's depth (the root's is 0), set when its parent is visited.
    depth_of: Vec<usize>,
    leaves: usize,
    /// The deepest leaf lane's depth (the root's lanes at 1).
    pub depth: usize,
    max_leaf: usize,
}

impl Visitor for StatsVisitor {
    type Key = ();
    const ORDERED: bool = false;

    fn node(&mut self, index: u32, node: &WideNode) -> (u32, [(); WIDTH]) {
        let d = self.depth_of[index as usize];
        let mut interior = 0;
        for k in node.lanes() {
            let count = node.count(k);
            if count > 0 {
                self.leaves += 1;
                self.depth = self.depth.max(d + 1);
                self.max_leaf = self.max_leaf.max(count as usize);
            } else {
                self.depth_of[node.target(k) as usize] = d + 1;
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
            "{} triangles, {} nodes, {} leaves (max {} triangles), depth {}, SAH cost {:.2}, \
             {:.1} bytes/triangle",
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
