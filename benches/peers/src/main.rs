//! The peer comparison: the same rays through meshray, parry3d, the `bvh` crate, obvhs,
//! tinybvh's BVH8_CPU (compiled from its header by build.rs with `-O3 -march=native`; skipped,
//! with a note, where the compiler or the CPU lacks AVX2 and FMA), Embree 3 (when found at
//! build time) and Embree 4 (when its library opens at run time) in one process, one thread,
//! reporting throughput, build time, the size of each engine's structure, hit counts and where
//! each peer's answers differ from meshray's.
//!
//! ```text
//! cargo run --release -p meshray-peers -- MESH.obj... [--rays FILE]... [--any] [--passes N] \
//!     [--mismatches N] [--json] [--builds N] [--callgrind ENGINE] [--skip NAME,...] \
//!     [--sweep FRACTION]
//! ```
//!
//! Embree 4 is not linked but opened with `dlopen` (src/embree4.rs says why): Debian has only
//! Embree 3, so it comes from the `embreex` wheel (4.4.x), which bundles `libembree4` and its
//! oneTBB (found through the library's `$ORIGIN` RPATH, so they stay side by side):
//!
//! ```text
//! pip download --no-deps embreex -d /tmp/embreex && unzip -q /tmp/embreex/*.whl -d /tmp/embreex/wheel
//! export MESHRAY_EMBREE4=/tmp/embreex/wheel/embreex.libs   # the file, or its directory
//! ```
//!
//! Without `MESHRAY_EMBREE4` it is looked for in `benches/peers/embree4/` (ignored by git: copy
//! or link `embreex.libs`'s two files there) and then as `libembree4.so.4` on the loader's
//! path; when none opens, the engine is left out with a note.
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
//!
//! `--skip NAME,...` leaves engines out of the timed comparison by their tables' names
//! (`--skip parry3d,bvh` for the slow ones).
//!
//! `--sweep FRACTION` compares sweeps instead of rays: a sphere of radius `FRACTION` of the
//! mesh's half diagonal along the first 20,000 rays of each set, meshray's `cast_sphere`
//! against parry3d's shape cast of a `Ball` on its `TriMesh` (src/sweeps.rs), e.g.
//! `--sweep 0.001`, with meshray's closest hit of the same rays timed in the same rotation
//! (the `sweep/ray` column).
//!
//! `--callgrind ENGINE` (`meshray`, `meshray-batch`, `embree4-robust`, `parry3d`, `bvh`,
//! `obvhs`, `tinybvh`, `embree3`, `embree4`) builds that engine alone and runs its query loop once over the sets
//! (closest hit, or any hit with `--any`), then prints the number of rays and the loop's
//! name. Every engine's loops are `#[inline(never)]`, unmangled functions named
//! `peers_closest_<engine>` and `peers_any_<engine>` (`-` as `_`; the timed comparison runs
//! the same ones), so callgrind's `--toggle-collect` counts exactly the queries, and the
//! `Ir` total it reports divided by the number of rays is instructions per query. valgrind
//! 3.19 cannot decode AVX-512, so build for x86-64-v3 (Rust and the tinybvh shim; `--target`
//! keeps these artifacts apart from the native build's) and have Embree take AVX2 (it does
//! under valgrind anyway, from the CPUID valgrind shows):
//!
//! ```text
//! RUSTFLAGS="-C target-cpu=x86-64-v3" MESHRAY_PEERS_MARCH=x86-64-v3 \
//!     cargo build --release -p meshray-peers --target x86_64-unknown-linux-gnu
//! P=target/x86_64-unknown-linux-gnu/release/meshray-peers
//! R=/tmp/rays_stanford-bunny   # meshray bench MESH --width 64 --random 8192 --write-rays $R
//! RAYS="--rays $R/primary.rays --rays $R/random.rays --rays $R/secondary.rays"
//! export MESHRAY_EMBREE_ISA=avx2 MESHRAY_EMBREE4=/tmp/embreex/wheel/embreex.libs
//! for q in closest any; do for e in meshray embree3 embree4 tinybvh; do
//!   valgrind --tool=callgrind --toggle-collect=peers_${q}_$e --callgrind-out-file=cg.$e.$q \
//!     $P MESH.obj $RAYS --callgrind $e $([ $q = any ] && echo --any)
//!   callgrind_annotate cg.$e.$q | grep 'PROGRAM TOTALS'   # Ir; divide by the rays printed
//! done; done
//! ```
//!
//! That is, for closest hit (add `--any` and use `peers_any_<engine>` for any hit):
//!
//! ```text
//! valgrind --tool=callgrind --toggle-collect=peers_closest_meshray $P MESH.obj $RAYS --callgrind meshray
//! valgrind --tool=callgrind --toggle-collect=peers_closest_embree3 $P MESH.obj $RAYS --callgrind embree3
//! valgrind --tool=callgrind --toggle-collect=peers_closest_embree4 $P MESH.obj $RAYS --callgrind embree4
//! valgrind --tool=callgrind --toggle-collect=peers_closest_tinybvh $P MESH.obj $RAYS --callgrind tinybvh
//! ```
use meshray_cli::json::string as json_string;
use meshray_cli::rays;

