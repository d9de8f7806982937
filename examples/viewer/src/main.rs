//! An interactive viewer: orbit a mesh, click a triangle, see what meshray says about it.
//!
//! ```text
//! cargo run --release -p meshray-viewer -- [MESH] [--size WxH] [--eye X Y Z] [--target X Y Z]
//! ```
//!
//! Any mesh `Mesh::load` reads (OBJ, STL, PLY, glTF), by default the repository's `assets/scene.obj`,
//! in an 800×600 window. Drag with the left button or press the arrow keys to orbit, turn the
//! wheel or press +/- to zoom, click (press and release without dragging) to pick; Escape or
//! Q quits. The picked triangle is drawn pure yellow, (255, 255, 0), a colour the shading
//! never makes, and its hit goes to the window's title and to stdout as one line:
//!
//! ```text
//! pick x=412 y=300 triangle=1234 t=2.5 point=[x,y,z] u=0.25 v=0.5 normal=[x,y,z] face=front object="sphere"
//! pick x=3 y=4 miss
//! ```
//!
//! There is no rasterizer: every picture is ray-cast by the library, one ray per pixel
//! centre, so what a click picks is exactly what that pixel shows. The camera is the
//! `meshray` command's (`meshray_cli::camera`): by default it frames the mesh from the
//! default direction, 2.2 half-diagonals away, so a test can cast the same rays; `--eye` and
//! `--target` start it elsewhere, inside a room too, and the orbit then turns about the
//! target. The viewer prints `ready ...` once it has sent that first picture to the X
//! server. minifb reads the mouse buttons and keys once a frame (60 a second), so a press
//! and release quicker than a frame goes unseen.

use meshray::prelude::*;
use meshray::{Bvh, Hit, QueryOptions, Ray, RayQuery};
use meshray_cli::Failure;
use meshray_cli::args::{command_line, set_mesh, unknown, wants_help};
use meshray_cli::camera::{Camera, FRAMING_DISTANCE, Placement, default_direction, half_diagonal};
use meshray_cli::{json, mesh};
use minifb::{Key, KeyRepeat, MouseButton, MouseMode, Window, WindowOptions};
use nalgebra::{Point2, Point3, Vector2, Vector3};
use rayon::prelude::*;
use std::path::PathBuf;
use std::process::ExitCode;

/// `meshray-viewer --help`.
const USAGE: &str = "\
usage: meshray-viewer [MESH] [--size WxH] [--eye X Y Z] [--target X Y Z]

A window on any mesh meshray reads (default: the repository's assets/scene.obj), ray-cast
by the library one ray per pixel. Drag with the left button or press the arrow keys to
orbit about the target, turn the wheel or press +/- to zoom, click to pick (the triangle
turns yellow; its hit goes to the title and to stdout); Escape or Q quits.

  --size WxH           the window's size, 16 to 8192 pixels each way (default 800x600)
  --eye X Y Z          where the camera starts; inside a room or a courtyard too (default:
                       framing the mesh from the front, above and to the right)
  --target X Y Z       the point it looks at and orbits about (default: the bounds' centre)
";

/// The picked triangle's colour. Shading is grey or dark red, so this is never a shade.
const YELLOW: u32 = 0xFF_FF_00;
const BACKGROUND: u32 = rgb(30, 30, 38);
/// How far (pixels) the pointer may move with the button down and still be a click: a hand
/// trembles.
const CLICK_SLOP: f32 = 3.0;
/// Orbit per pixel dragged and per arrow key press, in radians.
const DRAG_TURN: f32 = 0.01;
const KEY_TURN: f32 = 5.0 * std::f32::consts::PI / 180.0;
/// How close the eye may come to straight above or below the mesh (where "up" is undefined).
const MAX_PITCH: f32 = 85.0 * std::f32::consts::PI / 180.0;

const fn rgb(r: u8, g: u8, b: u8) -> u32 {
    (r as u32) << 16 | (g as u32) << 8 | b as u32
}

struct Args {
    mesh: PathBuf,
    size: (usize, usize),
    placement: Placement,
}

fn parse_args(words: Vec<String>) -> Result<Args, Failure> {
    let mut parsed = Args {
        mesh: mesh::default_mesh(),
        size: (800, 600),
        placement: Placement::default(),
    };
    let mut words = meshray_cli::args::Args::new(words);
    let mut mesh_given = false;
    while let Some(arg) = words.next_word() {
        if matches!(arg.as_str(), "--eye" | "--target") {
            words.camera_flag(&arg, &mut parsed.placement)?;
            continue;
        }
        match arg.as_str() {
            "--size" => {
                let value = words.value(&arg, "WIDTHxHEIGHT")?;
                parsed.size = value
                    .split_once('x')
                    .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)))
                    .filter(|&(w, h)| (16..=8192).contains(&w) && (16..=8192).contains(&h))
                    .ok_or_else(|| {
                        Failure::usage(format!(
                            "--size takes WIDTHxHEIGHT, 16 to 8192 each, not \"{value}\""
                        ))
                    })?;
            }
            flag if flag.starts_with('-') => return Err(unknown(flag)),
            path => set_mesh(&mut parsed.mesh, &mut mesh_given, path, "the viewer")?,
        }
    }
    Ok(parsed)
}

