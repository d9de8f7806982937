//! The wide tree's upkeep, whatever its leaves hold: a tree built over boxes, its boxes
//! refitted bottom-up (all of them, or only the paths above edited leaves), the links a
//! partial refit needs, and the cost that says when a refit tree should be rebuilt.
//!
//! Two trees use it: the mesh's ([`Bvh`](super::Bvh), whose leaf lanes name packets of
//! triangles) and the scene's top-level tree (whose leaf lanes name instances). What differs
//! is only what a leaf lane's entries are, hence their box: [`Leaves`].
//!
//! The layout these rely on ([`WideNode`]): a node's used lanes come first; a lane is a
//! leaf when its count is non-zero (its child word then names the leaf's first entry),
//! else it names an interior child, which comes after its parent in the array — so one
//! sweep from the back sees every child before its parent.

use super::wide::{NO_CHILD, WIDTH, WideNode, collapse};
use crate::{Aabb, BuildOptions};

/// What a tree's leaves hold, as far as its boxes go.
pub(crate) trait Leaves {
    /// The box of the entries a leaf lane names: its child word `first` and its `count`.
    fn leaf_box(&self, first: u32, count: u32) -> Aabb;
}

/// A wide tree over `boxes`, one entry per leaf lane at most `options.max_leaf_size`: the
/// nodes (root first) and the entries' order (`order[k]` is the index into `boxes` of the
/// `k`-th entry in leaf order; a leaf lane names `first..first + count` of it).
pub(crate) fn build_over_boxes(
    boxes: &[Aabb],
    options: &BuildOptions,
) -> (Vec<WideNode>, Vec<u32>) {
    let (binary, order) = super::build::build(boxes, options, &|_| {});
    let nodes = collapse(&binary, options.traversal_cost, options.intersection_cost);
    (nodes, order)
}

/// Recomputes node `i`'s lane boxes from its children (already up to date) and its leaves;
/// returns how much the node's [`lanes_cost`] changed.
pub(crate) fn refit_node(nodes: &mut [WideNode], i: usize, leaves: &impl Leaves) -> f64 {
    let before = lanes_cost(&nodes[i]);
    for k in 0..WIDTH {
        let (child, count) = (nodes[i].child[k], nodes[i].count[k]);
        if child == NO_CHILD {
            continue;
        }
        let bounds = if count > 0 {
            leaves.leaf_box(child, count)
        } else {
            nodes[child as usize].bounds()
        };
        nodes[i].set_lane_bounds(k, &bounds);
    }
    lanes_cost(&nodes[i]) - before
}

/// Recomputes every box, bottom-up: tight, as after a build.
pub(crate) fn refit_all(nodes: &mut [WideNode], leaves: &impl Leaves) {
    for i in (0..nodes.len()).rev() {
        refit_node(nodes, i, leaves);
    }
}

/// Recomputes the nodes in `dirty` and all their ancestors (`parent` from [`Links`]),
/// children first; returns the change in the tree's [`cost`]. `dirty` is scratch space: it
/// ends up holding that whole set.
pub(crate) fn refit_paths(
    nodes: &mut [WideNode],
    parent: &[u32],
    dirty: &mut Vec<u32>,
    leaves: &impl Leaves,
) -> f64 {
    let touched = dirty.len();
    for k in 0..touched {
        let mut node = parent[dirty[k] as usize];
        while node != NO_PARENT {
            dirty.push(node);
            node = parent[node as usize];
        }
    }
    // Children come after their parent in the array: highest index first is bottom-up.
    dirty.sort_unstable_by(|a, b| b.cmp(a));
    dirty.dedup();
    dirty
        .iter()
        .map(|&node| refit_node(nodes, node as usize, leaves))
        .sum()
}

/// The root's parent in [`Links::parent`], and "none" in [`Links::holder`].
pub(crate) const NO_PARENT: u32 = u32::MAX;

/// What a partial refit needs to find the paths above edited leaves.
#[derive(Clone, Debug, Default)]
pub(crate) struct Links {
    /// Each node's parent ([`NO_PARENT`] for the root).
    pub parent: Vec<u32>,
    /// For each of the `entries` leaf entries, the node whose lane names it.
    pub holder: Vec<u32>,
}

impl Links {
    /// The links of `nodes`, whose leaf lanes name `entries` entries in all (one entry per
    /// unit of a lane's count, from its child word).
    pub(crate) fn new(nodes: &[WideNode], entries: usize) -> Links {
        let (mut parent, mut holder) = (vec![NO_PARENT; nodes.len()], vec![NO_PARENT; entries]);
        for (i, node) in nodes.iter().enumerate() {
            for k in node.lanes() {
                let (child, count) = (node.child[k], node.count[k]);
                if count == 0 {
                    parent[child as usize] = i as u32;
                } else {
                    holder[child as usize..(child + count) as usize].fill(i as u32);
                }
            }
        }
        Links { parent, holder }
    }
}

/// The sum of a node's used lanes' half areas (empty lanes count 0).
pub(crate) fn lanes_cost(node: &WideNode) -> f64 {
    node.lanes()
        .map(|k| f64::from(node.lane_bounds(k).half_area()))
        .sum()
}

/// The sum of every lane's half area: what the surface area heuristic charges a random ray
/// (up to the root's area, a constant of the tree), so its growth since the build is how
/// much a refit has spoiled the tree.
pub(crate) fn cost(nodes: &[WideNode]) -> f64 {
    nodes.iter().map(lanes_cost).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Point3;

    /// Unit boxes at `x = 0, 2, 4, ...`, as leaf entries of one box each.
    struct Boxes(Vec<Aabb>);

    impl Leaves for Boxes {
        fn leaf_box(&self, first: u32, count: u32) -> Aabb {
            self.0[first as usize..(first + count) as usize]
                .iter()
                .fold(Aabb::EMPTY, |b, x| b.union(x))
        }
    }

    fn unit_box(x: f32) -> Aabb {
        Aabb::from_points(&[Point3::new(x, 0.0, 0.0), Point3::new(x + 1.0, 1.0, 1.0)])
    }

    /// A partial refit after moving some entries gives the boxes and cost of a full one, and
    /// a full refit of an unmoved tree changes nothing.
    #[test]
    fn partial_refit_equals_full_refit() {
        let boxes: Vec<Aabb> = (0..300).map(|i| unit_box(2.0 * i as f32)).collect();
        let options = BuildOptions {
            max_leaf_size: 1,
            ..Default::default()
        };
        let (nodes, order) = build_over_boxes(&boxes, &options);
        assert!(
            nodes.len() > 10,
            "{} nodes: too small a tree to test",
            nodes.len()
        );
        let mut leaves = Boxes(order.iter().map(|&i| boxes[i as usize]).collect());
        let mut full = nodes.clone();
        refit_all(&mut full, &leaves);
        assert_eq!(full, nodes, "a refit of an unmoved tree changed it");
        let links = Links::new(&nodes, order.len());
        let mut partial = nodes.clone();
        let mut dirty = Vec::new();
        for k in [0, 17, 150, 299] {
            leaves.0[k] = unit_box(-50.0 + k as f32);
            dirty.push(links.holder[k]);
        }
        let change = refit_paths(&mut partial, &links.parent, &mut dirty, &leaves);
        refit_all(&mut full, &leaves);
        assert_eq!(partial, full);
        assert!((cost(&nodes) + change - cost(&full)).abs() < 1e-6 * cost(&full));
        assert_ne!(
            full, nodes,
            "the moves changed no box: the test tests nothing"
        );
    }
}
