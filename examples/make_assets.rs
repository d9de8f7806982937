//! Generates the demo scene `assets/scene.obj` and its material library
//! `assets/scene.mtl`.
//!
//! The scene is the default mesh of the `pick` example and a realistic input
//! for tests and benchmarks. It is made here, procedurally and
//! deterministically, so that the repository ships no third-party model and
//! the files can be re-created (and reviewed) from this source at any time:
//!
//! ```text
//! cargo run --example make_assets            # writes <crate>/assets/
//! cargo run --example make_assets -- OUT_DIR # writes OUT_DIR/
//! ```
//!
//! The scene holds five named objects (`o NAME`), in this order:
//!
//! | object   | geometry                                              | face records                    |
//! |----------|-------------------------------------------------------|---------------------------------|
//! | `ground` | 16 x 16 grid, y = 0, x and z in [-4, 4]               | `f v` quads                     |
//! | `sphere` | UV sphere 32 x 16, centre (0,1,0), radius 1           | `f v/vt/vn` triangles and quads |
//! | `box`    | axis-aligned cube, centre (2.2,0.6,-1), edge 1.2      | `f v//vn` quads                 |
//! | `torus`  | 24 x 12, axis +y, centre (-2.2,0.3,0.5), R 0.8, r 0.3 | `f v//vn` quads                 |
//! | `cone`   | 16 sides, base centre (1.6,0,1.9), r 0.6, height 1.5  | `f v//vn` triangles, one 16-gon |
//!
//! Every face is wound counter-clockwise seen from outside (its geometric
//! normal points out of the solid, up for the ground), and every `vn` points
//! outwards; the generator checks both before writing anything. The scene's
//! bounding box is [-4,4] x [0,2] x [-4,4]; its centre (0,1,0) is the centre
//! of the sphere, and the line from there towards normalize(0.45, 0.35, 1.0)
//! (the viewing direction of the `pick` example) crosses no other object, so
//! a pick through the middle of that image hits the sphere at about
//! (0.388, 1.302, 0.863).
//!
//! Materials (`scene.mtl`): `ground_grey`, `sphere_red`, `box_green`,
//! `torus_blue`, `cone_gold`, one per object, with `Kd` colours.
//!
//! Only `std` is used, so this file also builds on its own with
//! `rustc --edition 2021 -O examples/make_assets.rs`.

use std::f64::consts::PI;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

type V3 = [f64; 3];

/// One corner of a face: 0-based indices into the object's own lists.
#[derive(Clone, Copy)]
struct Corner {
    v: usize,
    vt: Option<usize>,
    vn: Option<usize>,
}

impl Corner {
    fn v(v: usize) -> Self {
        Corner {
            v,
            vt: None,
            vn: None,
        }
    }
    fn vn(v: usize, vn: usize) -> Self {
        Corner {
            v,
            vt: None,
            vn: Some(vn),
        }
    }
    fn full(v: usize, vt: usize, vn: usize) -> Self {
        Corner {
            v,
            vt: Some(vt),
            vn: Some(vn),
        }
    }
}

/// How to tell "outside" for the winding check of an object.
enum Outside {
    /// Faces must point away from this interior point (convex solids).
    AwayFrom(V3),
    /// Faces must point along this direction (the ground plane).
    Along(V3),
    /// Faces must point away from the nearest point of a horizontal circle
    /// (the core of a torus): centre and radius.
    AwayFromRing(V3, f64),
}

struct Object {
    name: &'static str,
    material: &'static str,
    positions: Vec<V3>,
    texcoords: Vec<[f64; 2]>,
    normals: Vec<V3>,
    faces: Vec<Vec<Corner>>,
    outside: Outside,
}

impl Object {
    fn new(name: &'static str, material: &'static str, outside: Outside) -> Self {
        Object {
            name,
            material,
            positions: Vec::new(),
            texcoords: Vec::new(),
            normals: Vec::new(),
            faces: Vec::new(),
            outside,
        }
    }

    /// Triangles after fan triangulation (n - 2 per n-gon), as a loader
    /// with `triangulate: true` produces them.
    fn triangles(&self) -> usize {
        self.faces.iter().map(|f| f.len() - 2).sum()
    }
}

