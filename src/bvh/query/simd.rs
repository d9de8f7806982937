//! The machine's vector width, chosen at run time.
//!
//! The crate is compiled for baseline x86-64 (SSE2) unless its user sets `target-cpu`, so the
//! portable path tests a node's eight boxes in two 4-wide halves. On a CPU with AVX2 and FMA
//! (detected once, with `is_x86_feature_detected!`) ray walks run a second copy of the walk
//! compiled for those instructions: the single-ray walk with the node visit of
//! [`x86::enter_avx2`] (the eight boxes in one 8-wide pass, the entered children ordered by
//! a sorting network in registers), and the packet walk; the leaf tests are the portable
//! code, compiled again with VEX encodings. Both copies perform the same operations in the
//! same order, so they answer alike bit for bit and visit the same nodes in the same order
//! (tested below and by the exactness tests, which run on whichever path the machine takes;
//! `MESHRAY_SIMD=portable` in the environment forces the portable path).
//!
//! Why: callgrind counts 16 % fewer instructions for the bunny bench's closest-hit rays
//! (54.6M to 45.7M), and a build for the machine's own CPU (`target-cpu=native`) ran 1.05× to
//! 1.35× the portable one's Mrays/s; this path gets that without asking users for
//! `target-cpu`. The `unsafe` here is the calls into the AVX2 code, each allowed only
//! through an [`Avx2`] token, which exists only when the CPU has the instructions.

use crate::Ray;
use crate::aabb::RaySlabs;
use crate::bvh::ray_walk::{self, PortableKernel};
#[cfg(target_arch = "x86_64")]
use crate::bvh::ray_walk::{Entered, RayKernel, RayStack};
use crate::bvh::traverse::Tally;
use crate::bvh::walk::{Visitor, walk};
use crate::bvh::wide::{WideNode, WideRay};

/// How a ray walk tests a node's boxes: the portable way or with AVX2.
pub(crate) trait NodeTest: Copy {
    /// Runs [`walk`], compiled for this way's instructions.
    fn walk<V: Visitor>(self, nodes: &[WideNode], visitor: &mut V);

    /// Runs the single-ray walk ([`ray_walk::walk`]) with this way's node visit, compiled
    /// for its instructions. The ray's lanes ([`WideRay`]) are made inside, with those
    /// instructions (an AVX2 broadcast each).
    fn walk_ray<T: Tally, L: FnMut(usize, usize, &mut f32) -> bool>(
        self,
        nodes: &[WideNode],
        ray: &Ray,
        range: (f32, f32),
        tally: &mut T,
        leaf: L,
    );
}

/// The portable slab test ([`lane_intervals`]).
#[derive(Clone, Copy)]
pub(crate) struct Portable;

impl NodeTest for Portable {
    #[inline(always)]
    fn walk<V: Visitor>(self, nodes: &[WideNode], visitor: &mut V) {
        walk(nodes, visitor)
    }

    // Out of line on x86-64, where it is the fallback of CPUs without AVX2, so that the
    // query which picks between the walks keeps the AVX2 walk's set-up lean; inlined
    // elsewhere, where it is the walk.
    #[cfg_attr(target_arch = "x86_64", inline(never))]
    #[cfg_attr(not(target_arch = "x86_64"), inline(always))]
    fn walk_ray<T: Tally, L: FnMut(usize, usize, &mut f32) -> bool>(
        self,
        nodes: &[WideNode],
        ray: &Ray,
        (t_min, t_max): (f32, f32),
        tally: &mut T,
        leaf: L,
    ) {
        let ray = WideRay::new(&RaySlabs::new(ray));
        ray_walk::walk(PortableKernel, nodes, &ray, t_min, t_max, tally, leaf)
    }
}

/// Proof that this CPU runs AVX2 and FMA: only [`Avx2::detect`] makes one (and a unit test
/// built for x86-64-v3, whose binary runs only on such a CPU).
#[derive(Clone, Copy)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// A token when the CPU has AVX2 and FMA (and the bit instructions every AVX2 CPU has:
    /// POPCNT, LZCNT, BMI1 and BMI2, which the walk's lane masks use) and `MESHRAY_SIMD` is
    /// not `portable`; looked up once per process.
    #[inline(always)]
    pub fn detect() -> Option<Avx2> {
        #[cfg(target_arch = "x86_64")]
        {
            static USE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
            let usable = *USE.get_or_init(|| {
                std::env::var_os("MESHRAY_SIMD").is_none_or(|v| v != "portable")
                    && std::is_x86_feature_detected!("avx2")
                    && std::is_x86_feature_detected!("fma")
                    && std::is_x86_feature_detected!("popcnt")
                    && std::is_x86_feature_detected!("lzcnt")
                    && std::is_x86_feature_detected!("bmi1")
                    && std::is_x86_feature_detected!("bmi2")
            });
            usable.then_some(Avx2(()))
        }
        #[cfg(not(target_arch = "x86_64"))]
        None
    }
}

