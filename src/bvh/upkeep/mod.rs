//! Keeping a built tree: refitting it to moved or posed vertices (`refit`), checking its invariants
//! (`validate`), describing it (`stats`), and saving and loading it (`persist`, the `serde`
//! feature).

#[cfg(feature = "serde")]
pub(crate) mod persist;
pub(crate) mod raw;
pub(crate) mod refit;
pub(crate) mod stats;
pub(crate) mod validate;
