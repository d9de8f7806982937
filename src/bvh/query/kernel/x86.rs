//! The walk for x86-64 with AVX2 and FMA: [`Avx`], the walk's [`Lanes`] in AVX2
//! intrinsics, and the watertight packet test in SSE and FMA ([`PacketTest`]), compiled
//! twice: for AVX2 and again for AVX-512 (F and VL), which runs the same operations with 32
//! vector registers and compares into mask registers, so the same answers and the same nodes
//! in the same order.
//!
//! The ray's octant is a constant of the walk (one copy per octant: the node's rows at fixed
//! offsets, the order word's shift a constant), the watertight test's axes a value of the
//! query (a packet's rows read at offsets chosen per ray), so a query kind is eight copies of
//! about 4 KB, which rays in changing directions share in the instruction cache. The octant
//! taken at run time as well (one copy) cost more instructions than the copies' cache misses
//! and slowed camera rays; the axes taken at run time cost nothing (the measurements are in
//! docs/how-it-works/ray-kernel.md §9).
//!
//! The entry points ([`cast`], [`visit`]) are safe: they take an [`X86`], which only the
//! CPU's detection makes, and so is every [`Avx`] method, whose value is made from one.
//! The functions under the entry points are `unsafe` for the instructions (the CPU must have
//! AVX2, FMA, POPCNT, LZCNT, BMI1 and BMI2, and AVX-512 F and VL for its AVX-512 build) and
//! for the tree: a ray tree made by `ray_tree` (or loaded and validated) over its packets and
//! map, no deeper than [`DEPTH_LIMIT`].

// No closure here calls an intrinsic: LLVM may compile a closure on its own for the crate's
// baseline (SSE2), where the intrinsic cannot be inlined, and the walk then calls it as a
// function, a call per operation. The `#[inline(always)]` functions are inlined into
// the walk first and take its instructions.
#![allow(unsafe_code)]

use super::isa::X86;
use super::lanes::{Lanes, Row};
use super::slabs::{EXIT_SLACK, Grow};
use super::walk::{self, Leaves, Visit, octant};
use super::{CAPACITY, DEPTH_LIMIT, Found, Tree};
use crate::bvh::leaf::{LANES, TrianglePacket};
use crate::bvh::packet::{filters, gamma, kept_signs};
use crate::bvh::ray_hits::keep_closer;
use crate::bvh::ray_node::COMPACT;
use crate::bvh::wide::{WIDTH, WideNode};
use crate::watertight::{WatertightRay, edge_functions_f64, mixed_signs};
use crate::{Culling, Ray};
use std::arch::x86_64::*;
use std::mem::MaybeUninit;

/// Runs `$body` with `$q` the octant of `ray`'s direction ([`octant`]) as a constant.
macro_rules! by_octant {
    ($ray:expr, $q:ident => $body:expr) => {{
        match octant($ray) {
            0 => {
                const $q: u8 = 0;
                $body
            }
            1 => {
                const $q: u8 = 1;
                $body
            }
            2 => {
                const $q: u8 = 2;
                $body
            }
            3 => {
                const $q: u8 = 3;
                $body
            }
            4 => {
                const $q: u8 = 4;
                $body
            }
            5 => {
                const $q: u8 = 5;
                $body
            }
            6 => {
                const $q: u8 = 6;
                $body
            }
            _ => {
                const $q: u8 = 7;
                $body
            }
        }
    }};
}

/// The closest hit (`ANY == false`) or the first hit found of `ray` (valid) in `tree` (a
/// `Bvh`'s, no deeper than [`DEPTH_LIMIT`]), the watertight test with
/// `culling`, with the x86 build `cpu` names.
#[inline(always)]
pub(super) fn cast<const ANY: bool>(
    cpu: X86,
    tree: Tree,
    ray: &Ray,
    culling: Culling,
) -> Option<Found> {
    assert!(tree.depth <= DEPTH_LIMIT);
    // SAFETY: `cpu` proves the instructions (`X86::detect`); the tree is a `Bvh`'s, made by
    // `ray_tree` or loaded and validated (child words index its nodes and packets, slots its
    // map), no deeper than `DEPTH_LIMIT` (asserted above, and checked by every caller first,
    // which makes the assertion free).
    unsafe {
        if cpu.avx512() {
            cast_avx512::<ANY>(cpu, tree, ray, culling)
        } else {
            cast_avx2::<ANY>(cpu, tree, ray, culling)
        }
    }
}

