//! `meshray scaling`: how build time, memory and query speed grow with the triangle count
//! (the scaling table of docs/benchmarks.md).

use crate::args::{Args, QUALITIES, quality_name, set_mesh, unknown};
use crate::{Failure, memory, mesh, rays, subdivide};
use meshray::prelude::*;
use meshray::tree::BuildQuality;
use meshray::{BuildOptions, Bvh, QueryOptions, Ray, RayQuery};
use std::time::Instant;

/// `meshray scaling --help`.
pub const USAGE: &str = "\
usage: meshray scaling [MESH] [--max-triangles N] [--rays N] [--quality Q]

Subdivides the mesh (default: the repository's assets/scene.obj, 2,090 triangles) 4× per
level, the same surface each time, so every level answers the same rays: random rays
through the bounds and a 512×512 primary image, made once. Per level and build quality it
prints, as a Markdown table: build ms on one thread and on all threads, the build's peak
heap memory beyond the mesh and the structure it keeps (bytes per triangle), the
structure's bytes per triangle, closest-hit Mrays/s on one thread (median of 3) and the
boxes and triangles tested per random ray.

  --max-triangles N    stop before the level that would pass N triangles, at most
                       100000000 (default 10000000)
  --rays N             random rays (default 100000)
  --quality Q          the build quality: fast, default, high, or all (default: all)
";

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
                    .filter(|r| bvh.cast_ray(r, RayQuery::Closest, &options).is_some())
                    .count();
                std::hint::black_box(hits);
                rays.len() as f64 / started.elapsed().as_secs_f64() / 1e6
            })
            .collect(),
    )
}

/// Runs `meshray scaling` on the words after its name.
///
/// # Errors
/// A usage error for a bad command line, a failure for a mesh that does not load.
pub fn run(words: Vec<String>) -> Result<(), Failure> {
    let mut args = Args::new(words);
    let mut mesh_path = mesh::default_mesh();
    let mut mesh_given = false;
    let (mut max_triangles, mut ray_count) = (10_000_000usize, 100_000usize);
    let all: Vec<BuildQuality> = QUALITIES.iter().map(|&(_, q)| q).collect();
    let mut qualities = all.clone();
    while let Some(arg) = args.next_word() {
        match arg.as_str() {
            "--max-triangles" => max_triangles = args.whole(&arg, 1..=100_000_000)?,
            "--rays" => ray_count = args.whole(&arg, 1..=100_000_000)?,
            "--quality" => {
                let choices: Vec<(&str, Option<BuildQuality>)> = QUALITIES
                    .iter()
                    .map(|&(name, q)| (name, Some(q)))
                    .chain([("all", None)])
                    .collect();
                qualities = match args.choice(&arg, &choices)? {
                    Some(q) => vec![q],
                    None => all.clone(),
                };
            }
            flag if flag.starts_with('-') => return Err(unknown(flag)),
            path => set_mesh(&mut mesh_path, &mut mesh_given, path, "scaling")?,
        }
    }
    let base = mesh::load(&mesh_path)?;
    let random = rays::random(&base, ray_count, 1).rays;
    let primary = rays::primary(&base, 512).rays;
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .map_err(|e| Failure::failed(format!("cannot start a thread: {e}")))?;
    let threads = rayon::current_num_threads();
    crate::say!(
        "{}, subdivided; {} random rays, 512×512 primary; closest hit, one thread; {threads} threads for the parallel build\n",
        mesh_path.display(),
        random.len(),
    );
    crate::say!(
        "| triangles | quality | build ms, 1 thread | build ms, {threads} threads | peak build bytes/triangle | bytes/triangle | primary Mrays/s | random Mrays/s | boxes/ray (random) | triangles/ray (random) |"
    );
    crate::say!("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for level in 0..16 {
        if base.triangle_count().saturating_mul(1 << (2 * level)) > max_triangles {
            break;
        }
        let mesh = subdivide::subdivide(&base, level);
        for &quality in &qualities {
            let options = BuildOptions {
                quality,
                ..Default::default()
            };
            let copy = mesh.clone();
            let started = Instant::now();
            let (bvh, peak) =
                memory::peak_of(|| one_thread.install(|| Bvh::build_with(copy, &options)));
            let serial_ms = started.elapsed().as_secs_f64() * 1e3;
            drop(bvh);
            let copy = mesh.clone();
            let started = Instant::now();
            let bvh = Bvh::build_with(copy, &options);
            let parallel_ms = started.elapsed().as_secs_f64() * 1e3;
            let stats = bvh.stats();
            let n = stats.triangles as f64;
            let structure = f64::from(stats.bytes_per_triangle) * n;
            let peak = (peak as f64 - structure).max(0.0) / n;
            let (mut boxes, mut tris) = (0u64, 0u64);
            for ray in &random {
                let (_, cost) = meshray::diagnostics::closest_hit_with_cost(
                    &bvh,
                    ray,
                    &QueryOptions::default(),
                );
                boxes += u64::from(cost.boxes);
                tris += u64::from(cost.triangles);
            }
            let rays = random.len() as f64;
            crate::say!(
                "| {} | {} | {serial_ms:.1} | {parallel_ms:.1} | {peak:.1} | {:.1} | {:.2} | {:.2} | {:.1} | {:.1} |",
                stats.triangles,
                quality_name(quality),
                stats.bytes_per_triangle,
                rate(&bvh, &primary),
                rate(&bvh, &random),
                boxes as f64 / rays,
                tris as f64 / rays
            );
        }
    }
    Ok(())
}
