//! The new single-ray walk (issue 38), built up from the fastest known design rather than
//! tuned down from the old one: first a floor that matches tinybvh's instruction count, then
//! each of meshray's guarantees added at a measured price. It walks the `Bvh`'s tree
//! ([`WideNode`], laid out by [`ray_node`](crate::bvh::ray_node)); its exact level is what
//! `Bvh::closest_hit`, `any_hit` and `cast_ray` run.
//!
//! One walk per ray octant (the direction's sign bits, a const parameter), compiled for
//! AVX2 and FMA and again for AVX-512, with the leaf test inside it, so the ray's vectors
//! stay in registers for the whole query. Per node visit: the six slab distances (by level,
//! below), the clamp to the ray's range, a compare into a mask; one child entered goes
//! straight on; two or more are permuted into the node's order for the octant (farthest
//! first), compacted by the table [`COMPACT`] and pushed with one store per array, the
//! nearest then taken back off the top; at a node whose children overlap too much for any
//! order made ahead ([`SORT`](crate::bvh::ray_node::SORT)), sorted by distance instead. A
//! leaf lane is one packet of four triangles. An any hit pushes the entered lanes in lane
//! order with no distances, never culls at the pop, and ends at the first accepted lane.
//! The watertight levels' walks are compiled per largest axis of the direction too (a const
//! parameter beside the octant), so the shear's axes are constants.
//!
//! The guarantees, in the order the issue adds them, are the const `LEVEL`:
//! - [`FLOOR`]: slabs as fused multiply-subtracts against `origin · (1/d)`, the reciprocal
//!   clamped as tinybvh clamps it; Möller–Trumbore on the packet's corners. Not exact: the
//!   yardstick.
//! - [`WATERTIGHT`]: the edge test of Woop, Benthin and Wald (2013) in the ray's sheared
//!   space, edge functions re-evaluated in `f64` where one is exactly zero, `t` the sheared
//!   form's `f32` quotient.
//! - [`SLABS`]: the watertight level with the exact level's slabs (below), to price them.
//! - [`EXACT`]: every answer the scalar watertight test gives, bit for bit — what
//!   [`Bvh::cast_ray`](crate::query::RayCast::cast_ray) answers. The slabs as `(bound − o)·(1/d)`
//!   (a relative error of a few ulps wherever the origin is, `±0` directions giving `±inf`,
//!   a `NaN` plane keeping the bound) with the far planes' reciprocals and the range's end
//!   widened by `2⁻²⁰`, so no box that holds a hit up to the `f64` plane's `t` is culled;
//!   the edge test's lanes kept only where the sheared `f32` `t`, give or take a
//!   conservative bound on its error (Pharr, Jakob and Humphreys, *Physically Based
//!   Rendering*, 3rd ed., §3.9.6), can land in the range, then finished by the scalar test
//!   (the `f64` plane's `t`, the degenerate and nearly-parallel rules); ties to the lowest
//!   triangle number; culling.
//!
//! [`FLOOR`]: level::FLOOR
//! [`WATERTIGHT`]: level::WATERTIGHT
//! [`SLABS`]: level::SLABS
//! [`EXACT`]: level::EXACT

// Off x86-64 only the portable twin runs, so the levels' helpers go unused there.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code, unused_imports))]

mod network;
mod portable;

use crate::bvh::build::MAX_WIDE_DEPTH;
use crate::bvh::leaf::{LANES, TrianglePacket};
#[cfg(target_arch = "x86_64")]
use crate::bvh::ray_node::COMPACT;
use crate::bvh::traverse::{Tally, keep_closer};
use crate::bvh::wide::{Grow, WideNode};
#[cfg(target_arch = "x86_64")]
use crate::bvh::wide::{LEAF, SORT};
use crate::triangle::TriangleHit;
use crate::watertight::{WatertightRay, largest_axis, sheared_axes};
use crate::{Culling, QueryOptions, Ray};

// No closure here calls an intrinsic (the small steps are macros): LLVM may compile a closure
// on its own for the crate's baseline (SSE2), where the intrinsic cannot be inlined, and the
// walk then calls `_mm256_fmsub_ps` as a function (measured: six times slower). The
// `#[inline(always)]` functions are inlined into the walk first and take its instructions.

/// The guarantee levels the walk is compiled for (its `LEVEL` parameter).
#[cfg_attr(not(feature = "kernel-lab"), allow(dead_code))]
pub(crate) mod level {
    /// Möller–Trumbore, clamped reciprocals: the floor.
    pub const FLOOR: u8 = 0;
    /// The watertight edge test.
    pub const WATERTIGHT: u8 = 1;
    /// The watertight edge test, and the slabs that never cull a box holding a hit.
    pub const SLABS: u8 = 2;
    /// Every guarantee: the answers of the scalar test.
    pub const EXACT: u8 = 3;
    /// The exact level's slabs, and the leaf the caller's: each entered leaf lane handed to
    /// a visit ([`visit`](super::visit)), for every hit, the count and a scene's top level.
    pub const VISIT: u8 = 4;
}

/// Where a child's key lies in the ray's span through its box at a node that sorts
/// ([`SORT`](crate::bvh::ray_node::SORT)): `near + KEY_POINT · (far − near)`. Measured
/// against the entry distance (0) and the midpoint (0.5) on the exact level's closest hit
/// (docs/how-it-works/ray-kernel.md §8): entry order finds Crytek Sponza's winners first but
/// the conference room's late; this point keeps the first and not the second.
const KEY_POINT: f32 = 0.15;

/// The deepest leaf the walk's stack allows (`RayTree` refuses deeper trees): with this the
/// stack stays under a page, which spares every query a stack probe.
pub(crate) const DEPTH_LIMIT: usize = 40;

/// Stack entries: a node visit adds at most seven (it writes eight above the top and takes
/// one), once per level.
const CAPACITY: usize = capacity(DEPTH_LIMIT);

/// The stack of the portable twin for a tree deeper than [`DEPTH_LIMIT`]: as deep as any tree
/// the builder makes or validation lets through.
const DEEP_CAPACITY: usize = capacity(MAX_WIDE_DEPTH);

/// The stack entries a walk of a tree whose leaves are no deeper than `depth` needs.
const fn capacity(depth: usize) -> usize {
    7 * depth + 8
}

/// A hit the walk found: the packet slot (`packet · 4 + lane`) and the triangle answer
/// (`Bvh::ray_hit` makes it a `CompactHit`).
pub(crate) type Found = (u32, TriangleHit);

/// The tree the walk reads: its nodes, the packets, the slot-to-triangle map, and the depth
/// of its deepest leaf lane (which stack the walk takes).
#[derive(Clone, Copy)]
pub(crate) struct Tree<'a> {
    pub nodes: &'a [WideNode],
    pub packets: &'a [TrianglePacket],
    pub index: &'a [u32],
    pub depth: usize,
}

