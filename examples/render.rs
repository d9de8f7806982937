//! Ray-casts a picture of a mesh into a PNG: shaded by normal or depth with a picked triangle
//! highlighted, or a heatmap of what the BVH tested per pixel.
//!
//! ```text
//! cargo run --release --example render -- [MESH] [--size W H] [--orbit YAW PITCH]
//!     [--mode normal|depth|heat] [--pick X Y] [--out FILE.png]
//! ```
//!
//! The camera frames the mesh's bounds from `--orbit` degrees (default 25 20: yaw about +y
//! from +z, pitch up), vertical field of view 45°, at 2.2 half-diagonals. `normal` shades
//! by the geometric normal (front faces bright, back faces dark red), `depth` by distance,
//! `heat` colours each pixel by the boxes plus triangles its ray tested (blue → red, scale
//! printed and drawn as a bar at the bottom). `--pick X Y` highlights the triangle under that
//! pixel (default: the centre) in yellow. Rows are rendered in parallel (rayon). Writes
//! `render.png` unless `--out`.

#[path = "common/mod.rs"]
mod common;

use meshray::{Bvh, Mesh, QueryOptions, pixel_ray};
use nalgebra::{Point2, Vector2, Vector3};
use rayon::prelude::*;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Normal,
    Depth,
    Heat,
}

struct Args {
    mesh: String,
    size: (u32, u32),
    orbit: (f32, f32),
    mode: Mode,
    pick: Option<(f32, f32)>,
    out: String,
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut parsed = Args {
        mesh: concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj").to_string(),
        size: (640, 480),
        orbit: (25.0, 20.0),
        mode: Mode::Normal,
        pick: None,
        out: "render.png".to_string(),
    };
    while let Some(arg) = args.next() {
        let mut number = |flag: &str| -> Result<f32, String> {
            args.next()
                .and_then(|w| w.parse::<f32>().ok())
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("{flag} needs numbers"))
        };
        match arg.as_str() {
            "--size" => {
                let (w, h) = (number("--size")?, number("--size")?);
                if !(1.0..=8192.0).contains(&w) || !(1.0..=8192.0).contains(&h) {
                    return Err("--size: 1 to 8192 pixels each way".into());
                }
                parsed.size = (w as u32, h as u32);
            }
            "--orbit" => parsed.orbit = (number("--orbit")?, number("--orbit")?),
            "--pick" => parsed.pick = Some((number("--pick")?, number("--pick")?)),
            "--mode" => {
                parsed.mode = match args.next().as_deref() {
                    Some("normal") => Mode::Normal,
                    Some("depth") => Mode::Depth,
                    Some("heat") => Mode::Heat,
                    other => {
                        return Err(format!("--mode takes normal, depth or heat, not {other:?}"));
                    }
                }
            }
            "--out" => parsed.out = args.next().ok_or("--out needs a file")?,
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            path => parsed.mesh = path.to_string(),
        }
    }
    Ok(parsed)
}

/// Blue → cyan → green → yellow → red for `x` in [0, 1].
fn heat_colour(x: f32) -> [u8; 3] {
    let x = x.clamp(0.0, 1.0) * 4.0;
    let (r, g, b) = match x as u32 {
        0 => (0.0, x, 1.0),
        1 => (0.0, 1.0, 2.0 - x),
        2 => (x - 2.0, 1.0, 0.0),
        _ => (1.0, (4.0 - x).max(0.0), 0.0),
    };
    [(r * 255.0) as u8, (g * 255.0) as u8, (b * 255.0) as u8]
}

