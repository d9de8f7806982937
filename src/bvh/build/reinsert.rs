//! The high-quality builder's second step ([`BuildQuality::High`](crate::bvh::BuildQuality::High)):
//! the SAH tree improved by reinsertion (Bittner, Hapala and Havran 2013, "Fast
//! insertion-based optimization of bounding volume hierarchies"; Meister and Bittner 2018).
//!
//! A binned top-down build decides each split knowing only its own node, so some subtrees
//! end up under parents whose boxes they swell. Reinsertion takes a subtree out (its sibling
//! moves up into their parent's place) and puts it back where the SAH cost grows least: as
//! the sibling of the node `x` minimising `A(x ∪ n) + Σ (A(y ∪ n) − A(y))` over `x`'s
//! ancestors `y`, found by branch and bound from the root. Its old place is one of the
//! candidates, so no move makes the tree worse. Each pass moves the nodes whose boxes are
//! largest relative to their children's (where a bad grouping shows), and passes repeat
//! while they still lower the summed area of the interior nodes, the part of the SAH cost
//! reinsertion can change (the leaves stay as they are).

use crate::Aabb;
use crate::bvh::Node;
use crate::bvh::build::MAX_DEPTH;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

const NONE: u32 = u32::MAX;

/// Passes at most; each reinserts a share of the nodes.
const MAX_PASSES: usize = 8;
/// The share of the nodes a pass reinserts.
const PASS_SHARE: f64 = 0.05;
/// A pass that lowers the interior area by less than this (relative) is the last.
const MIN_GAIN: f64 = 0.001;

/// A binary tree with explicit links, so subtrees can move.
struct Tree {
    parent: Vec<u32>,
    /// Children; `NONE` for a leaf.
    left: Vec<u32>,
    right: Vec<u32>,
    bounds: Vec<Aabb>,
    /// A leaf's first slot and count (`count == 0` for an interior node).
    first: Vec<u32>,
    count: Vec<u32>,
    root: u32,
}

fn area(b: &Aabb) -> f64 {
    f64::from(b.half_area())
}

/// A candidate of the search: the induced cost above it, and the node.
#[derive(PartialEq)]
struct Candidate(f64, u32);

impl Eq for Candidate {}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Candidate {
    /// Smallest induced cost first (a max-heap of reversed costs).
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.total_cmp(&self.0).then(other.1.cmp(&self.1))
    }
}

impl Tree {
    fn new(binary: &[Node]) -> Tree {
        let n = binary.len();
        let mut tree = Tree {
            parent: vec![NONE; n],
            left: vec![NONE; n],
            right: vec![NONE; n],
            bounds: binary.iter().map(Node::bounds).collect(),
            first: binary.iter().map(|node| node.first).collect(),
            count: binary.iter().map(|node| node.count).collect(),
            root: 0,
        };
        for (i, node) in binary.iter().enumerate() {
            if !node.is_leaf() {
                let (l, r) = (node.first, node.first + 1);
                tree.left[i] = l;
                tree.right[i] = r;
                tree.parent[l as usize] = i as u32;
                tree.parent[r as usize] = i as u32;
            }
        }
        tree
    }

    fn is_leaf(&self, i: u32) -> bool {
        self.left[i as usize] == NONE
    }

    /// Replaces `old` by `new` among `parent`'s children (or as the root).
    fn relink(&mut self, parent: u32, old: u32, new: u32) {
        self.parent[new as usize] = parent;
        if parent == NONE {
            self.root = new;
        } else if self.left[parent as usize] == old {
            self.left[parent as usize] = new;
        } else {
            self.right[parent as usize] = new;
        }
    }

    /// Recomputes the boxes from `i` up to the root.
    fn refit(&mut self, mut i: u32) {
        while i != NONE {
            let (l, r) = (self.left[i as usize], self.right[i as usize]);
            self.bounds[i as usize] = self.bounds[l as usize].union(&self.bounds[r as usize]);
            i = self.parent[i as usize];
        }
    }

