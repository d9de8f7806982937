//! Box select: the triangles under a screen rectangle, all of them and only the visible ones.
//!
//! ```text
//! cargo run --release --example select -- [MESH] [--rect X0 Y0 X1 Y1] [--samples N]
//! ```
//!
//! The camera frames the mesh as `pick`'s does (800×600). Prints how many triangles overlap
//! the frustum under the rectangle (default: the middle third of the image) and how many are
//! visible there (the closest hit of at least one sample ray: pixel centres, or an N×N grid
//! per pixel with `--samples`), with the time each query took.

#[path = "common/mod.rs"]
mod common;

use meshray::{Bvh, Frustum, Mesh, QueryOptions};
use nalgebra::{Point2, Vector2};
use std::process::ExitCode;
use std::time::Instant;

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let mut path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj").to_string();
    let (mut a, mut b, mut samples) = (
        Point2::new(800.0 / 3.0, 200.0),
        Point2::new(1600.0 / 3.0, 400.0),
        1u32,
    );
    while let Some(arg) = args.next() {
        let mut number = |flag: &str| -> Result<f32, String> {
            args.next()
                .and_then(|w| w.parse().ok())
                .ok_or_else(|| format!("{flag} needs numbers"))
        };
        match arg.as_str() {
            "--rect" => {
                a = Point2::new(number("--rect")?, number("--rect")?);
                b = Point2::new(number("--rect")?, number("--rect")?);
            }
            "--samples" => samples = number("--samples")? as u32,
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            p => path = p.to_string(),
        }
    }
    let started = Instant::now();
    let bvh = Bvh::build(Mesh::load(&path).map_err(|e| e.to_string())?);
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    let (view, projection) =
        common::framing(&bvh.bounds(), common::default_direction(), 800.0 / 600.0);
    let viewport = Vector2::new(800.0, 600.0);
    println!(
        "{path}: {} triangles, loaded and built in {load_ms:.0} ms; rectangle ({}, {}) – ({}, {})",
        bvh.mesh().triangle_count(),
        a.x,
        a.y,
        b.x,
        b.y
    );
    let started = Instant::now();
    let frustum =
        Frustum::from_screen_rect(&view, &projection, viewport, a, b).map_err(|e| e.to_string())?;
    let all = bvh.triangles_in_frustum(&frustum);
    let all_ms = started.elapsed().as_secs_f64() * 1e3;
    println!(
        "in the frustum:  {:>9} triangles, {all_ms:.2} ms",
        all.len()
    );
    for n in [1, samples.max(1)] {
        let started = Instant::now();
        let visible = bvh
            .visible_triangles(
                &view,
                &projection,
                viewport,
                a,
                b,
                n,
                &QueryOptions::default(),
            )
            .map_err(|e| e.to_string())?;
        let ms = started.elapsed().as_secs_f64() * 1e3;
        println!(
            "visible ({n}×{n} per pixel): {:>6} triangles, {ms:.2} ms",
            visible.len()
        );
        if n == samples {
            break;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("select: {message}");
            ExitCode::FAILURE
        }
    }
}
