//! `meshray render` as a user runs it: it writes a PNG of the asset scene of the asked size,
//! with the background in the corners, the picked triangle in yellow at the picked pixel, and
//! a heatmap whose scale bar runs blue to red; from an eye inside a closed mesh it shows
//! front faces, not a box of back faces.

#[path = "../../tests/common/mod.rs"]
mod common;
mod picture;

use picture::Picture;
use std::path::{Path, PathBuf};
use std::process::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("meshray-render-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn render(args: &[&str], out: &Path) -> Picture {
    let output = Command::new(env!("CARGO_BIN_EXE_meshray"))
        .arg("render")
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    Picture::read(out)
}

#[test]
fn render_writes_the_picture_a_user_expects() {
    let picture = render(
        &["--size", "160", "120", "--pick", "80", "60"],
        &scratch("n.png"),
    );
    assert_eq!((picture.width, picture.height), (160, 120));
    assert_eq!(picture.at(0, 0), [30, 30, 38], "background in the corner");
    assert_eq!(picture.at(80, 60), [255, 220, 0], "the picked triangle");
    let lit = picture
        .pixels()
        .filter(|p| p[0] > 60 && *p != [255, 220, 0])
        .count();
    assert!(
        lit > 160 * 120 / 10,
        "the scene covers part of the image ({lit} pixels)"
    );

    let heat = render(
        &["--size", "160", "120", "--mode", "heat"],
        &scratch("h.png"),
    );
    let (left, right) = (heat.at(0, 119), heat.at(159, 119));
    assert!(
        left[2] == 255 && left[0] == 0,
        "scale starts blue: {left:?}"
    );
    assert!(
        right[0] == 255 && right[2] == 0,
        "scale ends red: {right:?}"
    );
}

/// Whether a normal-mode pixel shows a back face (dark red) rather than a front face (grey).
fn back_face(p: [u8; 3]) -> bool {
    p[0] > 30 && p[1] < p[0] / 2 && p[0] != 255
}

/// Of the pixels showing a face (the picked triangle's yellow aside), the share of front
/// faces, and how many pixels that share is of.
fn front_share(picture: &Picture) -> (f64, usize) {
    let shown: Vec<[u8; 3]> = picture
        .pixels()
        .filter(|&p| p != [30, 30, 38] && p != [255, 220, 0])
        .collect();
    let front = shown.iter().filter(|&&p| !back_face(p)).count();
    (front as f64 / shown.len().max(1) as f64, shown.len())
}

#[test]
fn an_eye_inside_a_closed_mesh_sees_its_inside() {
    // A box around the eye, its faces turned inwards (a room as modellers make one).
    let room = scratch("room.obj");
    let mut obj = String::new();
    for (x, y, z) in [
        (-5, 0, -5),
        (5, 0, -5),
        (5, 3, -5),
        (-5, 3, -5),
        (-5, 0, 5),
        (5, 0, 5),
        (5, 3, 5),
        (-5, 3, 5),
    ] {
        obj += &format!("v {x} {y} {z}\n");
    }
    // Each face's corners counter-clockwise seen from inside.
    for face in [
        [1, 2, 3, 4],
        [5, 8, 7, 6],
        [1, 4, 8, 5],
        [2, 6, 7, 3],
        [1, 5, 6, 2],
        [4, 3, 7, 8],
    ] {
        obj += &format!("f {} {} {} {}\n", face[0], face[1], face[2], face[3]);
    }
    std::fs::write(&room, obj).unwrap();
    let room = room.to_str().unwrap();
    // From outside (the default framing), every visible face of the room is a back face.
    let outside = render(&[room, "--size", "80", "60"], &scratch("outside.png"));
    let (front, shown) = front_share(&outside);
    assert!(
        front == 0.0 && shown > 80 * 60 / 5,
        "outside: {front} of {shown}"
    );
    // From inside, looking along the room, every pixel is a front face.
    let inside = render(
        &[
            room, "--size", "80", "60", "--eye", "0", "1.5", "3", "--target", "0", "1.5", "-5",
        ],
        &scratch("inside.png"),
    );
    let (front, shown) = front_share(&inside);
    assert!(
        front == 1.0 && shown > 80 * 60 / 2,
        "inside: {front} of {shown}"
    );
}

#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
fn the_conference_room_renders_from_inside() {
    let Some(dir) = common::meshes_dir() else {
        return;
    };
    let mesh = dir.join("conference/conference.obj");
    let out = scratch("conference.png");
    let picture = render(
        &[
            mesh.to_str().unwrap(),
            "--size",
            "160",
            "120",
            "--eye",
            "300",
            "300",
            "-200",
            "--target",
            "1400",
            "200",
            "-200",
        ],
        &out,
    );
    let (front, shown) = front_share(&picture);
    assert!(
        front > 0.9 && shown > 160 * 120 / 2,
        "mostly front faces from inside: {front} of {shown}"
    );
}
