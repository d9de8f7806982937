//! Pick the closest triangle under a pixel: load a mesh, build its tree once, and cast the
//! ray through the middle of a camera's image, and through one pixel that sees the mesh's
//! edge.
//!
//! ```text
//! cargo run --release --example pick              # assets/scene.obj
//! cargo run --release --example pick -- MESH.obj  # any OBJ, STL, PLY or glTF file
//! ```

use meshray::prelude::*;
use meshray::{Bvh, Camera, Mesh, QueryOptions};
use nalgebra::{Isometry3, Perspective3, Point2, Vector2, Vector3};

mod common;

const USAGE: &str = "usage: cargo run --release --example pick [-- MESH]\n\nMESH: any file meshray reads (OBJ, STL, PLY, glTF, GLB); default assets/scene.obj.\n";

fn main() -> Result<(), meshray::Error> {
    let path = common::mesh_path(USAGE);
    let bvh = Bvh::build(Mesh::load(&path)?);
    println!("{path}: {} triangles", bvh.mesh().triangle_count());

    // A camera looking at the middle of the mesh from in front and a little above it.
    let bounds = bvh.mesh().bounds();
    let centre = nalgebra::center(&bounds.min, &bounds.max);
    let radius = (bounds.max - bounds.min).norm() / 2.0;
    let eye = centre + Vector3::new(0.45, 0.35, 1.0).normalize() * (2.5 * radius);
    let view = Isometry3::look_at_rh(&eye, &centre, &Vector3::y()).to_homogeneous();
    let projection = Perspective3::new(4.0 / 3.0, 0.8, 0.01 * radius, 10.0 * radius);
    let camera = Camera::new(
        view,
        projection.to_homogeneous(),
        Vector2::new(800.0, 600.0),
    )?;

    let options = QueryOptions::default();
    for pixel in [Point2::new(400.0, 300.0), Point2::new(20.0, 20.0)] {
        // The ray from the eye through the pixel's centre (y down, as on screen).
        let ray = camera.pixel_ray(pixel)?;
        match bvh.closest_hit(&ray, &options) {
            Some(hit) => println!(
                "pixel ({}, {}): triangle {} of object {:?} at t = {:.4}, point {:.4}, {} face",
                pixel.x,
                pixel.y,
                hit.triangle,
                bvh.mesh().objects()[hit.object as usize],
                hit.t,
                hit.point,
                if hit.front_face { "front" } else { "back" },
            ),
            None => println!("pixel ({}, {}): nothing", pixel.x, pixel.y),
        }
    }
    Ok(())
}
