//! The top-level tree: a wide tree over the instances' world boxes, one instance per leaf, and
//! how it follows the scene's edits without a rebuild per edit.
//!
//! Edits only mark the tree stale; the next query (or [`Scene::update`](super::Scene::update))
//! brings it up to date once, however many edits came before:
//! - moves, mesh changes and removals **refit** it: the edits name the leaves they touched
//!   ([`TopLevel::touch`], [`TopLevel::forget`]), and only the nodes on those leaves' paths
//!   to the root are recomputed, bottom-up (O(k log n) for k edits; all nodes once k passes
//!   an eighth of them); the grouping is kept, and a removed instance's leaf entry is
//!   cleared at once and keeps an empty box, which no query enters;
//! - instances added since the last build (under new ids or freed ones) go into a second,
//!   small tree of their own, rebuilt when its set of instances changed and refitted
//!   otherwise, so adding one instance to a big scene does not rebuild the big tree;
//! - the whole is **rebuilt** when the refit tree's cost (the sum of its boxes' areas, which
//!   is what the surface area heuristic charges a random ray) has grown by more than half
//!   since its build, when over half its leaves are removed instances, or when the added
//!   instances outnumber an eighth of it (and 64).
//!
//! Measured with `cargo bench --bench scene` (100,000 instances): see docs/benchmarks.md,
//! "Scenes".

use super::{Instance, InstanceId};
use crate::bvh::facade::WideNode;
#[cfg(any(test, debug_assertions))]
use crate::bvh::facade::tree::CheckedLeaves;
use crate::bvh::facade::tree::{self, Leaves, Links};
use crate::{Aabb, BuildOptions};

/// Rebuild once the refit tree's cost exceeds its cost after the build by this factor.
const REBUILD_COST: f64 = 1.5;

/// The leaf entry of a removed instance, and "none" in the index maps.
pub(super) const REMOVED: u32 = u32::MAX;

/// A wide tree whose leaves name instances (`order[first..first + count]`, [`REMOVED`] for
/// one removed since the build), with what a partial refit needs: each node's parent and
/// the node holding each leaf entry.
#[derive(Clone, Debug, Default)]
pub(super) struct Tree {
    pub nodes: Vec<WideNode>,
    pub order: Vec<u32>,
    /// The depth of the deepest leaf lane (which stack the walk takes); refits keep it.
    pub depth: usize,
    links: Links,
    /// The tree's cost ([`tree::cost`]): now, and just after the build.
    cost: f64,
    built_cost: f64,
    /// Leaf entries not [`REMOVED`].
    live: usize,
}

/// A tree's leaf entries as the tree upkeep sees them: instance ids, boxed by `bounds`.
struct Instances<'a> {
    order: &'a [u32],
    bounds: &'a [Aabb],
}

impl Leaves for Instances<'_> {
    fn leaf_box(&self, first: u32, count: u32) -> Aabb {
        self.order[first as usize..(first + count) as usize]
            .iter()
            .filter(|&&id| id != REMOVED)
            .fold(Aabb::EMPTY, |b, &id| b.union(&self.bounds[id as usize]))
    }
}

/// [`Instances`] claimed as the shape check meets them, for [`TopLevel::check`].
#[cfg(any(test, debug_assertions))]
struct ClaimedInstances<'a> {
    instances: Instances<'a>,
    slots: &'a [Option<Instance>],
    /// Whether the tree may name removed instances ([`REMOVED`] entries): `main` may.
    removed_allowed: bool,
    claimed: &'a mut [bool],
}

#[cfg(any(test, debug_assertions))]
impl Leaves for ClaimedInstances<'_> {
    fn leaf_box(&self, first: u32, count: u32) -> Aabb {
        self.instances.leaf_box(first, count)
    }
}

