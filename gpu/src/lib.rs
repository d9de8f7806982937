//! meshray's rays cast on a GPU with wgpu (Vulkan): closest hits, every answer bit for bit
//! [`Bvh::cast_ray`](meshray::query::RayCast::cast_ray)'s, and any hits, a hit exactly where
//! `cast_ray` finds one. Issue 42 in steps: rays on a mesh, from a slice or from a
//! `wgpu::Buffer` (answers written into another), through a blocking call or an async one;
//! a refit moves the device's copy with the tree. Python's `BVH.cast(..., device="gpu")`
//! runs on it, and the npm package's `bvh.gpu(device)` runs the same kernel through the
//! browser's WebGPU with this crate's CPU half ([`narrow`], built without the `wgpu`
//! feature). Not yet scenes, culling or Cramer's rule (gpu/NOTES.md lists what is open).
//!
//! ```no_run
//! use meshray::prelude::*;
//! use meshray::{Bvh, Mesh, Ray};
//! use meshray_gpu::{Gpu, GpuBvh};
//!
//! let gpu = Gpu::new().expect("a Vulkan adapter (lavapipe will do)");
//! let bvh = Bvh::build(Mesh::load("assets/scene.obj")?);
//! let device_bvh = GpuBvh::new(&gpu, bvh);
//! let rays = vec![Ray::new([0.0, 1.0, 10.0], [0.0, 0.0, -1.0]); 1_000];
//! let (hits, stats) = device_bvh.closest_hits(&rays);
//! // Every answer is the CPU's, bit for bit; `stats` says how many rays the CPU finished.
//! assert_eq!(hits[0], device_bvh.bvh().cast_ray(&rays[0], meshray::RayQuery::Closest, &Default::default()));
//! println!("{} rays, {} flagged", stats.rays, stats.flagged);
//! # Ok::<(), meshray::Error>(())
//! ```
//!
//! The GPU only narrows (see `closest.wgsl`): per ray it walks the uploaded tree in `f32`
//! and names the certain hit of least `t` and the few other triangles its `f32` arithmetic
//! cannot rule out, or flags the ray where it cannot narrow it. The CPU then finishes: it
//! tests the named triangles with the library's own test
//! ([`meshray::geometry::intersect_triangle`], the watertight test the walk runs, which gives
//! the walk's `t`, `u` and `v` bit for bit, `t` raised to the triangle's box entry as the walk
//! raises it) and keeps the least `t`, ties to the lowest triangle number, as the walk does; a
//! flagged ray, or one whose certain hit the exact test refuses, is cast again by
//! `Bvh::cast_ray`. The kernel bounds each triangle's `t` after that raise (it computes the
//! box entry too), so the raise never reorders the answer past a triangle it leaves out.
//!
//! [`Gpu::new`] makes a headless device (a hardware Vulkan adapter, else a software one such
//! as Mesa's lavapipe); a [`Gpu`] can also be built from the caller's own adapter, device
//! and queue (its fields are public), such as a renderer's.

#![deny(missing_docs)]

#[cfg(feature = "wgpu")]
mod device;
pub mod narrow;

#[cfg(feature = "wgpu")]
pub use device::{BufferError, Gpu, GpuBvh};
pub use narrow::{BatchStats, Finish, GpuHit, GpuRay, NO_HIT};
