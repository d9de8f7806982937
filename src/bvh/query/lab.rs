//! The ray walk's levels of guarantees (issue 38), for the price table of
//! `docs/how-it-works/ray-kernel.md` and its tests: a [`RayTree`] made from a built [`Bvh`],
//! cast into at a chosen [`Level`]. Only the exact level is what the queries run; the
//! others exist to measure what each guarantee costs (`benches/peers`' `lab` rows). Behind
//! the `kernel-lab` feature, which no user needs.

use crate::bvh::kernel::{self, DEPTH_LIMIT, level};
use crate::{Bvh, CompactHit, Culling, QueryOptions, Ray, RayQuery};

/// Which of the new walk's guarantees a cast pays for (issue 38's step 2 adds them in this
/// order, each with its measured price).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Level {
    /// Möller–Trumbore in `f32`, clamped reciprocals, fused slabs: the floor, not exact.
    Floor,
    /// The watertight edge test (Woop, Benthin and Wald 2013), `t` in `f32`.
    Watertight,
    /// The watertight level with slabs that never cull a box holding a hit (the exact
    /// level's), to price them.
    Slabs,
    /// Every guarantee: the answers of [`Bvh::cast_ray`](crate::query::RayCast::cast_ray) with the default options, bit for
    /// bit.
    Exact,
}

/// The new walk over a built [`Bvh`]'s tree, at a chosen level (the exact level is what
/// [`Bvh::cast_ray`](crate::query::RayCast::cast_ray) runs).
///
/// ```
/// use meshray::prelude::*;
/// use meshray::lab::{Level, RayTree};
/// use meshray::{Bvh, Mesh, Ray, RayQuery, QueryOptions};
/// use nalgebra::{Point3, Vector3};
///
/// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
/// let ray = Ray::new(Point3::new(0.1, 1.05, 10.0), -Vector3::z());
/// // `None` only for a tree deeper than the walk's stack allows.
/// if let Some(tree) = RayTree::new(&bvh) {
///     let hit = tree.closest(&ray, Level::Watertight).unwrap();
///     let old = bvh.cast_ray(&ray, RayQuery::Closest, &QueryOptions::default()).unwrap();
///     assert_eq!(hit.triangle, old.triangle);
///     assert!((hit.t - old.t).abs() < 1e-5);
/// }
/// # Ok::<(), meshray::Error>(())
/// ```
pub struct RayTree<'a> {
    bvh: &'a Bvh,
}

impl<'a> RayTree<'a> {
    /// The tree of `bvh`; `None` where the tree is deeper than the walk's stack allows. Where
    /// the CPU lacks AVX2 and FMA (or `MESHRAY_SIMD=portable`), every level casts with the
    /// portable twin, which answers as the exact level does.
    pub fn new(bvh: &'a Bvh) -> Option<RayTree<'a>> {
        (bvh.depth <= DEPTH_LIMIT).then_some(RayTree { bvh })
    }

    /// Bytes of the walk's structure: its nodes, the packets and the slot map.
    pub fn bytes(&self) -> usize {
        size_of_val(self.bvh.nodes.as_slice())
            + size_of_val(self.bvh.leaf_packets.as_slice())
            + size_of_val(self.bvh.triangle_index.as_slice())
    }

    /// The closest hit in the ray's range at `level`.
    #[inline]
    pub fn closest(&self, ray: &Ray, level: Level) -> Option<CompactHit> {
        self.cast(ray, RayQuery::Closest, level, Culling::None)
    }

    /// Some hit in the ray's range at `level`, the first the walk meets.
    #[inline]
    pub fn any(&self, ray: &Ray, level: Level) -> Option<CompactHit> {
        self.cast(ray, RayQuery::Any, level, Culling::None)
    }

    /// The exact level's answer to `query` with `culling` (what [`Bvh::cast_ray`](crate::query::RayCast::cast_ray) answers
    /// with these options and the watertight test; any hit: a hit of the scalar test).
    pub fn exact(&self, ray: &Ray, query: RayQuery, culling: Culling) -> Option<CompactHit> {
        self.cast(ray, query, Level::Exact, culling)
    }

    /// The walk for `query` at `lvl` (culling honoured at the exact level only). Inlined,
    /// so `closest` and `any` (what the benches time) each keep only their own walks.
    #[inline(always)]
    fn cast(&self, ray: &Ray, query: RayQuery, lvl: Level, culling: Culling) -> Option<CompactHit> {
        if !ray.is_valid() {
            return None;
        }
        let tree = self.bvh.ray_tree();
        let options = &QueryOptions {
            culling,
            watertight: true,
        };
        macro_rules! levels {
            ($any:literal) => {
                match lvl {
                    Level::Floor => kernel::cast::<{ level::FLOOR }, $any>(tree, ray, options),
                    Level::Watertight => {
                        kernel::cast::<{ level::WATERTIGHT }, $any>(tree, ray, options)
                    }
                    Level::Slabs => kernel::cast::<{ level::SLABS }, $any>(tree, ray, options),
                    Level::Exact => kernel::cast::<{ level::EXACT }, $any>(tree, ray, options),
                }
            };
        }
        let found = match query {
            RayQuery::Closest => levels!(false),
            RayQuery::Any => levels!(true),
        };
        Some(self.bvh.ray_hit(found?))
    }
}
