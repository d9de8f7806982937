//! A mesh's boundary: the edges no other triangle cancels, and the winding number's gradient
//! they give.
//!
//! The solid angle a surface subtends changes with the viewpoint only through its rim:
//! `∇Ω(x) = ∮ dl × (x − l) / |x − l|³` over the boundary (the Biot–Savart law; the edges two
//! triangles share, run in opposite directions, cancel), so a closed mesh's winding number
//! is piecewise constant. [`Boundary::gradient`] sums that field with a tree of the edges, as
//! Barnes and Hut sum a far cluster of charges: a far group of edges by its net "current"
//! `T = Σ (b − a)`, which is small for the pieces of closed loops, with a rigorous remainder.

use nalgebra::{Point3, Vector3};
use smallvec::SmallVec;
use std::f64::consts::PI;

/// A boundary edge from `a` to `b`, left unpaired `net` times in that direction (negative:
/// the other way).
#[derive(Clone, Debug)]
struct Edge {
    a: Vector3<f64>,
    b: Vector3<f64>,
    net: i32,
}

/// A group of edges: the ball around their ends, their total length (each counted
/// `|net|` times) and their net current; a leaf's edges at `first..first + count`, an
/// inner node's two children.
#[derive(Clone, Debug)]
struct Group {
    centre: Vector3<f64>,
    radius: f64,
    length: f64,
    current: Vector3<f64>,
    first: u32,
    count: u32,
    children: [u32; 2],
}

/// Edges per leaf.
const LEAF: usize = 4;

/// The boundary edges of a mesh in a tree.
#[derive(Clone, Debug)]
pub(crate) struct Boundary {
    edges: Vec<Edge>,
    groups: Vec<Group>,
}

impl Boundary {
    /// The boundary of the triangles `triangles` over `positions`: every edge between two
    /// positions whose uses in one direction and the other do not cancel. Vertices at the
    /// same position count as one (seams of split normals or uvs cancel too).
    pub fn of_mesh(positions: &[Point3<f32>], triangles: &[[u32; 3]]) -> Boundary {
        let key = |v: u32| positions[v as usize].coords.map(f32::to_bits);
        let mut by_position: Vec<u32> = (0..positions.len() as u32).collect();
        by_position.sort_unstable_by_key(|&v| {
            let k = key(v);
            (k.x, k.y, k.z)
        });
        let mut canonical = vec![0u32; positions.len()];
        let mut run = 0;
        for (i, &v) in by_position.iter().enumerate() {
            if i == 0 || key(v) != key(by_position[i - 1]) {
                run = v;
            }
            canonical[v as usize] = run;
        }
        let mut directed: Vec<(u64, i32)> = Vec::with_capacity(3 * triangles.len());
        for t in triangles {
            let t = t.map(|v| canonical[v as usize]);
            for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
                if a != b {
                    let (lo, hi, sign) = if a < b { (a, b, 1) } else { (b, a, -1) };
                    directed.push(((u64::from(lo) << 32) | u64::from(hi), sign));
                }
            }
        }
        directed.sort_unstable_by_key(|e| e.0);
        let at = |v: u32| positions[v as usize].coords.cast::<f64>();
        let mut edges: Vec<Edge> = directed
            .chunk_by(|x, y| x.0 == y.0)
            .filter_map(|run| {
                let net: i32 = run.iter().map(|e| e.1).sum();
                let (lo, hi) = ((run[0].0 >> 32) as u32, run[0].0 as u32);
                (net != 0).then(|| Edge {
                    a: at(lo),
                    b: at(hi),
                    net,
                })
            })
            .collect();
        let mut groups = Vec::new();
        if !edges.is_empty() {
            let n = edges.len();
            group(&mut edges, 0, n, &mut groups);
        }
        Boundary { edges, groups }
    }
}

/// The winding number's gradient at a point from the boundary, estimated, with what bounds
/// its use over a segment around the point (see [`Boundary::gradient`]).
pub(crate) struct Gradient {
    /// `∇w` at the point, from the edges near it exactly and far groups by their current.
    pub value: Vector3<f64>,
    /// A bound on `|value − ∇w|` at the point.
    pub error: f64,
    /// A bound on the derivatives of `∇w` (the norm of `∇∇w`, how fast the gradient turns)
    /// within the given distance of the point.
    pub change: f64,
}

