//! Picks in a scene of several meshes placed with transforms.
//!
//! ```text
//! cargo run --release --example scene -- [MESH]... [--grid N] [--pixel X Y]...
//! ```
//!
//! Loads each mesh once (default `assets/scene.obj`), builds its BVH once, and places
//! `N × N` instances (default 3) on a grid, each turned, scaled and some mirrored, sharing the
//! BVHs. A camera frames the scene's box as `pick` frames a mesh (800×600); each
//! `--pixel` (default: the pixel over the middle of each instance's box) is picked and the instance, its mesh,
//! the triangle, `t` and the world point are printed, with build and query times.

#[path = "common/mod.rs"]
mod common;

use meshray::{Bvh, Mesh, Scene, SceneOptions, pixel_ray};
use nalgebra::{Matrix4, Point2, Rotation3, Vector2, Vector3};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (mut paths, mut grid, mut pixels) = (Vec::new(), 3usize, Vec::new());
    while let Some(arg) = args.next() {
        let mut number = |flag: &str| -> Result<f32, String> {
            args.next()
                .and_then(|w| w.parse().ok())
                .ok_or_else(|| format!("{flag} needs a number"))
        };
        match arg.as_str() {
            "--grid" => grid = number("--grid")?.clamp(1.0, 100.0) as usize,
            "--pixel" => pixels.push(Point2::new(number("--pixel")?, number("--pixel")?)),
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            path => paths.push(path.to_string()),
        }
    }
    if paths.is_empty() {
        paths.push(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj").to_string());
    }
    let started = Instant::now();
    let mut bvhs = Vec::new();
    for path in &paths {
        let mesh = Mesh::load(path).map_err(|e| e.to_string())?;
        bvhs.push(Arc::new(Bvh::build(mesh)));
    }
    let build_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    let mut scene = Scene::new();
    let mut names = Vec::new();
    for i in 0..grid * grid {
        let k = i % bvhs.len();
        let bounds = bvhs[k].bounds();
        let size = (bounds.extent().norm() * 0.5).max(1e-6);
        // Fit each mesh to a unit ball, then place it on the grid, turned and scaled.
        let fit =
            Matrix4::new_scaling(1.0 / size) * Matrix4::new_translation(&-bounds.centroid().coords);
        let (x, z) = ((i % grid) as f32 * 2.5, (i / grid) as f32 * 2.5);
        let turn = Rotation3::from_axis_angle(&Vector3::y_axis(), i as f32 * 0.7).to_homogeneous();
        let mirror = if i % 4 == 3 { -1.0 } else { 1.0 };
        let scale =
            Matrix4::new_nonuniform_scaling(&Vector3::new(mirror, 1.0 + 0.1 * (i % 3) as f32, 1.0));
        let transform = Matrix4::new_translation(&Vector3::new(x, 0.0, z)) * turn * scale * fit;
        scene
            .add(bvhs[k].clone(), transform)
            .map_err(|e| e.to_string())?;
        names.push(&paths[k]);
    }
    let place_ms = started.elapsed().as_secs_f64() * 1e3;
    // Frame the scene's box as `pick` frames a mesh.
    let (view, projection) =
        common::framing(&scene.bounds(), common::default_direction(), 800.0 / 600.0);
    if pixels.is_empty() {
        // The pixels over the middle of each instance's box.
        let clip = projection * view;
        for id in 0..scene.len() as u32 {
            let b = scene.instance_bounds(id).expect("an instance");
            let p = clip * b.centroid().to_homogeneous();
            let (x, y) = (p.x / p.w, p.y / p.w);
            pixels.push(Point2::new((x + 1.0) * 400.0, (1.0 - y) * 300.0));
        }
    }
    println!(
        "{} meshes, {} instances; BVHs built in {build_ms:.1} ms, placed in {place_ms:.2} ms",
        paths.len(),
        scene.len()
    );
    for pixel in pixels {
        let ray = pixel_ray(&view, &projection, Vector2::new(800.0, 600.0), pixel)
            .map_err(|e| e.to_string())?;
        let started = Instant::now();
        let hit = scene.closest_hit(&ray, &SceneOptions::default());
        let us = started.elapsed().as_secs_f64() * 1e6;
        match hit {
            Some(h) => println!(
                "pixel ({:.0}, {:.0}): instance {} ({}), triangle {}, t = {:.4}, point ({:.3}, {:.3}, {:.3}), {us:.1} µs",
                pixel.x,
                pixel.y,
                h.instance,
                names[h.instance as usize],
                h.hit.triangle,
                h.hit.t,
                h.hit.point.x,
                h.hit.point.y,
                h.hit.point.z
            ),
            None => println!("pixel ({:.0}, {:.0}): no hit, {us:.1} µs", pixel.x, pixel.y),
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("scene: {message}");
            ExitCode::FAILURE
        }
    }
}
