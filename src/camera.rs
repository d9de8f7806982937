//! The camera: the ray through a pixel of a viewport, and the frustum under a rectangle of
//! it.

use crate::region::Polytope;
use crate::{Error, Frustum, Ray, Result};
use nalgebra::{Matrix4, Point2, Point3, Vector2, Vector3, Vector4};

/// A camera as picking sees it: its `view` and `projection` matrices and the viewport's
/// size in pixels. The conventions follow.
///
/// A pixel position `(x, y)` in a `width × height` viewport (origin at the top-left corner,
/// `y` down, as mouse coordinates are; the centre of pixel `(i, j)` is `(i + 0.5, j + 0.5)`)
/// maps to normalized device coordinates `x_ndc = 2x/width − 1`, `y_ndc = 1 − 2y/height`.
/// Unprojecting `(x_ndc, y_ndc, −1)` and `(x_ndc, y_ndc, 1)` through the inverse of
/// `projection · view` gives the points on the near and far planes under that pixel
/// (OpenGL's clip space, which nalgebra's `Perspective3` and `Orthographic3` produce). The
/// inverse is taken in `f64`, so a far-away camera loses no precision in it.
///
/// ```
/// use meshray::prelude::*;
/// use meshray::{Bvh, Camera, Mesh, QueryOptions};
/// use nalgebra::{Isometry3, Perspective3, Point2, Point3, Vector2, Vector3};
///
/// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
/// let eye = Point3::new(0.0, 1.0, 6.0);
/// let view = Isometry3::look_at_rh(&eye, &Point3::new(0.0, 1.0, 0.0), &Vector3::y());
/// let projection = Perspective3::new(800.0 / 600.0, 0.8, 0.1, 100.0);
/// let camera = Camera::new(view.to_homogeneous(), projection.to_homogeneous(), [800.0, 600.0])?;
///
/// // Click in the middle of the window: the sphere of the scene (object 1).
/// let ray = camera.pixel_ray([400.0, 300.0])?;
/// let hit = bvh.closest_hit(&ray, &QueryOptions::default()).unwrap();
/// assert_eq!(hit.object, 1);
/// # Ok::<(), meshray::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// The inverse of `projection · view`, in `f64`.
    inverse: Matrix4<f64>,
    /// Width and height in pixels, positive and finite.
    viewport: Vector2<f32>,
}

impl Camera {
    /// The camera with these `view` and `projection` matrices, looking into a `viewport`
    /// of `(width, height)` pixels.
    ///
    /// ```
    /// use meshray::{Camera, Error};
    /// use nalgebra::Matrix4;
    ///
    /// let identity = Matrix4::<f32>::identity();
    /// assert!(Camera::new(identity, identity, [640.0, 480.0]).is_ok());
    /// let singular = Camera::new(identity, Matrix4::zeros(), [640.0, 480.0]);
    /// assert!(matches!(singular, Err(Error::InvalidCamera { .. })));
    /// assert!(Camera::new(identity, identity, [0.0, 480.0]).is_err()); // an empty viewport
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidCamera`] when the viewport is not positive and finite or
    /// `projection · view` cannot be inverted.
    pub fn new(
        view: impl Into<mint::ColumnMatrix4<f32>>,
        projection: impl Into<mint::ColumnMatrix4<f32>>,
        viewport: impl Into<mint::Vector2<f32>>,
    ) -> Result<Camera> {
        let (view, projection) = (Matrix4::from(view.into()), Matrix4::from(projection.into()));
        let viewport = Vector2::from(viewport.into());
        if !viewport.iter().all(|v| v.is_finite() && *v > 0.0) {
            return Err(Error::InvalidCamera {
                reason: "the viewport size must be positive and finite",
            });
        }
        let view_projection = projection.cast::<f64>() * view.cast::<f64>();
        let inverse = view_projection
            .try_inverse()
            .filter(|m| m.iter().all(|c| c.is_finite()))
            .ok_or(Error::InvalidCamera {
                reason: "projection · view is singular",
            })?;
        Ok(Camera { inverse, viewport })
    }

    /// The viewport's width and height, in pixels.
    pub(crate) fn viewport(&self) -> Vector2<f32> {
        self.viewport
    }

    /// The ray through `pixel`. It starts on the near plane and its direction is the unit
    /// vector towards the far point, so `t` is the distance from the near plane, and `t_max`
    /// is `+inf` (a far plane does not clip picking).
    ///
    /// ```
    /// use meshray::Camera;
    /// use nalgebra::{Isometry3, Perspective3, Point3, Vector3};
    ///
    /// let eye = Point3::new(0.0, 0.0, 5.0);
    /// let view = Isometry3::look_at_rh(&eye, &Point3::origin(), &Vector3::y()).to_homogeneous();
    /// let projection = Perspective3::new(16.0 / 9.0, 0.8, 0.1, 100.0).to_homogeneous();
    /// let camera = Camera::new(view, projection, [1920.0, 1080.0])?;
    /// let ray = camera.pixel_ray([960.0, 540.0])?;
    /// // the centre of the screen looks straight down -z
    /// assert!((ray.direction() - Vector3::new(0.0, 0.0, -1.0)).norm() < 1e-6);
    /// assert!((ray.origin().z - 4.9).abs() < 1e-5);
    /// assert!(camera.pixel_ray([f32::NAN, 0.0]).is_err());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidCamera`] when the pixel is not finite or unprojects to a point at
    /// infinity.
    pub fn pixel_ray(&self, pixel: impl Into<mint::Point2<f32>>) -> Result<Ray> {
        let pixel = Point2::from(pixel.into());
        if !pixel.iter().all(|p| p.is_finite()) {
            return Err(Error::InvalidCamera {
                reason: "the pixel position must be finite",
            });
        }
        let (x, y) = self.ndc(pixel.x, pixel.y);
        let point = |z: f64| {
            let h = self.inverse * Vector4::new(x, y, z, 1.0);
            let p = Point3::new(h.x / h.w, h.y / h.w, h.z / h.w);
            p.iter().all(|c| c.is_finite()).then_some(p)
        };
        let (Some(near), Some(far)) = (point(-1.0), point(1.0)) else {
            return Err(Error::InvalidCamera {
                reason: "the pixel unprojects to a point at infinity",
            });
        };
        let direction = (far - near)
            .try_normalize(0.0)
            .ok_or(Error::InvalidCamera {
                reason: "the near and far points under the pixel coincide",
            })?;
        let ray = Ray::new(near.cast::<f32>(), direction.cast::<f32>());
        if !ray.is_valid() {
            return Err(Error::InvalidCamera {
                reason: "the ray does not fit in f32",
            });
        }
        Ok(ray)
    }

