//! The GPU's speed beside the CPU's, on one mesh: `cargo run --release -p meshray-gpu
//! --example speed -- MESH [SIDE] [RANDOM]`. Casts SIDE × SIDE primary rays (a camera looking
//! at the mesh, as the benches' primary set) and RANDOM random rays (from a sphere around the
//! mesh into its bounds), each set through `GpuBvh::closest_hits` and through the CPU's
//! `cast_rays` on every core, and prints for each: the GPU's rays per second (its narrowing
//! alone, then with the CPU's finish), the CPU's, the ratio, how many rays were flagged, and
//! how many answers differ (none should); then the same for any hits (`GpuBvh::any_hits`
//! beside the CPU's any hit: whether each ray hits must agree). Defaults: SIDE 1024, RANDOM 1,000,000. The upload
//! is timed once. gpu/device-check.sh runs it on a machine with a GPU.

use meshray::prelude::*;
use meshray::{Bvh, Mesh, QueryOptions, Ray, RayQuery};
use meshray_gpu::{Gpu, GpuBvh};
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
}

fn sub(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f32; 3], b: [f32; 3]) -> [f32; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn normalize(a: [f32; 3]) -> [f32; 3] {
    let n = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
    a.map(|x| x / n)
}

/// The mesh's bounds' centre, half its diagonal, and its corners.
fn frame(mesh: &Mesh) -> ([f32; 3], f32, [f32; 3], [f32; 3]) {
    let b = mesh.bounds();
    let (lo, hi) = ([b.min.x, b.min.y, b.min.z], [b.max.x, b.max.y, b.max.z]);
    let centre = [0, 1, 2].map(|a| 0.5 * (lo[a] + hi[a]));
    let d = sub(hi, lo);
    let half = (0.5 * (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()).max(1e-6);
    (centre, half, lo, hi)
}

/// `side × side` rays through pixel centres of a camera at the centre plus 2.2 half
/// diagonals along (0.45, 0.35, 1), looking at the centre, 45° vertical field of view.
fn primary(mesh: &Mesh, side: usize) -> Vec<Ray> {
    let (c, h, ..) = frame(mesh);
    let back = normalize([0.45, 0.35, 1.0]);
    let eye = [0, 1, 2].map(|a| c[a] + back[a] * 2.2 * h);
    let forward = normalize(sub(c, eye));
    let right = normalize(cross(forward, [0.0, 1.0, 0.0]));
    let up = cross(right, forward);
    let tan = (22.5f32).to_radians().tan();
    let mut rays = Vec::with_capacity(side * side);
    for j in 0..side {
        for i in 0..side {
            let x = (2.0 * (i as f32 + 0.5) / side as f32 - 1.0) * tan;
            let y = (1.0 - 2.0 * (j as f32 + 0.5) / side as f32) * tan;
            let d = [0, 1, 2].map(|a| forward[a] + x * right[a] + y * up[a]);
            rays.push(Ray::new(eye, d));
        }
    }
    rays
}

/// Rays from uniform points on the sphere of 1.5 half diagonals about the centre to
/// uniform points in the bounds.
fn random(mesh: &Mesh, n: usize) -> Vec<Ray> {
    let (c, h, lo, hi) = frame(mesh);
    let mut rng = Rng(7);
    (0..n)
        .map(|_| {
            let z = 2.0 * rng.unit() - 1.0;
            let phi = std::f32::consts::TAU * rng.unit();
            let r = (1.0 - z * z).max(0.0).sqrt();
            let on = [r * phi.cos(), r * phi.sin(), z];
            let origin = [0, 1, 2].map(|a| c[a] + on[a] * 1.5 * h);
            let target = [0, 1, 2].map(|a| lo[a] + (hi[a] - lo[a]) * rng.unit());
            Ray::new(origin, sub(target, origin))
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "--help" || a == "-h") {
        println!(
            "usage: speed MESH [SIDE] [RANDOM]  (primary rays SIDE x SIDE, default 1024; random rays, default 1000000)"
        );
        return;
    }
    let number = |i: usize, default: usize| {
        args.get(i).map_or(default, |s| {
            s.parse().unwrap_or_else(|_| {
                eprintln!("not a number: {s}");
                std::process::exit(2)
            })
        })
    };
    let (side, count) = (number(1, 1024), number(2, 1_000_000));
    let mesh = Mesh::load(&args[0]).unwrap_or_else(|e| {
        eprintln!("{}: {e}", args[0]);
        std::process::exit(1)
    });
    let Some(gpu) = Gpu::new() else {
        eprintln!("no Vulkan adapter");
        std::process::exit(1)
    };
    let info = gpu.adapter.get_info();
    println!(
        "adapter: {} ({:?}, {:?}, driver {} {})",
        info.name, info.device_type, info.backend, info.driver, info.driver_info
    );
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let start = Instant::now();
    let bvh = std::sync::Arc::new(Bvh::build(mesh));
    let build = start.elapsed();
    let start = Instant::now();
    let device_bvh = GpuBvh::new(&gpu, bvh.clone());
    println!(
        "{}: {} triangles; build {:.1} ms, upload and kernel compile {:.1} ms; CPU: {threads} threads",
        args[0],
        bvh.mesh().triangle_count(),
        build.as_secs_f64() * 1e3,
        start.elapsed().as_secs_f64() * 1e3
    );
    let options = QueryOptions::default();
    for (name, rays) in [
        ("primary", primary(bvh.mesh(), side)),
        ("random", random(bvh.mesh(), count)),
    ] {
        // Once to warm up (pipelines, allocations), then timed.
        device_bvh.closest_hits(&rays[..rays.len().min(1 << 16)]);
        let start = Instant::now();
        let (gpu_hits, stats) = device_bvh.closest_hits(&rays);
        let total = start.elapsed().as_secs_f64();
        let mut cpu_hits = Vec::new();
        bvh.cast_rays(&rays, RayQuery::Closest, &options, &mut cpu_hits);
        let start = Instant::now();
        bvh.cast_rays(&rays, RayQuery::Closest, &options, &mut cpu_hits);
        let cpu = start.elapsed().as_secs_f64();
        let differ = gpu_hits
            .iter()
            .zip(&cpu_hits)
            .filter(|(g, c)| g != c)
            .count();
        let n = rays.len() as f64;
        let rate = |seconds: f64| n / seconds / 1e6;
        println!(
            "{name}: {} rays; GPU narrowing {:.3} M rays/s, with the CPU's finish {:.3} M rays/s; \
             CPU cast_rays {:.3} M rays/s; GPU/CPU {:.3}; flagged {} ({:.4} %), several \
             candidates {}; differ {differ}",
            rays.len(),
            rate(stats.gpu.as_secs_f64()),
            rate(total),
            rate(cpu),
            cpu / total,
            stats.flagged,
            100.0 * stats.flagged as f64 / n,
            stats.several,
        );
        // Any hits (occlusion): the same rays, the CPU's any hit beside.
        let start = Instant::now();
        let (gpu_any, any_stats) = device_bvh.any_hits(&rays);
        let total = start.elapsed().as_secs_f64();
        let start = Instant::now();
        bvh.cast_rays(&rays, RayQuery::Any, &options, &mut cpu_hits);
        let cpu = start.elapsed().as_secs_f64();
        let differ = gpu_any
            .iter()
            .zip(&cpu_hits)
            .filter(|(g, c)| g.is_some() != c.is_some())
            .count();
        println!(
            "{name}, any hit: GPU narrowing {:.3} M rays/s, with the CPU's finish {:.3} M \
             rays/s; CPU cast_rays {:.3} M rays/s; GPU/CPU {:.3}; flagged {}; hit or not \
             differ {differ}",
            rate(any_stats.gpu.as_secs_f64()),
            rate(total),
            rate(cpu),
            cpu / total,
            any_stats.flagged,
        );
    }
}
