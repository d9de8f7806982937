//! Building the tree: the binned-SAH builder every quality starts from or replaces
//! (`sah`), the linear builder of [`BuildQuality::Fast`](crate::BuildQuality::Fast)
//! (`lbvh`), the reinsertion of [`BuildQuality::High`](crate::BuildQuality::High)
//! (`reinsert`), and the data-parallel steps they share (`par`). What they hand on is a
//! binary tree over boxes, which `layout` collapses into the wide tree the queries walk.

pub(crate) mod lbvh;
pub(crate) mod par;
pub(crate) mod reinsert;
mod sah;

pub(crate) use sah::*;