impl NodeTest for Avx2 {
    /// Runs [`walk`] compiled for AVX2 and FMA.
    #[inline(always)]
    fn walk<V: Visitor>(self, nodes: &[WideNode], visitor: &mut V) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: an `Avx2` exists only when the CPU has AVX2 and FMA (`detect`).
        #[allow(unsafe_code)]
        unsafe {
            x86::walk_avx2(nodes, visitor)
        }
        #[cfg(not(target_arch = "x86_64"))]
        walk(nodes, visitor)
    }

    /// Runs [`ray_walk::walk`] compiled for AVX2 and FMA, with [`Avx2`]'s node visit.
    #[inline(always)]
    fn walk_ray<T: Tally, L: FnMut(usize, usize, &mut f32) -> bool>(
        self,
        nodes: &[WideNode],
        ray: &Ray,
        (t_min, t_max): (f32, f32),
        tally: &mut T,
        leaf: L,
    ) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: an `Avx2` exists only when the CPU has AVX2 and FMA (`detect`).
        #[allow(unsafe_code)]
        unsafe {
            x86::walk_ray_avx2(self, nodes, ray, t_min, t_max, tally, leaf)
        }
        // (No `Avx2` is ever made off x86-64.)
        #[cfg(not(target_arch = "x86_64"))]
        Portable.walk_ray(nodes, ray, (t_min, t_max), tally, leaf)
    }
}

/// The AVX2 node visit for rays of one octant: `OCTANT`'s bit `a` set when the direction is
/// negative on axis `a`, so which of a box's planes the ray meets first is known when the
/// walk is compiled, not looked up per axis and node visit (as tinybvh's per-octant
/// kernels; Fuetterling et al. 2017).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(crate) struct Avx2Octant<const OCTANT: u8>(Avx2);

#[cfg(target_arch = "x86_64")]
impl<const OCTANT: u8> RayKernel for Avx2Octant<OCTANT> {
    #[inline(always)]
    fn leaf<L: FnMut(usize, usize, &mut f32) -> bool>(
        self,
        leaf: &mut L,
        first: usize,
        count: usize,
        t_max: &mut f32,
    ) -> bool {
        let Avx2(()) = self.0;
        // SAFETY: an `Avx2` exists only when the CPU has AVX2 and FMA (`detect`).
        #[allow(unsafe_code)]
        unsafe {
            let (stop, t) = x86::leaf_avx2(leaf, first, count, *t_max);
            *t_max = t;
            stop
        }
    }

