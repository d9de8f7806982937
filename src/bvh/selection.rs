//! Selection queries: every triangle overlapping a box, a sphere or a frustum, and the
//! triangles visible through a screen rectangle.

use super::Bvh;
use super::leaf::LANES;
use super::nearest::moved_box;
use super::traverse::QueryOptions;
use super::walk::{Visitor, walk};
use super::wide::{WIDTH, WideNode};
use crate::select::{Ball, BoxRegion, Frustum, Region};
use crate::{Aabb, Error, Result, pixel_ray};
use nalgebra::{Matrix4, Point2, Point3, Vector2};

impl Bvh {
    /// Every triangle overlapping the box (touching counts), by number, ascending: what
    /// [`triangle_overlaps_box`](crate::triangle_overlaps_box) over every triangle gives.
    /// Empty for an empty box or one with a NaN.
    ///
    /// ```
    /// use meshray::{Aabb, Bvh, Mesh};
    /// use nalgebra::Point3;
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// let everything = bvh.triangles_in_box(&bvh.bounds());
    /// assert_eq!(everything.len(), bvh.mesh().triangle_count());
    /// let far_away = Aabb::new(Point3::new(100.0, 100.0, 100.0), Point3::new(101.0, 101.0, 101.0));
    /// assert!(bvh.triangles_in_box(&far_away).is_empty());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn triangles_in_box(&self, aabb: &Aabb) -> Vec<u32> {
        BoxRegion::new(aabb).map_or_else(Vec::new, |region| self.select(&region, None))
    }

    /// Every triangle that comes within `radius` of `centre` (its closest point, compared
    /// in `f64`), ascending. Empty for a NaN or infinite centre or a NaN or negative radius.
    ///
    /// ```
    /// use nalgebra::Point3;
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// # let mesh = bvh.mesh();
    ///
    /// let centre = Point3::new(0.0, 1.0, 0.0); // the sphere's centre
    /// assert!(bvh.triangles_in_sphere(centre, 0.5).is_empty()); // a hollow shell
    /// let shell = bvh.triangles_in_sphere(centre, 1.0);
    /// let sphere = (0..mesh.triangle_count() as u32).filter(|&t| mesh.object_id(t as usize) == 1);
    /// assert!(sphere.into_iter().all(|t| shell.binary_search(&t).is_ok()));
    /// assert!(bvh.triangles_in_sphere(centre, -1.0).is_empty()); // a negative radius selects nothing
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn triangles_in_sphere(
        &self,
        centre: impl Into<mint::Point3<f32>>,
        radius: f32,
    ) -> Vec<u32> {
        let centre = Point3::from(centre.into());
        Ball::new(&centre, radius).map_or_else(Vec::new, |ball| self.select(&ball, None))
    }

    /// Every triangle overlapping the frustum (see [`Frustum::from_screen_rect`]), ascending:
    /// box select of all triangles, hidden ones included. For only the ones the user can see,
    /// [`visible_triangles`](Bvh::visible_triangles).
    ///
    /// ```
    /// use meshray::{pixel_ray, Frustum, QueryOptions};
    /// # use nalgebra::{Isometry3, Perspective3, Point2, Point3, Vector2, Vector3};
    /// # let view = Isometry3::look_at_rh(&Point3::new(0.0, 1.0, 6.0), &Point3::new(0.0, 1.0, 0.0), &Vector3::y()).to_homogeneous();
    /// # let projection = Perspective3::new(800.0 / 600.0, 0.8, 0.1, 100.0).to_homogeneous();
    /// # let viewport = Vector2::new(800.0, 600.0);
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// // Box select around the middle of the screen, where the sphere is.
    /// let frustum = Frustum::from_screen_rect(view, projection, viewport,
    ///     Point2::new(380.0, 280.0), Point2::new(420.0, 320.0))?;
    /// let selected = bvh.triangles_in_frustum(&frustum);
    /// // The triangle under the centre pixel is selected, and so are hidden ones behind it.
    /// let ray = pixel_ray(view, projection, viewport, Point2::new(400.0, 300.0))?;
    /// let front = bvh.closest_hit(&ray, &QueryOptions::default()).unwrap();
    /// assert!(selected.contains(&front.triangle));
    /// let behind = bvh.all_hits(&ray, &QueryOptions::default());
    /// assert!(behind.len() > 1 && behind.iter().all(|h| selected.contains(&h.triangle)));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn triangles_in_frustum(&self, frustum: &Frustum) -> Vec<u32> {
        self.select(frustum, None)
    }

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
        let mut seen = Vec::new();
        for_each_sample(view, projection, viewport, a, b, samples, |ray| {
            if let Some(hit) = self.closest_triangle(ray, options) {
                seen.push(hit.triangle);
            }
        })?;
        seen.sort_unstable();
        seen.dedup();
        Ok(seen)
    }

    /// The triangles overlapping `region`, ascending, the mesh moved by `to_world` first
    /// (`None`: as it is): its boxes are moved by their corners (rounded outwards, so
    /// culling stays conservative) and its triangles in `f64`.
    pub(crate) fn select(&self, region: &impl Region, to_world: Option<&Matrix4<f64>>) -> Vec<u32> {
        let mut visitor = SelectVisitor {
            bvh: self,
            region,
            to_world,
            out: Vec::new(),
        };
        walk(&self.nodes, &mut visitor);
        let mut out = visitor.out;
        out.sort_unstable();
        out
    }
}

