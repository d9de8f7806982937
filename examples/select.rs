//! Box select under a screen rectangle: every triangle inside the region the rectangle
//! spans (through the model, as a CAD "window" select), then only those the user can see
//! there ("visible only": the closest hit of at least one sample ray in the rectangle).
//!
//! ```text
//! cargo run --release --example select              # assets/scene.obj
//! cargo run --release --example select -- MESH.obj
//! ```

use meshray::geometry::Aabb;
use meshray::selection::Region;
use meshray::{Bvh, Camera, Mesh, QueryOptions};
use nalgebra::{Isometry3, Perspective3, Point2, Vector2, Vector3};

mod common;

const USAGE: &str = "usage: cargo run --release --example select [-- MESH]\n\nMESH: any file meshray reads (OBJ, STL, PLY, glTF, GLB); default assets/scene.obj.\n";

fn main() -> Result<(), meshray::Error> {
    let path = common::mesh_path(USAGE);
    let bvh = Bvh::build(Mesh::load(&path)?);
    let bounds = bvh.mesh().bounds();
    let centre = nalgebra::center(&bounds.min, &bounds.max);
    let radius = (bounds.max - bounds.min).norm() / 2.0;

    // The camera, as a viewport would hold it: view and projection matrices, size in pixels.
    let eye = centre + Vector3::new(0.45, 0.35, 1.0).normalize() * (2.5 * radius);
    let view = Isometry3::look_at_rh(&eye, &centre, &Vector3::y()).to_homogeneous();
    let projection =
        Perspective3::new(4.0 / 3.0, 0.8, 0.01 * radius, 10.0 * radius).to_homogeneous();
    let camera = Camera::new(view, projection, Vector2::new(800.0, 600.0))?;
    // The rectangle the user dragged: the middle of the screen.
    let (a, b) = (Point2::new(300.0, 200.0), Point2::new(500.0, 400.0));

    // Everything under the rectangle, front and back, seen or hidden.
    let through = bvh.triangles_in(&Region::Frustum(camera.frustum(a, b)?));
    // Only what the user sees there: the closest hit of a ray through each pixel's centre
    // (samples = 1; 2 casts a 2×2 grid per pixel and catches thinner triangles).
    let visible =
        meshray::picking::visible_triangles(&bvh, &camera, a, b, 1, &QueryOptions::default())?;
    println!(
        "{path}: {} triangles under the rectangle, {} of them visible",
        through.len(),
        visible.len()
    );
    // Every visible triangle is under the rectangle.
    assert!(visible.iter().all(|t| through.contains(t)));

    // A box in space instead of on screen: the triangles overlapping the mesh's lower half.
    let lower = Aabb {
        min: bounds.min,
        max: bounds.max - Vector3::y() * ((bounds.max.y - bounds.min.y) / 2.0),
    };
    println!(
        "{} triangles overlap the lower half's box",
        bvh.triangles_in(&Region::Box(lower)).len()
    );
    Ok(())
}
