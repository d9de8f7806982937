//! A ball rolling through a scene as a game's character controller moves it: each frame it
//! sweeps the sphere along the wanted motion (forward, and gravity); where the sphere
//! touches, it stops there, keeps the part of the motion along the surface, and sweeps
//! again with the rest. The ball slides along the ground and comes to rest against the
//! scene's sphere.
//!
//! ```text
//! cargo run --release --example slide              # assets/scene.obj
//! cargo run --release --example slide -- MESH.obj
//! ```

use meshray::prelude::*;
use meshray::{Bvh, Mesh, Ray};
use nalgebra::{Point3, Vector3};

mod common;

const USAGE: &str = "usage: cargo run --release --example slide [-- MESH]\n\nMESH: any file meshray reads (OBJ, STL, PLY, glTF, GLB); default assets/scene.obj.\n";

fn main() -> Result<(), meshray::Error> {
    let path = common::mesh_path(USAGE);
    let bvh = Bvh::build(Mesh::load(&path)?);
    let (radius, skin) = (0.25, 1e-3);
    // On the ground, in front of the scene's sphere, heading for it.
    let mut centre = Point3::new(0.0, radius + skin, 3.5);
    for frame in 0..40 {
        let mut motion = Vector3::new(0.0, -0.05, -0.15); // forward, and gravity
        // The loop a game writes: move until touching, slide along, three times at most.
        for _ in 0..3 {
            let ray = Ray::with_range(centre, motion, 0.0, 1.0);
            let Some(hit) = bvh.cast_sphere(&ray, radius, &Default::default())? else {
                centre += motion;
                break;
            };
            // Stop a skin short of the contact, so the next sweep starts clear of it.
            let t = (hit.t - skin / motion.norm()).max(0.0);
            centre += motion * t;
            let rest = motion * (1.0 - t);
            motion = rest - hit.normal.into_inner() * rest.dot(&hit.normal).min(0.0);
        }
        if frame % 5 == 4 {
            println!(
                "frame {:2}: centre ({:.3}, {:.3}, {:.3})",
                frame + 1,
                centre.x,
                centre.y,
                centre.z
            );
        }
    }
    Ok(())
}
