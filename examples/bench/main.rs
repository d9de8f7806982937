//! Ray throughput and build time on a mesh: the numbers behind the README's speed claims.
//!
//! ```text
//! cargo run --release --example bench -- MESH [--rays FILE]... [--hits-out FILE]...
//!     [--any] [--threads N] [--json] [--watertight] [--passes N] [--width N] [--random N]
//!     [--subdivide K] [--write-rays DIR] [--bins N] [--max-leaf N] [--traversal-cost X] [--cost]
//! ```
//!
//! Without `--rays` it makes the three standard sets (see `rays.rs`): *primary* (a
//! 1024×1024 pinhole image), *random* (1M rays through the bounds, seed 1) and *secondary*
//! (a diffuse bounce from each primary hit, seed 2). `--rays` reads ray files instead (the
//! format of `../shared/DESIGN.md`); the k-th `--hits-out` receives the k-th set's hits, one
//! record per ray in input order. `--write-rays DIR` saves the sets it made as
//! `DIR/primary.rays` etc. `--subdivide K` splits every triangle into 4^K first (scaling runs). `--bins`,
//! `--max-leaf` and `--traversal-cost` set the [`BuildOptions`]; `--cost` adds the boxes and
//! triangles tested per ray (closest hit, from an extra untimed pass).
//!
//! Per set it prints rays, hits and Mrays/s (the median of `--passes`, default 3), after the
//! build time (median of 3 builds below 2M triangles) and the BVH's bytes per triangle;
//! `--json` prints the same as one JSON object per line. `--threads N` (default 1) shares the
//! rays among N threads in chunks of 256, and builds with N threads.

#[path = "../common/mod.rs"]
mod common;
#[path = "rays.rs"]
mod rays;
#[path = "subdivide.rs"]
mod subdivide;

