//! The viewer (`examples/viewer`) as a user runs it, in a real window under Xvfb: before a
//! click nothing is yellow; a click on the asset scene prints the hit the library gives for
//! that pixel's ray, names the triangle in the title, and the screen then shows exactly that
//! triangle's pixels in yellow; Escape quits.
//!
//! Needs `Xvfb` (Debian's xvfb), `xdotool` and `xwd` (x11-apps); where one is missing or no
//! X server starts, the test prints a note and passes (`.ci/run` installs them when it can).
//! It builds the viewer itself (`cargo build --release -p meshray-viewer`), since the root's
//! `cargo test` does not build the windowing crates.

mod common;
// The command's camera, as it stands (it uses only meshray and nalgebra); only the framing
// is needed here.
#[allow(dead_code)]
#[path = "../cli/src/camera.rs"]
mod camera;

use meshray::prelude::*;
use meshray::{Bvh, Hit, Mesh, QueryOptions};
use nalgebra::{Point2, Vector2};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// The window's size: small, so the test's own ray casting and the screenshots are quick.
const SIZE: (usize, usize) = (320, 240);
const YELLOW: [u8; 3] = [255, 255, 0];
const BACKGROUND: [u8; 3] = [30, 30, 38];
/// The limit for every wait on the X server, the viewer or a tool.
const WAIT: Duration = Duration::from_secs(20);
/// The limit for building the viewer (minutes on a clean CI machine, a second once built).
const BUILD: Duration = Duration::from_secs(30 * 60);

