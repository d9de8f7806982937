//! Points, vectors and matrices of other math crates (through `mint`: glam, Bevy, cgmath...)
//! go into the same functions as nalgebra's and give the same answers.

mod common;

use meshray::prelude::*;
use meshray::{Bvh, Camera, Mesh, QueryOptions, Ray, Scene, SceneOptions};
use nalgebra::{Isometry3, Matrix4, Perspective3, Point2, Point3, Vector2, Vector3};
use std::sync::Arc;

#[test]
fn mint_inputs_equal_nalgebra_inputs() {
    let ray = Ray::new(
        mint::Point3 {
            x: 0.5f32,
            y: 1.0,
            z: 9.0,
        },
        mint::Vector3 {
            x: 0.01f32,
            y: 0.0,
            z: -1.0,
        },
    );
    assert_eq!(
        ray,
        Ray::new(Point3::new(0.5, 1.0, 9.0), Vector3::new(0.01, 0.0, -1.0))
    );

    let view = Isometry3::look_at_rh(
        &Point3::new(1.0, 2.0, 6.0),
        &Point3::origin(),
        &Vector3::y(),
    )
    .to_homogeneous();
    let projection = Perspective3::new(1.5, 0.8, 0.1, 100.0).to_homogeneous();
    // Column-major, as glam's Mat4 hands it over.
    let (v, p): (mint::ColumnMatrix4<f32>, mint::ColumnMatrix4<f32>) =
        (view.into(), projection.into());
    let a = Camera::new(v, p, [640.0, 480.0]).unwrap();
    let b = Camera::new(view, projection, Vector2::new(640.0, 480.0)).unwrap();
    assert_eq!(a, b);
    let (a, b) = (
        a.pixel_ray([100.5, 300.25]).unwrap(),
        b.pixel_ray(Point2::new(100.5, 300.25)).unwrap(),
    );
    assert_eq!(a, b);

    let mesh = Mesh::load(common::asset("scene.obj")).unwrap();
    let points: Vec<mint::Point3<f32>> = mesh.positions().iter().map(|&p| p.into()).collect();
    let again = Mesh::from_buffers(points, mesh.triangles().to_vec()).unwrap();
    assert_eq!(again.positions(), mesh.positions());

    let bvh = Arc::new(Bvh::build(mesh));
    let mut scene = Scene::new();
    let moved: mint::ColumnMatrix4<f32> =
        Matrix4::new_translation(&Vector3::new(0.0, 0.0, -2.0)).into();
    let id = scene.add(bvh.clone(), moved).unwrap();
    let down = Ray::new(Point3::new(0.0, 1.0, 10.0), -Vector3::z());
    let direct = bvh.closest_hit(&down, &QueryOptions::default()).unwrap();
    let placed = scene.closest_hit(&down, &SceneOptions::default()).unwrap();
    assert!((placed.hit.t - direct.t - 2.0).abs() < 1e-4);
    scene.set_transform(id, Matrix4::<f32>::identity()).unwrap();
    let back: mint::Point3<f32> = scene
        .closest_hit(&down, &SceneOptions::default())
        .unwrap()
        .hit
        .point
        .into();
    let want: mint::Point3<f32> = direct.point.into();
    assert!((back.z - want.z).abs() < 1e-4);
}
