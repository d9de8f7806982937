//! The fast builder ([`BuildQuality::Fast`](crate::bvh::BuildQuality::Fast)): a linear BVH.
//!
//! Each triangle's centroid gets a 63-bit Morton code (21 bits per axis, interleaved, over
//! the centroids' bounding cube, since scaling each axis to its own extent made trees that
//! test more boxes per ray), the triangles are sorted by
//! code with a radix sort, and
//! the tree splits each range where the highest bit that differs in it changes (Lauterbach
//! et al. 2009, "Fast BVH construction on GPUs"; Karras 2012 splits the same way). No
//! surface-area costs, so it builds several times faster than the SAH builder and makes a
//! looser tree: for geometry that moves every frame, where the build is paid per frame.
//! Ranges of two packets or less become leaves (ranges of up to four packets split at whole
//! packets), equal codes are split at the middle, and below the SAH builder's median depth
//! every range is halved, so the tree is no deeper than the SAH builder's and the walks'
//! stacks hold it.

use crate::bvh::Node;
use crate::bvh::build::MEDIAN_DEPTH;
use crate::bvh::leaf::LANES;
use crate::{Aabb, Mesh};
use nalgebra::Point3;

/// Bits per axis in a Morton code.
const BITS: u32 = 21;

/// Builds the tree over triangles given by their corners (centroids: their boxes' centres),
/// leaves of at most `max_leaf` (and at most two packets); returns the nodes, root first
/// with children side by side after their parent, the primitives in leaf order, and their
/// corners in that order (kept for the leaves: packing them from the mesh instead made fast
/// builds a fifth slower, for a copy a default build does without).
pub(crate) fn build(
    mesh: &Mesh,
    max_leaf: usize,
    progress: &crate::bvh::build::Progress,
) -> (Vec<Node>, Vec<u32>, Vec<[Point3<f32>; 3]>) {
    // Each triangle's corners, for its code now and, put in leaf order, the boxes below.
    let mut corners = crate::bvh::par::map_indexed(mesh.triangle_count(), |i| mesh.triangle(i));
    debug_assert!(!corners.is_empty(), "meshes have triangles");
    let leaf_size = max_leaf.clamp(1, 2 * LANES);
    let (mut codes, mut order) = morton_codes(&corners);
    radix_sort(&mut codes, &mut order);

    let n = corners.len();
    let mut nodes = Vec::with_capacity(crate::bvh::build::node_capacity(n, leaf_size));
    nodes.push(Node::EMPTY);
    // (node, begin, end, depth)
    let mut tasks = vec![(0usize, 0usize, n, 0u32)];
    while let Some((node, begin, end, depth)) = tasks.pop() {
        if end - begin <= leaf_size {
            nodes[node].first = begin as u32;
            nodes[node].count = (end - begin) as u32;
            continue;
        }
        let mid = split(&codes[begin..end], depth) + begin;
        // Small ranges split at a whole packet, so leaves fill their packets.
        let count = end - begin;
        let mid = if leaf_size >= LANES && count <= 4 * LANES {
            let packets = (mid - begin + LANES / 2) / LANES;
            begin + packets.clamp(1, count.div_ceil(LANES) - 1) * LANES
        } else {
            mid
        };
        let left = nodes.len();
        nodes.push(Node::EMPTY);
        nodes.push(Node::EMPTY);
        nodes[node].first = left as u32;
        tasks.push((left + 1, mid, end, depth + 1));
        tasks.push((left, begin, mid, depth + 1));
    }
    drop(codes);
    // Boxes bottom up (children come after their parent), from the corners in leaf order:
    // gathered in one simple loop, which overlaps its cache misses far better than the
    // sweep could, and kept for the leaves.
    crate::bvh::par::gather_in_place(&mut corners, &order);
    let sorted = &corners[..];
    for i in (0..nodes.len()).rev() {
        let node = nodes[i];
        let (first, count) = (node.first as usize, node.count as usize);
        let bounds = if count > 0 {
            sorted[first..first + count]
                .iter()
                .fold(Aabb::EMPTY, |b, t| b.union(&Aabb::from_points(t)))
        } else {
            nodes[first].bounds().union(&nodes[first + 1].bounds())
        };
        nodes[i].min = bounds.min.coords.into();
        nodes[i].max = bounds.max.coords.into();
    }
    progress(n);
    (nodes, order, corners)
}

/// Where to split a sorted range of codes (at least two): where its highest differing bit
/// turns on, or the middle for equal codes and deep ranges.
fn split(codes: &[u64], depth: u32) -> usize {
    let (first, last) = (codes[0], codes[codes.len() - 1]);
    if first == last || depth >= MEDIAN_DEPTH {
        return codes.len() / 2;
    }
    let bit = 1u64 << (63 - (first ^ last).leading_zeros());
    codes.partition_point(|&c| c & bit == 0)
}

