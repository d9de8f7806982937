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
use super::lanes::{Axis, Lanes, PacketLanes, Row};
use super::slabs::Grow;
use super::walk::{self, Leaves, Visit, octant};
use super::{CAPACITY, DEPTH_LIMIT, Found, Tree};
use crate::bvh::leaf::{LANES, TrianglePacket};
use crate::bvh::packet::WatertightPacket;
use crate::bvh::ray_hits::keep_closer;
use crate::bvh::ray_node::COMPACT;
use crate::bvh::wide::{WIDTH, WideNode};
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
        let mut leaves = PacketTest::<ANY>::new(Avx { _proof: cpu }, tree, ray, culling);
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

impl PacketLanes for Avx {
    type F4 = __m128;
    type M4 = __m128;

    // SAFETY (every method): `self` holds an `X86`, which only the CPU's detection makes
    // where it has AVX2 and FMA.
    #[inline(always)]
    fn splat4(self, x: f32) -> __m128 {
        unsafe { _mm_set1_ps(x) }
    }
    #[inline(always)]
    fn load4(self, row: &[f32; 4]) -> __m128 {
        // SAFETY: and a packet's rows are 16-byte aligned.
        unsafe { _mm_load_ps(row.as_ptr()) }
    }
    #[inline(always)]
    fn load_axis(self, corner: &[[f32; 4]; 3], axis: Axis) -> __m128 {
        // SAFETY: and an `Axis` is below 3, so its row lies in the corner, 16-byte aligned.
        unsafe {
            _mm_load_ps(
                (corner as *const [[f32; 4]; 3])
                    .cast::<u8>()
                    .add(axis.get() * std::mem::size_of::<[f32; 4]>())
                    .cast::<f32>(),
            )
        }
    }
    #[inline(always)]
    fn add4(self, a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_add_ps(a, b) }
    }
    #[inline(always)]
    fn sub4(self, a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_sub_ps(a, b) }
    }
    #[inline(always)]
    fn mul4(self, a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_mul_ps(a, b) }
    }
    #[inline(always)]
    fn div4(self, a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_div_ps(a, b) }
    }
    #[inline(always)]
    fn mul_add4(self, a: __m128, b: __m128, c: __m128) -> __m128 {
        unsafe { _mm_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    fn min4(self, a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_min_ps(a, b) }
    }
    #[inline(always)]
    fn max4(self, a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_max_ps(a, b) }
    }
    #[inline(always)]
    fn abs4(self, a: __m128) -> __m128 {
        unsafe { _mm_andnot_ps(_mm_set1_ps(-0.0), a) }
    }
    #[inline(always)]
    fn gt4(self, a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_cmpgt_ps(a, b) }
    }
    #[inline(always)]
    fn lt4(self, a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_cmplt_ps(a, b) }
    }
    #[inline(always)]
    fn eq4(self, a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_cmpeq_ps(a, b) }
    }
    #[inline(always)]
    fn not_lt4(self, a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_cmp_ps::<_CMP_NLT_UQ>(a, b) }
    }
    #[inline(always)]
    fn not_gt4(self, a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_cmp_ps::<_CMP_NGT_UQ>(a, b) }
    }
    #[inline(always)]
    fn and4(self, a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_and_ps(a, b) }
    }
    #[inline(always)]
    fn or4(self, a: __m128, b: __m128) -> __m128 {
        unsafe { _mm_or_ps(a, b) }
    }
    #[inline(always)]
    fn bits4(self, m: __m128) -> u32 {
        unsafe { _mm_movemask_ps(m) as u32 }
    }
    #[inline(always)]
    fn array4(self, v: __m128) -> [f32; 4] {
        bytemuck::cast(v)
    }
}

/// The exact packet test of a closest (`ANY == false`) or any hit, as the walk's leaves:
/// [`WatertightPacket`] on the x86 lanes, each hit kept by [`keep_closer`] (the closest hit)
/// or ending the walk (`ANY`).
struct PacketTest<'a, const ANY: bool> {
    test: WatertightPacket<'a, Avx>,
    packets: &'a [TrianglePacket],
    index: &'a [u32],
    best: Option<Found>,
}

impl<'a, const ANY: bool> PacketTest<'a, ANY> {
    #[inline(always)]
    fn new(lanes: Avx, tree: Tree<'a>, ray: &'a Ray, culling: Culling) -> Self {
        PacketTest {
            test: WatertightPacket::new(lanes, ray, culling),
            packets: tree.packets,
            index: tree.index,
            best: None,
        }
    }
}

impl<const ANY: bool> Leaves for PacketTest<'_, ANY> {
    #[inline(always)]
    fn enter(&mut self, packet: u32, t_max: &mut f32) -> bool {
        // SAFETY: the packet number is a child word of a ray tree over these packets (made
        // so by `ray_tree`, or loaded and validated), which the walk's caller promises.
        let leaf = unsafe { self.packets.get_unchecked(packet as usize) };
        let (index, best) = (self.index, &mut self.best);
        self.test
            .run(leaf, packet * LANES as u32, t_max, |slot, hit| {
                if ANY {
                    *best = Some((slot, hit));
                    return None;
                }
                keep_closer(index, best, slot, hit);
                Some(hit.t)
            })
    }
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
