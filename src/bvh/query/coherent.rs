//! Coherent rays: eight neighbouring rays of a camera (a row of a tile) walk the tree
//! together.
//!
//! A single ray pays for every node it visits: the box test, sorting the children, the stack.
//! Neighbouring pixels visit nearly the same nodes, so a packet of eight shares that work.
//! At an interior node the packet tests the eight child boxes once, with interval arithmetic
//! over its rays (Wald, Boulos and Shirley 2007, "Ray tracing deformable scenes using
//! dynamic bounding volume hierarchies", and the interval form of Reshetov et al. 2005): the
//! origins and inverse directions lie in per-axis ranges, and the slab test's entry and exit
//! are bounded by the products at the ranges' ends. Only at a leaf does each ray take its
//! own slab test, the single-ray walk's arithmetic bit for bit, before its own triangle
//! test.
//!
//! Why the answers are those of the single-ray walk, hence of a brute force: f32
//! subtraction and multiplication round monotonically, so the bound computed from the ranges'
//! ends bounds what any ray of the packet computes; a box one ray would enter, the packet
//! enters. A ray tests a leaf only where its own slab test passes with its own best `t`,
//! which is what the single-ray walk asks; testing some leaves that the single walk would
//! have culled (visited earlier, with a larger best `t`) cannot change the closest hit, and
//! ties go to the lowest triangle number in both walks.
//!
//! A packet needs eight valid rays whose directions share their signs and have no zero
//! component (an infinite inverse direction has no useful range); other groups go ray by ray.

use crate::QueryOptions;
use crate::Ray;
use crate::bvh::Bvh;
use crate::bvh::leaf::LeafTest;
use crate::bvh::simd::{Avx2, NodeTest, Portable};
use crate::bvh::traverse::{CompactHit, keep_closer};
use crate::bvh::walk::Visitor;
use crate::bvh::wide::{BoxLanes, WIDTH, WideNode, entered, lower, raise, slab_axis, widened};
use crate::triangle::TriangleHit;

/// Rays per packet: one per SIMD lane of the box test.
pub(crate) const PACKET: usize = WIDTH;

/// A child's key in the packet walk: the smallest entry any ray of the packet can have, and
/// (for a leaf) the rays whose own slab test entered its box. Ordered by the entry only.
#[derive(Clone, Copy, Default)]
struct PacketKey {
    entry: f32,
    rays: u32,
}

impl PartialEq for PacketKey {
    fn eq(&self, other: &Self) -> bool {
        self.entry == other.entry
    }
}

impl PartialOrd for PacketKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        self.entry.partial_cmp(&other.entry)
    }
}

/// Eight rays walking together.
struct PacketVisitor<'a> {
    bvh: &'a Bvh,
    negative: [bool; 3],
    /// Per axis, the range of the rays' origins and of their inverse directions.
    origin_range: [(f32, f32); 3],
    inv_range: [(f32, f32); 3],
    /// The rays, a lane each.
    origin: [BoxLanes; 3],
    inv_direction: [BoxLanes; 3],
    t_min: BoxLanes,
    /// The smallest `t_min`, and the largest current `t_max`.
    t_min_low: f32,
    t_max_high: f32,
    /// Each ray's current `t_max` (its best hit's `t` once it has one).
    t_max: [f32; PACKET],
    tests: [LeafTest<'a>; PACKET],
    best: [Option<(u32, TriangleHit)>; PACKET],
}

impl<'a> PacketVisitor<'a> {
    /// The packet of `rays` (eight), or `None` when they cannot walk together.
    #[inline(always)]
    fn new(bvh: &'a Bvh, rays: &'a [Ray], options: &QueryOptions) -> Option<PacketVisitor<'a>> {
        let rays: &[Ray; PACKET] = rays.try_into().ok()?;
        let negative = rays[0].negative();
        // Incoherent groups (most random rays) leave at once.
        if rays.iter().any(|r| r.negative() != negative) {
            return None;
        }
        let mut origin = [[0.0; PACKET]; 3];
        let mut inv = [[0.0; PACKET]; 3];
        let (mut t_min, mut t_max) = ([0.0; PACKET], [0.0; PACKET]);
        for (i, ray) in rays.iter().enumerate() {
            if !(ray.is_valid() && ray.inv_direction().iter().all(|c| c.is_finite())) {
                return None;
            }
            for a in 0..3 {
                origin[a][i] = ray.origin()[a];
                inv[a][i] = ray.inv_direction()[a];
            }
            (t_min[i], t_max[i]) = (ray.t_min(), ray.t_max());
        }
        let range = |xs: &[f32; PACKET]| {
            xs.iter()
                .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &x| {
                    (lo.min(x), hi.max(x))
                })
        };
        Some(PacketVisitor {
            bvh,
            negative,
            origin_range: [0, 1, 2].map(|a| range(&origin[a])),
            inv_range: [0, 1, 2].map(|a| range(&inv[a])),
            origin: origin.map(BoxLanes::from),
            inv_direction: inv.map(BoxLanes::from),
            t_min: BoxLanes::from(t_min),
            t_min_low: range(&t_min).0,
            t_max_high: range(&t_max).1,
            t_max,
            tests: std::array::from_fn(|i| LeafTest::new(&rays[i], options)),
            best: [None; PACKET],
        })
    }

    /// The rays whose own slab test (the single-ray walk's, lane by lane) enters lane `k`'s box
    /// with their current `t_max`.
    #[inline(always)]
    fn rays_entering(&self, node: &WideNode, k: usize) -> u32 {
        let mut near = self.t_min;
        let mut far = BoxLanes::from(self.t_max);
        for a in 0..3 {
            let (lo, hi) = if self.negative[a] {
                (node.max[a][k], node.min[a][k])
            } else {
                (node.min[a][k], node.max[a][k])
            };
            let (lo, hi) = (BoxLanes::splat(lo), BoxLanes::splat(hi));
            (near, far) = slab_axis(near, far, lo, hi, self.origin[a], self.inv_direction[a]);
        }
        entered(near, far)
    }
}

