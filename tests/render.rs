//! The render example as a user runs it: it writes a PNG of the asset scene of the asked
//! size, with the background in the corners, the picked triangle in yellow at the picked
//! pixel, and a heatmap whose scale bar runs blue to red.

mod common;

use std::path::Path;
use std::process::Command;

fn render(args: &[&str], out: &Path) -> image::RgbImage {
    let status = Command::new(common::example_binary("render"))
        .args(args)
        .arg("--out")
        .arg(out)
        .status()
        .unwrap();
    assert!(status.success());
    image::open(out).unwrap().to_rgb8()
}

#[test]
fn render_writes_the_picture_a_user_expects() {
    let dir = std::env::temp_dir().join(format!("meshray-render-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let picture = render(
        &["--size", "160", "120", "--pick", "80", "60"],
        &dir.join("n.png"),
    );
    assert_eq!(picture.dimensions(), (160, 120));
    assert_eq!(
        picture.get_pixel(0, 0).0,
        [30, 30, 38],
        "background in the corner"
    );
    assert_eq!(
        picture.get_pixel(80, 60).0,
        [255, 220, 0],
        "the picked triangle"
    );
    let lit = picture
        .pixels()
        .filter(|p| p.0[0] > 60 && p.0 != [255, 220, 0])
        .count();
    assert!(
        lit > 160 * 120 / 10,
        "the scene covers part of the image ({lit} pixels)"
    );

    let heat = render(
        &["--size", "160", "120", "--mode", "heat"],
        &dir.join("h.png"),
    );
    let bar_left = heat.get_pixel(0, 119).0;
    let bar_right = heat.get_pixel(159, 119).0;
    assert!(
        bar_left[2] == 255 && bar_left[0] == 0,
        "scale starts blue: {bar_left:?}"
    );
    assert!(
        bar_right[0] == 255 && bar_right[2] == 0,
        "scale ends red: {bar_right:?}"
    );

    let bad = Command::new(common::example_binary("render"))
        .args(["--mode", "sparkles"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--mode"));
}