struct Material {
    name: &'static str,
    kd: V3,
    ks: V3,
    ns: f64,
}

const MATERIALS: [Material; 5] = [
    Material {
        name: "ground_grey",
        kd: [0.5, 0.5, 0.5],
        ks: [0.0, 0.0, 0.0],
        ns: 1.0,
    },
    Material {
        name: "sphere_red",
        kd: [0.8, 0.1, 0.1],
        ks: [0.5, 0.5, 0.5],
        ns: 64.0,
    },
    Material {
        name: "box_green",
        kd: [0.1, 0.7, 0.2],
        ks: [0.1, 0.1, 0.1],
        ns: 16.0,
    },
    Material {
        name: "torus_blue",
        kd: [0.1, 0.2, 0.8],
        ks: [0.3, 0.3, 0.3],
        ns: 32.0,
    },
    Material {
        name: "cone_gold",
        kd: [0.85, 0.65, 0.15],
        ks: [0.9, 0.8, 0.5],
        ns: 128.0,
    },
];

fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn scale(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}
fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
fn length(a: V3) -> f64 {
    dot(a, a).sqrt()
}
fn normalize(a: V3) -> V3 {
    scale(a, 1.0 / length(a))
}

fn ground(cells: usize, half: f64) -> Object {
    let mut o = Object::new("ground", "ground_grey", Outside::Along([0.0, 1.0, 0.0]));
    let n = cells + 1;
    let step = 2.0 * half / cells as f64;
    for iz in 0..n {
        for ix in 0..n {
            o.positions
                .push([-half + ix as f64 * step, 0.0, -half + iz as f64 * step]);
        }
    }
    let at = |ix: usize, iz: usize| iz * n + ix;
    for iz in 0..cells {
        for ix in 0..cells {
            // (x0,z0) -> (x0,z1) -> (x1,z1) -> (x1,z0): counter-clockwise seen from +y.
            o.faces.push(vec![
                Corner::v(at(ix, iz)),
                Corner::v(at(ix, iz + 1)),
                Corner::v(at(ix + 1, iz + 1)),
                Corner::v(at(ix + 1, iz)),
            ]);
        }
    }
    o
}

fn sphere(centre: V3, radius: f64, segments: usize, rings: usize) -> Object {
    let mut o = Object::new("sphere", "sphere_red", Outside::AwayFrom(centre));
    // Unique positions (and one normal each): north pole, the inner rings
    // j = 1..rings-1 with `segments` vertices each, south pole.
    let dir = |j: usize, i: usize| -> V3 {
        let theta = PI * j as f64 / rings as f64;
        let phi = 2.0 * PI * (i % segments) as f64 / segments as f64;
        [
            theta.sin() * phi.cos(),
            theta.cos(),
            theta.sin() * phi.sin(),
        ]
    };
    o.positions.push(add(centre, [0.0, radius, 0.0]));
    o.normals.push([0.0, 1.0, 0.0]);
    for j in 1..rings {
        for i in 0..segments {
            let d = dir(j, i);
            o.positions.push(add(centre, scale(d, radius)));
            o.normals.push(d);
        }
    }
    o.positions.push(add(centre, [0.0, -radius, 0.0]));
    o.normals.push([0.0, -1.0, 0.0]);
    let south = o.positions.len() - 1;
    let pos = |j: usize, i: usize| -> usize {
        if j == 0 {
            0
        } else if j == rings {
            south
        } else {
            1 + (j - 1) * segments + i % segments
        }
    };
    // Texture coordinates: a full (segments+1) x (rings+1) grid, so the seam
    // at u = 0 / u = 1 has distinct uvs although it shares positions.
    for j in 0..=rings {
        for i in 0..=segments {
            o.texcoords
                .push([i as f64 / segments as f64, 1.0 - j as f64 / rings as f64]);
        }
    }
    let uv = |j: usize, i: usize| j * (segments + 1) + i;
    let c = |j: usize, i: usize| Corner::full(pos(j, i), uv(j, i), pos(j, i));
    for j in 0..rings {
        for i in 0..segments {
            // (j,i) -> (j,i+1) -> (j+1,i+1) -> (j+1,i): counter-clockwise from outside.
            if j == 0 {
                o.faces.push(vec![c(0, i), c(1, i + 1), c(1, i)]);
            } else if j == rings - 1 {
                o.faces.push(vec![c(j, i), c(j, i + 1), c(rings, i)]);
            } else {
                o.faces
                    .push(vec![c(j, i), c(j, i + 1), c(j + 1, i + 1), c(j + 1, i)]);
            }
        }
    }
    o
}