    /// Takes `n` (not the root) out: its sibling takes their parent's place. Returns the
    /// freed parent.
    fn remove(&mut self, n: u32) -> u32 {
        let p = self.parent[n as usize];
        let sibling = if self.left[p as usize] == n {
            self.right[p as usize]
        } else {
            self.left[p as usize]
        };
        let grandparent = self.parent[p as usize];
        self.relink(grandparent, p, sibling);
        self.refit(grandparent);
        p
    }

    /// Puts `n` back as the sibling of `x`, under the free node `p`.
    fn insert(&mut self, n: u32, x: u32, p: u32) {
        let above = self.parent[x as usize];
        self.relink(above, x, p);
        self.left[p as usize] = x;
        self.right[p as usize] = n;
        self.parent[x as usize] = p;
        self.parent[n as usize] = p;
        self.refit(p);
    }

    /// The node whose sibling `n` (detached) should become: branch and bound over the
    /// induced cost (see the module's documentation).
    fn best_sibling(&self, n: u32, heap: &mut BinaryHeap<Candidate>) -> u32 {
        let bounds = &self.bounds[n as usize];
        let own = area(bounds);
        let mut best = (f64::INFINITY, self.root);
        heap.clear();
        heap.push(Candidate(0.0, self.root));
        while let Some(Candidate(induced, x)) = heap.pop() {
            if induced + own >= best.0 {
                break;
            }
            let joined = area(&self.bounds[x as usize].union(bounds));
            let total = induced + joined;
            if total < best.0 {
                best = (total, x);
            }
            if !self.is_leaf(x) {
                let below = total - area(&self.bounds[x as usize]);
                if below + own < best.0 {
                    heap.push(Candidate(below, self.left[x as usize]));
                    heap.push(Candidate(below, self.right[x as usize]));
                }
            }
        }
        best.1
    }

    /// The summed area of the interior nodes.
    fn interior_area(&self) -> f64 {
        (0..self.bounds.len() as u32)
            .filter(|&i| !self.is_leaf(i))
            .map(|i| area(&self.bounds[i as usize]))
            .sum()
    }

    /// The nodes worth moving first: largest box relative to its children's (leaves by
    /// their own area), the root and its children excluded.
    fn candidates(&self, share: f64) -> Vec<u32> {
        let mut ranked: Vec<(f64, u32)> = (0..self.bounds.len() as u32)
            .filter(|&i| {
                let p = self.parent[i as usize];
                p != NONE && self.parent[p as usize] != NONE
            })
            .map(|i| {
                let a = area(&self.bounds[i as usize]);
                let score = if self.is_leaf(i) {
                    a
                } else {
                    let (l, r) = (self.left[i as usize], self.right[i as usize]);
                    let children = area(&self.bounds[l as usize]) + area(&self.bounds[r as usize]);
                    a * a / children.max(f64::MIN_POSITIVE)
                };
                (score, i)
            })
            .collect();
        let k = ((ranked.len() as f64 * share).ceil() as usize).min(ranked.len());
        if k == 0 {
            return Vec::new();
        }
        ranked.select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        ranked.truncate(k);
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        ranked.into_iter().map(|(_, i)| i).collect()
    }

    /// The tree as a node array (root first, children side by side after their parent), and
    /// its depth.
    fn to_nodes(&self) -> (Vec<Node>, usize) {
        let mut nodes = vec![Node::EMPTY];
        let mut depth = 0;
        // (tree node, array slot, depth)
        let mut stack = vec![(self.root, 0usize, 0usize)];
        while let Some((i, slot, d)) = stack.pop() {
            depth = depth.max(d);
            let b = &self.bounds[i as usize];
            if self.is_leaf(i) {
                nodes[slot] = Node::leaf(b, self.first[i as usize], self.count[i as usize]);
            } else {
                let left = nodes.len();
                nodes.push(Node::EMPTY);
                nodes.push(Node::EMPTY);
                nodes[slot] = Node::interior(b, left as u32);
                stack.push((self.right[i as usize], left + 1, d + 1));
                stack.push((self.left[i as usize], left, d + 1));
            }
        }
        (nodes, depth)
    }
}

