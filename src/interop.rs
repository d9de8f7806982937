//! `mint` interop (the `mint` feature, on by default): build rays, meshes, cameras and scene
//! transforms from any math crate that speaks `mint` (glam, Bevy, cgmath, ultraviolet), and
//! turn results back with `.into()` (nalgebra's `convert-mint` conversions), so user code
//! needs no nalgebra.
//!
//! ```
//! use meshray::{Bvh, Mesh, QueryOptions, Ray};
//!
//! // Plain arrays stand in for glam's Vec3 here: both convert into mint types.
//! let mesh = Mesh::from_mint_buffers(
//!     [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
//!     vec![[0, 1, 2]],
//! )?;
//! let bvh = Bvh::build(mesh);
//! let ray = Ray::from_mint([0.25f32, 0.25, 1.0], [0.0f32, 0.0, -1.0]);
//! let hit = bvh.closest_hit(&ray, &QueryOptions::default()).unwrap();
//! let point: mint::Point3<f32> = hit.point.into();
//! assert_eq!([point.x, point.y, point.z], [0.25, 0.25, 0.0]);
//! # Ok::<(), meshray::Error>(())
//! ```

use crate::{Bvh, InstanceId, Mesh, Ray, Result, Scene};
use mint::{ColumnMatrix4, Point3, Vector3};
use nalgebra::{Matrix4, Point2, Vector2};
use std::sync::Arc;

impl Ray {
    /// [`Ray::new`] from `mint` values (for example glam's `Vec3`).
    pub fn from_mint(origin: impl Into<Point3<f32>>, direction: impl Into<Vector3<f32>>) -> Ray {
        Ray::new(origin.into().into(), direction.into().into())
    }
}

impl Mesh {
    /// [`Mesh::from_buffers`] from `mint` positions.
    ///
    /// # Errors
    /// As [`Mesh::from_buffers`].
    pub fn from_mint_buffers<P: Into<Point3<f32>>>(
        positions: impl IntoIterator<Item = P>,
        triangles: Vec<[u32; 3]>,
    ) -> Result<Mesh> {
        Mesh::from_buffers(
            positions.into_iter().map(|p| p.into().into()).collect(),
            triangles,
        )
    }
}

/// [`pixel_ray`](crate::pixel_ray) from `mint` matrices (column-major, as glam's `Mat4`).
///
/// # Errors
/// As [`pixel_ray`](crate::pixel_ray).
pub fn pixel_ray_mint(
    view: impl Into<ColumnMatrix4<f32>>,
    projection: impl Into<ColumnMatrix4<f32>>,
    viewport: [f32; 2],
    pixel: [f32; 2],
) -> Result<Ray> {
    crate::pixel_ray(
        &Matrix4::from(view.into()),
        &Matrix4::from(projection.into()),
        Vector2::from(viewport),
        Point2::from(pixel),
    )
}

impl Scene {
    /// [`Scene::add`] with a `mint` transform (column-major, as glam's `Mat4`).
    ///
    /// # Errors
    /// As [`Scene::add`].
    pub fn add_mint(
        &mut self,
        bvh: Arc<Bvh>,
        transform: impl Into<ColumnMatrix4<f32>>,
    ) -> Result<InstanceId> {
        self.add(bvh, Matrix4::from(transform.into()))
    }

    /// [`Scene::set_transform`] with a `mint` transform.
    ///
    /// # Errors
    /// As [`Scene::set_transform`].
    pub fn set_transform_mint(
        &mut self,
        id: InstanceId,
        transform: impl Into<ColumnMatrix4<f32>>,
    ) -> Result<()> {
        self.set_transform(id, Matrix4::from(transform.into()))
    }
}
