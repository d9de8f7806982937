//! `meshray sweep`: a sphere (or capsule) moved through a mesh until it touches, from the
//! command line: what a character controller or a camera that must not enter walls asks.

use super::pick::fmt_vector;
use crate::args::{Args, CULLINGS, set_mesh, unknown};
use crate::{Failure, json, mesh};
use meshray::prelude::*;
use meshray::query::SweepHit;
use meshray::{Bvh, Mesh, QueryOptions, Ray};
use nalgebra::{Point3, Vector3};
use std::path::PathBuf;

/// `meshray sweep --help`.
pub const USAGE: &str = "\
usage: meshray sweep [MESH] [--radius R] [--from X Y Z] [--direction DX DY DZ]
                     [--axis AX AY AZ] [--distance T] [--cull none|back|front] [--json]

Moves a sphere through the mesh until it first touches a face, an edge or a corner, and
prints where (as pick prints a hit: the triangle, t, the contact point and normal, the
object, barycentrics). By default a sphere of a fiftieth of the mesh's bounds' diagonal is
dropped straight down (-y) from above the middle of the bounds. MESH is any file meshray
reads (default: the repository's assets/scene.obj).

  --radius R           the sphere's radius (at least 0; default: 2 % of the diagonal)
  --from X Y Z         where its centre starts (default: above the bounds' centre)
  --direction DX DY DZ the way it moves (default 0 -1 0); t counts in its length
  --axis AX AY AZ      a capsule instead: every point within the radius of the segment
                       from the centre to centre + axis
  --distance T         how far it may move, in t (default: without end)
  --cull MODE          none (default), back (only faces the motion meets from the front)
                       or front
  --json               one JSON object and nothing else:
                       {\"hit\":true,\"triangle\":..,\"t\":..,\"u\":..,\"v\":..,\"point\":[..],
                        \"normal\":[..],\"object\":..} or {\"hit\":false}
";

struct Options {
    mesh: PathBuf,
    radius: Option<f32>,
    from: Option<Point3<f32>>,
    direction: Vector3<f32>,
    axis: Vector3<f32>,
    distance: f32,
    query: QueryOptions,
    json: bool,
}

fn parse(words: Vec<String>) -> Result<Options, Failure> {
    let mut args = Args::new(words);
    let mut options = Options {
        mesh: mesh::default_mesh(),
        radius: None,
        from: None,
        direction: -Vector3::y(),
        axis: Vector3::zeros(),
        distance: f32::INFINITY,
        query: QueryOptions::default(),
        json: false,
    };
    let mut mesh_given = false;
    while let Some(arg) = args.next_word() {
        match arg.as_str() {
            "--radius" => {
                let [r] = args.numbers(&arg)?;
                if r < 0.0 {
                    return Err(Failure::usage(format!(
                        "--radius {r}: the radius must be at least 0"
                    )));
                }
                options.radius = Some(r);
            }
            "--from" => options.from = Some(Point3::from(args.numbers::<3>(&arg)?)),
            "--direction" => {
                let d = Vector3::from(args.numbers::<3>(&arg)?);
                if d == Vector3::zeros() {
                    return Err(Failure::usage(
                        "--direction 0 0 0: the sphere must move somewhere".to_string(),
                    ));
                }
                options.direction = d;
            }
            "--axis" => options.axis = Vector3::from(args.numbers::<3>(&arg)?),
            "--distance" => {
                let [t] = args.numbers(&arg)?;
                if t < 0.0 {
                    return Err(Failure::usage(format!(
                        "--distance {t}: the distance must be at least 0"
                    )));
                }
                options.distance = t;
            }
            "--cull" => options.query.culling = args.choice(&arg, &CULLINGS)?,
            "--json" => options.json = true,
            flag if flag.starts_with('-') => return Err(unknown(flag)),
            path => set_mesh(&mut options.mesh, &mut mesh_given, path, "sweep")?,
        }
    }
    Ok(options)
}

/// Runs `meshray sweep` on the words after its name.
///
/// # Errors
/// A usage error for a bad command line, a failure for a mesh that does not load.
pub fn run(words: Vec<String>) -> Result<(), Failure> {
    let options = parse(words)?;
    let bvh = Bvh::build(mesh::load(&options.mesh)?);
    let bounds = bvh.bounds();
    let diagonal = bounds.extent().norm();
    let radius = options.radius.unwrap_or(0.02 * diagonal);
    let from = options.from.unwrap_or_else(|| {
        let c = bounds.centroid();
        Point3::new(c.x, bounds.max.y + 2.0 * radius + 0.1 * diagonal, c.z)
    });
    let ray = Ray::with_range(from, options.direction, 0.0, options.distance);
    let hit = bvh
        .cast_capsule(&ray, options.axis, radius, &options.query)
        .map_err(|e| Failure::usage(e.to_string()))?;
    if options.json {
        crate::say!("{}", json_line(bvh.mesh(), hit.as_ref()));
    } else {
        let shape = if options.axis == Vector3::zeros() {
            format!("a sphere of radius {radius}")
        } else {
            format!(
                "a capsule of radius {radius} and axis {}",
                fmt_vector(&options.axis)
            )
        };
        let label = format!(
            "{shape} from {} along {}",
            fmt_vector(&from.coords),
            fmt_vector(&options.direction)
        );
        crate::say!("{}", text(bvh.mesh(), &label, hit.as_ref()));
    }
    Ok(())
}

/// A sweep as `sweep --json` prints it.
fn json_line(mesh: &Mesh, hit: Option<&SweepHit>) -> String {
    let Some(h) = hit else {
        return "{\"hit\":false}".into();
    };
    let object = mesh.attributes(h.triangle as usize).object;
    format!(
        "{{\"hit\":true,\"triangle\":{},\"t\":{},\"u\":{},\"v\":{},\"point\":{},\"normal\":{},\"object\":{}}}",
        h.triangle,
        json::number(h.t),
        json::number(h.u),
        json::number(h.v),
        json::array(h.point.coords.as_slice()),
        json::array(h.normal.as_slice()),
        json::string(&mesh.objects()[object as usize]),
    )
}

/// A sweep as `sweep` prints it for a reader.
fn text(mesh: &Mesh, label: &str, hit: Option<&SweepHit>) -> String {
    let Some(h) = hit else {
        return format!("{label}: touches nothing");
    };
    let object = mesh.attributes(h.triangle as usize).object;
    format!(
        "{label}: touches triangle {} at t = {}\n    point {}  normal {}\n    object \"{}\"  barycentrics u = {}, v = {}",
        h.triangle,
        h.t,
        fmt_vector(&h.point.coords),
        fmt_vector(&h.normal),
        mesh.objects()[object as usize],
        h.u,
        h.v
    )
}
