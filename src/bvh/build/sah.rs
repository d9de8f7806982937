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

use crate::bvh::leaf::LANES;
use crate::bvh::par;
use crate::bvh::{BuildOptions, Node};
use crate::{Aabb, Mesh};
use nalgebra::Point3;
use wide::f32x4;

/// Depth after which the builder splits at the object median (halving each node), which
/// bounds the depth by `MEDIAN_DEPTH + 32` for any `u32` number of primitives.
pub(crate) const MEDIAN_DEPTH: u32 = 28;

/// The deepest a binary tree can be.
pub(crate) const MAX_DEPTH: usize = MEDIAN_DEPTH as usize + 33;

/// The deepest a wide tree can be; the walks' stacks hold this many levels' entries. Its
/// levels are no more than the binary tree's, and a leaf too big for its node's free lanes
/// becomes nodes of its own: at most five levels for a leaf of 2^16 triangles (2^14 packets),
/// and such leaves never sit deep (below the median depth every split halves).
pub(crate) const MAX_WIDE_DEPTH: usize = MAX_DEPTH + 6;

struct Task {
    node: usize,
    begin: usize,
    end: usize,
    depth: u32,
    /// The primitives' boxes' union, and their centroids' box.
    bounds: Bounds,
}

/// A box as two SIMD vectors `(x, y, z, w)`, the `w` lane unused: a union is one min and
/// one max instruction instead of six (the builder unions every primitive into a bin on
/// every level). Coordinates are finite (meshes reject the rest), so `fast_min`/`fast_max`
/// are exact.
#[derive(Clone, Copy, Debug)]
struct Box4 {
    min: f32x4,
    max: f32x4,
}

impl Box4 {
    const EMPTY: Box4 = Box4 {
        min: f32x4::new([f32::INFINITY; 4]),
        max: f32x4::new([f32::NEG_INFINITY; 4]),
    };

    #[inline(always)]
    fn union(&self, other: &Box4) -> Box4 {
        Box4 {
            min: self.min.fast_min(other.min),
            max: self.max.fast_max(other.max),
        }
    }

    #[inline(always)]
    fn grow(&self, p: f32x4) -> Box4 {
        Box4 {
            min: self.min.fast_min(p),
            max: self.max.fast_max(p),
        }
    }

    fn to_aabb(self) -> Aabb {
        let (lo, hi) = (self.min.to_array(), self.max.to_array());
        Aabb::new(
            Point3::new(lo[0], lo[1], lo[2]),
            Point3::new(hi[0], hi[1], hi[2]),
        )
    }

    /// [`Aabb::half_area`], the same arithmetic.
    #[inline(always)]
    fn half_area(&self) -> f32 {
        let (lo, hi) = (self.min.to_array(), self.max.to_array());
        if !(lo[0] <= hi[0] && lo[1] <= hi[1] && lo[2] <= hi[2]) {
            return 0.0;
        }
        let e = (self.max - self.min).to_array();
        e[0] * e[1] + e[1] * e[2] + e[2] * e[0]
    }
}

/// A set of primitives' box and their centroids' box, gathered while partitioning the
/// parent, so no node sweeps its primitives just to find them.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    boxes: Box4,
    centroids: Box4,
}

impl Bounds {
    const EMPTY: Bounds = Bounds {
        boxes: Box4::EMPTY,
        centroids: Box4::EMPTY,
    };

    #[inline(always)]
    fn add(&mut self, p: &Item) {
        self.boxes = self.boxes.union(&p.bounds);
        self.centroids = self.centroids.grow(p.centroid());
    }

    fn of(prims: &[Item]) -> Bounds {
        let mut b = Bounds::EMPTY;
        for p in prims {
            b.add(p);
        }
        b
    }
}

#[derive(Clone, Copy)]
struct Bin {
    bounds: Box4,
    count: u32,
}

const EMPTY_BIN: Bin = Bin {
    bounds: Box4::EMPTY,
    count: 0,
};

/// A primitive as the builder sees it: its box, with its number in the unused `w` lanes. The
/// builder partitions these records themselves (not indices into the inputs), so every sweep
/// over a node reads memory in order, 32 bytes a primitive. The number's high and low 23 bits
/// are the mantissas of two floats in `[1, 2)`: normal numbers, which the unions and centroid
/// sums of the `w` lanes (unused) handle at full speed. (A number stored as a float of its own
/// value is subnormal, and arithmetic on subnormals stalls: that made the build twice as
/// slow; a separate `u32` field made the record 48 bytes with its padding.)
#[derive(Clone, Copy)]
struct Item {
    bounds: Box4,
}

