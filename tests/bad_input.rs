//! Bad input at the API and in files, one test per row of docs/robustness.md's table: each
//! gives a typed error or the documented "no hit", never a panic or a wrong hit. (Malformed OBJ text
//! is covered file by file in `malformed.rs`.)
mod common;

use meshray::prelude::*;
use meshray::{Bvh, Error, LoadOptions, Mesh, QueryOptions, Ray};
use nalgebra::{Point3, Vector3};
use std::path::PathBuf;

fn scene() -> Bvh {
    Bvh::build(Mesh::load(common::asset("scene.obj")).unwrap())
}

/// A ray that hits the scene's sphere, to vary one thing at a time.
fn good() -> (Point3<f32>, Vector3<f32>) {
    (Point3::new(0.0, 1.0, 10.0), Vector3::new(0.0, 0.0, -1.0))
}

fn no_hit_anywhere(bvh: &Bvh, ray: &Ray) {
    let options = QueryOptions::default();
    assert!(bvh.closest_hit(ray, &options).is_none(), "{ray:?}");
    assert!(bvh.any_hit(ray, &options).is_none(), "{ray:?}");
    assert!(bvh.all_hits(ray, &options).is_empty(), "{ray:?}");
}

#[test]
fn the_good_ray_hits() {
    let (o, d) = good();
    assert!(
        scene()
            .closest_hit(&Ray::new(o, d), &QueryOptions::default())
            .is_some()
    );
}

#[test]
fn zero_direction_is_no_hit() {
    no_hit_anywhere(&scene(), &Ray::new(good().0, Vector3::zeros()));
    no_hit_anywhere(&scene(), &Ray::new(good().0, Vector3::new(-0.0, 0.0, -0.0)));
}

#[test]
fn nan_direction_is_no_hit() {
    let (o, _) = good();
    for d in [
        Vector3::new(f32::NAN, 0.0, -1.0),
        Vector3::new(0.0, 0.0, f32::NAN),
    ] {
        no_hit_anywhere(&scene(), &Ray::new(o, d));
    }
}

#[test]
fn infinite_direction_is_no_hit() {
    let (o, _) = good();
    no_hit_anywhere(
        &scene(),
        &Ray::new(o, Vector3::new(0.0, 0.0, f32::NEG_INFINITY)),
    );
    no_hit_anywhere(
        &scene(),
        &Ray::new(o, Vector3::new(f32::INFINITY, 0.0, -1.0)),
    );
}

#[test]
fn nan_or_infinite_origin_is_no_hit() {
    let (_, d) = good();
    no_hit_anywhere(&scene(), &Ray::new(Point3::new(f32::NAN, 1.0, 10.0), d));
    no_hit_anywhere(&scene(), &Ray::new(Point3::new(0.0, 1.0, f32::INFINITY), d));
}

#[test]
fn t_min_above_t_max_is_no_hit() {
    let (o, d) = good();
    no_hit_anywhere(&scene(), &Ray::with_range(o, d, 20.0, 1.0));
}

#[test]
fn nan_t_range_is_no_hit() {
    let (o, d) = good();
    no_hit_anywhere(&scene(), &Ray::with_range(o, d, f32::NAN, 100.0));
    no_hit_anywhere(&scene(), &Ray::with_range(o, d, 0.0, f32::NAN));
}

#[test]
fn a_range_that_stops_short_is_no_hit() {
    let (o, d) = good();
    no_hit_anywhere(&scene(), &Ray::with_range(o, d, 0.0, 8.0)); // the sphere is at t ≈ 9
}

#[test]
fn invalid_rays_cost_no_traversal() {
    let (o, d) = good();
    let bvh = scene();
    let options = QueryOptions::default();
    let (hit, cost) = meshray::diagnostics::closest_hit_with_cost(&bvh, &Ray::new(o, d), &options);
    assert!(
        hit.is_some() && cost.boxes > 0,
        "the good ray does walk the tree"
    );
    for ray in [
        Ray::new(o, Vector3::zeros()),
        Ray::new(o, Vector3::new(f32::NAN, 0.0, -1.0)),
        Ray::new(Point3::new(f32::INFINITY, 1.0, 10.0), d),
        Ray::with_range(o, d, 1.0, f32::NAN),
    ] {
        assert_eq!(
            meshray::diagnostics::closest_hit_with_cost(&bvh, &ray, &options),
            (None, Default::default()),
            "{ray:?}"
        );
    }
}

