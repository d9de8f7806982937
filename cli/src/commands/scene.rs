//! `meshray scene`: picking in a scene of several meshes placed with transforms.

use crate::args::{Args, unknown};
use crate::camera::{Placement, half_diagonal, on_image};
use crate::{Failure, mesh};
use meshray::prelude::*;
use meshray::{Bvh, Scene, SceneOptions};
use nalgebra::{Matrix4, Point2, Rotation3, Vector2, Vector3};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

/// `meshray scene --help`.
pub const USAGE: &str = "\
usage: meshray scene [MESH]... [--grid N] [--pixel X Y]... [--eye X Y Z] [--target X Y Z]
                     [--orbit YAW PITCH]

Loads each mesh once (default: the repository's assets/scene.obj) and builds its BVH once,
then places N×N instances of them on a grid, each fitted to a unit ball, turned, scaled and
every fourth mirrored, all sharing the BVHs. A camera frames the scene's box as pick frames
a mesh (800×600); each pixel is picked and the instance, its mesh, the triangle, t and the
world point are printed, with the build, placing and query times.

  --grid N             N×N instances, 1 to 100 (default 3)
  --pixel X Y          pick through pixel (X, Y), origin top left (default: the pixel over
                       the middle of each instance's box); repeat for more
  --eye X Y Z          the camera's eye (default: framing the scene's box)
  --target X Y Z       the point the camera looks at (default: the box's centre)
  --orbit YAW PITCH    without --eye: the eye's direction from the target, in degrees
";

/// The image the camera makes.
const SIZE: Vector2<f32> = Vector2::new(800.0, 600.0);

struct Options {
    meshes: Vec<PathBuf>,
    grid: usize,
    pixels: Vec<Point2<f32>>,
    placement: Placement,
}

fn parse(words: Vec<String>) -> Result<Options, Failure> {
    let mut args = Args::new(words);
    let mut options = Options {
        meshes: Vec::new(),
        grid: 3,
        pixels: Vec::new(),
        placement: Placement::default(),
    };
    while let Some(arg) = args.next_word() {
        if args.camera_flag(&arg, &mut options.placement)? {
            continue;
        }
        match arg.as_str() {
            "--grid" => options.grid = args.whole(&arg, 1..=100)?,
            "--pixel" => {
                let p = Point2::from(args.numbers(&arg)?);
                if !on_image(SIZE, p) {
                    return Err(Failure::usage(format!(
                        "pixel ({}, {}) is outside the 800×600 image",
                        p.x, p.y
                    )));
                }
                options.pixels.push(p);
            }
            flag if flag.starts_with('-') => return Err(unknown(flag)),
            path => options.meshes.push(PathBuf::from(path)),
        }
    }
    if options.meshes.is_empty() {
        options.meshes.push(mesh::default_mesh());
    }
    Ok(options)
}

/// Runs `meshray scene` on the words after its name.
///
/// # Errors
/// A usage error for a bad command line, a failure for a mesh that does not load, an
/// instance that cannot be placed or a camera that cannot look at the scene.
pub fn run(words: Vec<String>) -> Result<(), Failure> {
    let mut options = parse(words)?;
    let started = Instant::now();
    let mut bvhs = Vec::new();
    for path in &options.meshes {
        bvhs.push(Arc::new(Bvh::build(mesh::load(path)?)));
    }
    let build_ms = started.elapsed().as_secs_f64() * 1e3;
    let started = Instant::now();
    let mut scene = Scene::new();
    let mut names = Vec::new();
    let grid = options.grid;
    for i in 0..grid * grid {
        let k = i % bvhs.len();
        let bounds = bvhs[k].bounds();
        // Fit each mesh to a unit ball, then place it on the grid, turned and scaled.
        let size = half_diagonal(&bounds) as f32;
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
            .map_err(|e| Failure::failed(format!("{}: {e}", options.meshes[k].display())))?;
        names.push(options.meshes[k].display().to_string());
    }
    let place_ms = started.elapsed().as_secs_f64() * 1e3;
    let camera = options
        .placement
        .camera(&scene.bounds())
        .map_err(Failure::failed)?;
    if options.pixels.is_empty() {
        // The pixels over the middle of each instance's box.
        let clip = camera.projection(SIZE.x / SIZE.y) * camera.view();
        for id in 0..scene.len() as u32 {
            let Some(b) = scene.instance(id).map(|instance| instance.bounds) else {
                continue;
            };
            let p = clip * b.centroid().to_homogeneous();
            let (x, y) = (p.x / p.w, p.y / p.w);
            let pixel = Point2::new((x + 1.0) * 0.5 * SIZE.x, (1.0 - y) * 0.5 * SIZE.y);
            // Instances off the picture, or behind an eye placed among them, are left out.
            if p.w > 0.0 && on_image(SIZE, pixel) {
                options.pixels.push(pixel);
            }
        }
    }
    crate::say!(
        "{} meshes, {} instances; BVHs built in {build_ms:.1} ms, placed in {place_ms:.2} ms",
        options.meshes.len(),
        scene.len()
    );
    for pixel in options.pixels {
        let ray = camera.ray(SIZE, pixel)?;
        let started = Instant::now();
        let hit = scene.closest_hit(&ray, &SceneOptions::default());
        let us = started.elapsed().as_secs_f64() * 1e6;
        match hit {
            Some(h) => crate::say!(
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
            None => crate::say!("pixel ({:.0}, {:.0}): no hit, {us:.1} µs", pixel.x, pixel.y),
        }
    }
    Ok(())
}
