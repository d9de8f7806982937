//! File formats.

pub(crate) mod obj;
#[cfg(feature = "stl")]
pub(crate) mod stl;
