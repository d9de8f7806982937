//! `meshray bench`: ray throughput and build time on a mesh, the numbers behind
//! docs/benchmarks.md and the speed claims that link to it.

use crate::args::{Args, QUALITIES, set_mesh, unknown};
use crate::progress::Progress;
use crate::rays::{self, HitRecord, Kind, RaySet};
use crate::{Failure, json, mesh, subdivide};
use meshray::prelude::*;
use meshray::{BuildOptions, Bvh, CompactHit, LoadOptions, QueryOptions, Ray, RayQuery};
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

/// `meshray bench --help`.
pub const USAGE: &str = "\
usage: meshray bench [MESH] [--rays FILE]... [--hits-out FILE]... [--any] [--threads N]
                     [--json] [--cramer] [--passes N] [--width N] [--random N]
                     [--subdivide K] [--write-rays DIR] [--quality fast|default|high]
                     [--bins N] [--max-leaf N] [--traversal-cost X] [--cost] [--batch]
                     [--details] [--gpu]

Builds the BVH of MESH (default: the repository's assets/scene.obj) and times queries.
Without --rays it makes the three standard sets: primary (a 1024×1024 pinhole image),
random (1M rays through the bounds, seed 1) and secondary (a diffuse bounce from each
primary hit, seed 2). Per set it prints rays, hits and Mrays/s (the median of the passes),
after the build time (median of 3 builds below 2M triangles) and bytes per triangle. Ray
and hit files use the format of ../shared/DESIGN.md (BVHRAYS1). A progress line shows the
load and build of big meshes on a terminal.

  --rays FILE          a ray file instead of the standard sets; repeat for more
  --hits-out FILE      the k-th receives the k-th set's hits, one record per ray in order
  --any                any hit instead of closest hit
  --threads N          share the rays among N threads in chunks of 256, and build with N
                       (default 1)
  --json               one JSON object per set and line instead of the text
  --cramer             plain Cramer's rule instead of the watertight triangle test (the
                       default)
  --passes N           timed passes per set (default 3)
  --width N            the primary image's side, at most 4096 (default 1024)
  --random N           random rays, at most 16777216 (default 1000000)
  --subdivide K        split every triangle into 4^K first, K at most 6 and the result at
                       most 100000000 triangles
  --write-rays DIR     save the sets made as DIR/primary.rays, DIR/random.rays, ...
  --quality Q          build quality: fast (a linear BVH, for per-frame rebuilds),
                       default (the binned SAH) or high (SAH and reinsertion)
  --bins N             build option: SAH bins (at least 2)
  --max-leaf N         build option: most triangles per leaf
  --traversal-cost X   build option: the SAH's cost of a node visit
  --cost               add the boxes and triangles tested per ray (an extra untimed pass)
  --batch              the whole set through the batch query (Bvh::cast_rays) at once,
                       where eight neighbouring camera rays walk the tree together;
                       with --any, its any hit
  --details            closest hit with its details (closest_hit: the point, normals, uv),
                       what the Python and JavaScript bindings report per ray
  --gpu                also cast each set on the GPU (meshray-gpu, wgpu on Vulkan: every
                       answer the CPU's), a line beside each set's CPU line: its rate
                       (rays uploaded, the kernel, answers read back, the CPU's finish),
                       the rays flagged for the CPU, and how many answers differ from the
                       CPU's (0). Needs the command built with `--features gpu`, and the
                       watertight test (not --cramer or --details)
";

struct Options {
    mesh: PathBuf,
    ray_files: Vec<PathBuf>,
    hits_out: Vec<PathBuf>,
    any: bool,
    batch: bool,
    details: bool,
    threads: usize,
    json: bool,
    watertight: bool,
    passes: usize,
    width: u32,
    random: usize,
    subdivide: u32,
    write_rays: Option<PathBuf>,
    build: BuildOptions<'static>,
    cost: bool,
    gpu: bool,
}

fn parse(words: Vec<String>) -> Result<Options, Failure> {
    let mut args = Args::new(words);
    let mut options = Options {
        mesh: mesh::default_mesh(),
        ray_files: Vec::new(),
        hits_out: Vec::new(),
        any: false,
        batch: false,
        details: false,
        threads: 1,
        json: false,
        watertight: true,
        passes: 3,
        width: 1024,
        random: 1_000_000,
        subdivide: 0,
        write_rays: None,
        build: BuildOptions::default(),
        cost: false,
        gpu: false,
    };
    let mut mesh_given = false;
    while let Some(arg) = args.next_word() {
        let flag = arg.as_str();
        match flag {
            "--rays" => options
                .ray_files
                .push(args.value(flag, "a ray file")?.into()),
            "--hits-out" => options
                .hits_out
                .push(args.value(flag, "a file name")?.into()),
            "--write-rays" => options.write_rays = Some(args.value(flag, "a directory")?.into()),
            "--any" => options.any = true,
            "--json" => options.json = true,
            "--watertight" => options.watertight = true,
            "--cramer" => options.watertight = false,
            "--batch" => options.batch = true,
            "--details" => options.details = true,
            "--cost" => options.cost = true,
            "--gpu" if cfg!(feature = "gpu") => options.gpu = true,
            "--gpu" => {
                return Err(Failure::usage(
                    "--gpu needs the command built with the GPU crate: cargo run --release \
                     -p meshray-cli --features gpu -- bench --gpu (or cargo install --path cli \
                     --features gpu)",
                ));
            }
            "--threads" => options.threads = args.whole(flag, 1..=1024)?,
            "--passes" => options.passes = args.whole(flag, 1..=1000)?,
            "--width" => options.width = args.whole(flag, 1..=4096)?,
            "--random" => options.random = args.whole(flag, 1..=16_777_216)?,
            "--subdivide" => options.subdivide = args.whole(flag, 0..=6)?,
            "--quality" => options.build.quality = args.choice(flag, &QUALITIES)?,
            "--bins" => options.build.bins = args.whole(flag, 2..=1024)?,
            "--max-leaf" => options.build.max_leaf_size = args.whole(flag, 1..=1024)?,
            "--traversal-cost" => {
                let [cost] = args.numbers(flag)?;
                if cost < 0.0 {
                    return Err(Failure::usage(format!(
                        "--traversal-cost takes a number from 0 up, not {cost}"
                    )));
                }
                options.build.traversal_cost = cost;
            }
            flag if flag.starts_with('-') => return Err(unknown(flag)),
            path => set_mesh(&mut options.mesh, &mut mesh_given, path, "bench")?,
        }
    }
    if options.details && (options.any || options.batch) {
        return Err(Failure::usage(
            "--details times the closest hit one ray at a time; it takes neither --any nor --batch"
                .to_string(),
        ));
    }
    if options.gpu && (options.details || !options.watertight) {
        return Err(Failure::usage(
            "--gpu casts with the watertight test and compact answers: not with --cramer or --details",
        ));
    }
    Ok(options)
}

/// Which query the bench times.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Closest,
    Any,
    Batch(RayQuery),
    Details,
}

/// Rays per call of the batch query, as an application casting an image in 64×64 tiles
/// would: the answers of one block stay in the core's cache, where a million answers (20 MB)
/// at once push the tree out of it and measured slower (the commit that set this).
const BATCH_BLOCK: usize = 4096;

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Answers every ray into `out` (one record per ray) on the current rayon pool: one at a
/// time with the short queries (`closest_triangle`, `any_triangle`) that report what a hit
/// file holds, in chunks of 256 rays shared among the pool's threads; or through the batch
/// query (`cast_rays`, which shares each block among the threads) in blocks of
/// [`BATCH_BLOCK`] rays into `batch`, reused.
fn cast(
    bvh: &Bvh,
    rays: &[Ray],
    options: &QueryOptions,
    mode: Mode,
    out: &mut [HitRecord],
    batch: &mut Vec<Option<CompactHit>>,
) {
    let record = |hit: Option<CompactHit>| {
        hit.map_or(HitRecord::MISS, |h| HitRecord {
            t: h.t,
            triangle: h.triangle,
        })
    };
    if let Mode::Batch(query) = mode {
        for (out, rays) in out.chunks_mut(BATCH_BLOCK).zip(rays.chunks(BATCH_BLOCK)) {
            bvh.cast_rays(rays, query, options, batch);
            for (slot, hit) in out.iter_mut().zip(batch.iter()) {
                *slot = record(*hit);
            }
        }
        return;
    }
    let chunk = |(slots, rays): (&mut [HitRecord], &[Ray])| {
        for (slot, ray) in slots.iter_mut().zip(rays) {
            *slot = record(match mode {
                Mode::Any => bvh.cast_ray(ray, RayQuery::Any, options),
                Mode::Details => bvh.closest_hit(ray, options).map(|h| CompactHit {
                    t: h.t,
                    triangle: h.triangle,
                    u: h.u,
                    v: h.v,
                }),
                _ => bvh.cast_ray(ray, RayQuery::Closest, options),
            });
        }
    };
    if rayon::current_num_threads() == 1 {
        out.chunks_mut(256).zip(rays.chunks(256)).for_each(chunk);
    } else {
        out.par_chunks_mut(256)
            .zip(rays.par_chunks(256))
            .for_each(chunk);
    }
}

/// Runs `meshray bench` on the words after its name.
///
/// # Errors
/// A usage error for a bad command line, a failure for a mesh or ray file that does not
/// load or a file that cannot be written.
pub fn run(words: Vec<String>) -> Result<(), Failure> {
    let args = parse(words)?;
    let session = Instant::now();
    let started = Instant::now();
    let mesh_name = args.mesh.display().to_string();
    let loading = Progress::new(format!("loading {mesh_name}"), "bytes");
    let mesh = mesh::load_with_progress(&args.mesh, &|done, total| loading.update(done, total));
    loading.finish();
    let mut mesh = mesh?;
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    if args.subdivide > 0 {
        let limit = LoadOptions::default().max_triangles;
        let count = mesh
            .triangle_count()
            .saturating_mul(1 << (2 * args.subdivide));
        if count > limit {
            return Err(Failure::usage(format!(
                "--subdivide {} would make {count} triangles, more than the {limit} a loaded mesh may have",
                args.subdivide
            )));
        }
        mesh = subdivide::subdivide(&mesh, args.subdivide);
    }
    let triangles = mesh.triangle_count();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(args.threads)
        .build()
        .map_err(|e| Failure::failed(format!("cannot start {} threads: {e}", args.threads)))?;
    let builds = if triangles < 2_000_000 { 3 } else { 1 };
    let mut build_ms = Vec::new();
    let mut bvh = None;
    for _ in 0..builds {
        let mesh = mesh.clone();
        let started = Instant::now();
        let building = Progress::new("building", "triangles");
        let report = |done, total| building.update(done, total);
        let options = BuildOptions {
            progress: Some(&report),
            ..args.build
        };
        let built = pool.install(|| Bvh::build_with(mesh, &options));
        building.finish();
        build_ms.push(started.elapsed().as_secs_f64() * 1e3);
        bvh = Some(built);
    }
    // Shared with the GPU's copy under `--gpu` (its CPU finish reads the same tree).
    let bvh = std::sync::Arc::new(bvh.ok_or_else(|| Failure::failed("no build ran"))?);
    let build_ms = median(build_ms);
    let stats = bvh.stats();
    #[cfg(feature = "gpu")]
    let gpu = if args.gpu {
        Some(meshray_gpu::Gpu::new().ok_or_else(|| {
            Failure::failed(
                "--gpu: no Vulkan adapter here (Debian's mesa-vulkan-drivers has a software one, lavapipe)",
            )
        })?)
    } else {
        None
    };
    #[cfg(feature = "gpu")]
    let device_bvh = gpu
        .as_ref()
        .map(|g| meshray_gpu::GpuBvh::new(g, bvh.clone()));

    let sets: Vec<RaySet> = if args.ray_files.is_empty() {
        let primary = rays::primary(&mesh, args.width);
        let random = rays::random(&mesh, args.random, 1);
        let secondary = rays::secondary(&bvh, &primary, 2);
        vec![primary, random, secondary]
    } else {
        args.ray_files
            .iter()
            .map(|p| RaySet::read(p).map_err(|e| Failure::failed(e.to_string())))
            .collect::<Result<_, _>>()?
    };
    if !args.hits_out.is_empty() && args.hits_out.len() != sets.len() {
        return Err(Failure::usage(format!(
            "{} --hits-out files for {} ray sets: give one per set",
            args.hits_out.len(),
            sets.len()
        )));
    }
    if let Some(dir) = &args.write_rays {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::failed(format!("{}: {e}", dir.display())))?;
        for set in &sets {
            set.write(&dir.join(format!("{}.rays", set.kind.name())))
                .map_err(|e| Failure::failed(e.to_string()))?;
        }
    }

    let mode = match (args.any, args.batch, args.details) {
        (_, _, true) => Mode::Details,
        (any, true, _) => Mode::Batch(if any {
            RayQuery::Any
        } else {
            RayQuery::Closest
        }),
        (true, false, _) => Mode::Any,
        _ => Mode::Closest,
    };
    let query = match mode {
        Mode::Any => "any",
        Mode::Batch(RayQuery::Closest) => "closest-batch",
        Mode::Batch(RayQuery::Any) => "any-batch",
        Mode::Details => "closest-details",
        Mode::Closest => "closest",
    };
    if !args.json {
        crate::say!(
            "{mesh_name}: {triangles} triangles (loaded in {load_ms:.0} ms{}); build {build_ms:.1} ms; {stats}",
            if args.subdivide > 0 {
                format!(", subdivided {}×", args.subdivide)
            } else {
                String::new()
            }
        );
        crate::say!(
            "{query} hit, {} thread(s), {}, median of {} passes",
            args.threads,
            if args.watertight {
                "watertight"
            } else {
                "Cramer"
            },
            args.passes
        );
        #[cfg(feature = "gpu")]
        if let Some(gpu) = &gpu {
            let info = gpu.adapter.get_info();
            crate::say!(
                "GPU: {} ({:?}, {:?})",
                info.name,
                info.backend,
                info.device_type
            );
        }
    }
    let options = QueryOptions {
        watertight: args.watertight,
        ..Default::default()
    };
    for (k, set) in sets.iter().enumerate() {
        let mut records = vec![HitRecord::MISS; set.rays.len()];
        let mut rates = Vec::new();
        let mut batch = Vec::new();
        for _ in 0..args.passes {
            let started = Instant::now();
            pool.install(|| cast(&bvh, &set.rays, &options, mode, &mut records, &mut batch));
            rates.push(set.rays.len() as f64 / started.elapsed().as_secs_f64() / 1e6);
        }
        let hits = records.iter().filter(|r| r.is_hit()).count();
        let rate = median(rates.clone());
        if let Some(path) = args.hits_out.get(k) {
            std::fs::write(path, rays::hits_to_bytes(&records))
                .map_err(|e| Failure::failed(format!("{}: {e}", path.display())))?;
        }
        // What the walk did per ray (boxes and triangles tested), from an untimed pass.
        let cost = args.cost.then(|| {
            let (mut boxes, mut tris) = (0u64, 0u64);
            for ray in &set.rays {
                let (_, c) = meshray::diagnostics::closest_hit_with_cost(&bvh, ray, &options);
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
            crate::say!(
                "{{\"mesh\":{},\"triangles\":{triangles},\"set\":\"{}\",\"query\":\"{query}\",\"threads\":{},\"watertight\":{},\"rays\":{},\"hits\":{hits},\"mrays_per_s\":{rate:.4},\"passes\":[{}],\"build_ms\":{build_ms:.2},\"bytes_per_triangle\":{:.2},\"sah_cost\":{:.3}{}}}",
                json::string(&mesh_name),
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
            crate::say!(
                "  {name:>17}: {:>9} rays, {hits:>9} hits, {rate:7.2} Mrays/s{}",
                set.rays.len(),
                cost.map_or(String::new(), |(b, t)| format!(
                    "; per ray {b:.1} boxes, {t:.1} triangles tested"
                ))
            );
        }
        #[cfg(feature = "gpu")]
        if let Some(device_bvh) = &device_bvh {
            on_the_gpu(device_bvh, set, &records, &args, &mesh_name);
        }
    }
    if !args.json {
        crate::say!(
            "total {:.1} s (load {load_ms:.0} ms, {builds} build(s) of {build_ms:.0} ms, rays and queries the rest)",
            session.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// `--gpu`: the set cast on the GPU (`passes` times, the median rate), its answers compared
/// with the CPU's `records` (closest hits: `t` and triangle bit for bit; any hits: whether
/// each ray hits), one line (or JSON object) beside the CPU's.
#[cfg(feature = "gpu")]
fn on_the_gpu(
    device_bvh: &meshray_gpu::GpuBvh<'_>,
    set: &RaySet,
    records: &[HitRecord],
    args: &Options,
    mesh_name: &str,
) {
    let mut rates = Vec::new();
    let mut last = None;
    for _ in 0..args.passes {
        let started = Instant::now();
        let answers = if args.any {
            device_bvh.any_hits(&set.rays)
        } else {
            device_bvh.closest_hits(&set.rays)
        };
        rates.push(set.rays.len() as f64 / started.elapsed().as_secs_f64() / 1e6);
        last = Some(answers);
    }
    let Some((hits, stats)) = last else {
        return;
    };
    let differ = hits
        .iter()
        .zip(records)
        .filter(|(hit, record)| match hit {
            None => record.is_hit(),
            Some(_) if args.any => !record.is_hit(),
            Some(h) => h.triangle != record.triangle || h.t.to_bits() != record.t.to_bits(),
        })
        .count();
    let rate = median(rates);
    let (device_ms, finish_ms) = (
        stats.gpu.as_secs_f64() * 1e3,
        stats.finish.as_secs_f64() * 1e3,
    );
    if args.json {
        crate::say!(
            "{{\"mesh\":{},\"set\":\"{}\",\"query\":\"{}\",\"device\":\"gpu\",\"rays\":{},\"hits\":{},\"mrays_per_s\":{rate:.4},\"device_ms\":{device_ms:.2},\"finish_ms\":{finish_ms:.2},\"flagged\":{},\"several\":{},\"differ\":{differ}}}",
            json::string(mesh_name),
            set.kind.name(),
            if args.any { "any" } else { "closest" },
            set.rays.len(),
            hits.iter().filter(|h| h.is_some()).count(),
            stats.flagged,
            stats.several,
        );
    } else {
        crate::say!(
            "  {:>17}  GPU {rate:7.2} Mrays/s (device and read-back {device_ms:.0} ms, CPU finish {finish_ms:.0} ms; {} flagged, {} narrowed to several); {differ} differ from the CPU's",
            "",
            stats.flagged,
            stats.several,
        );
    }
}
