//! The wide tree's upkeep, whatever its leaves hold: a tree built over boxes, its boxes
//! refitted bottom-up (all of them, or only the paths above edited leaves), the links a
//! partial refit needs, the cost that says when a refit tree should be rebuilt, and the
//! check of the invariants every wide tree keeps.
//!
//! Two trees use it: the mesh's ([`Bvh`](crate::bvh::Bvh), whose leaf lanes name packets of
//! triangles) and the scene's top-level tree (whose leaf lanes name instances). What differs
//! is only what a leaf lane's entries are, hence their box ([`Leaves`]) and what checking
//! them means ([`CheckedLeaves`]).
//!
//! The layout these rely on ([`WideNode`]): a node's used lanes come first; a lane is a
//! leaf lane naming its first entry and count ([`Child::Leaf`]), or an interior child,
//! which comes after its parent in the array — so one sweep from the back sees every child
//! before its parent.

use crate::bvh::build::MAX_WIDE_DEPTH;
use crate::bvh::collapse::collapse;
use crate::bvh::ray_node::{orders_are_permutations, ray_tree};
use crate::bvh::wide::{Child, WIDTH, WideNode};
use crate::{Aabb, BuildOptions};

/// What a tree's leaves hold, as far as its boxes go.
pub(crate) trait Leaves {
    /// The box of the entries a leaf lane names: its child word `first` and its `count`.
    fn leaf_box(&self, first: u32, count: u32) -> Aabb;
}

/// What a tree's leaves hold, as far as checking it goes.
pub(crate) trait CheckedLeaves: Leaves {
    /// Checks the leaf lane `lane` (node and lane) naming `first` and `count`: that its
    /// entries exist, that none was claimed by another leaf lane before (it claims them
    /// now), and whatever else the leaves promise. The reason when not.
    fn check_leaf(&mut self, lane: (usize, usize), first: u32, count: u32) -> Result<(), String>;
}

/// Checks the invariants every wide tree keeps, whatever its leaves hold: there is a root;
/// every node is reached once from it, no deeper than the walks' stacks allow; a node uses
/// two to eight lanes (the root one or more), packed first, its unused lanes empty, each
/// octant's order a permutation of its lanes (which the ray walk trusts); an interior child comes after its parent in the array and lies inside the
/// parent's lane box; a leaf lane holds 1 to `max_leaf` entries, its box is exactly their
/// box, and `leaves` accepts them ([`CheckedLeaves::check_leaf`]). The first broken one's
/// reason.
pub(crate) fn check_shape(
    nodes: &[WideNode],
    leaves: &mut impl CheckedLeaves,
    max_leaf: usize,
) -> Result<(), String> {
    if nodes.is_empty() {
        return Err("no root node".to_string());
    }
    let mut seen = vec![false; nodes.len()];
    seen[0] = true;
    let mut waiting = vec![(0usize, 0usize)];
    while let Some((i, depth)) = waiting.pop() {
        let node = &nodes[i];
        if depth >= MAX_WIDE_DEPTH {
            return Err(format!(
                "node {i} at depth {depth}, deeper than {MAX_WIDE_DEPTH}"
            ));
        }
        let used = node.lanes().count();
        if used == 0 || (used == 1 && i != 0) || node.lanes().any(|k| k >= used) {
            return Err(format!(
                "node {i} uses lanes {:?}: a node needs two or more (the root one), packed first",
                node.lanes().collect::<Vec<_>>()
            ));
        }
        for k in used..WIDTH {
            if node.lane_bounds(k) != Aabb::EMPTY || node.count(k) != 0 {
                return Err(format!("node {i} lane {k} is unused but not empty"));
            }
        }
        if !orders_are_permutations(node) {
            return Err(format!(
                "node {i}'s order words are not permutations of its lanes"
            ));
        }
        for k in 0..used {
            let bounds = node.lane_bounds(k);
            let (child, count) = match node.lane(k) {
                Child::Leaf { first, count } => (first, count),
                Child::Node(child) if node.count(k) == 0 => (child, 0),
                _ => return Err(format!("node {i} lane {k} is interior but counts entries")),
            };
            if count > 0 {
                if count as usize > max_leaf {
                    return Err(format!(
                        "leaf {i}.{k} holds {count} entries, more than {max_leaf}"
                    ));
                }
                leaves.check_leaf((i, k), child, count)?;
                let tight = leaves.leaf_box(child, count);
                if tight != bounds {
                    return Err(format!(
                        "leaf {i}.{k} box {bounds:?} is not its entries' box {tight:?}"
                    ));
                }
                continue;
            }
            let child = child as usize;
            // After their parent: refit sweeps the array backwards.
            if child <= i || child >= nodes.len() {
                return Err(format!(
                    "node {i} lane {k} points to node {child} of {}",
                    nodes.len()
                ));
            }
            if std::mem::replace(&mut seen[child], true) {
                return Err(format!("node {child} is reached twice"));
            }
            if !bounds.contains(&nodes[child].bounds()) {
                return Err(format!("node {child} sticks out of its parent {i}.{k}"));
            }
            waiting.push((child, depth + 1));
        }
    }
    match seen.iter().position(|s| !s) {
        Some(i) => Err(format!("node {i} is not reachable")),
        None => Ok(()),
    }
}

