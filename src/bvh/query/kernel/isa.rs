//! Which instruction set the ray walk runs, chosen once per process.
//!
//! The crate is compiled for baseline x86-64 (SSE2) unless its user sets `target-cpu`; on a
//! CPU with AVX2 and FMA the walk runs its code compiled for those instructions, and for
//! AVX-512 where the CPU has it ([`x86`](super::x86)); elsewhere (WebAssembly, ARM, an older
//! x86) its portable twin ([`portable`](super::portable)), which answers alike bit for bit and
//! visits the same nodes in the same order. `MESHRAY_SIMD=avx2` or `MESHRAY_SIMD=portable` in
//! the environment before the first query holds the choice below what the CPU has (to
//! measure or test the other paths).

// Off x86-64 only the portable twin runs, and nothing asks.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]

use std::sync::OnceLock;

/// An instruction set the walk is compiled for.
/// Ordered: each is more than the one before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Isa {
    /// The portable twin: `wide`'s lanes (SSE2, NEON, simd128) or scalar code.
    Portable,
    /// AVX2, FMA, POPCNT, LZCNT, BMI1 and BMI2.
    Avx2,
    /// AVX-512 F and VL, and all of [`Isa::Avx2`]'s.
    Avx512,
}

impl Isa {
    /// The instruction set this process's queries run: the best this CPU has, held below it
    /// by `MESHRAY_SIMD`; looked up once.
    #[inline(always)]
    pub(crate) fn get() -> Isa {
        static CHOSEN: OnceLock<Isa> = OnceLock::new();
        *CHOSEN.get_or_init(|| Isa::best().min(Isa::requested()))
    }

    /// The best instruction set this CPU has.
    fn best() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            let avx2 = has!("avx2")
                && has!("fma")
                && has!("popcnt")
                && has!("lzcnt")
                && has!("bmi1")
                && has!("bmi2");
            if avx2 && has!("avx512f") && has!("avx512vl") {
                return Isa::Avx512;
            }
            if avx2 {
                return Isa::Avx2;
            }
        }
        Isa::Portable
    }

    /// The most `MESHRAY_SIMD` allows: `portable`, `avx2`, or anything else (or nothing) for
    /// no limit.
    fn requested() -> Isa {
        match std::env::var_os("MESHRAY_SIMD") {
            Some(v) if v == "portable" => Isa::Portable,
            Some(v) if v == "avx2" => Isa::Avx2,
            _ => Isa::Avx512,
        }
    }

    /// Whether this CPU runs the x86 walk (AVX2 or better), whatever `MESHRAY_SIMD` asks,
    /// for the tests that compare `what` with its portable twin; where it does not, they say
    /// so and end (under `CI=true`, whose x86 machines have AVX2, they fail instead).
    #[cfg(test)]
    pub(crate) fn x86_runs_here(what: &str) -> bool {
        if Isa::best() >= Isa::Avx2 {
            return true;
        }
        assert!(
            std::env::var_os("CI").is_none_or(|v| v != "true"),
            "CI=true: this CPU has no AVX2, so the x86 {what} cannot be compared"
        );
        eprintln!("note: this CPU has no AVX2 and FMA; the x86 {what} was not compared");
        false
    }
}

/// Proof that this CPU runs the x86 walk, and which of its builds: only [`X86::detect`] (and,
/// in tests, `X86::all_here`) make one, from what the CPU says it has.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct X86 {
    avx512: bool,
}

#[cfg(target_arch = "x86_64")]
impl X86 {
    /// The x86 build this process's queries run ([`Isa::get`]), if any.
    #[inline(always)]
    pub(crate) fn detect() -> Option<X86> {
        match Isa::get() {
            Isa::Avx512 => Some(X86 { avx512: true }),
            Isa::Avx2 => Some(X86 { avx512: false }),
            Isa::Portable => None,
        }
    }

    /// Whether this is the AVX-512 build (else AVX2).
    #[inline(always)]
    pub(crate) fn avx512(self) -> bool {
        self.avx512
    }

    /// Every x86 build this CPU runs, whatever `MESHRAY_SIMD` says: for the tests that
    /// compare them with the portable twin.
    #[cfg(test)]
    pub(crate) fn all_here() -> Vec<X86> {
        let best = Isa::best();
        [(Isa::Avx2, false), (Isa::Avx512, true)]
            .into_iter()
            .filter(|&(isa, _)| best >= isa)
            .map(|(_, avx512)| X86 { avx512 })
            .collect()
    }
}
