//! The peer comparison: the same rays through meshray, parry3d, the `bvh` crate, obvhs,
//! tinybvh's BVH8_CPU (compiled from its header by build.rs with `-O3 -march=native`; skipped,
//! with a note, where the compiler or the CPU lacks AVX2 and FMA) and Embree 3 (when found at
//! build time) in one process, one thread, reporting throughput, build time, the size of
//! each engine's structure, hit counts and where each peer's answers differ from meshray's.
//!
//! ```text
//! cargo run --release -p meshray-peers -- MESH.obj... [--rays FILE]... [--any] [--passes N] \
//!     [--mismatches N] [--json]
//! ```
//!
//! The five meshes of the project's comparison (closest hit, then the same with `--any`):
//!
//! ```text
//! M=../shared/meshes   # from the repository's root
//! cargo run --release -p meshray-peers -- $M/stanford-bunny/stanford-bunny.obj \
//!     $M/armadillo/armadillo.obj $M/crytek-sponza/sponza.obj $M/conference/conference.obj \
//!     $M/lost-empire/lost_empire.obj
//! ```
//!
//! Without `--rays` each mesh gets the bench's three standard sets (`meshray_cli::rays`, the
//! `meshray bench` command's): primary (1024×1024 pinhole image), random (1M rays, seed 1)
//! and secondary (one bounce from each primary hit, seed 2); `--rays` reads ray files instead
//! (one mesh only). Closest hit, or any hit with `--any`. Each figure is the median of `N`
//! passes (default 3); in each pass every engine runs the whole set once, the starting engine
//! rotating pass by pass, so machine noise hits all alike. Build times are from the loaded
//! mesh to a queryable structure, one thread each. Bytes per triangle are those of the
//! structure the queries walk, the mesh's own vertex and index arrays not counted (copies of
//! triangles in leaves are): meshray's `Stats::bytes_per_triangle`, parry's
//! `Bvh::heap_memory_size`, the `bvh` crate's and obvhs's arrays, tinybvh's node and leaf
//! blocks, and for Embree what `rtcCommitScene` leaves allocated by the device's memory
//! monitor. Disagreement with meshray is counted per ray: hit vs miss,
//! `|t − t_meshray| > 1e-4·max(1, |t|)`, and a different triangle at an agreeing `t` (shared
//! edges and duplicate triangles make a few of each expected); `--mismatches N` judges every
//! disagreeing ray against an f64 test of all triangles, counts who was wrong and how, and
//! prints the first `N` per set and engine (0: the counts only). `--json` prints one object
//! per (mesh, set, engine) per line instead of the tables.
use meshray_cli::json::string as json_string;
use meshray_cli::rays;

mod builds;
mod bvh_crate;
#[cfg(has_embree)]
mod embree;
mod engine;
mod explain;
mod obvhs_engine;
mod parry;
#[cfg(has_tinybvh)]
mod tinybvh;

use engine::{Engine, Meshray};
use meshray::{Bvh, Mesh, Ray};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

const USAGE: &str = "usage: meshray-peers MESH.obj... [--rays FILE]... [--any] [--passes N] \
                     [--mismatches N] [--json] [--builds N]";

struct Args {
    meshes: Vec<PathBuf>,
    rays: Vec<PathBuf>,
    any: bool,
    passes: usize,
    json: bool,
    /// With `--mismatches N`: judge every mismatch, print `N` per set and engine in detail.
    mismatches: Option<usize>,
    /// With `--builds N`: time the builders only, `N` rounds.
    builds: Option<usize>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        meshes: Vec::new(),
        rays: Vec::new(),
        any: false,
        passes: 3,
        json: false,
        mismatches: None,
        builds: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--rays" => args
                .rays
                .push(it.next().ok_or("--rays needs a file")?.into()),
            "--any" => args.any = true,
            "--json" => args.json = true,
            "--passes" => {
                let n = it.next().ok_or("--passes needs a number")?;
                args.passes = n
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or(format!("--passes {n}: not a positive number"))?;
            }
            "--mismatches" => {
                let n = it.next().ok_or("--mismatches needs a number")?;
                args.mismatches = Some(
                    n.parse()
                        .map_err(|_| format!("--mismatches {n}: not a number"))?,
                );
            }
            "--builds" => {
                let n = it.next().ok_or("--builds needs a number")?;
                args.builds = Some(
                    n.parse()
                        .ok()
                        .filter(|&n: &usize| n > 0)
                        .ok_or(format!("--builds {n}: not a positive number"))?,
                );
            }
            "-h" | "--help" => return Err(String::new()),
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            _ => args.meshes.push(arg.into()),
        }
    }
    if args.meshes.is_empty() {
        return Err("no mesh given".into());
    }
    if !args.rays.is_empty() && args.meshes.len() > 1 {
        return Err("--rays files belong to one mesh: give only one".into());
    }
    Ok(args)
}