use meshray::{BuildOptions, Bvh, LoadOptions, Mesh, QueryOptions, Ray};
use rayon::prelude::*;
use rays::{HitRecord, Kind, RaySet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

struct Args {
    mesh: PathBuf,
    ray_files: Vec<PathBuf>,
    hits_out: Vec<PathBuf>,
    any: bool,
    threads: usize,
    json: bool,
    watertight: bool,
    passes: usize,
    width: u32,
    random: usize,
    subdivide: u32,
    write_rays: Option<PathBuf>,
    build: BuildOptions,
    cost: bool,
}

const USAGE: &str = "usage: bench MESH [--rays FILE]... [--hits-out FILE]... [--any] \
    [--threads N] [--json] [--watertight] [--passes N] [--width N] [--random N] [--subdivide K] \
    [--write-rays DIR] [--bins N] [--max-leaf N] [--traversal-cost X] [--cost]";

fn number<T>(args: &mut impl Iterator<Item = String>, flag: &str, min: T) -> Result<T, String>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display,
{
    let word = args
        .next()
        .ok_or_else(|| format!("{flag} needs a number"))?;
    match word.parse::<T>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(format!("{flag}: {word:?} is not a number ≥ {min}")),
    }
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut parsed = Args {
        mesh: PathBuf::new(),
        ray_files: Vec::new(),
        hits_out: Vec::new(),
        any: false,
        threads: 1,
        json: false,
        watertight: false,
        passes: 3,
        width: 1024,
        random: 1_000_000,
        subdivide: 0,
        write_rays: None,
        build: BuildOptions::default(),
        cost: false,
    };
    let mut mesh = None;
    while let Some(arg) = args.next() {
        let mut path = |flag: &str| {
            args.next()
                .map(PathBuf::from)
                .ok_or_else(|| format!("{flag} needs a path"))
        };
        match arg.as_str() {
            "--rays" => parsed.ray_files.push(path("--rays")?),
            "--hits-out" => parsed.hits_out.push(path("--hits-out")?),
            "--write-rays" => parsed.write_rays = Some(path("--write-rays")?),
            "--any" => parsed.any = true,
            "--json" => parsed.json = true,
            "--watertight" => parsed.watertight = true,
            "--cost" => parsed.cost = true,
            "--threads" => parsed.threads = number(&mut args, "--threads", 1)?,
            "--passes" => parsed.passes = number(&mut args, "--passes", 1)?,
            "--width" => parsed.width = number(&mut args, "--width", 1)?,
            "--random" => parsed.random = number(&mut args, "--random", 1)?,
            "--subdivide" => parsed.subdivide = number(&mut args, "--subdivide", 0)?,
            "--bins" => parsed.build.bins = number(&mut args, "--bins", 2)?,
            "--max-leaf" => parsed.build.max_leaf_size = number(&mut args, "--max-leaf", 1)?,
            "--traversal-cost" => {
                parsed.build.traversal_cost = number(&mut args, "--traversal-cost", 0.0)?;
            }
            "-h" | "--help" => return Err(USAGE.into()),
            flag if flag.starts_with("--") => {
                return Err(format!("unknown option {flag} (try --help)"));
            }
            path if mesh.is_none() => mesh = Some(PathBuf::from(path)),
            extra => return Err(format!("unexpected argument {extra:?} (one mesh only)")),
        }
    }
    parsed.mesh = mesh.ok_or_else(|| USAGE.to_string())?;
    if parsed.subdivide > 6 {
        return Err("--subdivide: at most 6 (4096× the triangles)".into());
    }
    Ok(parsed)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Answers every ray into `out` (one record per ray) on the current rayon pool, with the
/// short queries (`closest_triangle`, `any_triangle`) that report what a hit file holds.
fn cast(bvh: &Bvh, rays: &[Ray], options: &QueryOptions, any: bool, out: &mut [HitRecord]) {
    let one = |ray: &Ray| {
        let hit = if any {
            bvh.any_triangle(ray, options)
        } else {
            bvh.closest_triangle(ray, options)
        };
        hit.map_or(HitRecord::MISS, |h| HitRecord {
            t: h.t,
            triangle: h.triangle,
        })
    };
    if rayon::current_num_threads() == 1 {
        for (slot, ray) in out.iter_mut().zip(rays) {
            *slot = one(ray);
        }
    } else {
        out.par_chunks_mut(256)
            .zip(rays.par_chunks(256))
            .for_each(|(slots, rays)| {
                for (slot, ray) in slots.iter_mut().zip(rays) {
                    *slot = one(ray);
                }
            });
    }
}

fn run(args: &Args) -> Result<(), String> {
    let session = Instant::now();
    let started = Instant::now();
    // Progress on stderr, shown only on a terminal (indicatif hides itself otherwise).
    let bar = indicatif::ProgressBar::new(0).with_style(
        indicatif::ProgressStyle::with_template(
            "loading {msg} {bar:40} {bytes}/{total_bytes} {elapsed}",
        )
        .expect("a valid template"),
    );
    bar.set_message(args.mesh.display().to_string());
    let mut mesh =
        Mesh::load_with_progress(&args.mesh, None, &LoadOptions::default(), &|done, total| {
            bar.set_length(total);
            bar.set_position(done);
        })
        .map_err(|e| e.to_string())?;
    bar.finish_and_clear();
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    if args.subdivide > 0 {
        mesh = subdivide::subdivide(&mesh, args.subdivide);
    }
    let triangles = mesh.triangle_count();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads)
        .build()
        .map_err(|e| e.to_string())?;
    let builds = if triangles < 2_000_000 { 3 } else { 1 };
    let mut build_ms = Vec::new();
    let mut bvh = None;
    for _ in 0..builds {
        let mesh = mesh.clone();
        let started = Instant::now();
        let bar = indicatif::ProgressBar::new(mesh.triangle_count() as u64).with_style(
            indicatif::ProgressStyle::with_template(
                "building {bar:40} {pos}/{len} triangles {elapsed}",
            )
            .expect("a valid template"),
        );
        let built = pool.install(|| {
            Bvh::build_with_progress(mesh, &args.build, &|done, _| bar.set_position(done as u64))
        });
        bar.finish_and_clear();
        build_ms.push(started.elapsed().as_secs_f64() * 1e3);
        bvh = Some(built);
    }
    let bvh = bvh.expect("at least one build");
    let build_ms = median(build_ms);
    let stats = bvh.stats();

    let sets: Vec<RaySet> = if args.ray_files.is_empty() {
        let primary = rays::primary(&mesh, args.width);
        let random = rays::random(&mesh, args.random, 1);
        let secondary = rays::secondary(&bvh, &primary, 2);
        vec![primary, random, secondary]
    } else {
        args.ray_files
            .iter()
            .map(|p| RaySet::read(p).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?
    };
    if !args.hits_out.is_empty() && args.hits_out.len() != sets.len() {
        return Err(format!(
            "{} --hits-out files for {} ray sets: give one per set",
            args.hits_out.len(),
            sets.len()
        ));
    }
    if let Some(dir) = &args.write_rays {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for set in &sets {
            set.write(&dir.join(format!("{}.rays", set.kind.name())))
                .map_err(|e| e.to_string())?;
        }
    }

    let mesh_name = args.mesh.display().to_string();
    let query = if args.any { "any" } else { "closest" };
    if !args.json {
        println!(
            "{mesh_name}: {triangles} triangles (loaded in {load_ms:.0} ms{}); build {build_ms:.1} ms; {stats}",
            if args.subdivide > 0 {
                format!(", subdivided {}×", args.subdivide)
            } else {
                String::new()
            }
        );
        println!(
            "{query} hit, {} thread(s), {}, median of {} passes",
            args.threads,
            if args.watertight {
                "watertight"
            } else {
                "Cramer"
            },
            args.passes
        );
    }
    let options = QueryOptions {
        watertight: args.watertight,
        ..Default::default()
    };
    for (k, set) in sets.iter().enumerate() {
        let mut records = vec![HitRecord::MISS; set.rays.len()];
        let mut rates = Vec::new();
        for _ in 0..args.passes {
            let started = Instant::now();
            pool.install(|| cast(&bvh, &set.rays, &options, args.any, &mut records));
            rates.push(set.rays.len() as f64 / started.elapsed().as_secs_f64() / 1e6);
        }
        let hits = records.iter().filter(|r| r.is_hit()).count();
        let rate = median(rates.clone());
        if let Some(path) = args.hits_out.get(k) {
            std::fs::write(path, rays::hits_to_bytes(&records))
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        // What the walk did per ray (boxes and triangles tested), from an untimed pass.
        let cost = args.cost.then(|| {
            let (mut boxes, mut tris) = (0u64, 0u64);
            for ray in &set.rays {
                let (_, c) = bvh.closest_hit_with_cost(ray, &options);
                boxes += u64::from(c.boxes);
                tris += u64::from(c.triangles);
            }
            let n = set.rays.len().max(1) as f64;
            (boxes as f64 / n, tris as f64 / n)
        });
        let name = match set.kind {
            Kind::Primary if set.width > 0 => format!("primary {0}×{0}", set.width),
            kind => kind.name().to_string(),
        };
        if args.json {
            let passes: Vec<String> = rates.iter().map(|r| format!("{r:.4}")).collect();
            println!(
                "{{\"mesh\":{},\"triangles\":{triangles},\"set\":\"{}\",\"query\":\"{query}\",\"threads\":{},\"watertight\":{},\"rays\":{},\"hits\":{hits},\"mrays_per_s\":{rate:.4},\"passes\":[{}],\"build_ms\":{build_ms:.2},\"bytes_per_triangle\":{:.2},\"sah_cost\":{:.3}{}}}",
                common::json_string(&mesh_name),
                set.kind.name(),
                args.threads,
                args.watertight,
                set.rays.len(),
                passes.join(","),
                stats.bytes_per_triangle,
                stats.sah_cost,
                cost.map_or(String::new(), |(b, t)| format!(
                    ",\"boxes_per_ray\":{b:.2},\"triangles_per_ray\":{t:.2}"
                )),
            );
        } else {
            println!(
                "  {name:>17}: {:>9} rays, {hits:>9} hits, {rate:7.2} Mrays/s{}",
                set.rays.len(),
                cost.map_or(String::new(), |(b, t)| format!(
                    "; per ray {b:.1} boxes, {t:.1} triangles tested"
                ))
            );
        }
    }
    if !args.json {
        println!(
            "total {:.1} s (load {load_ms:.0} ms, {builds} build(s) of {build_ms:.0} ms, rays and queries the rest)",
            session.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    match parse_args().and_then(|args| run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("bench: {message}");
            ExitCode::FAILURE
        }
    }
}
