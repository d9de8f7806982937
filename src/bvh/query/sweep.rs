//! A sphere or a capsule moving along a ray, against a mesh: the walk enters the boxes the
//! moving shape can reach (each node's box grown by the shape's own box, tested against the
//! path of the shape's first axis end), nearest entry first, and tests the triangles of the
//! leaves it reaches in `f64` ([`crate::sweep`]), so the answer is a brute force's over
//! every triangle.

use crate::Culling;
use crate::bvh::Bvh;
use crate::bvh::leaf::{LANES, TrianglePacket};
use crate::bvh::walk::{Visitor, walk};
use crate::bvh::wide::{WIDTH, WideNode};
use crate::sweep::{Contact, Moving};
use crate::transform::moved_box;
use nalgebra::{Matrix4, Point3};

/// Boxes are entered with this much slack, relative to the sizes in the slab test, so that
/// `f64` rounding never skips a box whose triangles the exact test would touch.
const SLACK: f64 = 1e-12;

/// Where a mesh is tested: in its own space, or moved into the world (a scene's instance,
/// whose triangles and boxes are moved by `to_world`; `mirrored` when it turns the mesh
/// inside out, which swaps the faces culling keeps).
#[derive(Clone, Copy)]
pub(crate) enum Placement<'a> {
    Own,
    Moved {
        to_world: &'a Matrix4<f64>,
        mirrored: bool,
    },
}

/// The moving shape's reach around its first axis end: the box of its axis and radius
/// (`lo ≤ 0 ≤ hi` on each axis), so a box is reachable when the end's path enters the box
/// grown by it. Kept in `f64` for the exact tests' single boxes, and in `f32` for the slab
/// tests of a node's eight boxes or a packet's four triangles at once.
#[derive(Clone, Copy)]
pub(crate) struct Reach {
    lo: [f64; 3],
    hi: [f64; 3],
    /// The path in `f32`: where it starts, its reciprocal direction (per axis; `still`
    /// where the direction is zero), and how far a box grows below and above.
    start: [f32; 3],
    inv: [f32; 3],
    still: [bool; 3],
    grow_lo: [f32; 3],
    grow_hi: [f32; 3],
}

/// The `f32` slab tests' padding of each box, relative to the sizes in the test: far
/// above the rounding of the path's and reach's conversion to `f32` and of the test itself
/// (a few units in the last place), so no box is skipped that the path enters.
const PAD32: f32 = 1e-5;

impl Reach {
    pub(crate) fn of(m: &Moving) -> Reach {
        let r = m.radius;
        let lo = [0, 1, 2].map(|a| m.axis[a].min(0.0) - r);
        let hi = [0, 1, 2].map(|a| m.axis[a].max(0.0) + r);
        Reach {
            lo,
            hi,
            start: [0, 1, 2].map(|a| m.start[a] as f32),
            inv: [0, 1, 2].map(|a| (1.0 / m.direction[a]) as f32),
            still: [0, 1, 2].map(|a| m.direction[a] == 0.0),
            grow_lo: hi.map(|x| x as f32),
            grow_hi: lo.map(|x| -x as f32),
        }
    }

    /// The `τ` at which the shape's path first reaches the box `[min, max]`, if it does
    /// at or before `limit` (the slab test on the box grown by the reach, with [`SLACK`]).
    fn entry(&self, m: &Moving, min: [f32; 3], max: [f32; 3], limit: f64) -> Option<f64> {
        let (mut enter, mut exit) = (0.0f64, limit);
        for a in 0..3 {
            let (s, d) = (m.start[a], m.direction[a]);
            let (lo, hi) = (
                f64::from(min[a]) - self.hi[a],
                f64::from(max[a]) - self.lo[a],
            );
            let pad = SLACK * (lo.abs() + hi.abs() + s.abs());
            let (lo, hi) = (lo - pad, hi + pad);
            if d == 0.0 {
                // NaN bounds (an empty lane) fail both comparisons: never reached.
                if !(lo <= s && s <= hi) {
                    return None;
                }
                continue;
            }
            let (t0, t1) = ((lo - s) / d, (hi - s) / d);
            let (near, far) = if d > 0.0 { (t0, t1) } else { (t1, t0) };
            let slack = SLACK * near.abs().max(far.abs());
            enter = enter.max(near - slack);
            exit = exit.min(far + slack);
        }
        (enter <= exit).then_some(enter.max(0.0))
    }

