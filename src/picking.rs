//! Picking: from a camera's view of the screen to what lies under it. The frustum under a
//! screen rectangle (box select), and the triangles visible through it (the closest hits of
//! sample rays through its pixels), for a mesh and for a scene. The top layer: it uses the
//! camera (`camera`), the regions (`region`), the tree's queries and the scene's.

use crate::region::Polytope;
use crate::{
    Bvh, Error, Frustum, QueryOptions, Result, Scene, SceneOptions, SceneTriangle, pixel_ray,
};
use nalgebra::{Matrix4, Point2, Point3, Vector2, Vector3, Vector4};

impl Frustum {
    /// The frustum under the rectangle with corners `a` and `b` (pixel coordinates as in
    /// [`pixel_ray`]: origin top left, `y` down), between the projection's
    /// near and far planes (OpenGL clip space).
    ///
    /// The corners may be given in any order; the rectangle may extend past the viewport.
    ///
    /// ```
    /// use meshray::{Error, Frustum};
    /// use nalgebra::Matrix4;
    /// # use nalgebra::{Isometry3, Perspective3, Point2, Point3, Vector2, Vector3};
    /// # let view = Isometry3::look_at_rh(&Point3::new(0.0, 1.0, 6.0), &Point3::new(0.0, 1.0, 0.0), &Vector3::y()).to_homogeneous();
    /// # let projection = Perspective3::new(800.0 / 600.0, 0.8, 0.1, 100.0).to_homogeneous();
    /// # let viewport = Vector2::new(800.0, 600.0);
    ///
    /// let (a, b) = (Point2::new(350.0, 250.0), Point2::new(450.0, 350.0));
    /// let frustum = Frustum::from_screen_rect(view, projection, viewport, a, b)?;
    /// assert_eq!(frustum, Frustum::from_screen_rect(view, projection, viewport, b, a)?);
    /// // A rectangle of zero width, or a singular camera: errors.
    /// let flat = Frustum::from_screen_rect(view, projection, viewport, a, Point2::new(350.0, 300.0));
    /// assert!(matches!(flat, Err(Error::InvalidCamera { .. })));
    /// let singular = Frustum::from_screen_rect(view, Matrix4::zeros(), viewport, a, b);
    /// assert!(matches!(singular, Err(Error::InvalidCamera { .. })));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidCamera`] for a singular camera, a viewport that is not positive and
    /// finite, non-finite corners, or a rectangle of zero width or height.
    pub fn from_screen_rect(
        view: impl Into<mint::ColumnMatrix4<f32>>,
        projection: impl Into<mint::ColumnMatrix4<f32>>,
        viewport: impl Into<mint::Vector2<f32>>,
        a: impl Into<mint::Point2<f32>>,
        b: impl Into<mint::Point2<f32>>,
    ) -> Result<Frustum> {
        let (view, projection) = (Matrix4::from(view.into()), Matrix4::from(projection.into()));
        let viewport = Vector2::from(viewport.into());
        let (a, b) = (Point2::from(a.into()), Point2::from(b.into()));
        let invalid = |reason| Err(Error::InvalidCamera { reason });
        if !viewport.iter().all(|v| v.is_finite() && *v > 0.0) {
            return invalid("the viewport size must be positive and finite");
        }
        if !a.iter().chain(b.iter()).all(|c| c.is_finite()) || a.x == b.x || a.y == b.y {
            return invalid("the rectangle needs finite corners and a nonzero width and height");
        }
        let inverse = (projection.cast::<f64>() * view.cast::<f64>())
            .try_inverse()
            .ok_or(Error::InvalidCamera {
                reason: "projection · view is singular",
            })?;
        let ndc = |x: f32, y: f32| {
            (
                2.0 * f64::from(x) / f64::from(viewport.x) - 1.0,
                1.0 - 2.0 * f64::from(y) / f64::from(viewport.y),
            )
        };
        let (x0, y0) = ndc(a.x.min(b.x), a.y.max(b.y));
        let (x1, y1) = ndc(a.x.max(b.x), a.y.min(b.y));
        let mut corners = Vec::with_capacity(8);
        for z in [-1.0, 1.0] {
            for (x, y) in [(x0, y0), (x1, y0), (x1, y1), (x0, y1)] {
                let h = inverse * Vector4::new(x, y, z, 1.0);
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
}

impl Bvh {
    /// The triangles visible through the rectangle with corners `a` and `b` of the viewport
    /// (pixel coordinates as in [`pixel_ray`]), ascending. **Visible** means: the closest
    /// hit (with `options`) of at least one sample ray inside the rectangle, the samples
    /// being the centres of a `samples × samples` grid in each pixel (`samples = 1`: the
    /// pixel centres) whose centre lies in the rectangle and the viewport. So a triangle
    /// smaller than a pixel may be missed at `samples = 1`, as it would be by the renderer.
    ///
    /// ```
    /// use meshray::{pixel_ray, Error, QueryOptions};
    /// # use nalgebra::{Isometry3, Perspective3, Point2, Point3, Vector2, Vector3};
    /// # let view = Isometry3::look_at_rh(&Point3::new(0.0, 1.0, 6.0), &Point3::new(0.0, 1.0, 0.0), &Vector3::y()).to_homogeneous();
    /// # let projection = Perspective3::new(800.0 / 600.0, 0.8, 0.1, 100.0).to_homogeneous();
    /// # let viewport = Vector2::new(800.0, 600.0);
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// let options = QueryOptions::default();
    /// let (a, b) = (Point2::new(390.0, 290.0), Point2::new(410.0, 310.0));
    /// let visible = bvh.visible_triangles(view, projection, viewport, a, b, 1, &options)?;
    /// let centre = pixel_ray(view, projection, viewport, Point2::new(400.5, 300.5))?;
    /// let front = bvh.closest_triangle(&centre, &options).unwrap().triangle;
    /// assert!(visible.contains(&front));
    /// // Its back, seen by no sample ray, is not visible (but is in the frustum).
    /// let back = bvh.all_hits(&centre, &options)[1].triangle;
    /// assert!(!visible.contains(&back));
    /// let denser = bvh.visible_triangles(view, projection, viewport, a, b, 4, &options)?;
    /// assert!(visible.iter().all(|t| denser.contains(t)));
    /// let zero = bvh.visible_triangles(view, projection, viewport, a, b, 0, &options);
    /// assert!(matches!(zero, Err(Error::InvalidCamera { .. })));
    /// let flipped = -viewport; // a negative viewport is refused, even for an empty rectangle
    /// let refused = bvh.visible_triangles(view, projection, flipped, a, a, 1, &options);
    /// assert!(matches!(refused, Err(Error::InvalidCamera { .. })));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidCamera`] for `samples` of 0 or above 64, non-finite corners, or a
    /// camera or viewport [`pixel_ray`] rejects (checked first, whatever the rectangle).
    #[allow(clippy::too_many_arguments)]
    pub fn visible_triangles(
        &self,
        view: impl Into<mint::ColumnMatrix4<f32>>,
        projection: impl Into<mint::ColumnMatrix4<f32>>,
        viewport: impl Into<mint::Vector2<f32>>,
        a: impl Into<mint::Point2<f32>>,
        b: impl Into<mint::Point2<f32>>,
        samples: u32,
        options: &QueryOptions,
    ) -> Result<Vec<u32>> {
        visible(view, projection, viewport, a, b, samples, |ray| {
            self.closest_triangle(ray, options).map(|hit| hit.triangle)
        })
    }
}

impl Scene {
    /// The triangles visible through the rectangle with corners `a` and `b` of the viewport,
    /// sorted: the closest hits ([`closest_hit`](Scene::closest_hit) with `options`) of the
    /// sample rays [`Bvh::visible_triangles`] casts (`samples ×
    /// samples` per pixel). See [`triangles_in_frustum`](Scene::triangles_in_frustum) for an
    /// example.
    ///
    /// # Errors
    /// As [`Bvh::visible_triangles`]: [`Error::InvalidCamera`]
    /// for `samples` of 0 or above 64, non-finite corners, or a camera or viewport
    /// [`pixel_ray`] rejects.
    #[allow(clippy::too_many_arguments)]
    pub fn visible_triangles(
        &self,
        view: impl Into<mint::ColumnMatrix4<f32>>,
        projection: impl Into<mint::ColumnMatrix4<f32>>,
        viewport: impl Into<mint::Vector2<f32>>,
        a: impl Into<mint::Point2<f32>>,
        b: impl Into<mint::Point2<f32>>,
        samples: u32,
        options: &SceneOptions<'_>,
    ) -> Result<Vec<SceneTriangle>> {
        visible(view, projection, viewport, a, b, samples, |ray| {
            self.closest_hit(ray, options).map(|hit| SceneTriangle {
                instance: hit.instance,
                triangle: hit.hit.triangle,
            })
        })
    }
}

/// What `closest` answers, sorted and without repeats, for each sample ray of
/// [`Bvh::visible_triangles`] (its arguments checked first, with the same errors): the one
/// walk over the rectangle's samples both `visible_triangles` share.
#[allow(clippy::too_many_arguments)]
fn visible<T: Ord>(
    view: impl Into<mint::ColumnMatrix4<f32>>,
    projection: impl Into<mint::ColumnMatrix4<f32>>,
    viewport: impl Into<mint::Vector2<f32>>,
    a: impl Into<mint::Point2<f32>>,
    b: impl Into<mint::Point2<f32>>,
    samples: u32,
    mut closest: impl FnMut(&crate::Ray) -> Option<T>,
) -> Result<Vec<T>> {
    let (view, projection) = (Matrix4::from(view.into()), Matrix4::from(projection.into()));
    let viewport = Vector2::from(viewport.into());
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
    // The camera and viewport, checked once through the ray at the viewport's centre.
    pixel_ray(view, projection, viewport, Point2::from(viewport / 2.0))?;
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
                    let ray = pixel_ray(view, projection, viewport, Point2::new(x, y))?;
                    seen.extend(closest(&ray));
                }
            }
        }
    }
    seen.sort_unstable();
    seen.dedup();
    Ok(seen)
}
