//! Save a built tree and load it instead of rebuilding: any serde format works (postcard
//! here, compact and binary); loading checks the file whole, so a damaged one is an error
//! saying why, never a wrong answer.
//!
//! ```text
//! cargo run --release --example save_load              # assets/scene.obj
//! cargo run --release --example save_load -- MESH.obj
//! ```

use meshray::prelude::*;
use meshray::tree::SavedBvh;
use meshray::{Bvh, Mesh, QueryOptions, Ray};
use nalgebra::Vector3;

mod common;

const USAGE: &str = "usage: cargo run --release --example save_load [-- MESH]\n\nMESH: any file meshray reads (OBJ, STL, PLY, glTF, GLB); default assets/scene.obj.\n";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = common::mesh_path(USAGE);
    let started = std::time::Instant::now();
    let bvh = Bvh::build(Mesh::load(&path)?);
    println!("{path}: loaded and built in {:.1?}", started.elapsed());

    // Save: the mesh and the tree's shape, versioned and with a checksum.
    let bytes = postcard::to_allocvec(&bvh)?;
    let file = std::env::temp_dir().join("meshray-example.bvh");
    std::fs::write(&file, &bytes)?;
    println!("saved {} bytes to {}", bytes.len(), file.display());

    // Load: the boxes are recomputed and every invariant checked before it is used.
    let started = std::time::Instant::now();
    let loaded: Bvh = postcard::from_bytes(&std::fs::read(&file)?)?;
    println!("loaded in {:.1?}", started.elapsed());
    let bounds = bvh.bounds();
    let centre = nalgebra::center(&bounds.min, &bounds.max);
    let ray = Ray::new(
        centre + Vector3::new(0.3, 0.4, 1.0) * 10.0,
        -Vector3::new(0.3, 0.4, 1.0),
    );
    let options = QueryOptions::default();
    assert_eq!(
        loaded
            .closest_hit(&ray, &options)
            .map(|h| (h.triangle, h.t)),
        bvh.closest_hit(&ray, &options).map(|h| (h.triangle, h.t))
    );

    // A damaged file: postcard drops the words of its errors, so read it as a `SavedBvh`
    // and convert, which says what is wrong.
    let mut damaged = bytes.clone();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x40;
    let refused = match postcard::from_bytes::<SavedBvh>(&damaged) {
        Ok(saved) => Bvh::try_from(saved).err().map(|e| e.to_string()),
        Err(e) => Some(e.to_string()),
    };
    println!(
        "a flipped bit: {}",
        refused.as_deref().unwrap_or("accepted?!")
    );
    assert!(refused.is_some());
    std::fs::remove_file(&file)?;
    Ok(())
}
