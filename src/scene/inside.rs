//! Inside or outside a scene: the winding numbers of its instances, summed in world space.
//! A winding number does not change under an affine map that keeps orientation, so each
//! instance's is its mesh's at the point moved into the mesh's frame. A mirror reverses
//! orientation, but the scene takes the images of a mesh's front faces as the instance's
//! front faces (see [`Scene::add`]), so a mesh that faces outwards faces outwards however it
//! is placed, and its winding number is taken unchanged there too.

use super::{Scene, SceneOptions};
use crate::WindingAccuracy;
use crate::closest_point::distance_query;
use crate::winding::inside_by_stages;
use nalgebra::Point3;

impl Scene {
    /// The generalized winding number of the scene around `point`: the sum of the winding
    /// numbers of the instances `options` sees ([`Bvh::winding_number`](crate::Bvh::winding_number)),
    /// each its mesh's at the point moved into the mesh's frame (also under a mirror: the
    /// images of front faces are front faces, as for culling). 1 inside one closed instance,
    /// 2 where two overlap.
    /// NaN for a NaN or infinite `point`; 0 for an empty scene. O(instances) per point.
    ///
    /// ```
    /// use meshray::{Bvh, Mesh, Scene, SceneOptions, WindingAccuracy};
    /// use nalgebra::{Matrix4, Point3, Vector3};
    /// use std::sync::Arc;
    ///
    /// let corners = vec![
    ///     Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0),
    ///     Point3::new(0.0, 1.0, 0.0), Point3::new(0.0, 0.0, 1.0),
    /// ];
    /// let tetrahedron = Mesh::from_buffers(corners, vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])?;
    /// let tree = Arc::new(Bvh::build(tetrahedron));
    /// let mut scene = Scene::new();
    /// scene.add(tree.clone(), Matrix4::new_translation(&Vector3::new(10.0, 0.0, 0.0)))?;
    /// // Mirrored in x: still closed, still facing outwards once placed.
    /// scene.add(tree, Matrix4::new_nonuniform_scaling(&Vector3::new(-2.0, 2.0, 2.0)))?;
    /// let all = SceneOptions::default();
    /// let w = |p| scene.winding_number(p, WindingAccuracy::Exact, &all);
    /// assert!((w(Point3::new(10.2, 0.2, 0.2)) - 1.0).abs() < 1e-9);
    /// assert!((w(Point3::new(-0.4, 0.4, 0.4)) - 1.0).abs() < 1e-9);
    /// assert!(w(Point3::new(5.0, 0.4, 0.4)).abs() < 1e-9);
    /// assert!(scene.contains(Point3::new(-0.4, 0.4, 0.4), &all));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn winding_number(
        &self,
        point: impl Into<mint::Point3<f32>>,
        accuracy: WindingAccuracy,
        options: &SceneOptions<'_>,
    ) -> f64 {
        let point = Point3::from(point.into());
        if !point.iter().all(|c| c.is_finite()) {
            return f64::NAN;
        }
        self.winding_number_at(&point.cast::<f64>(), accuracy, options)
    }

    fn winding_number_at(
        &self,
        p: &Point3<f64>,
        accuracy: WindingAccuracy,
        options: &SceneOptions<'_>,
    ) -> f64 {
        let mut sum = 0.0;
        for (id, slot) in self.slots.iter().enumerate() {
            let Some(instance) = slot else { continue };
            if !options.sees(id as u32, instance) {
                continue;
            }
            let local = instance.to_object.transform_point(p);
            sum += instance.bvh.winding_number_at(local.into(), accuracy);
        }
        sum
    }

    /// Whether `point` is inside the scene: its exact winding number (see
    /// [`winding_number`](Scene::winding_number)) is at least ½, answered as
    /// [`Bvh::contains`](crate::Bvh::contains) answers for a mesh. `false` for a NaN or
    /// infinite `point`.
    pub fn contains(
        &self,
        point: impl Into<mint::Point3<f32>>,
        options: &SceneOptions<'_>,
    ) -> bool {
        let point = Point3::from(point.into());
        if !point.iter().all(|c| c.is_finite()) {
            return false;
        }
        let p = point.cast::<f64>();
        inside_by_stages(|accuracy| self.winding_number_at(&p, accuracy, options))
    }

    /// The world-space distance from `point` to the nearest instance `options` sees,
    /// negative where [`contains`](Scene::contains) holds: the distance of
    /// [`closest_point`](Scene::closest_point), in `f64`. `None` as `closest_point` answers
    /// `None` (nothing within `max_distance`, a NaN or infinite point).
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let corners = vec![
    /// #     Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0),
    /// #     Point3::new(0.0, 1.0, 0.0), Point3::new(0.0, 0.0, 1.0),
    /// # ];
    /// # let tetrahedron = Mesh::from_buffers(corners, vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])?;
    /// let mut scene = Scene::new();
    /// // The unit tetrahedron, scaled 2x: its bottom face at z = 0 spans 2 by 2.
    /// scene.add(Arc::new(Bvh::build(tetrahedron)), Matrix4::new_scaling(2.0))?;
    /// let all = SceneOptions::default();
    /// let d = scene.signed_distance(Point3::new(0.4, 0.4, 0.2), f32::INFINITY, &all).unwrap();
    /// assert!((d + 0.2).abs() < 1e-6, "{d}");
    /// let d = scene.signed_distance(Point3::new(0.4, 0.4, -0.3), f32::INFINITY, &all).unwrap();
    /// assert!((d - 0.3).abs() < 1e-6, "{d}");
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn signed_distance(
        &self,
        point: impl Into<mint::Point3<f32>>,
        max_distance: f32,
        options: &SceneOptions<'_>,
    ) -> Option<f64> {
        let (p, limit) = distance_query(point, max_distance)?;
        let (_, _, nearest) = self.nearest(p, limit, options)?;
        let distance = nearest.distance_squared.sqrt();
        let inside = inside_by_stages(|accuracy| self.winding_number_at(&p, accuracy, options));
        Some(if inside { -distance } else { distance })
    }
}