    /// [`entry`](Self::entry) for each used lane of `node`, one at a time in `f64`, its box
    /// moved by `to_world` first when given: a bit for each lane the path reaches by
    /// `limit`, and where it enters.
    pub(crate) fn lanes(
        &self,
        m: &Moving,
        node: &WideNode,
        to_world: Option<&Matrix4<f64>>,
        limit: f64,
    ) -> (u32, [f64; WIDTH]) {
        let mut keys = [0.0; WIDTH];
        let mut mask = 0;
        for k in node.lanes() {
            let (min, max) = node.lane_corners(k);
            let (min, max) = to_world.map_or((min, max), |w| moved_box(w, min, max));
            if let Some(tau) = self.entry(m, min, max, limit) {
                keys[k] = tau;
                mask |= 1 << k;
            }
        }
        (mask, keys)
    }

    /// [`entry`](Self::entry) for `N` finite boxes at once (lanes, `min[axis][lane]`), in
    /// `f32` with [`PAD32`]: a bit for each box the path reaches by `limit`, and where it
    /// enters (a lower bound of the exact entry). Branch-free over the lanes, so the
    /// compiler keeps each axis in vector registers.
    #[inline(always)]
    pub(crate) fn entries<const N: usize>(
        &self,
        min: &[[f32; N]; 3],
        max: &[[f32; N]; 3],
        limit: f64,
    ) -> (u32, [f32; N]) {
        // Rounded up, so a box entered exactly at the limit (a tie) is kept.
        let limit = (limit as f32) * (1.0 + 1e-6);
        let (mut enter, mut exit) = ([0.0f32; N], [limit; N]);
        for a in 0..3 {
            let (s, inv) = (self.start[a], self.inv[a]);
            for k in 0..N {
                let lo = min[a][k] - self.grow_lo[a];
                let hi = max[a][k] + self.grow_hi[a];
                let pad = PAD32 * (lo.abs() + hi.abs() + s.abs());
                let (lo, hi) = (lo - pad, hi + pad);
                if self.still[a] {
                    if !(lo <= s && s <= hi) {
                        exit[k] = f32::NEG_INFINITY;
                    }
                } else {
                    let (t0, t1) = ((lo - s) * inv, (hi - s) * inv);
                    enter[k] = enter[k].max(t0.min(t1));
                    exit[k] = exit[k].min(t0.max(t1));
                }
            }
        }
        let mut mask = 0;
        for k in 0..N {
            mask |= u32::from(enter[k] <= exit[k]) << k;
        }
        (mask, enter)
    }
}

/// The lanes of `packet` whose triangle's box the path reaches by `limit`, a bit each
/// (a leaf asks only for its own lanes; empty ones hold NaN corners).
fn triangle_boxes(packet: &TrianglePacket, reach: &Reach, limit: f64) -> u32 {
    let mut min = [[0.0f32; LANES]; 3];
    let mut max = [[0.0f32; LANES]; 3];
    for a in 0..3 {
        for k in 0..LANES {
            let (x, y, z) = (packet.a[a][k], packet.b[a][k], packet.c[a][k]);
            min[a][k] = x.min(y).min(z);
            max[a][k] = x.max(y).max(z);
        }
    }
    reach.entries(&min, &max, limit).0
}

