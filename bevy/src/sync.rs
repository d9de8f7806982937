//! The meshray scene kept in step with the world: one BVH per `Mesh` asset, built on the
//! async compute pool when the asset is added or changed, and one instance per `Mesh3d`
//! entity, placed by its `GlobalTransform`, moved when that changes and removed with the
//! entity (or its `Mesh3d`).
//!
//! A skinned entity (`SkinnedMesh`) is drawn where its joints put it, not where its own
//! transform does: Bevy's skinning shader takes each vertex to world space by the blend of
//! its joints' matrices (the joint's `GlobalTransform` times its inverse bind pose). Such an
//! entity gets a BVH of its own (a copy of its asset's), placed with the identity, and posed
//! with those matrices ([`meshray::Scene::pose_mesh`]) in every frame where one of them
//! changed. An entity with morph weights (`MeshMorphWeights`, its own or a `MorphWeights`
//! entity's) is posed the same way with them, before its skin as in Bevy's vertex shader
//! (placed by its own transform when it has no skin).

use bevy_asset::{AssetEvent, AssetId, Assets};
use bevy_ecs::prelude::*;
use bevy_mesh::morph::{MeshMorphWeights, MorphWeights};
use bevy_mesh::skinning::{SkinnedMesh, SkinnedMeshInverseBindposes};
use bevy_mesh::{Indices, Mesh, Mesh3d, PrimitiveTopology, VertexAttributeValues};
use bevy_platform::collections::{HashMap, HashSet};
use bevy_tasks::{AsyncComputeTaskPool, Task, TaskPool, block_on, poll_once};
use bevy_transform::components::GlobalTransform;
use meshray::pose::{Pose, Rig};
use meshray::query::InstanceId;
use meshray::{Bvh, Scene};
use std::sync::Arc;

/// The meshray scene behind the picking backend, and which entity each instance is.
/// Read it to cast rays of your own ([`scene`](MeshrayScene::scene),
/// [`entity`](MeshrayScene::entity)).
#[derive(Resource, Default)]
pub struct MeshrayScene {
    scene: Scene,
    /// Each entity's instance, and its mesh asset.
    instances: HashMap<Entity, (InstanceId, AssetId<Mesh>)>,
    /// Each instance's entity, by id.
    entities: Vec<Option<Entity>>,
    /// The BVH of each mesh asset meshray can use.
    bvhs: HashMap<AssetId<Mesh>, Arc<Bvh>>,
    /// Builds under way on the async compute pool (a newer one replaces, and so cancels, an
    /// older one for the same asset).
    building: HashMap<AssetId<Mesh>, Task<Option<Bvh>>>,
    /// Entities whose mesh has no BVH yet (being built, or not loaded).
    waiting: HashSet<Entity>,
    /// Each mesh asset's rig (its joints and weights, its morph targets) and how many
    /// morph targets it has, made on its first posed entity's first pose; `None` for a mesh
    /// with neither joint attributes nor morph targets.
    rigs: HashMap<AssetId<Mesh>, Option<(Arc<Rig>, usize)>>,
    /// Each posed entity's last pose.
    poses: HashMap<Entity, LastPose>,
}

/// What an entity was posed with: its joint matrices (none without a skin) and its morph
/// weights (one per morph target).
#[derive(Default)]
struct LastPose {
    joints: Vec<nalgebra::Matrix4<f32>>,
    weights: Vec<f32>,
}

impl MeshrayScene {
    /// The scene: one instance per pickable `Mesh3d` entity whose BVH is built.
    pub fn scene(&self) -> &Scene {
        &self.scene
    }

    /// The entity an instance stands for.
    pub fn entity(&self, instance: InstanceId) -> Option<Entity> {
        self.entities.get(instance as usize).copied().flatten()
    }

    /// The instance standing for an entity, once its mesh's BVH is built.
    pub fn instance(&self, entity: Entity) -> Option<InstanceId> {
        self.instances.get(&entity).map(|&(id, _)| id)
    }

