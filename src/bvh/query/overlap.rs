//! Which triangles of two meshes (or of one mesh) intersect: the two trees walked together,
//! pairs of children whose boxes overlap taken further, and the triangles of leaf pairs
//! tested exactly ([`crate::tri_tri`]). The second mesh may be placed by a transform: its
//! boxes and triangles are moved into the first's space in `f64` (boxes by their moved
//! corners, a little loose, so nothing is missed). On all cores: the walk's first levels
//! are split into tasks.

use crate::bvh::Bvh;
use crate::bvh::leaf::LANES;
use crate::bvh::wide::{Child, WideNode};
use crate::transform::moved_box;
use crate::tri_tri::triangles_meet;
use nalgebra::{Matrix4, Point3};
use smallvec::SmallVec;
use std::sync::atomic::{AtomicBool, Ordering};

/// A side of a pair in the walk: an interior node, or a leaf's packets (`first`, `count`
/// triangles), with its box (in the first mesh's space).
#[derive(Clone, Copy)]
enum Part {
    Node(u32),
    Leaf { first: u32, count: u32 },
}

#[derive(Clone, Copy)]
struct Side {
    part: Part,
    min: [f32; 3],
    max: [f32; 3],
}

/// Pairs of parts before which the walk splits into tasks: enough for every core.
const TASKS: usize = 256;

/// A node's children (a wide node has eight lanes), or a leaf itself.
type Children = SmallVec<[Side; 8]>;

/// A triangle of a leaf in `f64`, in the first mesh's space, with its number and box.
struct Placed {
    index: u32,
    corners: [Point3<f64>; 3],
    lo: [f64; 3],
    hi: [f64; 3],
}

/// What a walk compares: two trees, the second moved into the first's space or not, and
/// whether they are one mesh (then each pair once, `i < j`, and pairs whose triangles share
/// a corner skipped).
struct Walk<'a> {
    a: &'a Bvh,
    b: &'a Bvh,
    to_a: Option<&'a Matrix4<f64>>,
    same: bool,
    /// For a yes-or-no answer: raised at the first intersecting pair, which ends every
    /// task's walk.
    stop: Option<&'a AtomicBool>,
}

impl Walk<'_> {
    fn b_box(&self, min: [f32; 3], max: [f32; 3]) -> ([f32; 3], [f32; 3]) {
        match self.to_a {
            Some(m) => moved_box(m, min, max),
            None => (min, max),
        }
    }

    /// The children of a side: itself for a leaf, its used lanes for a node (boxes moved
    /// for the second tree).
    fn children(&self, side: &Side, of_b: bool) -> Children {
        let Part::Node(index) = side.part else {
            return smallvec::smallvec![*side];
        };
        let tree = if of_b { self.b } else { self.a };
        let node: &WideNode = &tree.nodes[index as usize];
        node.lanes()
            .filter_map(|k| {
                let part = match node.lane(k) {
                    Child::Empty => return None,
                    Child::Node(i) => Part::Node(i),
                    Child::Leaf { first, count } => Part::Leaf { first, count },
                };
                let (min, max) = node.lane_corners(k);
                let (min, max) = if of_b {
                    self.b_box(min, max)
                } else {
                    (min, max)
                };
                Some(Side { part, min, max })
            })
            .collect()
    }

    /// Splits the pair `(x, y)` one level (both sides' children, where they are nodes), the
    /// pairs whose boxes overlap into `out`.
    fn split(&self, x: &Side, y: &Side, out: &mut Vec<(Side, Side)>) {
        let xs = self.children(x, false);
        let ys = self.children(y, true);
        // One mesh against itself: a part's children against themselves give each pair
        // twice; keep one.
        let mirror = self.same && key(x) == key(y);
        for p in &xs {
            for q in &ys {
                if overlap(p, q) && !(mirror && key(p) > key(q)) {
                    out.push((*p, *q));
                }
            }
        }
    }

    /// Every intersecting pair under `(x, y)`, into `found`.
    fn pairs(&self, x: Side, y: Side, found: &mut Vec<(u32, u32)>) {
        let mut stack = vec![(x, y)];
        let mut next = Vec::new();
        while let Some((x, y)) = stack.pop() {
            if self.stop.is_some_and(|stop| stop.load(Ordering::Relaxed)) {
                return;
            }
            match (x.part, y.part) {
                (Part::Leaf { .. }, Part::Leaf { .. }) => self.leaves(&x, &y, found),
                _ => {
                    next.clear();
                    self.split(&x, &y, &mut next);
                    stack.extend_from_slice(&next);
                }
            }
        }
    }

    /// The triangles of two leaves, tested pair by pair.
    fn leaves(&self, x: &Side, y: &Side, found: &mut Vec<(u32, u32)>) {
        let (
            Part::Leaf {
                first: fa,
                count: na,
            },
            Part::Leaf {
                first: fb,
                count: nb,
            },
        ) = (x.part, y.part)
        else {
            return;
        };
        let a_slots = fa as usize * LANES..fa as usize * LANES + na as usize;
        let b_slots = fb as usize * LANES..fb as usize * LANES + nb as usize;
        let placed = |tree: &Bvh, slot: usize, to_a: Option<&Matrix4<f64>>| {
            let tri = tree.leaf_packets[slot / LANES].get(slot % LANES);
            let corners = [tri.a, tri.b, tri.c].map(|q| {
                let p = Point3::from(q).cast::<f64>();
                to_a.map_or(p, |m| moved_point(m, &p))
            });
            let (lo, hi) = corner_box(&corners);
            Placed {
                index: tree.triangle_index[slot],
                corners,
                lo,
                hi,
            }
        };
        let b_triangles: SmallVec<[Placed; 8]> = b_slots
            .map(|slot| placed(self.b, slot, self.to_a))
            .collect();
        for slot in a_slots {
            let mine = placed(self.a, slot, None);
            // A triangle apart from the other leaf's box meets none of its triangles: one
            // test instead of one per triangle there.
            if (0..3).any(|k| mine.lo[k] > f64::from(y.max[k]) || f64::from(y.min[k]) > mine.hi[k])
            {
                continue;
            }
            let i = mine.index;
            for other in &b_triangles {
                if (0..3).any(|k| mine.lo[k] > other.hi[k] || other.lo[k] > mine.hi[k]) {
                    continue;
                }
                let j = other.index;
                if self.same
                    && (i == j
                        || (fa == fb && i > j)
                        || share_corner(&mine.corners, &other.corners))
                {
                    continue;
                }
                if triangles_meet(&mine.corners, &other.corners) {
                    found.push(if self.same {
                        (i.min(j), i.max(j))
                    } else {
                        (i, j)
                    });
                    if let Some(stop) = self.stop {
                        stop.store(true, Ordering::Relaxed);
                        return;
                    }
                }
            }
        }
    }
}