#[test]
#[cfg_attr(
    not(x11_tools),
    ignore = "needs Xvfb, xdotool and xwd on the PATH (Debian: apt-get install xvfb xdotool x11-apps)"
)]
fn a_click_picks_the_triangle_and_the_window_shows_it_in_yellow() {
    // build.rs compiled this test in only because the tools were on the PATH then.
    for tool in ["Xvfb", "xdotool", "xwd"] {
        assert!(
            find_in_path(tool).is_some(),
            "{tool} is no longer on the PATH (rebuild to skip this test)"
        );
    }
    let (_xvfb, display) = start_xvfb();
    let viewer_binary = build_viewer();

    // What the viewer's first picture must show, from the library: the same framing, one ray
    // per pixel centre. The click goes inside the triangle that covers the most pixels.
    let bvh = Bvh::build(Mesh::load(common::asset("scene.obj")).unwrap());
    let (w, h) = SIZE;
    let hits: Vec<Option<Hit>> = (0..w * h)
        .map(|i| library_hit(&bvh, i % w, i / w))
        .collect();
    let shown: Vec<Option<u32>> = hits.iter().map(|hit| hit.map(|h| h.triangle)).collect();
    let (x, y) = interior_pixel_of_largest_triangle(&shown);
    let expected = hits[y * w + x].unwrap();

    let mut viewer = Guard::new(
        Command::new(&viewer_binary)
            .arg(common::asset("scene.obj"))
            .args(["--size", &format!("{w}x{h}")])
            .env("DISPLAY", &display)
            .env_remove("WAYLAND_DISPLAY")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    let stdout = lines(viewer.child.stdout.take().unwrap());
    let stderr = lines(viewer.child.stderr.take().unwrap());
    let ready = next_line(&stdout, &stderr, "ready");
    assert!(ready.contains(&format!("size={w}x{h}")), "{ready}");
    let found = xdotool(
        &display,
        &[
            "search",
            "--sync",
            "--onlyvisible",
            "--name",
            "^meshray viewer",
        ],
    );
    let window = found
        .lines()
        .next()
        .expect("the viewer's window")
        .to_string();

    // Before the click: the scene is on screen (X draws asynchronously, so wait for it),
    // covering exactly the pixels whose rays hit in the library, and nothing is yellow.
    let before = screenshot_until(&display, &window, "the scene on screen", |p| {
        p.at(x, y) != BACKGROUND
    });
    assert_eq!((before.width, before.height), SIZE);
    let misplaced = (0..w * h)
        .filter(|&i| (before.pixels[i] != BACKGROUND) != shown[i].is_some())
        .count();
    assert_eq!(
        misplaced, 0,
        "pixels where the viewer and the library disagree on hit or miss"
    );
    assert_eq!(before.count(YELLOW), 0, "yellow pixels before any click");

    // A click as a hand makes it: the button held a tenth of a second (the viewer polls the
    // button once a frame, like any minifb program).
    let (xs, ys) = (x.to_string(), y.to_string());
    xdotool(&display, &["mousemove", "--window", &window, &xs, &ys]);
    xdotool(
        &display,
        &["mousedown", "1", "sleep", "0.1", "mouseup", "1"],
    );
    let pick = next_line(&stdout, &stderr, "pick");
    let fields: HashMap<&str, &str> = pick
        .split_whitespace()
        .filter_map(|field| field.split_once('='))
        .collect();
    let field = |name: &str| fields.get(name).map(|value| value.to_string());
    assert_eq!((field("x"), field("y")), (Some(xs), Some(ys)), "{pick}");
    assert_eq!(
        (field("triangle"), field("t")),
        (
            Some(expected.triangle.to_string()),
            Some(expected.t.to_string())
        ),
        "the viewer's pick is not the library's closest hit: {pick}"
    );
    let title = xdotool(&display, &["getwindowname", &window]);
    assert!(
        title.contains(&format!("triangle {} ", expected.triangle)),
        "title: {title}"
    );

    // After: exactly the picked triangle's pixels are yellow, the clicked one among them.
    let after = screenshot_until(&display, &window, "yellow pixels", |p| p.count(YELLOW) > 0);
    assert_eq!(after.at(x, y), YELLOW, "the clicked pixel");
    let yellow = after.count(YELLOW);
    let covered = shown
        .iter()
        .filter(|&&t| t == Some(expected.triangle))
        .count();
    assert!(yellow > 0 && yellow < w * h, "{yellow} yellow pixels");
    let wrong = (0..w * h)
        .filter(|&i| (after.pixels[i] == YELLOW) != (shown[i] == Some(expected.triangle)))
        .count();
    assert_eq!(
        wrong, 0,
        "{yellow} yellow pixels, triangle {} covers {covered}: {wrong} pixels differ",
        expected.triangle
    );
    eprintln!(
        "viewer under Xvfb {display}: clicked ({x}, {y}), picked triangle {} ({yellow} yellow pixels)",
        expected.triangle
    );

    // Escape quits, cleanly.
    xdotool(
        &display,
        &["keydown", "Escape", "sleep", "0.1", "keyup", "Escape"],
    );
    let status = viewer.wait_within(WAIT);
    assert!(status.success(), "the viewer exited with {status}");
}

/// The library's closest hit through the centre of pixel (x, y) of the viewer's first
/// picture: the `meshray` command's camera, framing the mesh from the default direction.
fn library_hit(bvh: &Bvh, x: usize, y: usize) -> Option<Hit> {
    let camera = camera::Camera::framing(
        &bvh.bounds(),
        camera::default_direction(),
        camera::FRAMING_DISTANCE,
    )
    .unwrap();
    let viewport = Vector2::new(SIZE.0 as f32, SIZE.1 as f32);
    let pixel = Point2::new(x as f32 + 0.5, y as f32 + 0.5);
    let ray = camera.ray(viewport, pixel).unwrap();
    bvh.closest_hit(&ray, &QueryOptions::default())
}

/// A pixel of the triangle that covers the most pixels whose eight neighbours show it too, so
/// the click lands well inside it.
fn interior_pixel_of_largest_triangle(shown: &[Option<u32>]) -> (usize, usize) {
    let (w, h) = SIZE;
    let mut coverage: HashMap<u32, usize> = HashMap::new();
    for t in shown.iter().flatten() {
        *coverage.entry(*t).or_default() += 1;
    }
    let (&largest, _) = coverage
        .iter()
        .max_by_key(|&(t, n)| (n, std::cmp::Reverse(t)))
        .expect("the scene is in view");
    (1..h - 1)
        .flat_map(|y| (1..w - 1).map(move |x| (x, y)))
        .find(|&(x, y)| {
            (y - 1..=y + 1).all(|j| (x - 1..=x + 1).all(|i| shown[j * w + i] == Some(largest)))
        })
        .expect("the largest triangle has an interior pixel")
}

/// A child process that is killed (and reaped) when the test ends, however it ends.
struct Guard {
    child: Child,
}

impl Guard {
    fn new(command: &mut Command) -> Guard {
        let child = command
            .spawn()
            .unwrap_or_else(|e| panic!("{command:?}: {e}"));
        Guard { child }
    }

    fn wait_within(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(start.elapsed() < limit, "still running after {limit:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // SIGTERM first, so that an X server removes its lock file and socket.
            let _ = Command::new("kill")
                .arg(self.child.id().to_string())
                .stderr(Stdio::null())
                .status();
            let start = Instant::now();
            while let Ok(None) = self.child.try_wait() {
                if start.elapsed() > Duration::from_secs(2) {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// Runs `command` to its end within `limit` (else kills it and fails): its stdout, once it
/// has succeeded.
fn run_within(command: &mut Command, limit: Duration) -> Vec<u8> {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut guard = Guard::new(command);
    let stdout = read_all(guard.child.stdout.take().unwrap());
    let stderr = read_all(guard.child.stderr.take().unwrap());
    let status = guard.wait_within(limit);
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    assert!(
        status.success(),
        "{command:?}: {status}\n{}",
        String::from_utf8_lossy(&stderr)
    );
    stdout
}

/// xdotool on `display`: what it printed.
fn xdotool(display: &str, args: &[&str]) -> String {
    let out = run_within(
        Command::new("xdotool").args(args).env("DISPLAY", display),
        WAIT,
    );
    String::from_utf8_lossy(&out).into_owned()
}

/// A stream read to its end on a thread (so that a child never blocks on a full pipe).
fn read_all(mut stream: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stream.read_to_end(&mut bytes);
        bytes
    })
}

/// A stream's lines, read on a thread so that they can be awaited within a time limit. The
/// thread reads to the end even when no one listens any more, so the writer never blocks on
/// a full pipe.
fn lines(stream: impl Read + Send + 'static) -> Receiver<String> {
    let (send, receive) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            let _ = send.send(line);
        }
    });
    receive
}

/// The viewer's next line on stdout that starts with `word`; a failure naming what it said on
/// stderr if none comes within [`WAIT`].
fn next_line(stdout: &Receiver<String>, stderr: &Receiver<String>, word: &str) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match stdout.recv_timeout(left) {
            Ok(line) if line.starts_with(word) => return line,
            Ok(_) => {}
            Err(e) => {
                let said: Vec<String> = stderr.try_iter().collect();
                panic!("no {word:?} line from the viewer ({e:?}); stderr: {said:?}");
            }
        }
    }
}

