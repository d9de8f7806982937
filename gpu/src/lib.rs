//! meshray's rays cast on a GPU with wgpu (Vulkan): closest hits, every answer bit for bit
//! [`Bvh::cast_ray`](meshray::query::RayCast::cast_ray)'s, and any hits, a hit exactly where
//! `cast_ray` finds one. Issue 42 in steps: rays on a mesh, from a slice or from a
//! `wgpu::Buffer` (answers written into another), through a blocking call or an async one;
//! a refit moves the device's copy with the tree. Not yet scenes, culling or Cramer's rule,
//! the browser's WebGPU or Python (gpu/NOTES.md lists what is open).
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

use meshray::prelude::*;
use meshray::tree::RawTree;
use meshray::{Bvh, CompactHit, QueryOptions, Ray, RayQuery};
use nalgebra::Point3;
use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};
use wgpu::util::DeviceExt;

/// A headless device: Vulkan only, a software (fallback) adapter such as lavapipe allowed.
pub struct Gpu {
    /// The adapter chosen.
    pub adapter: wgpu::Adapter,
    /// Its device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
}

impl Gpu {
    /// A device on a Vulkan adapter (a hardware one if there is one, else a fallback one
    /// such as lavapipe), or `None` where there is none.
    pub fn new() -> Option<Gpu> {
        pollster::block_on(async {
            let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
                backends: wgpu::Backends::VULKAN,
                ..wgpu::InstanceDescriptor::new_without_display_handle()
            });
            let mut adapter = None;
            for force_fallback_adapter in [false, true] {
                adapter = instance
                    .request_adapter(&wgpu::RequestAdapterOptions {
                        power_preference: wgpu::PowerPreference::HighPerformance,
                        force_fallback_adapter,
                        ..Default::default()
                    })
                    .await
                    .ok();
                if adapter.is_some() {
                    break;
                }
            }
            let adapter = adapter?;
            let (device, queue) = adapter
                .request_device(&wgpu::DeviceDescriptor {
                    label: Some("meshray-gpu"),
                    required_limits: adapter.limits(),
                    ..Default::default()
                })
                .await
                .ok()?;
            Some(Gpu {
                adapter,
                device,
                queue,
            })
        })
    }
}

/// What one batch cost and how much of it the CPU redid.
#[derive(Clone, Copy, Debug, Default)]
pub struct BatchStats {
    /// Rays cast.
    pub rays: usize,
    /// Rays the GPU flagged for the CPU to cast again (candidate list or stack overflowed,
    /// a corner not finite).
    pub flagged: usize,
    /// Of those, flagged because the walk's stack overflowed.
    pub overflow: usize,
    /// Rays the GPU narrowed to several candidates (a near tie, or a triangle it could not
    /// decide within reach), which the CPU tested one by one.
    pub several: usize,
    /// The candidates the CPU tested, all rays together (the best included).
    pub tested: usize,
    /// Rays whose certain best the exact test refused (cast again on the CPU).
    pub refused: usize,
    /// Nodes the GPU visited, all rays together.
    pub visits: u64,
    /// Time from upload of the rays to the answers read back.
    pub gpu: Duration,
    /// Time spent finishing on the CPU.
    pub finish: Duration,
}

/// How the CPU finishes a ray the GPU narrowed to several candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// Casts it again with `Bvh::cast_ray`: every answer is `cast_ray`'s bit for bit.
    CastRay,
    /// Tests the candidates with the exact triangle test and keeps the least `t`, ties to the
    /// lowest triangle number: the answer of the scalar test over every triangle the kernel's
    /// walk could not rule out (a brute force). Since main's 478fe97 (a hit's `t` raised to
    /// its box entry) that has been `cast_ray`'s on every ray tested (see NOTES.md).
    Candidates,
}

/// A [`Bvh`] uploaded to a device, ready to cast rays. It holds the tree (shared, an
/// [`Arc`]): the CPU finishes each batch on it, and [`refit`](GpuBvh::refit) moves its
/// vertices and the device's copy together.
pub struct GpuBvh<'g> {
    bvh: Arc<Bvh>,
    gpu: &'g Gpu,
    /// Slot → the mesh's triangle number (a refit keeps it).
    index: Vec<u32>,
    nodes: wgpu::Buffer,
    packets: wgpu::Buffer,
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
}