#[cfg(any(test, debug_assertions))]
impl CheckedLeaves for ClaimedInstances<'_> {
    fn check_leaf(&mut self, (i, k): (usize, usize), first: u32, count: u32) -> Result<(), String> {
        let order = self.instances.order;
        let Some(ids) = order.get(first as usize..(first as usize).saturating_add(count as usize))
        else {
            return Err(format!(
                "leaf {i}.{k} names entries {first}+{count} of {}",
                order.len()
            ));
        };
        for &id in ids {
            if id == REMOVED && self.removed_allowed {
                continue;
            }
            match self.slots.get(id as usize) {
                Some(Some(_)) if !std::mem::replace(&mut self.claimed[id as usize], true) => {}
                Some(Some(_)) => return Err(format!("instance {id} is in two leaves")),
                _ => {
                    return Err(format!(
                        "leaf {i}.{k} names instance {id}, which is not live"
                    ));
                }
            }
        }
        Ok(())
    }
}

impl Tree {
    /// A tree over the instances `ids` (live ones), boxes from `bounds`.
    fn build(ids: Vec<u32>, bounds: &[Aabb]) -> Tree {
        if ids.is_empty() {
            return Tree::default();
        }
        let boxes: Vec<Aabb> = ids.iter().map(|&id| bounds[id as usize]).collect();
        let options = BuildOptions {
            max_leaf_size: 1,
            ..Default::default()
        };
        let (nodes, order, depth) = tree::build_over_boxes(&boxes, &options);
        let links = Links::new(&nodes, order.len());
        let cost = tree::cost(&nodes);
        Tree {
            nodes,
            order: order.iter().map(|&i| ids[i as usize]).collect(),
            depth,
            links,
            cost,
            built_cost: cost,
            live: ids.len(),
        }
    }

    /// Recomputes every box, bottom-up.
    fn refit_all(&mut self, bounds: &[Aabb]) {
        let leaves = Instances {
            order: &self.order,
            bounds,
        };
        tree::refit_all(&mut self.nodes, &leaves);
        // Summed afresh, so the running sum's rounding never piles up.
        self.cost = tree::cost(&self.nodes);
    }

    /// Recomputes the nodes in `dirty` and all their ancestors, children first. `dirty` is
    /// scratch space: it ends up holding that whole set.
    fn refit_paths(&mut self, dirty: &mut Vec<u32>, bounds: &[Aabb]) {
        let leaves = Instances {
            order: &self.order,
            bounds,
        };
        self.cost += tree::refit_paths(&mut self.nodes, &self.links.parent, dirty, &leaves);
    }

    /// Whether the refit tree has grown worse enough, or emptier enough, to rebuild.
    fn spoiled(&self) -> bool {
        self.cost > REBUILD_COST * self.built_cost || 2 * self.live < self.order.len()
    }
}

/// The scene's top-level trees: `main` over the instances that were live at its build,
/// `added` over the live instances it does not hold (added since, possibly under a freed id),
/// and the edits since the last update.
#[derive(Clone, Debug, Default)]
pub(super) struct TopLevel {
    pub main: Tree,
    pub added: Tree,
    /// Where each id is in `main.order` ([`REMOVED`]: not in `main`; ids beyond the end
    /// neither).
    in_main: Vec<u32>,
    /// `added`'s instances, ascending.
    added_ids: Vec<u32>,
    /// Nodes of `main` holding leaves edited since the last update (scratch for the refit).
    dirty: Vec<u32>,
    /// Whether an instance of `added` was removed since (its id may name another one now).
    added_changed: bool,
}

impl TopLevel {
    /// Both trees over every live instance, from scratch.
    pub fn build(slots: &[Option<Instance>], bounds: &[Aabb]) -> TopLevel {
        let live: Vec<u32> = (0..slots.len() as u32)
            .filter(|&id| slots[id as usize].is_some())
            .collect();
        let main = Tree::build(live, bounds);
        let mut in_main = vec![REMOVED; slots.len()];
        for (at, &id) in main.order.iter().enumerate() {
            in_main[id as usize] = at as u32;
        }
        TopLevel {
            main,
            in_main,
            ..TopLevel::default()
        }
    }