    /// Whether `entity` is posed by its joints or morph weights.
    pub(crate) fn is_posed(&self, entity: Entity) -> bool {
        self.poses.contains_key(&entity)
    }

    /// How many mesh BVHs are still being built.
    pub fn builds_in_progress(&self) -> usize {
        self.building.len()
    }

    /// The BVH built for a mesh asset, if any.
    pub fn bvh(&self, mesh: impl Into<AssetId<Mesh>>) -> Option<&Arc<Bvh>> {
        self.bvhs.get(&mesh.into())
    }

    /// Places `entity` (its mesh asset and world transform), or puts it in the waiting list
    /// while its mesh has no BVH. A skinned entity is placed with the identity (its pose
    /// carries it to world space); its first pose ([`pose_entities`]) gives it a BVH of its
    /// own (`Scene::pose_mesh` copies a shared one).
    fn place(
        &mut self,
        entity: Entity,
        mesh: AssetId<Mesh>,
        transform: &GlobalTransform,
        skinned: bool,
    ) {
        let Some(bvh) = self.bvhs.get(&mesh).cloned() else {
            self.take_out(entity);
            self.waiting.insert(entity);
            return;
        };
        self.waiting.remove(&entity);
        let matrix = if skinned {
            mint::ColumnMatrix4::from(bevy_math::Mat4::IDENTITY.to_cols_array())
        } else {
            mint::ColumnMatrix4::from(transform.to_matrix().to_cols_array())
        };
        let placed = match self.instances.get(&entity).copied() {
            Some((id, old)) => {
                let moved = self.scene.set_transform(id, matrix);
                let swapped = if old == mesh {
                    Ok(())
                } else {
                    self.poses.remove(&entity);
                    self.scene.set_mesh(id, bvh)
                };
                moved.and(swapped).map(|()| id)
            }
            None => {
                self.poses.remove(&entity);
                self.scene.add(bvh, matrix)
            }
        };
        match placed {
            Ok(id) => {
                self.instances.insert(entity, (id, mesh));
                if self.entities.len() <= id as usize {
                    self.entities.resize(id as usize + 1, None);
                }
                self.entities[id as usize] = Some(entity);
            }
            // A transform meshray refuses (singular, say a zero scale, or beyond the range
            // where f32 stays exact): not pickable until it changes.
            Err(_) => self.take_out(entity),
        }
    }

    /// Removes `entity`'s instance, if it has one.
    fn take_out(&mut self, entity: Entity) {
        self.poses.remove(&entity);
        if let Some((id, _)) = self.instances.remove(&entity) {
            // The id came from this scene, so removing it cannot fail.
            let _ = self.scene.remove(id);
            self.entities[id as usize] = None;
        }
    }
}

/// A mesh's vertex positions, index triples and vertex normals (when it has one per vertex).
type Triangles = (Vec<[f32; 3]>, Vec<[u32; 3]>, Option<Vec<[f32; 3]>>);

/// `Mesh3d` entities placed anew this frame (a new mesh, moved, or newly skinned).
type Placed<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        &'static Mesh3d,
        &'static GlobalTransform,
        Has<SkinnedMesh>,
    ),
    Or<(
        Changed<Mesh3d>,
        Changed<GlobalTransform>,
        Added<SkinnedMesh>,
    )>,
>;