fn run(args: &Args) -> Result<(), String> {
    let started = Instant::now();
    let bvh = Bvh::build(Mesh::load(&args.mesh).map_err(|e| e.to_string())?);
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    let (w, h) = args.size;
    let (yaw, pitch) = (args.orbit.0.to_radians(), args.orbit.1.to_radians());
    let direction = Vector3::new(
        yaw.sin() * pitch.cos(),
        pitch.sin(),
        yaw.cos() * pitch.cos(),
    );
    let (view, projection) = common::framing(&bvh.bounds(), direction, w as f32 / h as f32);
    let viewport = Vector2::new(w as f32, h as f32);
    let options = QueryOptions::default();
    let pick = args.pick.unwrap_or((w as f32 * 0.5, h as f32 * 0.5));
    let picked = pixel_ray(&view, &projection, viewport, Point2::new(pick.0, pick.1))
        .map_err(|e| e.to_string())?;
    let picked = bvh.closest_hit(&picked, &options).map(|hit| hit.triangle);

    let started = Instant::now();
    // Per pixel: the work its ray cost (boxes + triangles tested) and, for a hit, its
    // distance, how squarely it faces the ray, which face and which triangle. Rows in parallel.
    type Sample = (f32, Option<(f32, f32, bool, u32)>);
    let samples: Vec<Sample> = (0..h)
        .into_par_iter()
        .flat_map_iter(|y| {
            let (bvh, view, projection) = (&bvh, &view, &projection);
            (0..w).map(move |x| {
                let pixel = Point2::new(x as f32 + 0.5, y as f32 + 0.5);
                let Ok(ray) = pixel_ray(view, projection, viewport, pixel) else {
                    return (0.0, None);
                };
                let (hit, cost) = bvh.closest_hit_with_cost(&ray, &options);
                let work = (cost.boxes + cost.triangles) as f32;
                let shade = hit.map(|hit| {
                    let facing = hit.normal.dot(&ray.direction()).abs();
                    (hit.t, facing, hit.front_face, hit.triangle)
                });
                (work, shade)
            })
        })
        .collect();
    let render_ms = started.elapsed().as_secs_f64() * 1e3;
    let (near, far) = samples
        .iter()
        .filter_map(|s| s.1)
        .fold((f32::INFINITY, 0.0f32), |(lo, hi), s| {
            (lo.min(s.0), hi.max(s.0))
        });
    let max_cost = samples.iter().map(|s| s.0).fold(1.0f32, f32::max);
    let mut image = image::RgbImage::new(w, h);
    for (i, (work, sample)) in samples.iter().enumerate() {
        let (x, y) = (i as u32 % w, i as u32 / w);
        let colour = match (args.mode, sample) {
            (Mode::Heat, _) => heat_colour(work / max_cost),
            (_, None) => [30, 30, 38],
            (_, Some((_, _, _, t))) if Some(*t) == picked => [255, 220, 0],
            (Mode::Normal, Some((_, facing, front, _))) => {
                let v = (40.0 + 215.0 * facing) as u8;
                if *front { [v, v, v] } else { [v, v / 4, v / 4] }
            }
            (Mode::Depth, Some((t, _, _, _))) => {
                let d = 1.0 - (t - near) / (far - near).max(1e-6);
                let v = (30.0 + 225.0 * d) as u8;
                [v, v, v]
            }
        };
        image.put_pixel(x, y, image::Rgb(colour));
    }
    if args.mode == Mode::Heat {
        // The colour scale along the bottom: 0 on the left, the maximum on the right.
        for x in 0..w {
            for y in h.saturating_sub(8)..h {
                image.put_pixel(
                    x,
                    y,
                    image::Rgb(heat_colour(x as f32 / (w - 1).max(1) as f32)),
                );
            }
        }
    }
    image
        .save(&args.out)
        .map_err(|e| format!("{}: {e}", args.out))?;
    println!(
        "{}: {} triangles, loaded and built in {load_ms:.0} ms; {w}×{h} in {render_ms:.0} ms ({:.2} Mrays/s on {} threads); picked {}; {}wrote {}",
        args.mesh,
        bvh.mesh().triangle_count(),
        (w * h) as f64 / render_ms / 1e3,
        rayon::current_num_threads(),
        picked.map_or("nothing".to_string(), |t| format!("triangle {t}")),
        if args.mode == Mode::Heat {
            format!("heat scale 0 (blue) to {max_cost:.0} boxes + triangles (red); ")
        } else {
            String::new()
        },
        args.out
    );
    Ok(())
}

fn main() -> ExitCode {
    match parse_args().and_then(|args| run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("render: {message}");
            ExitCode::FAILURE
        }
    }
}
