//! `meshray pick`: the main job of meshray, from the command line.

use crate::args::{Args, CULLINGS, set_mesh, unknown};
use crate::camera::{Placement, on_image};
use crate::{Failure, json, mesh};
use meshray::prelude::*;
use meshray::{Bvh, Hit, Mesh, QueryOptions, Ray};
use nalgebra::{Point2, Point3, Vector2, Vector3};
use std::path::PathBuf;
use std::time::Instant;

/// `meshray pick --help`.
pub const USAGE: &str = "\
usage: meshray pick [MESH] [--pixel X Y]... [--size W H] [--eye X Y Z] [--target X Y Z]
                    [--orbit YAW PITCH] [--ray OX OY OZ DX DY DZ]... [--cull none|back|front]
                    [--cramer] [--json]

Picks triangles: prints the triangle hit (its number in the file, t, point, normal, which
face, object, material, barycentrics), after the load and build times and the BVH's
statistics. MESH is any file meshray reads (OBJ, STL, PLY, glTF, GLB; default: the
repository's assets/scene.obj).

  --pixel X Y          pick through pixel (X, Y) of the camera's image, origin top left
                       (default: the image's centre); repeat for more
  --size W H           the image's size in pixels (default 800 600)
  --eye X Y Z          the camera's eye (default: framing the mesh from the front, above
                       and to the right, 2.2 half-diagonals of its bounds from their centre)
  --target X Y Z       the point the camera looks at (default: the bounds' centre)
  --orbit YAW PITCH    without --eye: the eye's direction from the target, in degrees
  --ray OX OY OZ DX DY DZ
                       cast a ray of your own (origin, direction; t from 0 to infinity)
  --cull MODE          none (default; both faces), back (front faces only) or front
  --cramer             plain Cramer's rule instead of the watertight triangle test (the
                       default): a little faster, can slip through a shared edge
  --json               one JSON object per ray and nothing else, in the order given:
                       {\"hit\":true,\"triangle\":..,\"t\":..,\"u\":..,\"v\":..,\"point\":[..],
                        \"normal\":[..],\"front_face\":..,\"object\":..,\"material\":..} or
                       {\"hit\":false}
";

struct Options {
    mesh: PathBuf,
    size: Vector2<f32>,
    placement: Placement,
    picks: Vec<Pick>,
    query: QueryOptions,
    json: bool,
}

enum Pick {
    Pixel(Point2<f32>),
    Ray(Ray),
}

fn parse(words: Vec<String>) -> Result<Options, Failure> {
    let mut args = Args::new(words);
    let mut options = Options {
        mesh: mesh::default_mesh(),
        size: Vector2::new(800.0, 600.0),
        placement: Placement::default(),
        picks: Vec::new(),
        query: QueryOptions::default(),
        json: false,
    };
    let mut mesh_given = false;
    while let Some(arg) = args.next_word() {
        if args.camera_flag(&arg, &mut options.placement)? {
            continue;
        }
        match arg.as_str() {
            "--pixel" => {
                let [x, y] = args.numbers(&arg)?;
                options.picks.push(Pick::Pixel(Point2::new(x, y)));
            }
            "--size" => {
                let [w, h] = args.numbers(&arg)?;
                if !(w >= 1.0 && h >= 1.0) {
                    return Err(Failure::usage(format!(
                        "--size {w} {h}: the width and height must be at least 1"
                    )));
                }
                options.size = Vector2::new(w, h);
            }
            "--ray" => {
                let [ox, oy, oz, dx, dy, dz] = args.numbers(&arg)?;
                options.picks.push(Pick::Ray(Ray::new(
                    Point3::new(ox, oy, oz),
                    Vector3::new(dx, dy, dz),
                )));
            }
            "--cull" => options.query.culling = args.choice(&arg, &CULLINGS)?,
            "--json" => options.json = true,
            "--watertight" => options.query.watertight = true,
            "--cramer" => options.query.watertight = false,
            flag if flag.starts_with('-') => return Err(unknown(flag)),
            path => set_mesh(&mut options.mesh, &mut mesh_given, path, "pick")?,
        }
    }
    for pick in &options.picks {
        if let Pick::Pixel(p) = pick
            && !on_image(options.size, *p)
        {
            return Err(Failure::usage(format!(
                "pixel ({}, {}) is outside the {}×{} image: x runs from 0 to {}, y from 0 to {}",
                p.x, p.y, options.size.x, options.size.y, options.size.x, options.size.y
            )));
        }
    }
    if options.picks.is_empty() {
        options
            .picks
            .push(Pick::Pixel(Point2::from(options.size * 0.5)));
    }
    Ok(options)
}

/// Runs `meshray pick` on the words after its name.
///
/// # Errors
/// A usage error for a bad command line, a failure for a mesh that does not load or a
/// camera that cannot look at it.
pub fn run(words: Vec<String>) -> Result<(), Failure> {
    let options = parse(words)?;
    let started = Instant::now();
    let mesh = mesh::load(&options.mesh)?;
    let loaded = started.elapsed();
    let started = Instant::now();
    let bvh = Bvh::build(mesh);
    let built = started.elapsed();
    if !options.json {
        crate::say!(
            "{}: loaded in {:.1} ms, BVH built in {:.1} ms",
            options.mesh.display(),
            loaded.as_secs_f64() * 1e3,
            built.as_secs_f64() * 1e3
        );
        let cost = meshray::diagnostics::measured_cost(&bvh);
        crate::say!(
            "BVH: {}, {:.1} boxes and {:.1} triangles per random ray",
            bvh.stats(),
            cost.boxes_per_ray,
            cost.triangles_per_ray
        );
    }
    let camera = options
        .placement
        .camera(&bvh.bounds())
        .map_err(Failure::failed)?;
    for pick in &options.picks {
        let (label, ray) = match *pick {
            Pick::Pixel(p) => (
                format!("pixel ({}, {})", p.x, p.y),
                camera
                    .ray(options.size, p)
                    .map_err(|e| Failure::failed(format!("pixel ({}, {}): {e}", p.x, p.y)))?,
            ),
            Pick::Ray(ray) => (
                format!(
                    "ray {} + t·{}",
                    fmt_vector(&ray.origin().coords),
                    fmt_vector(&ray.direction())
                ),
                ray,
            ),
        };
        let hit = bvh.closest_hit(&ray, &options.query);
        if options.json {
            crate::say!("{}", json_line(bvh.mesh(), hit.as_ref()));
        } else {
            crate::say!("{}", text(bvh.mesh(), &label, hit.as_ref()));
        }
    }
    Ok(())
}

/// A pick as `pick --json` prints it.
fn json_line(mesh: &Mesh, hit: Option<&Hit>) -> String {
    let Some(h) = hit else {
        return "{\"hit\":false}".into();
    };
    let mut line = format!(
        "{{\"hit\":true,\"triangle\":{},\"t\":{},\"u\":{},\"v\":{},\"point\":{},\"normal\":{},\"front_face\":{},\"object\":{},\"material\":{}",
        h.triangle,
        json::number(h.t),
        json::number(h.u),
        json::number(h.v),
        json::array(h.point.coords.as_slice()),
        json::array(h.normal.as_slice()),
        h.front_face,
        json::string(&mesh.objects()[h.object as usize]),
        h.material.map_or("null".into(), |m| json::string(
            &mesh.materials()[m as usize]
        )),
    );
    if let Some(n) = h.shading_normal {
        line += &format!(",\"shading_normal\":{}", json::array(n.as_slice()));
    }
    if let Some(uv) = h.uv {
        line += &format!(",\"uv\":{}", json::array(uv.coords.as_slice()));
    }
    line + "}"
}

/// A pick as `pick` prints it for a reader.
fn text(mesh: &Mesh, label: &str, hit: Option<&Hit>) -> String {
    let Some(h) = hit else {
        return format!("{label}: no hit");
    };
    let material = h.material.map_or("no material".into(), |m| {
        format!("material \"{}\"", mesh.materials()[m as usize])
    });
    format!(
        "{label}: triangle {} at t = {}\n    point {}  normal {} ({} face)\n    object \"{}\"  {material}  barycentrics u = {}, v = {}",
        h.triangle,
        h.t,
        fmt_vector(&h.point.coords),
        fmt_vector(&h.normal),
        if h.front_face { "front" } else { "back" },
        mesh.objects()[h.object as usize],
        h.u,
        h.v
    )
}

/// A vector as the commands print it for a reader: four decimals a coordinate.
pub(crate) fn fmt_vector(v: &Vector3<f32>) -> String {
    format!("({:.4}, {:.4}, {:.4})", v.x, v.y, v.z)
}
