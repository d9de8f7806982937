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
    ///
    /// ```
    /// use meshray::Ray;
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let origin = mint::Point3 { x: 0.0f32, y: 1.0, z: 2.0 };
    /// let ray = Ray::from_mint(origin, [0.0f32, 0.0, -1.0]);
    /// assert_eq!(ray, Ray::new(Point3::new(0.0, 1.0, 2.0), Vector3::new(0.0, 0.0, -1.0)));
    /// ```
    pub fn from_mint(origin: impl Into<Point3<f32>>, direction: impl Into<Vector3<f32>>) -> Ray {
        Ray::new(origin.into().into(), direction.into().into())
    }
}

impl Mesh {
    /// [`Mesh::from_buffers`] from `mint` positions.
    ///
    /// # Errors
    /// As [`Mesh::from_buffers`].
    ///
    /// ```
    /// use meshray::{Error, Mesh};
    ///
    /// let corners = [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    /// let mesh = Mesh::from_mint_buffers(corners, vec![[0, 1, 2]])?;
    /// assert_eq!(mesh.positions()[1], nalgebra::Point3::new(1.0, 0.0, 0.0));
    /// let bad = Mesh::from_mint_buffers(corners, vec![[0, 1, 3]]);
    /// assert!(matches!(bad, Err(Error::IndexOutOfRange { .. })));
    /// # Ok::<(), meshray::Error>(())
    /// ```
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
///
/// ```
/// use meshray::{pixel_ray, pixel_ray_mint};
/// use nalgebra::{Isometry3, Perspective3, Point2, Point3, Vector2, Vector3};
///
/// // glam's Mat4 converts into mint::ColumnMatrix4 the same way nalgebra's Matrix4 does here.
/// let view = Isometry3::look_at_rh(&Point3::new(0.0, 0.0, 5.0), &Point3::origin(), &Vector3::y()).to_homogeneous();
/// let projection = Perspective3::new(1.5, 0.8, 0.1, 100.0).to_homogeneous();
/// let (view_mint, projection_mint): (mint::ColumnMatrix4<f32>, mint::ColumnMatrix4<f32>) = (view.into(), projection.into());
/// let ray = pixel_ray_mint(view_mint, projection_mint, [300.0, 200.0], [150.0, 100.0])?;
/// assert_eq!(ray, pixel_ray(&view, &projection, Vector2::new(300.0, 200.0), Point2::new(150.0, 100.0))?);
/// # Ok::<(), meshray::Error>(())
/// ```
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
    ///
    /// ```
    /// use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// use std::sync::Arc;
    ///
    /// # let p = [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    /// let bvh = Arc::new(Bvh::build(Mesh::from_mint_buffers(p, vec![[0, 1, 2]])?));
    /// // A column-major translation by (5, 0, 0), as glam's Mat4::from_translation gives it.
    /// let moved = mint::ColumnMatrix4::from([
    ///     [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [5.0, 0.0, 0.0, 1.0f32],
    /// ]);
    /// let mut scene = Scene::new();
    /// let id = scene.add_mint(bvh, moved)?;
    /// let ray = Ray::from_mint([5.2f32, 0.2, 1.0], [0.0f32, 0.0, -1.0]);
    /// assert_eq!(scene.closest_hit(&ray, &SceneOptions::default()).unwrap().instance, id);
    /// # Ok::<(), meshray::Error>(())
    /// ```
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
    ///
    /// ```
    /// use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// use std::sync::Arc;
    ///
    /// # let p = [[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
    /// # let bvh = Arc::new(Bvh::build(Mesh::from_mint_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// let id = scene.add(bvh, nalgebra::Matrix4::identity())?;
    /// let ray = Ray::from_mint([0.2f32, 0.2, 1.0], [0.0f32, 0.0, -1.0]);
    /// assert!(scene.closest_hit(&ray, &SceneOptions::default()).is_some());
    /// // Move it 5 along x (column-major, as glam's Mat4): the ray now misses.
    /// let moved = mint::ColumnMatrix4::from([
    ///     [1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [5.0, 0.0, 0.0, 1.0f32],
    /// ]);
    /// scene.set_transform_mint(id, moved)?;
    /// assert!(scene.closest_hit(&ray, &SceneOptions::default()).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn set_transform_mint(
        &mut self,
        id: InstanceId,
        transform: impl Into<ColumnMatrix4<f32>>,
    ) -> Result<()> {
        self.set_transform(id, Matrix4::from(transform.into()))
    }
}