impl Boundary {
    /// `∇w` at `x` (the Biot–Savart field of the boundary over 4π), for use along a segment
    /// within `half` of `x`: each edge near `x` exactly (the closed form for a straight
    /// segment), each group far from it (beyond twice its radius) as its current `T` at its
    /// centre, with the remainder `2 r L / gap³` as the error; and the bound on the field's
    /// derivatives within `half` of `x`, `Σ 2 L / gap³` (the kernel's, `2/|y|³`, over what is
    /// left of the gap). `None` when an edge comes within `half` of `x`.
    pub fn gradient(&self, x: Vector3<f64>, half: f64) -> Option<Gradient> {
        let mut out = Gradient {
            value: Vector3::zeros(),
            error: 0.0,
            change: 0.0,
        };
        if self.groups.is_empty() {
            return Some(out);
        }
        // The tree is balanced (halved at the median): a stack of 64 never spills.
        let mut stack = SmallVec::<[u32; 64]>::new();
        stack.push(0);
        while let Some(k) = stack.pop() {
            let group = &self.groups[k as usize];
            let d = (x - group.centre).norm();
            let gap = d - group.radius;
            if group.count == 0 && gap > 2.0 * group.radius && gap > half {
                let y = group.centre - x;
                out.value += y.cross(&group.current) / (d * d * d);
                out.error += 2.0 * group.radius * group.length / (gap * gap * gap);
                out.change += 2.0 * group.length / (gap - half).powi(3);
            } else if group.count > 0 {
                let first = group.first as usize;
                for edge in &self.edges[first..first + group.count as usize] {
                    let far = segment_distance(x, edge.a, edge.b) - half;
                    if far <= 0.0 {
                        return None;
                    }
                    let length = (edge.b - edge.a).norm();
                    out.value += segment_field(x, edge.a, edge.b) * f64::from(edge.net);
                    out.change += 2.0 * f64::from(edge.net.unsigned_abs()) * length / far.powi(3);
                }
            } else {
                stack.extend(group.children);
            }
        }
        let scale = 1.0 / (4.0 * PI);
        out.value *= scale;
        // Rounded up: bounds must stay bounds.
        out.error *= scale * (1.0 + 1e-9);
        out.change *= scale * (1.0 + 1e-9);
        Some(out)
    }
}

/// `∫ (l − x) × dl / |l − x|³` along the straight segment from `a` to `b`: with `r0 = a − x`,
/// `r1 = b − x`, `e = b − a` and `n = r0 × e`, it is `n (r1·e/|r1| − r0·e/|r0|) / |n|²` (0 on
/// the segment's line).
fn segment_field(x: Vector3<f64>, a: Vector3<f64>, b: Vector3<f64>) -> Vector3<f64> {
    let (r0, r1, e) = (a - x, b - x, b - a);
    let n = r0.cross(&e);
    let n2 = n.norm_squared();
    if n2 == 0.0 {
        return Vector3::zeros();
    }
    n * ((r1.dot(&e) / r1.norm() - r0.dot(&e) / r0.norm()) / n2)
}

/// Builds the group over `edges[first..end]` (reordering them) and its subtree; returns its
/// index.
fn group(edges: &mut [Edge], first: usize, end: usize, groups: &mut Vec<Group>) -> u32 {
    let part = &edges[first..end];
    let (mut lo, mut hi) = (
        Vector3::repeat(f64::INFINITY),
        Vector3::repeat(f64::NEG_INFINITY),
    );
    for e in part {
        lo = lo.inf(&e.a).inf(&e.b);
        hi = hi.sup(&e.a).sup(&e.b);
    }
    let centre = (lo + hi) * 0.5;
    let radius = part
        .iter()
        .map(|e| (e.a - centre).norm().max((e.b - centre).norm()))
        .fold(0.0, f64::max);
    let length = part
        .iter()
        .map(|e| f64::from(e.net.unsigned_abs()) * (e.b - e.a).norm())
        .sum();
    let current = part
        .iter()
        .fold(Vector3::zeros(), |t, e| t + (e.b - e.a) * f64::from(e.net));
    let index = groups.len() as u32;
    groups.push(Group {
        centre,
        radius,
        length,
        current,
        first: first as u32,
        count: 0,
        children: [0; 2],
    });
    if end - first <= LEAF {
        groups[index as usize].count = (end - first) as u32;
        return index;
    }
    // Halve along the longest side by the edges' midpoints.
    let axis = (hi - lo).imax();
    let middle = (first + end) / 2;
    let mid = |e: &Edge| e.a[axis] + e.b[axis];
    edges[first..end].select_nth_unstable_by(middle - first, |x, y| mid(x).total_cmp(&mid(y)));
    let left = group(edges, first, middle, groups);
    let right = group(edges, middle, end, groups);
    groups[index as usize].children = [left, right];
    index
}

