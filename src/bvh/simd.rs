//! The machine's vector width, chosen at run time.
//!
//! The crate is compiled for baseline x86-64 (SSE2) unless its user sets `target-cpu`, so the
//! portable path tests a node's eight boxes in two 4-wide halves. On a CPU with AVX2 and FMA
//! (detected once, with `is_x86_feature_detected!`) ray walks run a second copy of the walk
//! compiled for those instructions, with the eight boxes in one 8-wide pass; its leaf tests
//! are the portable code, compiled again with VEX encodings. Both copies perform the same
//! operations in the same order, so they answer alike bit for bit (tested below and by the
//! exactness tests, which run on whichever path the machine takes; `MESHRAY_SIMD=portable`
//! in the environment forces the portable path).
//!
//! Why: callgrind counts 16 % fewer instructions for the bunny bench's closest-hit rays
//! (54.6M to 45.7M), and a build for the machine's own CPU (`target-cpu=native`) ran 1.05× to
//! 1.35× the portable one's Mrays/s; this path gets that without asking users for
//! `target-cpu`. The `unsafe` here is two calls, each allowed only through an [`Avx2`] token,
//! which exists only when the CPU has the instructions.

use super::walk::{Visitor, walk};
use super::wide::{WIDTH, WideNode, WideRay, lane_intervals};

/// How a ray walk tests a node's boxes: the portable way or with AVX2.
pub(crate) trait NodeTest: Copy {
    /// Runs [`walk`], compiled for this way's instructions.
    fn walk<V: Visitor>(self, nodes: &[WideNode], visitor: &mut V);

    /// [`lane_intervals`]'s answer.
    fn intervals(
        self,
        node: &WideNode,
        ray: &WideRay,
        t_min: f32,
        t_max: f32,
    ) -> (u32, [f32; WIDTH]);
}

/// The portable slab test ([`lane_intervals`]).
#[derive(Clone, Copy)]
pub(crate) struct Portable;

impl NodeTest for Portable {
    #[inline(always)]
    fn walk<V: Visitor>(self, nodes: &[WideNode], visitor: &mut V) {
        walk(nodes, visitor)
    }

    #[inline(always)]
    fn intervals(
        self,
        node: &WideNode,
        ray: &WideRay,
        t_min: f32,
        t_max: f32,
    ) -> (u32, [f32; WIDTH]) {
        lane_intervals(node, ray, t_min, t_max)
    }
}

/// Proof that this CPU runs AVX2 and FMA: only [`Avx2::detect`] makes one.
#[derive(Clone, Copy)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// A token when the CPU has AVX2 and FMA and `MESHRAY_SIMD` is not `portable`; looked up
    /// once per process.
    #[inline(always)]
    pub fn detect() -> Option<Avx2> {
        #[cfg(target_arch = "x86_64")]
        {
            static USE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
            let usable = *USE.get_or_init(|| {
                std::env::var_os("MESHRAY_SIMD").is_none_or(|v| v != "portable")
                    && std::is_x86_feature_detected!("avx2")
                    && std::is_x86_feature_detected!("fma")
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

    #[inline(always)]
    fn intervals(
        self,
        node: &WideNode,
        ray: &WideRay,
        t_min: f32,
        t_max: f32,
    ) -> (u32, [f32; WIDTH]) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: an `Avx2` exists only when the CPU has AVX2 and FMA (`detect`).
        #[allow(unsafe_code)]
        unsafe {
            x86::lane_intervals_avx2(node, ray, t_min, t_max)
        }
        #[cfg(not(target_arch = "x86_64"))]
        lane_intervals(node, ray, t_min, t_max)
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::super::wide::EXIT_SLACK;
    use super::*;
    use std::arch::x86_64::*;

    /// [`walk`] with AVX2 and FMA enabled: every `#[inline(always)]` step of it (the
    /// visitor's node and leaf tests) is compiled again for those instructions.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn walk_avx2<V: Visitor>(nodes: &[WideNode], visitor: &mut V) {
        walk(nodes, visitor);
    }

    /// [`lane_intervals`] in one 8-wide pass: the same operations in the same order (`maxps`
    /// and `minps` keep the bound when `t` is NaN, as the portable `raise` and `lower` do).
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    pub(super) fn lane_intervals_avx2(
        node: &WideNode,
        ray: &WideRay,
        t_min: f32,
        t_max: f32,
    ) -> (u32, [f32; WIDTH]) {
        let lanes = |v: [f32; WIDTH]| bytemuck::cast::<[f32; WIDTH], __m256>(v);
        let mut near = _mm256_set1_ps(t_min);
        let mut far = _mm256_set1_ps(t_max);
        for a in 0..3 {
            let (lo, hi) = if ray.negative[a] {
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
        let enter = _mm256_cmp_ps::<_CMP_LE_OQ>(near, far);
        (
            _mm256_movemask_ps(enter) as u32,
            bytemuck::cast::<__m256, [f32; WIDTH]>(near),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ray;
    use crate::aabb::RaySlabs;
    use crate::test_support::Lcg;
    use nalgebra::{Point3, Vector3};

    /// The AVX2 slab test answers what the portable one does, bit for bit, over random
    /// boxes (empty lanes, flat and inverted boxes included) and rays (axis-parallel ones,
    /// ±0 components, NaN ranges). Ignored on a machine without AVX2 (build.rs).
    #[test]
    #[cfg_attr(
        not(host_avx2),
        ignore = "no AVX2 and FMA here, or MESHRAY_SIMD=portable"
    )]
    fn avx2_boxes_equal_the_portable_ones() {
        let avx2 = Avx2::detect().expect("AVX2 and FMA (build.rs found them on this machine)");
        let mut rng = Lcg::new(3);
        let mut next = move || rng.uniform(-4.0, 4.0);
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
            let want = Portable.intervals(&node, &slabs, 0.0, t_max);
            let got = avx2.intervals(&node, &slabs, 0.0, t_max);
            assert_eq!(want.0, got.0, "round {round}");
            assert_eq!(
                want.1.map(f32::to_bits),
                got.1.map(f32::to_bits),
                "round {round}"
            );
            entered += want.0.count_ones();
        }
        assert!(entered > 12_000, "{entered} boxes entered");
    }
}
