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
//! queries ([`Bvh::closest_hit`], [`Bvh::any_hit`], [`Bvh::all_hits`], and the short
//! [`Bvh::closest_triangle`] for batch work) walk the tree, culling eight boxes at a time with
//! the slab test ([`Aabb::intersect_ray`], in SIMD), and test the triangles of the leaves
//! that survive by the watertight test ([`intersect_triangle_watertight`], Cramer's rule
//! solved in a frame sheared along the ray), four at a time.
//!
//! ```
//! use meshray::{pixel_ray, Bvh, Mesh, QueryOptions};
//! use nalgebra::{Isometry3, Perspective3, Point2, Point3, Vector2, Vector3};
//!
//! let mesh = Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
//! let bvh = Bvh::build(mesh);
//!
//! // A click in the middle of an 800×600 window, the camera looking at the sphere.
//! let view = Isometry3::look_at_rh(&Point3::new(0.0, 1.0, 6.0), &Point3::new(0.0, 1.0, 0.0), &Vector3::y());
//! let projection = Perspective3::new(800.0 / 600.0, 0.8, 0.1, 100.0);
//! let ray = pixel_ray(view.to_homogeneous(), projection.to_homogeneous(), Vector2::new(800.0, 600.0), Point2::new(400.0, 300.0))?;
//!
//! let hit = bvh.closest_hit(&ray, &QueryOptions::default()).expect("the sphere is under the cursor");
//! let mesh = bvh.mesh();
//! println!("triangle {} of {} at t = {}", hit.triangle, mesh.objects()[hit.object as usize], hit.t);
//! assert_eq!(mesh.objects()[hit.object as usize], "sphere");
//! # Ok::<(), meshray::Error>(())
//! ```
//!
//! The rest of this page is a guide: [loading](#loading), [building](#building),
//! [picking](#picking), [scenes and selection](#scenes-and-selection),
//! [performance](#performance), [the precision promise](#the-precision-promise) and the
//! [conventions](#conventions) every query shares.
//!
//! # Loading
//!
//! One way in for files, one for bytes, one for buffers: [`Mesh::load`] (the format by
//! extension, default options), [`Mesh::load_with`] (a [`LoadOptions`]: the format, limits,
//! a progress report), [`Mesh::from_bytes`] (bytes in memory; the format from the options or
//! the content) and [`Mesh::from_buffers`] (positions and triangles; with
//! [`with_corner_normals`](Mesh::with_corner_normals),
//! [`with_corner_uvs`](Mesh::with_corner_uvs), [`with_objects`](Mesh::with_objects) and
//! [`with_materials`](Mesh::with_materials)).
//!
//! | format ([`Format`]) | extensions | through | cargo feature (on by default) |
//! |---|---|---|---|
//! | Wavefront OBJ with MTL materials | `obj` | `tobj` | always there |
//! | STL, binary and ASCII | `stl` | `stl_io` | `stl` |
//! | PLY, ASCII and binary | `ply` | `ply-rs-bw` | `ply` |
//! | glTF 2.0, embedded or external buffers, and GLB | `gltf`, `glb` | `gltf`; as a scene of instances, `Scene::load` | `gltf` |
//!
//! Every
//! loader checks what it reads and answers a bad file with an [`Error`] that names the file and,
//! where the format has lines, the line: a face index past the vertices, a NaN coordinate, a
//! truncated buffer, an empty mesh. A missing or broken material library does not fail an OBJ
//! load; it is reported in [`Mesh::load_warnings`].
//!
//! [`LoadOptions`] also bounds what a file from anyone may cost: `max_file_bytes` (2 GiB by
//! default; a file is never read past it), `max_triangles` (100 million) and
//! `confine_materials` (material libraries and glTF buffers only from the file's own
//! directory; on by default).
//!
//! ```
//! use meshray::{Error, LoadOptions, Mesh};
//!
//! let obj = b"v 0 0 0\nv 1 0 0\nv 0 1 0\nv nan 0 0\nf 1 2 3\nf 1 2 4\n";
//! match Mesh::from_bytes(obj, &LoadOptions::default().with_format(meshray::Format::Obj)) {
//!     Err(Error::NonFiniteCoordinate { line, vertex, .. }) => assert_eq!((line, vertex), (Some(4), 3)),
//!     other => panic!("expected a NaN error, got {other:?}"),
//! }
//! let strict = LoadOptions { max_triangles: 1, ..Default::default() };
//! let two = b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 3 2 1\n";
//! assert!(matches!(Mesh::from_bytes(two, &strict.with_format(meshray::Format::Obj)), Err(Error::LimitExceeded { .. })));
//! ```
//!
//! # Building
//!
//! [`Bvh::build`] takes the mesh (the BVH owns it: [`Bvh::mesh`], [`Bvh::into_mesh`]) and
//! builds with the default [`BuildOptions`]: 16 SAH bins per axis, leaves of up to 8
//! triangles. [`Bvh::build_with`] takes other options, and [`Bvh::build_with_progress`] also
//! reports `(done, total)` triangles for a progress bar (the library prints nothing). With the
//! `parallel` feature (default) big nodes are built on rayon's threads; the tree is the same
//! on any number of threads. [`Bvh::stats`] describes the result (with the boxes and
//! triangles a standard set of random rays tests) and [`Bvh::validate`] checks every
//! invariant of it.
//!
//! [`BuildOptions::quality`] trades build time for ray speed, as Embree's build quality does:
//! [`BuildQuality::Fast`] (a linear BVH from Morton codes, for geometry rebuilt every frame:
//! 2.6 to 3.5× faster to build, rays at 0.68 to 0.98× the default tree's speed),
//! [`BuildQuality::Default`] and [`BuildQuality::High`] (the SAH tree improved by
//! reinsertion, for static scenes: up to 1.2× faster rays in architectural interiors, 1.2
//! to 1.8× the default build time). docs/benchmarks.md, "Build quality", has the
//! measurements.
//!
//! When the vertices move but the triangles stay (a deforming character, an edited scan),
//! [`Bvh::refit`] updates every box in O(n), keeping the tree's shape; compare
//! [`Stats::sah_cost`] with its value after the build and rebuild when it has grown by about
//! half. With the `serde` feature (default) a built [`Bvh`] is `Serialize` and
//! `Deserialize` in any serde format; loading checks the record whole (format name, version,
//! every invariant through [`Bvh::validate`]), so a damaged file is an error, never a panic
//! or a wrong answer.
//!
//! ```
//! use meshray::{Bvh, Mesh};
//!
//! let mesh = Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
//! let mut bvh = Bvh::build(mesh);
//! let built = bvh.stats().sah_cost;
//!
//! // Lift everything by 1: a refit, not a rebuild (rigid motion costs the tree nothing).
//! let lifted: Vec<_> = bvh.mesh().positions().iter().map(|p| p + nalgebra::Vector3::y()).collect();
//! bvh.refit(&lifted)?;
//! assert_eq!(bvh.bounds().min.y, 1.0);
//! assert!(bvh.stats().sah_cost < built * 1.5);
//!
//! # #[cfg(feature = "serde")] {
//! // Save and load (postcard here; any serde format works).
//! let bytes = postcard::to_allocvec(&bvh).expect("a Bvh serializes");
//! let loaded: Bvh = postcard::from_bytes(&bytes).expect("a valid record");
//! assert_eq!(loaded.stats(), bvh.stats());
//! assert!(postcard::from_bytes::<Bvh>(&bytes[..bytes.len() / 2]).is_err()); // cut short
//! # }
//! # Ok::<(), meshray::Error>(())
//! ```
//!
//! # Picking
//!
//! [`pixel_ray`] turns a pixel of the viewport (origin top left, `y` down, as mouse
//! coordinates are) into a [`Ray`], from the camera's view and projection matrices (OpenGL
//! clip space, as nalgebra's `Perspective3` makes); [`pixel_ray_from_inverse`] takes the
//! inverse of `projection · view` instead. Or make a ray yourself: [`Ray::new`],
//! [`Ray::with_range`].
//!
//! Every function that takes a point, a vector or a matrix takes anything that converts into
//! [`mint`](https://docs.rs/mint)'s types: nalgebra's (the crate's own), glam's and Bevy's,
//! cgmath's, ultraviolet's, plain arrays. Results are nalgebra types, which turn into any of
//! those with `.into()`; so code that uses glam needs no nalgebra.
//!
//! ```
//! use meshray::{pixel_ray, Bvh, Mesh, QueryOptions, Ray};
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
//! let ray = pixel_ray(mint::ColumnMatrix4::from(view), projection, [300.0, 200.0], [150.0, 100.0])?;
//! assert!((ray.origin().z - 4.9).abs() < 1e-4 && ray.direction().z < -0.99);
//! # Ok::<(), meshray::Error>(())
//! ```
//!
//! Three questions, each exact ([the precision promise](#the-precision-promise)):
//! [`Bvh::closest_hit`] (the first triangle along the ray), [`Bvh::any_hit`] (is anything
//! there? for shadows and lines of sight; cheaper) and [`Bvh::all_hits`] (every crossing,
//! sorted). The ray's own `[t_min, t_max]` is the range searched. [`QueryOptions`] chooses
//! the faces ([`Culling::None`], the default, for two-sided picking; [`Culling::Back`] for
//! front faces only) and the triangle test: the watertight test, the default, never lets a
//! ray slip between two triangles through their shared edge or vertex; `watertight: false`
//! selects plain Cramer's rule, a little faster, which can.
//!
//! ```
//! use meshray::{Bvh, Mesh, QueryOptions, Ray};
//! use nalgebra::{Point3, Vector3};
//!
//! // A square of two triangles; the ray goes exactly through their shared diagonal.
//! let corners = vec![
//!     Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0),
//!     Point3::new(1.0, 1.0, 0.0), Point3::new(0.0, 1.0, 0.0),
//! ];
//! let bvh = Bvh::build(Mesh::from_buffers(corners, vec![[0, 1, 2], [0, 2, 3]])?);
//! let ray = Ray::new(Point3::new(0.3, 0.3, 1.0), -Vector3::z());
//! let hit = bvh.closest_hit(&ray, &QueryOptions::default()).expect("no ray slips through");
//! assert_eq!(hit.t, 1.0);
//! # Ok::<(), meshray::Error>(())
//! ```
//!
//! A [`Hit`] carries everything about the point: `t`, the triangle's number in the file,
//! barycentrics, the point, the geometric normal and which face was hit, the interpolated
//! shading normal and texture coordinates when the mesh has them, the object and the
//! material. For batch work (visibility, scan simulation) that needs only which triangle and
//! where, [`Bvh::closest_triangle`] and [`Bvh::any_triangle`] return a 16-byte [`CompactHit`]
//! without reading the mesh, and [`Bvh::hit_details`] turns one into a [`Hit`] later;
//! [`Bvh::cast_rays`] answers a slice of rays, closest or any hit, on rayon's threads with
//! the `parallel` feature: the one batch query, which the command and the Python and
//! JavaScript packages use too.
//!
//! ```
//! use meshray::{Bvh, Mesh, QueryOptions, Ray, RayQuery};
//! use nalgebra::{Point3, Vector3};
//!
//! let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
//! // A scanner sweeping a line of rays down onto the scene: which objects does it see?
//! let rays: Vec<Ray> = (0..64)
//!     .map(|i| Ray::new(Point3::new(-3.9 + i as f32 * 0.123, 10.0, 0.37), -Vector3::y()))
//!     .collect();
//! let options = QueryOptions::default();
//! let mut seen: Vec<u32> = rays
//!     .iter()
//!     .filter_map(|ray| bvh.closest_triangle(ray, &options))
//!     .map(|short| bvh.mesh().object_id(short.triangle as usize))
//!     .collect();
//! seen.sort();
//! seen.dedup();
//! let names: Vec<&str> = seen.iter().map(|&o| bvh.mesh().objects()[o as usize].as_str()).collect();
//! assert_eq!(names, ["ground", "sphere", "torus"]);
//! // The same answers in one batch, on all cores.
//! let mut hits = Vec::new();
//! bvh.cast_rays(&rays, RayQuery::Closest, &options, &mut hits);
//! assert!(hits.iter().zip(&rays).all(|(hit, ray)| *hit == bvh.closest_triangle(ray, &options)));
//! # Ok::<(), meshray::Error>(())
//! ```
//!
//! # Scenes and selection
//!
//! A [`Scene`] places meshes as instances with affine transforms: [`Scene::add`] takes an
//! `Arc<Bvh>` (one BVH shared by any number of instances) and an object-to-world matrix and
//! returns an [`InstanceId`]; [`Scene::remove`], [`Scene::set_transform`],
//! [`Scene::set_mesh`], [`Scene::refit_mesh`], [`Scene::set_enabled`] and
//! [`Scene::set_mask`] edit it, and the top-level tree catches up once before the next query
//! (refitted, or rebuilt when that pays; [`Scene::update`]). Every scene query takes
//! [`SceneOptions`] (the mesh query's options, a mask and a filter): the ray queries
//! ([`Scene::closest_hit`], [`Scene::any_hit`], [`Scene::all_hits`]) return a [`SceneHit`] in
//! world space, `t` the same as along the world ray; [`Scene::closest_point`] measures
//! distances in world space, exact under non-uniform scales too; the selections
//! ([`Scene::triangles_in_box`], [`Scene::triangles_in_sphere`],
//! [`Scene::triangles_in_frustum`], [`Scene::visible_triangles`]) return
//! [`SceneTriangle`]s. A mirrored instance keeps its mesh's front faces in front. `Scene::load`
//! (feature `gltf`) makes a scene from a glTF file, one BVH per glTF mesh.
//!
//! Selection: [`Bvh::triangles_in_box`], [`Bvh::triangles_in_sphere`] and
//! [`Bvh::triangles_in_frustum`] return every overlapping triangle, hidden ones included;
//! [`Frustum::from_screen_rect`] is the region under a rectangle dragged on screen, and
//! [`Bvh::visible_triangles`] keeps only the triangles the user can see through it. The
//! predicates behind them are public: [`triangle_overlaps_box`], [`triangle_overlaps_sphere`],
//! [`Frustum::overlaps_triangle`]. [`Bvh::closest_point`] snaps a point to the mesh.
//!
//! ```
//! use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
//! use nalgebra::{Matrix4, Point3, Vector3};
//! use std::sync::Arc;
//!
//! let bvh = Arc::new(Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?));
//! let mut scene = Scene::new();
//! let here = scene.add(bvh.clone(), Matrix4::identity())?;
//! let there = scene.add(bvh, Matrix4::new_translation(&Vector3::new(20.0, 0.0, 0.0)))?;
//! // Down onto the second copy's sphere top (the sphere's centre is (0, 1, 0) in the mesh).
//! let ray = Ray::new(Point3::new(20.1, 10.0, 0.1), -Vector3::y());
//! let found = scene.closest_hit(&ray, &SceneOptions::default()).unwrap();
//! assert_eq!(found.instance, there);
//! assert!((found.hit.point.y - 2.0).abs() < 0.02 && found.hit.normal.y > 0.9);
//! scene.set_enabled(there, false)?;
//! assert!(scene.closest_hit(&ray, &SceneOptions::default()).is_none());
//! assert_ne!(here, there);
//! # Ok::<(), meshray::Error>(())
//! ```
//!
//! # Performance
//!
//! The tree the queries walk is 8-wide: one node holds eight child boxes in struct-of-arrays
//! form, tested against the ray in one SIMD pass (AVX2 when the CPU has it, else the `wide`
//! crate: SSE, NEON, or scalar elsewhere); the leaves hold their triangles in packets of four,
//! tested together. The AVX2 path is chosen at run time, once per process, when the CPU has
//! AVX2, FMA, POPCNT, LZCNT and BMI1/2; setting the environment variable
//! `MESHRAY_SIMD=portable` before the first query keeps the portable path instead (the same
//! answers, bit for bit: a way to rule the vector kernel out when chasing a problem, or to
//! time the portable path). Nodes, packets and the map back to the file's triangle numbers take 51.5
//! to 52.2 bytes per triangle on the shared meshes
//! ([`Stats::bytes_per_triangle`]), besides the mesh itself. Closest and any hit allocate
//! nothing; [`Bvh::all_hits_into`] reuses the caller's vector. An invalid ray is answered
//! before any traversal.
//!
//! How fast, measured against Embree, tinybvh and obvhs on the same rays, is in
//! docs/benchmarks.md, with the date, the machine and the command of each figure; absolute
//! figures depend on the machine, so measure your own (`cargo run --release -p meshray-cli
//! -- bench MESH.obj`). Build time grows as n log n and the boxes a ray tests as log n. For
//! speed: build in release mode, prefer [`Bvh::any_hit`] when any hit will do, the short
//! [`CompactHit`] queries, and [`Bvh::cast_rays`] for batches (a camera's rays in rows of
//! eight neighbouring pixels walk together), and give rays a finite `t_max` when only a
//! range matters.
//!
//! # The precision promise
//!
//! Every query answers bit for bit what the same f32 triangle test over every triangle
//! answers (the traversal never culls a box the ray touches), except that it rejects a point
//! the triangle test accepted outside the triangle's own box (an ulp off, for a ray starting
//! beside a vertex; more, for a ray grazing a sliver). The default triangle test is the
//! watertight test of Woop, Benthin and Wald (2013) ([`intersect_triangle_watertight`]),
//! which never lets a ray aimed exactly at a shared edge or vertex slip between the
//! triangles; plain Cramer's rule ([`intersect_triangle`], `QueryOptions { watertight:
//! false, .. }`) is a few per cent faster and can. Against exact arithmetic on the f32 inputs, `t` is within 1e-5 relative
//! or the f32 rounding bound, and hit or miss differs only for rays within rounding distance
//! of an edge. [`Bvh::closest_point`] and the selection queries compute in `f64` from the
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
//! it is out of range, as slice indexing does; [`Bvh::hit_details`] answers `None`.
#![deny(missing_docs)]
// `unsafe` only in src/bvh/simd.rs: calling the AVX2 copies of the walk on a CPU that has
// AVX2 (each call allowed there alone, with its `SAFETY:` line).
#![deny(unsafe_code)]
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
mod format;
mod io;
mod mesh;
mod picking;
mod plane2d;
mod ray;
mod region;
mod scene;
#[cfg(test)]
mod test_support;
mod transform;
mod triangle;
mod watertight;

pub use aabb::Aabb;
#[cfg(feature = "serde")]
pub use bvh::SavedBvh;
pub use bvh::{
    BuildOptions, BuildQuality, Bvh, ClosestPoint, CompactHit, Hit, MeasuredCost, QueryCost,
    QueryOptions, RayQuery, Stats,
};
pub use camera::{pixel_ray, pixel_ray_from_inverse};
pub use error::{Error, Result};
pub use format::Format;
pub use io::options::LoadOptions;
pub use mesh::Mesh;
pub use plane2d::{Ray2, Rect, RectHit, SegmentHit, ray_segment};
pub use ray::Ray;
pub use region::{Frustum, triangle_overlaps_box, triangle_overlaps_sphere};
pub use scene::{InstanceId, Scene, SceneClosestPoint, SceneHit, SceneOptions, SceneTriangle};
pub use triangle::{Culling, TriangleHit, intersect_triangle};
pub use watertight::intersect_triangle_watertight;