/// A mesh asset's triangles as meshray takes them: positions and index triples. `None` for a
/// mesh meshray cannot pick: not a triangle list, no `Float32x3` positions, data only in the
/// render world.
fn triangles(mesh: &Mesh) -> Option<Triangles> {
    if mesh.primitive_topology() != PrimitiveTopology::TriangleList {
        return None;
    }
    let Ok(VertexAttributeValues::Float32x3(positions)) =
        mesh.try_attribute(Mesh::ATTRIBUTE_POSITION)
    else {
        return None;
    };
    let indices: Vec<u32> = match mesh.try_indices_option().ok()? {
        Some(Indices::U16(i)) => i.iter().map(|&i| u32::from(i)).collect(),
        Some(Indices::U32(i)) => i.clone(),
        None => (0..positions.len() as u32).collect(),
    };
    let triangles = indices
        .chunks_exact(3)
        .map(|t| [t[0], t[1], t[2]])
        .collect();
    let normals = match mesh.try_attribute(Mesh::ATTRIBUTE_NORMAL) {
        Ok(VertexAttributeValues::Float32x3(n)) if n.len() == positions.len() => Some(n.clone()),
        _ => None,
    };
    Some((positions.clone(), triangles, normals))
}

/// Builds a mesh's BVH, with its vertex normals as corner normals (so hits carry the
/// interpolated normal, as Bevy's backend reports); `None` when meshray refuses the mesh
/// (empty, indices out of range, NaN coordinates...), which then stays unpickable.
fn build((positions, triangles, normals): Triangles) -> Option<Bvh> {
    let positions: Vec<mint::Point3<f32>> = positions.into_iter().map(Into::into).collect();
    let mesh = meshray::Mesh::from_buffers(positions, triangles.clone()).ok()?;
    let mesh = match normals {
        Some(normals) => mesh.with_corner_normals(normals, triangles).ok()?,
        None => mesh,
    };
    Some(Bvh::build(mesh))
}

/// The BVH of a mesh whose vertices moved but whose triangles did not (a deformed or
/// skinned mesh): `old` refitted in O(n) instead of built anew; `None` as for [`build`].
fn refit(old: &Bvh, positions: Vec<[f32; 3]>) -> Option<Bvh> {
    let positions: Vec<_> = positions.into_iter().map(nalgebra::Point3::from).collect();
    let mut bvh = old.clone();
    bvh.refit(&positions).ok().map(|()| bvh)
}

/// Starts a BVH build for each mesh asset added or changed; forgets removed ones.
pub(crate) fn start_builds(
    mut state: ResMut<MeshrayScene>,
    mut events: MessageReader<AssetEvent<Mesh>>,
    meshes: Res<Assets<Mesh>>,
) {
    for event in events.read() {
        match *event {
            AssetEvent::Added { id } | AssetEvent::Modified { id } => {
                let Some(data) = meshes.get(id).and_then(triangles) else {
                    forget(&mut state, id);
                    continue;
                };
                // Same triangles as the BVH it has: only the vertices moved, so refit it
                // (a mesh with normals is built anew: they move with the vertices).
                let same = state.bvhs.get(&id).filter(|old| {
                    data.2.is_none()
                        && old.mesh().triangles() == data.1
                        && old.mesh().positions().len() == data.0.len()
                });
                // A bare App without `TaskPoolPlugin` gets a default pool.
                let pool = AsyncComputeTaskPool::get_or_init(TaskPool::default);
                let task = match same.cloned() {
                    Some(old) => pool.spawn(async move { refit(&old, data.0) }),
                    None => pool.spawn(async move { build(data) }),
                };
                state.building.insert(id, task);
            }
            AssetEvent::Removed { id } => forget(&mut state, id),
            AssetEvent::Unused { .. } | AssetEvent::LoadedWithDependencies { .. } => {}
        }
    }
}

/// Drops a mesh asset's BVH; its entities wait for a new one.
fn forget(state: &mut MeshrayScene, mesh: AssetId<Mesh>) {
    state.bvhs.remove(&mesh);
    state.rigs.remove(&mesh);
    state.building.remove(&mesh);
    let users: Vec<Entity> = state
        .instances
        .iter()
        .filter(|(_, (_, m))| *m == mesh)
        .map(|(&e, _)| e)
        .collect();
    for entity in users {
        state.take_out(entity);
        state.waiting.insert(entity);
    }
}