#[test]
fn empty_buffers_are_an_error() {
    assert!(matches!(
        Mesh::from_buffers(Vec::<Point3<f32>>::new(), vec![]),
        Err(Error::NoTriangles { .. })
    ));
    let p = vec![Point3::origin(); 3];
    assert!(matches!(
        Mesh::from_buffers(p, vec![]),
        Err(Error::NoTriangles { .. })
    ));
}

#[test]
fn buffer_index_out_of_range_is_an_error() {
    let p = vec![Point3::origin(); 3];
    let e = Mesh::from_buffers(p, vec![[0, 1, 2], [2, 3, 0]]).unwrap_err();
    assert!(
        matches!(
            e,
            Error::IndexOutOfRange {
                index: 3,
                count: 3,
                ..
            }
        ),
        "{e:?}"
    );
    let e = Mesh::from_buffers(Vec::<Point3<f32>>::new(), vec![[u32::MAX; 3]]).unwrap_err();
    assert!(matches!(e, Error::IndexOutOfRange { .. }), "{e:?}");
}

#[test]
fn nan_or_infinite_vertices_are_an_error() {
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let p = vec![
            Point3::origin(),
            Point3::new(1.0, bad, 0.0),
            Point3::new(0.0, 1.0, 0.0),
        ];
        let e = Mesh::from_buffers(p, vec![[0, 1, 2]]).unwrap_err();
        assert!(
            matches!(e, Error::NonFiniteCoordinate { vertex: 1, .. }),
            "{e:?}"
        );
    }
}

#[test]
fn degenerate_triangles_never_hit() {
    // zero-area (all corners equal), collinear, repeated vertex, and a tiny sliver: only
    // the last is a real triangle
    let p = vec![
        Point3::new(0.0, 0.0, 0.0),
        Point3::new(1.0, 0.0, 0.0),
        Point3::new(2.0, 0.0, 0.0),
        Point3::new(0.0, 1.0, 0.0),
    ];
    let mesh = Mesh::from_buffers(p, vec![[0, 0, 0], [0, 1, 2], [1, 1, 3], [0, 2, 1]]).unwrap();
    let bvh = Bvh::build(mesh);
    meshray::diagnostics::validate(&bvh).unwrap();
    let mut rng = common::Rng::new(5);
    for _ in 0..10_000 {
        let o = Point3::new(
            rng.range(-1.0, 3.0),
            rng.range(-1.0, 2.0),
            rng.range(-2.0, 2.0),
        );
        let target = Point3::new(rng.range(-0.5, 2.5), rng.range(-0.01, 0.01), 0.0);
        no_hit_anywhere(&bvh, &Ray::new(o, target - o));
        // aimed at the exact corners and along the lines too
        for corner in [0.0f32, 1.0, 2.0] {
            no_hit_anywhere(&bvh, &Ray::new(o, Point3::new(corner, 0.0, 0.0) - o));
        }
    }
}

#[test]
fn rays_in_the_plane_of_a_triangle_never_hit_it() {
    let p = vec![
        Point3::new(0.0, 0.0, 0.0),
        Point3::new(1.0, 0.0, 0.0),
        Point3::new(0.0, 1.0, 0.0),
    ];
    let bvh = Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]]).unwrap());
    for d in [
        Vector3::new(1.0, 0.0, 0.0),
        Vector3::new(1.0, 1.0, 0.0),
        Vector3::new(0.0, -1.0, -0.0),
    ] {
        no_hit_anywhere(&bvh, &Ray::new(Point3::new(0.2, 0.2, 0.0) - d * 5.0, d));
    }
}

/// A fresh directory under the system's temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = common::scratch_dir(&format!("meshray-{name}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const QUAD: &str = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nusemtl red\nf 1 2 3 4\n";
const MTL: &str = "newmtl red\nKd 1 0 0\n";