/// An engine, its build time and version.
struct Built {
    engine: Box<dyn Engine>,
    build_ms: f64,
    version: String,
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let started = Instant::now();
    let value = f();
    (value, started.elapsed().as_secs_f64() * 1e3)
}

/// Builds the peers (meshray is built first by the caller, as the secondary set needs it).
struct Peers {
    #[cfg(has_embree)]
    device: std::rc::Rc<embree::Device>,
}

impl Peers {
    fn new() -> Peers {
        Peers {
            #[cfg(has_embree)]
            device: embree::Device::new(),
        }
    }

    fn versions(&self) -> String {
        // Written with `write!` like the optional parts below, so the import is used in
        // every build, with or without them.
        let mut s = String::new();
        let _ = write!(
            s,
            "meshray {}, parry3d {}, bvh {}, obvhs {}",
            env!("PEER_VERSION_MESHRAY"),
            env!("PEER_VERSION_PARRY3D"),
            env!("PEER_VERSION_BVH"),
            env!("PEER_VERSION_OBVHS"),
        );
        #[cfg(has_embree)]
        {
            let _ = write!(s, ", embree {}", self.device.version());
            if self.device.culls_back_faces() {
                s.push_str(" (built with back-face culling: expect misses)");
            }
        }
        #[cfg(has_tinybvh)]
        match tinybvh::unavailable() {
            None => {
                let _ = write!(
                    s,
                    ", tinybvh {} ({})",
                    tinybvh::version(),
                    tinybvh::compiler()
                );
            }
            Some(why) => {
                let _ = write!(s, "; {why}, so tinybvh is not compared");
            }
        }
        #[cfg(not(has_tinybvh))]
        s.push_str("; the tinybvh shim did not compile, so tinybvh is not compared");
        #[cfg(not(has_embree))]
        s.push_str("; Embree 3 not found at build time, so not compared");
        s
    }

    fn build(&self, mesh: &Mesh) -> Vec<Built> {
        fn built(engine: impl Engine + 'static, build_ms: f64, version: &str) -> Built {
            Built {
                engine: Box::new(engine),
                build_ms,
                version: version.to_string(),
            }
        }
        let (parry, ms) = timed(|| parry::Parry::build(mesh));
        let mut out = vec![built(parry, ms, env!("PEER_VERSION_PARRY3D"))];
        let (bvh, ms) = timed(|| bvh_crate::BvhCrate::build(mesh));
        out.push(built(bvh, ms, env!("PEER_VERSION_BVH")));
        let (obvhs, ms) = timed(|| obvhs_engine::Obvhs::build(mesh));
        out.push(built(obvhs, ms, env!("PEER_VERSION_OBVHS")));
        #[cfg(has_tinybvh)]
        if tinybvh::unavailable().is_none() {
            let (engine, ms) = timed(|| tinybvh::TinyBvh::build(mesh));
            match engine {
                Some(engine) => out.push(built(engine, ms, &tinybvh::version())),
                None => eprintln!("note: tinybvh could not build this mesh; not compared"),
            }
        }
        #[cfg(has_embree)]
        {
            let (embree, ms) = timed(|| embree::Embree::build(&self.device, mesh));
            out.push(built(embree, ms, &self.device.version()));
        }
        out
    }
}

/// One engine's figures on one set.
struct Row {
    mrays: f64,
    hits: usize,
    /// Rays where the engine hit and meshray missed, or the other way round.
    hit_miss: usize,
    /// Closest hit only: both hit, `t` differs.
    t_off: Option<usize>,
    /// Closest hit only: both hit at an agreeing `t`, on different triangles.
    triangle_off: Option<usize>,
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        0.5 * (xs[n / 2 - 1] + xs[n / 2])
    }
}