/// Whether `culling` keeps a triangle of normal `n` (as its corners wind, after any move)
/// against the shape's motion `rate = n·D`: as for rays, back faces are those the motion
/// meets from behind (`n·D ≥ 0`), and a mirror swaps the two.
fn kept(culling: Culling, rate: f64, mirrored: bool) -> bool {
    let rate = if mirrored { -rate } else { rate };
    match culling {
        Culling::None => true,
        Culling::Back => rate < 0.0,
        Culling::Front => rate > 0.0,
    }
}

impl Bvh {
    /// The first contact of `m` with a triangle of this mesh at `τ ≤ limit` (placed as
    /// `placement` says), ties to the lowest triangle number: the triangle and where.
    pub(crate) fn first_contact(
        &self,
        m: &Moving,
        limit: f64,
        culling: Culling,
        placement: Placement<'_>,
    ) -> Option<(u32, Contact)> {
        let mut visitor = SweepVisitor {
            bvh: self,
            m,
            reach: Reach::of(m),
            limit,
            culling,
            placement,
            best: None,
        };
        walk(&self.nodes, &mut visitor);
        visitor.best
    }
}

/// The sweep's walk: nearest box entry first, boxes entered after the best contact skipped.
struct SweepVisitor<'a> {
    bvh: &'a Bvh,
    m: &'a Moving,
    reach: Reach,
    /// The best contact's `τ` so far (the caller's limit at first).
    limit: f64,
    culling: Culling,
    placement: Placement<'a>,
    best: Option<(u32, Contact)>,
}

impl Visitor for SweepVisitor<'_> {
    type Key = f64;
    const ORDERED: bool = true;

    fn node(&mut self, _: u32, node: &WideNode) -> (u32, [f64; WIDTH]) {
        let Placement::Moved { to_world, .. } = self.placement else {
            let used = node.lanes().fold(0, |m, k| m | 1 << k);
            let (reached, enter) = self.reach.entries(&node.min, &node.max, self.limit);
            return (reached & used, enter.map(f64::from));
        };
        self.reach.lanes(self.m, node, Some(to_world), self.limit)
    }

    fn worth(&self, tau: f64) -> bool {
        tau <= self.limit
    }

    fn leaf(&mut self, first: u32, count: u32, _: f64) -> bool {
        let first = first as usize * LANES;
        let end = first + count as usize;
        let mut near = 0;
        for slot in first..end {
            let (packet, lane) = (slot / LANES, slot % LANES);
            if lane == 0 || slot == first {
                // Each triangle's own box, four at a time, skips most exact tests (in its own
                // space only: a moved mesh's boxes are the world's).
                near = match self.placement {
                    Placement::Own => {
                        triangle_boxes(&self.bvh.leaf_packets[packet], &self.reach, self.limit)
                    }
                    Placement::Moved { .. } => u32::MAX,
                };
            }
            if near & 1 << lane == 0 {
                continue;
            }
            let tri = self.bvh.leaf_packets[packet].get(lane);
            let mut corners = [tri.a, tri.b, tri.c].map(|q| Point3::from(q).cast::<f64>());
            let mut mirrored = false;
            if let Placement::Moved {
                to_world,
                mirrored: m,
            } = self.placement
            {
                corners = corners.map(|q| to_world.transform_point(&q));
                mirrored = m;
            }
            let [a, b, c] = corners;
            let rate = (b - a).cross(&(c - a)).dot(&self.m.direction);
            if !kept(self.culling, rate, mirrored) {
                continue;
            }
            let Some(contact) = self.m.first_contact(corners, self.limit) else {
                continue;
            };
            // Read only now: the map is a read from anywhere, and most triangles tested are
            // not touched.
            let triangle = self.bvh.triangle_index[slot];
            let better = match &self.best {
                None => true,
                Some((bt, bc)) => contact.tau < bc.tau || (contact.tau == bc.tau && triangle < *bt),
            };
            if better {
                self.limit = contact.tau;
                self.best = Some((triangle, contact));
            }
        }
        false
    }
}