/// One ray as the kernel reads it: the layout of a rays buffer for
/// [`closest_hits_buffers`](GpuBvh::closest_hits_buffers) (32 bytes, `f32`s in the device's
/// byte order; WGSL: `struct { o: array<f32, 3>, t_min: f32, d: array<f32, 3>, t_max: f32 }`).
/// As [`Ray::with_range`]: any values are accepted, and a ray that cannot hit answers none.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuRay {
    /// The origin.
    pub origin: [f32; 3],
    /// The range's start.
    pub t_min: f32,
    /// The direction (not normalized: `t` is in its units).
    pub direction: [f32; 3],
    /// The range's end (`+∞` for no end).
    pub t_max: f32,
}

impl From<&Ray> for GpuRay {
    fn from(r: &Ray) -> GpuRay {
        GpuRay {
            origin: r.origin().coords.into(),
            t_min: r.t_min(),
            direction: r.direction().into(),
            t_max: r.t_max(),
        }
    }
}

impl From<&GpuRay> for Ray {
    fn from(r: &GpuRay) -> Ray {
        Ray::with_range(r.origin, r.direction, r.t_min, r.t_max)
    }
}

/// One answer as [`closest_hits_buffers`](GpuBvh::closest_hits_buffers) writes it into a
/// hits buffer (16 bytes; WGSL: `struct { t: f32, triangle: u32, u: f32, v: f32 }`): the
/// fields of [`CompactHit`], bit for bit; a miss has `triangle` [`NO_HIT`], `t` `+∞`, `u`
/// and `v` 0.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuHit {
    /// The ray's parameter at the hit.
    pub t: f32,
    /// The mesh's triangle number, or [`NO_HIT`].
    pub triangle: u32,
    /// The barycentric coordinate of the triangle's second corner.
    pub u: f32,
    /// The barycentric coordinate of its third corner.
    pub v: f32,
}

/// [`GpuHit::triangle`] of a ray that hits nothing.
pub const NO_HIT: u32 = u32::MAX;

impl From<Option<CompactHit>> for GpuHit {
    fn from(hit: Option<CompactHit>) -> GpuHit {
        match hit {
            Some(h) => GpuHit {
                t: h.t,
                triangle: h.triangle,
                u: h.u,
                v: h.v,
            },
            None => GpuHit {
                t: f32::INFINITY,
                triangle: NO_HIT,
                u: 0.0,
                v: 0.0,
            },
        }
    }
}

/// Why a batch given in buffers was refused (nothing was run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BufferError {
    /// A buffer is smaller than the batch needs.
    TooSmall {
        /// `"rays"` or `"hits"`.
        buffer: &'static str,
        /// Bytes the batch needs.
        needed: u64,
        /// The buffer's size.
        size: u64,
    },
    /// A buffer lacks a usage the call needs: rays `STORAGE | COPY_SRC` (the kernel reads
    /// them; the CPU's finish reads them back), hits `COPY_DST` (the answers are written).
    Usage {
        /// `"rays"` or `"hits"`.
        buffer: &'static str,
        /// The usages missing.
        missing: wgpu::BufferUsages,
    },
}

impl std::fmt::Display for BufferError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BufferError::TooSmall {
                buffer,
                needed,
                size,
            } => write!(
                f,
                "the {buffer} buffer holds {size} bytes; the batch needs {needed}"
            ),
            BufferError::Usage { buffer, missing } => {
                write!(f, "the {buffer} buffer lacks the usage {missing:?}")
            }
        }
    }
}

impl std::error::Error for BufferError {}

/// Where a chunk's rays come from: the caller's slice (uploaded), or a range of a buffer on
/// the device (read by the kernel there, and copied back for the CPU's finish).
enum Source<'r> {
    Slice(&'r [Ray]),
    Buffer {
        buffer: &'r wgpu::Buffer,
        range: Range<usize>,
    },
}

impl Source<'_> {
    fn len(&self) -> usize {
        match self {
            Source::Slice(rays) => rays.len(),
            Source::Buffer { range, .. } => range.len(),
        }
    }
}

/// A chunk's answers from the kernel, and its rays where they came from a buffer (`None`
/// where the caller's slice holds them).
struct Fetched {
    answers: Vec<GpuAnswer>,
    rays: Option<Vec<Ray>>,
}