/// Runs every engine `passes` times over the rays; engine 0 (meshray) is the reference.
/// Returns each engine's figures and answers.
fn measure(
    engines: &[Built],
    rays: &[Ray],
    any: bool,
    passes: usize,
) -> (Vec<Row>, explain::Answers) {
    let n = engines.len();
    let mut closest = vec![vec![None; rays.len()]; if any { 0 } else { n }];
    let mut hit = vec![vec![false; rays.len()]; if any { n } else { 0 }];
    let mut speeds = vec![Vec::with_capacity(passes); n];
    for pass in 0..passes {
        for k in 0..n {
            let i = (pass + k) % n;
            let engine = &engines[i].engine;
            let started = Instant::now();
            if any {
                engine.any_all(rays, &mut hit[i]);
            } else {
                engine.closest_all(rays, &mut closest[i]);
            }
            let seconds = started.elapsed().as_secs_f64();
            speeds[i].push(rays.len() as f64 / seconds / 1e6);
        }
    }
    let rows = (0..n)
        .zip(speeds)
        .map(|(i, speeds)| {
            let mrays = median(speeds);
            if any {
                let hits = hit[i].iter().filter(|&&h| h).count();
                let hit_miss = hit[i].iter().zip(&hit[0]).filter(|(a, b)| a != b).count();
                return Row {
                    mrays,
                    hits,
                    hit_miss,
                    t_off: None,
                    triangle_off: None,
                };
            }
            let (mut hits, mut hit_miss, mut t_off, mut triangle_off) = (0, 0, 0, 0);
            for (mine, reference) in closest[i].iter().zip(&closest[0]) {
                hits += mine.is_some() as usize;
                match (mine, reference) {
                    (Some((t, tri)), Some((t0, tri0))) => {
                        if (t - t0).abs() > 1e-4 * t0.abs().max(1.0) {
                            t_off += 1;
                        } else if tri != tri0 {
                            triangle_off += 1;
                        }
                    }
                    (None, None) => {}
                    _ => hit_miss += 1,
                }
            }
            Row {
                mrays,
                hits,
                hit_miss,
                t_off: Some(t_off),
                triangle_off: Some(triangle_off),
            }
        })
        .collect();
    let answers = if any {
        explain::Answers::Any(hit)
    } else {
        explain::Answers::Closest(closest)
    };
    (rows, answers)
}

/// The standard sets, or the given ray files.
fn ray_sets(bvh: &Bvh, files: &[PathBuf]) -> Vec<rays::RaySet> {
    if files.is_empty() {
        let primary = rays::primary(bvh.mesh(), 1024);
        let random = rays::random(bvh.mesh(), 1_000_000, 1);
        let secondary = rays::secondary(bvh, &primary, 2);
        return vec![primary, random, secondary];
    }
    files
        .iter()
        .map(|f| {
            rays::RaySet::read(f).unwrap_or_else(|e| {
                eprintln!("{e}");
                std::process::exit(1)
            })
        })
        .collect()
}

