//! Picks triangles in a mesh: the main job of meshray, from the command line.
//!
//! ```text
//! cargo run --release --example pick -- [MESH] [--pixel X Y]... [--size W H]
//!     [--ray OX OY OZ DX DY DZ]... [--cull none|back|front] [--watertight] [--json]
//! ```
//!
//! MESH is any file `Mesh::load` reads: OBJ, STL, PLY, glTF/GLB (by extension). With no
//! arguments it loads `assets/scene.obj`, frames it with the default camera (from
//! the bounds' centre c, at c + 2.2·h·normalize(0.45, 0.35, 1) with h half the bounds'
//! diagonal, vertical field of view 45°) and picks through the centre of an 800×600 image.
//! `--pixel` picks through a pixel of that camera's image (pixel coordinates, origin top
//! left, so `--pixel 399.5 299.5` is the centre pixel's centre); `--ray` casts a ray of
//! your own (direction as given, t from 0 to infinity). Rays are answered in the order given.
//! `--watertight` uses the watertight triangle test; `--json` prints one JSON object per ray
//! and nothing else.

#[path = "common/mod.rs"]
mod common;

use common::json_string;
use meshray::{Bvh, Culling, Mesh, QueryOptions, Ray, pixel_ray};
use nalgebra::{Point2, Point3, Vector2, Vector3};
use std::process::ExitCode;
use std::time::Instant;

struct Args {
    mesh: String,
    size: (f32, f32),
    picks: Vec<Pick>,
    culling: Culling,
    watertight: bool,
    json: bool,
}

enum Pick {
    Pixel(f32, f32),
    Ray(Ray),
}

fn numbers<const N: usize>(
    args: &mut impl Iterator<Item = String>,
    flag: &str,
) -> Result<[f32; N], String> {
    let mut out = [0.0; N];
    for x in &mut out {
        let word = args
            .next()
            .ok_or_else(|| format!("{flag} needs {N} numbers"))?;
        *x = word
            .parse()
            .map_err(|_| format!("{flag}: {word:?} is not a number"))?;
    }
    Ok(out)
}

fn parse_args() -> Result<Args, String> {
    let mut args = std::env::args().skip(1);
    let mut parsed = Args {
        mesh: concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj").to_string(),
        size: (800.0, 600.0),
        picks: Vec::new(),
        culling: Culling::None,
        watertight: false,
        json: false,
    };
    let mut mesh_given = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--pixel" => {
                let [x, y] = numbers(&mut args, "--pixel")?;
                parsed.picks.push(Pick::Pixel(x, y));
            }
            "--size" => {
                let [w, h] = numbers(&mut args, "--size")?;
                if !(w >= 1.0 && h >= 1.0 && w.is_finite() && h.is_finite()) {
                    return Err(format!(
                        "--size {w} {h}: width and height must be at least 1"
                    ));
                }
                parsed.size = (w, h);
            }
            "--ray" => {
                let [ox, oy, oz, dx, dy, dz] = numbers(&mut args, "--ray")?;
                parsed.picks.push(Pick::Ray(Ray::new(
                    Point3::new(ox, oy, oz),
                    Vector3::new(dx, dy, dz),
                )));
            }
            "--cull" => {
                parsed.culling = match args.next().as_deref() {
                    Some("none") => Culling::None,
                    Some("back") => Culling::Back,
                    Some("front") => Culling::Front,
                    other => {
                        return Err(format!("--cull takes none, back or front, not {other:?}"));
                    }
                }
            }
            "--json" => parsed.json = true,
            "--watertight" => parsed.watertight = true,
            "-h" | "--help" => {
                return Err("usage: pick [MESH] [--pixel X Y]... [--size W H] \
                            [--ray OX OY OZ DX DY DZ]... [--cull none|back|front] [--watertight] [--json]"
                    .into());
            }
            flag if flag.starts_with("--") => {
                return Err(format!("unknown option {flag} (try --help)"));
            }
            path if !mesh_given => {
                parsed.mesh = path.to_string();
                mesh_given = true;
            }
            extra => return Err(format!("unexpected argument {extra:?} (one mesh only)")),
        }
    }
    if parsed.picks.is_empty() {
        parsed
            .picks
            .push(Pick::Pixel(parsed.size.0 * 0.5, parsed.size.1 * 0.5));
    }
    Ok(parsed)
}

