//! Selection queries: every triangle overlapping a box, a sphere or a frustum, and the
//! triangles visible through a screen rectangle.

use super::Bvh;
use super::leaf::LANES;
use super::walk::{Visitor, walk};
use super::wide::{WIDTH, WideNode};
use crate::Aabb;
use crate::region::{Ball, BoxRegion, Frustum, Region};
use crate::transform::moved_box;
use nalgebra::{Matrix4, Point3};

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
