//! Saving and loading a BVH (the `serde` feature) in three serde formats: postcard (binary),
//! JSON (human-readable) and CBOR (binary, self-describing). The loaded tree is the saved one
//! and answers alike, bit for bit; truncated, bit-flipped, foreign and future files are
//! errors that say why. Never a panic.
#![cfg(feature = "serde")]

mod common;

use common::{Chunks, Rng};
use meshray::prelude::*;
use meshray::tree::{BuildQuality, SavedBvh};
use meshray::{BuildOptions, Bvh, Error, Mesh, QueryOptions, RayQuery};
use nalgebra::Point3;

fn rays(mesh: &Mesh) -> Vec<meshray::Ray> {
    let mut rng = Rng::new(3);
    let mut rays = common::random_rays(mesh, 300, &mut rng);
    rays.extend(common::camera_rays(mesh, 16));
    rays
}

/// A serde format: save, and load with the error's words.
struct Format {
    name: &'static str,
    save: fn(&Bvh) -> Vec<u8>,
    load: fn(&[u8]) -> Result<Bvh, String>,
}

fn formats() -> [Format; 3] {
    [
        Format {
            name: "postcard",
            save: |b| postcard::to_allocvec(b).unwrap(),
            load: |bytes| postcard::from_bytes(bytes).map_err(|e| e.to_string()),
        },
        Format {
            name: "json",
            save: |b| serde_json::to_vec(b).unwrap(),
            load: |bytes| serde_json::from_slice(bytes).map_err(|e| e.to_string()),
        },
        Format {
            name: "cbor",
            save: |b| {
                let mut out = Vec::new();
                ciborium::into_writer(b, &mut out).unwrap();
                out
            },
            load: |bytes| ciborium::from_reader(bytes).map_err(|e| e.to_string()),
        },
    ]
}

fn round_trip(mesh: Mesh) {
    let bvh = Bvh::build(mesh);
    for format in formats() {
        let bytes = (format.save)(&bvh);
        let loaded = (format.load)(&bytes).unwrap_or_else(|e| panic!("{}: {e}", format.name));
        assert_eq!(loaded.stats(), bvh.stats(), "{}", format.name);
        assert_eq!(loaded.mesh().positions(), bvh.mesh().positions());
        assert_eq!(loaded.mesh().triangles(), bvh.mesh().triangles());
        assert_eq!(loaded.mesh().objects(), bvh.mesh().objects());
        assert_eq!(loaded.mesh().materials(), bvh.mesh().materials());
        let options = QueryOptions::default();
        for ray in rays(bvh.mesh()) {
            // `Hit` compares its floats with `==`; compare bits, so -0.0 and NaN count too.
            let bits = |h: Option<meshray::Hit>| {
                h.map(|h| (h.triangle, h.t.to_bits(), h.u.to_bits(), h.v.to_bits()))
            };
            assert_eq!(
                bits(loaded.closest_hit(&ray, &options)),
                bits(bvh.closest_hit(&ray, &options)),
                "{}",
                format.name
            );
            assert_eq!(
                loaded.all_hits(&ray, &options),
                bvh.all_hits(&ray, &options)
            );
        }
        // Saving the loaded tree gives the same bytes.
        assert_eq!((format.save)(&loaded), bytes, "{}", format.name);
    }
}

#[test]
fn one_triangle_round_trips_in_every_format() {
    // serde_json once wrote the NaN padding of empty lanes as `null` and could not read it.
    let p = vec![
        Point3::new(0.0, 0.0, 0.0),
        Point3::new(1.0, 0.0, 0.0),
        Point3::new(0.0, 1.0, 0.0),
    ];
    round_trip(Mesh::from_buffers(p, vec![[0, 1, 2]]).unwrap());
}

#[test]
fn round_trip_on_the_scene() {
    round_trip(Mesh::load(common::asset("scene.obj")).unwrap());
}

#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
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
    meshray::diagnostics::validate(&bvh).unwrap();
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
    let bvh = Bvh::build(Mesh::load(common::asset("scene.obj")).unwrap());
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