/// `binary` improved by reinsertion; the same leaves. Returns `binary` itself when the moves
/// would make the tree deeper than the walks' stacks allow (see [`MAX_DEPTH`]).
pub(crate) fn optimize(mut binary: Vec<Node>) -> Vec<Node> {
    if binary.len() < 5 {
        return binary;
    }
    let mut tree = Tree::new(&binary);
    let mut heap = BinaryHeap::new();
    let mut area = tree.interior_area();
    for _ in 0..MAX_PASSES {
        for n in tree.candidates(PASS_SHARE) {
            // Earlier moves may have brought it next to the root.
            let p = tree.parent[n as usize];
            if p == NONE || tree.parent[p as usize] == NONE {
                continue;
            }
            let free = tree.remove(n);
            let x = tree.best_sibling(n, &mut heap);
            tree.insert(n, x, free);
        }
        let now = tree.interior_area();
        let gain = (area - now) / area;
        area = now;
        if !(gain >= MIN_GAIN) {
            break;
        }
    }
    let (nodes, depth) = tree.to_nodes();
    if depth < MAX_DEPTH {
        // Into the builder's own array (the same number of nodes), which stays where it was:
        // the builder placed it so that, freed, it joins the hole its items left (see
        // `build_triangles`).
        binary.clear();
        binary.extend_from_slice(&nodes);
    }
    binary
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Rng;
    use nalgebra::Point3;

    /// A deliberately bad tree (leaves paired in random order) over random small boxes: the
    /// optimiser lowers its interior area (a pass moves only the worst few of the nodes),
    /// keeps every leaf once, and the array is a valid layout
    /// (children after their parent, side by side, boxes their children's).
    #[test]
    fn reinsertion_improves_a_bad_tree_and_keeps_its_leaves() {
        let mut rng = Rng::new(5);
        let leaves: Vec<Node> = (0..500)
            .map(|i| {
                let p = Point3::new(
                    rng.range(0.0, 100.0),
                    rng.range(0.0, 100.0),
                    rng.range(0.0, 100.0),
                );
                Node::leaf(&Aabb::new(p, p + nalgebra::Vector3::repeat(1.0)), i * 4, 4)
            })
            .collect();
        // A balanced tree over the leaves in their (random) order.
        let mut nodes = vec![Node::EMPTY];
        let mut stack = vec![(0usize, 0usize, leaves.len())];
        while let Some((slot, lo, hi)) = stack.pop() {
            if hi - lo == 1 {
                nodes[slot] = leaves[lo];
                continue;
            }
            let left = nodes.len();
            nodes.push(Node::EMPTY);
            nodes.push(Node::EMPTY);
            let b = leaves[lo..hi]
                .iter()
                .fold(Aabb::EMPTY, |b, l| b.union(&l.bounds()));
            nodes[slot] = Node::interior(&b, left as u32);
            let mid = (lo + hi) / 2;
            stack.push((left, lo, mid));
            stack.push((left + 1, mid, hi));
        }
        let before = Tree::new(&nodes).interior_area();
        let better = optimize(nodes);
        let tree = Tree::new(&better);
        assert!(
            tree.interior_area() < 0.95 * before,
            "{} vs {before}",
            tree.interior_area()
        );
        let mut firsts: Vec<u32> = better
            .iter()
            .filter(|n| n.is_leaf())
            .map(|n| n.first)
            .collect();
        firsts.sort_unstable();
        assert_eq!(firsts, (0..500).map(|i| i * 4).collect::<Vec<_>>());
        for (i, node) in better.iter().enumerate() {
            if !node.is_leaf() {
                let (l, r) = (node.first as usize, node.first as usize + 1);
                assert!(l > i && r < better.len());
                let b = better[l].bounds().union(&better[r].bounds());
                assert_eq!(b, node.bounds(), "node {i}'s box is its children's");
            }
        }
    }
}