/// `p` moved by the affine `m` (its last row `0 0 0 1`, as `transform::affine` checked):
/// the 3×4 product alone, where nalgebra's `transform_point` also computes and divides by
/// the homogeneous coordinate (a tenth of the walk's time on Sponza).
fn moved_point(m: &Matrix4<f64>, p: &Point3<f64>) -> Point3<f64> {
    let row = |r: usize| m[(r, 0)] * p.x + m[(r, 1)] * p.y + m[(r, 2)] * p.z + m[(r, 3)];
    Point3::new(row(0), row(1), row(2))
}

/// A triangle's box in `f64`.
fn corner_box(c: &[Point3<f64>; 3]) -> ([f64; 3], [f64; 3]) {
    let lo = [0, 1, 2].map(|k| c[0][k].min(c[1][k]).min(c[2][k]));
    let hi = [0, 1, 2].map(|k| c[0][k].max(c[1][k]).max(c[2][k]));
    (lo, hi)
}

/// Whether two triangles share a corner (bit for bit): neighbours of one mesh, which touch
/// there by construction.
fn share_corner(a: &[Point3<f64>; 3], b: &[Point3<f64>; 3]) -> bool {
    a.iter().any(|p| b.contains(p))
}

/// Whether two sides' boxes overlap (touching counts).
fn overlap(p: &Side, q: &Side) -> bool {
    (0..3).all(|k| p.min[k] <= q.max[k] && q.min[k] <= p.max[k])
}

/// A part's identity in its tree (one mesh against itself: the same part on both sides).
fn key(s: &Side) -> (u8, u32) {
    match s.part {
        Part::Node(i) => (0, i),
        Part::Leaf { first, .. } => (1, first),
    }
}

impl Bvh {
    /// Every pair `(i, j)` of a triangle `i` of this mesh and a triangle `j` of `other`
    /// (moved into this mesh's space by `to_self`) that share a point; for one mesh against
    /// itself (`other` this, `to_self` `None`, `same`), each pair once with `i < j`, pairs
    /// sharing a corner left out. Sorted. With `first`, the walk stops at the first pair it
    /// finds (on each core): some pairs, none only when none meet.
    pub(crate) fn meeting_pairs(
        &self,
        other: &Bvh,
        to_self: Option<&Matrix4<f64>>,
        same: bool,
        first: bool,
    ) -> Vec<(u32, u32)> {
        if self.nodes.is_empty() || other.nodes.is_empty() {
            return Vec::new();
        }
        let stop = AtomicBool::new(false);
        let walk = Walk {
            a: self,
            b: other,
            to_a: to_self,
            same,
            stop: first.then_some(&stop),
        };
        let root = |tree: &Bvh, of_b: bool| {
            let b = tree.nodes[0].bounds();
            let (min, max) = (b.min.into(), b.max.into());
            let (min, max) = if of_b {
                walk.b_box(min, max)
            } else {
                (min, max)
            };
            Side {
                part: Part::Node(0),
                min,
                max,
            }
        };
        let (x, y) = (root(self, false), root(other, true));
        if !overlap(&x, &y) {
            return Vec::new();
        }
        // Split the first levels into tasks, then walk each on its own.
        let mut tasks = vec![(x, y)];
        let mut leaves = Vec::new();
        while !tasks.is_empty() && tasks.len() < TASKS {
            let mut next = Vec::new();
            for (x, y) in &tasks {
                if matches!((x.part, y.part), (Part::Leaf { .. }, Part::Leaf { .. })) {
                    leaves.push((*x, *y));
                } else {
                    walk.split(x, y, &mut next);
                }
            }
            tasks = next;
        }
        tasks.extend(leaves);
        let per_task = crate::bvh::par::map_indexed(tasks.len(), |t| {
            let mut found = Vec::new();
            walk.pairs(tasks[t].0, tasks[t].1, &mut found);
            found
        });
        let mut found: Vec<(u32, u32)> = per_task.into_iter().flatten().collect();
        found.sort_unstable();
        found.dedup();
        found
    }
}