/// The distance from `p` to the segment `a b`.
fn segment_distance(p: Vector3<f64>, a: Vector3<f64>, b: Vector3<f64>) -> f64 {
    let ab = b - a;
    let length2 = ab.norm_squared();
    let t = if length2 > 0.0 {
        ((p - a).dot(&ab) / length2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (a + ab * t - p).norm()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::splitmix::SplitMix64;
    use crate::winding::solid_angle;

    fn winding(triangles: &[[Point3<f32>; 3]], x: Vector3<f64>) -> f64 {
        triangles
            .iter()
            .map(|t| solid_angle(x.into(), t[0].into(), t[1].into(), t[2].into()))
            .sum::<f64>()
            / (4.0 * PI)
    }

    #[test]
    fn a_closed_mesh_has_no_boundary_and_seams_cancel() {
        let p = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
        ]
        .map(|c| Point3::new(c[0], c[1], c[2]));
        let closed = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]];
        let b = Boundary::of_mesh(&p, &closed);
        assert_eq!(b.edges.len(), 0);
        let g = b.gradient(Vector3::new(0.2, 0.2, 0.2), 0.01).unwrap();
        assert_eq!((g.value, g.error, g.change), (Vector3::zeros(), 0.0, 0.0));
        // The same tetrahedron with its last face on copies of its corners (a uv seam).
        let mut seamed = p.to_vec();
        seamed.extend_from_slice(&p[1..]);
        let b = Boundary::of_mesh(&seamed, &[[0, 2, 1], [0, 1, 3], [0, 3, 2], [4, 5, 6]]);
        assert_eq!(b.edges.len(), 0);
        // Without its last face: the three edges of the hole.
        assert_eq!(Boundary::of_mesh(&p, &closed[..3]).edges.len(), 3);
    }

    #[test]
    fn the_gradient_estimate_is_the_winding_numbers_within_its_error() {
        let mut rng = SplitMix64(5);
        let n = 10;
        let mut positions = Vec::new();
        for j in 0..=n {
            for i in 0..=n {
                let h = 0.4 * rng.unit_f64() as f32;
                positions.push(Point3::new(i as f32, h, j as f32));
            }
        }
        let v = |i: usize, j: usize| (j * (n + 1) + i) as u32;
        let mut index = Vec::new();
        for j in 0..n {
            for i in 0..n {
                index.push([v(i, j), v(i + 1, j), v(i + 1, j + 1)]);
                index.push([v(i, j), v(i + 1, j + 1), v(i, j + 1)]);
            }
        }
        let triangles: Vec<[Point3<f32>; 3]> = index
            .iter()
            .map(|t| t.map(|k| positions[k as usize]))
            .collect();
        let boundary = Boundary::of_mesh(&positions, &index);
        let h = 1e-5;
        let mut checked = 0;
        for _ in 0..300 {
            let x = Vector3::new(
                rng.unit_f64() * 30.0 - 10.0,
                rng.unit_f64() * 16.0 - 8.0,
                rng.unit_f64() * 30.0 - 10.0,
            );
            // The estimate at x, used within half a unit of it: at a point y that near.
            let half = 0.5;
            let Some(estimate) = boundary.gradient(x, half) else {
                continue;
            };
            let offset = Vector3::new(
                rng.unit_f64() - 0.5,
                rng.unit_f64() - 0.5,
                rng.unit_f64() - 0.5,
            );
            let y = x + offset.normalize() * half * rng.unit_f64();
            let fd = Vector3::from_fn(|a, _| {
                let mut e = Vector3::zeros();
                e[a] = h;
                (winding(&triangles, y + e) - winding(&triangles, y - e)) / (2.0 * h)
            });
            if (winding(&triangles, y + Vector3::repeat(h)) - winding(&triangles, y)).abs() > 0.5 {
                continue; // on the surface's sheet
            }
            let moved = (y - x).norm();
            assert!(
                (estimate.value - fd).norm()
                    <= estimate.error + moved * estimate.change + 1e-6 * (1.0 + fd.norm()),
                "at {y:?}, {moved} from {x:?}: estimate {:?}, differences {fd:?}, bounds {} + {moved} x {}",
                estimate.value,
                estimate.error,
                estimate.change
            );
            let Some(estimate) = boundary.gradient(y, 0.0) else {
                continue;
            };
            assert!(
                (estimate.value - fd).norm() <= estimate.error + 1e-6 * (1.0 + fd.norm()),
                "at {x:?}: estimate {:?}, differences {fd:?}, error bound {}",
                estimate.value,
                estimate.error
            );
            checked += 1;
        }
        assert!(checked > 200, "{checked}");
    }
}