/// One ray's answer as the kernel writes it.
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
struct GpuAnswer {
    /// The slot of the certain hit of least `t`, or [`NONE`].
    best: u32,
    /// Its `t` in the kernel's `f32` (not the CPU's).
    t: f32,
    flags: u32,
    visits: u32,
    /// How many of `candidates` are used.
    count: u32,
    _pad: [u32; 3],
    /// The other triangles (slots) that might be the answer.
    candidates: [u32; CANDIDATES],
}

/// Below this (and not zero) a direction component makes the CPU cast the ray: the kernel's
/// bounds on a box entry, `(bound − o)·(1/d)`, allow for a device that flushes a subnormal
/// `bound − o` to zero only while `1/d` is at most 2^60 (closest.wgsl's `TINY`).
const TINY_DIRECTION: f32 = 1.0 / (1u64 << 60) as f32;

/// Whether a direction component is nonzero but below [`TINY_DIRECTION`].
fn tiny_direction(ray: &Ray) -> bool {
    let d = ray.direction();
    [d.x, d.y, d.z]
        .iter()
        .any(|c| *c != 0.0 && c.abs() < TINY_DIRECTION)
}

const NONE: u32 = u32::MAX;
const FLAG_NEAR: u32 = 1;
const FLAG_OVERFLOW: u32 = 2;
const FLAG_INPUT: u32 = 4;
const FLAG_LIST: u32 = 64;
/// The flags that make the CPU cast the ray itself.
const FALLBACK: u32 = FLAG_OVERFLOW | FLAG_INPUT | FLAG_LIST;
/// The candidate list's length (the kernel's `K`).
const CANDIDATES: usize = 8;
const WORKGROUP: u32 = 64;
/// Rays per dispatch (the workgroup count stays under 65,535 on one axis).
const CHUNK: usize = 1 << 20;
/// The kernel's modes (its `params.mode`).
const MODE_CLOSEST: u32 = 0;
const MODE_ANY: u32 = 1;

