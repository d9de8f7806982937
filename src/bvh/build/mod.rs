//! Building the tree: the binned-SAH builder every quality starts from or replaces
//! (`sah`), the linear builder of [`BuildQuality::Fast`](crate::BuildQuality::Fast)
//! (`lbvh`), the reinsertion of [`BuildQuality::High`](crate::BuildQuality::High)
//! (`reinsert`), the collapse of the binary tree into 8-wide nodes (`collapse`), and a wide
//! tree over any boxes, built, collapsed and refitted bottom-up,
//! for the mesh and for a scene's top level (`tree`). They fill `layout`'s nodes and
//! leaves.

pub(crate) mod collapse;
pub(crate) mod lbvh;
pub(crate) mod reinsert;
mod sah;
pub(crate) mod tree;

pub(crate) use sah::*;