fn cube(centre: V3, edge: f64) -> Object {
    let mut o = Object::new("box", "box_green", Outside::AwayFrom(centre));
    // Corner k has x = bit 0, y = bit 1, z = bit 2.
    for k in 0..8usize {
        let off = |bit: usize| {
            if k & bit != 0 {
                0.5 * edge
            } else {
                -0.5 * edge
            }
        };
        o.positions.push(add(centre, [off(1), off(2), off(4)]));
    }
    let sides: [([usize; 4], V3); 6] = [
        ([1, 3, 7, 5], [1.0, 0.0, 0.0]),
        ([0, 4, 6, 2], [-1.0, 0.0, 0.0]),
        ([2, 6, 7, 3], [0.0, 1.0, 0.0]),
        ([0, 1, 5, 4], [0.0, -1.0, 0.0]),
        ([4, 5, 7, 6], [0.0, 0.0, 1.0]),
        ([0, 2, 3, 1], [0.0, 0.0, -1.0]),
    ];
    for (n, (quad, normal)) in sides.iter().enumerate() {
        o.normals.push(*normal);
        o.faces
            .push(quad.iter().map(|&v| Corner::vn(v, n)).collect());
    }
    o
}

fn torus(centre: V3, major: f64, minor: f64, segments: usize, sides: usize) -> Object {
    let mut o = Object::new("torus", "torus_blue", Outside::AwayFromRing(centre, major));
    // Axis along +y; i walks around the axis, j around the tube.
    for i in 0..segments {
        let phi = 2.0 * PI * i as f64 / segments as f64;
        for j in 0..sides {
            let theta = 2.0 * PI * j as f64 / sides as f64;
            let n = [
                theta.cos() * phi.cos(),
                theta.sin(),
                theta.cos() * phi.sin(),
            ];
            let core = [major * phi.cos(), 0.0, major * phi.sin()];
            o.positions.push(add(centre, add(core, scale(n, minor))));
            o.normals.push(n);
        }
    }
    let at = |i: usize, j: usize| (i % segments) * sides + j % sides;
    for i in 0..segments {
        for j in 0..sides {
            // (i,j) -> (i,j+1) -> (i+1,j+1) -> (i+1,j): counter-clockwise from outside.
            o.faces.push(
                [at(i, j), at(i, j + 1), at(i + 1, j + 1), at(i + 1, j)]
                    .iter()
                    .map(|&v| Corner::vn(v, v))
                    .collect(),
            );
        }
    }
    o
}

fn cone(base_centre: V3, radius: f64, height: f64, segments: usize) -> Object {
    // Any point inside a convex solid works as the reference for "outside".
    let inside = add(base_centre, [0.0, 0.25 * height, 0.0]);
    let mut o = Object::new("cone", "cone_gold", Outside::AwayFrom(inside));
    for k in 0..segments {
        let a = 2.0 * PI * k as f64 / segments as f64;
        o.positions
            .push(add(base_centre, [radius * a.cos(), 0.0, radius * a.sin()]));
    }
    o.positions.push(add(base_centre, [0.0, height, 0.0]));
    let apex = segments;
    // Flat side faces, one normal each: the exact normal of the side's plane.
    for k in 0..segments {
        let next = (k + 1) % segments;
        let tri = [o.positions[k], o.positions[apex], o.positions[next]];
        o.normals.push(normalize(face_normal(&tri)));
        o.faces.push(vec![
            Corner::vn(k, k),
            Corner::vn(apex, k),
            Corner::vn(next, k),
        ]);
    }
    // The base: ONE n-gon, counter-clockwise seen from below.
    o.normals.push([0.0, -1.0, 0.0]);
    let down = segments;
    o.faces
        .push((0..segments).map(|k| Corner::vn(k, down)).collect());
    o
}