/// Takes the finished builds: their BVHs replace the old ones in every instance.
pub(crate) fn finish_builds(mut state: ResMut<MeshrayScene>) {
    let mut done = Vec::new();
    for (&id, task) in state.building.iter_mut() {
        if let Some(bvh) = block_on(poll_once(task)) {
            done.push((id, bvh));
        }
    }
    for (mesh, bvh) in done {
        state.building.remove(&mesh);
        let Some(bvh) = bvh else {
            forget(&mut state, mesh);
            continue;
        };
        let bvh = Arc::new(bvh);
        state.bvhs.insert(mesh, bvh.clone());
        state.rigs.remove(&mesh);
        let users: Vec<(Entity, InstanceId)> = state
            .instances
            .iter()
            .filter(|(_, (_, m))| *m == mesh)
            .map(|(&entity, &(id, _))| (entity, id))
            .collect();
        for (entity, id) in users {
            // A skinned entity is posed anew on the new mesh.
            state.poses.remove(&entity);
            // Same transform, same bounds check as before but for the new mesh: on a
            // refusal the entity waits for its next move.
            if state.scene.set_mesh(id, bvh.clone()).is_err() {
                state.take_out(entity);
            }
        }
    }
}

/// Adds, moves and removes instances as `Mesh3d` entities appear, move and go.
pub(crate) fn place_entities(
    mut state: ResMut<MeshrayScene>,
    changed: Placed,
    all: Query<(&Mesh3d, &GlobalTransform, Has<SkinnedMesh>)>,
    mut removed: RemovedComponents<Mesh3d>,
    mut unskinned: RemovedComponents<SkinnedMesh>,
    mut unmorphed: RemovedComponents<MeshMorphWeights>,
) {
    for entity in removed.read() {
        state.take_out(entity);
        state.waiting.remove(&entity);
    }
    // An entity that lost its skin or its morph weights is placed anew on the shared BVH
    // (by its own transform without a skin), and posed again if it still has either.
    for entity in unskinned.read().chain(unmorphed.read()) {
        if let Ok((mesh, transform, skinned)) = all.get(entity) {
            state.take_out(entity);
            state.place(entity, mesh.id(), transform, skinned);
        }
    }
    for (entity, mesh, transform, skinned) in &changed {
        state.place(entity, mesh.id(), transform, skinned);
    }
    if !state.waiting.is_empty() {
        let waiting: Vec<Entity> = state.waiting.iter().copied().collect();
        for entity in waiting {
            match all.get(entity) {
                Ok((mesh, transform, skinned)) if state.bvhs.contains_key(&mesh.id()) => {
                    state.place(entity, mesh.id(), transform, skinned);
                }
                Ok(_) => {}
                Err(_) => {
                    state.waiting.remove(&entity);
                }
            }
        }
    }
}

/// The rig of a mesh asset whose BVH is `bvh`, and its number of morph targets: its
/// `ATTRIBUTE_JOINT_INDEX` and `ATTRIBUTE_JOINT_WEIGHT` (one per vertex) and its morph
/// targets' position deltas; `None` with neither (or with counts that do not fit its
/// vertices).
fn rig(mesh: &Mesh, bvh: &Bvh) -> Option<(Rig, usize)> {
    let mut rig = Rig::new(bvh.mesh());
    let mut posable = false;
    if let (
        Ok(VertexAttributeValues::Uint16x4(joints)),
        Ok(VertexAttributeValues::Float32x4(weights)),
    ) = (
        mesh.try_attribute(Mesh::ATTRIBUTE_JOINT_INDEX),
        mesh.try_attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT),
    ) {
        rig = rig.with_skin(joints.clone(), weights.clone()).ok()?;
        posable = true;
    }
    let vertices = rig.vertex_count();
    let mut count = 0;
    // Bevy keeps them target after target, each one entry per vertex.
    if let Ok(targets) = mesh.try_morph_targets()
        && vertices > 0
        && !targets.is_empty()
        && targets.len() % vertices == 0
    {
        let deltas = targets
            .chunks_exact(vertices)
            .map(|t| t.iter().map(|a| a.position.to_array().into()).collect())
            .collect();
        rig = rig.with_morph_targets(deltas).ok()?;
        count = targets.len() / vertices;
        posable = true;
    }
    posable.then_some((rig, count))
}