/// The bits of `1.0f32`: a float in `[1, 2)` with a zero mantissa.
const ONE: u32 = 0x3f80_0000;
/// A mantissa's bits.
const MANTISSA: u32 = 0x007f_ffff;

impl Item {
    fn new(bounds: &Aabb, index: u32) -> Item {
        let (lo, hi) = (bounds.min, bounds.max);
        let high = f32::from_bits(ONE | (index >> 23));
        let low = f32::from_bits(ONE | (index & MANTISSA));
        Item {
            bounds: Box4 {
                min: f32x4::new([lo.x, lo.y, lo.z, high]),
                max: f32x4::new([hi.x, hi.y, hi.z, low]),
            },
        }
    }

    fn index(&self) -> u32 {
        let high = self.bounds.min.to_array()[3].to_bits() & MANTISSA;
        let low = self.bounds.max.to_array()[3].to_bits() & MANTISSA;
        (high << 23) | low
    }

    /// The box's centre, `(min + max) · 0.5`, as [`Aabb::centroid`] computes it.
    #[inline(always)]
    fn centroid(&self) -> f32x4 {
        (self.bounds.min + self.bounds.max) * f32x4::splat(0.5)
    }
}

/// Builds the tree over `boxes`; returns the nodes and the primitive order of the leaves.
/// Centroids are the boxes' centres.
/// Told how many more primitives have reached their leaves (from any build thread).
pub(crate) type Progress<'a> = dyn Fn(usize) + Sync + 'a;

/// Primitives a thread places before it reports them: rare enough to cost nothing.
const PROGRESS_STEP: usize = 1 << 16;

pub(crate) fn build(
    boxes: &[Aabb],
    options: &BuildOptions,
    progress: &Progress,
) -> (Vec<Node>, Vec<u32>) {
    let items = par::map_indexed(boxes.len(), |i| Item::new(&boxes[i], i as u32));
    build_items(items, Vec::new(), options, progress)
}

/// [`build`] over a mesh's triangles (each one's box made on the way from the mesh, not
/// stored: a build touches that much less fresh memory).
pub(crate) fn build_triangles(
    mesh: &Mesh,
    options: &BuildOptions,
    progress: &Progress,
) -> (Vec<Node>, Vec<u32>) {
    // The nodes' array is reserved before the items', right below them, so that once both
    // are freed they make one hole, which takes the leaves' packets: in a browser tab, whose
    // memory never shrinks, the build's peak is what it keeps.
    let nodes = Vec::with_capacity(node_capacity(mesh.triangle_count(), options.max_leaf_size));
    let items = par::map_indexed(mesh.triangle_count(), |i| {
        Item::new(&Aabb::from_points(&mesh.triangle(i)), i as u32)
    });
    build_items(items, nodes, options, progress)
}

/// The tree over `items`, into `nodes` (empty; its capacity reserved, or none) where one
/// thread builds it.
fn build_items(
    mut items: Vec<Item>,
    nodes: Vec<Node>,
    options: &BuildOptions,
    progress: &Progress,
) -> (Vec<Node>, Vec<u32>) {
    let bounds = Bounds::of(&items);
    let nodes = build_top(&mut items, nodes, &bounds, 0, 0, options, progress).flatten();
    (nodes, items.iter().map(Item::index).collect())
}

/// What the builder does with one node's primitives.
enum Decision {
    /// Keep them as a leaf.
    Leaf,
    /// The first `mid` go left (after partitioning), the rest right; with both sides' bounds.
    Split(usize, Bounds, Bounds),
}

/// Scratch space for the SAH sweep, reused from node to node.
struct Scratch {
    bins: Vec<Bin>,
    right_area: Vec<f32>,
}

impl Scratch {
    fn new(options: &BuildOptions) -> Scratch {
        let bins = options.bins.clamp(2, 256);
        Scratch {
            bins: vec![EMPTY_BIN; 3 * bins],
            right_area: vec![0.0; bins],
        }
    }
}