/// Where the eye is: a direction from the target and a distance in half-diagonals of the
/// mesh's bounds (what `Camera::orbiting` takes).
struct Orbit {
    target: Point3<f32>,
    direction: Vector3<f32>,
    distance: f32,
    /// How close zooming may bring the eye: 0.3 half-diagonals, or closer if it started
    /// closer (an eye placed inside a room).
    closest: f32,
}

impl Orbit {
    /// Where `placement` puts the eye: the framing by default, else the given eye and target.
    fn new(bvh: &Bvh, placement: &Placement) -> Orbit {
        let bounds = bvh.bounds();
        let target = placement.target.unwrap_or_else(|| bounds.centroid());
        let (direction, distance) = match placement.eye {
            // In f64: the offset of a tiny mesh's eye would underflow when squared in f32.
            Some(eye) => {
                let offset = eye.cast::<f64>() - target.cast::<f64>();
                let direction = offset.try_normalize(0.0).unwrap_or_else(Vector3::zeros);
                (
                    direction.cast::<f32>(),
                    (offset.norm() / half_diagonal(&bounds)) as f32,
                )
            }
            None => (default_direction(), FRAMING_DISTANCE),
        };
        Orbit {
            target,
            direction,
            distance,
            closest: distance.min(0.3),
        }
    }

    /// Moves the eye `yaw` radians about +y and `pitch` radians up, short of the poles.
    fn turn(&mut self, yaw: f32, pitch: f32) {
        let d = self.direction.normalize();
        let yaw = d.x.atan2(d.z) + yaw;
        let pitch = (d.y.asin() + pitch).clamp(-MAX_PITCH, MAX_PITCH);
        self.direction = Vector3::new(
            yaw.sin() * pitch.cos(),
            pitch.sin(),
            yaw.cos() * pitch.cos(),
        );
    }

    /// Moves the eye `factor` times as far, between where it may come closest and 8
    /// half-diagonals (the whole mesh small).
    fn zoom(&mut self, factor: f32) {
        self.distance = (self.distance * factor).clamp(self.closest, self.closest.max(8.0));
    }
}

/// The camera and the window's size: everything a pixel's ray depends on.
struct View {
    camera: Camera,
    size: (usize, usize),
}

impl View {
    fn new(bvh: &Bvh, orbit: &Orbit, size: (usize, usize)) -> Result<View, Failure> {
        let camera = Camera::orbiting(&bvh.bounds(), orbit.target, orbit.direction, orbit.distance)
            .map_err(Failure::failed)?;
        Ok(View { camera, size })
    }

    /// The ray through the centre of pixel (x, y).
    fn ray(&self, x: usize, y: usize) -> Option<Ray> {
        let viewport = Vector2::new(self.size.0 as f32, self.size.1 as f32);
        let pixel = Point2::new(x as f32 + 0.5, y as f32 + 0.5);
        self.camera.ray(viewport, pixel).ok()
    }