/// The closest hit (`ANY == false`) or the first hit found (`ANY == true`) of `ray` (valid)
/// in `tree` at guarantee level `LEVEL` (the options' culling only at [`level::EXACT`]), with
/// AVX2 and FMA (AVX-512 where the CPU has it); where it lacks them (or
/// `MESHRAY_SIMD=portable`), for Cramer's rule (`watertight: false`, which only the
/// portable twin's leaf test has), or for a tree deeper than [`DEPTH_LIMIT`], the portable
/// twin's answer, which is the exact level's whatever `LEVEL` asks.
#[inline(always)]
pub(crate) fn cast<const LEVEL: u8, const ANY: bool>(
    tree: Tree,
    ray: &Ray,
    options: &QueryOptions,
) -> Option<Found> {
    if tree.depth > DEPTH_LIMIT {
        return deep_cast::<ANY>(tree, ray, options);
    }
    #[cfg(target_arch = "x86_64")]
    if options.watertight && crate::bvh::simd::Avx2::detect().is_some() {
        let culling = options.culling;
        // SAFETY: the CPU has AVX2, FMA, POPCNT, LZCNT, BMI1 and BMI2 (`detect`); the tree is
        // a `Bvh`'s, made by `ray_tree` or loaded and validated (child words in range) over
        // these packets and their map, and no deeper than `DEPTH_LIMIT` (its callers check
        // the `Bvh`'s depth first).
        #[allow(unsafe_code)]
        unsafe {
            let t_max = ray.t_max();
            let n = ray.negative();
            let octant = u8::from(n[0]) | u8::from(n[1]) << 1 | u8::from(n[2]) << 2;
            // The watertight test's largest axis, a constant of the walk as the octant is (the
            // floor has no use for it).
            const NONE: &Grow = &Grow::NONE;
            let d = ray.direction();
            let k = if LEVEL == level::FLOOR {
                0
            } else {
                largest_axis(&[d.x, d.y, d.z])
            };
            macro_rules! octants {
                ($walk:ident, $k:literal) => {
                    match octant {
                        0 => x86::$walk::<0, $k, LEVEL, ANY, _>(
                            tree, ray, NONE, t_max, culling, no_visit,
                        ),
                        1 => x86::$walk::<1, $k, LEVEL, ANY, _>(
                            tree, ray, NONE, t_max, culling, no_visit,
                        ),
                        2 => x86::$walk::<2, $k, LEVEL, ANY, _>(
                            tree, ray, NONE, t_max, culling, no_visit,
                        ),
                        3 => x86::$walk::<3, $k, LEVEL, ANY, _>(
                            tree, ray, NONE, t_max, culling, no_visit,
                        ),
                        4 => x86::$walk::<4, $k, LEVEL, ANY, _>(
                            tree, ray, NONE, t_max, culling, no_visit,
                        ),
                        5 => x86::$walk::<5, $k, LEVEL, ANY, _>(
                            tree, ray, NONE, t_max, culling, no_visit,
                        ),
                        6 => x86::$walk::<6, $k, LEVEL, ANY, _>(
                            tree, ray, NONE, t_max, culling, no_visit,
                        ),
                        _ => x86::$walk::<7, $k, LEVEL, ANY, _>(
                            tree, ray, NONE, t_max, culling, no_visit,
                        ),
                    }
                };
            }
            macro_rules! axes {
                ($walk:ident) => {
                    match k {
                        0 => octants!($walk, 0),
                        1 => octants!($walk, 1),
                        _ => octants!($walk, 2),
                    }
                };
            }
            return if x86::avx512() {
                axes!(walk_avx512)
            } else {
                axes!(walk_avx2)
            };
        }
    }
    portable::cast::<ANY, CAPACITY, ()>(tree, ray, options, &mut ())
}

/// [`cast`] for a tree deeper than [`DEPTH_LIMIT`], out of line: the portable twin with the
/// deepest stack, which only degenerate meshes need.
#[inline(never)]
fn deep_cast<const ANY: bool>(tree: Tree, ray: &Ray, options: &QueryOptions) -> Option<Found> {
    portable::cast::<ANY, DEEP_CAPACITY, ()>(tree, ray, options, &mut ())
}

/// [`visit_grown`] for a tree deeper than [`DEPTH_LIMIT`], out of line as [`deep_cast`]
/// is: its deepest stack would otherwise be in the frame of every caller's walk.
#[inline(never)]
fn deep_visit<const ANY: bool, V: FnMut(u32, &mut f32) -> bool>(
    nodes: &[WideNode],
    ray: &Ray,
    grow: &Grow,
    t_max: f32,
    visit: V,
) {
    portable::walk::<ANY, DEEP_CAPACITY, (), V>(nodes, ray, grow, t_max, &mut (), visit);
}

/// The leaf visit of the walks that test their own leaves: never called.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn no_visit(_: u32, _: &mut f32) -> bool {
    unreachable!("only the visiting level calls its visit")
}

/// [`cast`] for a query that reports what it tested: the portable twin, which visits the
/// same nodes in the same order as the x86 walk and gives the same answers, counting the
/// boxes it tests and the triangles of the packets it reaches into `tally`.
pub(crate) fn cast_tallied<const ANY: bool, T: Tally>(
    tree: Tree,
    ray: &Ray,
    options: &QueryOptions,
    tally: &mut T,
) -> Option<Found> {
    if tree.depth > DEPTH_LIMIT {
        portable::cast::<ANY, DEEP_CAPACITY, T>(tree, ray, options, tally)
    } else {
        portable::cast::<ANY, CAPACITY, T>(tree, ray, options, tally)
    }
}

/// Walks `nodes` (root at 0; none, no walk), whose deepest leaf lane is at `depth`, for
/// `ray` (valid) over `ray.t_min()..t_max`, calling `visit(entry, t_max)` with each leaf lane
/// the ray enters — its first entry: a packet of a mesh's tree, or a place in a scene's
/// instance order — and the current end of the range, which it may lower; `visit` returns
/// `true` to stop. `ANY == false` walks nearest child first and drops a waiting child whose
/// entry lies beyond the end (a closest hit); `ANY == true` takes the children in the node's
/// lane order where it does not sort and drops nothing (any hit, every hit, the count). The
/// slabs are the exact level's: no box holding a hit up to the end is culled. With AVX2 and
/// FMA the x86 walk's node visit, else the portable twin's, in the same order.
#[inline(always)]
pub(crate) fn visit<const ANY: bool, V: FnMut(u32, &mut f32) -> bool>(
    nodes: &[WideNode],
    depth: usize,
    ray: &Ray,
    t_max: f32,
    visit: V,
) {
    visit_grown::<ANY, V>(nodes, depth, ray, &Grow::NONE, t_max, visit);
}

/// [`visit`] over boxes grown by `grow` (a moving shape's reach): each leaf lane whose grown
/// box the ray enters. At [`Grow::NONE`], [`visit`] itself.
#[inline(always)]
pub(crate) fn visit_grown<const ANY: bool, V: FnMut(u32, &mut f32) -> bool>(
    nodes: &[WideNode],
    depth: usize,
    ray: &Ray,
    grow: &Grow,
    t_max: f32,
    visit: V,
) {
    if nodes.is_empty() {
        return;
    }
    if depth > DEPTH_LIMIT {
        return deep_visit::<ANY, V>(nodes, ray, grow, t_max, visit);
    }
    #[cfg(target_arch = "x86_64")]
    if crate::bvh::simd::Avx2::detect().is_some() {
        let tree = Tree {
            nodes,
            packets: &[],
            index: &[],
            depth,
        };
        let n = ray.negative();
        let octant = u8::from(n[0]) | u8::from(n[1]) << 1 | u8::from(n[2]) << 2;
        const L: u8 = level::VISIT;
        let culling = Culling::None;
        // SAFETY: the CPU has AVX2, FMA, POPCNT, LZCNT, BMI1 and BMI2 (`detect`); the nodes
        // are a tree made by `ray_tree` (or loaded, or refitted, and validated): child words
        // index `nodes`, and its leaves are no deeper than `depth <= DEPTH_LIMIT`. The
        // visiting level reads no packets and no map.
        macro_rules! octants {
            ($walk:ident) => {
                match octant {
                    0 => x86::$walk::<0, 0, L, ANY, _>(tree, ray, grow, t_max, culling, visit),
                    1 => x86::$walk::<1, 0, L, ANY, _>(tree, ray, grow, t_max, culling, visit),
                    2 => x86::$walk::<2, 0, L, ANY, _>(tree, ray, grow, t_max, culling, visit),
                    3 => x86::$walk::<3, 0, L, ANY, _>(tree, ray, grow, t_max, culling, visit),
                    4 => x86::$walk::<4, 0, L, ANY, _>(tree, ray, grow, t_max, culling, visit),
                    5 => x86::$walk::<5, 0, L, ANY, _>(tree, ray, grow, t_max, culling, visit),
                    6 => x86::$walk::<6, 0, L, ANY, _>(tree, ray, grow, t_max, culling, visit),
                    _ => x86::$walk::<7, 0, L, ANY, _>(tree, ray, grow, t_max, culling, visit),
                }
            };
        }
        #[allow(unsafe_code)]
        unsafe {
            octants!(walk_avx2);
        }
        return;
    }
    portable::walk::<ANY, CAPACITY, (), V>(nodes, ray, grow, t_max, &mut (), visit);
}

