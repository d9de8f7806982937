//! Pieces the examples share (included with `#[path]`; not an example itself).
#![allow(dead_code)]

use meshray::Aabb;
use nalgebra::{Isometry3, Matrix4, Perspective3, Vector3};

/// The camera every example frames a mesh with: from the bounds' centre `c`, at
/// `c + 2.2·h·normalize(direction)` (`h` half the bounds' diagonal) looking at `c` with +y
/// up, vertical field of view 45°, near and far planes at 0.01·h and 10·h. Returns the view
/// and projection matrices for a viewport of the given aspect ratio.
pub fn framing(
    bounds: &Aabb,
    direction: Vector3<f32>,
    aspect: f32,
) -> (Matrix4<f32>, Matrix4<f32>) {
    framing_at(bounds, direction, 2.2, aspect)
}

/// [`framing`] with the eye `distance` half-diagonals from the centre instead of 2.2 (the
/// viewer's zoom; 2.2 gives `framing`'s matrices bit for bit).
pub fn framing_at(
    bounds: &Aabb,
    direction: Vector3<f32>,
    distance: f32,
    aspect: f32,
) -> (Matrix4<f32>, Matrix4<f32>) {
    let c = bounds.centroid();
    let h = (bounds.extent().norm() * 0.5).max(1e-6);
    let eye = c + direction.normalize() * (distance * h);
    let view = Isometry3::look_at_rh(&eye, &c, &Vector3::y()).to_homogeneous();
    let projection =
        Perspective3::new(aspect, 45f32.to_radians(), 0.01 * h, 10.0 * h).to_homogeneous();
    (view, projection)
}

/// The default viewing direction: from the front, above and to the right.
pub fn default_direction() -> Vector3<f32> {
    Vector3::new(0.45, 0.35, 1.0)
}

/// `s` as a JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