    /// The frustum under the rectangle with corners `a` and `b` (pixels, as in
    /// [`pixel_ray`](Camera::pixel_ray)), between the projection's near and far planes: the
    /// region box select selects ([`Region::Frustum`](crate::selection::Region::Frustum)). The corners
    /// may be given in any order; the rectangle may extend past the viewport.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Camera, Error, Mesh, QueryOptions};
    /// use meshray::selection::Region;
    /// use nalgebra::{Isometry3, Perspective3, Point2, Point3};
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// let view = Isometry3::look_at_rh(&Point3::new(0.0, 1.0, 6.0), &Point3::new(0.0, 1.0, 0.0), &nalgebra::Vector3::y());
    /// let projection = Perspective3::new(800.0 / 600.0, 0.8, 0.1, 100.0);
    /// let camera = Camera::new(view.to_homogeneous(), projection.to_homogeneous(), [800.0, 600.0])?;
    ///
    /// // Box select around the middle of the screen, where the sphere is.
    /// let (a, b) = (Point2::new(380.0, 280.0), Point2::new(420.0, 320.0));
    /// let frustum = camera.frustum(a, b)?;
    /// assert_eq!(frustum, camera.frustum(b, a)?);
    /// let selected = bvh.triangles_in(&Region::Frustum(frustum));
    /// // The triangle under the centre pixel is selected, and so are hidden ones behind it.
    /// let ray = camera.pixel_ray([400.0, 300.0])?;
    /// let behind = bvh.all_hits(&ray, &QueryOptions::default());
    /// assert!(behind.len() > 1 && behind.iter().all(|h| selected.contains(&h.triangle)));
    /// // A rectangle of zero width is an error.
    /// let flat = camera.frustum(a, Point2::new(380.0, 300.0));
    /// assert!(matches!(flat, Err(Error::InvalidCamera { .. })));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidCamera`] for non-finite corners, a rectangle of zero width or height,
    /// or a frustum with a corner at infinity.
    pub fn frustum(
        &self,
        a: impl Into<mint::Point2<f32>>,
        b: impl Into<mint::Point2<f32>>,
    ) -> Result<Frustum> {
        let (a, b) = (Point2::from(a.into()), Point2::from(b.into()));
        let invalid = |reason| Err(Error::InvalidCamera { reason });
        if !a.iter().chain(b.iter()).all(|c| c.is_finite()) || a.x == b.x || a.y == b.y {
            return invalid("the rectangle needs finite corners and a nonzero width and height");
        }
        let (x0, y0) = self.ndc(a.x.min(b.x), a.y.max(b.y));
        let (x1, y1) = self.ndc(a.x.max(b.x), a.y.min(b.y));
        let mut corners = Vec::with_capacity(8);
        for z in [-1.0, 1.0] {
            for (x, y) in [(x0, y0), (x1, y0), (x1, y1), (x0, y1)] {
                let h = self.inverse * Vector4::new(x, y, z, 1.0);
                let p = Point3::new(h.x / h.w, h.y / h.w, h.z / h.w);
                if !p.iter().all(|c| c.is_finite()) {
                    return invalid("a corner of the frustum is at infinity");
                }
                corners.push(p);
            }
        }
        let centre = Point3::from(
            corners.iter().map(|p| p.coords).sum::<Vector3<f64>>() / corners.len() as f64,
        );
        // Faces by corner indices (near 0..4, far 4..8); normals turned outward.
        let quads = [
            [0, 1, 2],
            [4, 5, 6],
            [0, 1, 5],
            [1, 2, 6],
            [2, 3, 7],
            [3, 0, 4],
        ];
        let mut faces = Vec::new();
        for [i, j, k] in quads {
            let mut n = (corners[j] - corners[i]).cross(&(corners[k] - corners[i]));
            if n.dot(&(corners[i] - centre)) < 0.0 {
                n = -n;
            }
            let Some(n) = n.try_normalize(0.0) else {
                return invalid("the frustum is flat");
            };
            faces.push((n, n.dot(&corners[i].coords)));
        }
        let mut edges = vec![corners[1] - corners[0], corners[3] - corners[0]];
        edges.extend((0..4).map(|i| corners[i + 4] - corners[i]));
        Ok(Frustum {
            region: Polytope {
                corners,
                faces,
                edges,
            },
        })
    }