/// The reason a typed load gives for postcard bytes (postcard itself drops the words).
fn postcard_reason(bytes: &[u8]) -> String {
    let saved: SavedBvh = match postcard::from_bytes(bytes) {
        Ok(saved) => saved,
        Err(e) => return format!("postcard: {e}"),
    };
    match Bvh::try_from(saved) {
        Err(Error::InvalidBvh { reason }) => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn foreign_and_future_files_are_refused_by_name() {
    let bvh = Bvh::build(Mesh::load(common::asset("scene.obj")).unwrap());
    let bytes = postcard::to_allocvec(&bvh).unwrap();
    // postcard: a length byte, "meshray-bvh", then the version as a varint.
    assert_eq!(&bytes[1..12], b"meshray-bvh");
    let mut foreign = bytes.clone();
    foreign[1] = b'M';
    let reason = postcard_reason(&foreign);
    assert!(reason.contains("its format is \"Meshray-bvh\""), "{reason}");
    let mut future = bytes.clone();
    future[12] = 5;
    let reason = postcard_reason(&future);
    assert!(
        reason.contains("format version 5") && reason.contains("reads version 4"),
        "{reason}"
    );
    // Trees saved before every leaf lane was one packet (version 3) are refused by version.
    let mut old = bytes.clone();
    old[12] = 3;
    let reason = postcard_reason(&old);
    assert!(
        reason.contains("format version 3") && reason.contains("build the tree again"),
        "{reason}"
    );
    assert!(postcard::from_bytes::<Bvh>(b"not a bvh at all").is_err());
    assert!(postcard::from_bytes::<Bvh>(&[]).is_err());

    // JSON and CBOR keep the words in their own errors, and read no further than the version.
    let json = serde_json::to_string(&bvh).unwrap();
    assert!(
        json.starts_with(r#"{"format":"meshray-bvh","version":4,"body":{"#),
        "{}",
        &json[..60]
    );
    for (text, want) in [
        (
            json.replacen("meshray-bvh", "other-tree", 1),
            "its format is \"other-tree\"",
        ),
        (
            json.replacen(r#""version":4"#, r#""version":1"#, 1),
            "format version 1",
        ),
        (
            r#"{"format":"meshray-bvh","version":7,"body":[1,2,3]}"#.to_string(),
            "format version 7",
        ),
        (
            r#"{"body":7,"format":"meshray-bvh","version":4}"#.to_string(),
            "expected struct Body",
        ),
    ] {
        let err = serde_json::from_str::<Bvh>(&text).unwrap_err().to_string();
        assert!(err.contains(want), "{want}: {err}");
    }
    let mut cbor = Vec::new();
    ciborium::into_writer(&bvh, &mut cbor).unwrap();
    let at = cbor.windows(11).position(|w| w == b"meshray-bvh").unwrap();
    cbor[at] = b'x';
    // (ciborium's errors display as their Debug form, quotes escaped)
    let err = ciborium::from_reader::<Bvh, _>(cbor.as_slice())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("its format is") && err.contains("xeshray-bvh"),
        "{err}"
    );
}

#[test]
fn a_changed_coordinate_is_caught_by_the_checksum() {
    let bvh = Bvh::build(Mesh::load(common::asset("scene.obj")).unwrap());
    let mut json: serde_json::Value = serde_json::to_value(&bvh).unwrap();
    let x = &mut json["body"]["positions"][4];
    // One bit of one coordinate: still a valid mesh and tree, but not the saved one.
    *x = (x.as_u64().unwrap() ^ 1).into();
    let err = serde_json::from_value::<Bvh>(json).unwrap_err().to_string();
    assert!(err.contains("checksum does not match"), "{err}");
}

#[test]
fn hits_serialize_and_read_back() {
    let bvh = Bvh::build(Mesh::load(common::asset("scene.obj")).unwrap());
    let ray = meshray::Ray::new(Point3::new(0.0, 1.0, 10.0), -nalgebra::Vector3::z());
    let hit = bvh.closest_hit(&ray, &QueryOptions::default()).unwrap();
    let json = serde_json::to_string(&hit).unwrap();
    assert!(
        json.contains("\"triangle\":") && json.contains("\"shading_normal\":"),
        "{json}"
    );
    let back: meshray::Hit = serde_json::from_str(&json).unwrap();
    assert_eq!(back, hit);
    let short = bvh
        .cast_ray(&ray, RayQuery::Closest, &QueryOptions::default())
        .unwrap();
    let bytes = postcard::to_allocvec(&short).unwrap();
    assert_eq!(
        postcard::from_bytes::<meshray::CompactHit>(&bytes).unwrap(),
        short
    );
}

/// A tree of every build quality saves and loads as itself, quality included, and answers
/// alike.
#[test]
fn every_build_quality_round_trips_with_its_quality() {
    for quality in [
        BuildQuality::Fast,
        BuildQuality::Default,
        BuildQuality::High,
    ] {
        let options = BuildOptions {
            quality,
            ..Default::default()
        };
        let bvh = Bvh::build_with(Mesh::load(common::asset("scene.obj")).unwrap(), &options);
        let loaded: Bvh = postcard::from_bytes(&postcard::to_allocvec(&bvh).unwrap()).unwrap();
        assert_eq!(loaded.options().quality, quality);
        assert_eq!(loaded.stats(), bvh.stats());
    }
}
