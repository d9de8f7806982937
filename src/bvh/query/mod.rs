//! Walking the tree: the ray walk (`kernel`) of every ray query, of the scene's top level and
//! of a sweep's grown boxes; the tests of a leaf's packets (`packet`); the ray queries built on them and the hits they
//! answer (`ray_hits`, `ray_query`); the
//! generic ordered walk (`walk`) behind the nearest point (`nearest`), the selections
//! (`selection`), inside tests (`inside`, `winding`) and the overlaps (`overlap`); and the
//! sweeps (`sweep`).

pub(crate) mod inside;
pub(crate) mod kernel;
pub(crate) mod nearest;
pub(crate) mod overlap;
pub(crate) mod packet;
pub(crate) mod ray_hits;
pub(crate) mod ray_query;
pub(crate) mod selection;
pub(crate) mod sweep;
pub(crate) mod walk;
pub(crate) mod winding;