/// Walks `nodes` (a `Bvh`'s or a scene's top-level tree, not empty, whose deepest leaf lane
/// is at `depth <= DEPTH_LIMIT`) for `ray` over boxes grown by `grow`, handing each entered
/// leaf lane to `visit` (as [`super::visit`] says), with the x86 build `cpu` names (the AVX2
/// one either way: a visit's leaves are the caller's, so wider registers save little).
#[inline(always)]
pub(super) fn visit<const LANE_ORDER: bool, V: FnMut(u32, &mut f32) -> bool>(
    cpu: X86,
    nodes: &[WideNode],
    depth: usize,
    ray: &Ray,
    grow: &Grow,
    t_max: f32,
    visit: V,
) {
    assert!(depth <= DEPTH_LIMIT && !nodes.is_empty());
    // SAFETY: `cpu` proves the instructions (`X86::detect`); the nodes are a tree made by
    // `ray_tree` (or loaded, or refitted, and validated): child words index `nodes`, and its
    // leaves are no deeper than `depth <= DEPTH_LIMIT` (asserted above, and checked by every
    // caller first). A visit reads no packets and no map.
    unsafe { visit_avx2::<LANE_ORDER, V>(cpu, nodes, ray, grow, t_max, visit) }
}

/// [`cast`] with AVX2 and FMA.
///
/// # Safety
/// As the module says.
#[target_feature(enable = "avx2,fma,popcnt,lzcnt,bmi1,bmi2")]
unsafe fn cast_avx2<const ANY: bool>(
    cpu: X86,
    tree: Tree,
    ray: &Ray,
    culling: Culling,
) -> Option<Found> {
    // SAFETY: as the caller promises.
    unsafe { cast_with::<ANY>(cpu, tree, ray, culling) }
}

/// [`cast_avx2`] compiled for AVX-512 (F and VL) as well.
///
/// # Safety
/// As the module says, and the CPU must have AVX-512 F and VL.
#[target_feature(enable = "avx512f,avx512vl,avx2,fma,popcnt,lzcnt,bmi1,bmi2")]
unsafe fn cast_avx512<const ANY: bool>(
    cpu: X86,
    tree: Tree,
    ray: &Ray,
    culling: Culling,
) -> Option<Found> {
    // SAFETY: as the caller promises.
    unsafe { cast_with::<ANY>(cpu, tree, ray, culling) }
}

/// [`visit`] with AVX2 and FMA.
///
/// # Safety
/// As the module says (the packets and map are not read).
#[target_feature(enable = "avx2,fma,popcnt,lzcnt,bmi1,bmi2")]
unsafe fn visit_avx2<const LANE_ORDER: bool, V: FnMut(u32, &mut f32) -> bool>(
    cpu: X86,
    nodes: &[WideNode],
    ray: &Ray,
    grow: &Grow,
    t_max: f32,
    visit: V,
) {
    let mut leaves = Visit(visit);
    // SAFETY: as the caller promises.
    unsafe {
        by_octant!(ray, Q => walk::walk::<_, LANE_ORDER, CAPACITY, (), _>(
            Avx { _proof: cpu }, nodes, ray, Q, grow, t_max, &mut (), &mut leaves
        ));
    }
}

/// The closest hit or any hit of `ray` with the watertight packet test as the walk's leaves.
///
/// # Safety
/// As the module says; inlined into the wrappers above, which enable the instructions.
#[inline(always)]
unsafe fn cast_with<const ANY: bool>(
    cpu: X86,
    tree: Tree,
    ray: &Ray,
    culling: Culling,
) -> Option<Found> {
    // SAFETY: as the caller promises.
    unsafe {
        let mut leaves = PacketTest::<ANY>::new(tree, ray, culling);
        by_octant!(ray, Q => walk::walk::<_, ANY, CAPACITY, (), _>(
            Avx { _proof: cpu }, tree.nodes, ray, Q, &Grow::NONE, ray.t_max(), &mut (), &mut leaves
        ));
        leaves.best
    }
}