/// Decides a node and, for a split, partitions its primitives. The same primitives, depth
/// and options always give the same answer, so serial and parallel builds make the same tree.
fn decide(
    prims: &mut [Item],
    bounds: &Bounds,
    depth: u32,
    options: &BuildOptions,
    scratch: &mut Scratch,
) -> Decision {
    let count = prims.len();
    if count == 1 {
        return Decision::Leaf;
    }
    let max_leaf = options.max_leaf_size.clamp(1, crate::bvh::MAX_LEAF_SIZE);
    // A split costs at least a node visit, so a leaf that costs no more is kept without
    // looking for a plane: the decision below would make it a leaf anyway (with the
    // default costs, every node of one packet).
    let leaf_cost = options.intersection_cost * packets(count as u32);
    if count <= max_leaf && leaf_cost <= options.traversal_cost {
        return Decision::Leaf;
    }
    let centroid_bounds = bounds.centroids.to_aabb();
    let split = if depth >= MEDIAN_DEPTH {
        None
    } else {
        best_sah_split(
            prims,
            &centroid_bounds,
            &mut scratch.bins,
            &mut scratch.right_area,
        )
    };
    match split {
        Some(s) => {
            let area = bounds.boxes.half_area();
            let split_cost =
                options.traversal_cost + options.intersection_cost * s.weighted_area / area;
            // A flat or point-like node (area 0) has no meaningful SAH: split it by count.
            if count <= max_leaf && (leaf_cost <= split_cost || !(area > 0.0)) {
                return Decision::Leaf;
            }
            let (mid, left, right) = partition(prims, |p| s.goes_left(p));
            Decision::Split(mid, left, right)
        }
        None if count <= max_leaf => Decision::Leaf,
        None => {
            let mid = median_split(prims, &centroid_bounds);
            Decision::Split(mid, Bounds::of(&prims[..mid]), Bounds::of(&prims[mid..]))
        }
    }
}

/// Builds the subtree over `items` (slots `offset..` of the final order) at `depth`, one
/// thread, with an explicit work stack; the root is node 0 of the returned array.
fn build_serial(
    items: &mut [Item],
    mut nodes: Vec<Node>,
    bounds: &Bounds,
    offset: usize,
    depth: u32,
    options: &BuildOptions,
    progress: &Progress,
) -> Vec<Node> {
    let mut placed = 0;
    let n = items.len();
    let mut scratch = Scratch::new(options);
    nodes.clear();
    nodes.reserve(node_capacity(n, options.max_leaf_size));
    nodes.push(Node::EMPTY);
    let mut tasks = vec![Task {
        node: 0,
        begin: 0,
        end: n,
        depth,
        bounds: *bounds,
    }];
    while let Some(Task {
        node,
        begin,
        end,
        depth,
        bounds,
    }) = tasks.pop()
    {
        let prims = &mut items[begin..end];
        let (mid, left_bounds, right_bounds) =
            match decide(prims, &bounds, depth, options, &mut scratch) {
                Decision::Leaf => {
                    nodes[node] = Node::leaf(
                        &bounds.boxes.to_aabb(),
                        (offset + begin) as u32,
                        prims.len() as u32,
                    );
                    placed += prims.len();
                    if placed >= PROGRESS_STEP {
                        progress(std::mem::take(&mut placed));
                    }
                    continue;
                }
                Decision::Split(mid, left, right) => (mid, left, right),
            };
        let left = nodes.len();
        nodes.push(Node::EMPTY);
        nodes.push(Node::EMPTY);
        nodes[node] = Node::interior(&bounds.boxes.to_aabb(), left as u32);
        tasks.push(Task {
            node: left + 1,
            begin: begin + mid,
            end,
            depth: depth + 1,
            bounds: right_bounds,
        });
        tasks.push(Task {
            node: left,
            begin,
            end: begin + mid,
            depth: depth + 1,
            bounds: left_bounds,
        });
    }
    if placed > 0 {
        progress(placed);
    }
    nodes
}

/// The nodes to reserve for a tree over `n` primitives whose leaves hold at most
/// `max_leaf`: a binary tree of single-primitive leaves has 2n − 1, but the SAH's leaves
/// are nearly full, so trees of real meshes have 0.36n to 0.39n nodes with leaves of up to
/// eight and 0.52n to 0.55n with leaves of up to four (the default; the five benchmark
/// meshes). Reserving the most would take 64 bytes per triangle of memory a build in a
/// browser tab never gets back; a larger tree grows the array. For leaves of four, n/2
/// still: reserving 9n/16 raised a WebAssembly module's peak (js/test/core.test.mjs's
/// sphere: 144 against 112 bytes per triangle), where the array's hole takes the leaves
/// later.
pub(crate) fn node_capacity(n: usize, max_leaf: usize) -> usize {
    match max_leaf {
        0 | 1 => 2 * n,
        2 => n + n / 4,
        3 => n * 13 / 16,
        _ => n / 2,
    }
    .max(1)
}