/// Newell normal of a polygon (length = twice its area for planar polygons).
fn face_normal(points: &[V3]) -> V3 {
    let mut n = [0.0; 3];
    for (i, p) in points.iter().enumerate() {
        let q = points[(i + 1) % points.len()];
        n = add(n, cross(*p, q));
    }
    scale(n, 0.5)
}

/// Checks winding, index ranges and normal directions; returns an error
/// message for the first problem found.
fn validate(o: &Object) -> Result<(), String> {
    for (fi, face) in o.faces.iter().enumerate() {
        if face.len() < 3 {
            return Err(format!("{}: face {fi} has {} corners", o.name, face.len()));
        }
        for c in face {
            let ok = c.v < o.positions.len()
                && c.vt.is_none_or(|t| t < o.texcoords.len())
                && c.vn.is_none_or(|n| n < o.normals.len());
            if !ok {
                return Err(format!("{}: face {fi} has an index out of range", o.name));
            }
        }
        let pts: Vec<V3> = face.iter().map(|c| o.positions[c.v]).collect();
        let n = face_normal(&pts);
        if length(n) < 1e-9 {
            return Err(format!("{}: face {fi} is degenerate", o.name));
        }
        let centroid = scale(
            pts.iter().fold([0.0; 3], |s, p| add(s, *p)),
            1.0 / pts.len() as f64,
        );
        let outward = match o.outside {
            Outside::AwayFrom(inner) => sub(centroid, inner),
            Outside::Along(d) => d,
            Outside::AwayFromRing(centre, r) => {
                let rel = sub(centroid, centre);
                let core = scale(normalize([rel[0], 0.0, rel[2]]), r);
                sub(rel, core)
            }
        };
        if dot(n, outward) <= 0.0 {
            return Err(format!("{}: face {fi} is wound inwards", o.name));
        }
        for c in face {
            if let Some(vn) = c.vn {
                let normal = o.normals[vn];
                if (length(normal) - 1.0).abs() > 1e-9 || dot(normal, n) <= 0.0 {
                    return Err(format!(
                        "{}: face {fi} has a normal pointing inwards",
                        o.name
                    ));
                }
            }
        }
    }
    Ok(())
}

/// `{:.6}` without a negative zero.
fn num(x: f64) -> String {
    let s = format!("{x:.6}");
    if s == "-0.000000" {
        "0.000000".to_owned()
    } else {
        s
    }
}

const HEADER: &str = "# Generated by `cargo run --example make_assets` (examples/make_assets.rs).\n\
                      # Do not edit by hand: change the generator and run it again.\n";

fn write_obj(objects: &[Object]) -> String {
    let mut s = String::new();
    s.push_str(HEADER);
    s.push_str("# meshray demo scene: ground, sphere, box, torus, cone. Y up, units arbitrary.\n");
    s.push_str("# Faces are counter-clockwise seen from outside; vn point outwards.\n");
    s.push_str("mtllib scene.mtl\n");
    let (mut v0, mut vt0, mut vn0) = (1, 1, 1);
    for o in objects {
        let _ = writeln!(
            s,
            "\no {}\n# {} vertices, {} texcoords, {} normals, {} faces, {} triangles",
            o.name,
            o.positions.len(),
            o.texcoords.len(),
            o.normals.len(),
            o.faces.len(),
            o.triangles()
        );
        for p in &o.positions {
            let _ = writeln!(s, "v {} {} {}", num(p[0]), num(p[1]), num(p[2]));
        }
        for t in &o.texcoords {
            let _ = writeln!(s, "vt {} {}", num(t[0]), num(t[1]));
        }
        for n in &o.normals {
            let _ = writeln!(s, "vn {} {} {}", num(n[0]), num(n[1]), num(n[2]));
        }
        let _ = writeln!(s, "usemtl {}", o.material);
        for face in &o.faces {
            s.push('f');
            for c in face {
                let _ = match (c.vt, c.vn) {
                    (None, None) => write!(s, " {}", c.v + v0),
                    (Some(t), None) => write!(s, " {}/{}", c.v + v0, t + vt0),
                    (None, Some(n)) => write!(s, " {}//{}", c.v + v0, n + vn0),
                    (Some(t), Some(n)) => write!(s, " {}/{}/{}", c.v + v0, t + vt0, n + vn0),
                };
            }
            s.push('\n');
        }
        v0 += o.positions.len();
        vt0 += o.texcoords.len();
        vn0 += o.normals.len();
    }
    s
}