impl<'g> GpuBvh<'g> {
    /// Uploads `bvh`'s tree to `gpu` and compiles the kernel. The tree is kept (an
    /// `Arc<Bvh>`, shared where one is given; a `Bvh` is moved in).
    pub fn new(gpu: &'g Gpu, bvh: impl Into<Arc<Bvh>>) -> GpuBvh<'g> {
        assert_eq!(RawTree::LAYOUT, 1, "the kernel reads layout 1");
        let bvh = bvh.into();
        let raw = bvh.raw_tree();
        let device = &gpu.device;
        let storage = |label, words: &[u32]| {
            // A binding may not be empty.
            let words = if words.is_empty() { &[0u32][..] } else { words };
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(words),
                // Written again by a refit.
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            })
        };
        let nodes = storage("nodes", &raw.nodes);
        let packets = storage("packets", &raw.packets);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("closest.wgsl"),
            source: wgpu::ShaderSource::Wgsl(include_str!("closest.wgsl").into()),
        });
        let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty,
            count: None,
        };
        let storage_ty = |read_only| wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("closest"),
            entries: &[
                entry(0, storage_ty(true)),
                entry(1, storage_ty(true)),
                entry(2, storage_ty(true)),
                entry(3, storage_ty(false)),
                entry(
                    4,
                    wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Uniform,
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                ),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("closest"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("closest"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let index = raw.triangle_index.to_vec();
        drop(raw);
        GpuBvh {
            bvh,
            gpu,
            index,
            nodes,
            packets,
            layout,
            pipeline,
        }
    }

    /// The tree the device's copy was made from (and the CPU finishes on).
    pub fn bvh(&self) -> &Arc<Bvh> {
        &self.bvh
    }

    /// Moves the mesh's vertices to `positions` as [`Bvh::refit`] does (the tree keeps its
    /// shape, its boxes recomputed), and writes the new boxes and triangles over the
    /// device's copy: no buffer or pipeline is made anew. Every answer after it is
    /// `cast_ray`'s on the refitted tree. A tree shared with others (the `Arc` given to
    /// [`new`](Self::new) still held elsewhere) is copied first, as [`Arc::make_mut`] does,
    /// so theirs does not move.
    ///
    /// # Errors
    /// [`Bvh::refit`]'s (a wrong vertex count, a coordinate not finite or out of range);
    /// then neither the tree nor the device's copy has changed.
    pub fn refit(&mut self, positions: &[Point3<f32>]) -> meshray::Result<()> {
        Arc::make_mut(&mut self.bvh).refit(positions)?;
        let raw = self.bvh.raw_tree();
        debug_assert_eq!(raw.triangle_index, &self.index[..]);
        for (buffer, words) in [(&self.nodes, &raw.nodes), (&self.packets, &raw.packets)] {
            if !words.is_empty() {
                self.gpu
                    .queue
                    .write_buffer(buffer, 0, bytemuck::cast_slice(words));
            }
        }
        Ok(())
    }

    /// The closest hit of every ray, as `bvh.cast_ray(ray, RayQuery::Closest,
    /// &QueryOptions::default())` answers it, bit for bit; and what the batch cost.
    pub fn closest_hits(&self, rays: &[Ray]) -> (Vec<Option<CompactHit>>, BatchStats) {
        self.closest_hits_with(rays, Finish::CastRay)
    }

    /// [`closest_hits`](Self::closest_hits) with a choice of how rays narrowed to several
    /// candidates are finished.
    pub fn closest_hits_with(
        &self,
        rays: &[Ray],
        finish: Finish,
    ) -> (Vec<Option<CompactHit>>, BatchStats) {
        let fetch = |range| std::future::ready(self.run(Source::Slice(&rays[range]), MODE_CLOSEST));
        pollster::block_on(self.batch(rays.len(), rays, fetch, |ray, answer, stats| {
            self.finish(ray, answer, finish, stats)
        }))
    }

    /// Some hit of every ray in its range, not always the nearest (an occlusion or
    /// shadow test), and `None` exactly where `bvh.cast_ray(ray, RayQuery::Any,
    /// &QueryOptions::default())` answers `None`. A hit's `t`, `u` and `v` are the library's
    /// exact test on its triangle, bit for bit what `cast_ray` answers whenever it names
    /// that triangle; which triangle may differ from `cast_ray`'s where several are hit (both
    /// take whichever their walk meets first). The kernel stops at the first triangle its
    /// bounds call a certain hit; a ray without one is decided on the CPU by the triangles
    /// the kernel could not rule out.
    pub fn any_hits(&self, rays: &[Ray]) -> (Vec<Option<CompactHit>>, BatchStats) {
        let fetch = |range| std::future::ready(self.run(Source::Slice(&rays[range]), MODE_ANY));
        pollster::block_on(self.batch(rays.len(), rays, fetch, |ray, answer, stats| {
            self.finish_any(ray, answer, stats)
        }))
    }

    /// [`closest_hits`](Self::closest_hits) without blocking the caller's thread while the
    /// GPU works: the same answers, bit for bit. The future completes once the device has
    /// run the kernel and mapped the answers, then finishes on the CPU as the blocking form
    /// does. wgpu maps a buffer from a poll of the device: natively this future polls it
    /// (without blocking) each time it is polled and asks to be polled again until the
    /// answers are mapped, so any executor drives it (busily, while the GPU works); in a
    /// browser the event loop maps them.
    pub async fn closest_hits_async(&self, rays: &[Ray]) -> (Vec<Option<CompactHit>>, BatchStats) {
        let fetch = |range| self.run_async(Source::Slice(&rays[range]), MODE_CLOSEST);
        self.batch(rays.len(), rays, fetch, |ray, answer, stats| {
            self.finish(ray, answer, Finish::CastRay, stats)
        })
        .await
    }

    /// [`any_hits`](Self::any_hits) without blocking, as
    /// [`closest_hits_async`](Self::closest_hits_async).
    pub async fn any_hits_async(&self, rays: &[Ray]) -> (Vec<Option<CompactHit>>, BatchStats) {
        let fetch = |range| self.run_async(Source::Slice(&rays[range]), MODE_ANY);
        self.batch(rays.len(), rays, fetch, |ray, answer, stats| {
            self.finish_any(ray, answer, stats)
        })
        .await
    }

    /// [`closest_hits`](Self::closest_hits) for rays that live on the device: the first
    /// `count` [`GpuRay`]s of `rays` in, the same answers as [`GpuHit`]s written into the
    /// first `count` of `hits`, for rays made on the GPU (a compute pass of the caller's)
    /// and answers used there. The kernel reads the rays where they are; the CPU's finish
    /// needs them too, so they are copied back with the kernel's answers (32 bytes a ray),
    /// and the exact answers are written with the queue's `write_buffer` (16 bytes a ray),
    /// visible to any work submitted after this returns.
    ///
    /// # Errors
    /// [`BufferError`] where a buffer is too small for `count` or lacks a usage (rays
    /// `STORAGE | COPY_SRC`, hits `COPY_DST`); nothing is run then. Both must belong to
    /// this [`Gpu`]'s device (wgpu panics otherwise).
    pub fn closest_hits_buffers(
        &self,
        rays: &wgpu::Buffer,
        count: usize,
        hits: &wgpu::Buffer,
    ) -> Result<BatchStats, BufferError> {
        pollster::block_on(self.in_buffers(rays, count, hits, MODE_CLOSEST, true))
    }

    /// [`any_hits`](Self::any_hits) for rays and answers in buffers, as
    /// [`closest_hits_buffers`](Self::closest_hits_buffers).
    ///
    /// # Errors
    /// As [`closest_hits_buffers`](Self::closest_hits_buffers).
    pub fn any_hits_buffers(
        &self,
        rays: &wgpu::Buffer,
        count: usize,
        hits: &wgpu::Buffer,
    ) -> Result<BatchStats, BufferError> {
        pollster::block_on(self.in_buffers(rays, count, hits, MODE_ANY, true))
    }

    /// [`closest_hits_buffers`](Self::closest_hits_buffers) without blocking, as
    /// [`closest_hits_async`](Self::closest_hits_async).
    ///
    /// # Errors
    /// As [`closest_hits_buffers`](Self::closest_hits_buffers).
    pub async fn closest_hits_buffers_async(
        &self,
        rays: &wgpu::Buffer,
        count: usize,
        hits: &wgpu::Buffer,
    ) -> Result<BatchStats, BufferError> {
        self.in_buffers(rays, count, hits, MODE_CLOSEST, false)
            .await
    }

    /// [`any_hits_buffers`](Self::any_hits_buffers) without blocking, as
    /// [`closest_hits_async`](Self::closest_hits_async).
    ///
    /// # Errors
    /// As [`closest_hits_buffers`](Self::closest_hits_buffers).
    pub async fn any_hits_buffers_async(
        &self,
        rays: &wgpu::Buffer,
        count: usize,
        hits: &wgpu::Buffer,
    ) -> Result<BatchStats, BufferError> {
        self.in_buffers(rays, count, hits, MODE_ANY, false).await
    }

    /// The four forms in buffers: the batch in `mode`, each chunk fetched `blocking` (the
    /// future then ready at once) or not, the exact answers written into `hits`.
    async fn in_buffers(
        &self,
        rays: &wgpu::Buffer,
        count: usize,
        hits: &wgpu::Buffer,
        mode: u32,
        blocking: bool,
    ) -> Result<BatchStats, BufferError> {
        check_buffers(rays, count, hits)?;
        let finish = |ray: &Ray, answer: &GpuAnswer, stats: &mut BatchStats| match mode {
            MODE_ANY => self.finish_any(ray, answer, stats),
            _ => self.finish(ray, answer, Finish::CastRay, stats),
        };
        let source = |range| Source::Buffer {
            buffer: rays,
            range,
        };
        let (found, stats) = if blocking {
            let fetch = |range| std::future::ready(self.run(source(range), mode));
            self.batch(count, &[], fetch, finish).await
        } else {
            let fetch = |range| self.run_async(source(range), mode);
            self.batch(count, &[], fetch, finish).await
        };
        self.write_hits(hits, &found);
        Ok(stats)
    }

    /// The exact answers written into the hits buffer (and the write flushed to the queue).
    fn write_hits(&self, hits: &wgpu::Buffer, found: &[Option<CompactHit>]) {
        if found.is_empty() {
            return;
        }
        let out: Vec<GpuHit> = found.iter().map(|&h| GpuHit::from(h)).collect();
        self.gpu
            .queue
            .write_buffer(hits, 0, bytemuck::cast_slice(&out));
        self.gpu.queue.submit(None);
    }

    /// The kernel on `count` rays, chunk by chunk, each chunk's answers from `fetch` (the
    /// blocking [`run`](Self::run), ready at once, or [`run_async`](Self::run_async)), each
    /// answer finished on the CPU by `finish`; the GPU's and the finish's times in the
    /// stats. The rays are those fetched with the answers (from a buffer), else the
    /// caller's `rays`.
    async fn batch<F: Future<Output = Fetched>>(
        &self,
        count: usize,
        rays: &[Ray],
        mut fetch: impl FnMut(Range<usize>) -> F,
        mut finish: impl FnMut(&Ray, &GpuAnswer, &mut BatchStats) -> Option<CompactHit>,
    ) -> (Vec<Option<CompactHit>>, BatchStats) {
        let mut stats = BatchStats {
            rays: count,
            ..Default::default()
        };
        let mut hits = Vec::with_capacity(count);
        for first in (0..count).step_by(CHUNK) {
            let range = first..count.min(first + CHUNK);
            let start = Instant::now();
            let fetched = fetch(range.clone()).await;
            stats.gpu += start.elapsed();
            let start = Instant::now();
            let chunk = match &fetched.rays {
                Some(fetched) => fetched,
                None => &rays[range],
            };
            for (ray, answer) in chunk.iter().zip(&fetched.answers) {
                hits.push(finish(ray, answer, &mut stats));
            }
            stats.finish += start.elapsed();
        }
        (hits, stats)
    }

    /// The library's own test on one slot's triangle: the walk's answer for it, bit for bit.
    fn exact(&self, ray: &Ray, slot: u32) -> Option<CompactHit> {
        let triangle = self.index[slot as usize];
        let [a, b, c] = self.bvh.mesh().triangle(triangle as usize);
        meshray::geometry::intersect_triangle(ray, a, b, c, &QueryOptions::default()).map(|h| {
            CompactHit {
                t: h.t,
                triangle,
                u: h.u,
                v: h.v,
            }
        })
    }

    /// An any-hit answer from the kernel's: its certain hit, confirmed by the exact test, or
    /// the first of its candidates the exact test accepts; the CPU's own any-hit cast where
    /// the kernel flagged the ray or the exact test refused the certain hit.
    fn finish_any(
        &self,
        ray: &Ray,
        answer: &GpuAnswer,
        stats: &mut BatchStats,
    ) -> Option<CompactHit> {
        if let Err(decided) = self.triage(ray, answer, RayQuery::Any, stats) {
            return decided;
        }
        let cpu = || {
            self.bvh
                .cast_ray(ray, RayQuery::Any, &QueryOptions::default())
        };
        if answer.best != NONE {
            stats.tested += 1;
            let found = self.exact(ray, answer.best);
            if found.is_none() {
                stats.refused += 1;
                return cpu();
            }
            return found;
        }
        // No certain hit: every triangle that might hit in range is listed.
        stats.several += usize::from(answer.count > 1);
        answer.candidates[..answer.count as usize]
            .iter()
            .find_map(|&slot| {
                stats.tested += 1;
                self.exact(ray, slot)
            })
    }

    /// The start both finishes share: `Err` with the answer where the ray is decided
    /// without the kernel's (an invalid ray: none; a tiny direction component or a flag
    /// that makes the CPU cast it: `query` cast on the CPU), `Ok` to go on.
    fn triage(
        &self,
        ray: &Ray,
        answer: &GpuAnswer,
        query: RayQuery,
        stats: &mut BatchStats,
    ) -> Result<(), Option<CompactHit>> {
        if !ray.is_valid() {
            return Err(None);
        }
        stats.visits += u64::from(answer.visits);
        let fallback = answer.flags & FALLBACK != 0;
        if tiny_direction(ray) || fallback {
            stats.flagged += 1;
            stats.overflow += usize::from(fallback && answer.flags & FLAG_OVERFLOW != 0);
            return Err(self.bvh.cast_ray(ray, query, &QueryOptions::default()));
        }
        Ok(())
    }

    /// The exact answer from the kernel's.
    fn finish(
        &self,
        ray: &Ray,
        answer: &GpuAnswer,
        finish: Finish,
        stats: &mut BatchStats,
    ) -> Option<CompactHit> {
        if let Err(decided) = self.triage(ray, answer, RayQuery::Closest, stats) {
            return decided;
        }
        let options = QueryOptions::default();
        let cpu = || self.bvh.cast_ray(ray, RayQuery::Closest, &options);
        if answer.flags & FLAG_NEAR != 0 {
            stats.several += 1;
            if finish == Finish::CastRay {
                return cpu();
            }
        }
        let exact = |slot: u32| self.exact(ray, slot);
        let mut best = None;
        if answer.best != NONE {
            stats.tested += 1;
            match exact(answer.best) {
                Some(h) => best = Some(h),
                None => {
                    stats.refused += 1;
                    return cpu();
                }
            }
        }
        // The least t, ties to the lowest triangle number, as the walk keeps its best.
        for &slot in &answer.candidates[..answer.count as usize] {
            stats.tested += 1;
            if let Some(h) = exact(slot) {
                let closer = match best {
                    Some(b) => h.t < b.t || (h.t == b.t && h.triangle < b.triangle),
                    None => true,
                };
                if closer {
                    best = Some(h);
                }
            }
        }
        best
    }

    /// The kernel's flags for each ray, without the CPU's finish, for diagnostics: bit 0
    /// several candidates (bits 3, 4, 5: among them a certain hit, an undecided edge, an
    /// undecided plane), bit 1 the stack overflowed, bit 2 a corner not finite, bit 6 the
    /// candidate list overflowed, bit 7 some triangle's box entry widened its `t` interval
    /// (the CPU's raise may apply). A ray with a tiny direction component is not cast (0).
    pub fn flags(&self, rays: &[Ray]) -> Vec<u32> {
        rays.chunks(CHUNK)
            .flat_map(|chunk| {
                let answers = self.run(Source::Slice(chunk), MODE_CLOSEST).answers;
                answers.into_iter().map(|a| a.flags)
            })
            .collect()
    }

    /// Runs the kernel on `rays` (at most [`CHUNK`]) in `mode` ([`MODE_CLOSEST`],
    /// [`MODE_ANY`]) and reads its answers back, blocking.
    fn run(&self, rays: Source<'_>, mode: u32) -> Fetched {
        let pending = self.submit(rays, mode);
        let slice = pending.read_buf.slice(..);
        slice.map_async(wgpu::MapMode::Read, |r| r.expect("mapping the answers"));
        self.gpu
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("waiting for the kernel");
        pending.take()
    }

    /// [`run`](Self::run) without blocking: the answers once the device has mapped them
    /// (see [`Mapping`]).
    async fn run_async(&self, rays: Source<'_>, mode: u32) -> Fetched {
        let pending = self.submit(rays, mode);
        let state = Arc::new(Mutex::new(MapState::default()));
        let done = Arc::clone(&state);
        pending
            .read_buf
            .slice(..)
            .map_async(wgpu::MapMode::Read, move |result| {
                let mut done = done.lock().unwrap_or_else(PoisonError::into_inner);
                done.result = Some(result);
                if let Some(waker) = done.waker.take() {
                    waker.wake();
                }
            });
        let mapping = Mapping {
            device: self.gpu.device.clone(),
            state,
        };
        mapping.await.expect("mapping the answers");
        pending.take()
    }

    /// Submits the kernel in `mode` on `source`'s rays (at most [`CHUNK`]; a slice is
    /// uploaded first), its answers (and a buffer's rays) to be copied into a buffer to map.
    fn submit(&self, source: Source<'_>, mode: u32) -> Pending {
        let device = &self.gpu.device;
        let count = source.len();
        let rays = match &source {
            Source::Slice(rays) => *rays,
            Source::Buffer { .. } => &[],
        };
        let gpu_rays: Vec<GpuRay> = rays
            .iter()
            .map(|r| {
                if r.is_valid() && !tiny_direction(r) {
                    GpuRay::from(r)
                } else {
                    // The CPU answers an invalid ray (None) or casts one with a tiny direction
                    // component; the kernel skips an empty range.
                    GpuRay {
                        origin: [0.0; 3],
                        t_min: 1.0,
                        direction: [0.0, 0.0, 1.0],
                        t_max: 0.0,
                    }
                }
            })
            .collect();
        let n = count.max(1);
        let uploaded;
        let ray_binding = match &source {
            Source::Slice(_) => {
                uploaded = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("rays"),
                    contents: if gpu_rays.is_empty() {
                        &[0u8; RAY_BYTES as usize]
                    } else {
                        bytemuck::cast_slice(&gpu_rays)
                    },
                    usage: wgpu::BufferUsages::STORAGE,
                });
                uploaded.as_entire_buffer_binding()
            }
            Source::Buffer { buffer, range } => wgpu::BufferBinding {
                buffer,
                offset: range.start as u64 * RAY_BYTES,
                size: wgpu::BufferSize::new(n as u64 * RAY_BYTES),
            },
        };
        let size = (n * std::mem::size_of::<GpuAnswer>()) as u64;
        // A buffer's rays come back after the answers, for the CPU's finish.
        let back = match &source {
            Source::Slice(_) => 0,
            Source::Buffer { .. } => count as u64 * RAY_BYTES,
        };
        let answer_buf = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("answers"),
            size,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let read_buf = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("read back"),
            size: size + back,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: bytemuck::cast_slice(&[count as u32, mode, 0, 0]),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        fn bind(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry {
                binding,
                resource: buffer.as_entire_binding(),
            }
        }
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("closest"),
            layout: &self.layout,
            entries: &[
                bind(0, &self.nodes),
                bind(1, &self.packets),
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: wgpu::BindingResource::Buffer(ray_binding),
                },
                bind(3, &answer_buf),
                bind(4, &params),
            ],
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &group, &[]);
            pass.dispatch_workgroups((count as u32).div_ceil(WORKGROUP), 1, 1);
        }
        encoder.copy_buffer_to_buffer(&answer_buf, 0, &read_buf, 0, size);
        if let Source::Buffer { buffer, range } = &source {
            encoder.copy_buffer_to_buffer(
                buffer,
                range.start as u64 * RAY_BYTES,
                &read_buf,
                size,
                back,
            );
        }
        self.gpu.queue.submit(Some(encoder.finish()));
        Pending {
            read_buf,
            count,
            answers_size: size,
            rays: back != 0,
        }
    }
}