/// Casts the sample rays of [`Bvh::visible_triangles`] (checking its arguments first, with
/// the same errors), calling `sample` with each.
#[allow(clippy::too_many_arguments)]
pub(crate) fn for_each_sample(
    view: impl Into<mint::ColumnMatrix4<f32>>,
    projection: impl Into<mint::ColumnMatrix4<f32>>,
    viewport: impl Into<mint::Vector2<f32>>,
    a: impl Into<mint::Point2<f32>>,
    b: impl Into<mint::Point2<f32>>,
    samples: u32,
    mut sample: impl FnMut(&crate::Ray),
) -> Result<()> {
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
                    sample(&pixel_ray(view, projection, viewport, Point2::new(x, y))?);
                }
            }
        }
    }
    Ok(())
}

/// A selection: enter every box that may hold part of the region, in any order; keep the
/// leaf triangles that overlap it.
struct SelectVisitor<'a, R> {
    bvh: &'a Bvh,
    region: &'a R,
    to_world: Option<&'a Matrix4<f64>>,
    out: Vec<u32>,
}

impl<R: Region> Visitor for SelectVisitor<'_, R> {
    type Key = ();
    const ORDERED: bool = false;

    fn node(&mut self, _: u32, node: &WideNode) -> (u32, [(); WIDTH]) {
        let entered = node.lanes().filter(|&k| {
            let (mut min, mut max) = node.lane_corners(k);
            if let Some(m) = self.to_world {
                (min, max) = moved_box(m, min, max);
            }
            self.region.may_hold(min, max)
        });
        (entered.fold(0, |mask, k| mask | 1 << k), [(); WIDTH])
    }

    fn worth(&self, _: ()) -> bool {
        true
    }

    fn leaf(&mut self, first: u32, count: u32, _: ()) -> bool {
        let place = |q: [f32; 3]| {
            let q = Point3::from(q).cast::<f64>();
            self.to_world.map_or(q, |m| m.transform_point(&q))
        };
        let first = first as usize * LANES;
        for slot in first..first + count as usize {
            let tri = self.bvh.leaf_packets[slot / LANES].get(slot % LANES);
            if self.region.overlaps(&[tri.a, tri.b, tri.c].map(place)) {
                self.out.push(self.bvh.triangle_index[slot]);
            }
        }
        false
    }
}