    /// The closest hit of the ray through the centre of pixel (x, y).
    fn hit(&self, bvh: &Bvh, x: usize, y: usize) -> Option<Hit> {
        bvh.closest_hit(&self.ray(x, y)?, &QueryOptions::default())
    }

    /// Ray-casts the picture, rows in parallel: each pixel's shade, like the render example's
    /// (grey by how squarely the front face meets the ray, back faces dark red), and which
    /// triangle it shows, so that a new pick recolours the picture without casting again.
    fn cast(&self, bvh: &Bvh) -> (Vec<u32>, Vec<Option<u32>>) {
        let (w, h) = self.size;
        let mut shades = vec![BACKGROUND; w * h];
        let mut triangles = vec![None; w * h];
        shades
            .par_chunks_mut(w)
            .zip(triangles.par_chunks_mut(w))
            .enumerate()
            .for_each(|(y, (shades, triangles))| {
                // The row's rays in one batch query: neighbouring pixels walk the tree in
                // packets of eight.
                let (xs, rays): (Vec<usize>, Vec<Ray>) =
                    (0..w).filter_map(|x| Some((x, self.ray(x, y)?))).unzip();
                let mut hits = Vec::with_capacity(rays.len());
                bvh.cast_rays(
                    &rays,
                    RayQuery::Closest,
                    &QueryOptions::default(),
                    &mut hits,
                );
                for ((&x, ray), short) in xs.iter().zip(&rays).zip(hits) {
                    let Some(hit) = short.and_then(|s| bvh.hit_details(ray, &s)) else {
                        continue;
                    };
                    let v = (40.0 + 215.0 * hit.normal.dot(&ray.direction()).abs()) as u8;
                    shades[x] = if hit.front_face {
                        rgb(v, v, v)
                    } else {
                        rgb(v, v / 4, v / 4)
                    };
                    triangles[x] = Some(hit.triangle);
                }
            });
        (shades, triangles)
    }
}

/// The pick as one line for stdout (a test parses it) and as the window's title.
fn describe(bvh: &Bvh, x: usize, y: usize, hit: Option<&Hit>) -> (String, String) {
    let Some(hit) = hit else {
        return (
            format!("pick x={x} y={y} miss"),
            format!("meshray viewer: nothing at ({x}, {y})"),
        );
    };
    let object = &bvh.mesh().objects()[hit.object as usize];
    let (p, n) = (hit.point, hit.normal.into_inner());
    let face = if hit.front_face { "front" } else { "back" };
    let line = format!(
        "pick x={x} y={y} triangle={} t={} point=[{},{},{}] u={} v={} normal=[{},{},{}] face={face} object={}",
        hit.triangle,
        hit.t,
        p.x,
        p.y,
        p.z,
        hit.u,
        hit.v,
        n.x,
        n.y,
        n.z,
        json::string(object)
    );
    let title = format!(
        "meshray viewer: triangle {} of {object}, t {:.4}, point ({:.3}, {:.3}, {:.3}), u {:.3} v {:.3}, normal ({:.3}, {:.3}, {:.3}), {face} face",
        hit.triangle, hit.t, p.x, p.y, p.z, hit.u, hit.v, n.x, n.y, n.z
    );
    (line, title)
}

