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

/// What a walk compares: two trees, the second moved into the first's space or not, and
/// whether they are one mesh (then each pair once, `i < j`, and pairs whose triangles share
/// a corner skipped).
struct Walk<'a> {
    a: &'a Bvh,
    b: &'a Bvh,
    to_a: Option<&'a Matrix4<f64>>,
    same: bool,
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
    fn children(&self, side: &Side, of_b: bool) -> Vec<Side> {
        let Part::Node(index) = side.part else {
            return vec![*side];
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
        let b_triangles: Vec<(u32, [Point3<f64>; 3])> = b_slots
            .map(|slot| {
                let tri = self.b.leaf_packets[slot / LANES].get(slot % LANES);
                let corners = [tri.a, tri.b, tri.c].map(|q| {
                    let p = Point3::from(q).cast::<f64>();
                    self.to_a.map_or(p, |m| m.transform_point(&p))
                });
                (self.b.triangle_index[slot], corners)
            })
            .collect();
        for slot in a_slots {
            let tri = self.a.leaf_packets[slot / LANES].get(slot % LANES);
            let corners = [tri.a, tri.b, tri.c].map(|q| Point3::from(q).cast::<f64>());
            let i = self.a.triangle_index[slot];
            let (lo, hi) = corner_box(&corners);
            for &(j, ref other) in &b_triangles {
                if self.same && (i == j || (fa == fb && i > j) || share_corner(&corners, other)) {
                    continue;
                }
                let (olo, ohi) = corner_box(other);
                if (0..3).any(|k| lo[k] > ohi[k] || olo[k] > hi[k]) {
                    continue;
                }
                if triangles_meet(&corners, other) {
                    found.push(if self.same {
                        (i.min(j), i.max(j))
                    } else {
                        (i, j)
                    });
                }
            }
        }
    }
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
    /// sharing a corner left out. Sorted.
    pub(crate) fn meeting_pairs(
        &self,
        other: &Bvh,
        to_self: Option<&Matrix4<f64>>,
        same: bool,
    ) -> Vec<(u32, u32)> {
        if self.nodes.is_empty() || other.nodes.is_empty() {
            return Vec::new();
        }
        let walk = Walk {
            a: self,
            b: other,
            to_a: to_self,
            same,
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

impl Bvh {
    /// Every pair `(i, j)` of a triangle `i` of this mesh and a triangle `j` of `other`
    /// placed by `transform` (into this mesh's space; any affine map: nalgebra's `Matrix4`,
    /// glam's `Mat4`...) that intersect, sorted: for CSG, collision checks, "where do these
    /// two parts clash". The two trees are walked together, on all cores, and each pair of
    /// triangles whose boxes overlap is decided exactly (orientation signs in exact
    /// arithmetic): triangles are closed, so touching at a point or along an edge counts,
    /// coplanar ones count where they overlap or touch, and a triangle of zero area meets
    /// nothing. `other`'s corners are moved in `f64`, and the answer is exact for the moved
    /// corners (for the identity, for the corners as given).
    ///
    /// ```
    /// use meshray::{Bvh, Mesh};
    /// use nalgebra::{Matrix4, Vector3};
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// // The scene against itself raised by 1.5: the raised ground cuts the sphere, the box
    /// // and the cone; the raised torus and box meet the sphere...
    /// let raised = Matrix4::new_translation(&Vector3::new(0.0, 1.5, 0.0));
    /// let pairs = bvh.intersecting_triangles(&bvh, raised)?;
    /// assert!(!pairs.is_empty());
    /// let object = |i: u32| bvh.mesh().objects()[bvh.mesh().attributes(i as usize).object as usize].as_str();
    /// assert!(pairs.iter().any(|&(i, j)| object(i) == "sphere" && object(j) == "ground"));
    /// // Far apart: none.
    /// let away = Matrix4::new_translation(&Vector3::new(100.0, 0.0, 0.0));
    /// assert!(bvh.intersecting_triangles(&bvh, away)?.is_empty());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidTransform`](crate::Error::InvalidTransform) for a transform that is
    /// not finite, not affine or singular.
    pub fn intersecting_triangles(
        &self,
        other: &Bvh,
        transform: impl Into<mint::ColumnMatrix4<f32>>,
    ) -> crate::Result<Vec<(u32, u32)>> {
        let m = Matrix4::from(transform.into());
        let (to_self, _) = crate::transform::affine(&m)?;
        let moved = (to_self != Matrix4::identity()).then_some(&to_self);
        Ok(self.meeting_pairs(other, moved, false))
    }

    /// Where the mesh intersects itself: every pair `(i, j)`, `i < j`, of its triangles that
    /// share a point, sorted, as [`intersecting_triangles`](Bvh::intersecting_triangles)
    /// decides it, but for neighbours: two triangles with a corner at the same position (bit
    /// for bit; shared vertices, seams) are left out, since they touch there by
    /// construction, even where they fold onto each other elsewhere. A closed, clean mesh has
    /// none; a scan's folds, a game model's overlapping parts, a CAD export's slivers show.
    ///
    /// ```
    /// use meshray::{Bvh, Mesh};
    /// use nalgebra::Point3;
    ///
    /// // Two squares of two triangles each, crossing at right angles.
    /// let p = [
    ///     [0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [2.0, 2.0, 0.0], [0.0, 2.0, 0.0],
    ///     [1.0, 1.0, -1.0], [1.0, 1.0, 1.0], [1.0, 3.0, 1.0], [1.0, 3.0, -1.0],
    /// ].map(Point3::from);
    /// let bvh = Bvh::build(Mesh::from_buffers(p.to_vec(), vec![[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]])?);
    /// let pairs = bvh.self_intersections();
    /// assert!(pairs.iter().all(|&(i, j)| i < 2 && j >= 2)); // only across the squares
    /// assert!(!pairs.is_empty());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn self_intersections(&self) -> Vec<(u32, u32)> {
        self.meeting_pairs(self, None, true)
    }
}
