//! Walking the tree: the ray walk (`kernel`) of every ray query and of the scene's top
//! level, the ray queries built on it (`traverse`), the walk's levels of guarantees for the
//! benchmarks (`lab`) and the batch query (`batch`);
//! the generic ordered walk (`walk`, with its AVX2 copy chosen in `simd`) behind the
//! nearest point (`nearest`), the selections (`selection`), inside tests (`inside`) and
//! sweeps (`sweep`).

pub(crate) mod inside;
pub(crate) mod kernel;
#[cfg(feature = "kernel-lab")]
pub mod lab;
pub(crate) mod nearest;
pub(crate) mod overlap;
pub(crate) mod ray_query;
pub(crate) mod selection;
#[cfg(target_arch = "x86_64")]
pub(crate) mod simd;
pub(crate) mod sweep;
pub(crate) mod traverse;
pub(crate) mod walk;
pub(crate) mod winding;