/// Below this many primitives a subtree is built on one thread: handing it to another
/// costs more than it saves.
#[cfg(feature = "parallel")]
const PARALLEL_MIN: usize = 4096;

/// A subtree built by [`build_top`]: a node array of its own (root at 0), or a root box over
/// two such parts. Flattened once at the end ([`Part::flatten`]): joining the arrays at every
/// parallel level copied the upper nodes once per level, into fresh memory each time.
enum Part {
    Built(Vec<Node>),
    #[cfg(feature = "parallel")]
    Joined(Aabb, Box<Part>, Box<Part>),
}

impl Part {
    /// One array, root first, children side by side after their parent: each joined root
    /// followed by its two parts' roots, then the rest of the left part and of the right
    /// (the layout the serial builder makes for the same tree, up to where parts begin).
    fn flatten(self) -> Vec<Node> {
        match self {
            // Already root first (what `place` would copy it into).
            Part::Built(nodes) => nodes,
            #[cfg(feature = "parallel")]
            joined => {
                // Reserved whole: grown by doubling, the array would hold up to twice the
                // tree at the build's peak.
                let mut out = Vec::with_capacity(1 + joined.placed());
                out.push(Node::EMPTY);
                joined.place(0, &mut out);
                out
            }
        }
    }

    /// The nodes [`place`](Part::place) adds beyond the slot of this part's root.
    #[cfg(feature = "parallel")]
    fn placed(&self) -> usize {
        match self {
            Part::Built(nodes) => nodes.len() - 1,
            Part::Joined(_, left, right) => 2 + left.placed() + right.placed(),
        }
    }

    /// Puts this part's root at `slot` and the rest of it at the end of `out`.
    #[cfg(feature = "parallel")]
    fn place(self, slot: usize, out: &mut Vec<Node>) {
        // A part's node i >= 1 lands at i + shift (children are never at a part's index 0).
        let moved = |node: &Node, shift: usize| {
            let mut node = *node;
            if !node.is_leaf() {
                node.first += shift as u32;
            }
            node
        };
        match self {
            Part::Built(nodes) => {
                let shift = out.len() - 1;
                out[slot] = moved(&nodes[0], shift);
                out.extend(nodes[1..].iter().map(|n| moved(n, shift)));
            }
            #[cfg(feature = "parallel")]
            Part::Joined(bounds, left, right) => {
                let first = out.len();
                out.push(Node::EMPTY);
                out.push(Node::EMPTY);
                out[slot] = Node::interior(&bounds, first as u32);
                left.place(first, out);
                right.place(first + 1, out);
            }
        }
    }
}

/// Builds the subtree over `items` like [`build_serial`], splitting the top nodes' two
/// halves across rayon's threads with the `parallel` feature. The same decisions in the same
/// order, so the same tree.
fn build_top(
    items: &mut [Item],
    nodes: Vec<Node>,
    bounds: &Bounds,
    offset: usize,
    depth: u32,
    options: &BuildOptions,
    progress: &Progress,
) -> Part {
    #[cfg(feature = "parallel")]
    if items.len() >= PARALLEL_MIN {
        let mut scratch = Scratch::new(options);
        if let Decision::Split(mid, left_bounds, right_bounds) =
            decide(items, bounds, depth, options, &mut scratch)
        {
            let (left, right) = items.split_at_mut(mid);
            let (left, right) = rayon::join(
                || {
                    let nodes = Vec::new();
                    build_top(
                        left,
                        nodes,
                        &left_bounds,
                        offset,
                        depth + 1,
                        options,
                        progress,
                    )
                },
                || {
                    build_top(
                        right,
                        Vec::new(),
                        &right_bounds,
                        offset + mid,
                        depth + 1,
                        options,
                        progress,
                    )
                },
            );
            return Part::Joined(bounds.boxes.to_aabb(), Box::new(left), Box::new(right));
        }
    }
    Part::Built(build_serial(
        items, nodes, bounds, offset, depth, options, progress,
    ))
}