    /// Notes that instance `id`'s box changed (moved, another mesh, refitted).
    pub fn touch(&mut self, id: InstanceId) {
        match self.in_main.get(id as usize) {
            Some(&at) if at != REMOVED => self.dirty.push(self.main.links.holder[at as usize]),
            // In `added`: refitted whole at the update.
            _ => {}
        }
    }

    /// Clears instance `id`'s leaf entry (it was removed; a later instance may get its id).
    pub fn forget(&mut self, id: InstanceId) {
        match self.in_main.get_mut(id as usize) {
            Some(at) if *at != REMOVED => {
                self.main.order[*at as usize] = REMOVED;
                self.dirty.push(self.main.links.holder[*at as usize]);
                self.main.live -= 1;
                *at = REMOVED;
            }
            _ => self.added_changed = true,
        }
    }

    /// `stale` (the trees before the edits, if any) brought up to date with the scene:
    /// refitted or rebuilt as the module's rules say.
    pub fn update(
        stale: Option<TopLevel>,
        slots: &[Option<Instance>],
        bounds: &[Aabb],
    ) -> TopLevel {
        let Some(mut top) = stale else {
            return TopLevel::build(slots, bounds);
        };
        // Only ids outside `main` are looked up in `slots` (a scan of 4 bytes per id).
        let outside = |id: usize| top.in_main.get(id).is_none_or(|&at| at == REMOVED);
        let added: Vec<u32> = (0..slots.len())
            .filter(|&id| outside(id) && slots[id].is_some())
            .map(|id| id as u32)
            .collect();
        let size = top.main.order.len();
        if size == 0 || added.len() > size / 8 + 64 {
            return TopLevel::build(slots, bounds);
        }
        let mut dirty = std::mem::take(&mut top.dirty);
        if dirty.len() > top.main.nodes.len() / 8 {
            top.main.refit_all(bounds);
        } else {
            top.main.refit_paths(&mut dirty, bounds);
        }
        dirty.clear();
        top.dirty = dirty;
        if top.main.spoiled() {
            return TopLevel::build(slots, bounds);
        }
        if added == top.added_ids && !top.added_changed {
            top.added.refit_all(bounds);
            if top.added.spoiled() {
                top.added = Tree::build(added.clone(), bounds);
            }
        } else {
            top.added = Tree::build(added.clone(), bounds);
        }
        top.added_ids = added;
        top.added_changed = false;
        top
    }

    /// The trees a query walks.
    pub fn trees(&self) -> [&Tree; 2] {
        [&self.main, &self.added]
    }

    /// Checks the trees once up to date ([`update`](TopLevel::update)) against the scene's
    /// `slots` and `bounds`: each has the shape of every wide tree
    /// ([`tree::check_shape`]: one instance per leaf lane, boxes tight), every live
    /// instance is in exactly one of them, and only `main` names removed ones. The first
    /// broken invariant's reason. (Run after every update in debug builds, and by the tests.)
    #[cfg(any(test, debug_assertions))]
    pub fn check(&self, slots: &[Option<Instance>], bounds: &[Aabb]) -> Result<(), String> {
        let mut claimed = vec![false; slots.len()];
        for (name, tree, removed_allowed) in
            [("main", &self.main, true), ("added", &self.added, false)]
        {
            if tree.nodes.is_empty() {
                if tree.order.is_empty() {
                    continue;
                }
                return Err(format!("{name}: {} entries and no nodes", tree.order.len()));
            }
            let mut leaves = ClaimedInstances {
                instances: Instances {
                    order: &tree.order,
                    bounds,
                },
                slots,
                removed_allowed,
                claimed: &mut claimed,
            };
            tree::check_shape(&tree.nodes, &mut leaves, 1).map_err(|e| format!("{name}: {e}"))?;
        }
        match (0..slots.len()).find(|&id| slots[id].is_some() && !claimed[id]) {
            Some(id) => Err(format!("instance {id} is in neither tree")),
            None => Ok(()),
        }
    }
}