/// Each box's centroid's Morton code, over the centroids' bounding cube, and the identity
/// order.
fn morton_codes(corners: &[[Point3<f32>; 3]]) -> (Vec<u64>, Vec<u32>) {
    let centroid = |t: &[Point3<f32>; 3]| {
        let b = Aabb::from_points(t);
        (b.min.coords + b.max.coords) * 0.5
    };
    let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    for t in corners {
        let c = centroid(t);
        for a in 0..3 {
            lo[a] = lo[a].min(c[a]);
            hi[a] = hi[a].max(c[a]);
        }
    }
    let extent = (0..3).map(|a| hi[a] - lo[a]).fold(0.0f32, f32::max);
    let cells = (1u32 << BITS) as f32;
    let scale = if extent > 0.0 { cells / extent } else { 0.0 };
    let codes = crate::bvh::par::map_indexed(corners.len(), |i| {
        let c = centroid(&corners[i]);
        let cell = |a: usize| (((c[a] - lo[a]) * scale) as u32).min((1 << BITS) - 1) as u64;
        spread(cell(0)) | spread(cell(1)) << 1 | spread(cell(2)) << 2
    });
    (codes, (0..corners.len() as u32).collect())
}

/// The low 21 bits of `x`, two zero bits between each.
fn spread(x: u64) -> u64 {
    let mut x = x & 0x1f_ffff;
    x = (x | x << 32) & 0x001f_0000_0000_ffff;
    x = (x | x << 16) & 0x001f_0000_ff00_00ff;
    x = (x | x << 8) & 0x100f_00f0_0f00_f00f;
    x = (x | x << 4) & 0x10c3_0c30_c30c_30c3;
    x = (x | x << 2) & 0x1249_2492_4924_9249;
    x
}

/// Sorts `codes` ascending, moving `order` along: least significant byte first, skipping
/// the bytes in which all codes agree (the top byte of a 63-bit code, and more for small
/// meshes).
fn radix_sort(codes: &mut Vec<u64>, order: &mut Vec<u32>) {
    let n = codes.len();
    let mut histogram = [[0usize; 256]; 8];
    for &c in codes.iter() {
        for (byte, h) in histogram.iter_mut().enumerate() {
            h[(c >> (8 * byte)) as usize & 255] += 1;
        }
    }
    let (mut codes_out, mut order_out) = (vec![0u64; n], vec![0u32; n]);
    for (byte, h) in histogram.iter().enumerate() {
        if h.contains(&n) {
            continue;
        }
        let mut next = [0usize; 256];
        let mut sum = 0;
        for (slot, &count) in next.iter_mut().zip(h) {
            *slot = sum;
            sum += count;
        }
        for (&c, &i) in codes.iter().zip(order.iter()) {
            let d = (c >> (8 * byte)) as usize & 255;
            codes_out[next[d]] = c;
            order_out[next[d]] = i;
            next[d] += 1;
        }
        std::mem::swap(codes, &mut codes_out);
        std::mem::swap(order, &mut order_out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Rng;

    #[test]
    fn spread_puts_each_bit_three_apart() {
        for bit in 0..BITS {
            assert_eq!(spread(1 << bit), 1 << (3 * bit), "bit {bit}");
        }
        assert_eq!(spread(u64::MAX), 0x1249_2492_4924_9249);
    }

    #[test]
    fn radix_sort_sorts_and_keeps_pairs() {
        let mut rng = Rng::new(9);
        for n in [0usize, 1, 2, 300, 5000] {
            let mut codes: Vec<u64> = (0..n)
                .map(|i| match i % 3 {
                    0 => (rng.range(0.0, 1.0) * 1e6) as u64,
                    1 => ((rng.range(0.0, 1.0) * 1e6) as u64) << 40,
                    _ => 7,
                })
                .collect();
            let want: Vec<(u64, u32)> = {
                let mut pairs: Vec<(u64, u32)> = codes.iter().copied().zip(0..n as u32).collect();
                pairs.sort();
                pairs
            };
            let mut order: Vec<u32> = (0..n as u32).collect();
            radix_sort(&mut codes, &mut order);
            let got: Vec<(u64, u32)> = codes.into_iter().zip(order).collect();
            // Stable: equal codes keep their order, so the pairs match a full sort's.
            assert_eq!(got, want, "n = {n}");
        }
    }

    #[test]
    fn split_is_where_the_top_differing_bit_turns_on() {
        assert_eq!(split(&[0b000, 0b001, 0b100, 0b101, 0b111], 0), 2);
        assert_eq!(split(&[5, 5, 5, 5], 0), 2);
        assert_eq!(split(&[0, 1, 2, 1 << 40], 0), 3);
        assert_eq!(split(&[0, 1, 2, 1 << 40], MEDIAN_DEPTH), 2);
    }
}
