//! The device's half: a headless `Gpu`, a tree uploaded to it, and batches run there.

use crate::narrow::{
    BatchStats, CHUNK, Finish, Finisher, GpuAnswer, GpuHit, GpuRay, HIT_BYTES, KERNEL, MODE_ANY,
    MODE_CLOSEST, RAY_BYTES, WORKGROUP,
};
use meshray::tree::RawTree;
use meshray::{Bvh, CompactHit, Ray};
use nalgebra::Point3;
use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};
use std::time::Instant;
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

/// A [`Bvh`] uploaded to a device, ready to cast rays. It holds the tree (shared, an
/// [`Arc`]): the CPU finishes each batch on it, and [`refit`](GpuBvh::refit) moves its
/// vertices and the device's copy together.
pub struct GpuBvh<'g> {
    bvh: Arc<Bvh>,
    gpu: &'g Gpu,
    nodes: wgpu::Buffer,
    packets: wgpu::Buffer,
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
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
            source: wgpu::ShaderSource::Wgsl(KERNEL.into()),
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
        drop(raw);
        GpuBvh {
            bvh,
            gpu,
            nodes,
            packets,
            layout,
            pipeline,
        }
    }

    /// The CPU's finish on this tree.
    fn finisher(&self) -> Finisher<'_> {
        Finisher::new(&self.bvh)
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
            self.finisher().closest(ray, answer, finish, stats)
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
            self.finisher().any(ray, answer, stats)
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
            self.finisher().closest(ray, answer, Finish::CastRay, stats)
        })
        .await
    }

    /// [`any_hits`](Self::any_hits) without blocking, as
    /// [`closest_hits_async`](Self::closest_hits_async).
    pub async fn any_hits_async(&self, rays: &[Ray]) -> (Vec<Option<CompactHit>>, BatchStats) {
        let fetch = |range| self.run_async(Source::Slice(&rays[range]), MODE_ANY);
        self.batch(rays.len(), rays, fetch, |ray, answer, stats| {
            self.finisher().any(ray, answer, stats)
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
        let finish = |ray: &Ray, answer: &GpuAnswer, stats: &mut BatchStats| {
            self.finisher().answer(ray, answer, mode, stats)
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
        let gpu_rays: Vec<GpuRay> = rays.iter().map(GpuRay::for_kernel).collect();
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