/// The watertight level's test of one lane whose edge functions were not all non-zero: the
/// edge functions again in `f64` from the same sheared corners (their products are exact
/// there), then the sign test, `t` and the barycentrics. `corners[c]` is corner `c`'s sheared
/// `(x, y, z·sz)`.
fn watertight_on_edge(corners: [[f32; 3]; 3], t_min: f32, t_max: f32) -> Option<(f32, f32, f32)> {
    let f = f64::from;
    let [a, b, c] = corners;
    let wa = (f(c[0]) * f(b[1]) - f(c[1]) * f(b[0])) as f32;
    let wb = (f(a[0]) * f(c[1]) - f(a[1]) * f(c[0])) as f32;
    let wc = (f(b[0]) * f(a[1]) - f(b[1]) * f(a[0])) as f32;
    let negative = wa < 0.0 || wb < 0.0 || wc < 0.0;
    let positive = wa > 0.0 || wb > 0.0 || wc > 0.0;
    let det = wa + wb + wc;
    if (negative && positive) || det == 0.0 {
        return None;
    }
    let t = (wa * a[2] + wb * b[2] + wc * c[2]) / det;
    (t >= t_min && t <= t_max).then(|| (t, wb / det, wc / det))
}

/// `γ(n) = n·u / (1 − n·u)` for `f32` (`u = 2⁻²⁴`): the bound on the relative error of `n`
/// roundings (Higham; PBR §3.9.1).
#[cfg(target_arch = "x86_64")]
const fn gamma(n: f32) -> f32 {
    let u = 1.0 / (1u32 << 24) as f32;
    n * u / (1.0 - n * u)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::network::x86 as network;
    use super::*;
    use crate::bvh::wide::{EXIT_SLACK, WIDTH};
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// The four-lane view of the ray the leaf test needs.
    struct LeafRay {
        /// Floor: origin and direction. Watertight and exact: the origin on axes `kx`, `ky`,
        /// `kz`, and the shear `sx`, `sy`, `sz`.
        p: [__m128; 3],
        q: [__m128; 3],
        t_min: __m128,
    }

    /// Four lanes' answers: the lanes that hit in range, and their `t`, `u` and `v`.
    struct LeafHits {
        mask: u32,
        t: __m128,
        u: [f32; LANES],
        v: [f32; LANES],
    }

    /// What the exact leaf needs beyond the four-lane ray.
    struct Exact<'a> {
        ray: WatertightRay<'a>,
        culling: Culling,
        t_min: f32,
        /// The lanes whose sign of the determinant `culling` keeps: positive, negative.
        keep: (u32, u32),
        /// Whether the leaf filters its candidates by their `f32` `t` before the scalar end
        /// (see [`filters`]).
        filter: bool,
        /// The ray's origin, reciprocal direction and signs, for its triangles' box entries
        /// and exits ([`box_bounds`]).
        origin: [f32; 3],
        inv: [f32; 3],
        negative: [bool; 3],
    }

    /// Whether the exact leaf filters the lanes inside their edges by a conservative bound
    /// on their sheared `f32` `t` before the scalar test's end: only for a ray whose range
    /// starts after 0, as a ray leaving a surface does. Such a ray meets the triangle it
    /// leaves (and often its neighbours) inside their edges at `t` within rounding of 0,
    /// below `t_min`, in nearly every leaf near its origin, and the filter rejects them for
    /// about 40 vector operations where the scalar end spends about 200 instructions each.
    /// Elsewhere most lanes inside their edges are hits in range, which the filter only
    /// delays: without it the closest hit ran 1.1–1.3× as fast on the primary and random
    /// rays of Crytek Sponza and the conference room (docs/how-it-works/ray-kernel.md §8).
    #[inline(always)]
    fn filters(ray: &Ray) -> bool {
        ray.t_min() > 0.0
    }

    /// Whether this CPU has AVX-512 (F and VL) and `MESHRAY_SIMD` does not ask for `avx2`
    /// (or `portable`); looked up once per process.
    pub(super) fn avx512() -> bool {
        static USE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *USE.get_or_init(|| {
            std::env::var_os("MESHRAY_SIMD").is_none_or(|v| v != "avx2" && v != "portable")
                && std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512vl")
        })
    }

    /// [`walk`] compiled for AVX2 and FMA.
    ///
    /// # Safety
    /// As [`walk`]'s.
    #[target_feature(enable = "avx2,fma,popcnt,lzcnt,bmi1,bmi2")]
    #[allow(unsafe_code)]
    pub(super) unsafe fn walk_avx2<
        const Q: u8,
        const K: usize,
        const LEVEL: u8,
        const ANY: bool,
        V: FnMut(u32, &mut f32) -> bool,
    >(
        tree: Tree,
        ray: &Ray,
        grow: &Grow,
        t_max: f32,
        culling: Culling,
        visit: V,
    ) -> Option<Found> {
        // SAFETY: as the caller promises.
        unsafe { walk::<Q, K, LEVEL, ANY, V>(tree, ray, grow, t_max, culling, visit) }
    }

    /// [`walk`] compiled for AVX-512 (F and VL) as well: the same operations, so the same
    /// answers and the same nodes in the same order, with 32 vector registers (the walk's
    /// ray vectors no longer spilled around a leaf) and compares into mask registers.
    ///
    /// # Safety
    /// As [`walk`]'s, and the CPU must have AVX-512 F and VL.
    #[target_feature(enable = "avx512f,avx512vl,avx2,fma,popcnt,lzcnt,bmi1,bmi2")]
    #[allow(unsafe_code)]
    pub(super) unsafe fn walk_avx512<
        const Q: u8,
        const K: usize,
        const LEVEL: u8,
        const ANY: bool,
        V: FnMut(u32, &mut f32) -> bool,
    >(
        tree: Tree,
        ray: &Ray,
        grow: &Grow,
        t_max: f32,
        culling: Culling,
        visit: V,
    ) -> Option<Found> {
        // SAFETY: as the caller promises.
        unsafe { walk::<Q, K, LEVEL, ANY, V>(tree, ray, grow, t_max, culling, visit) }
    }

    /// The walk (see the module's notes) for rays of octant `Q` over `ray.t_min()..t_max`,
    /// inlined into the wrappers above, which choose the instructions. At
    /// [`level::VISIT`] each entered leaf lane goes to `visit` (as [`super::visit`] says);
    /// the other levels test their packets themselves and never call it.
    ///
    /// # Safety
    /// The CPU must have AVX2, FMA, POPCNT, LZCNT, BMI1 and BMI2; `tree` must be a ray tree
    /// made by `ray_tree` (or loaded and validated) over its packets and map (the visiting
    /// level reads neither), no deeper than `DEPTH_LIMIT`.
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn walk<
        const Q: u8,
        const K: usize,
        const LEVEL: u8,
        const ANY: bool,
        V: FnMut(u32, &mut f32) -> bool,
    >(
        tree: Tree,
        ray: &Ray,
        grow: &Grow,
        mut t_max: f32,
        culling: Culling,
        mut visit: V,
    ) -> Option<Found> {
        let Tree {
            nodes,
            packets,
            index,
            ..
        } = tree;
        let o = ray.origin();
        let d = ray.direction();
        let exact_inv = ray.inv_direction();
        let origin = [o.x, o.y, o.z];
        let direction = [d.x, d.y, d.z];
        // The slabs that never cull a box holding a hit, and the range's end widened with them.
        let safe_slabs = LEVEL >= level::SLABS;
        // The floor's reciprocal is tinybvh's, clamped; the exact one is `1/d` (`±inf` for
        // `±0`), the far planes' widened.
        let clamp = |a: usize| {
            if safe_slabs || direction[a].abs() > 1e-12 {
                exact_inv[a]
            } else {
                1e30f32.copysign(direction[a])
            }
        };
        let inv = [clamp(0), clamp(1), clamp(2)];
        let widen = if safe_slabs { 1.0 + EXIT_SLACK } else { 1.0 };
        // The floor's slabs are fused against `o·inv`; the exact ones subtract `o` first.
        let shift = |a: usize| {
            if safe_slabs {
                origin[a]
            } else {
                origin[a] * inv[a]
            }
        };
        let limit = |t: f32| {
            if safe_slabs {
                t + t.abs() * EXIT_SLACK
            } else {
                t
            }
        };
        let mut t_lim = limit(t_max);
        // The watertight test's axes: `K` the largest, the others by the octant's sign on it.
        let axes = sheared_axes(K, Q & (1 << K) != 0);
        let w = WatertightRay::with_axes(ray, axes);
        let extra = Exact {
            ray: w,
            culling,
            t_min: ray.t_min(),
            keep: match culling {
                Culling::None => (0xf, 0xf),
                Culling::Back => (0xf, 0),
                Culling::Front => (0, 0xf),
            },
            filter: filters(ray),
            origin,
            inv: exact_inv.into(),
            negative: ray.negative(),
        };
        let mut best: Option<Found> = None;
        let mut words = [MaybeUninit::<u32>::uninit(); CAPACITY];
        let mut entries = [MaybeUninit::<f32>::uninit(); CAPACITY];
        let words = words.as_mut_ptr() as *mut u32;
        let entries = entries.as_mut_ptr() as *mut f32;
        let mut top = 0usize;
        let mut word = 0u32;
        // SAFETY (the whole body): the caller promises the instructions; child words index
        // `nodes` and `packets` (made so by `ray_tree`), slots index `index`;
        // `top + 8 <= CAPACITY` at every push, since a node of depth `k` (the root 0) is
        // visited with at most `7k` entries below the top and the tree is no deeper than
        // `DEPTH_LIMIT`; the entries read are below `top`, all written.
        unsafe {
            let splat = _mm256_set1_ps;
            let inv8 = [splat(inv[0]), splat(inv[1]), splat(inv[2])];
            let far_inv8 = [
                splat(inv[0] * widen),
                splat(inv[1] * widen),
                splat(inv[2] * widen),
            ];
            let origin8 = [splat(shift(0)), splat(shift(1)), splat(shift(2))];
            // The origins the planes met first and last are met from: the origin itself but
            // at the visiting level, where the boxes may grow ([`Grow::origins`]).
            let origins = |a: usize| {
                if LEVEL == level::VISIT {
                    grow.origins(origin[a], a, Q & (1 << a) != 0)
                } else {
                    (shift(a), shift(a))
                }
            };
            let (x, y, z) = (origins(0), origins(1), origins(2));
            let near_origin8 = [splat(x.0), splat(y.0), splat(z.0)];
            let far_origin8 = [splat(x.1), splat(y.1), splat(z.1)];
            let t_min8 = splat(ray.t_min());
            let mut t_lim8 = splat(t_lim);
            let leaf_ray = if LEVEL == level::FLOOR {
                LeafRay {
                    p: [_mm_set1_ps(o.x), _mm_set1_ps(o.y), _mm_set1_ps(o.z)],
                    q: [_mm_set1_ps(d.x), _mm_set1_ps(d.y), _mm_set1_ps(d.z)],
                    t_min: _mm_set1_ps(ray.t_min()),
                }
            } else {
                LeafRay {
                    p: [
                        _mm_set1_ps(origin[w.kx]),
                        _mm_set1_ps(origin[w.ky]),
                        _mm_set1_ps(origin[w.kz]),
                    ],
                    q: [
                        _mm_set1_ps(w.sx),
                        _mm_set1_ps(w.sy),
                        _mm_set1_ps(1.0 / direction[w.kz]),
                    ],
                    t_min: _mm_set1_ps(ray.t_min()),
                }
            };
            'walk: loop {
                if word & LEAF == 0 {
                    let node = nodes.get_unchecked(word as usize);
                    macro_rules! slab {
                        ($a:literal) => {{
                            let (near, far) = if Q & (1 << $a) != 0 {
                                (&node.max[$a], &node.min[$a])
                            } else {
                                (&node.min[$a], &node.max[$a])
                            };
                            if safe_slabs {
                                (
                                    _mm256_mul_ps(
                                        _mm256_sub_ps(row(near), near_origin8[$a]),
                                        inv8[$a],
                                    ),
                                    _mm256_mul_ps(
                                        _mm256_sub_ps(row(far), far_origin8[$a]),
                                        far_inv8[$a],
                                    ),
                                )
                            } else {
                                (
                                    _mm256_fmsub_ps(row(near), inv8[$a], origin8[$a]),
                                    _mm256_fmsub_ps(row(far), inv8[$a], origin8[$a]),
                                )
                            }
                        }};
                    }
                    let (x0, x1) = slab!(0);
                    let (y0, y1) = slab!(1);
                    let (z0, z1) = slab!(2);
                    let (near, far) = if safe_slabs {
                        // A NaN plane (a ray in it) keeps the bound: x86's max and min
                        // return their second operand when either is NaN.
                        (
                            _mm256_max_ps(x0, _mm256_max_ps(y0, _mm256_max_ps(z0, t_min8))),
                            _mm256_min_ps(x1, _mm256_min_ps(y1, _mm256_min_ps(z1, t_lim8))),
                        )
                    } else {
                        (
                            _mm256_max_ps(_mm256_max_ps(x0, y0), _mm256_max_ps(z0, t_min8)),
                            _mm256_min_ps(_mm256_min_ps(x1, y1), _mm256_min_ps(z1, t_lim8)),
                        )
                    };
                    let entered = _mm256_cmp_ps::<_CMP_LE_OQ>(near, far);
                    let mask = _mm256_movemask_ps(entered) as u32;
                    if mask != 0 {
                        if mask & (mask - 1) == 0 {
                            word = *node.child.get_unchecked(mask.trailing_zeros() as usize);
                            continue;
                        }
                        let child = _mm256_load_si256(node.child.as_ptr() as *const __m256i);
                        let sorts = *node.order.get_unchecked(0) & SORT != 0;
                        if ANY && !sorts {
                            // Lane order: no distances, nothing culled at the pop.
                            let lanes = compact(mask);
                            let out = _mm256_permutevar8x32_epi32(child, lanes);
                            _mm256_storeu_si256(words.add(top) as *mut __m256i, out);
                        } else if sorts {
                            // Farthest key first; two children by one compare (the lower
                            // lane first on a tie), more by the keys and sorting network of
                            // `network`.
                            // The key unfused, as the portable twin rounds it.
                            let key = _mm256_add_ps(
                                near,
                                _mm256_mul_ps(_mm256_set1_ps(KEY_POINT), _mm256_sub_ps(far, near)),
                            );
                            let rest = mask & (mask - 1);
                            if rest & (rest - 1) == 0 {
                                let (a, b) = (
                                    mask.trailing_zeros() as usize,
                                    rest.trailing_zeros() as usize,
                                );
                                let keys = bytemuck::cast::<__m256, [f32; WIDTH]>(key);
                                let nears = bytemuck::cast::<__m256, [f32; WIDTH]>(near);
                                let (first, second) =
                                    if keys[b] < keys[a] { (b, a) } else { (a, b) };
                                *words.add(top) = *node.child.get_unchecked(second);
                                *entries.add(top) = nears[second];
                                top += 1;
                                word = *node.child.get_unchecked(first);
                                continue;
                            }
                            let lanes = _mm256_and_si256(
                                network::sort_descending(network::order_keys(key, entered)),
                                _mm256_set1_epi32(7),
                            );
                            let out = _mm256_permutevar8x32_epi32(child, lanes);
                            _mm256_storeu_si256(words.add(top) as *mut __m256i, out);
                            _mm256_storeu_ps(
                                entries.add(top),
                                _mm256_permutevar8x32_ps(near, lanes),
                            );
                        } else {
                            let order = _mm256_load_si256(node.order.as_ptr() as *const __m256i);
                            let order = _mm256_srlv_epi32(order, _mm256_set1_epi32(3 * Q as i32));
                            let ordered = _mm256_permutevar8x32_ps(entered, order);
                            let lanes = _mm256_permutevar8x32_epi32(
                                order,
                                compact(_mm256_movemask_ps(ordered) as u32),
                            );
                            let out = _mm256_permutevar8x32_epi32(child, lanes);
                            _mm256_storeu_si256(words.add(top) as *mut __m256i, out);
                            _mm256_storeu_ps(
                                entries.add(top),
                                _mm256_permutevar8x32_ps(near, lanes),
                            );
                        }
                        top += mask.count_ones() as usize - 1;
                        word = *words.add(top);
                        continue;
                    }
                } else {
                    let packet = (word & !LEAF) as usize;
                    if LEVEL == level::VISIT {
                        let before = t_max;
                        if visit(packet as u32, &mut t_max) {
                            return None;
                        }
                        if t_max != before {
                            t_lim = limit(t_max);
                            t_lim8 = _mm256_set1_ps(t_lim);
                        }
                    } else if LEVEL == level::EXACT {
                        let leaf = packets.get_unchecked(packet);
                        let before = t_max;
                        let hit = exact_leaf::<ANY>(
                            leaf,
                            (packet * LANES) as u32,
                            &leaf_ray,
                            &axes,
                            &extra,
                            index,
                            &mut best,
                            &mut t_max,
                        );
                        if ANY && hit {
                            return best;
                        }
                        if t_max != before {
                            t_lim = limit(t_max);
                            t_lim8 = _mm256_set1_ps(t_lim);
                        }
                    } else {
                        let leaf = packets.get_unchecked(packet);
                        let hits = leaf_f32::<LEVEL>(leaf, &leaf_ray, &axes, _mm_set1_ps(t_max));
                        if hits.mask != 0 {
                            let t = if ANY {
                                hits.mask.trailing_zeros()
                            } else {
                                nearest_lane(hits.t, hits.mask)
                            } as usize;
                            let hit = TriangleHit {
                                t: lanes(hits.t)[t],
                                u: hits.u[t],
                                v: hits.v[t],
                            };
                            let found = ((packet * LANES + t) as u32, hit);
                            if ANY {
                                return Some(found);
                            }
                            t_max = hit.t;
                            t_lim = limit(t_max);
                            t_lim8 = _mm256_set1_ps(t_lim);
                            best = Some(found);
                        }
                    }
                }
                // The next waiting child that can still matter.
                loop {
                    if top == 0 {
                        break 'walk;
                    }
                    top -= 1;
                    if ANY || *entries.add(top) <= t_lim {
                        word = *words.add(top);
                        break;
                    }
                }
            }
        }
        best
    }

    /// The lane of the smallest `t` among `mask`'s (the lowest lane on a tie).
    #[inline(always)]
    fn nearest_lane(t: __m128, mask: u32) -> u32 {
        // SAFETY: compiled only into `walk`, which enables SSE4.1 (with AVX2).
        #[allow(unsafe_code)]
        unsafe {
            let valid = _mm_castsi128_ps(_mm_cmpgt_epi32(
                _mm_and_si128(_mm_set1_epi32(mask as i32), _mm_setr_epi32(1, 2, 4, 8)),
                _mm_setzero_si128(),
            ));
            let t = _mm_blendv_ps(_mm_set1_ps(f32::INFINITY), t, valid);
            let m = _mm_min_ps(t, _mm_shuffle_ps::<0b1011_0001>(t, t));
            let m = _mm_min_ps(m, _mm_shuffle_ps::<0b0100_1110>(m, m));
            let at = _mm_movemask_ps(_mm_cmpeq_ps(t, m)) as u32 & mask;
            at.trailing_zeros()
        }
    }

    /// A packet's corners translated to the origin and sheared so the ray runs along +z,
    /// operation for operation as `WatertightRay::intersect` (not fused), so a ray through
    /// an edge goes to the triangle the scalar test gives it: `(x, y, z)` per corner, `z`
    /// not yet scaled.
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn sheared(
        packet: &TrianglePacket,
        ray: &LeafRay,
        axes: &[usize; 3],
    ) -> [(__m128, __m128, __m128); 3] {
        // SAFETY: compiled only into `walk`, which enables AVX2; `axes` are in 0..3.
        unsafe {
            let [kx, ky, kz] = *axes;
            let [okx, oky, okz] = ray.p;
            let [sx, sy, _] = ray.q;
            macro_rules! corner {
                ($p:expr) => {{
                    let p = $p;
                    let z = _mm_sub_ps(ld(p.get_unchecked(kz)), okz);
                    (
                        _mm_sub_ps(_mm_sub_ps(ld(p.get_unchecked(kx)), okx), _mm_mul_ps(sx, z)),
                        _mm_sub_ps(_mm_sub_ps(ld(p.get_unchecked(ky)), oky), _mm_mul_ps(sy, z)),
                        z,
                    )
                }};
            }
            [corner!(&packet.a), corner!(&packet.b), corner!(&packet.c)]
        }
    }

    /// The edge functions of sheared corners, without fusing, so a shared edge gives exactly
    /// negated values in its two triangles (and the scalar test's bits).
    #[inline(always)]
    fn edges(c: &[(__m128, __m128, __m128); 3]) -> [__m128; 3] {
        // SAFETY: compiled only into `walk`, which enables AVX2.
        #[allow(unsafe_code)]
        unsafe {
            let [(ax, ay, _), (bx, by, _), (cx, cy, _)] = *c;
            [
                _mm_sub_ps(_mm_mul_ps(cx, by), _mm_mul_ps(cy, bx)),
                _mm_sub_ps(_mm_mul_ps(ax, cy), _mm_mul_ps(ay, cx)),
                _mm_sub_ps(_mm_mul_ps(bx, ay), _mm_mul_ps(by, ax)),
            ]
        }
    }

    /// Bit masks of the lanes whose three edge functions are all positive, all negative, and
    /// of those with one exactly zero.
    #[inline(always)]
    fn signs(w: &[__m128; 3]) -> (u32, u32, u32) {
        // SAFETY: compiled only into `walk`, which enables AVX2.
        #[allow(unsafe_code)]
        unsafe {
            let zero = _mm_setzero_ps();
            let [wa, wb, wc] = *w;
            let positive = _mm_and_ps(
                _mm_cmpgt_ps(wa, zero),
                _mm_and_ps(_mm_cmpgt_ps(wb, zero), _mm_cmpgt_ps(wc, zero)),
            );
            let negative = _mm_and_ps(
                _mm_cmplt_ps(wa, zero),
                _mm_and_ps(_mm_cmplt_ps(wb, zero), _mm_cmplt_ps(wc, zero)),
            );
            let on_edge = _mm_or_ps(
                _mm_cmpeq_ps(wa, zero),
                _mm_or_ps(_mm_cmpeq_ps(wb, zero), _mm_cmpeq_ps(wc, zero)),
            );
            (
                _mm_movemask_ps(positive) as u32,
                _mm_movemask_ps(negative) as u32,
                _mm_movemask_ps(on_edge) as u32,
            )
        }
    }

    /// The determinant (the edge functions' sum) and the sheared `t`,
    /// `sz·(wa·az + wb·bz + wc·cz) / det`, of four lanes (`corners` as [`sheared`] gives them).
    #[inline(always)]
    fn sheared_t(
        w: &[__m128; 3],
        corners: &[(__m128, __m128, __m128); 3],
        sz: __m128,
    ) -> (__m128, __m128) {
        // SAFETY: inlined into the walk, which enables AVX2 and FMA.
        #[allow(unsafe_code)]
        unsafe {
            let [wa, wb, wc] = *w;
            let [(_, _, az), (_, _, bz), (_, _, cz)] = *corners;
            let det = _mm_add_ps(_mm_add_ps(wa, wb), wc);
            let big_t = _mm_mul_ps(
                sz,
                _mm_fmadd_ps(wa, az, _mm_fmadd_ps(wb, bz, _mm_mul_ps(wc, cz))),
            );
            (det, _mm_div_ps(big_t, det))
        }
    }

    /// Four lanes as an array.
    #[inline(always)]
    fn lanes(v: __m128) -> [f32; LANES] {
        bytemuck::cast(v)
    }

    // The small steps, as functions (see the note at the top of the module).

    /// A node's row of eight.
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn row(r: &[f32; 8]) -> __m256 {
        // SAFETY: inlined into the walk, which enables AVX; `r` is 32-byte aligned (a
        // `WideNode` row).
        unsafe { _mm256_load_ps(r.as_ptr()) }
    }

    /// Where the ray enters and leaves each lane's triangle's bounding box: the scalar test's
    /// [`box_bounds`](crate::triangle::box_bounds), operation for operation (x86's `min` and `max`
    /// keep the second operand unless the first is strictly beyond, as they do), so the same
    /// bits.
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn box_bounds(packet: &TrianglePacket, extra: &Exact) -> (__m128, __m128) {
        // SAFETY: compiled only into `walk`, which enables AVX2 and FMA.
        unsafe {
            let mut enter = _mm_set1_ps(f32::NEG_INFINITY);
            let mut leave = _mm_set1_ps(f32::INFINITY);
            for k in 0..3 {
                let (a, b, c) = (ld(&packet.a[k]), ld(&packet.b[k]), ld(&packet.c[k]));
                let least = _mm_min_ps(_mm_min_ps(a, b), c);
                let greatest = _mm_max_ps(_mm_max_ps(a, b), c);
                let (first, last) = if extra.negative[k] {
                    (greatest, least)
                } else {
                    (least, greatest)
                };
                let (o, inv) = (_mm_set1_ps(extra.origin[k]), _mm_set1_ps(extra.inv[k]));
                let near = _mm_mul_ps(_mm_sub_ps(first, o), inv);
                let far = _mm_mul_ps(_mm_sub_ps(last, o), inv);
                enter = _mm_max_ps(near, enter);
                leave = _mm_min_ps(far, leave);
            }
            (enter, leave)
        }
    }

    /// A packet's row of four.
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn ld(r: &[f32; LANES]) -> __m128 {
        // SAFETY: `r` is 16-byte aligned (a `TrianglePacket` row).
        unsafe { _mm_load_ps(r.as_ptr()) }
    }

    /// The lane numbers of `mask`'s set bits, lowest first ([`COMPACT`]).
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn compact(mask: u32) -> __m256i {
        // SAFETY: inlined into the walk, which enables AVX2; the table has 256 rows of 8
        // bytes and `mask < 256`.
        unsafe {
            _mm256_cvtepu8_epi32(_mm_loadl_epi64(
                COMPACT.as_ptr().add(mask as usize & 0xff) as *const __m128i
            ))
        }
    }

    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn abs(v: __m128) -> __m128 {
        // SAFETY: SSE, as every x86-64.
        unsafe { _mm_andnot_ps(_mm_set1_ps(-0.0), v) }
    }

    /// The largest magnitude of three.
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn max3(a: __m128, b: __m128, c: __m128) -> __m128 {
        // SAFETY: SSE, as every x86-64.
        unsafe { _mm_max_ps(abs(a), _mm_max_ps(abs(b), abs(c))) }
    }

    /// `p × q`, the second products fused.
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn cross(p: [__m128; 3], q: [__m128; 3]) -> [__m128; 3] {
        // SAFETY: inlined into the walk, which enables FMA.
        unsafe {
            [
                _mm_fmsub_ps(p[1], q[2], _mm_mul_ps(p[2], q[1])),
                _mm_fmsub_ps(p[2], q[0], _mm_mul_ps(p[0], q[2])),
                _mm_fmsub_ps(p[0], q[1], _mm_mul_ps(p[1], q[0])),
            ]
        }
    }

    /// `p · q`, fused.
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn dot(p: [__m128; 3], q: [__m128; 3]) -> __m128 {
        // SAFETY: inlined into the walk, which enables FMA.
        unsafe { _mm_fmadd_ps(p[0], q[0], _mm_fmadd_ps(p[1], q[1], _mm_mul_ps(p[2], q[2]))) }
    }

    /// The exact level's leaf: the edge test in SIMD, a conservative filter on the sheared
    /// `t`, then the scalar test's end for each lane that may hit in range, each hit kept by
    /// [`keep_closer`] (the closest hit) or returned at once (`ANY`). Returns whether it
    /// found a hit.
    #[inline(always)]
    #[allow(unsafe_code, clippy::too_many_arguments)]
    unsafe fn exact_leaf<const ANY: bool>(
        packet: &TrianglePacket,
        first_slot: u32,
        ray: &LeafRay,
        axes: &[usize; 3],
        extra: &Exact,
        index: &[u32],
        best: &mut Option<Found>,
        t_max: &mut f32,
    ) -> bool {
        // SAFETY: compiled only into `walk`, which enables AVX2 and FMA.
        unsafe {
            let corners = sheared(packet, ray, axes);
            let w = edges(&corners);
            let (positive, negative, on_edge) = signs(&w);
            let inside = (positive & extra.keep.0) | (negative & extra.keep.1);
            if inside | on_edge == 0 {
                return false;
            }
            let mut lanes_left = on_edge;
            // The lanes' own boxes, where the filter needs them (else computed below).
            let mut bounds = None;
            if !extra.filter {
                lanes_left |= inside;
            } else if inside != 0 {
                let [wa, wb, wc] = w;
                let [(ax, ay, az), (bx, by, bz), (cx, cy, cz)] = corners;
                let sz = ray.q[2];
                let (det, t) = sheared_t(&w, &corners, sz);
                // The bound on |t − t_exact| (PBR §3.9.6, for this shear: the x and y errors
                // from the unscaled z, which the shear multiplies), doubled, plus 2⁻²⁰·|t|
                // for the f64 plane's rounding to f32.
                let splat = _mm_set1_ps;
                let max_x = max3(ax, bx, cx);
                let max_y = max3(ay, by, cy);
                let max_z = max3(az, bz, cz);
                let max_zs = _mm_mul_ps(max_z, abs(sz));
                let delta_x = _mm_mul_ps(splat(gamma(5.0)), _mm_add_ps(max_x, max_z));
                let delta_y = _mm_mul_ps(splat(gamma(5.0)), _mm_add_ps(max_y, max_z));
                let delta_z = _mm_mul_ps(splat(gamma(3.0)), max_zs);
                let delta_e = _mm_mul_ps(
                    splat(2.0),
                    _mm_fmadd_ps(
                        _mm_mul_ps(splat(gamma(2.0)), max_x),
                        max_y,
                        _mm_fmadd_ps(delta_y, max_x, _mm_mul_ps(delta_x, max_y)),
                    ),
                );
                let max_e = max3(wa, wb, wc);
                let delta_t = _mm_div_ps(
                    _mm_mul_ps(
                        splat(6.0),
                        _mm_fmadd_ps(
                            _mm_mul_ps(splat(gamma(3.0)), max_e),
                            max_zs,
                            _mm_fmadd_ps(delta_e, max_zs, _mm_mul_ps(delta_z, max_e)),
                        ),
                    ),
                    abs(det),
                );
                let delta = _mm_fmadd_ps(abs(t), splat(EXIT_SLACK), delta_t);
                // The scalar end keeps `t` within the lane's own box (`within_box`): at most
                // the greater of the plane's and the entry, at least the lesser of the
                // plane's and the exit. Unordered compares, the bounds second in `max` and
                // `min` (which return their second operand on a NaN): a NaN (corners near
                // f32's limit) leaves the lane to the scalar test.
                let (enter, leave) = box_bounds(packet, extra);
                bounds = Some((enter, leave));
                let may = _mm_and_ps(
                    _mm_cmp_ps::<_CMP_NLT_UQ>(_mm_max_ps(enter, _mm_add_ps(t, delta)), ray.t_min),
                    _mm_cmp_ps::<_CMP_NGT_UQ>(
                        _mm_min_ps(leave, _mm_sub_ps(t, delta)),
                        splat(*t_max),
                    ),
                );
                lanes_left |= inside & _mm_movemask_ps(may) as u32;
            }
            if lanes_left == 0 {
                return false;
            }
            let [wa, wb, wc] = w.map(lanes);
            let (entries, exits) = if lanes_left & !on_edge != 0 {
                let (enter, leave) = bounds.unwrap_or_else(|| box_bounds(packet, extra));
                (lanes(enter), lanes(leave))
            } else {
                ([f32::NEG_INFINITY; LANES], [f32::INFINITY; LANES])
            };
            let mut found = false;
            while lanes_left != 0 {
                let lane = lanes_left.trailing_zeros() as usize;
                lanes_left &= lanes_left - 1;
                let tri = packet.get(lane);
                let hit = if on_edge & (1 << lane) != 0 {
                    extra
                        .ray
                        .intersect(&tri, extra.t_min, *t_max, extra.culling)
                } else {
                    let e = [wa[lane], wb[lane], wc[lane]];
                    extra.ray.finish_boxed(
                        &tri,
                        e,
                        (entries[lane], exits[lane]),
                        extra.t_min,
                        *t_max,
                        extra.culling,
                    )
                };
                let Some(h) = hit else { continue };
                let slot = first_slot + lane as u32;
                if ANY {
                    *best = Some((slot, h));
                    return true;
                }
                keep_closer(index, best, slot, h);
                *t_max = h.t;
                found = true;
            }
            found
        }
    }

    /// The four lanes of `packet` against the ray, up to `t_max`: the floor's test or the
    /// watertight one with its `f32` `t`, by `LEVEL`.
    #[inline(always)]
    #[allow(unsafe_code)]
    unsafe fn leaf_f32<const LEVEL: u8>(
        packet: &TrianglePacket,
        ray: &LeafRay,
        axes: &[usize; 3],
        t_max: __m128,
    ) -> LeafHits {
        // SAFETY: compiled only into `walk`, which enables AVX2 and FMA; `axes` are in 0..3.
        unsafe {
            let zero = _mm_setzero_ps();
            if LEVEL == level::FLOOR {
                let [ox, oy, oz] = ray.p;
                let [dx, dy, dz] = ray.q;
                let (a, b, c) = (&packet.a, &packet.b, &packet.c);
                let (ax, ay, az) = (ld(&a[0]), ld(&a[1]), ld(&a[2]));
                let e1 = [
                    _mm_sub_ps(ld(&b[0]), ax),
                    _mm_sub_ps(ld(&b[1]), ay),
                    _mm_sub_ps(ld(&b[2]), az),
                ];
                let e2 = [
                    _mm_sub_ps(ld(&c[0]), ax),
                    _mm_sub_ps(ld(&c[1]), ay),
                    _mm_sub_ps(ld(&c[2]), az),
                ];
                let h = cross([dx, dy, dz], e2);
                let det = dot(e1, h);
                let inv = _mm_div_ps(_mm_set1_ps(1.0), det);
                let s = [_mm_sub_ps(ox, ax), _mm_sub_ps(oy, ay), _mm_sub_ps(oz, az)];
                let u = _mm_mul_ps(dot(s, h), inv);
                let q = cross(s, e1);
                let v = _mm_mul_ps(dot([dx, dy, dz], q), inv);
                let t = _mm_mul_ps(dot(e2, q), inv);
                let ok = _mm_and_ps(
                    _mm_and_ps(_mm_cmpge_ps(u, zero), _mm_cmpge_ps(v, zero)),
                    _mm_and_ps(
                        _mm_cmple_ps(_mm_add_ps(u, v), _mm_set1_ps(1.0)),
                        _mm_and_ps(_mm_cmpge_ps(t, ray.t_min), _mm_cmple_ps(t, t_max)),
                    ),
                );
                let mask = _mm_movemask_ps(ok) as u32;
                let (us, vs) = if mask != 0 {
                    (lanes(u), lanes(v))
                } else {
                    ([0.0; LANES], [0.0; LANES])
                };
                return LeafHits {
                    mask,
                    t,
                    u: us,
                    v: vs,
                };
            }
            let corners = sheared(packet, ray, axes);
            let w = edges(&corners);
            let (positive, negative, on_edge) = signs(&w);
            let inside = positive | negative;
            if inside | on_edge == 0 {
                return LeafHits {
                    mask: 0,
                    t: zero,
                    u: [0.0; LANES],
                    v: [0.0; LANES],
                };
            }
            let [_, wb, wc] = w;
            let [(ax, ay, az), (bx, by, bz), (cx, cy, cz)] = corners;
            let sz = ray.q[2];
            let (det, t) = sheared_t(&w, &corners, sz);
            let in_range = _mm_and_ps(_mm_cmpge_ps(t, ray.t_min), _mm_cmple_ps(t, t_max));
            let mut mask = inside & _mm_movemask_ps(in_range) as u32;
            let mut ts = lanes(t);
            let (mut us, mut vs) = ([0.0; LANES], [0.0; LANES]);
            if mask != 0 {
                let inv = _mm_div_ps(_mm_set1_ps(1.0), det);
                us = lanes(_mm_mul_ps(wb, inv));
                vs = lanes(_mm_mul_ps(wc, inv));
            }
            if on_edge != 0 {
                let (ax, ay, az) = (lanes(ax), lanes(ay), lanes(_mm_mul_ps(sz, az)));
                let (bx, by, bz) = (lanes(bx), lanes(by), lanes(_mm_mul_ps(sz, bz)));
                let (cx, cy, cz) = (lanes(cx), lanes(cy), lanes(_mm_mul_ps(sz, cz)));
                let (limit, t_min) = (lanes(t_max), lanes(ray.t_min));
                let mut edge = on_edge;
                while edge != 0 {
                    let l = edge.trailing_zeros() as usize;
                    edge &= edge - 1;
                    let corners = [
                        [ax[l], ay[l], az[l]],
                        [bx[l], by[l], bz[l]],
                        [cx[l], cy[l], cz[l]],
                    ];
                    mask &= !(1 << l);
                    if let Some((t, u, v)) = watertight_on_edge(corners, t_min[l], limit[l]) {
                        (ts[l], us[l], vs[l]) = (t, u, v);
                        mask |= 1 << l;
                    }
                }
            }
            LeafHits {
                mask,
                t: bytemuck::cast(ts),
                u: us,
                v: vs,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bvh::leaf::LeafTest;
    use crate::test_support::{Rng, p};
    use crate::{Bvh, Mesh};
    use nalgebra::{Point3, Vector3};

    /// Two thousand triangles: a grid of small ones (shared edges, coplanar neighbours) and
    /// a soup of random ones across it.
    fn mesh(rng: &mut Rng) -> Mesh {
        let mut points = Vec::new();
        let mut faces = Vec::new();
        let n = 24;
        for i in 0..=n {
            for j in 0..=n {
                points.push(p(i as f32, j as f32, ((i * j) % 5) as f32 * 0.1));
            }
        }
        for i in 0..n {
            for j in 0..n {
                let a = (i * (n + 1) + j) as u32;
                let (b, c, d) = (a + 1, a + n as u32 + 1, a + n as u32 + 2);
                faces.push([a, b, d]);
                faces.push([a, d, c]);
            }
        }
        for _ in 0..800 {
            let base = points.len() as u32;
            let centre = p(
                rng.range(0.0, 24.0),
                rng.range(0.0, 24.0),
                rng.range(-4.0, 4.0),
            );
            for _ in 0..3 {
                let size = rng.range(0.1, 2.0);
                points.push(
                    centre
                        + Vector3::new(
                            rng.range(-1.0, 1.0),
                            rng.range(-1.0, 1.0),
                            rng.range(-1.0, 1.0),
                        ) * size,
                );
            }
            faces.push([base, base + 1, base + 2]);
        }
        Mesh::from_buffers(points, faces).unwrap()
    }

    fn rays(rng: &mut Rng, n: usize) -> Vec<Ray> {
        (0..n)
            .map(|k| {
                let o = Point3::new(
                    rng.range(-4.0, 28.0),
                    rng.range(-4.0, 28.0),
                    rng.range(-8.0, 8.0),
                );
                let mut d = Vector3::new(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                );
                match k % 6 {
                    0 => d.x = 0.0,
                    1 => d = Vector3::new(-0.0, 0.0, -1.0),
                    2 => d.y = -0.0,
                    _ => {}
                }
                match k % 5 {
                    0 => Ray::with_range(o, d, 0.5, 6.0),
                    _ => Ray::new(o, d),
                }
            })
            .collect()
    }

    /// The leaf lanes a walk visits, in order, with the range's end at each, the visit
    /// lowering the end to the packet's closest hit (`ANY == false`) or leaving it.
    fn visits<const ANY: bool>(bvh: &Bvh, ray: &Ray, portable: bool) -> Vec<(u32, u32)> {
        let test = LeafTest::new(ray, &QueryOptions::default());
        let mut seen = Vec::new();
        let visit = |packet: u32, t_max: &mut f32| {
            seen.push((packet, t_max.to_bits()));
            let end = *t_max;
            test.run(&bvh.leaf_packets, packet as usize, LANES, t_max, |_, h| {
                Some(if ANY { end } else { h.t })
            })
        };
        if portable {
            portable::walk::<ANY, CAPACITY, (), _>(
                &bvh.nodes,
                ray,
                &Grow::NONE,
                ray.t_max(),
                &mut (),
                visit,
            );
        } else {
            super::visit::<ANY, _>(&bvh.nodes, bvh.depth, ray, ray.t_max(), visit);
        }
        seen
    }

    /// The deep trees' grown walk (`deep_visit`, out of line) visits the leaf lanes the
    /// portable walk with the shallow stack visits, in the same order with the same ends,
    /// grown or not, with a visit that lowers the end.
    #[test]
    fn deep_visit_equals_the_portable_walk() {
        let mut rng = Rng::new(41);
        let bvh = Bvh::build(mesh(&mut rng));
        let grown = Grow {
            below: [0.1, 0.25, 0.0],
            above: [0.3, 0.0, 0.05],
        };
        let mut visited = 0;
        for ray in rays(&mut rng, 2000) {
            for grow in [Grow::NONE, grown] {
                let run = |deep: bool| {
                    let mut seen = Vec::new();
                    let visit = |packet: u32, t_max: &mut f32| {
                        seen.push((packet, t_max.to_bits()));
                        *t_max *= 0.9;
                        false
                    };
                    if deep {
                        deep_visit::<false, _>(&bvh.nodes, &ray, &grow, ray.t_max(), visit);
                    } else {
                        portable::walk::<false, CAPACITY, (), _>(
                            &bvh.nodes,
                            &ray,
                            &grow,
                            ray.t_max(),
                            &mut (),
                            visit,
                        );
                    }
                    seen
                };
                let deep = run(true);
                assert_eq!(deep, run(false), "{ray:?}");
                visited += deep.len();
            }
        }
        assert!(visited > 2_000, "{visited} leaf visits");
    }

    /// The x86 walk (where the CPU has AVX2 and FMA) visits the same leaf lanes in the same
    /// order with the same range as the portable twin, in both orders, and casts the same
    /// answers bit for bit, the closest hit and (from the same order) any hit; the portable
    /// twin with the deep trees' stack answers alike. It runs in a build for x86-64-v3 (as
    /// `.ci/run` runs it), so that the x86 walk is surely the one compared; elsewhere it shows
    /// as ignored.
    #[test]
    #[cfg_attr(
        not(all(
            target_arch = "x86_64",
            target_feature = "avx2",
            target_feature = "fma",
            target_feature = "popcnt",
            target_feature = "lzcnt",
            target_feature = "bmi1",
            target_feature = "bmi2"
        )),
        ignore = "needs a build for x86-64-v3: RUSTFLAGS=\"-C target-cpu=x86-64-v3\""
    )]
    fn x86_equals_portable_walk() {
        #[cfg(target_arch = "x86_64")]
        assert!(
            crate::bvh::simd::Avx2::detect().is_some(),
            "built for x86-64-v3, so only MESHRAY_SIMD=portable turns AVX2 off"
        );
        let mut rng = Rng::new(38);
        let bvh = Bvh::build(mesh(&mut rng));
        let tree = bvh.ray_tree();
        let options = QueryOptions::default();
        let mut visited = 0;
        for ray in rays(&mut rng, 4000) {
            let closest = visits::<false>(&bvh, &ray, true);
            assert_eq!(closest, visits::<false>(&bvh, &ray, false), "{ray:?}");
            assert_eq!(
                visits::<true>(&bvh, &ray, true),
                visits::<true>(&bvh, &ray, false)
            );
            visited += closest.len();
            let bits =
                |f: Option<Found>| f.map(|(s, h)| (s, h.t.to_bits(), h.u.to_bits(), h.v.to_bits()));
            for any in [false, true] {
                let (x86, twin, deep) = if any {
                    (
                        cast::<{ level::EXACT }, true>(tree, &ray, &options),
                        portable::cast::<true, CAPACITY, ()>(tree, &ray, &options, &mut ()),
                        deep_cast::<true>(tree, &ray, &options),
                    )
                } else {
                    (
                        cast::<{ level::EXACT }, false>(tree, &ray, &options),
                        portable::cast::<false, CAPACITY, ()>(tree, &ray, &options, &mut ()),
                        deep_cast::<false>(tree, &ray, &options),
                    )
                };
                assert_eq!(bits(x86), bits(twin), "any {any}: {ray:?}");
                assert_eq!(bits(deep), bits(twin), "any {any}: {ray:?}");
            }
        }
        assert!(visited > 4_000, "{visited} leaf visits");
    }
}