/// The smallest and largest of `x · y` over `x` in `[x0, x1]` and `y` in `[y0, y1]`, lane by
/// lane: the extremes lie at the corners, for the rounded products too (rounding is
/// monotonic).
#[inline(always)]
fn product_range(x0: BoxLanes, x1: BoxLanes, y0: f32, y1: f32) -> (BoxLanes, BoxLanes) {
    let (y0, y1) = (BoxLanes::splat(y0), BoxLanes::splat(y1));
    let (a, b, c, d) = (x0 * y0, x0 * y1, x1 * y0, x1 * y1);
    (
        a.fast_min(b).fast_min(c.fast_min(d)),
        a.fast_max(b).fast_max(c.fast_max(d)),
    )
}

impl Visitor for PacketVisitor<'_> {
    type Key = PacketKey;
    const ORDERED: bool = true;

    #[inline(always)]
    fn node(&mut self, _: u32, node: &WideNode) -> (u32, [PacketKey; WIDTH]) {
        // The packet's slab test on all eight boxes: entry at least `near`, exit at most `far`
        // for every ray.
        let mut near = BoxLanes::splat(self.t_min_low);
        let mut far = BoxLanes::splat(self.t_max_high);
        for a in 0..3 {
            let (lo, hi) = if self.negative[a] {
                (node.max[a], node.min[a])
            } else {
                (node.min[a], node.max[a])
            };
            let (o0, o1) = (
                BoxLanes::splat(self.origin_range[a].0),
                BoxLanes::splat(self.origin_range[a].1),
            );
            let (i0, i1) = self.inv_range[a];
            let (lo, hi) = (BoxLanes::from(lo), BoxLanes::from(hi));
            let (t0, _) = product_range(lo - o1, lo - o0, i0, i1);
            let (_, t1) = product_range(hi - o1, hi - o0, i0, i1);
            near = raise(near, t0);
            far = lower(far, t1);
        }
        let mut mask = entered(near, far);
        let near = near.to_array();
        let mut keys = [PacketKey::default(); WIDTH];
        let mut lanes = mask;
        while lanes != 0 {
            let k = lanes.trailing_zeros() as usize;
            lanes &= lanes - 1;
            keys[k].entry = near[k];
            if node.count(k) > 0 {
                keys[k].rays = self.rays_entering(node, k);
                if keys[k].rays == 0 {
                    mask &= !(1 << k);
                }
            }
        }
        (mask, keys)
    }

    #[inline(always)]
    fn worth(&self, key: PacketKey) -> bool {
        key.entry <= widened(self.t_max_high)
    }

    #[inline(always)]
    fn leaf(&mut self, first: u32, count: u32, key: PacketKey) -> bool {
        let bvh = self.bvh;
        let mut rays = key.rays;
        while rays != 0 {
            let r = rays.trailing_zeros() as usize;
            rays &= rays - 1;
            let best = &mut self.best[r];
            self.tests[r].run(
                &bvh.leaf_packets,
                first as usize,
                count as usize,
                &mut self.t_max[r],
                |slot, h| {
                    keep_closer(&bvh.triangle_index, best, slot, h);
                    Some(h.t)
                },
            );
        }
        self.t_max_high = self.t_max.iter().fold(f32::NEG_INFINITY, |m, &t| m.max(t));
        false
    }
}

impl Bvh {
    /// The closest hits of a group of eight rays walking together, into `out`; `false`
    /// (and `out` untouched) when they cannot (see the module's opening comment).
    pub(crate) fn closest_packet(
        &self,
        group: &[Ray],
        options: &QueryOptions,
        out: &mut [Option<CompactHit>],
    ) -> bool {
        let Some(mut packet) = PacketVisitor::new(self, group, options) else {
            return false;
        };
        match Avx2::detect() {
            Some(avx2) => avx2.walk(&self.nodes, &mut packet),
            None => Portable.walk(&self.nodes, &mut packet),
        }
        for (slot, best) in out.iter_mut().zip(packet.best) {
            *slot = best.map(|found| self.ray_hit(found));
        }
        true
    }
}