mod builds;
mod bvh_crate;
#[cfg(has_embree)]
mod embree;
mod embree4;
mod embree_abi;
mod engine;
mod explain;
mod obvhs_engine;
mod parry;
mod sweeps;
#[cfg(has_tinybvh)]
mod tinybvh;

use engine::{Engine, Meshray};
use meshray::{Bvh, Mesh, Ray};
use std::ffi::CString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

const USAGE: &str = "usage: meshray-peers MESH.obj... [--rays FILE]... [--any] [--passes N] \
                     [--mismatches N] [--json] [--builds N] [--callgrind ENGINE] \
                     [--skip NAME,...] [--sweep FRACTION]";

/// The Embree device configuration, for Embree 3 and 4 alike: `threads=1`, and
/// `isa=$MESHRAY_EMBREE_ISA` when that is set (`avx2` for callgrind, whose valgrind cannot
/// decode AVX-512; Embree would pick AVX2 under valgrind by itself, from the CPUID valgrind
/// reports, but this makes sure).
pub fn embree_isa_config() -> CString {
    let mut config = "threads=1".to_string();
    if let Ok(isa) = std::env::var("MESHRAY_EMBREE_ISA")
        && !isa.is_empty()
    {
        let _ = write!(config, ",isa={isa}");
    }
    CString::new(config).expect("MESHRAY_EMBREE_ISA without NUL bytes")
}

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
    /// With `--callgrind ENGINE`: that engine's query loop, once over every set.
    callgrind: Option<String>,
    /// `--skip NAME,...`: engines (by their tables' names) left out of the timed comparison.
    skip: Vec<String>,
    /// With `--sweep FRACTION`: sphere sweeps against parry3d instead of rays.
    sweep: Option<f32>,
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
        callgrind: None,
        skip: Vec::new(),
        sweep: None,
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
            "--callgrind" => {
                let name = it.next().ok_or("--callgrind needs an engine")?;
                if !CALLGRIND_ENGINES.contains(&name.as_str()) {
                    return Err(format!(
                        "--callgrind {name}: not one of {}",
                        CALLGRIND_ENGINES.join(", ")
                    ));
                }
                args.callgrind = Some(name);
            }
            "--skip" => {
                let names = it.next().ok_or("--skip needs engine names")?;
                args.skip
                    .extend(names.split(',').map(|n| n.trim().to_string()));
            }
            "--sweep" => {
                let f = it.next().ok_or("--sweep needs a fraction")?;
                args.sweep = Some(
                    f.parse()
                        .ok()
                        .filter(|&f: &f32| f >= 0.0 && f.is_finite())
                        .ok_or(format!("--sweep {f}: not a fraction of the half diagonal"))?,
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
    /// Embree 4's device, or why it is not compared.
    embree4: Result<std::rc::Rc<embree4::Device>, String>,
}

impl Peers {
    fn new() -> Peers {
        Peers {
            #[cfg(has_embree)]
            device: embree::Device::new(),
            embree4: embree4::Device::new(),
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
            let _ = write!(s, ", embree3 {}", self.device.version());
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
        match &self.embree4 {
            Ok(device) => {
                let _ = write!(s, ", embree4 {} ({})", device.version(), device.path());
                if device.culls_back_faces() {
                    s.push_str(" (built with back-face culling: expect misses)");
                }
            }
            Err(why) => {
                let _ = write!(s, "; {why}, so not compared");
            }
        }
        s
    }

    /// Every peer, or (`only`) the one of that name.
    fn build(&self, mesh: &Mesh, only: Option<&str>) -> Vec<Built> {
        fn built(engine: impl Engine + 'static, build_ms: f64, version: &str) -> Built {
            Built {
                engine: Box::new(engine),
                build_ms,
                version: version.to_string(),
            }
        }
        let wanted = |name: &str| only.is_none_or(|only| only == name);
        let mut out = Vec::new();
        if wanted("parry3d") {
            let (parry, ms) = timed(|| parry::Parry::build(mesh));
            out.push(built(parry, ms, env!("PEER_VERSION_PARRY3D")));
        }
        if wanted("bvh") {
            let (bvh, ms) = timed(|| bvh_crate::BvhCrate::build(mesh));
            out.push(built(bvh, ms, env!("PEER_VERSION_BVH")));
        }
        if wanted("obvhs") {
            let (obvhs, ms) = timed(|| obvhs_engine::Obvhs::build(mesh));
            out.push(built(obvhs, ms, env!("PEER_VERSION_OBVHS")));
        }
        #[cfg(has_tinybvh)]
        if wanted("tinybvh") && tinybvh::unavailable().is_none() {
            let (engine, ms) = timed(|| tinybvh::TinyBvh::build(mesh));
            match engine {
                Some(engine) => out.push(built(engine, ms, &tinybvh::version())),
                None => eprintln!("note: tinybvh could not build this mesh; not compared"),
            }
        }
        #[cfg(has_embree)]
        if wanted("embree3") {
            let (embree, ms) = timed(|| embree::Embree::build(&self.device, mesh));
            out.push(built(embree, ms, &self.device.version()));
        }
        if let Ok(device) = &self.embree4
            && wanted("embree4")
        {
            let (embree, ms) = timed(|| embree4::Embree4::build(device, mesh));
            out.push(built(embree, ms, &device.version()));
        }
        if let Ok(device) = &self.embree4
            && wanted("embree4-robust")
        {
            let (embree, ms) = timed(|| embree4::Embree4::build_robust(device, mesh));
            out.push(built(embree4::Embree4Robust(embree), ms, &device.version()));
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
    read_ray_files(files)
}

fn read_ray_files(files: &[PathBuf]) -> Vec<rays::RaySet> {
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
    if let Some(fraction) = args.sweep {
        let name = path.display().to_string();
        sweeps::run(&name, &mesh, &bvh, &sets, fraction, args.passes);
        return;
    }
    let bvh = std::sync::Arc::new(bvh);
    let mut engines = vec![Built {
        engine: Box::new(Meshray::new(bvh.clone(), false)),
        build_ms: meshray_ms,
        version: env!("PEER_VERSION_MESHRAY").to_string(),
    }];
    // The batch query on the same tree, for closest hit (its any hit walks ray by ray, as the
    // row above does).
    if !args.any {
        engines.push(Built {
            engine: Box::new(Meshray::new(bvh.clone(), true)),
            build_ms: meshray_ms,
            version: env!("PEER_VERSION_MESHRAY").to_string(),
        });
    }
    engines.extend(peers.build(&mesh, None));
    engines.retain(|b| !args.skip.iter().any(|n| n == b.engine.name()));
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

/// The engines `--callgrind` takes: the tables' names, `meshray batch` as `meshray-batch`.
const CALLGRIND_ENGINES: [&str; 9] = [
    "meshray",
    "meshray-batch",
    "parry3d",
    "bvh",
    "obvhs",
    "tinybvh",
    "embree3",
    "embree4",
    "embree4-robust",
];

/// `--callgrind ENGINE`: builds that engine alone (and meshray's tree where the secondary
/// set needs it), then runs its query loop, `peers_closest_<engine>` or `peers_any_<engine>`,
/// once over each set, and says how many rays went through it: callgrind's
/// `--toggle-collect=` of that function counts only the loop, so its total over this count
/// is instructions per query (the sets mixed).
fn callgrind(path: &Path, args: &Args, peers: &Peers, name: &str) {
    let mesh = Mesh::load(path).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let meshray = name.starts_with("meshray");
    let bvh =
        (meshray || args.rays.is_empty()).then(|| std::sync::Arc::new(Bvh::build(mesh.clone())));
    let sets = match &bvh {
        Some(bvh) => ray_sets(bvh, &args.rays),
        None => read_ray_files(&args.rays),
    };
    let engine: Box<dyn Engine> = match (name, bvh) {
        ("meshray", Some(bvh)) => Box::new(Meshray::new(bvh, false)),
        ("meshray-batch", Some(bvh)) => Box::new(Meshray::new(bvh, true)),
        _ => match peers.build(&mesh, Some(name)).pop() {
            Some(built) => built.engine,
            None => {
                match (&peers.embree4, name) {
                    (Err(why), "embree4") => eprintln!("--callgrind embree4: {why}"),
                    _ => eprintln!("--callgrind {name}: not in this build or not on this machine"),
                }
                std::process::exit(1)
            }
        },
    };
    let query = if args.any { "any" } else { "closest" };
    let (mut rays, mut hits) = (0, 0);
    for set in &sets {
        rays += set.rays.len();
        if args.any {
            let mut out = vec![false; set.rays.len()];
            engine.any_all(&set.rays, &mut out);
            hits += out.iter().filter(|&&h| h).count();
        } else {
            let mut out = vec![None; set.rays.len()];
            engine.closest_all(&set.rays, &mut out);
            hits += out.iter().filter(|h| h.is_some()).count();
        }
    }
    let names: Vec<&str> = sets.iter().map(|s| s.kind.name()).collect();
    let function = format!("peers_{query}_{}", name.replace('-', "_"));
    println!(
        "callgrind: {} {query} hit over {rays} rays ({}) of {}: {hits} hits; \
         the function to toggle: {function}; instructions per query: its Ir / {rays}",
        engine.name(),
        names.join(" + "),
        path.display()
    );
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
    if let Some(engine) = &args.callgrind {
        for path in &args.meshes {
            callgrind(path, &args, &peers, engine);
        }
        return;
    }
    #[cfg(not(has_embree))]
    if args.json {
        eprintln!("note: Embree 3 not found at build time, so not compared");
    }
    if let (true, Err(why)) = (args.json, &peers.embree4) {
        eprintln!("note: {why}, so not compared");
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
