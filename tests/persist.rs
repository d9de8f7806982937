//! Saving and loading a BVH (the `serde` feature, through postcard): the loaded tree is the
//! saved one and answers alike; truncated, bit-flipped, foreign and future files are errors
//! or, when a flip only touches names, a tree that is still valid and exact. Never a panic.
#![cfg(feature = "serde")]

mod common;

use common::{Chunks, Rng};
use meshray::{Bvh, Mesh, QueryOptions};

fn rays(mesh: &Mesh) -> Vec<meshray::Ray> {
    let mut rng = Rng::new(3);
    let mut rays = common::random_rays(mesh, 300, &mut rng);
    rays.extend(common::camera_rays(mesh, 16));
    rays
}

fn round_trip(mesh: Mesh) {
    let bvh = Bvh::build(mesh);
    let bytes = postcard::to_allocvec(&bvh).unwrap();
    let loaded: Bvh = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.stats(), bvh.stats());
    assert_eq!(loaded.mesh().positions(), bvh.mesh().positions());
    assert_eq!(loaded.mesh().triangles(), bvh.mesh().triangles());
    assert_eq!(loaded.mesh().objects(), bvh.mesh().objects());
    assert_eq!(loaded.mesh().materials(), bvh.mesh().materials());
    let options = QueryOptions::default();
    for ray in rays(bvh.mesh()) {
        assert_eq!(
            loaded.closest_hit(&ray, &options),
            bvh.closest_hit(&ray, &options)
        );
        assert_eq!(
            loaded.all_hits(&ray, &options),
            bvh.all_hits(&ray, &options)
        );
    }
    // Saving the loaded tree gives the same bytes.
    assert_eq!(postcard::to_allocvec(&loaded).unwrap(), bytes);
}

#[test]
fn round_trip_on_the_scene() {
    round_trip(Mesh::load_obj(common::asset("scene.obj")).unwrap());
}

#[test]
fn round_trip_on_shared_meshes() {
    for name in ["stanford-bunny/stanford-bunny.obj", "teapot/teapot.obj"] {
        let Some(mesh) = common::shared_mesh(name) else {
            return;
        };
        round_trip(mesh);
    }
}

/// A loaded tree, if loading succeeds, must be valid and exact on its own mesh.
fn exact_if_loaded(bytes: &[u8]) -> bool {
    let Ok(bvh) = postcard::from_bytes::<Bvh>(bytes) else {
        return false;
    };
    bvh.validate().unwrap();
    let mesh = bvh.mesh();
    let chunks = Chunks::new(mesh);
    let options = QueryOptions::default();
    for ray in rays(mesh).iter().take(100) {
        let brute = common::brute_all_f32(mesh, &chunks, ray, &options);
        let got = bvh.closest_hit(ray, &options).map(|h| h.t.to_bits());
        assert_eq!(got, brute.first().map(|(t, _)| t.to_bits()));
    }
    true
}

#[test]
fn corrupt_files_are_errors_never_panics_or_wrong_answers() {
    let bvh = Bvh::build(Mesh::load_obj(common::asset("scene.obj")).unwrap());
    let bytes = postcard::to_allocvec(&bvh).unwrap();
    // Every truncation point of the first and last kilobyte, and 200 in between.
    let mut cuts: Vec<usize> = (0..1024.min(bytes.len())).collect();
    cuts.extend((bytes.len().saturating_sub(1024))..bytes.len());
    cuts.extend((0..200).map(|i| i * bytes.len() / 200));
    for cut in cuts {
        assert!(
            postcard::from_bytes::<Bvh>(&bytes[..cut]).is_err(),
            "a file cut at {cut} of {} bytes must not load",
            bytes.len()
        );
    }
    // Single-byte changes anywhere: an error, or (names, unused bits) a valid, exact tree.
    let mut rng = Rng::new(11);
    let (mut refused, mut harmless) = (0, 0);
    for _ in 0..3000 {
        let mut bad = bytes.clone();
        let at = rng.below(bad.len());
        bad[at] ^= 1 << rng.below(8);
        if exact_if_loaded(&bad) {
            harmless += 1;
        } else {
            refused += 1;
        }
    }
    assert!(refused > 2500, "{refused} refused, {harmless} harmless");
}

#[test]
fn foreign_and_future_files_are_refused_by_name() {
    let bvh = Bvh::build(Mesh::load_obj(common::asset("scene.obj")).unwrap());
    let bytes = postcard::to_allocvec(&bvh).unwrap();
    // postcard: a length byte, "meshray-bvh", then the version as a varint.
    assert_eq!(&bytes[1..12], b"meshray-bvh");
    let mut foreign = bytes.clone();
    foreign[1] = b'M';
    let err = postcard::from_bytes::<Bvh>(&foreign).unwrap_err();
    let mut future = bytes.clone();
    future[12] = 2;
    let err2 = postcard::from_bytes::<Bvh>(&future).unwrap_err();
    // postcard reports custom errors by kind only (the text naming format or version is
    // dropped), so here it is enough that both are refused.
    let _ = (err, err2);
    assert!(postcard::from_bytes::<Bvh>(b"not a bvh at all").is_err());
    assert!(postcard::from_bytes::<Bvh>(&[]).is_err());
}