/// The walk's [`Lanes`] in AVX2 intrinsics, made only from an [`X86`]: holding one proves
/// the CPU has the instructions. Inlined into the walk, which the wrappers above compile
/// for AVX2 or AVX-512.
#[derive(Clone, Copy)]
struct Avx {
    _proof: X86,
}

impl Lanes for Avx {
    type F = __m256;
    type U = __m256i;
    type M = __m256;

    // SAFETY (every method): `self` holds an `X86`, which only the CPU's detection makes
    // where it has AVX2 (and FMA, POPCNT, LZCNT, BMI1, BMI2).
    #[inline(always)]
    fn splat(self, x: f32) -> __m256 {
        unsafe { _mm256_set1_ps(x) }
    }
    #[inline(always)]
    fn splat_u(self, x: u32) -> __m256i {
        unsafe { _mm256_set1_epi32(x as i32) }
    }
    #[inline(always)]
    fn row(self, node: &WideNode, row: Row) -> __m256 {
        // SAFETY: and a `Row`'s offset is that of one of the node's `min` or `max` rows,
        // 32-byte aligned inside it.
        unsafe {
            _mm256_load_ps(
                (node as *const WideNode)
                    .cast::<u8>()
                    .add(row.offset())
                    .cast::<f32>(),
            )
        }
    }
    #[inline(always)]
    fn children(self, node: &WideNode) -> __m256i {
        // SAFETY: and the child words are 32-byte aligned in the node.
        unsafe { _mm256_load_si256(node.child.as_ptr() as *const __m256i) }
    }
    #[inline(always)]
    fn order(self, node: &WideNode, shift: __m256i) -> __m256i {
        // SAFETY: and the order words are 32-byte aligned in the node.
        unsafe {
            _mm256_srlv_epi32(
                _mm256_load_si256(node.order.as_ptr() as *const __m256i),
                shift,
            )
        }
    }
    #[inline(always)]
    fn sub(self, a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_sub_ps(a, b) }
    }
    #[inline(always)]
    fn mul(self, a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_mul_ps(a, b) }
    }
    #[inline(always)]
    fn add(self, a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_add_ps(a, b) }
    }
    #[inline(always)]
    fn raise(self, bound: __m256, t: __m256) -> __m256 {
        // `maxps` returns its second operand when either is NaN, or on a tie.
        unsafe { _mm256_max_ps(t, bound) }
    }
    #[inline(always)]
    fn lower(self, bound: __m256, t: __m256) -> __m256 {
        unsafe { _mm256_min_ps(t, bound) }
    }
    #[inline(always)]
    fn le(self, a: __m256, b: __m256) -> __m256 {
        unsafe { _mm256_cmp_ps::<_CMP_LE_OQ>(a, b) }
    }
    #[inline(always)]
    fn bits(self, m: __m256) -> u8 {
        unsafe { _mm256_movemask_ps(m) as u8 }
    }
    #[inline(always)]
    fn permute_m(self, m: __m256, lanes: __m256i) -> __m256 {
        unsafe { _mm256_permutevar8x32_ps(m, lanes) }
    }
    #[inline(always)]
    fn permute_u(self, v: __m256i, lanes: __m256i) -> __m256i {
        unsafe { _mm256_permutevar8x32_epi32(v, lanes) }
    }
    #[inline(always)]
    fn permute_f(self, v: __m256, lanes: __m256i) -> __m256 {
        unsafe { _mm256_permutevar8x32_ps(v, lanes) }
    }
    #[inline(always)]
    fn compact(self, mask: u32) -> __m256i {
        // SAFETY: and the table has 256 rows of 8 bytes, the row taken below 256.
        unsafe {
            _mm256_cvtepu8_epi32(_mm_loadl_epi64(
                COMPACT.as_ptr().add(mask as usize & 0xff) as *const __m128i
            ))
        }
    }
    #[inline(always)]
    fn sorted(self, key: __m256, entered: __m256) -> __m256i {
        unsafe {
            _mm256_and_si256(
                sort::sort_descending(sort::order_keys(key, entered)),
                _mm256_set1_epi32(7),
            )
        }
    }
    #[inline(always)]
    fn to_array(self, v: __m256) -> [f32; WIDTH] {
        bytemuck::cast(v)
    }
    #[inline(always)]
    fn store_u(self, to: &mut [MaybeUninit<u32>; WIDTH], v: __m256i) {
        // SAFETY: and `to` is 32 writable bytes.
        unsafe { _mm256_storeu_si256(to.as_mut_ptr() as *mut __m256i, v) }
    }
    #[inline(always)]
    fn store_f(self, to: &mut [MaybeUninit<f32>; WIDTH], v: __m256) {
        // SAFETY: and `to` is 32 writable bytes.
        unsafe { _mm256_storeu_ps(to.as_mut_ptr() as *mut f32, v) }
    }
}

