//! The machine's vector width, chosen at run time.
//!
//! The crate is compiled for baseline x86-64 (SSE2) unless its user sets `target-cpu`. On a
//! CPU with AVX2 and FMA (detected once, with `is_x86_feature_detected!`, and proven by an
//! [`Avx2`] token) the walks run copies compiled for those instructions: the ray walk
//! ([`kernel`](crate::bvh::kernel), which has its own AVX2 and AVX-512 code and asks
//! [`Avx2::detect`]) and the ordered walk ([`walk`]) of the nearest point, the selections and
//! the packet walk, whose steps are portable code compiled again with VEX encodings. Both
//! copies perform the same operations in the same order, so they answer alike bit for bit
//! (`MESHRAY_SIMD=portable` in the environment forces the portable path, as `.ci/run` runs
//! the tests again).

use crate::bvh::walk::{Visitor, walk};
use crate::bvh::wide::WideNode;

/// How an ordered walk runs: the portable way or compiled for AVX2.
pub(crate) trait NodeTest: Copy {
    /// Runs [`walk`], compiled for this way's instructions.
    fn walk<V: Visitor>(self, nodes: &[WideNode], visitor: &mut V);
}

/// The portable walk.
#[derive(Clone, Copy)]
pub(crate) struct Portable;

impl NodeTest for Portable {
    #[inline(always)]
    fn walk<V: Visitor>(self, nodes: &[WideNode], visitor: &mut V) {
        walk(nodes, visitor)
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
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::*;

    /// [`walk`] with AVX2 and FMA enabled: every `#[inline(always)]` step of it (the
    /// visitor's node and leaf tests) is compiled again for those instructions.
    #[target_feature(enable = "avx2,fma,popcnt,lzcnt,bmi1,bmi2")]
    pub(super) fn walk_avx2<V: Visitor>(nodes: &[WideNode], visitor: &mut V) {
        walk(nodes, visitor);
    }
}
