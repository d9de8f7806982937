//! Top-down binned SAH construction.
//!
//! The builder sees only boxes and centroids, never triangles: it returns the flat node
//! array and the permutation that puts primitives in leaf order.
//!
//! At each node the centroids are dropped into `bins` equal bins along each of the three axes;
//! sweeping the bins from both ends gives, for every plane between two bins, the surface area
//! heuristic cost (MacDonald & Booth 1990; binning after Wald 2007)
//!
//! ```text
//! cost = C_trav + C_isect · (A_left · N_left + A_right · N_right) / A_node
//! ```
//!
//! with `A` the surface area of the children's boxes. The cheapest plane wins unless keeping
//! the node as a leaf, `C_isect · N`, costs no more and `N` fits in a leaf. When all
//! centroids fall in one bin on every axis (coincident centroids) the node is split at the
//! median; below a depth limit the builder also switches to median splits, so the tree is
//! never deeper than the traversal stack.

use super::{BuildOptions, Node};
use crate::Aabb;
use nalgebra::Point3;

/// Depth after which the builder splits at the object median (halving each node), which
/// bounds the depth by `MEDIAN_DEPTH + 32` for any `u32` number of primitives.
const MEDIAN_DEPTH: u32 = 28;

/// The deepest a tree can be; the traversal stack holds this many entries inline.
pub(crate) const MAX_DEPTH: usize = MEDIAN_DEPTH as usize + 33;

struct Task {
    node: usize,
    begin: usize,
    end: usize,
    depth: u32,
}

#[derive(Clone, Copy)]
struct Bin {
    bounds: Aabb,
    count: u32,
}

const EMPTY_BIN: Bin = Bin {
    bounds: Aabb::EMPTY,
    count: 0,
};

/// A primitive as the builder sees it. The builder partitions these records themselves
/// (not indices into the inputs), so every sweep over a node reads memory in order.
#[derive(Clone, Copy)]
struct Item {
    bounds: Aabb,
    centroid: Point3<f32>,
    index: u32,
}

/// Builds the tree over `boxes` (with their `centroids`); returns the nodes and the
/// primitive order of the leaves.
pub(crate) fn build(
    boxes: &[Aabb],
    centroids: &[Point3<f32>],
    options: &BuildOptions,
) -> (Vec<Node>, Vec<u32>) {
    let n = boxes.len();
    let mut items: Vec<Item> = (0..n)
        .map(|i| Item {
            bounds: boxes[i],
            centroid: centroids[i],
            index: i as u32,
        })
        .collect();
    let mut nodes = Vec::with_capacity((2 * n).saturating_sub(1).max(1));
    nodes.push(Node::EMPTY);
    let mut tasks = vec![Task {
        node: 0,
        begin: 0,
        end: n,
        depth: 0,
    }];
    let bins = options.bins.clamp(2, 256);
    let max_leaf = options.max_leaf_size.clamp(1, super::MAX_LEAF_SIZE);
    let mut bin_buf = vec![EMPTY_BIN; bins];
    let mut right_area = vec![0.0f32; bins];

    while let Some(Task {
        node,
        begin,
        end,
        depth,
    }) = tasks.pop()
    {
        let prims = &mut items[begin..end];
        let bounds = prims.iter().fold(Aabb::EMPTY, |b, p| b.union(&p.bounds));
        let count = prims.len();
        let leaf = Node::leaf(&bounds, begin as u32, count as u32);
        if count == 1 {
            nodes[node] = leaf;
            continue;
        }
        let centroid_bounds = prims.iter().fold(Aabb::EMPTY, |b, p| b.grow(&p.centroid));

        let split = if depth >= MEDIAN_DEPTH {
            None
        } else {
            best_sah_split(prims, &centroid_bounds, &mut bin_buf, &mut right_area)
        };
        let mid = match split {
            Some(s) => {
                let leaf_cost = options.intersection_cost * count as f32;
                let area = bounds.half_area();
                let split_cost =
                    options.traversal_cost + options.intersection_cost * s.weighted_area / area;
                // A flat or point-like node (area 0) has no meaningful SAH: split it by count.
                if count <= max_leaf && (leaf_cost <= split_cost || !(area > 0.0)) {
                    nodes[node] = leaf;
                    continue;
                }
                partition(prims, |p| s.bin_of(&p.centroid) < s.plane)
            }
            None if count <= max_leaf => {
                nodes[node] = leaf;
                continue;
            }
            None => median_split(prims, &centroid_bounds),
        };
        let left = nodes.len();
        nodes.push(Node::EMPTY);
        nodes.push(Node::EMPTY);
        nodes[node] = Node::interior(&bounds, left as u32);
        tasks.push(Task {
            node: left + 1,
            begin: begin + mid,
            end,
            depth: depth + 1,
        });
        tasks.push(Task {
            node: left,
            begin,
            end: begin + mid,
            depth: depth + 1,
        });
    }
    (nodes, items.iter().map(|p| p.index).collect())
}