/// Bytes of a [`GpuRay`] and of a [`GpuHit`].
const RAY_BYTES: u64 = std::mem::size_of::<GpuRay>() as u64;
const HIT_BYTES: u64 = std::mem::size_of::<GpuHit>() as u64;

/// Refuses buffers too small for `count` rays or without the usages a batch in buffers
/// needs.
fn check_buffers(
    rays: &wgpu::Buffer,
    count: usize,
    hits: &wgpu::Buffer,
) -> Result<(), BufferError> {
    use wgpu::BufferUsages as U;
    for (buffer, name, needs, each) in [
        (rays, "rays", U::STORAGE | U::COPY_SRC, RAY_BYTES),
        (hits, "hits", U::COPY_DST, HIT_BYTES),
    ] {
        let missing = needs - buffer.usage();
        if !missing.is_empty() {
            return Err(BufferError::Usage {
                buffer: name,
                missing,
            });
        }
        let needed = (count as u64).saturating_mul(each);
        if buffer.size() < needed {
            return Err(BufferError::TooSmall {
                buffer: name,
                needed,
                size: buffer.size(),
            });
        }
    }
    Ok(())
}

/// A batch submitted: the buffer its answers (and a buffer's rays, after them) are copied
/// into.
struct Pending {
    read_buf: wgpu::Buffer,
    /// Rays in the batch.
    count: usize,
    /// Where the answers end (and the rays, if any, start).
    answers_size: u64,
    /// Whether the rays came back too.
    rays: bool,
}

