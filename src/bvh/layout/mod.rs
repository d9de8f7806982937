//! The tree as the queries read it: 8-wide nodes (`wide`), their leaf lanes and per-octant
//! orders (`ray_node`) and the leaves' triangle packets (`leaf`). The lowest folder: the
//! builders fill these, the walks read them.

pub(crate) mod leaf;
pub(crate) mod ray_node;
pub(crate) mod wide;
