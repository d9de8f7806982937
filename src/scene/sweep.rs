//! A scene's sweeps: the top-level trees walked as a mesh's are (each instance's world box
//! grown by the moving shape's reach), and each instance reached swept in world space, its
//! triangles and boxes moved by its transform, so any affine placement (a non-uniform scale
//! or a shear, under which a sphere would not stay a sphere in the mesh's own space) is
//! answered exactly. An instance placed by a translation alone (its linear part exactly
//! the identity) is swept in its own space instead, the shape moved back by the
//! translation: the same sphere or capsule there, and the mesh's own walk (its vector slab
//! tests and prefilters), where the moved boxes take the generic one.

use super::{Instance, InstanceId, Scene, SceneOptions};
use crate::bvh::facade::{Placement, Reach, Visitor, WIDTH, WideNode, walk};
use crate::sweep::{Contact, Moving};
use nalgebra::{Matrix3, Vector3};

impl Scene {
    /// The first contact of `m` with a triangle of an instance `options` sees, at
    /// `τ ≤ limit`: the instance, the triangle and where; ties to the lowest instance, then
    /// triangle.
    pub(crate) fn first_contact(
        &self,
        m: &Moving,
        limit: f64,
        options: &SceneOptions<'_>,
    ) -> Option<(InstanceId, u32, Contact)> {
        let mut visitor = SweepInstance {
            slots: &self.slots,
            order: &[],
            m,
            reach: Reach::of(m),
            limit,
            options,
            best: None,
        };
        for tree in self.top().trees() {
            visitor.order = &tree.order;
            walk(&tree.nodes, &mut visitor);
        }
        visitor.best
    }
}

/// The sweep's walk over the top level: nearest instance box first.
struct SweepInstance<'a> {
    slots: &'a [Option<Instance>],
    order: &'a [u32],
    m: &'a Moving,
    reach: Reach,
    /// The best contact's `τ` so far (the caller's limit at first).
    limit: f64,
    options: &'a SceneOptions<'a>,
    best: Option<(InstanceId, u32, Contact)>,
}

impl Visitor for SweepInstance<'_> {
    type Key = f64;
    const ORDERED: bool = true;

    fn node(&mut self, _: u32, node: &WideNode) -> (u32, [f64; WIDTH]) {
        self.reach.lanes(self.m, node, None, self.limit)
    }

    fn worth(&self, tau: f64) -> bool {
        tau <= self.limit
    }

    fn leaf(&mut self, first: u32, count: u32, _: f64) -> bool {
        let ids = &self.order[first as usize..(first + count) as usize];
        for (id, instance) in self.options.seen_in(self.slots, ids) {
            let culling = self.options.query.culling;
            let linear = instance.to_world.fixed_view::<3, 3>(0, 0);
            let found = if linear == Matrix3::identity() {
                // A translation alone: the shape moved back into the mesh's space, the
                // contact moved out again.
                let shift: Vector3<f64> = instance.to_world.fixed_view::<3, 1>(0, 3).into();
                let own = Moving {
                    start: self.m.start - shift,
                    ..*self.m
                };
                instance
                    .bvh
                    .first_contact(&own, self.limit, culling, Placement::Own)
                    .map(|(triangle, c)| {
                        let moved = Contact {
                            point: c.point + shift,
                            axis_point: c.axis_point + shift,
                            ..c
                        };
                        (triangle, moved)
                    })
            } else {
                let placement = Placement::Moved {
                    to_world: &instance.to_world,
                    mirrored: linear.determinant() < 0.0,
                };
                instance
                    .bvh
                    .first_contact(self.m, self.limit, culling, placement)
            };
            let Some((triangle, contact)) = found else {
                continue;
            };
            let better = match &self.best {
                None => true,
                Some((bid, bt, bc)) => (contact.tau, id, triangle) < (bc.tau, *bid, *bt),
            };
            if better {
                self.limit = contact.tau;
                self.best = Some((id, triangle, contact));
            }
        }
        false
    }
}
