//! The `meshray` command as a user meets it: every command answers `--help` with its usage
//! (docs/command.md's too) and exits 0; mistakes on the command line are sentences naming
//! what is wrong, with exit code 2, and nothing is left behind; every command prints the
//! mesh's load warnings; the camera goes where `--eye` and `--target` say; and no command
//! panics on a mesh the library loads, however small, large or far away.

#[path = "../../tests/common/mod.rs"]
mod common;

use meshray::prelude::*;
use meshray::{Bvh, Mesh, QueryOptions, Ray};
use meshray_cli::commands::COMMANDS;
use nalgebra::{Point3, Vector3};
use std::path::PathBuf;
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("meshray-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn meshray(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_meshray"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `meshray args` expecting a usage error (exit code 2) whose message contains every
/// one of `words`; returns the message.
fn usage_error(args: &[&str], words: &[&str]) -> String {
    let output = meshray(args);
    let message = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
    for word in words {
        assert!(message.contains(word), "{args:?}: {message}");
    }
    assert!(
        !message.contains("Some(") && !message.contains("panicked"),
        "{message}"
    );
    message
}

#[test]
fn every_command_answers_help_with_its_usage() {
    let readme = std::fs::read_to_string(common::repository().join("docs/command.md")).unwrap();
    for command in &COMMANDS {
        for flag in ["--help", "-h"] {
            let output = meshray(&[command.name, flag]);
            assert!(output.status.success(), "{} {flag}", command.name);
            assert_eq!(stdout(&output), command.usage, "{} {flag}", command.name);
        }
        assert!(
            command
                .usage
                .starts_with(&format!("usage: meshray {} ", command.name)),
            "{}",
            command.usage
        );
        // Help wins wherever it stands, even after a mistake.
        let output = meshray(&[command.name, "--no-such-option", "--help"]);
        assert!(output.status.success(), "{}", command.name);
        assert!(
            readme.contains(command.usage),
            "docs/command.md gives the usage of {} as --help prints it",
            command.name
        );
    }
    let overview = meshray(&["--help"]);
    assert!(overview.status.success());
    for command in &COMMANDS {
        assert!(stdout(&overview).contains(command.name));
    }
    // No command at all, or one that does not exist: the list, and exit code 2.
    assert_eq!(meshray(&[]).status.code(), Some(2));
    usage_error(
        &["frobnicate"],
        &["no command \"frobnicate\"", "pick, sweep, render"],
    );
}

#[test]
fn mistakes_on_the_command_line_are_sentences() {
    usage_error(
        &["pick", "--cull", "sideways"],
        &["--cull takes none, back or front, not \"sideways\""],
    );
    usage_error(&["pick", "--pixel", "1"], &["--pixel needs 2 numbers"]);
    usage_error(
        &["render", "--mode", "sparkles"],
        &["--mode takes normal, depth or heat"],
    );
    usage_error(
        &["render", "--size", "0", "10"],
        &["--size takes a whole number from 1"],
    );
    usage_error(&["bench", "--threads", "many"], &["--threads", "\"many\""]);
    usage_error(&["scaling", "--bogus"], &["unknown option --bogus"]);
    // Sizes beyond what memory holds are refused, not attempted.
    usage_error(
        &["bench", "--width", "5000"],
        &["--width takes a whole number from 1 to 4096"],
    );
    if let Some(dir) = common::meshes_dir() {
        let bunny = dir.join("stanford-bunny/stanford-bunny.obj");
        usage_error(
            &["bench", bunny.to_str().unwrap(), "--subdivide", "6"],
            &["--subdivide 6 would make 284471296 triangles"],
        );
    }
    usage_error(
        &["render", "--eye", "1", "2", "3", "--orbit", "10", "20"],
        &["--eye and --orbit"],
    );
}

#[test]
fn every_one_mesh_command_refuses_a_second_mesh() {
    // Before, render, select and scaling silently took the last one.
    for name in ["pick", "render", "select", "slice", "scaling", "bench"] {
        usage_error(
            &[name, "first.obj", "second.obj"],
            &[&format!(
                "\"second.obj\" is a second mesh; {name} takes one"
            )],
        );
    }
}

#[test]
fn zero_samples_and_an_empty_grid_are_errors() {
    usage_error(
        &["select", "--samples", "0"],
        &["--samples takes a whole number from 1 to 64, not \"0\""],
    );
    usage_error(
        &["scene", "--grid", "0"],
        &["--grid takes a whole number from 1 to 100, not \"0\""],
    );
}

#[test]
fn a_pixel_outside_the_image_says_so() {
    usage_error(
        &["pick", "--pixel", "900", "10"],
        &["pixel (900, 10) is outside the 800×600 image"],
    );
    usage_error(
        &["pick", "--size", "100", "50", "--pixel", "50", "-1"],
        &["pixel (50, -1) is outside the 100×50 image"],
    );
    usage_error(
        &["render", "--size", "64", "48", "--pick", "64.5", "0"],
        &["--pick (64.5, 0) is outside the 64×48 picture"],
    );
    usage_error(
        &["select", "--rect", "0", "0", "801", "10"],
        &["(801, 10) of --rect is outside the 800×600 image"],
    );
    usage_error(
        &["scene", "--pixel", "0", "700"],
        &["pixel (0, 700) is outside"],
    );
    // The edges are on the image.
    let output = meshray(&["pick", "--pixel", "800", "600", "--pixel", "0", "0"]);
    assert!(output.status.success(), "{}", stderr(&output));
}

#[test]
fn render_to_a_name_that_is_not_png_leaves_no_file() {
    let dir = scratch("jpg");
    std::fs::create_dir_all(&dir).unwrap();
    let jpg = dir.join("x.jpg");
    usage_error(
        &["render", "--out", jpg.to_str().unwrap()],
        &["x.jpg", "PNG only"],
    );
    assert!(!jpg.exists(), "an empty x.jpg was left behind");
    // A directory that does not exist: a failure naming the file, and nothing written.
    let missing = dir.join("no-such-dir").join("x.png");
    let output = meshray(&[
        "render",
        "--size",
        "8",
        "8",
        "--out",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("x.png"), "{}", stderr(&output));
    // A successful render leaves exactly its picture.
    let png = dir.join("ok.PNG");
    let output = meshray(&["render", "--size", "8", "8", "--out", png.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, ["ok.PNG"]);
}

#[test]
fn a_directory_or_a_lying_extension_is_named_as_such() {
    let dir = scratch("a-directory");
    std::fs::create_dir_all(&dir).unwrap();
    for command in ["pick", "render", "select", "scene", "scaling", "bench"] {
        let output = meshray(&[command, dir.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(1), "{command}");
        assert!(
            stderr(&output).contains("is a directory"),
            "{command}: {}",
            stderr(&output)
        );
    }
    // The asset scene, an OBJ, named .stl; an ASCII STL named .obj.
    let stl = scratch("scene.stl");
    std::fs::copy(common::asset("scene.obj"), &stl).unwrap();
    let output = meshray(&["pick", stl.to_str().unwrap()]);
    assert!(
        stderr(&output).contains("this is an OBJ file, not STL"),
        "{}",
        stderr(&output)
    );
    let obj = scratch("facet.obj");
    std::fs::write(
        &obj,
        "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n\
         endloop\nendfacet\nendsolid t\n",
    )
    .unwrap();
    let output = meshray(&["render", obj.to_str().unwrap()]);
    assert!(
        stderr(&output).contains("this is an STL file, not OBJ"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn every_command_prints_the_load_warnings() {
    // An OBJ whose material library is missing: the geometry loads, with a warning.
    let obj = scratch("no-mtl.obj");
    std::fs::write(
        &obj,
        "mtllib missing.mtl\nv -1 -1 0\nv 1 -1 0\nv 0 1 0\nusemtl red\nf 1 2 3\n",
    )
    .unwrap();
    let mesh = obj.to_str().unwrap();
    let png = scratch("warned.png");
    let runs: [&[&str]; 6] = [
        &["pick", mesh],
        &[
            "render",
            mesh,
            "--size",
            "8",
            "8",
            "--out",
            png.to_str().unwrap(),
        ],
        &["select", mesh],
        &["scene", mesh, "--grid", "1"],
        &["scaling", mesh, "--max-triangles", "1", "--rays", "10"],
        &[
            "bench", mesh, "--width", "4", "--random", "10", "--passes", "1",
        ],
    ];
    for args in runs {
        let output = meshray(args);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("warning: ") && stderr(&output).contains("missing.mtl"),
            "{args:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn the_camera_goes_where_eye_and_target_say() {
    // The README's ray: from (0, 1, 10) straight down -z onto the sphere.
    let bvh = Bvh::build(Mesh::load(common::asset("scene.obj")).unwrap());
    let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), Vector3::new(0.0, 0.0, -1.0));
    let expected = bvh.closest_hit(&ray, &QueryOptions::default()).unwrap();
    let output = meshray(&[
        "pick", "--eye", "0", "1", "10", "--target", "0", "1", "0", "--json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let line = stdout(&output);
    assert!(
        line.contains(&format!("\"triangle\":{},", expected.triangle))
            && line.contains("\"object\":\"sphere\""),
        "{line}"
    );
    // An eye on the target has no direction to look in.
    let output = meshray(&["pick", "--eye", "0", "1", "0", "--target", "0", "1", "0"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains("the same point"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn no_command_panics_on_a_mesh_of_any_size_the_library_loads() {
    for (scale, offset) in [
        (1e-30f64, 0.0f64),
        (1e-12, 0.0),
        (1e-7, 0.0),
        (1e-3, 1e6),
        (1.0, -1e20),
        (1e20, 0.0),
        (1e30, 0.0),
        (1e36, 0.0),
    ] {
        let obj = scratch(&format!("scale-{scale:e}-{offset:e}.obj"));
        let corners = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [0.0, 0.0, 1.0],
        ];
        let mut text = String::new();
        for c in corners {
            let p: Vec<String> = c
                .iter()
                .map(|x| format!("{:e}", x * scale + offset))
                .collect();
            text += &format!("v {}\n", p.join(" "));
        }
        text += "f 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n";
        std::fs::write(&obj, text).unwrap();
        if Mesh::load(&obj).is_err() {
            continue; // Refused by the library: nothing for the commands to frame.
        }
        let mesh = obj.to_str().unwrap();
        let png = scratch("scaled.png");
        let runs: [&[&str]; 5] = [
            &["pick", mesh],
            &[
                "render",
                mesh,
                "--size",
                "16",
                "12",
                "--out",
                png.to_str().unwrap(),
            ],
            &["select", mesh, "--samples", "2"],
            &["scene", mesh, "--grid", "2"],
            &[
                "bench", mesh, "--width", "8", "--random", "100", "--passes", "1",
            ],
        ];
        for args in runs {
            let output = meshray(args);
            assert!(
                matches!(output.status.code(), Some(0 | 1))
                    && !stderr(&output).contains("panicked"),
                "{scale:e} at {offset:e}, {args:?}: {:?} {}",
                output.status,
                stderr(&output)
            );
        }
    }
}

/// A reader that stops early (`meshray bench … | head -1`) ends the command quietly: exit 0,
/// no panic. `println!` panicked there ("failed printing to stdout: Broken pipe").
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::process::Stdio;
    for args in [
        &["bench", "--width", "8", "--random", "100", "--passes", "1"][..],
        &["--help"][..],
        &["pick", "--json"][..],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_meshray"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before the command writes anything.
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let err = stderr(&output);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(
            output.status.success(),
            "{args:?}: {:?} {err}",
            output.status
        );
    }
}

/// `meshray sweep` answers what the library's `cast_sphere` / `cast_capsule` answers, and
/// refuses a shape that is none.
#[test]
fn sweep_prints_the_librarys_contact() {
    let bvh = Bvh::build(Mesh::load(common::asset("scene.obj")).unwrap());
    let ray = Ray::new([0.0f32, 0.35, 5.0], [0.0f32, 0.0, -1.0]);
    let want = bvh
        .cast_capsule(&ray, [0.0, 1.5, 0.0], 0.3, &QueryOptions::default())
        .unwrap()
        .unwrap();
    let output = meshray(&[
        "sweep",
        "--from",
        "0",
        "0.35",
        "5",
        "--direction",
        "0",
        "0",
        "-1",
        "--axis",
        "0",
        "1.5",
        "0",
        "--radius",
        "0.3",
        "--json",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let line = stdout(&output);
    assert!(
        line.starts_with(&format!(
            "{{\"hit\":true,\"triangle\":{},\"t\":{}",
            want.triangle, want.t
        )),
        "{line}"
    );
    assert!(line.contains("\"object\":\"sphere\""), "{line}");
    // The default: a ball dropped from above lands on the top of the sphere.
    let output = meshray(&["sweep"]);
    assert!(
        stdout(&output).contains("touches triangle"),
        "{}",
        stdout(&output)
    );
    // Out of reach: nothing.
    let output = meshray(&["sweep", "--distance", "0.5", "--json"]);
    assert_eq!(stdout(&output).trim(), "{\"hit\":false}");
    usage_error(&["sweep", "--radius", "-1"], &["--radius", "at least 0"]);
    usage_error(&["sweep", "--direction", "0", "0", "0"], &["--direction"]);
    usage_error(&["sweep", "--axis", "nan", "0", "0"], &["--axis"]);
}
