//! # meshray
//!
//! Exact, fast ray casting against triangle meshes: load a model, build a bounding volume
//! hierarchy once, and ask which triangle a ray (a mouse click, a laser, a line of sight) hits
//! first. Every query answers what a test of every triangle would, thousands of times
//! faster.
//!
//! The pipeline: a file ([`Mesh::load`]: OBJ through `tobj`, STL, PLY, glTF) or raw buffers
//! ([`Mesh::from_buffers`]) become a [`Mesh`]; [`Bvh::build`] builds a binned-SAH tree over
//! it (on all cores with the default `parallel` feature) and collapses it into 8-wide nodes;
//! the queries walk the tree, culling eight boxes at a time with the slab test
//! ([`Aabb::intersect_ray`](geometry::Aabb::intersect_ray), in SIMD), and test the triangles of the leaves that survive by
//! the watertight test ([`intersect_triangle`](geometry::intersect_triangle), Cramer's rule solved in a frame
//! sheared along the ray), four at a time.
//!
//! ```
//! use meshray::prelude::*;
//! use meshray::{Bvh, Camera, Mesh, QueryOptions};
//! use nalgebra::{Isometry3, Perspective3, Point3, Vector3};
//!
//! let mesh = Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
//! let bvh = Bvh::build(mesh);
//!
//! // A click in the middle of an 800×600 window, the camera looking at the sphere.
//! let view = Isometry3::look_at_rh(&Point3::new(0.0, 1.0, 6.0), &Point3::new(0.0, 1.0, 0.0), &Vector3::y());
//! let projection = Perspective3::new(800.0 / 600.0, 0.8, 0.1, 100.0);
//! let camera = Camera::new(view.to_homogeneous(), projection.to_homogeneous(), [800.0, 600.0])?;
//! let ray = camera.pixel_ray([400.0, 300.0])?;
//!
//! let hit = bvh.closest_hit(&ray, &QueryOptions::default()).expect("the sphere is under the cursor");
//! let mesh = bvh.mesh();
//! println!("triangle {} of {} at t = {}", hit.triangle, mesh.objects()[hit.object as usize], hit.t);
//! assert_eq!(mesh.objects()[hit.object as usize], "sphere");
//! # Ok::<(), meshray::Error>(())
//! ```
//!
//! # One call per question
//!
//! Every query is a method of two traits, [`RayCast`](query::RayCast) for rays and
//! [`PointQuery`](query::PointQuery) for points, which a mesh's tree ([`Bvh`]) and a scene
//! of placed meshes ([`Scene`]) both implement: `use meshray::prelude::*;` brings them in.
//!
//! | question | call |
//! |---|---|
//! | a mesh from a file, bytes or buffers | [`Mesh::load`] ([`Mesh::load_with`] for [`LoadOptions`]), [`Mesh::from_bytes`], [`Mesh::from_buffers`] |
//! | the tree | [`Bvh::build`] ([`Bvh::build_with`] for [`BuildOptions`], progress reports included); saved and loaded with serde ([`tree::SavedBvh`]) |
//! | the vertices moved | [`Bvh::refit`]; [`Bvh::stats`] says when to rebuild |
//! | the ray through a pixel | [`Camera::pixel_ray`] |
//! | the first triangle along a ray | [`closest_hit`](query::RayCast::closest_hit) |
//! | is anything there? (shadows, lines of sight) | [`any_hit`](query::RayCast::any_hit) |
//! | every crossing, or how many | [`all_hits`](query::RayCast::all_hits), [`count_hits`](query::RayCast::count_hits) |
//! | many rays, on all cores, short answers | [`cast_rays`](query::RayCast::cast_rays) ([`cast_ray`](query::RayCast::cast_ray) for one; [`hit_details`](query::RayCast::hit_details) for the rest of a hit) |
//! | the nearest point of the surface | [`closest_point`](query::PointQuery::closest_point) |
//! | is this point inside? how far from the surface, signed? | [`contains`](query::PointQuery::contains), [`signed_distance`](query::PointQuery::signed_distance) (both by [`winding_number`](query::PointQuery::winding_number): right on open meshes and soups too) |
//! | how far a sphere or capsule moves before it touches | [`cast_sphere`](query::Sweep::cast_sphere), [`cast_capsule`](query::Sweep::cast_capsule) |
//! | which triangles of two meshes, or of one, intersect | [`intersecting_triangles`](query::Overlap::intersecting_triangles), [`self_intersections`](query::Overlap::self_intersections) |
//! | the triangles in a box, a ball or under a screen rectangle | [`Bvh::triangles_in`] with a [`Region`](selection::Region) ([`Camera::frustum`] for the rectangle) |
//! | the triangles the user sees there | [`picking::visible_triangles`] |
//! | many meshes, placed and moving | [`Scene`]: the same traits, in world space |
//! | what a query cost; is a tree sound | [`diagnostics`] |
//! | 2D rays against segments and rectangles | [`plane::ray_segment`], [`plane::Rect::intersect_ray`] |
//!
//! Every function that takes a point, a vector or a matrix takes anything that converts into
//! [`mint`](https://docs.rs/mint)'s types: nalgebra's (the crate's own), glam's and Bevy's,
//! cgmath's, ultraviolet's, plain arrays. Results are nalgebra types, which turn into any of
//! those with `.into()`; so code that uses glam needs no nalgebra.
//!
//! ```
//! use meshray::prelude::*;
//! use meshray::{Bvh, Camera, Mesh, QueryOptions, Ray};
//!
//! // Plain arrays stand in for glam's Vec3 and Mat4 here: they convert into mint alike.
//! let mesh = Mesh::from_buffers([[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], vec![[0, 1, 2]])?;
//! let bvh = Bvh::build(mesh);
//! let ray = Ray::new([0.25f32, 0.25, 1.0], [0.0f32, 0.0, -1.0]);
//! let hit = bvh.closest_hit(&ray, &QueryOptions::default()).unwrap();
//! let point: mint::Point3<f32> = hit.point.into();
//! assert_eq!([point.x, point.y, point.z], [0.25, 0.25, 0.0]);
//!
//! // A camera at z = 5 looking down -z (column-major, as glam's Mat4 stores it), and the
//! // ray through the middle of a 300×200 viewport.
//! let identity = [[1.0f32, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]];
//! let mut view = identity;
//! view[3][2] = -5.0;
//! let projection = nalgebra::Perspective3::new(1.5, 0.8, 0.1, 100.0).to_homogeneous();
//! let camera = Camera::new(mint::ColumnMatrix4::from(view), projection, [300.0, 200.0])?;
//! let ray = camera.pixel_ray([150.0, 100.0])?;
//! assert!((ray.origin().z - 4.9).abs() < 1e-4 && ray.direction().z < -0.99);
//! # Ok::<(), meshray::Error>(())
//! ```
//!
//! # Performance
//!
//! The tree is 8-wide: a node's eight child boxes are tested against the ray in one SIMD
//! pass (AVX2 when the CPU has it, else the `wide` crate: SSE, NEON, or scalar elsewhere),
//! and leaves hold their triangles in packets of four, tested together. The AVX2 path is
//! chosen at run time, once per process, when the CPU has AVX2, FMA, POPCNT, LZCNT and
//! BMI1/2 (and its AVX-512 build where the CPU has AVX-512 F and VL); setting the environment
//! variable `MESHRAY_SIMD=avx2` before the first query holds it to AVX2, and
//! `MESHRAY_SIMD=portable` keeps the portable path instead (the same answers, bit for bit: a way to rule the vector
//! kernel out when chasing a problem, or to time the portable path). Closest and any hit
//! and [`cast_rays`](query::RayCast::cast_rays) into a reused vector allocate nothing. For
//! speed: build in release mode, ask [`any_hit`](query::RayCast::any_hit) when any hit will
//! do, cast batches with [`cast_rays`](query::RayCast::cast_rays) (on all cores) and compact
//! answers ([`cast_ray`](query::RayCast::cast_ray)) when the point and normals are not
//! needed, and give rays a finite `t_max` when only a range matters. How fast, against Embree, tinybvh and others on the
//! same rays, is in `docs/benchmarks.md`, with the date, machine and command of each figure.
//!
//! The guide (`docs/guide.md` in the repository) walks through loading, building, picking,
//! scenes and selection; `docs/robustness.md` gives what each bad input gets, and
//! `docs/benchmarks.md` every measured figure, with its date and command.
//!
//! # The precision promise
//!
//! Every query answers bit for bit what the same f32 triangle test over every triangle
//! answers (the traversal never culls a box the ray touches), except that it rejects a point
//! the triangle test accepted outside the triangle's own box (an ulp off, for a ray starting
//! beside a vertex; more, for a ray grazing a sliver). The default triangle test is the
//! watertight test of Woop, Benthin and Wald (2013) ([`intersect_triangle`](geometry::intersect_triangle)),
//! which never lets a ray aimed exactly at a shared edge or vertex slip between the
//! triangles; plain Cramer's rule (`QueryOptions { watertight: false, .. }`) is a few per
//! cent faster and can. Against exact arithmetic on the f32 inputs, `t` is within 1e-5 relative
//! or the f32 rounding bound, and hit or miss differs only for rays within rounding distance
//! of an edge. [`Bvh::closest_point`](crate::query::PointQuery::closest_point) and the selection queries compute in `f64` from the
//! `f32` inputs, so they too agree with a test of every triangle.
//!
//! **The range.** All of this holds where f32 neither overflows nor underflows: meshes with
//! every coordinate within ±[`Mesh::MAX_COORDINATE`] (2^40 ≈ 1.1e12) and a bounding box at
//! least [`Mesh::MIN_EXTENT`] (2^-40 ≈ 9.1e-13) on its longest side, and rays with their
//! origin within ±[`Ray::MAX_ORIGIN`] (2^41) and the largest direction component between
//! [`Ray::MIN_DIRECTION`] and [`Ray::MAX_DIRECTION`] (2^-40 to 2^40). Inside it every product
//! of the triangle tests stays below about 2^125 and every `t` below 2^122 (f32 overflows at
//! 2^128), and scaling a scene and its rays by any power of two changes no bit of the answers
//! (`tests/properties.rs` checks 2^-40 to 2^33). Loading, [`Mesh::from_buffers`],
//! [`Bvh::refit`] and [`Scene::add`] refuse a mesh or placement outside it
//! ([`Error::CoordinateOutOfRange`], [`Error::MeshTooSmall`], [`Error::InvalidTransform`]); a
//! ray outside it is invalid ([`Ray::is_valid`]), a documented "no hit". (Triangles with edges
//! under about 2^-60 inside a mesh of normal size are the one gap: their cross product
//! underflows and they behave as degenerate.) An instance of a [`Scene`] sees the ray in its
//! own object space; a transform that takes a valid world ray outside the ray range there
//! (a scale below about 2^-20, say) makes that instance miss it.
//!
//! # Conventions
//!
//! Rays are not normalized (`t` is parametric); barycentrics follow
//! `P = (1 − u − v)·A + u·B + v·C`; triangles keep their number in the file or buffer; a miss
//! is `None`, never a sentinel. A ray that cannot hit anything (NaN, infinite or zero
//! direction, NaN range, `t_min > t_max`; [`Ray::is_valid`]) is a documented "no hit", never a
//! panic. Loading, refitting, cameras and scene edits return [`Result`] with one [`Error`]
//! enum that names the file and line where there is one; queries never fail. The mesh
//! accessors that take a triangle number ([`Mesh::triangle`] and its companions) panic when
//! it is out of range, as slice indexing does; [`Bvh::hit_details`](crate::query::RayCast::hit_details) answers `None`.
#![deny(missing_docs)]
// `unsafe` only in the ray kernel (src/bvh/query/kernel/): the x86 lanes' intrinsics
// (x86.rs, behind safe entry points that take a proof of the CPU's instructions), the walk's
// stack and unchecked reads of a validated tree (walk.rs), each with its `SAFETY:` line.
#![deny(unsafe_code)]
// `!(a <= b)` is how this crate makes a NaN fail a test; it is deliberate everywhere.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

