//! Refit after deformation: when the vertices move but the triangles stay (a character's
//! pose, a scan being edited), update the tree's boxes in O(n) instead of rebuilding it, and
//! watch its quality to know when a rebuild pays.
//!
//! ```text
//! cargo run --release --example refit              # assets/scene.obj
//! cargo run --release --example refit -- MESH.obj
//! ```

use meshray::prelude::*;
use meshray::{Bvh, Mesh, QueryOptions, Ray};
use nalgebra::{Point3, Rotation3, Vector3};

mod common;

const USAGE: &str = "usage: cargo run --release --example refit [-- MESH]\n\nMESH: any file meshray reads (OBJ, STL, PLY, glTF, GLB); default assets/scene.obj.\n";

fn main() -> Result<(), meshray::Error> {
    let path = common::mesh_path(USAGE);
    let mut bvh = Bvh::build(Mesh::load(&path)?);
    // The SAH cost (the expected work of a random ray) right after the last build.
    let mut built_cost = bvh.stats().sah_cost;
    let bounds = bvh.mesh().bounds();
    let centre = nalgebra::center(&bounds.min, &bounds.max);
    let height = (bounds.max.y - bounds.min.y).max(f32::EPSILON);

    // A twist about the vertical axis through the centre, growing with height, in steps.
    let rest: Vec<Point3<f32>> = bvh.mesh().positions().to_vec();
    let ray = Ray::new(centre + Vector3::z() * (4.0 * height), -Vector3::z());
    let options = QueryOptions::default();
    for step in 1..=4 {
        let turns = 0.25 * step as f32;
        let twisted: Vec<Point3<f32>> = rest
            .iter()
            .map(|p| {
                let angle = turns * std::f32::consts::TAU * (p.y - bounds.min.y) / height;
                centre + Rotation3::from_axis_angle(&Vector3::y_axis(), angle) * (p - centre)
            })
            .collect();
        // Same triangles, new positions: boxes refitted bottom-up, the tree's shape kept.
        bvh.refit(&twisted)?;
        let hit = bvh.closest_hit(&ray, &options).map(|h| (h.triangle, h.t));
        // The refitted tree answers what a fresh build over the same positions answers...
        let fresh = Bvh::build(bvh.mesh().clone());
        assert_eq!(
            hit,
            fresh.closest_hit(&ray, &options).map(|h| (h.triangle, h.t))
        );
        // ...but its boxes fit the new shape less well: compare its cost with the last build's.
        let cost = bvh.stats().sah_cost;
        println!(
            "twist {turns:.2} turns: hit {hit:?}; SAH cost {:.2}× the last build's, {:.2}× a fresh build's",
            cost / built_cost,
            cost / fresh.stats().sah_cost
        );
        // Rebuild when refitting has made the tree about half as costly again.
        if cost > 1.5 * built_cost {
            bvh = fresh;
            built_cost = bvh.stats().sah_cost;
            println!("  rebuilt");
        }
    }
    Ok(())
}
