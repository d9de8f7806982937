//! Picking: from a camera's view of the screen to what lies under it: the triangles visible
//! through a screen rectangle (the closest hits of sample rays through its pixels), for a
//! mesh and for a scene alike, through [`RayCast`]. The top layer: it uses the camera
//! (`camera`) and the ray queries (`query`).

use crate::query::RayCast;
use crate::{Camera, Error, RayQuery, Result};
use nalgebra::Point2;

/// The triangles of a mesh or a scene visible through the rectangle with corners `a` and `b` of the camera's
/// viewport (pixels, as in [`Camera::pixel_ray`]), ascending (a mesh's triangle numbers; a scene's
/// [`SceneTriangle`](crate::query::SceneTriangle)s, by instance, then triangle). **Visible** means: the
/// closest hit (with `options`) of at least one sample ray inside the rectangle, the
/// samples being the centres of a `samples × samples` grid in each pixel (`samples = 1`:
/// the pixel centres) whose centre lies in the rectangle and the viewport. So a triangle
/// smaller than a pixel may be missed at `samples = 1`, as it would be by the renderer.
/// For every triangle under the rectangle, hidden ones included, select in the
/// rectangle's [`frustum`](Camera::frustum).
///
/// ```
/// use meshray::picking::visible_triangles;
/// use meshray::prelude::*;
/// use meshray::{Camera, Error, QueryOptions};
/// use meshray::selection::Region;
/// # use nalgebra::{Isometry3, Perspective3, Point2, Point3, Vector3};
/// # let view = Isometry3::look_at_rh(&Point3::new(0.0, 1.0, 6.0), &Point3::new(0.0, 1.0, 0.0), &Vector3::y()).to_homogeneous();
/// # let projection = Perspective3::new(800.0 / 600.0, 0.8, 0.1, 100.0).to_homogeneous();
/// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
///
/// let camera = Camera::new(view, projection, [800.0, 600.0])?;
/// let options = QueryOptions::default();
/// let (a, b) = (Point2::new(390.0, 290.0), Point2::new(410.0, 310.0));
/// let visible = visible_triangles(&bvh, &camera, a, b, 1, &options)?;
/// let centre = camera.pixel_ray([400.5, 300.5])?;
/// let front = bvh.closest_hit(&centre, &options).unwrap().triangle;
/// assert!(visible.contains(&front));
/// // Its back, seen by no sample ray, is not visible (but is in the frustum).
/// let back = bvh.all_hits(&centre, &options)[1].triangle;
/// assert!(!visible.contains(&back));
/// assert!(bvh.triangles_in(&Region::Frustum(camera.frustum(a, b)?)).contains(&back));
/// let denser = visible_triangles(&bvh, &camera, a, b, 4, &options)?;
/// assert!(visible.iter().all(|t| denser.contains(t)));
/// let zero = visible_triangles(&bvh, &camera, a, b, 0, &options);
/// assert!(matches!(zero, Err(Error::InvalidCamera { .. })));
/// # Ok::<(), meshray::Error>(())
/// ```
///
///
/// A scene:
///
/// ```
/// use meshray::picking::visible_triangles;
/// use meshray::{Camera, SceneOptions};
/// use meshray::selection::Region;
/// # use meshray::{Bvh, Mesh, Scene};
/// # use nalgebra::{Isometry3, Matrix4, Perspective3, Point2, Point3, Vector3};
/// # use std::sync::Arc;
/// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
/// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
/// let mut scene = Scene::new();
/// // Two triangles one behind the other on the camera's axis, one off to the side.
/// let front = scene.add(triangle.clone(), Matrix4::new_translation(&Vector3::new(-0.2, -0.2, 0.0)))?;
/// let back = scene.add(triangle.clone(), Matrix4::new_translation(&Vector3::new(-0.2, -0.2, -3.0)))?;
/// scene.add(triangle, Matrix4::new_translation(&Vector3::new(30.0, 0.0, 0.0)))?;
/// let view = Isometry3::look_at_rh(&Point3::new(0.0, 0.0, 5.0), &Point3::origin(), &Vector3::y());
/// let projection = Perspective3::new(1.0, 0.8, 0.1, 100.0);
/// let camera = Camera::new(view.to_homogeneous(), projection.to_homogeneous(), [400.0, 400.0])?;
/// let (a, b) = (Point2::new(190.0, 190.0), Point2::new(210.0, 210.0));
/// let options = SceneOptions::default();
/// let under = scene.triangles_in(&Region::Frustum(camera.frustum(a, b)?), &options);
/// assert_eq!(under.iter().map(|t| t.instance).collect::<Vec<_>>(), [front, back]);
/// let visible = visible_triangles(&scene, &camera, a, b, 1, &options)?;
/// assert_eq!(visible.iter().map(|t| t.instance).collect::<Vec<_>>(), [front]);
/// # Ok::<(), meshray::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidCamera`] for `samples` of 0 or above 64, or non-finite corners.
pub fn visible_triangles<G: RayCast>(
    geometry: &G,
    camera: &Camera,
    a: impl Into<mint::Point2<f32>>,
    b: impl Into<mint::Point2<f32>>,
    samples: u32,
    options: &G::Options<'_>,
) -> Result<Vec<G::Triangle>> {
    visible(camera, a, b, samples, |ray| {
        geometry
            .cast_ray(ray, RayQuery::Closest, options)
            .map(|hit| G::triangle(&hit))
    })
}

/// What `closest` answers, sorted and without repeats, for each sample ray of
/// [`Bvh::visible_triangles`](crate::picking::visible_triangles) (its arguments checked first, with the same errors): the one
/// walk over the rectangle's samples both `visible_triangles` share.
fn visible<T: Ord>(
    camera: &Camera,
    a: impl Into<mint::Point2<f32>>,
    b: impl Into<mint::Point2<f32>>,
    samples: u32,
    mut closest: impl FnMut(&crate::Ray) -> Option<T>,
) -> Result<Vec<T>> {
    let (a, b) = (Point2::from(a.into()), Point2::from(b.into()));
    if !(1..=64).contains(&samples) {
        return Err(Error::InvalidCamera {
            reason: "samples per pixel side must be 1 to 64",
        });
    }
    if !a.iter().chain(b.iter()).all(|c| c.is_finite()) {
        return Err(Error::InvalidCamera {
            reason: "the rectangle needs finite corners",
        });
    }
    let viewport = camera.viewport();
    let mut seen = Vec::new();
    // Pixels whose sample centres may fall in the rectangle, within the viewport.
    let (x0, x1) = (a.x.min(b.x).max(0.0), a.x.max(b.x).min(viewport.x));
    let (y0, y1) = (a.y.min(b.y).max(0.0), a.y.max(b.y).min(viewport.y));
    let step = 1.0 / samples as f32;
    for j in (y0.floor() as u64)..(y1.ceil().max(0.0) as u64) {
        for sy in 0..samples {
            let y = j as f32 + (sy as f32 + 0.5) * step;
            if !(y >= y0 && y < y1) {
                continue;
            }
            for i in (x0.floor() as u64)..(x1.ceil().max(0.0) as u64) {
                for sx in 0..samples {
                    let x = i as f32 + (sx as f32 + 0.5) * step;
                    if !(x >= x0 && x < x1) {
                        continue;
                    }
                    let ray = camera.pixel_ray(Point2::new(x, y))?;
                    seen.extend(closest(&ray));
                }
            }
        }
    }
    seen.sort_unstable();
    seen.dedup();
    Ok(seen)
}