fn run(args: &Args) -> Result<(), Failure> {
    let bvh = Bvh::build(mesh::load(&args.mesh)?);
    let (w, h) = args.size;
    let name = args.mesh.file_name().map_or_else(
        || args.mesh.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let help = format!(
        "meshray viewer: {name}, {} triangles; drag or arrows orbit, wheel or +/- zoom, click picks",
        bvh.mesh().triangle_count()
    );
    let mut window = Window::new(&help, w, h, WindowOptions::default())
        .map_err(|e| Failure::failed(format!("cannot open a window: {e}")))?;
    window.set_target_fps(60);

    let mut orbit = Orbit::new(&bvh, &args.placement);
    let mut view = View::new(&bvh, &orbit, args.size)?;
    let (mut shades, mut triangles) = view.cast(&bvh);
    let mut picked: Option<u32> = None;
    let mut buffer = vec![BACKGROUND; w * h];
    let mut recolour = true;
    // Where the left button went down, where the pointer was last frame, and whether it has
    // moved far enough since the press to be a drag rather than a click.
    let mut press: Option<(f32, f32)> = None;
    let mut last = (0.0, 0.0);
    let mut dragging = false;
    let mut ready = false;

    while window.is_open() && !window.is_key_down(Key::Escape) && !window.is_key_down(Key::Q) {
        let (mut yaw, mut pitch, mut zoom) = (0.0, 0.0, 1.0);
        for key in window.get_keys_pressed(KeyRepeat::Yes) {
            match key {
                // Keys turn the mesh the way dragging towards them does.
                Key::Left => yaw += KEY_TURN,
                Key::Right => yaw -= KEY_TURN,
                Key::Up => pitch -= KEY_TURN,
                Key::Down => pitch += KEY_TURN,
                // '+' is shifted '=' on most layouts.
                Key::Equal | Key::NumPadPlus => zoom /= 1.1,
                Key::Minus | Key::NumPadMinus => zoom *= 1.1,
                _ => {}
            }
        }
        if let Some((_, scroll)) = window.get_scroll_wheel() {
            zoom *= 0.9f32.powf(scroll);
        }
        let mouse = window.get_mouse_pos(MouseMode::Discard);
        match (window.get_mouse_down(MouseButton::Left), press, mouse) {
            (true, None, Some(at)) => {
                press = Some(at);
                last = at;
                dragging = false;
            }
            (true, Some(from), Some(at)) => {
                dragging |= (at.0 - from.0).hypot(at.1 - from.1) > CLICK_SLOP;
                if dragging {
                    yaw -= (at.0 - last.0) * DRAG_TURN;
                    pitch += (at.1 - last.1) * DRAG_TURN;
                }
                last = at;
            }
            (false, Some(from), _) => {
                press = None;
                if !dragging {
                    let (x, y) = (from.0 as usize, from.1 as usize);
                    if x < w && y < h {
                        let hit = view.hit(&bvh, x, y);
                        let (line, title) = describe(&bvh, x, y, hit.as_ref());
                        println!("{line}");
                        window.set_title(&title);
                        picked = hit.map(|hit| hit.triangle);
                        recolour = true;
                    }
                }
            }
            _ => {}
        }
        if yaw != 0.0 || pitch != 0.0 || zoom != 1.0 {
            orbit.turn(yaw, pitch);
            orbit.zoom(zoom);
            // A camera the orbit cannot make (none is known) leaves the picture as it was.
            if let Ok(turned) = View::new(&bvh, &orbit, args.size) {
                view = turned;
                (shades, triangles) = view.cast(&bvh);
                recolour = true;
            }
        }
        if recolour {
            for ((out, &shade), &triangle) in buffer.iter_mut().zip(&shades).zip(&triangles) {
                *out = if triangle.is_some() && triangle == picked {
                    YELLOW
                } else {
                    shade
                };
            }
            recolour = false;
        }
        // minifb does not report exposures, so the buffer is presented every frame; only the
        // ray casting waits for a change.
        window
            .update_with_buffer(&buffer, w, h)
            .map_err(|e| Failure::failed(format!("cannot draw the window: {e}")))?;
        if !ready {
            let d = orbit.direction;
            println!(
                "ready size={w}x{h} triangles={} direction=[{},{},{}] distance={}",
                bvh.mesh().triangle_count(),
                d.x,
                d.y,
                d.z,
                orbit.distance
            );
            ready = true;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let result = command_line().and_then(|words| {
        if wants_help(&words) {
            print!("{USAGE}");
            return Ok(());
        }
        run(&parse_args(words)?)
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("meshray-viewer: {failure}");
            ExitCode::from(failure.exit_code())
        }
    }
}
