//! A sphere or a capsule moving along a ray, against a mesh: the walk enters the boxes the
//! moving shape can reach (each node's box grown by the shape's own box, tested against the
//! path of the shape's first axis end), nearest entry first, and tests the triangles of the
//! leaves it reaches in `f64` ([`crate::sweep`]), so the answer is a brute force's over
//! every triangle.
//!
//! In the mesh's own space the walk is the ray walk's ([`kernel::visit_grown`]: eight boxes
//! at once in vector registers, the boxes grown by the reach, padded for `f32`), and each
//! packet it reaches goes through a conservative `f32` prefilter, four triangles at once,
//! before the exact test: for a capsule, each triangle's own grown box and the five planes
//! that bound the region where the shape can touch it ([`touchable`]); for a sphere, a
//! cheaper pair of conditions (its path's line within the radius of the triangle, seen
//! along the motion; its centre within the radius of the plane in range:
//! [`touchable_sphere`]). Each prefilter also bounds from below when its triangles can
//! first be touched: a packet's triangles are tested nearest bound first, and those whose
//! bound lies past a contact found are skipped. A mesh moved into the world (a scene's
//! instance) is culled the same way with a bound in its own space where the scene gives
//! one, and its kept triangles moved for the exact test; else it takes the generic walk
//! with its boxes moved, in `f64`.

use crate::bvh::Bvh;
use crate::bvh::kernel::slabs::Grow;
use crate::bvh::leaf::{LANES, TrianglePacket};
use crate::bvh::query::kernel;
use crate::bvh::walk::{Visitor, walk};
use crate::bvh::wide::{WIDTH, WideNode};
use crate::sweep::{Contact, Moving};
use crate::transform::moved_box;
use crate::watertight::{largest_axis, sheared_axes};
use crate::{Culling, Ray};
use nalgebra::{Matrix4, Point3};
use wide::f32x4;

/// Boxes are entered with this much slack, relative to the sizes in the slab test, so that
/// `f64` rounding never skips a box whose triangles the exact test would touch.
const SLACK: f64 = 1e-12;

/// Where a mesh is tested: in its own space, or moved into the world (a scene's instance,
/// whose triangles are moved by `to_world` for the exact test; `mirrored` when it turns the
/// mesh inside out, which swaps the faces culling keeps).
///
/// A moved mesh is culled in one of two ways. With a `bound` (a shape in the mesh's own
/// space holding, at every `τ` the walk can reach, the moving shape's preimage under the
/// placement: see the scene's sweep), the mesh's own walk and prefilters cull with the
/// bound and only the triangles they keep are moved and tested; without one, every box is
/// moved into the world and tested one at a time in `f64` (the generic walk).
#[derive(Clone, Copy)]
pub(crate) enum Placement<'a> {
    Own,
    Moved {
        to_world: &'a Matrix4<f64>,
        mirrored: bool,
        bound: Option<&'a Moving>,
    },
}

impl Placement<'_> {
    /// The shape that culls in the mesh's own space, if one does: the moving shape itself
    /// in its own space, the bound for a moved mesh that has one.
    fn culls_with<'m>(&self, m: &'m Moving) -> Option<&'m Moving>
    where
        Self: 'm,
    {
        match *self {
            Placement::Own => Some(m),
            Placement::Moved { bound, .. } => bound,
        }
    }
}

/// The moving shape's reach around its first axis end: the box of its axis and radius
/// ([`extent`]), so a box is reachable when the end's path enters the box grown by it. In
/// `f32`, for the slab tests of a node's eight boxes or a packet's four triangles at once;
/// the single boxes' tests in `f64` take the extent from the shape itself (the rarer
/// generic walk, and a scene's instances: not stored for every sweep).
#[derive(Clone, Copy)]
pub(crate) struct Reach {
    /// The path in `f32`: where it starts, and how far a box grows below and above.
    start: [f32; 3],
    grow_lo: [f32; 3],
    grow_hi: [f32; 3],
    /// The motion, the axis and the radius in `f32`, and the start's size (`|S|₁`), for
    /// the triangles' prefilter ([`touchable`]).
    direction: [f32; 3],
    axis: [f32; 3],
    radius: f32,
    start_size: f32,
    /// The motion's size (`|D|₁` in `f32`), for the prefilters' error bounds.
    direction_size: f32,
    /// A sphere's sheared frame, for its prefilter ([`touchable_sphere`]), made when the
    /// walk first reaches a packet (a sweep that reaches none, most of those that miss, never
    /// pays for its division): the outer `None` until then, the inner one for a capsule or a
    /// still shape.
    sheared: Option<Option<Sheared>>,
}

