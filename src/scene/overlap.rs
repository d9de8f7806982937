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
        // The instances the options see, each with its number.
        fn seen<'s>(
            scene: &'s Scene,
            options: &SceneOptions<'_>,
        ) -> Vec<(InstanceId, &'s Instance)> {
            let numbered = scene.slots.iter().enumerate();
            numbered
                .filter_map(|(i, slot)| {
                    let instance = slot.as_ref()?;
                    options
                        .sees(i as InstanceId, instance)
                        .then_some((i as InstanceId, instance))
                })
                .collect()
        }
        let (mine, theirs) = (seen(self, options), seen(other, options));
        // The other scene's world boxes in this one's world (rounded outwards).
        let boxes: Vec<([f32; 3], [f32; 3])> = theirs
            .iter()
            .map(|&(b, _)| {
                let b = other.bounds[b as usize];
                let corners = (b.min.coords.into(), b.max.coords.into());
                to_self.map_or(corners, |m| moved_box(m, corners.0, corners.1))
            })
            .collect();
        // Pairs of two instances' triangle numbers, named by instance.
        let named = |a: InstanceId, b: InstanceId, pairs: Vec<(u32, u32)>| {
            let name = |instance, triangle| SceneTriangle { instance, triangle };
            pairs
                .into_iter()
                .map(move |(p, q)| (name(a, p), name(b, q)))
        };
        let mut found = Vec::new();
        for &(a, first) in &mine {
            if same {
                let own = first.bvh.meeting_pairs(&first.bvh, None, true, first_only);
                found.extend(named(a, a, own));
            }
            let (lo, hi) = (self.bounds[a as usize].min, self.bounds[a as usize].max);
            for (&(b, second), (blo, bhi)) in theirs.iter().zip(&boxes) {
                if first_only && !found.is_empty() {
                    break;
                }
                if (same && b <= a) || (0..3).any(|k| blo[k] > hi[k] || bhi[k] < lo[k]) {
                    continue;
                }
                let into_first = relative(first, second, to_self);
                let moved = (into_first != Matrix4::identity()).then_some(&into_first);
                let pairs = first
                    .bvh
                    .meeting_pairs(&second.bvh, moved, false, first_only);
                found.extend(named(a, b, pairs));
            }
            if first_only && !found.is_empty() {
                break;
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
