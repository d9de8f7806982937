//! Selection in a scene: every triangle of every instance overlapping a box, a sphere or a
//! frustum given in world space.
//!
//! Each instance's triangles are tested where the region is, in world space: moved by the
//! instance's transform in `f64` and tested with the mesh selections' exact predicates, so an
//! answer is what testing every transformed triangle gives, non-uniform scales and shears
//! included. The instance's own tree is culled with its boxes moved to world space (their
//! corners moved, rounded outwards), which can only keep too many boxes, never too few.

use super::walk::InstanceVisitor;
use super::{Instance, InstanceId, Scene, SceneOptions};
use crate::bvh::facade::{WIDTH, WideNode};
use crate::region::{Region, Selector};

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
    /// Every triangle overlapping the world-space region (touching counts) among the
    /// instances the options let the query see (`mask` and `filter`), sorted: what
    /// [`Region::overlaps_triangle`] over every transformed triangle gives (moved in `f64`).
    /// Empty for a region that holds nothing.
    ///
    /// ```
    /// use meshray::SceneOptions;
    /// use meshray::geometry::Aabb;
    /// use meshray::query::SceneTriangle;
    /// use meshray::selection::Region;
    /// # use meshray::{Bvh, Mesh, Scene};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// for i in 0..10 {
    ///     scene.add(triangle.clone(), Matrix4::new_translation(&Vector3::new(2.0 * i as f32, 0.0, 0.0)))?;
    /// }
    /// let options = SceneOptions::default();
    /// // A box around x in [3.5, 6.5] holds instances 2 (x 4..5) and 3 (x 6..7).
    /// let region = Region::Box(Aabb::new([3.5, -1.0, -1.0], [6.5, 1.0, 1.0]));
    /// let want = [2, 3].map(|instance| SceneTriangle { instance, triangle: 0 });
    /// assert_eq!(scene.triangles_in(&region, &options), want);
    /// // Within 0.45 of (1.4, 0, 0): instance 0's corner (1, 0, 0) is; instance 1 (x 2..3) is not.
    /// let ball = Region::Sphere { centre: Point3::new(1.4, 0.0, 0.0), radius: 0.45 };
    /// assert_eq!(scene.triangles_in(&ball, &options).len(), 1);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn triangles_in(&self, region: &Region, options: &SceneOptions<'_>) -> Vec<SceneTriangle> {
        region
            .selector()
            .map_or_else(Vec::new, |selector| self.select(&selector, options))
    }

    /// Walks the instances whose world box may hold part of `region`, and selects in each.
    fn select(&self, region: &Selector<'_>, options: &SceneOptions<'_>) -> Vec<SceneTriangle> {
        let mut visitor = SelectInstances {
            region,
            out: Vec::new(),
        };
        self.walk_instances(options, &mut visitor);
        let mut out = visitor.out;
        out.sort_unstable();
        out
    }
}

/// A selection's walk of the top-level trees: instance boxes that may hold part of the
/// region, and in each instance the mesh selection with the mesh moved into place.
struct SelectInstances<'a> {
    region: &'a Selector<'a>,
    out: Vec<SceneTriangle>,
}

impl InstanceVisitor for SelectInstances<'_> {
    type Key = ();
    const ORDERED: bool = false;

    fn node(&mut self, node: &WideNode) -> (u32, [(); WIDTH]) {
        let entered = node.lanes().filter(|&k| {
            let (min, max) = node.lane_corners(k);
            self.region.may_hold(min, max)
        });
        (entered.fold(0, |mask, k| mask | 1 << k), [(); WIDTH])
    }

    fn worth(&self, _: ()) -> bool {
        true
    }

    fn instance(&mut self, id: InstanceId, instance: &Instance) -> bool {
        let found = instance.bvh.select(self.region, Some(&instance.to_world));
        self.out
            .extend(found.into_iter().map(|triangle| SceneTriangle {
                instance: id,
                triangle,
            }));
        false
    }
}
