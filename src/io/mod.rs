//! File formats.

pub(crate) mod obj;
