//! A scene of instances: one mesh's tree shared by several placed copies, picked through
//! one ray; then an instance is moved and another hidden by its mask, and the same ray
//! picks again (a level editor's or a CAD assembly's picking).
//!
//! ```text
//! cargo run --release --example scene              # assets/scene.obj
//! cargo run --release --example scene -- MESH.obj
//! ```

use std::sync::Arc;

use meshray::prelude::*;
use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
use nalgebra::{Matrix4, Vector3};

mod common;

const USAGE: &str = "usage: cargo run --release --example scene [-- MESH]\n\nMESH: any file meshray reads (OBJ, STL, PLY, glTF, GLB); default assets/scene.obj.\n";

fn pick(scene: &Scene, ray: &Ray, options: &SceneOptions) {
    match scene.closest_hit(ray, options) {
        Some(found) => println!(
            "  instance {} (triangle {}) at t = {:.3}, world point {:.3}",
            found.instance, found.hit.triangle, found.hit.t, found.hit.point
        ),
        None => println!("  nothing"),
    }
}

fn main() -> Result<(), meshray::Error> {
    let path = common::mesh_path(USAGE);
    // One tree, built once, shared by every instance.
    let bvh = Arc::new(Bvh::build(Mesh::load(&path)?));
    let size = (bvh.bounds().max - bvh.bounds().min).norm();

    // Three copies in a row along x, the middle one turned and half as large about its centre.
    let mut scene = Scene::new();
    let centre = nalgebra::center(&bvh.bounds().min, &bvh.bounds().max);
    let step = Vector3::x() * (1.5 * size);
    scene.add(bvh.clone(), Matrix4::new_translation(&-step))?;
    let turned_and_halved = Matrix4::new_translation(&centre.coords)
        * Matrix4::new_rotation(Vector3::y() * 0.5)
        * Matrix4::new_scaling(0.5)
        * Matrix4::new_translation(&-centre.coords);
    let middle = scene.add(bvh.clone(), turned_and_halved)?;
    let right = scene.add(bvh.clone(), Matrix4::new_translation(&step))?;
    println!("{} instances of {path}", scene.len());

    // A ray along -x from far right, through the copies' centres: the right copy first.
    let ray = Ray::new(centre + step * 3.0, -Vector3::x());
    let options = SceneOptions::default();
    println!("the ray from the right:");
    pick(&scene, &ray, &options);

    // Move the right copy out of the ray's way: the next query refits the top-level tree.
    scene.set_transform(
        right,
        Matrix4::new_translation(&(step + Vector3::z() * (3.0 * size))),
    )?;
    println!("after moving instance {right} away:");
    pick(&scene, &ray, &options);

    // Masks: give the middle copy its own bit and leave it out of the query.
    scene.set_mask(middle, 0b10)?;
    let without_middle = SceneOptions {
        mask: !0b10,
        ..SceneOptions::default()
    };
    println!("leaving instance {middle} out by its mask:");
    pick(&scene, &ray, &without_middle);

    Ok(())
}
