//! # meshray
//!
//! Exact, fast ray casting against triangle meshes: load a model, build a bounding volume
//! hierarchy once, and ask which triangle a ray (a mouse click, a laser, a line of sight) hits
//! first. Every query answers what a test of every triangle would, thousands of times
//! faster.
//!
//! The pipeline: an OBJ file ([`Mesh::load_obj`], through `tobj`) or raw buffers
//! ([`Mesh::from_buffers`]) become a [`Mesh`]; [`Bvh::build`] builds a binned-SAH tree over
//! it (on all cores with the default `parallel` feature) and collapses it into 8-wide nodes;
//! queries ([`Bvh::closest_hit`], [`Bvh::any_hit`], [`Bvh::all_hits`], and the short
//! [`Bvh::closest_triangle`] for batch work) walk the tree, culling eight boxes at a time with
//! the slab test ([`Aabb::intersect_ray`], in SIMD), and test the triangles of the leaves
//! that survive by Cramer's rule ([`intersect_triangle`]), four at a time.
//!
//! ```
//! use meshray::{pixel_ray, Bvh, Mesh, QueryOptions};
//! use nalgebra::{Isometry3, Perspective3, Point2, Point3, Vector2, Vector3};
//!
//! let mesh = Mesh::load_obj(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
//! let bvh = Bvh::build(mesh);
//!
//! // A click in the middle of an 800×600 window, the camera looking at the sphere.
//! let view = Isometry3::look_at_rh(&Point3::new(0.0, 1.0, 6.0), &Point3::new(0.0, 1.0, 0.0), &Vector3::y());
//! let projection = Perspective3::new(800.0 / 600.0, 0.8, 0.1, 100.0);
//! let ray = pixel_ray(&view.to_homogeneous(), &projection.to_homogeneous(), Vector2::new(800.0, 600.0), Point2::new(400.0, 300.0))?;
//!
//! let hit = bvh.closest_hit(&ray, &QueryOptions::default()).expect("the sphere is under the cursor");
//! let mesh = bvh.mesh();
//! println!("triangle {} of {} at t = {}", hit.triangle, mesh.objects()[hit.object as usize], hit.t);
//! assert_eq!(mesh.objects()[hit.object as usize], "sphere");
//! # Ok::<(), meshray::Error>(())
//! ```
//!
//! Robustness and precision: every query answers bit for bit what the same f32 triangle
//! test over every triangle answers (the traversal never culls a box the ray touches), except
//! that it rejects a point the triangle test accepted outside the triangle's own box (an ulp
//! off, for a ray starting beside a vertex; more, for a ray grazing a sliver).
//! Cramer's rule, the default, can let a ray aimed exactly at a shared edge or vertex slip
//! between triangles; [`QueryOptions::watertight`] selects the watertight test of Woop,
//! Benthin and Wald (2013), which never does, at 0.85–0.97× of Cramer's speed. Against exact
//! arithmetic on the f32 inputs, `t` is within 1e-5 relative or the f32 rounding bound,
//! and hit or miss differs only for rays within rounding distance of an edge.
//!
//! Conventions: rays are not normalized (`t` is parametric); barycentrics follow
//! `P = (1 − u − v)·A + u·B + v·C`; a miss is `None`, never a sentinel; loading and
//! building return [`Result`] with one [`Error`] enum that names the file and line.
#![deny(missing_docs)]
#![forbid(unsafe_code)]
// `!(a <= b)` is how this crate makes a NaN fail a test; it is deliberate everywhere.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

mod aabb;
mod bvh;
mod camera;
mod closest_point;
mod error;
#[cfg(feature = "mint")]
mod interop;
mod io;
mod mesh;
mod packet;
mod plane2d;
mod ray;
mod scene;
mod select;
#[cfg(test)]
mod test_support;
mod triangle;
mod watertight;

pub use aabb::Aabb;
pub use bvh::{BuildOptions, Bvh, ClosestPoint, Hit, QueryCost, QueryOptions, RayHit, Stats};
pub use camera::{pixel_ray, pixel_ray_from_inverse};
pub use error::{Error, Result};
#[cfg(feature = "mint")]
pub use interop::pixel_ray_mint;
pub use io::Format;
#[cfg(feature = "gltf")]
pub use io::gltf::GltfScene;
pub use io::obj::LoadOptions;
pub use mesh::Mesh;
pub use plane2d::{Ray2, Rect, RectHit, SegmentHit, ray_segment};
pub use ray::Ray;
pub use scene::{InstanceId, Scene, SceneHit, SceneOptions};
pub use select::{Frustum, triangle_overlaps_box, triangle_overlaps_sphere};
pub use triangle::{Culling, TriangleHit, intersect_triangle};
pub use watertight::intersect_triangle_watertight;
