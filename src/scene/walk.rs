//! The generic walk of a scene's top level, instance by instance: both top-level trees
//! walked in turn, each leaf's instances that are still live and that the query's options
//! let it see handed to an [`InstanceVisitor`]. The nearest point, selections and sweeps of
//! a scene go through it; a ray takes the ray walk instead (`query.rs`).

use super::{Instance, InstanceId, Scene, SceneOptions};
use crate::bvh::facade::{Visitor, WIDTH, WideNode, walk};

/// What a scene query does at the top level's nodes and with the instances it reaches.
pub(super) trait InstanceVisitor {
    /// How children are ordered, as [`Visitor::Key`].
    type Key: Copy + Default + PartialOrd;
    /// Whether children are visited smallest key first, as [`Visitor::ORDERED`].
    const ORDERED: bool;
    /// The lanes of `node` to enter, a bit each, and their keys.
    fn node(&mut self, node: &WideNode) -> (u32, [Self::Key; WIDTH]);
    /// Whether a child that has waited with `key` can still matter.
    fn worth(&self, key: Self::Key) -> bool;
    /// Queries instance `id`; returns `true` to stop the walk.
    fn instance(&mut self, id: InstanceId, instance: &Instance) -> bool;
}

impl Scene {
    /// Walks both top-level trees with `visitor`, handing it each instance of the leaves it
    /// enters that is live and that `options` lets the query see, in leaf order.
    pub(super) fn walk_instances<V: InstanceVisitor>(
        &self,
        options: &SceneOptions<'_>,
        visitor: &mut V,
    ) {
        for tree in self.top().trees() {
            let mut leaves = Leaves {
                scene: self,
                order: &tree.order,
                options,
                visitor: &mut *visitor,
                stopped: false,
            };
            walk(&tree.nodes, &mut leaves);
            if leaves.stopped {
                return;
            }
        }
    }
}

/// An [`InstanceVisitor`] as the tree walk's [`Visitor`] of one top-level tree.
struct Leaves<'a, V> {
    scene: &'a Scene,
    order: &'a [u32],
    options: &'a SceneOptions<'a>,
    visitor: &'a mut V,
    stopped: bool,
}

impl<V: InstanceVisitor> Visitor for Leaves<'_, V> {
    type Key = V::Key;
    const ORDERED: bool = V::ORDERED;

    fn node(&mut self, _: u32, node: &WideNode) -> (u32, [V::Key; WIDTH]) {
        self.visitor.node(node)
    }

    fn worth(&self, key: V::Key) -> bool {
        self.visitor.worth(key)
    }

    fn leaf(&mut self, first: u32, count: u32, _: V::Key) -> bool {
        let ids = &self.order[first as usize..(first + count) as usize];
        for (id, instance) in self.options.seen_in(&self.scene.slots, ids) {
            if self.visitor.instance(id, instance) {
                self.stopped = true;
                return true;
            }
        }
        false
    }
}