/// `name`'s path if a directory of PATH holds a file of that name.
fn find_in_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}

/// Starts Xvfb on a free display (it picks one and writes its number to `-displayfd`, here
/// its stdout, once it accepts connections). Panics, saying why, if it does not start: the
/// tools are there (build.rs checked), so a server that will not start is a failure to see.
fn start_xvfb() -> (Guard, String) {
    let spawned = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1024x768x24",
            "-nolisten",
            "tcp",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut xvfb = match spawned {
        Ok(child) => Guard { child },
        Err(e) => panic!("Xvfb did not start: {e}"),
    };
    let stdout = lines(xvfb.child.stdout.take().unwrap());
    // Xvfb can be chatty on stderr (keymap warnings); `lines` drains it.
    let stderr = lines(xvfb.child.stderr.take().unwrap());
    match stdout.recv_timeout(WAIT) {
        Ok(number) if number.trim().parse::<u32>().is_ok() => (xvfb, format!(":{}", number.trim())),
        other => {
            if other == Err(RecvTimeoutError::Disconnected) {
                // It exited: give the reader a moment to collect why.
                std::thread::sleep(Duration::from_millis(200));
            }
            let said: Vec<String> = stderr.try_iter().collect();
            panic!(
                "Xvfb did not start ({other:?}; stderr: {})",
                said.join(" | ")
            );
        }
    }
}

/// Builds the viewer with the cargo that runs this test, into this test's target directory,
/// and returns the binary.
fn build_viewer() -> PathBuf {
    // This test is <target>/<profile>/deps/viewer-<hash>.
    let exe = std::env::current_exe().unwrap();
    let target = exe
        .ancestors()
        .nth(3)
        .expect("the test runs from a cargo target directory");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| env!("CARGO").into());
    let started = Instant::now();
    run_within(
        Command::new(cargo)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["build", "--release", "--quiet", "-p", "meshray-viewer"])
            .arg("--target-dir")
            .arg(target),
        BUILD,
    );
    eprintln!(
        "built the viewer in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let binary = target
        .join("release")
        .join(format!("meshray-viewer{}", std::env::consts::EXE_SUFFIX));
    assert!(binary.is_file(), "{} is missing", binary.display());
    binary
}

