//! `meshray slice` as a user runs it: the picture it writes says inside (blue) exactly where
//! the library's `contains` does, outside (orange) elsewhere, with the surface drawn white;
//! on the asset scene and on the open Stanford bunny.

#[path = "../../tests/common/mod.rs"]
mod common;
mod picture;

use meshray::prelude::*;
use meshray::{Bvh, Mesh};
use nalgebra::Point3;
use picture::Picture;
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("meshray-slice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Runs `meshray slice MESH --axis y --at 0.5 --width W` and checks `samples` of its pixels
/// against `Bvh::contains` at the pixel's centre; returns the share of blue pixels.
fn check_slice(mesh: &Path, width: u32, samples: usize) -> f64 {
    let out = scratch(&format!(
        "{}.png",
        mesh.file_stem().unwrap().to_string_lossy()
    ));
    let output = Command::new(env!("CARGO_BIN_EXE_meshray"))
        .arg("slice")
        .arg(mesh)
        .args([
            "--axis",
            "y",
            "--at",
            "0.5",
            "--width",
            &width.to_string(),
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("% inside"));
    let picture = Picture::read(&out);
    let (w, h) = (picture.width, picture.height);
    let bvh = Bvh::build(Mesh::load(mesh).unwrap());
    let (lo, hi) = (bvh.bounds().min, bvh.bounds().max);
    // The picture spans x (right) and z (down the picture, decreasing), grown by a tenth.
    let grow = |k: usize| 0.1 * (hi[k] - lo[k]);
    let (a0, a1, b0, b1) = (
        lo.x - grow(0),
        hi.x + grow(0),
        lo.z - grow(2),
        hi.z + grow(2),
    );
    assert_eq!(w, width);
    assert_eq!(
        h,
        ((f64::from(w) * f64::from(b1 - b0) / f64::from(a1 - a0)).round() as u32)
    );
    let level = lo.y + 0.5 * (hi.y - lo.y);
    let (mut blue, mut orange, mut white) = (0, 0, 0);
    for p in picture.pixels() {
        match p {
            [255, 255, 255] => white += 1,
            [r, _, b] if b > r => blue += 1,
            _ => orange += 1,
        }
    }
    assert!(
        blue > 0 && orange > 0 && white > 0,
        "{blue} blue, {orange} orange, {white} white"
    );
    let mut rng = common::Rng::new(4);
    let mut checked = 0;
    while checked < samples {
        let (x, y) = (rng.below(w as usize) as u32, rng.below(h as usize) as u32);
        let colour = picture.at(x, y);
        if colour == [255, 255, 255] {
            continue; // the surface, drawn over
        }
        let p = Point3::new(
            a0 + (a1 - a0) * (x as f32 + 0.5) / w as f32,
            level,
            b1 - (b1 - b0) * (y as f32 + 0.5) / h as f32,
        );
        assert_eq!(
            colour[2] > colour[0],
            bvh.contains(p, &Default::default()),
            "pixel ({x}, {y}) at {p:?}: {colour:?}"
        );
        checked += 1;
    }
    blue as f64 / f64::from(w * h)
}

#[test]
fn slice_colours_inside_where_the_library_says_inside() {
    // Through the sphere's centre (the scene's bounds run from y = 0 to 2).
    let inside = check_slice(&common::asset("scene.obj"), 200, 400);
    assert!(inside > 0.01, "{inside}");
}

#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
fn slice_of_the_open_bunny_shows_its_body_inside() {
    let Some(dir) = common::meshes_dir() else {
        return;
    };
    let inside = check_slice(&dir.join("stanford-bunny/stanford-bunny.obj"), 160, 300);
    assert!(
        inside > 0.1,
        "the bunny's body fills part of the slice: {inside}"
    );
}

#[test]
fn slice_refuses_what_it_cannot_draw() {
    for (args, says) in [
        (vec!["--at", "1.5"], "--at takes a number from 0 to 1"),
        (vec!["--axis", "w"], "--axis takes x, y or z"),
        (
            vec!["--width", "3"],
            "--width takes a whole number from 16 to 4096",
        ),
        (vec!["--out", "slice.jpg"], ".png"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_meshray"))
            .arg("slice")
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