/// What `n` triangles cost to test, in packet tests: leaves test four triangles at once
/// ([`crate::packet`]), so the SAH counts packets, and leaves fill them (Wald et al.'s SAH
/// for multi-primitive leaves, as in Embree).
#[inline]
fn packets(n: u32) -> f32 {
    n.div_ceil(LANES as u32) as f32
}

/// Nodes with at least this many primitives bin in two halves side by side (with the
/// `parallel` feature): the root and the first levels, which would otherwise run on one
/// thread while the others wait.
const PARALLEL_BINNING: usize = 1 << 16;

/// Drops `prims` into `bins` (`3 · nb` of them: all three axes), emptied first: a bin per
/// axis, `clamp(trunc((c − min)·scale), 0, nb − 1)`, clamped in floats first (`maxps` gives 0
/// for the NaN of an axis whose centroids coincide, which is skipped) and truncated four
/// lanes at once.
fn fill_bins(bins: &mut [Bin], prims: &[Item], min4: f32x4, scale4: f32x4) {
    let nb = bins.len() / 3;
    bins.fill(EMPTY_BIN);
    let (zero, last) = (f32x4::ZERO, f32x4::splat((nb - 1) as f32));
    for p in prims {
        let x = ((p.centroid() - min4) * scale4)
            .fast_max(zero)
            .fast_min(last);
        let x = x.trunc_int().to_array();
        for axis in 0..3 {
            let b = &mut bins[axis * nb + x[axis] as usize];
            b.count += 1;
            b.bounds = b.bounds.union(&p.bounds);
        }
    }
}

/// A chosen plane: primitives whose centroid bins below `plane` on `axis` go left.
struct Split {
    axis: usize,
    plane: usize,
    min: f32,
    scale: f32,
    /// `A_left · N_left + A_right · N_right`, in half areas.
    weighted_area: f32,
}

impl Split {
    /// Whether `p`'s centroid bins below the plane. The binning's bin is
    /// `clamp(trunc((c − min)·scale), 0, bins − 1)`; for a plane `1 ≤ plane < bins` that is
    /// below it exactly when `(c − min)·scale < plane`, computed with the same operations, so
    /// the partition puts every primitive on the side whose bins counted it, without the
    /// conversion and clamp.
    #[inline(always)]
    fn goes_left(&self, p: &Item) -> bool {
        (p.centroid().to_array()[self.axis] - self.min) * self.scale < self.plane as f32
    }
}

