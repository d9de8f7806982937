//! Selection in a scene: every triangle of every instance overlapping a box, a sphere or a
//! frustum given in world space, and the triangles visible through a screen rectangle.
//!
//! Each instance's triangles are tested where the region is, in world space: moved by the
//! instance's transform in `f64` and tested with the mesh selections' exact predicates, so an
//! answer is what testing every transformed triangle gives, non-uniform scales and shears
//! included. The instance's own tree is culled with its boxes moved to world space (their
//! corners moved, rounded outwards), which can only keep too many boxes, never too few.

use super::{Instance, InstanceId, Scene, SceneOptions};
use crate::bvh::walk::{Visitor, walk};
use crate::bvh::wide::{WIDTH, WideNode};
use crate::region::{Ball, BoxRegion, Region};
use crate::{Aabb, Frustum};
use nalgebra::Point3;

/// A triangle of a scene: the instance and the triangle's number in its mesh. Selections
/// return them sorted by instance, then triangle.
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SceneTriangle {
    /// The instance.
    pub instance: InstanceId,
    /// The triangle's number in the instance's mesh (file order).
    pub triangle: u32,
}

impl Scene {
    /// Every triangle overlapping the world-space box (touching counts) among the instances
    /// the options let the query see (`mask` and `filter`), sorted: what
    /// [`triangle_overlaps_box`](crate::triangle_overlaps_box) over every transformed
    /// triangle gives (moved in `f64`). Empty for an empty box or one with a NaN.
    ///
    /// ```
    /// use meshray::{Aabb, SceneOptions, SceneTriangle};
    /// # use meshray::{Bvh, Mesh, Scene};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// let ids = scene.add_all((0..10).map(|i| (triangle.clone(), Matrix4::new_translation(&Vector3::new(2.0 * i as f32, 0.0, 0.0)))))?;
    /// // A box around x in [3.5, 6.5] holds instances 2 (x 4..5) and 3 (x 6..7).
    /// let region = Aabb::new(Point3::new(3.5, -1.0, -1.0), Point3::new(6.5, 1.0, 1.0));
    /// let found = scene.triangles_in_box(&region, &SceneOptions::default());
    /// let want = [2, 3].map(|instance| SceneTriangle { instance, triangle: 0 });
    /// assert_eq!(found, want);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn triangles_in_box(&self, aabb: &Aabb, options: &SceneOptions<'_>) -> Vec<SceneTriangle> {
        BoxRegion::new(aabb).map_or_else(Vec::new, |region| self.select(&region, options))
    }

    /// Every triangle that comes within `radius` of `centre` (world space, compared in
    /// `f64` as [`triangle_overlaps_sphere`](crate::triangle_overlaps_sphere) does, after the
    /// transform), sorted, among the instances the options let the query see. Empty for a
    /// NaN or infinite centre or a NaN or negative radius.
    ///
    /// ```
    /// use meshray::SceneOptions;
    /// # use meshray::{Bvh, Mesh, Scene};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// // Stretched 4x along x: its far corner is at x = 4.
    /// let id = scene.add(triangle, Matrix4::new_nonuniform_scaling(&Vector3::new(4.0, 1.0, 1.0)))?;
    /// let options = SceneOptions::default();
    /// assert_eq!(scene.triangles_in_sphere(Point3::new(4.5, 0.0, 0.0), 0.5, &options).len(), 1);
    /// assert!(scene.triangles_in_sphere(Point3::new(4.5, 0.0, 0.0), 0.49, &options).is_empty());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn triangles_in_sphere(
        &self,
        centre: impl Into<mint::Point3<f32>>,
        radius: f32,
        options: &SceneOptions<'_>,
    ) -> Vec<SceneTriangle> {
        let centre = Point3::from(centre.into());
        Ball::new(&centre, radius).map_or_else(Vec::new, |ball| self.select(&ball, options))
    }

    /// Every triangle overlapping the frustum (see
    /// [`Frustum::from_screen_rect`](crate::Frustum::from_screen_rect)), hidden ones included,
    /// sorted, among the instances the options let the query see. For only the ones the user
    /// can see, [`visible_triangles`](Scene::visible_triangles).
    ///
    /// ```
    /// use meshray::{Frustum, SceneOptions};
    /// # use meshray::{Bvh, Mesh, Scene};
    /// # use nalgebra::{Isometry3, Matrix4, Perspective3, Point2, Point3, Vector2, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// // Two triangles one behind the other on the camera's axis, one off to the side.
    /// let front = scene.add(triangle.clone(), Matrix4::new_translation(&Vector3::new(-0.2, -0.2, 0.0)))?;
    /// let back = scene.add(triangle.clone(), Matrix4::new_translation(&Vector3::new(-0.2, -0.2, -3.0)))?;
    /// scene.add(triangle, Matrix4::new_translation(&Vector3::new(30.0, 0.0, 0.0)))?;
    /// let view = Isometry3::look_at_rh(&Point3::new(0.0, 0.0, 5.0), &Point3::origin(), &Vector3::y()).to_homogeneous();
    /// let projection = Perspective3::new(1.0, 0.8, 0.1, 100.0).to_homogeneous();
    /// let viewport = Vector2::new(400.0, 400.0);
    /// let (a, b) = (Point2::new(190.0, 190.0), Point2::new(210.0, 210.0));
    /// let frustum = Frustum::from_screen_rect(view, projection, viewport, a, b)?;
    /// let options = SceneOptions::default();
    /// let inside: Vec<_> = scene.triangles_in_frustum(&frustum, &options).iter().map(|t| t.instance).collect();
    /// assert_eq!(inside, [front, back]);
    /// let visible = scene.visible_triangles(view, projection, viewport, a, b, 1, &options)?;
    /// assert_eq!(visible.iter().map(|t| t.instance).collect::<Vec<_>>(), [front]);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn triangles_in_frustum(
        &self,
        frustum: &Frustum,
        options: &SceneOptions<'_>,
    ) -> Vec<SceneTriangle> {
        self.select(frustum, options)
    }

    /// Walks the instances whose world box may hold part of `region`, and selects in each.
    fn select(&self, region: &impl Region, options: &SceneOptions<'_>) -> Vec<SceneTriangle> {
        let mut visitor = SelectInstances {
            slots: &self.slots,
            order: &[],
            options,
            region,
            out: Vec::new(),
        };
        for tree in self.top().trees() {
            visitor.order = &tree.order;
            walk(&tree.nodes, &mut visitor);
        }
        let mut out = visitor.out;
        out.sort_unstable();
        out
    }
}

