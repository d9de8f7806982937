//! The built tree as the queries read it: 8-wide nodes (`wide`), leaves of triangle packets
//! (`leaf`), and the bottom-up upkeep of any wide tree, the mesh's or a scene's top level
//! (`tree`: built over boxes, refitted, its cost).

pub(crate) mod leaf;
pub(crate) mod tree;
pub(crate) mod wide;
