//! `meshray slice`: a picture of a plane through a mesh, coloured by signed distance, so a
//! user sees where the library puts "inside" (by winding number), on closed meshes and open
//! ones alike.

use crate::args::{Args, set_mesh, unknown};
use crate::picture::{Picture, check_png_path};
use crate::{Failure, mesh};
use meshray::Bvh;
use meshray::prelude::*;
use nalgebra::Point3;
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Instant;

/// `meshray slice --help`.
pub const USAGE: &str = "\
usage: meshray slice [MESH] [--axis x|y|z] [--at F] [--width W] [--out FILE.png]

Draws the plane across the mesh's box at right angles to an axis, each pixel coloured by
the signed distance from its centre to the mesh: blue inside (winding number at least 1/2,
right on open meshes and soups too), orange outside, darker farther from the surface, with
a band every tenth of the largest distance and the surface itself (distance 0, where inside
meets outside or the plane grazes the mesh) in white. MESH is any file meshray reads
(default: the repository's assets/scene.obj).

  --axis A          the axis the plane is at right angles to (default z)
  --at F            where along that axis, as a fraction of the box from its low side (a
                    number from 0 to 1, default 0.5)
  --width W         the picture's width in pixels, 16 to 4096 (default 640); its height
                    follows the box's other two sides, which it shows grown by a tenth
  --out FILE.png    where to write the picture (default slice.png); PNG only
";

struct Options {
    mesh: PathBuf,
    axis: usize,
    at: f32,
    width: u32,
    out: PathBuf,
}

fn parse(words: Vec<String>) -> Result<Options, Failure> {
    let mut args = Args::new(words);
    let mut mesh_given = false;
    let mut options = Options {
        mesh: mesh::default_mesh(),
        axis: 2,
        at: 0.5,
        width: 640,
        out: PathBuf::from("slice.png"),
    };
    while let Some(arg) = args.next_word() {
        match arg.as_str() {
            "--axis" => options.axis = args.choice(&arg, &[("x", 0), ("y", 1), ("z", 2)])?,
            "--at" => {
                let [at] = args.numbers(&arg)?;
                if !(0.0..=1.0).contains(&at) {
                    return Err(Failure::usage(format!(
                        "--at takes a number from 0 to 1, not {at}"
                    )));
                }
                options.at = at;
            }
            "--width" => options.width = args.whole(&arg, 16..=4096)?,
            "--out" => options.out = PathBuf::from(args.value(&arg, "a file name ending in .png")?),
            flag if flag.starts_with('-') => return Err(unknown(flag)),
            path => set_mesh(&mut options.mesh, &mut mesh_given, path, "slice")?,
        }
    }
    check_png_path(&options.out)?;
    Ok(options)
}

/// Blue inside, orange outside, darker with distance (`x` = |distance| / largest, in 0..1),
/// in bands of a tenth.
fn colour(signed: f64, largest: f64) -> [u8; 3] {
    let x = (signed.abs() / largest).clamp(0.0, 1.0);
    let band = if (x * 10.0).fract() < 0.08 { 0.82 } else { 1.0 };
    let shade = (1.0 - 0.75 * x) * band;
    let base: [f64; 3] = if signed < 0.0 {
        [70.0, 130.0, 235.0]
    } else {
        [245.0, 150.0, 60.0]
    };
    base.map(|c| (c * shade) as u8)
}

/// Runs `meshray slice` on the words after its name.
///
/// # Errors
/// A usage error for a bad command line, a failure for a mesh that does not load or a file
/// that cannot be written.
pub fn run(words: Vec<String>) -> Result<(), Failure> {
    let options = parse(words)?;
    let started = Instant::now();
    let bvh = Bvh::build(mesh::load(&options.mesh)?);
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    let bounds = bvh.bounds();
    // The picture's axes, right and up: y up where it can be (x: z right, y up; y: x
    // right, z up, seen from above; z: x right, y up).
    let (a, axis, b) = match options.axis {
        0 => (2, 0, 1),
        1 => (0, 1, 2),
        _ => (0, 2, 1),
    };
    let (lo, hi) = (bounds.min, bounds.max);
    let grow = |k: usize| 0.1 * (hi[k] - lo[k]).max(f32::MIN_POSITIVE);
    let (a0, a1) = (lo[a] - grow(a), hi[a] + grow(a));
    let (b0, b1) = (lo[b] - grow(b), hi[b] + grow(b));
    let level = lo[axis] + options.at * (hi[axis] - lo[axis]);
    let w = options.width;
    let h =
        ((f64::from(w) * f64::from(b1 - b0) / f64::from(a1 - a0)).round() as u32).clamp(1, 4096);
    let pixel = |x: u32, y: u32| {
        let mut p = Point3::origin();
        p[a] = a0 + (a1 - a0) * (x as f32 + 0.5) / w as f32;
        p[b] = b1 - (b1 - b0) * (y as f32 + 0.5) / h as f32;
        p[axis] = level;
        p
    };
    let started = Instant::now();
    let distances: Vec<f64> = (0..h)
        .into_par_iter()
        .flat_map_iter(|y| {
            let bvh = &bvh;
            (0..w).map(move |x| {
                bvh.signed_distance(pixel(x, y), f32::INFINITY, &Default::default())
                    .unwrap_or(f64::NAN)
            })
        })
        .collect();
    let slice_ms = started.elapsed().as_secs_f64() * 1e3;
    let largest = distances
        .iter()
        .map(|d| d.abs())
        .filter(|d| d.is_finite())
        .fold(f64::MIN_POSITIVE, f64::max);
    let at = |x: u32, y: u32| distances[(y * w + x) as usize];
    let mut picture = Picture::new(w, h);
    let mut inside = 0usize;
    for y in 0..h {
        for x in 0..w {
            let d = at(x, y);
            inside += usize::from(d < 0.0);
            // The surface: the sign changes towards the next pixel right or down, or the
            // plane runs within a pixel's width of the mesh.
            let step = f64::from(a1 - a0) / f64::from(w);
            let edge = (x + 1 < w && (at(x + 1, y) < 0.0) != (d < 0.0))
                || (y + 1 < h && (at(x, y + 1) < 0.0) != (d < 0.0))
                || d.abs() < 0.5 * step;
            picture.set(
                x,
                y,
                if edge {
                    [255, 255, 255]
                } else {
                    colour(d, largest)
                },
            );
        }
    }
    picture.save_png(&options.out)?;
    crate::say!(
        "{}: {} triangles, loaded and built in {load_ms:.0} ms; the plane {} = {level} across {w}×{h} pixels in {slice_ms:.0} ms on {} threads; {:.1} % inside; largest distance {largest:.4}; wrote {}",
        options.mesh.display(),
        bvh.mesh().triangle_count(),
        ["x", "y", "z"][axis],
        rayon::current_num_threads(),
        100.0 * inside as f64 / f64::from(w * h),
        options.out.display()
    );
    Ok(())
}
