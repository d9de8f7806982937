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
    /// [`PointQuery::winding_number`] for a scene: the sum of its instances'.
    pub(crate) fn winding_number(
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

    /// [`PointQuery::contains`] for a scene.
    pub(crate) fn contains(
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

    /// [`PointQuery::signed_distance`] for a scene.
    pub(crate) fn signed_distance(
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