/// The exact packet test of a closest (`ANY == false`) or any hit, as the walk's leaves: the
/// edge test in SIMD, a conservative filter on the sheared `t`, then the scalar test's end
/// for each lane that may hit in range, each hit kept by [`keep_closer`] (the closest hit)
/// or ending the walk (`ANY`).
struct PacketTest<'a, const ANY: bool> {
    packets: &'a [TrianglePacket],
    index: &'a [u32],
    ray: WatertightRay<'a>,
    /// The origin on axes `kx`, `ky`, `kz`, four times.
    origin: [__m128; 3],
    /// The shear `sx`, `sy` and `1/d[kz]`, four times.
    shear: [__m128; 3],
    /// The byte offsets of the rows `kx`, `ky`, `kz` in a corner's `[[f32; 4]; 3]`.
    rows: [usize; 3],
    t_min4: __m128,
    culling: Culling,
    t_min: f32,
    /// The lanes whose sign of the determinant `culling` keeps: positive, negative.
    keep: (u32, u32),
    /// Whether the leaf filters its candidates by their `f32` `t` before the scalar end
    /// ([`filters`]).
    filter: bool,
    /// The ray's origin, reciprocal direction and signs, for its triangles' box entries
    /// and exits ([`box_bounds`](Self::box_bounds)).
    ray_origin: [f32; 3],
    inv: [f32; 3],
    negative: [bool; 3],
    best: Option<Found>,
}

impl<'a, const ANY: bool> PacketTest<'a, ANY> {
    #[inline(always)]
    unsafe fn new(tree: Tree<'a>, ray: &'a Ray, culling: Culling) -> Self {
        let w = WatertightRay::new(ray);
        let (origin, direction) = (ray.origin_axes(), ray.direction_axes());
        // SAFETY: SSE, as every x86-64.
        let splat = |x: f32| unsafe { _mm_set1_ps(x) };
        PacketTest {
            packets: tree.packets,
            index: tree.index,
            origin: [
                splat(origin[w.kx]),
                splat(origin[w.ky]),
                splat(origin[w.kz]),
            ],
            shear: [splat(w.sx), splat(w.sy), splat(1.0 / direction[w.kz])],
            rows: [w.kx, w.ky, w.kz].map(|k| k * std::mem::size_of::<[f32; LANES]>()),
            t_min4: splat(ray.t_min()),
            ray: w,
            culling,
            t_min: ray.t_min(),
            keep: kept_signs(culling),
            filter: filters(ray),
            ray_origin: *origin,
            inv: ray.inv_direction().into(),
            negative: ray.negative(),
            best: None,
        }
    }
}

impl<const ANY: bool> Leaves for PacketTest<'_, ANY> {
    #[inline(always)]
    fn enter(&mut self, packet: u32, t_max: &mut f32) -> bool {
        // SAFETY: inlined only into the walk, which enables AVX2 and FMA; the packet number
        // is a child word of a ray tree over these packets (made so by `ray_tree`).
        unsafe {
            let leaf = self.packets.get_unchecked(packet as usize);
            let hit = self.test(leaf, packet * LANES as u32, t_max);
            ANY && hit
        }
    }
}