fn run(path: &Path, args: &Args, peers: &Peers) {
    let mesh = Mesh::load(path).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    // meshray builds on rayon's pool: one thread here, like every peer; all threads below.
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a one-thread pool");
    let (bvh, meshray_ms) = timed(|| one_thread.install(|| Bvh::build(mesh.clone())));
    let (_, meshray_all_threads_ms) = timed(|| Bvh::build(mesh.clone()));
    let sets = ray_sets(&bvh, &args.rays);
    let bvh = std::sync::Arc::new(bvh);
    let mut engines = vec![Built {
        engine: Box::new(Meshray::new(bvh.clone(), false)),
        build_ms: meshray_ms,
        version: env!("PEER_VERSION_MESHRAY").to_string(),
    }];
    // The batch query on the same tree (closest hit only: any hit is the row above).
    if !args.any {
        engines.push(Built {
            engine: Box::new(Meshray::new(bvh.clone(), true)),
            build_ms: meshray_ms,
            version: env!("PEER_VERSION_MESHRAY").to_string(),
        });
    }
    engines.extend(peers.build(&mesh));
    let triangles = mesh.triangle_count().max(1) as f64;
    let bytes_per_triangle: Vec<Option<f64>> = engines
        .iter()
        .map(|b| b.engine.structure_bytes().map(|n| n as f64 / triangles))
        .collect();
    let name = path.display().to_string();
    if !args.json {
        println!("\n== {name}: {} triangles ==", group(mesh.triangle_count()));
        let builds: Vec<String> = engines
            .iter()
            .map(|b| format!("{} {:.1}", b.engine.name(), b.build_ms))
            .collect();
        println!(
            "build ms, one thread: {}; meshray on {} threads {meshray_all_threads_ms:.1}",
            builds.join(", "),
            rayon::current_num_threads()
        );
        let sizes: Vec<String> = engines
            .iter()
            .zip(&bytes_per_triangle)
            .map(|(b, size)| match size {
                Some(x) => format!("{} {x:.1}", b.engine.name()),
                None => format!("{} ?", b.engine.name()),
            })
            .collect();
        println!(
            "bytes/triangle of the structure, the mesh's arrays not counted: {}",
            sizes.join(", ")
        );
        println!(
            "{:<10} {:>10} {:<8} {:>8} {:>10} {:>10} {:>7} {:>7} {:>7}",
            "set", "rays", "engine", "Mrays/s", "meshray/x", "hits", "hit≠", "t≠", "tri≠"
        );
    }
    for set in &sets {
        let (rows, answers) = measure(&engines, &set.rays, args.any, args.passes);
        let reference = rows[0].mrays;
        for (i, ((built, row), &bytes)) in engines
            .iter()
            .zip(&rows)
            .zip(&bytes_per_triangle)
            .enumerate()
        {
            let ratio = reference / row.mrays;
            let engine = built.engine.name();
            if args.json {
                println!(
                    "{}",
                    json_line(
                        &name,
                        set,
                        engine,
                        &built.version,
                        built.build_ms,
                        bytes,
                        ratio,
                        row,
                        args
                    )
                );
                continue;
            }
            let count = |x: Option<usize>| match (i, x) {
                (0, _) | (_, None) => "-".to_string(),
                (_, Some(x)) => x.to_string(),
            };
            let (set_name, rays) = if i == 0 {
                (set.kind.name(), group(set.rays.len()))
            } else {
                ("", String::new())
            };
            println!(
                "{set_name:<10} {rays:>10} {engine:<8} {:>8.2} {ratio:>10.2} {:>10} {:>7} {:>7} {:>7}",
                row.mrays,
                row.hits,
                count(Some(row.hit_miss)),
                count(row.t_off),
                count(row.triangle_off),
            );
        }
        if let Some(limit) = args.mismatches
            && !args.json
        {
            let all: Vec<&dyn Engine> = engines.iter().map(|b| &*b.engine).collect();
            explain::print(&mesh, set.kind.name(), &set.rays, &all, &answers, limit);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn json_line(
    mesh: &str,
    set: &rays::RaySet,
    engine: &str,
    version: &str,
    build_ms: f64,
    bytes_per_triangle: Option<f64>,
    ratio: f64,
    row: &Row,
    args: &Args,
) -> String {
    let opt = |x: Option<usize>| x.map_or("null".to_string(), |x| x.to_string());
    format!(
        "{{\"mesh\":{},\"set\":{},\"rays\":{},\"query\":{},\"passes\":{},\"engine\":{},\"version\":{},\
         \"mrays_per_s\":{},\"hits\":{},\"build_ms\":{},\"bytes_per_triangle\":{},\
         \"ratio_vs_meshray\":{},\
         \"mismatches\":{{\"hit_miss\":{},\"t\":{},\"triangle\":{}}}}}",
        json_string(mesh),
        json_string(set.kind.name()),
        set.rays.len(),
        json_string(if args.any { "any" } else { "closest" }),
        args.passes,
        json_string(engine),
        json_string(version),
        json_number(row.mrays),
        row.hits,
        json_number(build_ms),
        bytes_per_triangle.map_or("null".to_string(), json_number),
        json_number(ratio),
        row.hit_miss,
        opt(row.t_off),
        opt(row.triangle_off),
    )
}

fn json_number(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.4}")
    } else {
        "null".into()
    }
}

/// 1234567 as "1,234,567".
fn group(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The CPU's model name and logical CPU count, from /proc/cpuinfo.
fn machine() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':'))
        .map_or("unknown CPU", |(_, m)| m.trim());
    let cpus = info.lines().filter(|l| l.starts_with("processor")).count();
    format!("{model} ({cpus} logical CPUs)")
}

/// Now in UTC as "YYYY-MM-DD HH:MM UTC" (civil-from-days, proleptic Gregorian).
fn now_utc() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + (month <= 2) as i64;
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60
    )
}

fn main() {
    let args = parse_args().unwrap_or_else(|message| {
        if !message.is_empty() {
            eprintln!("{message}");
        }
        eprintln!("{USAGE}");
        std::process::exit(2)
    });
    let peers = Peers::new();
    #[cfg(not(has_embree))]
    if args.json {
        eprintln!("note: Embree 3 not found at build time, so not compared");
    }
    #[cfg(has_tinybvh)]
    if let Some(why) = tinybvh::unavailable() {
        // Printed in the versions line too; said here so --json runs say it as well.
        eprintln!("note: {why}, so tinybvh is not compared");
    }
    #[cfg(not(has_tinybvh))]
    eprintln!("note: the tinybvh shim did not compile at build time, so tinybvh is not compared");
    if !args.json {
        println!("machine: {}", machine());
        println!("date: {}", now_utc());
        println!("versions: {}", peers.versions());
        println!(
            "{} hit, one thread, median of {} passes; meshray/x > 1: meshray is faster; \
             hit≠ t≠ tri≠: rays answered differently from meshray",
            if args.any { "any" } else { "closest" },
            args.passes
        );
    }
    if let Some(rounds) = args.builds {
        for path in &args.meshes {
            let mesh = Mesh::load(path).unwrap_or_else(|e| {
                eprintln!("{e}");
                std::process::exit(1)
            });
            builds::run(&mesh, &path.display().to_string(), rounds, &peers);
        }
        return;
    }
    for mesh in &args.meshes {
        run(mesh, &args, &peers);
    }
}