fn material_warning(mesh: &Mesh) -> &Error {
    assert_eq!(mesh.triangle_count(), 2, "the geometry must survive");
    assert_eq!(mesh.load_warnings().len(), 1, "{:?}", mesh.load_warnings());
    &mesh.load_warnings()[0]
}

#[test]
fn mtllib_outside_the_directory_is_not_read() {
    let dir = TempDir::new("outside");
    dir.write("secret.mtl", MTL);
    for mtllib in ["../secret.mtl", "sub/../../secret.mtl"] {
        let obj = dir.write("model/scene.obj", &format!("mtllib {mtllib}\n{QUAD}"));
        let mesh = Mesh::load(&obj).unwrap();
        let w = material_warning(&mesh);
        assert!(w.to_string().contains("outside"), "{w}");
        assert!(mesh.materials().is_empty());
    }
    // an absolute path
    let secret = dir.0.join("secret.mtl");
    let obj = dir.write(
        "model/abs.obj",
        &format!("mtllib {}\n{QUAD}", secret.display()),
    );
    assert!(
        material_warning(&Mesh::load(&obj).unwrap())
            .to_string()
            .contains("outside")
    );
    // allowed when asked for
    let open = LoadOptions {
        confine_materials: false,
        ..Default::default()
    };
    let obj = dir.write("model/scene.obj", &format!("mtllib ../secret.mtl\n{QUAD}"));
    let mesh = Mesh::load_with(&obj, &open).unwrap();
    assert!(mesh.load_warnings().is_empty());
    assert_eq!(mesh.materials(), ["red"]);
}

#[cfg(unix)]
#[test]
fn a_link_leading_out_of_the_directory_is_not_followed() {
    let dir = TempDir::new("link");
    let secret = dir.write("secret.mtl", MTL);
    let obj = dir.write("model/scene.obj", &format!("mtllib link.mtl\n{QUAD}"));
    std::os::unix::fs::symlink(&secret, dir.0.join("model/link.mtl")).unwrap();
    assert!(
        material_warning(&Mesh::load(&obj).unwrap())
            .to_string()
            .contains("outside")
    );
}

#[test]
fn materials_in_a_subdirectory_are_fine() {
    let dir = TempDir::new("subdir");
    dir.write("model/mat/red.mtl", MTL);
    let obj = dir.write("model/scene.obj", &format!("mtllib mat/red.mtl\n{QUAD}"));
    let mesh = Mesh::load(&obj).unwrap();
    assert!(
        mesh.load_warnings().is_empty(),
        "{:?}",
        mesh.load_warnings()
    );
    assert_eq!(mesh.attributes(0).material, Some(0));
}

#[test]
fn file_size_limit() {
    let dir = TempDir::new("size");
    let obj = dir.write("big.obj", QUAD);
    let tight = LoadOptions {
        max_file_bytes: QUAD.len() as u64 - 1,
        ..Default::default()
    };
    let e = Mesh::load_with(&obj, &tight).unwrap_err();
    assert!(
        matches!(e, Error::LimitExceeded { what: "bytes", .. }),
        "{e:?}"
    );
    assert!(e.to_string().contains("big.obj"), "{e}");
    let exact = LoadOptions {
        max_file_bytes: QUAD.len() as u64,
        ..Default::default()
    };
    assert!(Mesh::load_with(&obj, &exact).is_ok());
}

#[test]
fn triangle_limit_names_the_line() {
    let dir = TempDir::new("tris");
    let obj = dir.write("many.obj", &format!("{QUAD}f 1 2 3\n"));
    let three = LoadOptions {
        max_triangles: 2,
        ..Default::default()
    };
    match Mesh::load_with(&obj, &three) {
        Err(Error::LimitExceeded {
            what: "triangles",
            line: Some(7),
            limit: 2,
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_directory_and_a_missing_file_are_io_errors() {
    let here = common::repository().join("assets");
    assert!(matches!(Mesh::load(&here), Err(Error::Io { .. })));
    assert!(matches!(
        Mesh::load(here.join("no such file.obj")),
        Err(Error::Io { .. })
    ));
}
