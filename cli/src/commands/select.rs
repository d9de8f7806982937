//! `meshray select`: box select, the triangles under a screen rectangle, all of them and only
//! the visible ones.

use crate::args::{Args, set_mesh, unknown};
use crate::camera::{Placement, on_image};
use crate::{Failure, mesh};
use meshray::selection::Region;
use meshray::{Bvh, Camera, QueryOptions};
use nalgebra::{Point2, Vector2};
use std::path::PathBuf;
use std::time::Instant;

/// `meshray select --help`.
pub const USAGE: &str = "\
usage: meshray select [MESH] [--rect X0 Y0 X1 Y1] [--samples N] [--size W H] [--eye X Y Z]
                      [--target X Y Z] [--orbit YAW PITCH]

Box select under a rectangle of the camera's image: how many triangles overlap the frustum
under it, and how many are visible there (the closest hit of at least one sample ray: pixel
centres, and an N×N grid per pixel with --samples), with the time each query took. MESH is
any file meshray reads (default: the repository's assets/scene.obj).

  --rect X0 Y0 X1 Y1   two opposite corners of the rectangle, in pixels from the top left
                       (default: the middle third of the image)
  --samples N          also count the visible triangles with N×N sample rays per pixel,
                       1 to 64 (default 1: pixel centres only)
  --size W H           the image's size in pixels (default 800 600)
  --eye X Y Z          the camera's eye (default: framing the mesh as pick does)
  --target X Y Z       the point the camera looks at (default: the bounds' centre)
  --orbit YAW PITCH    without --eye: the eye's direction from the target, in degrees
";

struct Options {
    mesh: PathBuf,
    rect: Option<(Point2<f32>, Point2<f32>)>,
    samples: u32,
    size: Vector2<f32>,
    placement: Placement,
}

fn parse(words: Vec<String>) -> Result<Options, Failure> {
    let mut args = Args::new(words);
    let mut mesh_given = false;
    let mut options = Options {
        mesh: mesh::default_mesh(),
        rect: None,
        samples: 1,
        size: Vector2::new(800.0, 600.0),
        placement: Placement::default(),
    };
    while let Some(arg) = args.next_word() {
        if args.camera_flag(&arg, &mut options.placement)? {
            continue;
        }
        match arg.as_str() {
            "--rect" => {
                let [x0, y0, x1, y1] = args.numbers(&arg)?;
                options.rect = Some((Point2::new(x0, y0), Point2::new(x1, y1)));
            }
            "--samples" => options.samples = args.whole(&arg, 1..=64)?,
            "--size" => {
                let (w, h): (u16, u16) = (args.whole(&arg, 1..=8192)?, args.whole(&arg, 1..=8192)?);
                options.size = Vector2::new(f32::from(w), f32::from(h));
            }
            flag if flag.starts_with('-') => return Err(unknown(flag)),
            path => set_mesh(&mut options.mesh, &mut mesh_given, path, "select")?,
        }
    }
    if let Some((a, b)) = options.rect {
        for p in [a, b] {
            if !on_image(options.size, p) {
                return Err(Failure::usage(format!(
                    "the corner ({}, {}) of --rect is outside the {}×{} image",
                    p.x, p.y, options.size.x, options.size.y
                )));
            }
        }
        if a.x == b.x || a.y == b.y {
            return Err(Failure::usage(
                "--rect needs a width and a height: its corners share an x or a y",
            ));
        }
    }
    Ok(options)
}

/// Runs `meshray select` on the words after its name.
///
/// # Errors
/// A usage error for a bad command line, a failure for a mesh that does not load or a
/// camera that cannot look at it.
pub fn run(words: Vec<String>) -> Result<(), Failure> {
    let options = parse(words)?;
    let started = Instant::now();
    let bvh = Bvh::build(mesh::load(&options.mesh)?);
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    let camera = options
        .placement
        .camera(&bvh.bounds())
        .map_err(Failure::failed)?;
    let (view, projection) = (
        camera.view(),
        camera.projection(options.size.x / options.size.y),
    );
    let (w, h) = (options.size.x, options.size.y);
    let (a, b) = options.rect.unwrap_or((
        Point2::new(w / 3.0, h / 3.0),
        Point2::new(2.0 * w / 3.0, 2.0 * h / 3.0),
    ));
    crate::say!(
        "{}: {} triangles, loaded and built in {load_ms:.0} ms; rectangle ({}, {}) – ({}, {}) of {w}×{h}",
        options.mesh.display(),
        bvh.mesh().triangle_count(),
        a.x,
        a.y,
        b.x,
        b.y
    );
    let started = Instant::now();
    let camera = Camera::new(view, projection, options.size)?;
    let all = bvh.triangles_in(&Region::Frustum(camera.frustum(a, b)?));
    let all_ms = started.elapsed().as_secs_f64() * 1e3;
    crate::say!(
        "in the frustum:  {:>9} triangles, {all_ms:.2} ms",
        all.len()
    );
    let mut grids = vec![1];
    if options.samples > 1 {
        grids.push(options.samples);
    }
    for n in grids {
        let started = Instant::now();
        let visible =
            meshray::picking::visible_triangles(&bvh, &camera, a, b, n, &QueryOptions::default())?;
        let ms = started.elapsed().as_secs_f64() * 1e3;
        crate::say!(
            "visible ({n}×{n} per pixel): {:>6} triangles, {ms:.2} ms",
            visible.len()
        );
    }
    Ok(())
}