/// A selection's walk of the top-level trees: instance boxes that may hold part of the
/// region, and in each instance the mesh selection with the mesh moved into place.
struct SelectInstances<'a, R> {
    slots: &'a [Option<Instance>],
    order: &'a [u32],
    options: &'a SceneOptions<'a>,
    region: &'a R,
    out: Vec<SceneTriangle>,
}

impl<R: Region> Visitor for SelectInstances<'_, R> {
    type Key = ();
    const ORDERED: bool = false;

    fn node(&mut self, _: u32, node: &WideNode) -> (u32, [(); WIDTH]) {
        let entered = node.lanes().filter(|&k| {
            let (min, max) = node.lane_corners(k);
            self.region.may_hold(min, max)
        });
        (entered.fold(0, |mask, k| mask | 1 << k), [(); WIDTH])
    }

    fn worth(&self, _: ()) -> bool {
        true
    }

    fn leaf(&mut self, first: u32, count: u32, _: ()) -> bool {
        let ids = &self.order[first as usize..(first + count) as usize];
        for (id, instance) in self.options.seen_in(self.slots, ids) {
            let found = instance.bvh.select(self.region, Some(&instance.to_world));
            self.out
                .extend(found.into_iter().map(|triangle| SceneTriangle {
                    instance: id,
                    triangle,
                }));
        }
        false
    }
}
