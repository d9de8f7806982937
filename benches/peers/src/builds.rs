//! `--builds N`: build times only, the builders taking turns round by round (the starting
//! one rotating, so machine noise hits all alike), median of `N` rounds per builder, and the
//! peak heap memory each Rust builder needed beyond the mesh and the structure it keeps
//! (`meshray_cli::memory`, from the first round; the C++ engines allocate out of its sight).
//! meshray at each build quality on one thread and on all threads;
//! tinybvh's BVH8_CPU and obvhs; Embree 3 and Embree 4 (when loaded) at
//! `RTC_BUILD_QUALITY_LOW`, `MEDIUM` (their default) and `HIGH`.

use crate::engine::{Engine, Meshray};
use crate::timed;
use meshray::tree::BuildQuality;
use meshray::{BuildOptions, Bvh, Mesh};
use meshray_cli::memory;
use std::sync::Arc;

/// A builder: its name, whether its allocations are Rust's (seen by the peak), and a build
/// that returns the engine, whose structure is measured after the timing.
type Builder<'a> = (
    String,
    bool,
    Box<dyn Fn() -> Option<Box<dyn Engine + 'a>> + 'a>,
);

fn builders<'a>(mesh: &'a Mesh, peers: &'a crate::Peers) -> Vec<Builder<'a>> {
    let one_thread = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .expect("a one-thread pool"),
    );
    let threads = rayon::current_num_threads();
    let mut out: Vec<Builder<'a>> = Vec::new();
    for (name, quality) in [
        ("fast", BuildQuality::Fast),
        ("default", BuildQuality::Default),
        ("high", BuildQuality::High),
    ] {
        let options = BuildOptions {
            quality,
            ..Default::default()
        };
        for threads in [1, threads] {
            let pool = if threads == 1 {
                one_thread.clone()
            } else {
                Arc::new(
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .build()
                        .expect("a pool"),
                )
            };
            let name = match threads {
                1 => format!("meshray {name}"),
                n => format!("meshray {name}, {n} threads"),
            };
            out.push((
                name,
                true,
                Box::new(move || {
                    let bvh = pool.install(|| Bvh::build_with(mesh.clone(), &options));
                    Some(Box::new(Meshray::new(Arc::new(bvh), false)))
                }),
            ));
        }
    }
    #[cfg(has_tinybvh)]
    if crate::tinybvh::unavailable().is_none() {
        out.push((
            "tinybvh BVH8_CPU".into(),
            false,
            Box::new(move || {
                crate::tinybvh::TinyBvh::build(mesh).map(|e| Box::new(e) as Box<dyn Engine>)
            }),
        ));
    }
    out.push((
        "obvhs".into(),
        true,
        Box::new(move || Some(Box::new(crate::obvhs_engine::Obvhs::build(mesh)))),
    ));
    #[cfg(has_embree)]
    for (name, quality) in [
        ("low", crate::embree::BuildQuality::Low),
        ("medium", crate::embree::BuildQuality::Medium),
        ("high", crate::embree::BuildQuality::High),
    ] {
        out.push((
            format!("Embree {name}"),
            false,
            Box::new(move || {
                Some(Box::new(crate::embree::Embree::build_with_quality(
                    &peers.device,
                    mesh,
                    quality,
                )))
            }),
        ));
    }
    if let Ok(device) = &peers.embree4 {
        for (name, quality) in [("low", 0), ("medium", 1), ("high", 2)] {
            out.push((
                format!("Embree 4 {name}"),
                false,
                Box::new(move || {
                    Some(Box::new(crate::embree4::Embree4::build_with_quality(
                        device, mesh, quality,
                    )))
                }),
            ));
        }
    }
    out
}

/// Times every builder on `mesh` over `rounds` rounds and prints a line each.
pub fn run(mesh: &Mesh, name: &str, rounds: usize, peers: &crate::Peers) {
    // The clone each meshray build consumes is made inside its timing, as every peer copies
    // the mesh into its own arrays inside its own: time it alone, to subtract.
    let (_, clone_ms) = timed(|| mesh.clone());
    let builders = builders(mesh, peers);
    let mut times = vec![Vec::new(); builders.len()];
    let mut peaks = vec![None; builders.len()];
    let mut sizes = vec![None; builders.len()];
    for round in 0..rounds {
        for k in 0..builders.len() {
            let k = (k + round) % builders.len();
            let ((engine, ms), peak) = memory::peak_of(|| timed(&builders[k].2));
            times[k].push(ms);
            if round == 0 {
                peaks[k] = Some(peak);
                // Measured after the timing (meshray's figure comes from `Bvh::stats`, which
                // casts its standard rays).
                sizes[k] = engine.and_then(|e| e.structure_bytes());
            }
        }
    }
    let triangles = mesh.triangle_count() as f64;
    let (_, mesh_bytes) = memory::peak_of(|| mesh.clone());
    println!(
        "\n== {name}: {} triangles; build ms, median of {rounds} (the mesh copy meshray's builds include: {clone_ms:.1} ms); \
         peak heap beyond the mesh and the structure kept, and the structure kept, bytes/triangle ==",
        mesh.triangle_count()
    );
    for (k, (builder, rust, _)) in builders.iter().enumerate() {
        let mut t = times[k].clone();
        t.sort_by(f64::total_cmp);
        let median = t[t.len() / 2];
        let per_triangle = |b: usize| format!("{:.1}", b as f64 / triangles);
        let kept = sizes[k].map_or("?".to_string(), per_triangle);
        // The meshray builds consume a copy of the mesh, made inside the work.
        let own = if builder.starts_with("meshray") {
            mesh_bytes
        } else {
            0
        };
        let peak = match (rust, peaks[k]) {
            (true, Some(p)) => per_triangle(p.saturating_sub(own + sizes[k].unwrap_or(0))),
            _ => "n/a".to_string(),
        };
        println!("{builder:>28}: {median:8.1} ms   peak {peak:>7}   kept {kept:>7}");
    }
}
