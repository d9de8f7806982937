//! How build time, memory and query speed grow with the triangle count: the README's
//! scaling table.
//!
//! ```text
//! cargo run --release --example scaling -- [MESH.obj] [--max-triangles N] [--rays N]
//! ```
//!
//! Takes the mesh (default `assets/scene.obj`, 2,090 triangles) and subdivides it 4× per
//! level (same surface, see `bench/subdivide.rs`) up to `--max-triangles` (default 10M), so
//! every level answers the same rays: 100,000 random rays (`--rays`) and a 512×512 primary
//! image, made once from the bounds. Per level: build ms on one thread and on all threads
//! (rayon's pool), bytes per triangle, closest-hit Mrays/s on one thread (median of 3), and
//! the boxes and triangles tested per random ray. Prints a Markdown table.

#[path = "bench/rays.rs"]
mod rays;
#[path = "bench/subdivide.rs"]
mod subdivide;

use meshray::{Bvh, Mesh, QueryOptions, Ray};
use std::process::ExitCode;
use std::time::Instant;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Closest-hit Mrays/s on the calling thread, median of 3 passes.
fn rate(bvh: &Bvh, rays: &[Ray]) -> f64 {
    let options = QueryOptions::default();
    median(
        (0..3)
            .map(|_| {
                let started = Instant::now();
                let hits = rays
                    .iter()
                    .filter(|r| bvh.closest_triangle(r, &options).is_some())
                    .count();
                std::hint::black_box(hits);
                rays.len() as f64 / started.elapsed().as_secs_f64() / 1e6
            })
            .collect(),
    )
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let mut mesh_path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj").to_string();
    let (mut max_triangles, mut ray_count) = (10_000_000usize, 100_000usize);
    while let Some(arg) = args.next() {
        let mut number = |flag: &str| {
            args.next()
                .and_then(|w| w.parse::<usize>().ok())
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("{flag} needs a positive whole number"))
        };
        match arg.as_str() {
            "--max-triangles" => max_triangles = number("--max-triangles")?,
            "--rays" => ray_count = number("--rays")?,
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            path => mesh_path = path.to_string(),
        }
    }
    let base = Mesh::load_obj(&mesh_path).map_err(|e| e.to_string())?;
    let random = rays::random(&base, ray_count, 1).rays;
    let primary = rays::primary(&base, 512).rays;
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| e.to_string())?;
    println!(
        "{mesh_path}, subdivided; {} random rays, 512×512 primary; closest hit, one thread; {} threads for the parallel build\n",
        random.len(),
        rayon::current_num_threads()
    );
    println!(
        "| triangles | build ms, 1 thread | build ms, {} threads | bytes/triangle | primary Mrays/s | random Mrays/s | boxes/ray (random) | triangles/ray (random) |",
        rayon::current_num_threads()
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for level in 0.. {
        if base.triangle_count() << (2 * level) > max_triangles {
            break;
        }
        let mesh = subdivide::subdivide(&base, level);
        let started = Instant::now();
        let bvh = one_thread.install(|| Bvh::build(mesh.clone()));
        let serial_ms = started.elapsed().as_secs_f64() * 1e3;
        drop(bvh);
        let started = Instant::now();
        let bvh = Bvh::build(mesh);
        let parallel_ms = started.elapsed().as_secs_f64() * 1e3;
        let (mut boxes, mut tris) = (0u64, 0u64);
        for ray in &random {
            let (_, cost) = bvh.closest_hit_with_cost(ray, &QueryOptions::default());
            boxes += u64::from(cost.boxes);
            tris += u64::from(cost.triangles);
        }
        let n = random.len() as f64;
        println!(
            "| {} | {serial_ms:.1} | {parallel_ms:.1} | {:.1} | {:.2} | {:.2} | {:.1} | {:.1} |",
            bvh.stats().triangles,
            bvh.stats().bytes_per_triangle,
            rate(&bvh, &primary),
            rate(&bvh, &random),
            boxes as f64 / n,
            tris as f64 / n
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("scaling: {message}");
            ExitCode::FAILURE
        }
    }
}
