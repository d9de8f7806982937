//! The machine's vector width, chosen at run time (x86-64 only: elsewhere the ray walk is
//! its portable twin).
//!
//! The crate is compiled for baseline x86-64 (SSE2) unless its user sets `target-cpu`. On a
//! CPU with AVX2 and FMA (detected once, with `is_x86_feature_detected!`, and proven by an
//! [`Avx2`] token) the ray walk ([`kernel`](crate::bvh::kernel)) runs its code compiled for
//! those instructions (and for AVX-512 where the CPU has it); elsewhere its portable twin,
//! which answers alike bit for bit and visits the same nodes in the same order
//! (`MESHRAY_SIMD=portable` in the environment forces it, as `.ci/run` runs the tests again).

/// Proof that this CPU runs AVX2 and FMA: only [`Avx2::detect`] makes one.
#[derive(Clone, Copy)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// A token when the CPU has AVX2 and FMA (and the bit instructions every AVX2 CPU has:
    /// POPCNT, LZCNT, BMI1 and BMI2, which the walk's lane masks use) and `MESHRAY_SIMD` is
    /// not `portable`; looked up once per process.
    #[inline(always)]
    pub fn detect() -> Option<Avx2> {
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
}
