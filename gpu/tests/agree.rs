//! Every GPU answer equals `Bvh::cast_ray`'s, bit for bit, on random rays; prints how many
//! rays the GPU flagged (the CPU cast them again). Skips, saying so, without an adapter.

use meshray::prelude::*;
use meshray::{Bvh, CompactHit, Mesh, QueryOptions, Ray, RayQuery};
use meshray_gpu::{Gpu, GpuBvh};
use std::path::Path;
use std::time::Instant;

/// SplitMix64, seeded: the same rays on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The kinds of rays [`rays`] makes, in turn.
const KINDS: usize = 6;
const KIND_NAMES: [&str; KINDS] = [
    "random",
    "at a point",
    "at a corner or midpoint",
    "short range",
    "along axes",
    "from a surface",
];

/// Random rays of six kinds: through the box in random directions; aimed at random
/// points of random triangles; aimed exactly at corners and edge midpoints (ties between
/// neighbours); short or late-starting ranges; along an axis or two (zero direction
/// components); from points on triangles (secondary rays, `t_min` 0 or 1e-4).
fn rays(mesh: &Mesh, count: usize, seed: u64) -> Vec<Ray> {
    let mut rng = Rng(seed);
    let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    for i in 0..mesh.triangle_count() {
        for p in mesh.triangle(i) {
            for a in 0..3 {
                lo[a] = lo[a].min(p[a]);
                hi[a] = hi[a].max(p[a]);
            }
        }
    }
    let size = (0..3).map(|a| hi[a] - lo[a]).fold(0.0f32, f32::max);
    let point =
        |rng: &mut Rng| [0, 1, 2].map(|a| rng.range(lo[a] - 0.5 * size, hi[a] + 0.5 * size));
    let mut out = Vec::with_capacity(count);
    for k in 0..count {
        let origin = point(&mut rng);
        let ray = match k % KINDS {
            0 => {
                let d = [0; 3].map(|_| rng.range(-1.0, 1.0));
                Ray::new(origin, d)
            }
            1 | 2 => {
                let [a, b, c] = mesh.triangle(rng.below(mesh.triangle_count()));
                let target = if k % KINDS == 1 {
                    let (mut u, mut v) = (rng.unit(), rng.unit());
                    if u + v > 1.0 {
                        (u, v) = (1.0 - u, 1.0 - v);
                    }
                    a.coords * (1.0 - u - v) + b.coords * u + c.coords * v
                } else {
                    match rng.below(4) {
                        0 => a.coords,
                        1 => (a.coords + b.coords) * 0.5,
                        2 => (b.coords + c.coords) * 0.5,
                        _ => c.coords,
                    }
                };
                let d = [0, 1, 2].map(|a| target[a] - origin[a]);
                Ray::new(origin, d)
            }
            3 => {
                let d = [0; 3].map(|_| rng.range(-1.0, 1.0));
                let t0 = rng.range(0.0, 0.5);
                Ray::with_range(origin, d, t0, t0 + rng.range(0.0, 2.0))
            }
            4 => {
                // Along an axis or a diagonal of two axes: zero direction components (the
                // kernel's slab test takes another path there), some of them -0.
                let mut d = [0.0f32; 3];
                let axis = rng.below(3);
                d[axis] = if rng.unit() < 0.5 { -1.0 } else { 1.0 };
                if rng.unit() < 0.5 {
                    d[(axis + 1) % 3] = rng.range(-1.0, 1.0);
                }
                if rng.unit() < 0.3 {
                    d[(axis + 2) % 3] = -0.0;
                }
                Ray::new(origin, d)
            }
            _ => {
                // From a point of a triangle, as a secondary ray leaves a surface: the
                // triangle itself, and its neighbours, at t within rounding of 0.
                let [a, b, c] = mesh.triangle(rng.below(mesh.triangle_count()));
                let (u, v) = (rng.unit() * 0.5, rng.unit() * 0.5);
                let from = a.coords * (1.0 - u - v) + b.coords * u + c.coords * v;
                let d = [0; 3].map(|_| rng.range(-1.0, 1.0));
                let t_min = if rng.unit() < 0.5 { 0.0 } else { 1e-4 };
                Ray::with_range([from.x, from.y, from.z], d, t_min, f32::INFINITY)
            }
        };
        out.push(ray);
    }
    out
}

fn bits(h: &Option<CompactHit>) -> Option<(u32, u32, u32, u32)> {
    h.map(|h| (h.t.to_bits(), h.triangle, h.u.to_bits(), h.v.to_bits()))
}

