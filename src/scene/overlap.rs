//! Which triangles of a scene's instances intersect: each pair of instances whose world
//! boxes overlap is handed to the meshes' simultaneous walk ([`Bvh::meeting_pairs`]), the
//! second instance's triangles moved into the first's space, and each instance's own mesh to
//! its self-intersection walk.
//!
//! [`Bvh::meeting_pairs`]: crate::bvh::Bvh

use super::{Instance, InstanceId, Scene, SceneOptions, SceneTriangle};
use crate::transform::moved_box;
use nalgebra::Matrix4;

/// Two triangles, each named by its instance and its number there.
pub(crate) type TrianglePair = (SceneTriangle, SceneTriangle);

impl Scene {
    /// Every pair of a triangle of an instance of this scene and one of an instance of
    /// `other` placed by `to_self` (into this scene's world; `None`: as it is) that share a
    /// point, among the instances `options` sees in each; sorted. With `same` (`other` is
    /// this scene, `to_self` `None`): each pair once, the first instance's number lower or
    /// the same, and each instance's own mesh's self-intersections (pairs with a corner at
    /// the same position left out, as [`Bvh::self_intersections`] leaves them). With
    /// `first`, it stops at the first pair of instances that meet: some pairs, none only
    /// when none meet.
    ///
    /// [`Bvh::self_intersections`]: crate::query::Overlap::self_intersections
    pub(crate) fn meeting_pairs(
        &self,
        other: &Scene,
        to_self: Option<&Matrix4<f64>>,
        options: &SceneOptions<'_>,
        same: bool,
        first_only: bool,
    ) -> Vec<TrianglePair> {
        let seen = |scene: &Scene| -> Vec<(InstanceId, usize)> {
            (0..scene.slots.len())
                .filter(|&i| {
                    scene.slots[i]
                        .as_ref()
                        .is_some_and(|instance| options.sees(i as InstanceId, instance))
                })
                .map(|i| (i as InstanceId, i))
                .collect()
        };
        let (mine, theirs) = (seen(self), seen(other));
        // The other scene's world boxes in this one's world (rounded outwards).
        let boxes: Vec<([f32; 3], [f32; 3])> = theirs
            .iter()
            .map(|&(_, j)| {
                let b = other.bounds[j];
                let corners = (b.min.coords.into(), b.max.coords.into());
                to_self.map_or(corners, |m| moved_box(m, corners.0, corners.1))
            })
            .collect();
        let mut found = Vec::new();
        for &(a, i) in &mine {
            let first = self.slots[i]
                .as_ref()
                .expect("a seen slot holds an instance");
            let name = |instance, triangle| SceneTriangle { instance, triangle };
            if first_only && !found.is_empty() {
                break;
            }
            if same {
                found.extend(
                    first
                        .bvh
                        .meeting_pairs(&first.bvh, None, true, first_only)
                        .into_iter()
                        .map(|(p, q)| (name(a, p), name(a, q))),
                );
            }
            let (lo, hi) = (self.bounds[i].min, self.bounds[i].max);
            for (&(b, j), (blo, bhi)) in theirs.iter().zip(&boxes) {
                if (same && b <= a)
                    || (first_only && !found.is_empty())
                    || (0..3).any(|k| blo[k] > hi[k] || bhi[k] < lo[k])
                {
                    continue;
                }
                let second = other.slots[j]
                    .as_ref()
                    .expect("a seen slot holds an instance");
                let into_first = relative(first, second, to_self);
                let moved = (into_first != Matrix4::identity()).then_some(&into_first);
                found.extend(
                    first
                        .bvh
                        .meeting_pairs(&second.bvh, moved, false, first_only)
                        .into_iter()
                        .map(|(p, q)| (name(a, p), name(b, q))),
                );
            }
        }
        found.sort_unstable();
        found
    }
}

/// The map from `second`'s mesh space into `first`'s: into `second`'s world, into the first
/// scene's world (`to_self`), into `first`'s mesh space, in `f64`.
fn relative(first: &Instance, second: &Instance, to_self: Option<&Matrix4<f64>>) -> Matrix4<f64> {
    let world = to_self.map_or(second.to_world, |m| m * second.to_world);
    first.to_object * world
}