fn write_mtl() -> String {
    let mut s = String::new();
    s.push_str(HEADER);
    s.push_str("# Materials of scene.obj.\n");
    for m in &MATERIALS {
        let _ = writeln!(s, "\nnewmtl {}", m.name);
        let _ = writeln!(s, "Ka 0.000000 0.000000 0.000000");
        let _ = writeln!(s, "Kd {} {} {}", num(m.kd[0]), num(m.kd[1]), num(m.kd[2]));
        let _ = writeln!(s, "Ks {} {} {}", num(m.ks[0]), num(m.ks[1]), num(m.ks[2]));
        let _ = writeln!(s, "Ns {}", num(m.ns));
        let _ = writeln!(s, "d 1.000000");
        let _ = writeln!(s, "illum 2");
    }
    s
}

fn default_dir() -> PathBuf {
    // Under cargo, write into the crate whatever the working directory.
    match option_env!("CARGO_MANIFEST_DIR") {
        Some(dir) => PathBuf::from(dir).join("assets"),
        None => PathBuf::from("assets"),
    }
}

fn main() -> ExitCode {
    const USAGE: &str =
        "usage: cargo run --example make_assets [-- OUTPUT_DIR]   (default: the crate's assets/)";
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    // `--help` is a request, not a folder to write into.
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if args.len() > 1 || args.iter().any(|a| a.to_string_lossy().starts_with('-')) {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    let dir = args.first().map_or_else(default_dir, PathBuf::from);

    let objects = [
        ground(16, 4.0),
        sphere([0.0, 1.0, 0.0], 1.0, 32, 16),
        cube([2.2, 0.6, -1.0], 1.2),
        torus([-2.2, 0.3, 0.5], 0.8, 0.3, 24, 12),
        cone([1.6, 0.0, 1.9], 0.6, 1.5, 16),
    ];
    for o in &objects {
        if let Err(e) = validate(o) {
            eprintln!("make_assets: internal error: {e}");
            return ExitCode::FAILURE;
        }
        if !MATERIALS.iter().any(|m| m.name == o.material) {
            eprintln!(
                "make_assets: internal error: unknown material {}",
                o.material
            );
            return ExitCode::FAILURE;
        }
    }

    let obj = write_obj(&objects);
    let mtl = write_mtl();
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("make_assets: cannot create {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    for (name, text) in [("scene.obj", &obj), ("scene.mtl", &mtl)] {
        let path = dir.join(name);
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("make_assets: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("wrote {} ({} bytes)", path.display(), text.len());
    }

    println!(
        "{:<8} {:>8} {:>9} {:>8} {:>6} {:>9}",
        "object", "vertices", "texcoords", "normals", "faces", "triangles"
    );
    let mut totals = [0usize; 5];
    for o in &objects {
        let row = [
            o.positions.len(),
            o.texcoords.len(),
            o.normals.len(),
            o.faces.len(),
            o.triangles(),
        ];
        println!(
            "{:<8} {:>8} {:>9} {:>8} {:>6} {:>9}",
            o.name, row[0], row[1], row[2], row[3], row[4]
        );
        for (t, r) in totals.iter_mut().zip(row) {
            *t += r;
        }
    }
    println!(
        "{:<8} {:>8} {:>9} {:>8} {:>6} {:>9}",
        "total", totals[0], totals[1], totals[2], totals[3], totals[4]
    );
    ExitCode::SUCCESS
}
