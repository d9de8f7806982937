//! `meshray render`: a picture of a mesh, ray-cast by the library one ray per pixel.

use crate::args::{Args, set_mesh, unknown};
use crate::camera::{Placement, on_image, orbit_direction};
use crate::picture::{Picture, check_png_path};
use crate::{Failure, mesh};
use meshray::prelude::*;
use meshray::{Bvh, QueryOptions};
use nalgebra::{Point2, Vector2};
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

/// `meshray render --help`.
pub const USAGE: &str = "\
usage: meshray render [MESH] [--size W H] [--eye X Y Z] [--target X Y Z] [--orbit YAW PITCH]
                      [--mode normal|depth|heat] [--pick X Y] [--out FILE.png]

Ray-casts a PNG of a mesh, one ray per pixel centre, rows in parallel. MESH is any file
meshray reads (default: the repository's assets/scene.obj).

  --size W H           the picture's size in pixels, 1 to 8192 each (default 640 480)
  --eye X Y Z          the camera's eye; from inside a room or a courtyard too (default:
                       2.2 half-diagonals of the mesh's bounds from their centre)
  --target X Y Z       the point the camera looks at (default: the bounds' centre)
  --orbit YAW PITCH    without --eye: the eye's direction from the target in degrees, yaw
                       about +y from +z, pitch up (default 25 20)
  --mode MODE          normal (default): grey by how squarely each front face meets its
                       ray, back faces dark red; depth: nearer is brighter; heat: the boxes
                       plus triangles each ray tested, blue to red, the scale along the bottom
  --pick X Y           the pixel whose triangle is drawn yellow (default: the centre)
  --out FILE.png       where to write the picture (default render.png); PNG only
";

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Normal,
    Depth,
    Heat,
}

struct Options {
    mesh: PathBuf,
    size: (u32, u32),
    placement: Placement,
    mode: Mode,
    pick: Option<Point2<f32>>,
    out: PathBuf,
}

fn parse(words: Vec<String>) -> Result<Options, Failure> {
    let mut args = Args::new(words);
    let mut mesh_given = false;
    let mut options = Options {
        mesh: mesh::default_mesh(),
        size: (640, 480),
        placement: Placement::default(),
        mode: Mode::Normal,
        pick: None,
        out: PathBuf::from("render.png"),
    };
    while let Some(arg) = args.next_word() {
        if args.camera_flag(&arg, &mut options.placement)? {
            continue;
        }
        match arg.as_str() {
            "--size" => options.size = (args.whole(&arg, 1..=8192)?, args.whole(&arg, 1..=8192)?),
            "--pick" => options.pick = Some(Point2::from(args.numbers(&arg)?)),
            "--mode" => {
                let choices = [
                    ("normal", Mode::Normal),
                    ("depth", Mode::Depth),
                    ("heat", Mode::Heat),
                ];
                options.mode = args.choice(&arg, &choices)?;
            }
            "--out" => options.out = PathBuf::from(args.value(&arg, "a file name ending in .png")?),
            flag if flag.starts_with('-') => return Err(unknown(flag)),
            path => set_mesh(&mut options.mesh, &mut mesh_given, path, "render")?,
        }
    }
    if options.placement.eye.is_none() && options.placement.direction.is_none() {
        options.placement.direction = Some(orbit_direction(25.0, 20.0));
    }
    let size = Vector2::new(options.size.0 as f32, options.size.1 as f32);
    if let Some(p) = options.pick
        && !on_image(size, p)
    {
        return Err(Failure::usage(format!(
            "--pick ({}, {}) is outside the {}×{} picture",
            p.x, p.y, options.size.0, options.size.1
        )));
    }
    // Refused now, before any work, and before any file is made.
    check_png_path(&options.out)?;
    Ok(options)
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

/// What one pixel's ray found: the work it cost (boxes + triangles tested) and, for a hit,
/// its distance, how squarely it faces the ray, which face and which triangle.
struct Sample {
    work: f32,
    hit: Option<(f32, f32, bool, u32)>,
}

/// Runs `meshray render` on the words after its name.
///
/// # Errors
/// A usage error for a bad command line (a name not ending in `.png` among them, refused
/// before anything is written), a failure for a mesh that does not load, a camera that
/// cannot look at it or a file that cannot be written.
pub fn run(words: Vec<String>) -> Result<(), Failure> {
    let options = parse(words)?;
    let started = Instant::now();
    let bvh = Bvh::build(mesh::load(&options.mesh)?);
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    let (w, h) = options.size;
    let viewport = Vector2::new(w as f32, h as f32);
    let camera = options
        .placement
        .camera(&bvh.bounds())
        .map_err(Failure::failed)?;
    let query = QueryOptions::default();
    let pick = options.pick.unwrap_or(Point2::from(viewport * 0.5));
    // The camera as picking sees it: `projection · view` inverted once, not per pixel.
    let picking = camera.picking(viewport)?;
    let picked = picking.pixel_ray(pick)?;
    let picked = bvh.closest_hit(&picked, &query).map(|hit| hit.triangle);

    let started = Instant::now();
    let samples: Vec<Sample> = (0..h)
        .into_par_iter()
        .flat_map_iter(|y| {
            let (bvh, picking) = (&bvh, &picking);
            (0..w).map(move |x| {
                let pixel = Point2::new(x as f32 + 0.5, y as f32 + 0.5);
                let Ok(ray) = picking.pixel_ray(pixel) else {
                    return Sample {
                        work: 0.0,
                        hit: None,
                    };
                };
                let (hit, cost) = meshray::diagnostics::closest_hit_with_cost(bvh, &ray, &query);
                Sample {
                    work: (cost.boxes + cost.triangles) as f32,
                    hit: hit.map(|hit| {
                        let facing = hit.normal.dot(&ray.direction()).abs();
                        (hit.t, facing, hit.front_face, hit.triangle)
                    }),
                }
            })
        })
        .collect();
    let render_ms = started.elapsed().as_secs_f64() * 1e3;
    let (near, far) = samples
        .iter()
        .filter_map(|s| s.hit)
        .fold((f32::INFINITY, 0.0f32), |(lo, hi), s| {
            (lo.min(s.0), hi.max(s.0))
        });
    let max_cost = samples.iter().map(|s| s.work).fold(1.0f32, f32::max);
    let mut picture = Picture::new(w, h);
    for (i, sample) in samples.iter().enumerate() {
        let (x, y) = (i as u32 % w, i as u32 / w);
        let colour = match (options.mode, sample.hit) {
            (Mode::Heat, _) => heat_colour(sample.work / max_cost),
            (_, None) => [30, 30, 38],
            (_, Some((_, _, _, t))) if Some(t) == picked => [255, 220, 0],
            (Mode::Normal, Some((_, facing, front, _))) => {
                let v = (40.0 + 215.0 * facing) as u8;
                if front { [v, v, v] } else { [v, v / 4, v / 4] }
            }
            (Mode::Depth, Some((t, _, _, _))) => {
                let d = 1.0 - (t - near) / (far - near).max(f32::MIN_POSITIVE);
                let v = (30.0 + 225.0 * d) as u8;
                [v, v, v]
            }
        };
        picture.set(x, y, colour);
    }
    if options.mode == Mode::Heat {
        // The colour scale along the bottom: 0 on the left, the maximum on the right.
        for x in 0..w {
            for y in h.saturating_sub(8)..h {
                picture.set(x, y, heat_colour(x as f32 / (w - 1).max(1) as f32));
            }
        }
    }
    picture.save_png(&options.out)?;
    let e = camera.eye();
    crate::say!(
        "{}: {} triangles, loaded and built in {load_ms:.0} ms; eye ({}, {}, {}); {w}×{h} in {render_ms:.0} ms ({:.2} Mrays/s on {} threads); picked {}; {}wrote {}",
        options.mesh.display(),
        bvh.mesh().triangle_count(),
        e.x,
        e.y,
        e.z,
        f64::from(w * h) / render_ms / 1e3,
        rayon::current_num_threads(),
        picked.map_or("nothing".to_string(), |t| format!("triangle {t}")),
        if options.mode == Mode::Heat {
            format!("heat scale 0 (blue) to {max_cost:.0} boxes + triangles (red); ")
        } else {
            String::new()
        },
        options.out.display()
    );
    Ok(())
}