    /// Normalized device coordinates of a pixel position.
    fn ndc(&self, x: f32, y: f32) -> (f64, f64) {
        (
            2.0 * f64::from(x) / f64::from(self.viewport.x) - 1.0,
            1.0 - 2.0 * f64::from(y) / f64::from(self.viewport.y),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Isometry3, Orthographic3, Perspective3, Vector3};

    fn camera() -> (Matrix4<f32>, Matrix4<f32>) {
        let eye = Point3::new(1.0, 2.0, 3.0);
        let view = Isometry3::look_at_rh(&eye, &Point3::new(0.0, 0.0, 0.0), &Vector3::y())
            .to_homogeneous();
        let projection = Perspective3::new(1.5, 0.9, 0.5, 50.0).to_homogeneous();
        (view, projection)
    }

    #[test]
    fn pixel_rays_project_back_onto_their_pixel() {
        let (view, projection) = camera();
        let vp = Vector2::new(300.0, 200.0);
        let clip = projection * view;
        for (px, py) in [(0.5, 0.5), (150.0, 100.0), (299.5, 10.25), (37.0, 199.0)] {
            let camera = Camera::new(view, projection, vp).unwrap();
            let ray = camera.pixel_ray(Point2::new(px, py)).unwrap();
            for t in [0.0, 1.0, 10.0] {
                let p = ray.at(t);
                let h = clip * Vector4::new(p.x, p.y, p.z, 1.0);
                let sx = (h.x / h.w + 1.0) * 0.5 * vp.x;
                let sy = (1.0 - h.y / h.w) * 0.5 * vp.y;
                assert!(
                    (sx - px).abs() < 1e-2 && (sy - py).abs() < 1e-2,
                    "{px},{py} t={t}: {sx},{sy}"
                );
            }
            assert!((ray.direction().norm() - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn orthographic_rays_are_parallel() {
        let view = Isometry3::look_at_rh(
            &Point3::new(0.0, 0.0, 5.0),
            &Point3::origin(),
            &Vector3::y(),
        )
        .to_homogeneous();
        let projection = Orthographic3::new(-2.0, 2.0, -1.0, 1.0, 0.1, 10.0).to_homogeneous();
        let vp = Vector2::new(400.0, 200.0);
        let camera = Camera::new(view, projection, vp).unwrap();
        let a = camera.pixel_ray(Point2::new(0.0, 0.0)).unwrap();
        let b = camera.pixel_ray(Point2::new(400.0, 200.0)).unwrap();
        assert!((a.direction() - b.direction()).norm() < 1e-6);
        assert!((a.origin().x + 2.0).abs() < 1e-5 && (a.origin().y - 1.0).abs() < 1e-5);
        assert!((b.origin().x - 2.0).abs() < 1e-5 && (b.origin().y + 1.0).abs() < 1e-5);
    }

    #[test]
    fn bad_cameras_are_errors() {
        let (view, projection) = camera();
        let p = Point2::new(1.0, 1.0);
        for vp in [
            Vector2::new(0.0, 10.0),
            Vector2::new(10.0, -1.0),
            Vector2::new(f32::NAN, 1.0),
        ] {
            assert!(Camera::new(view, projection, vp).is_err());
        }
        let vp = Vector2::new(10.0, 10.0);
        let camera = Camera::new(view, projection, vp).unwrap();
        assert!(camera.pixel_ray(p).is_ok());
        assert!(camera.pixel_ray(Point2::new(f32::NAN, 0.0)).is_err());
        assert!(camera.frustum(p, Point2::new(f32::INFINITY, 3.0)).is_err());
        assert!(Camera::new(view, Matrix4::zeros(), vp).is_err());
    }
}