/// An entity that may be posed: its mesh, skin and morph weights.
type Posable<'w, 's> = Query<
    'w,
    's,
    (
        Entity,
        &'static Mesh3d,
        Option<&'static SkinnedMesh>,
        Option<&'static MeshMorphWeights>,
    ),
    Or<(With<SkinnedMesh>, With<MeshMorphWeights>)>,
>;

/// Poses every skinned or morphing entity whose joints or morph weights changed since its
/// last pose, then brings the scene's top-level tree up to date (once per frame, here, so
/// the backend's queries neither wait nor allocate).
pub(crate) fn pose_entities(
    mut state: ResMut<MeshrayScene>,
    posable: Posable,
    transforms: Query<&GlobalTransform>,
    morph_weights: Query<&MorphWeights>,
    bindposes: Option<Res<Assets<SkinnedMeshInverseBindposes>>>,
    meshes: Res<Assets<Mesh>>,
) {
    let state = &mut *state;
    let mut now = LastPose::default();
    for (entity, mesh, skin, morph) in &posable {
        let Some(&(id, asset)) = state.instances.get(&entity) else {
            continue;
        };
        now.joints.clear();
        if let Some(skin) = skin {
            let Some(inverse) = bindposes
                .as_ref()
                .and_then(|b| b.get(&skin.inverse_bindposes))
            else {
                continue;
            };
            // As Bevy's renderer: each joint's GlobalTransform times its inverse bind pose
            // (a joint without a transform keeps the entity unposed this frame).
            let complete = skin
                .joints
                .iter()
                .zip(inverse.iter())
                .all(|(&joint, bind)| {
                    let Ok(transform) = transforms.get(joint) else {
                        return false;
                    };
                    let m = bevy_math::Mat4::from(transform.affine()) * *bind;
                    now.joints
                        .push(nalgebra::Matrix4::from_column_slice(&m.to_cols_array()));
                    true
                });
            if !complete {
                continue;
            }
        }
        let rig = match state.rigs.get(&asset) {
            Some(rig) => rig.clone(),
            None => {
                let made = match (meshes.get(mesh.id()), state.bvhs.get(&asset)) {
                    (Some(m), Some(bvh)) => rig(m, bvh).map(|(r, n)| (Arc::new(r), n)),
                    _ => None,
                };
                state.rigs.insert(asset, made.clone());
                made
            }
        };
        let Some((rig, targets)) = rig else { continue };
        // One weight per morph target, as the shader reads them (missing ones are zero).
        now.weights.clear();
        now.weights.extend_from_slice(match morph {
            Some(MeshMorphWeights::Value { weights }) => weights,
            Some(MeshMorphWeights::Reference(e)) => {
                morph_weights.get(*e).map_or(&[], |w| w.weights())
            }
            None => &[],
        });
        now.weights.resize(targets, 0.0);
        let unchanged = match state.poses.get(&entity) {
            Some(last) => last.joints == now.joints && last.weights == now.weights,
            // Never posed: the shared BVH is the bind pose, right for an unskinned entity
            // whose weights are all zero.
            None => skin.is_none() && now.weights.iter().all(|&w| w == 0.0),
        };
        if unchanged {
            continue;
        }
        let pose = Pose {
            joints: &now.joints,
            morph_weights: &now.weights,
        };
        // A pose meshray refuses (joints it cannot place the mesh with): the entity keeps
        // its last pose until the next change.
        if state.scene.pose_mesh(id, &rig, &pose).is_ok() {
            // The pose kept, the old one's buffers reused for the next entity.
            std::mem::swap(state.poses.entry(entity).or_default(), &mut now);
        }
    }
    state.scene.update();
}