/// A window's pixels as RGB.
struct Picture {
    width: usize,
    height: usize,
    pixels: Vec<[u8; 3]>,
}

impl Picture {
    fn at(&self, x: usize, y: usize) -> [u8; 3] {
        self.pixels[y * self.width + x]
    }

    fn count(&self, colour: [u8; 3]) -> usize {
        self.pixels.iter().filter(|&&p| p == colour).count()
    }
}

/// Screenshots of the window, every 50 ms until one satisfies `done`, within [`WAIT`].
fn screenshot_until(
    display: &str,
    window: &str,
    what: &str,
    done: impl Fn(&Picture) -> bool,
) -> Picture {
    let start = Instant::now();
    loop {
        let picture = screenshot(display, window);
        if done(&picture) {
            return picture;
        }
        assert!(start.elapsed() < WAIT, "no {what} within {WAIT:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The window's contents through `xwd` (X Window Dump: a header of big-endian 32-bit
/// fields, the window's name, a colour map, then rows of pixels in the server's byte order).
fn screenshot(display: &str, window: &str) -> Picture {
    let dump = run_within(
        Command::new("xwd")
            .args(["-silent", "-id", window])
            .env("DISPLAY", display),
        WAIT,
    );
    parse_xwd(&dump)
}

fn parse_xwd(bytes: &[u8]) -> Picture {
    let field = |i: usize| {
        let b = &bytes[4 * i..4 * i + 4];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize
    };
    let (header_size, version) = (field(0), field(1));
    assert!(
        bytes.len() >= 100 && version == 7,
        "not an XWD file (version {version})"
    );
    let (width, height) = (field(4), field(5));
    let (byte_order, bits_per_pixel, bytes_per_line) = (field(7), field(11), field(12));
    let masks = [field(14), field(15), field(16)];
    let colours = field(19);
    assert_eq!(
        (bits_per_pixel, masks),
        (32, [0xFF_0000, 0xFF00, 0xFF]),
        "an X server with 24-bit true colour in 32-bit pixels"
    );
    let start = header_size + 12 * colours;
    assert!(
        bytes.len() >= start + height * bytes_per_line,
        "a short XWD file"
    );
    let pixels = (0..height)
        .flat_map(|y| (0..width).map(move |x| start + y * bytes_per_line + 4 * x))
        .map(|at| {
            let b = [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
            let pixel = if byte_order == 0 {
                u32::from_le_bytes(b)
            } else {
                u32::from_be_bytes(b)
            };
            [(pixel >> 16) as u8, (pixel >> 8) as u8, pixel as u8]
        })
        .collect();
    Picture {
        width,
        height,
        pixels,
    }
}

#[test]
fn xwd_files_are_read_in_either_byte_order() {
    // A 2×1 dump: header (25 fields + a 4-byte name), two colour map entries, one padded row.
    for byte_order in [0u32, 1] {
        let mut header = [0u32; 25];
        header[0] = 104; // header size, name included
        header[1] = 7;
        header[4] = 2;
        header[5] = 1;
        header[7] = byte_order;
        header[11] = 32;
        header[12] = 12; // bytes per line: one pixel of padding
        header[14..17].copy_from_slice(&[0xFF_0000, 0xFF00, 0xFF]);
        header[19] = 2;
        let mut bytes: Vec<u8> = header.iter().flat_map(|f| f.to_be_bytes()).collect();
        bytes.extend(b"win\0");
        bytes.extend([0u8; 24]);
        for pixel in [0x00FF_FF00u32, 0x001E_1E26, 0xDEAD_BEEF] {
            bytes.extend(if byte_order == 0 {
                pixel.to_le_bytes()
            } else {
                pixel.to_be_bytes()
            });
        }
        let picture = parse_xwd(&bytes);
        assert_eq!((picture.width, picture.height), (2, 1));
        assert_eq!(picture.pixels, vec![YELLOW, BACKGROUND]);
    }
}