/// A wide tree over `boxes`, one entry per leaf lane: the nodes (root first) and the
/// entries' order (`order[k]` is the index into `boxes` of the `k`-th entry in leaf order; a
/// leaf lane names entry `first` of it). The binary tree's leaves hold at most
/// `options.max_leaf_size` entries, each its own lane.
pub(crate) fn build_over_boxes(
    boxes: &[Aabb],
    options: &BuildOptions,
) -> (Vec<WideNode>, Vec<u32>, usize) {
    let (binary, order) = crate::bvh::build::build(boxes, options, &|_| {});
    let collapsed = collapse(&binary, options.traversal_cost, options.intersection_cost);
    let entries_box = |first: u32, count: u32| {
        order[first as usize..(first + count) as usize]
            .iter()
            .fold(Aabb::EMPTY, |b, &i| b.union(&boxes[i as usize]))
    };
    let (nodes, depth) = ray_tree(collapsed, 1, &entries_box);
    (nodes, order, depth)
}

/// Recomputes node `i`'s lane boxes from its children (already up to date) and its leaves;
/// returns how much the node's [`lanes_cost`] changed.
pub(crate) fn refit_node(nodes: &mut [WideNode], i: usize, leaves: &impl Leaves) -> f64 {
    let before = lanes_cost(&nodes[i]);
    for k in 0..WIDTH {
        let bounds = match nodes[i].lane(k) {
            Child::Empty => continue,
            Child::Leaf { first, count } => leaves.leaf_box(first, count),
            Child::Node(child) => nodes[child as usize].bounds(),
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
                match node.lane(k) {
                    Child::Node(child) => parent[child as usize] = i as u32,
                    Child::Leaf { first, count } => {
                        holder[first as usize..(first + count) as usize].fill(i as u32)
                    }
                    Child::Empty => {}
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

    impl CheckedLeaves for Boxes {
        fn check_leaf(&mut self, _: (usize, usize), first: u32, count: u32) -> Result<(), String> {
            match (first as usize).checked_add(count as usize) {
                Some(end) if end <= self.0.len() => Ok(()),
                _ => Err(format!("entries {first}+{count} of {}", self.0.len())),
            }
        }
    }

    /// A tree over a row of 300 unit boxes, one per leaf, and its leaves' entries in leaf
    /// order.
    fn row() -> (Vec<WideNode>, Boxes) {
        let boxes: Vec<Aabb> = (0..300).map(|i| unit_box(2.0 * i as f32)).collect();
        let options = BuildOptions {
            max_leaf_size: 1,
            ..Default::default()
        };
        let (nodes, order, _) = build_over_boxes(&boxes, &options);
        (
            nodes,
            Boxes(order.iter().map(|&i| boxes[i as usize]).collect()),
        )
    }

    /// A built tree passes the shape check; each kind of damage fails it.
    #[test]
    fn the_shape_check_catches_broken_trees() {
        let (nodes, mut leaves) = row();
        check_shape(&nodes, &mut leaves, 1).unwrap();
        let interior = (0..WIDTH)
            .find(|&k| matches!(nodes[0].lane(k), Child::Node(_)))
            .unwrap();
        let leaf = (1..nodes.len())
            .flat_map(|i| (0..WIDTH).map(move |k| (i, k)))
            .find(|&(i, k)| nodes[i].count(k) > 0)
            .unwrap();
        type Damage = Box<dyn Fn(&mut Vec<WideNode>)>;
        let damage: [(&str, Damage); 7] = [
            ("a cycle", Box::new(move |n| n[0].child[interior] = 0)),
            (
                "a loose box",
                Box::new(move |n| n[leaf.0].max[0][leaf.1] += 1.0),
            ),
            (
                "a child sticking out",
                Box::new(move |n| n[0].max[0][interior] -= 1.0),
            ),
            (
                "a hole in the lanes",
                Box::new(|n| n[1].child[0] = crate::bvh::wide::NO_CHILD),
            ),
            (
                "entries out of range",
                Box::new(move |n| n[leaf.0].child[leaf.1] = crate::bvh::wide::LEAF | 1000),
            ),
            (
                "a leaf too big",
                Box::new(move |n| {
                    let bounds = n[leaf.0].lane_corners(leaf.1);
                    let first = n[leaf.0].target(leaf.1);
                    n[leaf.0].set_lane(
                        leaf.1,
                        [bounds.0, bounds.1],
                        Child::Leaf { first, count: 2 },
                    )
                }),
            ),
            (
                "orders that are not permutations",
                Box::new(|n| n[0].order[1] = n[0].order[0]),
            ),
        ];
        for (what, damage) in damage {
            let mut broken = nodes.clone();
            damage(&mut broken);
            assert!(
                check_shape(&broken, &mut leaves, 1).is_err(),
                "{what} passed"
            );
        }
    }

    /// A partial refit after moving some entries gives the boxes and cost of a full one, and
    /// a full refit of an unmoved tree changes nothing.
    #[test]
    fn partial_refit_equals_full_refit() {
        let (nodes, mut leaves) = row();
        assert!(
            nodes.len() > 10,
            "{} nodes: too small a tree to test",
            nodes.len()
        );
        let mut full = nodes.clone();
        refit_all(&mut full, &leaves);
        assert_eq!(full, nodes, "a refit of an unmoved tree changed it");
        let links = Links::new(&nodes, leaves.0.len());
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