fn best_sah_split(
    prims: &[Item],
    centroid_bounds: &Aabb,
    bins: &mut [Bin],
    right_area: &mut [f32],
) -> Option<Split> {
    let nb = right_area.len();
    // Per axis, the bins' origin and scale; an axis on which all centroids coincide is skipped.
    let (mut min, mut scale, mut valid) = ([0.0f32; 4], [0.0f32; 4], [false; 3]);
    for axis in 0..3 {
        min[axis] = centroid_bounds.min[axis];
        let extent = centroid_bounds.max[axis] - min[axis];
        scale[axis] = nb as f32 / extent;
        valid[axis] = extent > 0.0 && scale[axis].is_finite();
    }
    if !valid.contains(&true) {
        return None;
    }
    // One pass over the primitives fills the bins of all three axes.
    let (min4, scale4) = (f32x4::new(min), f32x4::new(scale));
    if prims.len() >= PARALLEL_BINNING {
        // The top nodes' primitives, in two halves binned side by side and merged.
        let (first, second) = prims.split_at(prims.len() / 2);
        let mut other = vec![EMPTY_BIN; bins.len()];
        par::join(
            true,
            || fill_bins(bins, first, min4, scale4),
            || fill_bins(&mut other, second, min4, scale4),
        );
        for (b, o) in bins.iter_mut().zip(&other) {
            b.count += o.count;
            b.bounds = b.bounds.union(&o.bounds);
        }
    } else {
        fill_bins(bins, prims, min4, scale4);
    }
    let mut best: Option<Split> = None;
    for axis in (0..3).filter(|&a| valid[a]) {
        let bins = &bins[axis * nb..(axis + 1) * nb];
        // right_area[i] = A(bins i..) · N(bins i..). An empty bin changes neither the box
        // nor the count, so its value is its neighbour's: small nodes leave most bins empty,
        // and skipping them made the sweeps several times cheaper with the same answers.
        let (mut acc, mut n, mut area) = (Box4::EMPTY, 0u32, 0.0f32);
        for i in (1..nb).rev() {
            if bins[i].count > 0 {
                acc = acc.union(&bins[i].bounds);
                n += bins[i].count;
                area = acc.half_area() * packets(n);
            }
            right_area[i] = area;
        }
        let (mut acc, mut n) = (Box4::EMPTY, 0u32);
        for plane in 1..nb {
            // A plane after an empty bin costs what the plane before it cost, and only a
            // strictly cheaper plane replaces the best: nothing to evaluate.
            if bins[plane - 1].count == 0 {
                continue;
            }
            acc = acc.union(&bins[plane - 1].bounds);
            n += bins[plane - 1].count;
            if n as usize == prims.len() {
                continue;
            }
            let weighted_area = acc.half_area() * packets(n) + right_area[plane];
            if best
                .as_ref()
                .is_none_or(|b| weighted_area < b.weighted_area)
            {
                best = Some(Split {
                    axis,
                    plane,
                    min: min[axis],
                    scale: scale[axis],
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
        let key = |p: &Item| p.centroid().to_array()[axis];
        prims.select_nth_unstable_by(mid, |a, b| key(a).total_cmp(&key(b)));
    }
    mid
}

/// Moves the elements for which `left` holds to the front; returns how many there are and
/// the bounds of both sides.
///
/// Branch-free (Lomuto's scheme with an unconditional swap): which side a primitive takes is
/// as good as random near the top of the tree, and the branchy two-ended loop spent most of
/// its time on mispredictions; the bounds are then gathered by a pass over each side.
fn partition(prims: &mut [Item], left: impl Fn(&Item) -> bool) -> (usize, Bounds, Bounds) {
    let mut i = 0;
    for j in 0..prims.len() {
        // prims[..i] go left, prims[i..j] go right.
        let goes_left = left(&prims[j]);
        prims.swap(i, j);
        i += usize::from(goes_left);
    }
    let (left, right) = prims.split_at(i);
    let big = prims.len() >= PARALLEL_BINNING;
    let (left, right) = par::join(big, || Bounds::of(left), || Bounds::of(right));
    (i, left, right)
}

#[cfg(all(test, feature = "parallel"))]
mod tests {
    use super::*;

    /// The tree in a layout-free form: depth-first, each node's box and, for a leaf, its slots.
    fn canonical(nodes: &[Node]) -> Vec<(Aabb, Option<(u32, u32)>)> {
        let mut out = Vec::new();
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            let node = &nodes[i];
            if node.is_leaf() {
                out.push((node.bounds(), Some((node.first, node.count))));
            } else {
                out.push((node.bounds(), None));
                stack.push(node.first as usize + 1);
                stack.push(node.first as usize);
            }
        }
        out
    }

    fn soup(n: usize) -> Vec<Item> {
        let mut rng = crate::test_support::Rng::new(12345);
        let mut next = move || rng.range(0.0, 1.0);
        (0..n)
            .map(|i| {
                let p = Point3::new(next(), next(), next()) * 100.0;
                let q = p + nalgebra::Vector3::new(next(), next(), next());
                Item::new(&Aabb::new(p, q), i as u32)
            })
            .collect()
    }

    #[test]
    fn parallel_and_serial_builds_make_the_same_tree() {
        let options = BuildOptions::default();
        for n in [1, 5000, 40_000] {
            let mut serial_items = soup(n);
            let mut parallel_items = serial_items.clone();
            let bounds = Bounds::of(&serial_items);
            let serial = build_serial(
                &mut serial_items,
                Vec::new(),
                &bounds,
                0,
                0,
                &options,
                &|_| {},
            );
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(2)
                .build()
                .unwrap();
            let parallel = pool.install(|| {
                build_top(
                    &mut parallel_items,
                    Vec::new(),
                    &bounds,
                    0,
                    0,
                    &options,
                    &|_| {},
                )
                .flatten()
            });
            let order = |items: &[Item]| items.iter().map(Item::index).collect::<Vec<_>>();
            assert_eq!(order(&serial_items), order(&parallel_items), "n = {n}");
            assert_eq!(serial.len(), parallel.len());
            assert_eq!(canonical(&serial), canonical(&parallel), "n = {n}");
        }
    }
}