/// The box of a moving shape's axis and radius around its first axis end (`lo ≤ 0 ≤ hi` on
/// each axis): a box is reachable when that end's path enters the box grown by it.
#[inline(always)]
fn extent(m: &Moving) -> ([f64; 3], [f64; 3]) {
    let r = m.radius;
    (
        [0, 1, 2].map(|a| m.axis[a].min(0.0) - r),
        [0, 1, 2].map(|a| m.axis[a].max(0.0) + r),
    )
}

/// The sheared frame of a sphere's motion: the watertight ray test's axes `x, y, z` (`z`
/// the motion's largest; a rotation of the mesh's, so the cross product holds), the start
/// and the motion in `f32` on them, the shear `D_x/D_z, D_y/D_z`, and the radius, rounded
/// up.
#[derive(Clone, Copy)]
struct Sheared {
    axes: [usize; 3],
    start: [f32; 3],
    direction: [f32; 3],
    shear: [f32; 2],
    radius: f32,
}

/// The `f32` slab tests' padding of each box, relative to the sizes in the test: far
/// above the rounding of the path's and reach's conversion to `f32` and of the test itself
/// (a few units in the last place), so no box is skipped that the path enters.
const PAD32: f32 = 1e-5;

impl Reach {
    // Inlined, as `ray` is: built in place rather than stored and copied, a copy whose wide
    // loads of the narrower stores just made stalled (perf, on sweeps that miss).
    #[inline(always)]
    pub(crate) fn of(m: &Moving) -> Reach {
        let start = [0, 1, 2].map(|a| m.start[a] as f32);
        let direction = [0, 1, 2].map(|a| m.direction[a] as f32);
        let (lo, hi) = extent(m);
        Reach {
            start,
            grow_lo: hi.map(|x| x as f32),
            grow_hi: lo.map(|x| -x as f32),
            direction,
            axis: [0, 1, 2].map(|a| m.axis[a] as f32),
            radius: m.radius as f32,
            start_size: start.iter().map(|x| x.abs()).sum(),
            direction_size: direction.iter().map(|x| x.abs()).sum(),
            sheared: None,
        }
    }

    /// The sheared frame of `m` (the shape this reach is of), made on first use.
    #[inline(always)]
    fn frame(&mut self, m: &Moving) -> Option<&Sheared> {
        let direction = self.direction;
        self.sheared
            .get_or_insert_with(|| Sheared::of(m, direction))
            .as_ref()
    }

