//! Picking: the ray through a pixel of a viewport.

use crate::{Error, Ray, Result};
use nalgebra::{Matrix4, Point2, Point3, Vector2, Vector4};

/// The ray through `pixel` of a `viewport` (width, height) for a camera's `view` and
/// `projection` matrices. The conventions follow.
///
/// A pixel position `(x, y)` in a `width × height` viewport (origin at the top-left corner,
/// `y` down, as mouse coordinates are; the centre of pixel `(i, j)` is `(i + 0.5, j + 0.5)`)
/// maps to normalized device coordinates `x_ndc = 2x/width − 1`, `y_ndc = 1 − 2y/height`.
/// Unprojecting `(x_ndc, y_ndc, −1)` and `(x_ndc, y_ndc, 1)` through the inverse of
/// `projection · view` gives the points on the near and far planes under that pixel
/// (OpenGL's clip space, which nalgebra's `Perspective3` and `Orthographic3` produce).
///
/// The ray starts on the near plane and its direction is the unit vector towards the far
/// point, so `t` is the distance from the near plane, and `t_max` is `+inf` (a far plane
/// does not clip picking). The unprojection runs in `f64`, so a far-away camera loses no
/// precision in the inverse.
///
/// ```
/// use meshray::pixel_ray;
/// use nalgebra::{Isometry3, Perspective3, Point2, Point3, Vector2, Vector3};
///
/// let eye = Point3::new(0.0, 0.0, 5.0);
/// let view = Isometry3::look_at_rh(&eye, &Point3::origin(), &Vector3::y()).to_homogeneous();
/// let projection = Perspective3::new(16.0 / 9.0, 0.8, 0.1, 100.0).to_homogeneous();
/// let viewport = Vector2::new(1920.0, 1080.0);
/// let ray = pixel_ray(view, projection, viewport, Point2::new(960.0, 540.0))?;
/// // the centre of the screen looks straight down -z
/// assert!((ray.direction() - Vector3::new(0.0, 0.0, -1.0)).norm() < 1e-6);
/// assert!((ray.origin().z - 4.9).abs() < 1e-5);
/// # Ok::<(), meshray::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidCamera`] when the viewport is not positive and finite, the pixel is not
/// finite, or `projection · view` cannot be inverted.
pub fn pixel_ray(
    view: impl Into<mint::ColumnMatrix4<f32>>,
    projection: impl Into<mint::ColumnMatrix4<f32>>,
    viewport: impl Into<mint::Vector2<f32>>,
    pixel: impl Into<mint::Point2<f32>>,
) -> Result<Ray> {
    let (view, projection) = (Matrix4::from(view.into()), Matrix4::from(projection.into()));
    let (viewport, pixel) = (Vector2::from(viewport.into()), Point2::from(pixel.into()));
    let view_projection = projection.cast::<f64>() * view.cast::<f64>();
    let inverse = view_projection.try_inverse().ok_or(Error::InvalidCamera {
        reason: "projection · view is singular",
    })?;
    unproject(&inverse, viewport, pixel)
}

/// [`pixel_ray`] for a camera given by the inverse of `projection · view`, for engines that
/// keep that inverse already (it is inverted in `f32` there; [`pixel_ray`] inverts in `f64`).
///
/// ```
/// use meshray::{pixel_ray, pixel_ray_from_inverse};
/// use nalgebra::{Isometry3, Perspective3, Point2, Point3, Vector2, Vector3};
///
/// let view = Isometry3::look_at_rh(&Point3::new(0.0, 0.0, 5.0), &Point3::origin(), &Vector3::y()).to_homogeneous();
/// let projection = Perspective3::new(1.5, 0.8, 0.1, 100.0).to_homogeneous();
/// let inverse = (projection * view).try_inverse().unwrap();
/// let (viewport, pixel) = (Vector2::new(300.0, 200.0), Point2::new(20.0, 180.0));
/// let ray = pixel_ray_from_inverse(inverse, viewport, pixel)?;
/// let reference = pixel_ray(view, projection, viewport, pixel)?;
/// assert!((ray.direction() - reference.direction()).norm() < 1e-4);
/// assert!(pixel_ray_from_inverse(inverse, Vector2::new(0.0, 200.0), pixel).is_err()); // empty viewport
/// # Ok::<(), meshray::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidCamera`] when the viewport is not positive and finite, the pixel is not
/// finite, or the matrix maps the pixel to a point at infinity.
pub fn pixel_ray_from_inverse(
    inverse_view_projection: impl Into<mint::ColumnMatrix4<f32>>,
    viewport: impl Into<mint::Vector2<f32>>,
    pixel: impl Into<mint::Point2<f32>>,
) -> Result<Ray> {
    let inverse = Matrix4::from(inverse_view_projection.into());
    let (viewport, pixel) = (Vector2::from(viewport.into()), Point2::from(pixel.into()));
    unproject(&inverse.cast::<f64>(), viewport, pixel)
}

fn unproject(inverse: &Matrix4<f64>, viewport: Vector2<f32>, pixel: Point2<f32>) -> Result<Ray> {
    if !viewport.iter().all(|v| v.is_finite() && *v > 0.0) {
        return Err(Error::InvalidCamera {
            reason: "the viewport size must be positive and finite",
        });
    }
    if !pixel.iter().all(|p| p.is_finite()) {
        return Err(Error::InvalidCamera {
            reason: "the pixel position must be finite",
        });
    }
    let x = 2.0 * f64::from(pixel.x) / f64::from(viewport.x) - 1.0;
    let y = 1.0 - 2.0 * f64::from(pixel.y) / f64::from(viewport.y);
    let point = |z: f64| {
        let h = inverse * Vector4::new(x, y, z, 1.0);
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
            let ray = pixel_ray(view, projection, vp, Point2::new(px, py)).unwrap();
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
    fn inverse_form_agrees() {
        let (view, projection) = camera();
        let vp = Vector2::new(64.0, 48.0);
        let inv = (projection * view).try_inverse().unwrap();
        let a = pixel_ray(view, projection, vp, Point2::new(10.0, 20.0)).unwrap();
        let b = pixel_ray_from_inverse(inv, vp, Point2::new(10.0, 20.0)).unwrap();
        assert!((a.origin() - b.origin()).norm() < 1e-4);
        assert!((a.direction() - b.direction()).norm() < 1e-5);
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
        let a = pixel_ray(view, projection, vp, Point2::new(0.0, 0.0)).unwrap();
        let b = pixel_ray(view, projection, vp, Point2::new(400.0, 200.0)).unwrap();
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
            assert!(pixel_ray(view, projection, vp, p).is_err());
        }
        let vp = Vector2::new(10.0, 10.0);
        assert!(pixel_ray(view, projection, vp, Point2::new(f32::NAN, 0.0)).is_err());
        assert!(pixel_ray(view, Matrix4::zeros(), vp, p).is_err());
        assert!(pixel_ray_from_inverse(Matrix4::zeros(), vp, p).is_err());
    }
}
