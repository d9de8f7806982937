//! Walking the tree: the ray walk of the closest and any hit (`kernel`), the older
//! single-ray walk of all hits, the hit count and the scene's top level (`ray_walk`, with
//! its vector kernels in `simd`), the ray queries built on them (`traverse`), the new walk's
//! levels of guarantees for the benchmarks (`lab`), eight camera rays at once
//! (`coherent`) and the batch query (`batch`); the generic ordered walk (`walk`) behind the
//! nearest point (`nearest`) and the selections (`selection`).

pub(crate) mod batch;
pub(crate) mod coherent;
pub(crate) mod inside;
pub(crate) mod kernel;
#[cfg(feature = "kernel-lab")]
pub mod lab;
pub(crate) mod nearest;
pub(crate) mod ray_walk;
pub(crate) mod selection;
pub(crate) mod simd;
pub(crate) mod traverse;
pub(crate) mod walk;
pub(crate) mod winding;