impl<const ANY: bool> PacketTest<'_, ANY> {
    /// Tests `packet`'s four lanes (slots from `first_slot`) up to `t_max`, lowering it to
    /// each closer hit; whether it found a hit.
    #[inline(always)]
    unsafe fn test(&mut self, packet: &TrianglePacket, first_slot: u32, t_max: &mut f32) -> bool {
        // SAFETY: compiled only into the walk, which enables AVX2 and FMA.
        unsafe {
            let corners = self.sheared(packet);
            let w = edges(&corners);
            let (positive, negative, on_edge) = signs(&w);
            let inside = (positive & self.keep.0) | (negative & self.keep.1);
            if inside | on_edge == 0 {
                return false;
            }
            let mut lanes_left = on_edge;
            // The lanes' own boxes, where the filter needs them (else computed below).
            let mut bounds = None;
            if !self.filter {
                lanes_left |= inside;
            } else if inside != 0 {
                let [wa, wb, wc] = w;
                let [(ax, ay, az), (bx, by, bz), (cx, cy, cz)] = corners;
                let sz = self.shear[2];
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
                let (enter, leave) = self.box_bounds(packet);
                bounds = Some((enter, leave));
                let may = _mm_and_ps(
                    _mm_cmp_ps::<_CMP_NLT_UQ>(_mm_max_ps(enter, _mm_add_ps(t, delta)), self.t_min4),
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
            let (enter, leave) = bounds.unwrap_or_else(|| self.box_bounds(packet));
            let (entries, exits) = (lanes(enter), lanes(leave));
            let mut found = false;
            while lanes_left != 0 {
                let lane = lanes_left.trailing_zeros() as usize;
                lanes_left &= lanes_left - 1;
                let mut e = [wa[lane], wb[lane], wc[lane]];
                if on_edge & (1 << lane) != 0 {
                    // The scalar test's `f64` path from the same sheared corners.
                    let [(ax, ay, _), (bx, by, _), (cx, cy, _)] = corners;
                    let at = |v: __m128| lanes(v)[lane];
                    e = edge_functions_f64([at(ax), at(ay)], [at(bx), at(by)], [at(cx), at(cy)]);
                    if mixed_signs(e) {
                        continue;
                    }
                }
                let tri = packet.get(lane);
                let hit = self.ray.finish_boxed(
                    &tri,
                    e,
                    (entries[lane], exits[lane]),
                    self.t_min,
                    *t_max,
                    self.culling,
                );
                let Some(h) = hit else { continue };
                let slot = first_slot + lane as u32;
                if ANY {
                    self.best = Some((slot, h));
                    return true;
                }
                keep_closer(self.index, &mut self.best, slot, h);
                *t_max = h.t;
                found = true;
            }
            found
        }
    }

    /// A packet's corners translated to the origin and sheared so the ray runs along +z,
    /// operation for operation as `WatertightRay::intersect` (not fused), so a ray through
    /// an edge goes to the triangle the scalar test gives it: `(x, y, z)` per corner, `z`
    /// not yet scaled.
    #[inline(always)]
    unsafe fn sheared(&self, packet: &TrianglePacket) -> [(__m128, __m128, __m128); 3] {
        // SAFETY: compiled only into the walk, which enables AVX2; the axes are in 0..3.
        unsafe {
            let [kx, ky, kz] = self.rows;
            let [okx, oky, okz] = self.origin;
            let [sx, sy, _] = self.shear;
            macro_rules! corner {
                ($p:expr) => {{
                    let p = $p;
                    let z = _mm_sub_ps(ld_at(p, kz), okz);
                    (
                        _mm_sub_ps(_mm_sub_ps(ld_at(p, kx), okx), _mm_mul_ps(sx, z)),
                        _mm_sub_ps(_mm_sub_ps(ld_at(p, ky), oky), _mm_mul_ps(sy, z)),
                        z,
                    )
                }};
            }
            [corner!(&packet.a), corner!(&packet.b), corner!(&packet.c)]
        }
    }

    /// Where the ray enters and leaves each lane's triangle's bounding box: the scalar
    /// test's [`box_bounds`](crate::triangle::box_bounds), operation for operation (x86's
    /// `min` and `max` keep the second operand unless the first is strictly beyond, as they
    /// do), so the same bits.
    #[inline(always)]
    unsafe fn box_bounds(&self, packet: &TrianglePacket) -> (__m128, __m128) {
        // SAFETY: compiled only into the walk, which enables AVX2 and FMA.
        unsafe {
            let mut enter = _mm_set1_ps(f32::NEG_INFINITY);
            let mut leave = _mm_set1_ps(f32::INFINITY);
            for k in 0..3 {
                let (a, b, c) = (ld(&packet.a[k]), ld(&packet.b[k]), ld(&packet.c[k]));
                let least = _mm_min_ps(_mm_min_ps(a, b), c);
                let greatest = _mm_max_ps(_mm_max_ps(a, b), c);
                let (first, last) = if self.negative[k] {
                    (greatest, least)
                } else {
                    (least, greatest)
                };
                let (o, inv) = (_mm_set1_ps(self.ray_origin[k]), _mm_set1_ps(self.inv[k]));
                let near = _mm_mul_ps(_mm_sub_ps(first, o), inv);
                let far = _mm_mul_ps(_mm_sub_ps(last, o), inv);
                enter = _mm_max_ps(near, enter);
                leave = _mm_min_ps(far, leave);
            }
            (enter, leave)
        }
    }
}

/// The edge functions of sheared corners, without fusing, so a shared edge gives exactly
/// negated values in its two triangles (and the scalar test's bits).
#[inline(always)]
unsafe fn edges(c: &[(__m128, __m128, __m128); 3]) -> [__m128; 3] {
    // SAFETY: compiled only into the walk, which enables AVX2.
    unsafe {
        let [(ax, ay, _), (bx, by, _), (cx, cy, _)] = *c;
        [
            _mm_sub_ps(_mm_mul_ps(cx, by), _mm_mul_ps(cy, bx)),
            _mm_sub_ps(_mm_mul_ps(ax, cy), _mm_mul_ps(ay, cx)),
            _mm_sub_ps(_mm_mul_ps(bx, ay), _mm_mul_ps(by, ax)),
        ]
    }
}

/// Bit masks of the lanes whose three edge functions are all positive, all negative, and of
/// those with one exactly zero.
#[inline(always)]
unsafe fn signs(w: &[__m128; 3]) -> (u32, u32, u32) {
    // SAFETY: compiled only into the walk, which enables AVX2.
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
/// `sz·(wa·az + wb·bz + wc·cz) / det`, of four lanes (`corners` as
/// [`PacketTest::sheared`] gives them).
#[inline(always)]
unsafe fn sheared_t(
    w: &[__m128; 3],
    corners: &[(__m128, __m128, __m128); 3],
    sz: __m128,
) -> (__m128, __m128) {
    // SAFETY: inlined into the walk, which enables AVX2 and FMA.
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

/// The row of four at `offset` bytes into a packet's corner.
#[inline(always)]
unsafe fn ld_at(corner: &[[f32; LANES]; 3], offset: usize) -> __m128 {
    // SAFETY: the offsets the leaf passes are those of the corner's three rows, 16-byte
    // aligned.
    unsafe {
        _mm_load_ps(
            (corner as *const [[f32; LANES]; 3])
                .cast::<u8>()
                .add(offset)
                .cast::<f32>(),
        )
    }
}

/// A packet's row of four.
#[inline(always)]
unsafe fn ld(r: &[f32; LANES]) -> __m128 {
    // SAFETY: `r` is 16-byte aligned (a `TrianglePacket` row).
    unsafe { _mm_load_ps(r.as_ptr()) }
}

#[inline(always)]
unsafe fn abs(v: __m128) -> __m128 {
    // SAFETY: SSE, as every x86-64.
    unsafe { _mm_andnot_ps(_mm_set1_ps(-0.0), v) }
}

/// The largest magnitude of three.
#[inline(always)]
unsafe fn max3(a: __m128, b: __m128, c: __m128) -> __m128 {
    // SAFETY: SSE, as every x86-64.
    unsafe { _mm_max_ps(abs(a), _mm_max_ps(abs(b), abs(c))) }
}

/// The sorting network of `network` in AVX2, key for key.
mod sort {
    use super::super::network::NOT_ENTERED;
    use crate::bvh::wide::WIDTH;
    use std::arch::x86_64::*;

    /// [`order_key`](super::super::network::order_key) of each lane's `t`, [`NOT_ENTERED`] where `entered`
    /// is clear.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[inline(always)]
    pub(crate) unsafe fn order_keys(t: __m256, entered: __m256) -> __m256i {
        // SAFETY: the caller promises AVX2.
        unsafe {
            let bits = _mm256_castps_si256(t);
            let flip = _mm256_srli_epi32::<1>(_mm256_srai_epi32::<31>(bits));
            let key = _mm256_or_si256(
                _mm256_and_si256(_mm256_xor_si256(bits, flip), _mm256_set1_epi32(!7)),
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
            );
            _mm256_blendv_epi8(
                _mm256_set1_epi32(NOT_ENTERED),
                key,
                _mm256_castps_si256(entered),
            )
        }
    }

    /// One layer of the network: lane `i` of each pair takes the larger key, lane `j` (the
    /// bits of `J`) the smaller; `partner` names each lane's pair.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[inline(always)]
    unsafe fn layer<const J: i32>(v: __m256i, partner: [i32; WIDTH]) -> __m256i {
        // SAFETY: the caller promises AVX2.
        unsafe {
            let p = _mm256_permutevar8x32_epi32(v, bytemuck::cast(partner));
            _mm256_blend_epi32::<J>(_mm256_max_epi32(v, p), _mm256_min_epi32(v, p))
        }
    }

    /// Eight keys sorted largest first by [`NETWORK`](super::super::network::NETWORK).
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[inline(always)]
    pub(crate) unsafe fn sort_descending(v: __m256i) -> __m256i {
        // SAFETY: the caller promises AVX2.
        unsafe {
            let v = layer::<0b1100_1100>(v, [2, 3, 0, 1, 6, 7, 4, 5]);
            let v = layer::<0b1111_0000>(v, [4, 5, 6, 7, 0, 1, 2, 3]);
            let v = layer::<0b1010_1010>(v, [1, 0, 3, 2, 5, 4, 7, 6]);
            let v = layer::<0b0011_0000>(v, [0, 1, 4, 5, 2, 3, 6, 7]);
            let v = layer::<0b0101_0000>(v, [0, 4, 2, 6, 1, 5, 3, 7]);
            layer::<0b0101_0100>(v, [0, 2, 1, 4, 3, 6, 5, 7])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::network::sorted_lanes;
    use super::*;

    /// The AVX2 sort gives the portable twin's lanes, key for key, on random distances and
    /// masks, where the CPU has AVX2 (`Isa::x86_runs_here`).
    #[test]
    fn x86_equals_portable_sort() {
        if !super::super::isa::Isa::x86_runs_here("sort") {
            return;
        }
        let mut rng = crate::test_support::Rng::new(5);
        for round in 0..20_000u32 {
            let t: [f32; WIDTH] = std::array::from_fn(|k| match (round + k as u32) % 9 {
                0 => -0.0,
                1 => f32::INFINITY,
                2 => 1.0,
                _ => rng.range(-4.0, 4.0),
            });
            let mask = round % 256;
            let want = sorted_lanes(mask, &t);
            let entered: [u32; WIDTH] =
                std::array::from_fn(|k| if mask & (1 << k) != 0 { !0 } else { 0 });
            // SAFETY: the CPU has AVX2 (checked above).
            let got = unsafe { sorted_avx2(t, entered) };
            assert_eq!(want, got.map(|k| k as usize), "round {round}");
        }

        #[target_feature(enable = "avx2")]
        unsafe fn sorted_avx2(t: [f32; WIDTH], entered: [u32; WIDTH]) -> [u32; WIDTH] {
            // SAFETY: AVX2 is enabled here, which the caller checked.
            unsafe {
                let keys = sort::order_keys(bytemuck::cast(t), bytemuck::cast(entered));
                let lanes = _mm256_and_si256(sort::sort_descending(keys), _mm256_set1_epi32(7));
                bytemuck::cast(lanes)
            }
        }
    }
}
