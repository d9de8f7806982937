//! Files whose name lies about their format, and directories, through `Mesh::load`: an OBJ
//! named `.stl` is refused as "an OBJ file, not STL" (not "failed to fill whole buffer"), an
//! ASCII STL named `.obj` as "an STL file" (not "no triangles"), and so on for every pair of
//! formats; a file that is broken in its own format keeps its own error; a directory "is a
//! directory".
#![cfg(all(feature = "stl", feature = "ply", feature = "gltf"))]

mod common;

use meshray::mesh::Format;
use meshray::{Error, LoadOptions, Mesh};
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let dir = common::scratch_dir("meshray-wrong-format");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// One triangle in each format, as a user's tool would write it.
fn one_triangle(format: Format) -> Vec<u8> {
    match format {
        Format::Obj => b"# a triangle\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n".to_vec(),
        Format::Stl => b"solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n\
            vertex 0 1 0\nendloop\nendfacet\nendsolid t\n"
            .to_vec(),
        Format::Ply => b"ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n\
            property float y\nproperty float z\nelement face 1\n\
            property list uchar int vertex_indices\nend_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n"
            .to_vec(),
        Format::Gltf => {
            // Three f32 positions, base64, in an embedded buffer.
            let floats: [f32; 9] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
            let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
            let data = base64_encode(&bytes);
            format!(
                r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":[0]}}],"nodes":[{{"mesh":0}}],
"meshes":[{{"primitives":[{{"attributes":{{"POSITION":0}}}}]}}],
"accessors":[{{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3","min":[0,0,0],"max":[1,1,0]}}],
"bufferViews":[{{"buffer":0,"byteLength":36}}],
"buffers":[{{"byteLength":36,"uri":"data:application/octet-stream;base64,{data}"}}]}}"#
            )
            .into_bytes()
        }
        _ => unreachable!("the formats of a default build"),
    }
}

/// The binary relatives: a binary STL and a GLB holding the same triangle.
fn binary_stl() -> Vec<u8> {
    let mut bytes = vec![0u8; 80];
    bytes.extend(1u32.to_le_bytes());
    for f in [
        0.0f32, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0,
    ] {
        bytes.extend(f.to_le_bytes());
    }
    bytes.extend([0, 0]);
    bytes
}

fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn extension(format: Format) -> &'static str {
    match format {
        Format::Obj => "obj",
        Format::Stl => "stl",
        Format::Ply => "ply",
        Format::Gltf => "gltf",
        _ => unreachable!("the formats of a default build"),
    }
}

const FORMATS: [Format; 4] = [Format::Obj, Format::Stl, Format::Ply, Format::Gltf];

#[test]
fn each_file_loads_under_its_own_name() {
    for format in FORMATS {
        let path = scratch(&format!("right.{}", extension(format)));
        std::fs::write(&path, one_triangle(format)).unwrap();
        let mesh = Mesh::load(&path).unwrap_or_else(|e| panic!("{format}: {e}"));
        assert_eq!(mesh.triangle_count(), 1, "{format}");
    }
    let path = scratch("right-binary.stl");
    std::fs::write(&path, binary_stl()).unwrap();
    assert_eq!(Mesh::load(&path).unwrap().triangle_count(), 1);
}

#[test]
fn a_file_under_another_formats_name_is_refused_by_its_real_format() {
    let mut files: Vec<(Format, &str, Vec<u8>)> = FORMATS
        .iter()
        .map(|&f| (f, extension(f), one_triangle(f)))
        .collect();
    files.push((Format::Stl, "binary STL", binary_stl()));
    for (found, what, bytes) in &files {
        for named in FORMATS {
            if named == *found {
                continue;
            }
            let path = scratch(&format!(
                "{}-as.{}",
                what.replace(' ', "-"),
                extension(named)
            ));
            std::fs::write(&path, bytes).unwrap();
            let error = Mesh::load(&path).unwrap_err();
            match &error {
                Error::WrongFormat {
                    path: p,
                    expected,
                    found: f,
                } => {
                    assert_eq!((p, *expected, *f), (&path, named, *found), "{error}");
                }
                other => panic!("{what} named .{}: {other}", extension(named)),
            }
            let message = error.to_string();
            assert!(
                message.starts_with(&path.display().to_string())
                    && message.contains(&format!(" {found} file, not {named}")),
                "{message}"
            );
            // The same when the format is asked for rather than read from the name.
            assert!(matches!(
                Mesh::load_with(
                    &path,
                    &LoadOptions {
                        format: Some(named),
                        ..Default::default()
                    }
                ),
                Err(Error::WrongFormat { .. })
            ));
        }
    }
    // The two the issue names, word for word in spirit.
    let path = scratch("scene.stl");
    std::fs::copy(common::repository().join("assets/scene.obj"), &path).unwrap();
    let message = Mesh::load(&path).unwrap_err().to_string();
    assert!(
        message.contains("this is an OBJ file, not STL: rename it to .obj"),
        "{message}"
    );
    let path = scratch("ascii-stl.obj");
    std::fs::write(&path, one_triangle(Format::Stl)).unwrap();
    let message = Mesh::load(&path).unwrap_err().to_string();
    assert!(
        message.contains("this is an STL file, not OBJ"),
        "{message}"
    );
}

#[test]
fn a_file_broken_in_its_own_format_keeps_its_own_error() {
    // A face naming a vertex that does not exist, in an OBJ named .obj.
    let path = scratch("broken.obj");
    std::fs::write(&path, b"v 0 0 0\nf 1 2 3\n").unwrap();
    assert!(matches!(
        Mesh::load(&path),
        Err(Error::IndexOutOfRange { .. })
    ));
    // A truncated binary STL named .stl.
    let path = scratch("truncated.stl");
    std::fs::write(&path, &binary_stl()[..100]).unwrap();
    assert!(matches!(Mesh::load(&path), Err(Error::Parse { .. })));
    // A PLY whose header lies about its vertex count.
    let path = scratch("short.ply");
    let ply = String::from_utf8(one_triangle(Format::Ply)).unwrap();
    std::fs::write(&path, ply.replace("vertex 3", "vertex 5")).unwrap();
    assert!(matches!(Mesh::load(&path), Err(Error::Parse { .. })));
    // Text that is no format at all.
    let path = scratch("notes.obj");
    std::fs::write(&path, b"dear diary\n").unwrap();
    assert!(matches!(
        Mesh::load(&path),
        Err(Error::NoTriangles { .. } | Error::Parse { .. })
    ));
}

#[test]
fn a_directory_is_a_directory() {
    let dir = scratch("meshes");
    std::fs::create_dir_all(&dir).unwrap();
    let dotted = scratch("looks-like.obj");
    std::fs::create_dir_all(&dotted).unwrap();
    for path in [&dir, &dotted] {
        let results = [
            Mesh::load(path),
            Mesh::load_with(
                path,
                &LoadOptions {
                    format: Some(Format::Obj),
                    ..Default::default()
                },
            ),
            Mesh::load_with(
                path,
                &LoadOptions {
                    progress: Some(&|_, _| {}),
                    ..Default::default()
                },
            ),
        ];
        for result in results {
            let error = result.unwrap_err();
            assert!(
                matches!(&error, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::IsADirectory),
                "{error}"
            );
            assert_eq!(
                error.to_string(),
                format!("{}: is a directory, not a mesh file", path.display())
            );
        }
    }
}