/// A chosen plane: primitives whose centroid bins below `plane` on `axis` go left.
struct Split {
    axis: usize,
    plane: usize,
    min: f32,
    scale: f32,
    bins: usize,
    /// `A_left · N_left + A_right · N_right`, in half areas.
    weighted_area: f32,
}

impl Split {
    #[inline]
    fn bin_of(&self, c: &Point3<f32>) -> usize {
        bin_index(c[self.axis], self.min, self.scale, self.bins)
    }
}

#[inline]
fn bin_index(x: f32, min: f32, scale: f32, bins: usize) -> usize {
    // `as usize` saturates (NaN gives 0), so the index is always in range.
    (((x - min) * scale) as usize).min(bins - 1)
}

fn best_sah_split(
    prims: &[Item],
    centroid_bounds: &Aabb,
    bins: &mut [Bin],
    right_area: &mut [f32],
) -> Option<Split> {
    let nb = bins.len();
    let mut best: Option<Split> = None;
    for axis in 0..3 {
        let min = centroid_bounds.min[axis];
        let extent = centroid_bounds.max[axis] - min;
        let scale = nb as f32 / extent;
        if !(extent > 0.0) || !scale.is_finite() {
            continue;
        }
        bins.fill(EMPTY_BIN);
        for p in prims.iter() {
            let b = &mut bins[bin_index(p.centroid[axis], min, scale, nb)];
            b.count += 1;
            b.bounds = b.bounds.union(&p.bounds);
        }
        // right_area[i] = A(bins i..) · N(bins i..)
        let (mut acc, mut n) = (Aabb::EMPTY, 0u32);
        for i in (1..nb).rev() {
            acc = acc.union(&bins[i].bounds);
            n += bins[i].count;
            right_area[i] = acc.half_area() * n as f32;
        }
        let (mut acc, mut n) = (Aabb::EMPTY, 0u32);
        for plane in 1..nb {
            acc = acc.union(&bins[plane - 1].bounds);
            n += bins[plane - 1].count;
            if n == 0 || n as usize == prims.len() {
                continue;
            }
            let weighted_area = acc.half_area() * n as f32 + right_area[plane];
            if best
                .as_ref()
                .is_none_or(|b| weighted_area < b.weighted_area)
            {
                best = Some(Split {
                    axis,
                    plane,
                    min,
                    scale,
                    bins: nb,
                    weighted_area,
                });
            }
        }
    }
    best
}

/// Splits at the median centroid along the widest centroid axis (by index when all
/// centroids coincide); returns the size of the left half.
fn median_split(prims: &mut [Item], centroid_bounds: &Aabb) -> usize {
    let mid = prims.len() / 2;
    let extent = centroid_bounds.extent();
    if extent.max() > 0.0 {
        let axis = extent.imax();
        prims.select_nth_unstable_by(mid, |a, b| a.centroid[axis].total_cmp(&b.centroid[axis]));
    }
    mid
}

/// Moves the elements for which `left` holds to the front; returns how many there are.
fn partition(prims: &mut [Item], left: impl Fn(&Item) -> bool) -> usize {
    let mut i = 0;
    let mut j = prims.len();
    while i < j {
        if left(&prims[i]) {
            i += 1;
        } else {
            j -= 1;
            prims.swap(i, j);
        }
    }
    i
}