impl Pending {
    /// The answers (and rays), once the buffer is mapped.
    fn take(self) -> Fetched {
        let view = self
            .read_buf
            .slice(..)
            .get_mapped_range()
            .expect("the mapped answers");
        let (answers, rays) = view.split_at(self.answers_size as usize);
        let answers: Vec<GpuAnswer> = bytemuck::cast_slice(answers)[..self.count].to_vec();
        // Read bytes: not necessarily aligned for `GpuRay`, so copied one by one.
        let rays = self.rays.then(|| {
            rays.chunks_exact(RAY_BYTES as usize)
                .map(|bytes| Ray::from(&bytemuck::pod_read_unaligned::<GpuRay>(bytes)))
                .collect()
        });
        drop(view);
        self.read_buf.unmap();
        Fetched { answers, rays }
    }
}

/// What a mapping's callback has said, and who waits for it.
#[derive(Default)]
struct MapState {
    result: Option<Result<(), wgpu::BufferAsyncError>>,
    waker: Option<Waker>,
}

/// A future that completes when the answers' buffer is mapped. wgpu runs a mapping's
/// callback from a poll of the device: in a browser its event loop does that; natively the
/// future polls the device itself (without blocking) each time it is polled, and asks to be
/// polled again until the callback has run, so that any executor drives it to the end (it
/// keeps that executor busy while the GPU works, as a frame loop that polls would).
struct Mapping {
    device: wgpu::Device,
    state: Arc<Mutex<MapState>>,
}

impl Future for Mapping {
    type Output = Result<(), wgpu::BufferAsyncError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // An error here (a lost device) also fails the mapping, which the callback reports.
        let _ = self.device.poll(wgpu::PollType::Poll);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(result) = state.result.take() {
            return Poll::Ready(result);
        }
        state.waker = Some(cx.waker().clone());
        drop(state);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
