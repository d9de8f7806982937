//! What the layers above the tree use of its insides: the scene's top-level tree is a wide
//! tree like a mesh's, built over boxes and refitted by the tree's own code (`tree`) and
//! walked by its walks (`kernel::visit`, `walk`, `lanes_near`, and a sweep's `Reach`). Every other module of the tree is
//! private to `bvh`, so a reach past this facade does not compile; the public types
//! (`Bvh`, the hits, the options) are re-exported at `bvh`'s root.

pub(crate) use super::build::tree;
pub(crate) use super::layout::wide::{WIDTH, WideNode};
pub(crate) use super::query::nearest::lanes_near;
pub(crate) use super::query::sweep::{Placement, Reach};
pub(crate) use super::query::walk::{Visitor, walk};

/// The ray walk, by the name the tree's own modules give it.
pub(crate) mod kernel {
    pub(crate) use crate::bvh::query::kernel::{IN_LANE_ORDER, NEAREST_FIRST, visit};
}