fn check(gpu: &Gpu, path: &Path, count: usize) {
    let mesh = Mesh::load(path).expect("the mesh loads");
    let start = Instant::now();
    let bvh = Bvh::build(mesh);
    let build = start.elapsed();
    let start = Instant::now();
    let device_bvh = GpuBvh::new(gpu, &bvh);
    let upload = start.elapsed();
    let rays = rays(bvh.mesh(), count, 42);
    let (gpu_hits, stats) = device_bvh.closest_hits(&rays);
    // Again: the first batch pays for compiling the kernel on first use.
    let (again, stats2) = device_bvh.closest_hits(&rays);
    assert!(gpu_hits.iter().zip(&again).all(|(a, b)| bits(a) == bits(b)));
    let start = Instant::now();
    let cpu_hits: Vec<_> = rays
        .iter()
        .map(|r| bvh.cast_ray(r, RayQuery::Closest, &QueryOptions::default()))
        .collect();
    let cpu_time = start.elapsed();
    let mut wrong = 0;
    for (i, (g, c)) in gpu_hits.iter().zip(&cpu_hits).enumerate() {
        if bits(g) != bits(c) {
            if wrong < 10 {
                eprintln!("ray {i} {:?}: gpu {g:?} cpu {c:?}", rays[i]);
            }
            wrong += 1;
        }
    }
    let hits = cpu_hits.iter().filter(|h| h.is_some()).count();
    println!(
        "{}: {} triangles, build {:.1?}, upload+compile {:.1?}; {} rays ({} hit): flagged {} \
         ({:.3} %; near {}, overflow {}), refused {}, {:.1} nodes/ray; gpu {:.1?} \
         ({:.2} Mrays/s), again {:.1?} ({:.2} Mrays/s); finish {:.1?}; cpu cast_ray alone \
         {:.1?} (one thread); wrong {}",
        path.file_name().unwrap().to_string_lossy(),
        bvh.mesh().triangle_count(),
        build,
        upload,
        stats.rays,
        hits,
        stats.flagged,
        100.0 * stats.flagged as f64 / stats.rays as f64,
        stats.near,
        stats.overflow,
        stats.refused,
        stats.visits as f64 / stats.rays as f64,
        stats.gpu,
        stats.rays as f64 / stats.gpu.as_secs_f64() / 1e6,
        stats2.gpu,
        stats2.rays as f64 / stats2.gpu.as_secs_f64() / 1e6,
        stats.finish,
        cpu_time,
        wrong,
    );
    let flags = device_bvh.flags(&rays);
    for (kind, name) in KIND_NAMES.iter().enumerate() {
        let n = flags
            .iter()
            .skip(kind)
            .step_by(KINDS)
            .filter(|&&f| f != 0)
            .count();
        let why = |bit: u32| {
            flags
                .iter()
                .skip(kind)
                .step_by(KINDS)
                .filter(|&&f| f & bit != 0)
                .count()
        };
        println!(
            "  flagged {n} of {} rays {name} (a close certain hit {}, an edge {}, a plane {}, \
             overflow {})",
            (rays.len() + KINDS - 1 - kind) / KINDS,
            why(8),
            why(16),
            why(32),
            why(2)
        );
    }
    if std::env::var_os("MESHRAY_GPU_DEBUG").is_some() {
        let mut all = Vec::new();
        for (i, f) in flags
            .iter()
            .enumerate()
            .filter(|(i, f)| i % KINDS == 1 && **f & 8 != 0)
            .take(5)
        {
            bvh.all_triangles(&rays[i], &QueryOptions::default(), &mut all);
            println!("  ray {i} flags {f}: {:?}", &all[..all.len().min(3)]);
        }
    }
    assert_eq!(wrong, 0, "GPU answers differ from cast_ray's");
}

fn count() -> usize {
    std::env::var("MESHRAY_GPU_RAYS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000)
}

#[test]
fn adapter_info() {
    match Gpu::new() {
        Some(gpu) => println!("adapter: {:?}", gpu.adapter.get_info()),
        None => println!("skipped: no Vulkan adapter"),
    }
}

#[test]
fn scene_matches_cast_ray() {
    let Some(gpu) = Gpu::new() else {
        println!("skipped: no Vulkan adapter");
        return;
    };
    check(
        &gpu,
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/scene.obj"),
        count(),
    );
}

#[test]
fn bunny_matches_cast_ray() {
    let Some(gpu) = Gpu::new() else {
        println!("skipped: no Vulkan adapter");
        return;
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/meshes/stanford-bunny/stanford-bunny.obj");
    let path = if path.exists() {
        path
    } else {
        Path::new("/work/shared/meshes/stanford-bunny/stanford-bunny.obj").to_path_buf()
    };
    if !path.exists() {
        println!("skipped: no {}", path.display());
        return;
    }
    check(&gpu, &path, count());
}