/// The default camera (see `common::framing`).
fn camera_ray(bvh: &Bvh, size: (f32, f32), x: f32, y: f32) -> Result<Ray, meshray::Error> {
    let (view, projection) =
        common::framing(&bvh.bounds(), common::default_direction(), size.0 / size.1);
    pixel_ray(
        &view,
        &projection,
        Vector2::new(size.0, size.1),
        Point2::new(x, y),
    )
}

fn json_number(x: f32) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "null".into()
    }
}

fn json_vec(v: &[f32]) -> String {
    let parts: Vec<String> = v.iter().map(|&x| json_number(x)).collect();
    format!("[{}]", parts.join(","))
}

fn run(args: Args) -> Result<(), String> {
    let started = Instant::now();
    let mesh = Mesh::load(&args.mesh).map_err(|e| e.to_string())?;
    let loaded = started.elapsed();
    for warning in mesh.load_warnings() {
        eprintln!("warning: {warning}");
    }
    let started = Instant::now();
    let bvh = Bvh::build(mesh);
    let built = started.elapsed();
    let mesh = bvh.mesh();
    if !args.json {
        println!(
            "{}: loaded in {:.1} ms, BVH built in {:.1} ms",
            args.mesh,
            loaded.as_secs_f64() * 1e3,
            built.as_secs_f64() * 1e3
        );
        println!("BVH: {}", bvh.stats());
    }
    let options = QueryOptions {
        culling: args.culling,
        watertight: args.watertight,
    };
    for pick in &args.picks {
        let (label, ray) = match *pick {
            Pick::Pixel(x, y) => {
                let ray = camera_ray(&bvh, args.size, x, y)
                    .map_err(|e| format!("pixel ({x}, {y}): {e}"))?;
                (format!("pixel ({x}, {y})"), ray)
            }
            Pick::Ray(ray) => (
                format!(
                    "ray {} + t·{}",
                    fmt_point(&ray.origin().coords),
                    fmt_point(&ray.direction())
                ),
                ray,
            ),
        };
        let hit = bvh.closest_hit(&ray, &options);
        if args.json {
            match hit {
                None => println!("{{\"hit\":false}}"),
                Some(h) => {
                    let mut line = format!(
                        "{{\"hit\":true,\"triangle\":{},\"t\":{},\"u\":{},\"v\":{},\"point\":{},\"normal\":{},\"front_face\":{}",
                        h.triangle,
                        json_number(h.t),
                        json_number(h.u),
                        json_number(h.v),
                        json_vec(h.point.coords.as_slice()),
                        json_vec(h.normal.as_slice()),
                        h.front_face
                    );
                    line += &format!(
                        ",\"object\":{}",
                        json_string(&mesh.objects()[h.object as usize])
                    );
                    match h.material {
                        Some(m) => {
                            line += &format!(
                                ",\"material\":{}",
                                json_string(&mesh.materials()[m as usize])
                            )
                        }
                        None => line += ",\"material\":null",
                    }
                    if let Some(n) = h.shading_normal {
                        line += &format!(",\"shading_normal\":{}", json_vec(n.as_slice()));
                    }
                    if let Some(uv) = h.uv {
                        line += &format!(",\"uv\":{}", json_vec(uv.coords.as_slice()));
                    }
                    println!("{line}}}");
                }
            }
            continue;
        }
        match hit {
            None => println!("{label}: no hit"),
            Some(h) => {
                let material = h
                    .material
                    .map_or("(none)", |m| mesh.materials()[m as usize].as_str());
                println!(
                    "{label}: triangle {} at t = {}\n    point {}  normal {}{}\n    object {:?}  material {:?}  barycentrics u = {}, v = {}",
                    h.triangle,
                    h.t,
                    fmt_point(&h.point.coords),
                    fmt_point(&h.normal),
                    if h.front_face {
                        " (front face)"
                    } else {
                        " (back face)"
                    },
                    mesh.objects()[h.object as usize],
                    material,
                    h.u,
                    h.v
                );
            }
        }
    }
    Ok(())
}

fn fmt_point(v: &Vector3<f32>) -> String {
    format!("({:.4}, {:.4}, {:.4})", v.x, v.y, v.z)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("pick: {e}");
            return ExitCode::from(2);
        }
    };
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pick: {e}");
            ExitCode::FAILURE
        }
    }
}
