//! STL loading (the `stl` feature): binary and ASCII files the test writes from the asset
//! scene load to the same triangles, bit for bit, as the OBJ; the extension picks the format
//! and `load_as` overrides it; bad files are errors naming the file, never panics.
#![cfg(feature = "stl")]

mod common;

use meshray::mesh::Format;
use meshray::prelude::*;
use meshray::{Bvh, Error, LoadOptions, Mesh, QueryOptions};
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let dir = common::scratch_dir("meshray-stl");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn facets(mesh: &Mesh) -> Vec<stl_io::Triangle> {
    (0..mesh.triangle_count())
        .map(|i| stl_io::Triangle {
            normal: stl_io::Vector::new([0.0, 0.0, 0.0]),
            vertices: mesh
                .triangle(i)
                .map(|p| stl_io::Vector::new([p.x, p.y, p.z])),
        })
        .collect()
}

fn ascii(mesh: &Mesh) -> String {
    let mut out = String::from("solid scene\n");
    for i in 0..mesh.triangle_count() {
        out.push_str("  facet normal 0 0 1\n    outer loop\n");
        for p in mesh.triangle(i) {
            // `{:?}` prints the shortest decimal that reads back to the same f32.
            out.push_str(&format!("      vertex {:?} {:?} {:?}\n", p.x, p.y, p.z));
        }
        out.push_str("    endloop\n  endfacet\n");
    }
    out.push_str("endsolid scene\n");
    out
}

fn same_triangles(a: &Mesh, b: &Mesh) {
    assert_eq!(a.triangle_count(), b.triangle_count());
    for i in 0..a.triangle_count() {
        assert_eq!(a.triangle(i), b.triangle(i), "triangle {i}");
    }
}

#[test]
fn binary_and_ascii_stl_load_the_same_triangles_as_the_obj() {
    let obj = Mesh::load(common::asset("scene.obj")).unwrap();
    let binary = scratch("scene-binary.stl");
    let mut file = std::fs::File::create(&binary).unwrap();
    stl_io::write_stl(&mut file, facets(&obj).iter()).unwrap();
    drop(file);
    let text = scratch("scene-ascii.STL");
    std::fs::write(&text, ascii(&obj)).unwrap();
    for path in [&binary, &text] {
        let stl = Mesh::load(path).unwrap();
        same_triangles(&obj, &stl);
        let (a, b) = (Bvh::build(obj.clone()), Bvh::build(stl));
        let mut rng = common::Rng::new(4);
        for ray in common::random_rays(&obj, 500, &mut rng) {
            let o = QueryOptions::default();
            assert_eq!(
                a.closest_hit(&ray, &o).map(|h| (h.t, h.triangle)),
                b.closest_hit(&ray, &o).map(|h| (h.t, h.triangle))
            );
        }
    }
    // The extension is only a default: load_as reads any name.
    let renamed = scratch("scene.dat");
    std::fs::copy(&binary, &renamed).unwrap();
    assert!(matches!(Mesh::load(&renamed), Err(Error::Parse { .. })));
    let loaded = Mesh::load_with(
        &renamed,
        &LoadOptions {
            format: Some(Format::Stl),
            ..Default::default()
        },
    )
    .unwrap();
    same_triangles(&obj, &loaded);
}

#[test]
fn bad_stl_files_are_errors_naming_the_file() {
    let obj = Mesh::load(common::asset("scene.obj")).unwrap();
    let mut bytes = Vec::new();
    stl_io::write_stl(&mut bytes, facets(&obj).iter()).unwrap();
    let options = LoadOptions::default();
    // Truncated binary files: every cut inside the last facet and a few elsewhere.
    for cut in [0, 10, 83, 84, 100, bytes.len() - 49, bytes.len() - 1] {
        let result = Mesh::from_bytes(
            &bytes[..cut],
            &LoadOptions {
                format: Some(Format::Stl),
                ..options
            },
        );
        assert!(result.is_err(), "cut at {cut} must not load");
    }
    // A NaN vertex and a file without facets.
    let nan = "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex NaN 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid x\n";
    assert!(matches!(
        Mesh::from_bytes(
            nan.as_bytes(),
            &LoadOptions {
                format: Some(Format::Stl),
                ..options
            }
        ),
        Err(Error::NonFiniteCoordinate { vertex: 1, .. }) | Err(Error::Parse { .. })
    ));
    assert!(matches!(
        Mesh::from_bytes(
            b"solid x\nendsolid x\n",
            &LoadOptions {
                format: Some(Format::Stl),
                ..options
            }
        ),
        Err(Error::NoTriangles { .. }) | Err(Error::Parse { .. })
    ));
    let garbage = "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 zero 0\n";
    assert!(matches!(
        Mesh::from_bytes(
            garbage.as_bytes(),
            &LoadOptions {
                format: Some(Format::Stl),
                ..options
            }
        ),
        Err(Error::Parse { .. })
    ));
    // Limits apply as for OBJ.
    let few = LoadOptions {
        max_triangles: 10,
        ..Default::default()
    };
    assert!(matches!(
        Mesh::from_bytes(
            &bytes,
            &LoadOptions {
                format: Some(Format::Stl),
                ..few
            }
        ),
        Err(Error::LimitExceeded { .. })
    ));
    // Missing file: Io naming it.
    let err = Mesh::load("/nonexistent/mesh.stl").unwrap_err();
    assert!(err.to_string().contains("/nonexistent/mesh.stl"), "{err}");
    // An unknown extension names the file and the way out.
    let err = Mesh::load("model.3ds").unwrap_err();
    assert!(
        err.to_string().contains("model.3ds") && err.to_string().contains("LoadOptions::format"),
        "{err}"
    );
}
