//! Snap points to a mesh: for each point, the nearest point on the surface, the triangle it
//! lies on and the distance, searched within a radius (a cursor snapping to a model, a
//! scan point matched to its CAD surface).
//!
//! ```text
//! cargo run --release --example nearest_point              # assets/scene.obj
//! cargo run --release --example nearest_point -- MESH.obj
//! ```

use meshray::prelude::*;
use meshray::{Bvh, Mesh};
use nalgebra::{Point3, Vector3};

mod common;

const USAGE: &str = "usage: cargo run --release --example nearest_point [-- MESH]\n\nMESH: any file meshray reads (OBJ, STL, PLY, glTF, GLB); default assets/scene.obj.\n";

fn main() -> Result<(), meshray::Error> {
    let path = common::mesh_path(USAGE);
    let bvh = Bvh::build(Mesh::load(&path)?);
    let bounds = bvh.mesh().bounds();
    let centre = nalgebra::center(&bounds.min, &bounds.max);
    let size = (bounds.max - bounds.min).norm();

    // Points around the mesh: its centre, and points outside it along three axes.
    let points = [
        centre,
        centre + Vector3::x() * size,
        centre + Vector3::y() * size,
        centre - Vector3::z() * size,
    ];
    for p in points {
        // Search the whole mesh (an infinite radius)...
        let snap = bvh
            .closest_point(p, f32::INFINITY, &Default::default())
            .expect("a mesh has a nearest point");
        println!(
            "{p:.3} -> {:.3} on triangle {} at distance {:.4}",
            snap.point, snap.triangle, snap.distance
        );
        // ...or only within a radius, as a snapping cursor would: nothing when it is too far.
        let near = bvh.closest_point(p, 0.1 * size, &Default::default());
        println!(
            "  within {:.3}: {}",
            0.1 * size,
            if near.is_some() { "snapped" } else { "none" }
        );
    }

    // A point exactly on a vertex snaps to it, at distance 0.
    let corner: Point3<f32> = bvh.mesh().positions()[bvh.mesh().triangles()[0][0] as usize];
    let snap = bvh
        .closest_point(corner, 1.0, &Default::default())
        .expect("a vertex lies on the mesh");
    assert_eq!(snap.distance, 0.0);
    println!("vertex {corner:.3}: distance {}", snap.distance);
    Ok(())
}