    /// The `τ` at which the shape's path first reaches the box `[min, max]`, if it does
    /// at or before `limit` (the slab test on the box grown by the reach, with [`SLACK`]).
    fn entry(&self, m: &Moving, min: [f32; 3], max: [f32; 3], limit: f64) -> Option<f64> {
        let (below, above) = extent(m);
        let (mut enter, mut exit) = (0.0f64, limit);
        for a in 0..3 {
            let (s, d) = (m.start[a], m.direction[a]);
            let (lo, hi) = (f64::from(min[a]) - above[a], f64::from(max[a]) - below[a]);
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

    /// The `τ` at which the shape's path leaves the box `[min, max]` grown by the reach (as
    /// [`entry`](Self::entry) grows it), rounded up; `+∞` for a shape that does not move.
    /// Past it the shape touches nothing in the box.
    pub(crate) fn exit(&self, m: &Moving, min: [f32; 3], max: [f32; 3]) -> f64 {
        let (below, above) = extent(m);
        let mut exit = f64::INFINITY;
        for a in 0..3 {
            let d = m.direction[a];
            if d == 0.0 {
                continue;
            }
            let far = if d > 0.0 {
                f64::from(max[a]) - below[a]
            } else {
                f64::from(min[a]) - above[a]
            };
            exit = exit.min((far - m.start[a]) / d);
        }
        // A few roundings, each relative: far above them.
        exit.max(0.0) * (1.0 + 1e-9)
    }

    /// The path as the ray walk's ray, over `τ` in `[0, limit]` (rounded up), with the reach
    /// as the boxes' growth, padded by [`PAD32`] of the sizes involved so that the `f32`
    /// start and growth never leave out a box the path reaches; `None` where the path is no
    /// valid `f32` ray (beyond [`Ray::MAX_ORIGIN`]), which the generic walk then takes.
    #[inline(always)]
    fn ray(&self, limit: f64, path: Option<&Ray>) -> Option<(Ray, Grow)> {
        // The caller's ray, its reciprocals reused: itself where it is the path (from 0), else
        // from the path's start.
        let ray = match path {
            Some(path) if path.t_min() == 0.0 => path.with_t_range(0.0, up(limit)),
            Some(path) => path.with_origin(self.start, 0.0, up(limit)),
            None => Ray::with_range(self.start, self.direction, 0.0, up(limit)),
        };
        let pad =
            [0, 1, 2].map(|a| PAD32 * (self.start[a].abs() + self.grow_lo[a] + self.grow_hi[a]));
        let grow = Grow {
            below: [0, 1, 2].map(|a| self.grow_lo[a] + pad[a]),
            above: [0, 1, 2].map(|a| self.grow_hi[a] + pad[a]),
        };
        ray.is_valid().then_some((ray, grow))
    }

    /// [`entry`](Self::entry) for each used lane of `node`, its box moved by `to_world`
    /// first, one at a time in `f64` (the generic walk of a moved mesh): a bit for each lane
    /// the path reaches by `limit`, and where it enters.
    fn moved_lanes(
        &self,
        m: &Moving,
        node: &WideNode,
        to_world: &Matrix4<f64>,
        limit: f64,
    ) -> (u32, [f64; WIDTH]) {
        let mut keys = [0.0; WIDTH];
        let mut mask = 0;
        for k in node.lanes() {
            let (min, max) = node.lane_corners(k);
            let (min, max) = moved_box(to_world, min, max);
            if let Some(tau) = self.entry(m, min, max, limit) {
                keys[k] = tau;
                mask |= 1 << k;
            }
        }
        (mask, keys)
    }

    /// [`entries`](Self::entries) for the used lanes of `node` (an empty lane's infinite
    /// corners would not fail the padded test), as a walk's keys.
    #[inline(always)]
    pub(crate) fn node_entries(&self, node: &WideNode, limit: f64) -> (u32, [f64; WIDTH]) {
        let used = node.lanes().fold(0, |m, k| m | 1 << k);
        let (reached, enter) = self.entries(&node.min, &node.max, limit);
        (reached & used, enter.map(f64::from))
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
        let limit = up(limit);
        let (mut enter, mut exit) = ([0.0f32; N], [limit; N]);
        for a in 0..3 {
            // The reciprocal here, not in `of`: a sphere's walk never asks for it.
            let (s, d) = (self.start[a], self.direction[a]);
            let inv = 1.0 / d;
            for k in 0..N {
                let lo = min[a][k] - self.grow_lo[a];
                let hi = max[a][k] + self.grow_hi[a];
                let pad = PAD32 * (lo.abs() + hi.abs() + s.abs());
                let (lo, hi) = (lo - pad, hi + pad);
                if d == 0.0 {
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

impl Sheared {
    #[inline(always)]
    fn of(m: &Moving, direction: [f32; 3]) -> Option<Sheared> {
        if m.axis != nalgebra::Vector3::zeros() {
            return None;
        }
        let z = largest_axis(&direction);
        let axes = sheared_axes(z, false);
        let across = 1.0 / m.direction[z];
        // A zero, infinite or NaN motion has none (the other prefilter keeps what it must):
        // its largest component is then 0, infinite or NaN.
        if !(across.is_finite() && across != 0.0) {
            return None;
        }
        Some(Sheared {
            axes,
            start: axes.map(|a| m.start[a] as f32),
            direction: axes.map(|a| direction[a]),
            shear: [0, 1].map(|k| (m.direction[axes[k]] * across) as f32),
            radius: (m.radius * (1.0 + 1e-5)) as f32,
        })
    }
}

/// `limit` in `f32`, rounded up, so a box or triangle entered exactly at the limit (a tie)
/// is kept.
fn up(limit: f64) -> f32 {
    (limit as f32) * (1.0 + 1e-6)
}

/// The lanes of `packet` whose triangle's box the path reaches by `limit`, a bit each
/// (a leaf asks only for its own lanes; empty ones hold NaN corners).
#[inline(always)]
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

/// The prefilter's error bound, in units of its scale (see [`touchable`]): 256 units of
/// `2⁻²⁴`, several times the roundings of its cross and dot products in `f32` and of the
/// start's conversion to `f32`.
const TOUCH_ERROR: f32 = 256.0 * f32::EPSILON / 2.0;

/// The lanes of `packet` whose triangle the moving shape may touch by `limit`, a bit each,
/// and for each a lower bound of the `τ` at which it can first touch (the path's entry into
/// the polytope below): a conservative test in `f32`, four triangles at once, before the
/// exact one in `f64`.
///
/// The shape's first axis end `x` can only touch a triangle `T` while it lies in the
/// Minkowski sum of `T` and the reflected shape, and so in the larger polytope cut out by
/// five planes: the triangle's plane and the planes through its edges at right angles to
/// it, each moved out by the shape's support (`g·x ≤ g·p + r·|g| + max(0, −g·axis)` for a
/// plane of normal `g` through a corner `p`). Along the path `x = S + τ·D` each plane
/// bounds `τ` on one side, so the path's time in the polytope is a slab test on five
/// planes. Every quantity is widened by [`TOUCH_ERROR`] of its scale (the edges' lengths'
/// product, the start's size), so no triangle the exact test would touch is skipped; a
/// `NaN` anywhere keeps the triangle.
#[inline(always)]
fn touchable(packet: &TrianglePacket, reach: &Reach, limit: f64) -> (u32, [f32; LANES]) {
    type L = f32x4;
    let load = |v: &[[f32; LANES]; 3]| v.map(L::from);
    let (a, b, c) = (load(&packet.a), load(&packet.b), load(&packet.c));
    let sub = |p: [L; 3], q: [L; 3]| [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
    let cross = |p: [L; 3], q: [L; 3]| {
        [
            p[1] * q[2] - p[2] * q[1],
            p[2] * q[0] - p[0] * q[2],
            p[0] * q[1] - p[1] * q[0],
        ]
    };
    let dot = |p: [L; 3], q: [L; 3]| p[0] * q[0] + p[1] * q[1] + p[2] * q[2];
    let size = |p: [L; 3]| p[0].abs() + p[1].abs() + p[2].abs();
    let splat = |v: [f32; 3]| v.map(L::splat);
    let (start, direction, axis) = (
        splat(reach.start),
        splat(reach.direction),
        splat(reach.axis),
    );
    let radius = L::splat(reach.radius);
    let direction_size = L::splat(reach.direction_size);
    let axis_size = L::splat(reach.axis.iter().map(|x| x.abs()).sum());
    let start_size = L::splat(reach.start_size);
    let edges = [sub(b, a), sub(c, b), sub(a, c)];
    let normal = cross(edges[0], sub(c, a));
    let normal_length = dot(normal, normal).sqrt();
    let sizes = edges.map(size);
    // The scale of the normal's rounding: the product of the two edges' sizes.
    let normal_scale = sizes[0] * sizes[2];
    let mut enter = L::ZERO;
    let mut exit = L::splat(up(limit));
    let mut bound = |g: [L; 3], corner: [L; 3], length: L, scale: L| {
        let error = L::splat(TOUCH_ERROR) * scale;
        let w = sub(start, corner);
        let from = dot(g, w) - error * (size(w) + start_size);
        let rate = dot(g, direction) - error * direction_size;
        let support = radius * length + (-dot(g, axis)).max(L::ZERO) + error * (radius + axis_size);
        let room = support - from;
        let t = room / rate;
        exit = rate.simd_gt(L::ZERO).bitselect(exit.min(t), exit);
        enter = rate.simd_lt(L::ZERO).bitselect(enter.max(t), enter);
        let never = rate.simd_eq(L::ZERO) & room.simd_lt(L::ZERO);
        exit = never.bitselect(L::splat(f32::NEG_INFINITY), exit);
    };
    let below = normal.map(|x| -x);
    bound(normal, a, normal_length, normal_scale);
    bound(below, a, normal_length, normal_scale);
    for ((edge, corner), edge_size) in edges.into_iter().zip([a, b, c]).zip(sizes) {
        let out = cross(edge, normal);
        let length = dot(edge, edge).sqrt() * normal_length;
        bound(out, corner, length, normal_scale * edge_size);
    }
    // Kept unless surely empty: a NaN compares false.
    let empty = enter.simd_gt(exit).to_bitmask();
    (!empty & ((1 << LANES) - 1), enter.to_array())
}

/// [`touchable`] for a sphere, cheaper: the lanes of `packet` whose triangle the sphere
/// may touch by `limit`, a bit each, and for each a lower bound of the `τ` at which it can
/// first touch (for testing the nearest first and skipping those past a contact found).
///
/// Two conditions the sphere must meet to touch the triangle, conservative in `f32`:
/// - *The line of its path passes within the radius of the triangle.* Seen along the
///   motion, in the frame sheared as the watertight ray test's (`x − s_x·z`, `y − s_y·z`,
///   an oblique projection `P` along `D`), the path is a point and the triangle a
///   triangle, and the sphere's shadow is an ellipse: the ball projected, whose reach in a
///   direction `ν` is `r·|Pᵀν|`. So the point lies within that reach of each edge's line
///   (`ν` at right angles to the edge), on the inner side for one of the two windings (so a
///   triangle seen edge on is kept). (A circle of the ellipse's largest radius,
///   `r·|D|/|D_z|`, was this test's first form: as much as √3 times wider across an edge.)
/// - *Its centre comes within the radius of the triangle's plane* for some `τ` in
///   `[0, limit]`: the plane's signed distance is linear in `τ`, so its values at both
///   ends decide; where it starts off the slab, the distance over the speed it closes at
///   bounds the entry from below.
///
/// Everything is taken relative to the first corner (one rounded subtraction from the
/// start), so the roundings scale with the edges' sizes and the distance to the start;
/// each comparison is widened by [`TOUCH_ERROR`] of those scales. A `NaN` keeps the lane,
/// but for an unused one's.
#[inline(always)]
fn touchable_sphere(
    packet: &TrianglePacket,
    reach: &Reach,
    sheared: &Sheared,
    limit: f64,
) -> (u32, [f32; LANES]) {
    type L = f32x4;
    // On the sheared frame's axes.
    let load = |v: &[[f32; LANES]; 3]| sheared.axes.map(|axis| L::from(v[axis]));
    let (a, b, c) = (load(&packet.a), load(&packet.b), load(&packet.c));
    let sub = |p: [L; 3], q: [L; 3]| [p[0] - q[0], p[1] - q[1], p[2] - q[2]];
    let dot = |p: [L; 3], q: [L; 3]| p[0] * q[0] + p[1] * q[1] + p[2] * q[2];
    let size = |p: [L; 3]| p[0].abs() + p[1].abs() + p[2].abs();
    let start = sheared.start.map(L::splat);
    let (ab, ac, w) = (sub(b, a), sub(c, a), sub(start, a));
    let bc = sub(ac, ab);
    let (ab_size, ac_size) = (size(ab), size(ac));
    let w_size = size(w) + L::splat(reach.start_size);
    let error = L::splat(TOUCH_ERROR);
    // Across the motion: each edge's function at the path's point.
    let [sx, sy] = sheared.shear.map(L::splat);
    let flat = |v: [L; 3]| (v[0] - sx * v[2], v[1] - sy * v[2]);
    let (ab2, ac2, w2, bc2) = (flat(ab), flat(ac), flat(w), flat(bc));
    let cross = |p: (L, L), q: (L, L)| p.0 * q.1 - p.1 * q.0;
    // How far the sphere's shadow reaches across an edge: the support of the ball of radius
    // 1 projected along the motion, in the direction at right angles to the edge `p` (its
    // length times the unit normal's reach), `|Pᵀ·(−p.1, p.0)|` with `P` the shear.
    let support = |p: (L, L)| {
        let tilt = sy * p.0 - sx * p.1;
        (p.0 * p.0 + p.1 * p.1 + tilt * tilt).sqrt()
    };
    let from_b = (w2.0 - ab2.0, w2.1 - ab2.1);
    let from_c = (w2.0 - ac2.0, w2.1 - ac2.1);
    let functions = [cross(ab2, w2), cross(bc2, from_b), cross(from_c, ac2)];
    let reaches = [support(ab2), support(bc2), support(ac2)];
    let scale = w_size + ab_size + ac_size + L::splat(reach.radius);
    let sizes = [ab_size, size(bc), ac_size];
    let radius = L::splat(sheared.radius);
    let (mut outside_one, mut outside_other) = (L::ZERO.simd_ne(L::ZERO), L::ZERO.simd_ne(L::ZERO));
    for i in 0..3 {
        let room = radius * reaches[i] + error * sizes[i] * scale;
        outside_one |= functions[i].simd_lt(-room);
        outside_other |= functions[i].simd_gt(room);
    }
    // Unused lanes hold NaN corners.
    let used = a[0].simd_eq(a[0]).to_bitmask();
    let across = (outside_one & outside_other).to_bitmask();
    if across & used == used {
        // Every triangle lies off the path's line: the plane's test is not needed.
        return (0, [0.0; LANES]);
    }
    // Along it: the plane's signed distance `f + τ·q` (in units of `|n|`) over `[0, limit]`.
    let n = [
        ab[1] * ac[2] - ab[2] * ac[1],
        ab[2] * ac[0] - ab[0] * ac[2],
        ab[0] * ac[1] - ab[1] * ac[0],
    ];
    let direction = sheared.direction.map(L::splat);
    let direction_size = L::splat(reach.direction_size);
    let (f, q) = (dot(n, w), dot(n, direction));
    let normal_scale = ab_size * ac_size;
    let limit = L::splat(up(limit));
    let rate_error = error * normal_scale * direction_size;
    // The slab's half width at the start, and at the limit (where `q`'s error has grown).
    let slab = L::splat(reach.radius) * dot(n, n).sqrt()
        + error * normal_scale * (w_size + L::splat(reach.radius));
    let end_slab = slab + limit * rate_error;
    let end = f + limit * q;
    let above = f.simd_gt(end_slab) & end.simd_gt(end_slab);
    let below = f.simd_lt(-end_slab) & end.simd_lt(-end_slab);
    let never = (outside_one & outside_other) | above | below;
    // The entry's lower bound: `(|f| − slab) / (|q| + its error)`, zero where it starts in.
    let enter = (f.abs() - slab) / (q.abs() + rate_error);
    let enter = enter.simd_gt(L::ZERO).bitselect(enter, L::ZERO);
    (!never.to_bitmask() & used, enter.to_array())
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
    /// `path`, where given, is the caller's ray that `m` moves along in the mesh's own space
    /// (its direction `m`'s exactly, and `m` starting at its `t_min`): the walk takes its
    /// reciprocals, and where its range starts at 0 (its origin `m`'s start) the ray itself,
    /// its checks already made.
    // Inlined into the function that makes `m` (the walk itself is not): `m` read where it
    // is made, not loaded in other widths than it was stored in.
    #[inline(always)]
    pub(crate) fn first_contact(
        &self,
        m: &Moving,
        limit: f64,
        culling: Culling,
        placement: Placement<'_>,
        path: Option<&Ray>,
    ) -> Option<(u32, Contact)> {
        let own = placement.culls_with(m);
        let path = path.filter(|_| matches!(placement, Placement::Own));
        let mut visitor = SweepVisitor {
            bvh: self,
            m,
            culls: own.unwrap_or(m),
            reach: Reach::of(own.unwrap_or(m)),
            own: own.is_some(),
            limit,
            culling,
            placement,
            best: None,
        };
        let own_ray = if visitor.own {
            visitor.reach.ray(limit, path)
        } else {
            None
        };
        match own_ray {
            // In its own space, the ray walk (vector slab tests, eight boxes at once) over
            // the boxes grown by the reach.
            Some((ray, grow)) => kernel::visit_grown::<{ kernel::NEAREST_FIRST }, _>(
                &self.nodes,
                self.depth,
                &ray,
                &grow,
                ray.t_max(),
                #[inline(always)]
                |packet, end| {
                    let before = visitor.limit;
                    visitor.packet(packet as usize, (1 << LANES) - 1);
                    if visitor.limit != before {
                        *end = up(visitor.limit);
                    }
                    false
                },
            ),
            None => generic_walk(&self.nodes, &mut visitor),
        }
        let index = &self.triangle_index;
        visitor.best.map(|(slot, contact)| (index[slot], contact))
    }
}

/// The generic walk ([`walk`]) of a sweep, out of line: taken by a moved mesh without an
/// own-space bound and by a path beyond `f32`'s rays, it would otherwise be compiled into
/// every sweep's frame.
#[inline(never)]
fn generic_walk(nodes: &[WideNode], visitor: &mut SweepVisitor<'_>) {
    walk(nodes, visitor);
}

/// The sweep's walk: nearest box entry first, boxes entered after the best contact skipped.
struct SweepVisitor<'a> {
    bvh: &'a Bvh,
    m: &'a Moving,
    /// The shape that culls: `m`, or its own-space bound for a moved mesh.
    culls: &'a Moving,
    /// The reach of the shape that culls.
    reach: Reach,
    /// Whether the boxes and prefilters are the mesh's own (the reach in its space).
    own: bool,
    /// The best contact's `τ` so far (the caller's limit at first).
    limit: f64,
    culling: Culling,
    placement: Placement<'a>,
    /// The best contact so far and its packet slot (`packet · 4 + lane`): the slot's
    /// triangle number is read from the map only where it decides (a tie, a shape touching
    /// where it starts) and once at the end, as the map is a read from anywhere (most
    /// contacts a walk finds are beaten by a later one).
    best: Option<(usize, Contact)>,
}

impl Visitor for SweepVisitor<'_> {
    type Key = f64;
    const ORDERED: bool = true;

    fn node(&mut self, _: u32, node: &WideNode) -> (u32, [f64; WIDTH]) {
        match self.placement {
            Placement::Moved { to_world, .. } if !self.own => {
                self.reach.moved_lanes(self.m, node, to_world, self.limit)
            }
            _ => self.reach.node_entries(node, self.limit),
        }
    }

    fn worth(&self, tau: f64) -> bool {
        tau <= self.limit
    }

    fn leaf(&mut self, first: u32, count: u32, _: f64) -> bool {
        // The slots `first..end`, packet by packet.
        let first = first as usize * LANES;
        let end = first + count as usize;
        for packet in first / LANES..end.div_ceil(LANES) {
            let lanes = (0..LANES)
                .filter(|k| (first..end).contains(&(packet * LANES + k)))
                .fold(0, |m, k| m | 1 << k);
            self.packet(packet, lanes);
        }
        false
    }
}

impl SweepVisitor<'_> {
    /// Tests the triangles of `packet` in `lanes` (a bit each), keeping the first contact.
    // Out of line: the walk is compiled once for each of the eight octants of the motion, and
    // with the prefilters and the exact test inlined in each copy, sweeps in changing
    // directions ran out of the instruction cache; one copy of this costs a call.
    #[inline(never)]
    fn packet(&mut self, packet: usize, lanes: u32) {
        let leaf = &self.bvh.leaf_packets[packet];
        // Each triangle's own box and the prefilter, four at a time, skip most exact tests
        // (where the culling shape is in the mesh's space: the generic walk's is the
        // world's).
        // The lanes to test, nearest lower bound of entry first (each test may bring the
        // limit down past the next ones').
        let mut order = [(0.0f32, 0usize); LANES];
        let mut count = 0;
        if self.own {
            let (touched, enter) = if let Some(&sheared) = self.reach.frame(self.culls) {
                let (touched, enter) = touchable_sphere(leaf, &self.reach, &sheared, self.limit);
                (lanes & touched, enter)
            } else {
                let boxes = lanes & triangle_boxes(leaf, &self.reach, self.limit);
                if boxes == 0 {
                    return;
                }
                let (touched, enter) = touchable(leaf, &self.reach, self.limit);
                (boxes & touched, enter)
            };
            let mut rest = touched;
            while rest != 0 {
                let lane = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                let mut k = count;
                while k > 0 && order[k - 1].0 > enter[lane] {
                    order[k] = order[k - 1];
                    k -= 1;
                }
                order[k] = (enter[lane], lane);
                count += 1;
            }
        } else {
            let mut rest = lanes;
            while rest != 0 {
                order[count] = (f32::NEG_INFINITY, rest.trailing_zeros() as usize);
                rest &= rest - 1;
                count += 1;
            }
        }
        for &(enter, lane) in &order[..count] {
            if enter > up(self.limit) {
                break;
            }
            // Touching already where it starts (`τ = 0`, which nothing precedes), only a lower
            // triangle can still be the answer (as a shape starting on a surface finds every
            // triangle within its radius).
            let slot = packet * LANES + lane;
            if self.limit == 0.0
                && let Some((best, _)) = self.best
                && self.bvh.triangle_index[slot] > self.bvh.triangle_index[best]
            {
                continue;
            }
            let tri = leaf.get(lane);
            let mut corners = [tri.a, tri.b, tri.c].map(|q| Point3::from(q).cast::<f64>());
            let mut mirrored = false;
            if let Placement::Moved {
                to_world,
                mirrored: m,
                ..
            } = self.placement
            {
                corners = corners.map(|q| to_world.transform_point(&q));
                mirrored = m;
            }
            if self.culling != Culling::None {
                let [a, b, c] = corners;
                let rate = (b - a).cross(&(c - a)).dot(&self.m.direction);
                if !kept(self.culling, rate, mirrored) {
                    continue;
                }
            }
            let Some(contact) = self.m.first_contact(corners, self.limit) else {
                continue;
            };
            let better = match &self.best {
                None => true,
                Some((best, bc)) => {
                    let index = &self.bvh.triangle_index;
                    contact.tau < bc.tau || (contact.tau == bc.tau && index[slot] < index[*best])
                }
            };
            if better {
                self.limit = contact.tau;
                self.best = Some((slot, contact));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::splitmix::SplitMix64;
    use crate::triangle::LeafTriangle;
    use nalgebra::Vector3;

    /// The prefilter keeps every triangle the exact test touches by the limit: random
    /// triangles small and large, near and far from the origin, spheres and capsules aimed
    /// at points on their faces, edges and corners, a radius off the plane or moving along
    /// it (grazing), with limits just past and just before the contact.
    #[test]
    fn the_prefilter_keeps_every_triangle_the_exact_test_touches() {
        let mut rng = SplitMix64(41);
        let signed = |rng: &mut SplitMix64| rng.unit_f64() * 2.0 - 1.0;
        let (mut touched, mut kept, mut spheres) = (0, 0, 0);
        for case in 0..30_000 {
            let scale = [1e-3, 1.0, 1e3][case % 3];
            let offset = [0.0, 1e4][case / 3 % 2];
            let corner = |rng: &mut SplitMix64| {
                Point3::new(
                    (offset + scale * signed(rng)) as f32,
                    (scale * signed(rng)) as f32,
                    (scale * signed(rng)) as f32,
                )
            };
            let [a, b, c] = [corner(&mut rng), corner(&mut rng), corner(&mut rng)];
            let corners = [a, b, c].map(|p| p.cast::<f64>());
            let n = (corners[1] - corners[0]).cross(&(corners[2] - corners[0]));
            let Some(unit) = n.try_normalize(0.0) else {
                continue;
            };
            // A point of the triangle: inside, on an edge or at a corner.
            let (mut u, mut v) = (rng.unit_f64(), rng.unit_f64());
            if u + v > 1.0 {
                (u, v) = (1.0 - u, 1.0 - v);
            }
            match case / 6 % 4 {
                1 => u = 0.0,
                2 => (u, v) = (1.0, 0.0),
                _ => {}
            }
            let on = corners[0] + (corners[1] - corners[0]) * u + (corners[2] - corners[0]) * v;
            let radius = f64::from((scale * 0.1 * rng.unit_f64()) as f32);
            let axis = if case % 5 == 0 {
                Vector3::new(signed(&mut rng), signed(&mut rng), signed(&mut rng))
                    .map(|x| f64::from((x * scale * 0.1) as f32))
            } else {
                Vector3::zeros()
            };
            let mut direction = Vector3::new(signed(&mut rng), signed(&mut rng), signed(&mut rng));
            let mut target = on + unit * radius * [1.0, -1.0][case % 2];
            if case % 7 == 0 {
                // Grazing: moving along the plane, a radius above it.
                direction -= unit * unit.dot(&direction);
            } else if case % 7 == 1 {
                target = on;
            }
            let direction = direction.map(|x| f64::from(x as f32));
            let tau = scale * (0.1 + rng.unit_f64());
            let m = Moving {
                start: target - direction * tau,
                axis,
                direction,
                radius,
            };
            let limit = tau * [1.0, 1.5, 0.999_999][case % 3];
            let Some(contact) = m.first_contact(corners, limit) else {
                continue;
            };
            touched += 1;
            let mut packet = TrianglePacket::EMPTY;
            let lane = case % LANES;
            packet.set(lane, &LeafTriangle::new(&a, &b, &c));
            let mut reach = Reach::of(&m);
            let sheared = reach.frame(&m).copied();
            assert!(
                touchable(&packet, &reach, limit).0 & 1 << lane != 0,
                "case {case}: {m:?} touches {:?} at {} by {limit}",
                [a, b, c],
                contact.tau
            );
            kept += u32::from(triangle_boxes(&packet, &reach, limit) & 1 << lane != 0);
            let enter = touchable(&packet, &reach, limit).1;
            assert!(
                enter[lane] <= up(contact.tau),
                "case {case}: enters after the contact"
            );
            if let Some(sheared) = &sheared {
                spheres += 1;
                let (touched, enter) = touchable_sphere(&packet, &reach, sheared, limit);
                assert!(
                    touched & 1 << lane != 0,
                    "case {case}: the sphere's prefilter drops {m:?}, touching {:?} at {} by {limit}",
                    [a, b, c],
                    contact.tau
                );
                assert!(
                    enter[lane] <= up(contact.tau),
                    "case {case}: the sphere enters after the contact"
                );
                assert_eq!(
                    touched & !(1 << lane),
                    0,
                    "case {case}: an unused lane kept"
                );
            }
        }
        assert!(touched > 10_000, "{touched} contacts");
        assert!(spheres > 8_000, "{spheres} spheres' contacts");
        assert_eq!(kept, touched, "the triangles' boxes keep them all too");
    }
}