mod aabb;
mod boundary;
mod bvh;
mod camera;
mod closest_point;
pub mod diagnostics;
mod error;
mod format;
mod io;
pub mod mesh;
pub mod picking;
mod plane2d;
pub mod pose;
pub mod query;
mod ray;
mod region;
pub mod scene;
mod splitmix;
mod sweep;
#[cfg(test)]
mod test_support;
mod transform;
mod tri_tri;
mod triangle;
mod watertight;
mod winding;

// The root: the pipeline's names, from a file to a hit.
pub use bvh::{BuildOptions, Bvh, CompactHit, Hit, RayQuery};
pub use camera::Camera;
pub use error::{Error, Result};
pub use io::options::LoadOptions;
pub use mesh::Mesh;
pub use ray::Ray;
pub use scene::{Scene, SceneOptions};
pub use triangle::{Culling, QueryOptions};

/// The traits every query is asked through: `use meshray::prelude::*;` makes
/// [`Bvh`]'s and [`Scene`]'s queries callable.
pub mod prelude {
    pub use crate::query::{Overlap, PointQuery, RayCast, Sweep};
}

/// The geometric primitives: boxes and their slab test, and the watertight ray–triangle
/// test the queries run, for code that tests a ray against one box or one triangle.
pub mod geometry {
    pub use crate::aabb::Aabb;
    pub use crate::triangle::{TriangleHit, intersect_triangle};
}

/// 2D rays against segments (Cramer's rule) and rectangles (slabs, with near and far
/// points): for editors' and games' 2D picking.
pub mod plane {
    pub use crate::plane2d::{Ray2, Rect, RectHit, SegmentHit, ray_segment};
}

/// Selection: the regions whose triangles [`Bvh::triangles_in`] and
/// [`Scene::triangles_in`] list (a box, a ball, a camera's frustum).
pub mod selection {
    pub use crate::region::{Frustum, Region};
}

/// The tree's settings and records beyond [`BuildOptions`]: which builder runs, what a
/// pose did to the tree, and the tree saved with serde.
pub mod tree {
    #[doc(hidden)]
    pub use crate::bvh::RawTree;
    #[cfg(feature = "serde")]
    pub use crate::bvh::SavedBvh;
    pub use crate::bvh::{BuildQuality, PoseUpdate};
}

// Names the crate's own modules reach through the root (`crate::Aabb`); public under the
// modules above.
pub(crate) use aabb::Aabb;
pub(crate) use bvh::{ClosestPoint, PoseUpdate};
pub(crate) use format::Format;
pub(crate) use pose::{Pose, Rig};
pub(crate) use region::Frustum;
pub(crate) use winding::WindingAccuracy;