    #[inline(always)]
    fn enter(
        self,
        node: &WideNode,
        ray: &WideRay,
        t_min: f32,
        t_max: f32,
        stack: &mut RayStack,
    ) -> Entered {
        debug_assert_eq!(ray.octant(), OCTANT);
        let Avx2(()) = self.0;
        // SAFETY: an `Avx2` exists only when the CPU has AVX2 and FMA (`detect`).
        #[allow(unsafe_code)]
        unsafe {
            x86::enter_avx2::<OCTANT>(node, ray, t_min, t_max, stack)
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub(in crate::bvh) mod x86 {
    use super::*;
    use crate::bvh::ray_walk::{NOT_ENTERED, Waiting};
    use crate::bvh::wide::{EXIT_SLACK, WIDTH};
    use std::arch::x86_64::*;

    /// [`ray_walk::walk`] with AVX2 and FMA enabled, so its inlined steps (the leaf tests)
    /// are compiled for them too.
    #[target_feature(enable = "avx2,fma,popcnt,lzcnt,bmi1,bmi2")]
    pub(in crate::bvh) fn walk_ray_avx2<T: Tally, L: FnMut(usize, usize, &mut f32) -> bool>(
        avx2: Avx2,
        nodes: &[WideNode],
        ray: &Ray,
        t_min: f32,
        t_max: f32,
        tally: &mut T,
        leaf: L,
    ) {
        let ray = &WideRay::new(&RaySlabs::new(ray));
        macro_rules! octants {
            ($($octant:literal)*) => {
                match ray.octant() {
                    $($octant => ray_walk::walk(
                        Avx2Octant::<$octant>(avx2), nodes, ray, t_min, t_max, tally, leaf,
                    ),)*
                    _ => unreachable!("three sign bits"),
                }
            };
        }
        octants!(0 1 2 3 4 5 6 7)
    }

    /// A leaf of the AVX2 walk, out of line (the per-octant walks call it rather than each
    /// taking a copy, which measured slower) and compiled for AVX2 and FMA (as a plain
    /// closure it was compiled for the crate's baseline, SSE2). `t_max` goes in by value and
    /// comes back with the stop flag, which counted fewer instructions than passing it by
    /// reference. The queries mark their leaf closures `#[inline(always)]`: left to itself
    /// LLVM kept a closure out of line (it serves the portable walk too), and then this
    /// function called the closure's baseline copy.
    #[target_feature(enable = "avx2,fma,popcnt,lzcnt,bmi1,bmi2")]
    #[inline(never)]
    pub(in crate::bvh) fn leaf_avx2<L: FnMut(usize, usize, &mut f32) -> bool>(
        leaf: &mut L,
        first: usize,
        count: usize,
        mut t_max: f32,
    ) -> (bool, f32) {
        let stop = leaf(first, count, &mut t_max);
        (stop, t_max)
    }

    /// [`PortableKernel`]'s node visit in registers: the slab test of [`slabs`], then for
    /// three or more entered children the keys of [`ray_walk::order_key`] sorted by the
    /// network [`ray_walk::NETWORK`] (one layer: a permutation, a maximum, a minimum, a
    /// blend), the children's words and distances permuted into stack order and stored in
    /// one store per array, and the nearest child found by [`min_key`] beside the sort.
    ///
    /// Not a `#[target_feature]` function, which LLVM declined to inline into the walk (a
    /// call per node visit, its answer through memory): `#[inline(always)]` puts it inside
    /// [`walk_ray_avx2`], which enables the instructions.
    ///
    /// # Safety
    /// The CPU must have AVX2 and FMA.
    #[allow(unsafe_code)]
    #[inline(always)]
    pub(in crate::bvh) unsafe fn enter_avx2<const OCTANT: u8>(
        node: &WideNode,
        ray: &WideRay,
        t_min: f32,
        t_max: f32,
        stack: &mut RayStack,
    ) -> Entered {
        // SAFETY: the caller promises AVX2 and FMA.
        #[allow(unsafe_code)]
        unsafe {
            let (entered, near) = slabs::<OCTANT>(node, ray, t_min, t_max);
            let mask = _mm256_movemask_ps(entered) as u32;
            if mask == 0 {
                return Entered::None;
            }
            if mask & (mask - 1) == 0 {
                let k = mask.trailing_zeros() as usize;
                let entry = bytemuck::cast::<__m256, [f32; WIDTH]>(near)[k];
                return Entered::One(Waiting::lane(node, k, entry));
            }
            // These early exits repeat `ray_walk::order_lanes`'s: sharing them through one
            // function returning `Option<Entered>` counted more instructions per ray
            // (callgrind), so the twins stay, kept alike by the node-visit test.
            let rest = mask & (mask - 1);
            if rest & (rest - 1) == 0 {
                let near = bytemuck::cast::<__m256, [f32; WIDTH]>(near);
                let (a, b) = (
                    mask.trailing_zeros() as usize,
                    rest.trailing_zeros() as usize,
                );
                return ray_walk::two_lanes(node, (a, near[a]), (b, near[b]), stack);
            }
            let key = order_keys(near, entered);
            // The nearest, by a minimum over the entered keys (the not-entered ones raised to
            // the largest key), for the walk's next step; the rest, sorted, for the stack.
            let lanes = _mm256_set1_epi32(7);
            let entered_keys = _mm256_blendv_epi8(
                _mm256_set1_epi32(i32::MAX),
                key,
                _mm256_castps_si256(entered),
            );
            let nearest = (min_key(entered_keys) & 7) as usize;
            let lane = _mm256_and_si256(sort_descending(key), lanes);
            let words = |w: [u32; WIDTH]| {
                let w = bytemuck::cast::<[u32; WIDTH], __m256i>(w);
                bytemuck::cast::<__m256i, [u32; WIDTH]>(_mm256_permutevar8x32_epi32(w, lane))
            };
            stack.push_lanes(
                words(node.child),
                words(node.counts()),
                bytemuck::cast::<__m256, [f32; WIDTH]>(_mm256_permutevar8x32_ps(near, lane)),
                mask.count_ones() as usize - 1,
            );
            let entry = bytemuck::cast::<__m256, [f32; WIDTH]>(near)[nearest];
            Entered::One(Waiting::lane(node, nearest, entry))
        }
    }

    /// [`ray_walk::order_key`] of each lane's `t`, [`NOT_ENTERED`] where `entered` is clear.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[allow(unsafe_code)]
    #[inline(always)]
    pub(in crate::bvh) unsafe fn order_keys(t: __m256, entered: __m256) -> __m256i {
        // SAFETY: the caller promises AVX2.
        #[allow(unsafe_code)]
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
    #[allow(unsafe_code)]
    #[inline(always)]
    pub(in crate::bvh) unsafe fn layer<const J: i32>(v: __m256i, partner: [i32; WIDTH]) -> __m256i {
        // SAFETY: the caller promises AVX2.
        #[allow(unsafe_code)]
        unsafe {
            let p = _mm256_permutevar8x32_epi32(v, bytemuck::cast(partner));
            _mm256_blend_epi32::<J>(_mm256_max_epi32(v, p), _mm256_min_epi32(v, p))
        }
    }

    /// The smallest of eight keys.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[allow(unsafe_code)]
    #[inline(always)]
    unsafe fn min_key(v: __m256i) -> i32 {
        // SAFETY: the caller promises AVX2.
        #[allow(unsafe_code)]
        unsafe {
            let v = _mm256_min_epi32(v, _mm256_permute2x128_si256::<1>(v, v));
            let v = _mm256_min_epi32(v, _mm256_shuffle_epi32::<0b0100_1110>(v));
            let v = _mm256_min_epi32(v, _mm256_shuffle_epi32::<0b1011_0001>(v));
            _mm256_cvtsi256_si32(v)
        }
    }

    /// Eight keys sorted largest first by [`ray_walk::NETWORK`].
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[allow(unsafe_code)]
    #[inline(always)]
    pub(in crate::bvh) unsafe fn sort_descending(v: __m256i) -> __m256i {
        // SAFETY: the caller promises AVX2.
        #[allow(unsafe_code)]
        unsafe {
            let v = layer::<0b1100_1100>(v, [2, 3, 0, 1, 6, 7, 4, 5]);
            let v = layer::<0b1111_0000>(v, [4, 5, 6, 7, 0, 1, 2, 3]);
            let v = layer::<0b1010_1010>(v, [1, 0, 3, 2, 5, 4, 7, 6]);
            let v = layer::<0b0011_0000>(v, [0, 1, 4, 5, 2, 3, 6, 7]);
            let v = layer::<0b0101_0000>(v, [0, 4, 2, 6, 1, 5, 3, 7]);
            layer::<0b0101_0100>(v, [0, 2, 1, 4, 3, 6, 5, 7])
        }
    }

    /// The slab test of [`lane_intervals`] in one 8-wide pass: the lanes entered (all ones)
    /// and the entry distances.
    #[target_feature(enable = "avx2,fma,popcnt,lzcnt,bmi1,bmi2")]
    #[inline]
    pub(in crate::bvh) fn slabs<const OCTANT: u8>(
        node: &WideNode,
        ray: &WideRay,
        t_min: f32,
        t_max: f32,
    ) -> (__m256, __m256) {
        let lanes = |v: [f32; WIDTH]| bytemuck::cast::<[f32; WIDTH], __m256>(v);
        let mut near = _mm256_set1_ps(t_min);
        let mut far = _mm256_set1_ps(t_max);
        for a in 0..3 {
            let (lo, hi) = if OCTANT & (1 << a) != 0 {
                (node.max[a], node.min[a])
            } else {
                (node.min[a], node.max[a])
            };
            let origin = bytemuck::cast::<_, __m256>(ray.origin[a]);
            let inv = bytemuck::cast::<_, __m256>(ray.inv_direction[a]);
            let t0 = _mm256_mul_ps(_mm256_sub_ps(lanes(lo), origin), inv);
            let t1 = _mm256_mul_ps(_mm256_sub_ps(lanes(hi), origin), inv);
            near = _mm256_max_ps(t0, near);
            far = _mm256_min_ps(t1, far);
        }
        // far + |far| · slack, as the portable path rounds it (no fused multiply-add).
        let abs = _mm256_andnot_ps(_mm256_set1_ps(-0.0), far);
        let far = _mm256_add_ps(far, _mm256_mul_ps(abs, _mm256_set1_ps(EXIT_SLACK)));
        (_mm256_cmp_ps::<_CMP_LE_OQ>(near, far), near)
    }

    /// [`walk`] with AVX2 and FMA enabled: every `#[inline(always)]` step of it (the
    /// visitor's node and leaf tests) is compiled again for those instructions.
    #[target_feature(enable = "avx2,fma,popcnt,lzcnt,bmi1,bmi2")]
    pub(in crate::bvh) fn walk_avx2<V: Visitor>(nodes: &[WideNode], visitor: &mut V) {
        walk(nodes, visitor);
    }
}

#[cfg(test)]
mod tests {

    /// The AVX2 node visit (of the ray's octant) answers what the portable one does, bit for
    /// bit: the same children entered, pushed in the same order with the same entry
    /// distances, over random boxes (empty lanes, flat and inverted boxes included) and rays
    /// (every octant, axis-parallel ones, ±0 components, NaN ranges). It runs in a build for
    /// x86-64-v3 (`RUSTFLAGS="-C target-cpu=x86-64-v3"`, as `.ci/run` does), whose binary
    /// runs only where the CPU has those instructions; an ordinary build, which may run on
    /// any x86-64, shows it as ignored (a test cannot decide at run time to be ignored, and
    /// the library keeps no build script to probe the machine).
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
    fn avx2_node_visits_equal_the_portable_ones() {
        #[cfg(all(
            target_arch = "x86_64",
            target_feature = "avx2",
            target_feature = "fma",
            target_feature = "popcnt",
            target_feature = "lzcnt",
            target_feature = "bmi1",
            target_feature = "bmi2"
        ))]
        {
            use super::*;
            use crate::bvh::ray_walk::RaySlots;
            use crate::bvh::wide::WIDTH;
            use crate::test_support::Rng;
            use nalgebra::{Point3, Vector3};

            // Built for x86-64-v3, so running at all means the CPU has what `Avx2` needs (made
            // directly: `detect` would also heed MESHRAY_SIMD=portable).
            let avx2 = Avx2(());
            let mut rng = Rng::new(3);
            let mut next = move || rng.range(-4.0, 4.0);
            let mut entered = 0;
            for round in 0..50_000 {
                let mut node = WideNode::EMPTY;
                for k in 0..(1 + round % WIDTH) {
                    let (x, y, z) = (next(), next(), next());
                    let size = if round % 11 == 0 { 0.0 } else { next().abs() };
                    node.min[0][k] = x;
                    node.min[1][k] = y;
                    node.min[2][k] = z;
                    node.max[0][k] = x + size;
                    node.max[1][k] = y + if round % 13 == 0 { -1.0 } else { size };
                    node.max[2][k] = z + size;
                    node.child[k] = k as u32;
                }
                // Mostly aimed at lane 0's corner, so many boxes are entered.
                let origin = Point3::new(next(), next(), next());
                let corner = Point3::new(node.min[0][0], node.min[1][0], node.min[2][0]);
                let mut d = corner - origin + Vector3::new(next(), next(), next()) * 0.1;
                match round % 7 {
                    0 => d.x = 0.0,
                    1 => d = Vector3::new(-0.0, 0.0, 1.0),
                    2 => d = Vector3::new(next(), next(), next()),
                    _ => {}
                }
                let ray = Ray::new(origin, d);
                let slabs = WideRay::new(&RaySlabs::new(&ray));
                let t_max = match round % 5 {
                    0 => f32::INFINITY,
                    1 => f32::NAN,
                    _ => next().abs() * 2.0,
                };
                let (mut want_slots, mut got_slots) = (RaySlots::new(), RaySlots::new());
                let mut want_stack = RayStack::new(&mut want_slots);
                let mut got_stack = RayStack::new(&mut got_slots);
                let want = PortableKernel.enter(&node, &slabs, 0.0, t_max, &mut want_stack);
                let got = {
                    let stack = &mut got_stack;
                    macro_rules! octants {
                        ($($octant:literal)*) => {
                            match slabs.octant() {
                                $($octant => Avx2Octant::<$octant>(avx2)
                                    .enter(&node, &slabs, 0.0, t_max, stack),)*
                                _ => unreachable!("three sign bits"),
                            }
                        };
                    }
                    octants!(0 1 2 3 4 5 6 7)
                };
                let bits = |e: &Entered| match e {
                    Entered::None => (0, 0, 0),
                    Entered::One(w) => (w.child + 1, w.count, w.entry.to_bits()),
                };
                assert_eq!(bits(&want), bits(&got), "round {round}");
                let mut pushed = 0;
                while let Some(w) = want_stack.pop() {
                    let g = got_stack.pop().expect("as many entries");
                    assert_eq!(
                        (w.child, w.count, w.entry.to_bits()),
                        (g.child, g.count, g.entry.to_bits()),
                        "round {round}"
                    );
                    pushed += 1;
                }
                assert!(got_stack.pop().is_none(), "round {round}");
                entered += match want {
                    Entered::None => 0,
                    Entered::One(_) => 1 + pushed,
                };
            }
            assert!(entered > 12_000, "{entered} boxes entered");
        }
    }
}
