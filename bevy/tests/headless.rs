//! The backend in a headless app (no window, no GPU): a camera and `Mesh3d` entities with
//! rotations, non-uniform scales and mirrors; pointer rays put in `bevy_picking`'s `RayMap`
//! as its pointer systems would; the `PointerHits` sent compared with
//! - the library: a `meshray::Scene` of the same meshes and transforms, queried directly;
//! - Bevy's own `MeshPickingPlugin`, run on an identical app: the same entities, in the same
//!   order, at the same depths.
//!
//! Then the world changes (entities move, one is despawned, one spawned, a mesh asset is
//! edited) and the hits follow.

use bevy_app::App;
use bevy_asset::{Assets, Handle, RenderAssetUsages};
use bevy_camera::primitives::Aabb;
use bevy_camera::visibility::{RenderLayers, Visibility};
use bevy_ecs::prelude::*;
use bevy_math::{Dir3, Quat, Vec3};
use bevy_mesh::{Indices, Mesh, Mesh3d, PrimitiveTopology};
use bevy_picking::Pickable;
use bevy_picking::backend::HitData;
use bevy_picking::mesh_picking::ray_cast::RayCastBackfaces;
use bevy_shape::Ray3d;
use bevy_transform::components::{GlobalTransform, Transform};
use meshray::prelude::*;
use meshray_bevy::{MeshrayHit, MeshrayScene};

mod common;
use common::{Rng, frame, headless_app, settle};

/// The asset scene as a Bevy mesh.
fn asset_mesh() -> Mesh {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/scene.obj");
    let mesh = meshray::Mesh::load(path).unwrap();
    let positions: Vec<[f32; 3]> = mesh.positions().iter().map(|p| [p.x, p.y, p.z]).collect();
    let indices: Vec<u32> = mesh.triangles().iter().flatten().copied().collect();
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
    .with_inserted_indices(Indices::U32(indices))
}

/// A box from (0, 0, 0) to (1, 1, 1), faces wound counter-clockwise from outside.
fn cube() -> Mesh {
    let p: Vec<[f32; 3]> = (0..8)
        .map(|i| [(i & 1) as f32, (i >> 1 & 1) as f32, (i >> 2 & 1) as f32])
        .collect();
    let quads = [
        [0, 2, 3, 1],
        [4, 5, 7, 6],
        [0, 1, 5, 4],
        [2, 6, 7, 3],
        [0, 4, 6, 2],
        [1, 3, 7, 5],
    ];
    let indices = quads
        .iter()
        .flat_map(|q| [q[0], q[1], q[2], q[0], q[2], q[3]])
        .collect();
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, p)
    .with_inserted_indices(Indices::U32(indices))
}

/// Bevy's backend needs each entity's local box (the renderer computes it in a full app).
fn local_box(mesh: &Mesh) -> Aabb {
    let Some(bevy_mesh::VertexAttributeValues::Float32x3(p)) =
        mesh.attribute(Mesh::ATTRIBUTE_POSITION)
    else {
        unreachable!("the test's meshes have positions")
    };
    let (lo, hi) = p
        .iter()
        .fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(lo, hi), q| {
            (lo.min(Vec3::from(*q)), hi.max(Vec3::from(*q)))
        });
    Aabb::from_min_max(lo, hi)
}

/// What an entity is in the test scene.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Plain,
    Blocking,
    SeeThrough,
    TwoSided,
    OtherLayer,
    Ignored,
}

/// A test app: the app, its camera, its entities and what each is, and the two meshes.
type TestApp = (App, Entity, Vec<(Entity, Kind)>, [Handle<Mesh>; 2]);

/// An app with the asset and transform plugins, a camera at the origin, and the entities;
/// `meshray` chooses the backend.
fn app(meshray: bool, seed: u64) -> TestApp {
    let (mut app, camera) = headless_app(meshray);
    let world = app.world_mut();
    let (scene_mesh, cube_mesh) = (asset_mesh(), cube());
    let boxes = [local_box(&scene_mesh), local_box(&cube_mesh)];
    let mut meshes = world.resource_mut::<Assets<Mesh>>();
    let handles = [meshes.add(scene_mesh), meshes.add(cube_mesh)];
    let mut rng = Rng(seed);
    let mut entities = Vec::new();
    for k in 0..40 {
        let which = k % 3 / 2; // two scenes for each cube
        let scale = if which == 0 { 0.12 } else { 0.8 };
        let mut size = Vec3::new(
            rng.range(0.6, 1.6),
            rng.range(0.6, 1.6),
            rng.range(0.6, 1.6),
        ) * scale;
        if k % 7 == 3 {
            size.x = -size.x; // a mirror
        }
        let axis = Vec3::new(
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0),
            rng.range(-1.0, 1.0) + 2.0,
        );
        let transform = Transform {
            translation: Vec3::new(
                rng.range(-4.0, 4.0),
                rng.range(-3.0, 3.0),
                rng.range(-14.0, -4.0),
            ),
            rotation: Quat::from_axis_angle(
                axis.normalize(),
                rng.range(0.0, std::f32::consts::TAU),
            ),
            scale: size,
        };
        let kind = match k % 10 {
            1 => Kind::SeeThrough,
            2 => Kind::Blocking,
            4 => Kind::TwoSided,
            6 => Kind::OtherLayer,
            8 => Kind::Ignored,
            _ => Kind::Plain,
        };
        let mut entity = world.spawn((
            Mesh3d(handles[which].clone()),
            transform,
            GlobalTransform::from(transform),
            boxes[which],
            // Bevy's backend walks entities with visibility components (a renderer adds them).
            Visibility::default(),
        ));
        match kind {
            Kind::SeeThrough => {
                entity.insert(Pickable {
                    should_block_lower: false,
                    is_hoverable: true,
                });
            }
            Kind::TwoSided => {
                entity.insert(RayCastBackfaces);
            }
            Kind::OtherLayer => {
                entity.insert(RenderLayers::layer(1));
            }
            Kind::Ignored => {
                entity.insert(Pickable::IGNORE);
            }
            Kind::Blocking => {
                entity.insert(Pickable::default());
            }
            Kind::Plain => {}
        }
        entities.push((entity.id(), kind));
    }
    // A few frames: the BVHs are built on the async compute pool, then placed.
    settle(&mut app, entities.len());
    (app, camera, entities, handles)
}

/// Casts one pointer ray in `app` and returns the hits it sent.
fn pick(app: &mut App, camera: Entity, ray: Ray3d) -> Vec<(Entity, HitData)> {
    frame(app, camera, Some(ray))
}

/// A ray from the camera through a random point of the scene's region.
fn random_ray(rng: &mut Rng) -> Ray3d {
    let target = Vec3::new(
        rng.range(-4.5, 4.5),
        rng.range(-3.5, 3.5),
        rng.range(-14.0, -4.0),
    );
    Ray3d::new(Vec3::ZERO, Dir3::new(target).unwrap())
}

/// The entities the library says the ray hits, under the backend's rules: each entity's
/// nearest hit, back faces culled unless two-sided, in order, up to the first with a
/// blocking `Pickable`.
fn library(
    app: &App,
    entities: &[(Entity, Kind)],
    handles: &[Handle<Mesh>; 2],
    ray: Ray3d,
) -> Vec<(Entity, f32, u32)> {
    let world = app.world();
    let state = world.resource::<MeshrayScene>();
    let mut hits = Vec::new();
    let r = meshray::Ray::new(ray.origin.to_array(), ray.direction.to_array());
    for &(entity, kind) in entities {
        if matches!(kind, Kind::OtherLayer | Kind::Ignored) {
            continue;
        }
        let mesh = &world.get::<Mesh3d>(entity).unwrap().0;
        let which = usize::from(mesh == &handles[1]);
        let bvh = state.bvh(&handles[which]).unwrap().clone();
        let mut scene = meshray::Scene::new();
        let m = world
            .get::<GlobalTransform>(entity)
            .unwrap()
            .to_matrix()
            .to_cols_array();
        scene.add(bvh, mint::ColumnMatrix4::from(m)).unwrap();
        let culling = if matches!(kind, Kind::TwoSided) {
            meshray::Culling::None
        } else {
            meshray::Culling::Back
        };
        let options = meshray::SceneOptions {
            query: meshray::QueryOptions {
                culling,
                watertight: false,
            },
            ..Default::default()
        };
        if let Some(h) = scene.closest_hit(&r, &options) {
            hits.push((entity, h.hit.t, h.hit.triangle, kind));
        }
    }
    hits.sort_by(|a, b| a.1.total_cmp(&b.1));
    let stop = hits
        .iter()
        .position(|h| matches!(h.3, Kind::Blocking))
        .map_or(hits.len(), |i| i + 1);
    hits.truncate(stop);
    hits.into_iter().map(|(e, t, tri, _)| (e, t, tri)).collect()
}

/// Whether a hit lies within `margin` (barycentric) of its triangle's edges, where f32
/// triangle tests may answer either way.
fn near_edge(hit: &HitData, margin: f32) -> bool {
    let m = hit
        .extra_as::<MeshrayHit>()
        .expect("meshray's hits carry MeshrayHit");
    m.u.min(m.v).min(1.0 - m.u - m.v) < margin
}

#[test]
fn hits_equal_the_library_and_bevys_own_backend() {
    let (mut ours, camera, entities, handles) = app(true, 7);
    let (mut bevys, bevy_camera, bevy_entities, _) = app(false, 7);
    // The same scene in both apps; entities are compared by their place in it.
    let place = |list: &[(Entity, Kind)], e: Entity| list.iter().position(|x| x.0 == e).unwrap();
    let state = ours.world().resource::<MeshrayScene>();
    assert_eq!(state.scene().len(), entities.len(), "every entity placed");

    let mut rng = Rng(99);
    let (mut hits, mut several, mut backs, mut compared_with_bevy) = (0, 0, 0, 0);
    let centres: Vec<Vec3> = entities
        .iter()
        .map(|(e, _)| {
            ours.world()
                .get::<GlobalTransform>(*e)
                .unwrap()
                .translation()
        })
        .collect();
    for k in 0..400 {
        // Every other ray is aimed near an entity's origin.
        let ray = if k % 2 == 0 {
            random_ray(&mut rng)
        } else {
            let at = centres[k / 2 % centres.len()];
            let jitter = Vec3::new(
                rng.range(-0.5, 0.5),
                rng.range(-0.5, 0.5),
                rng.range(-0.5, 0.5),
            );
            Ray3d::new(Vec3::ZERO, Dir3::new(at + jitter).unwrap())
        };
        let got = pick(&mut ours, camera, ray);
        let want = library(&ours, &entities, &handles, ray);
        let got_keys: Vec<_> = got
            .iter()
            .map(|(e, h)| (*e, h.depth, h.extra_as::<MeshrayHit>().unwrap().triangle))
            .collect();
        assert_eq!(got_keys, want, "{ray:?}");
        for (e, h) in &got {
            assert_eq!(h.camera, camera);
            let p = h.position.unwrap();
            assert!((p - ray.get_point(h.depth)).length() < 1e-4 * (1.0 + h.depth));
            // The normal is the world triangle's: unit, square to its edges.
            let world = ours.world();
            let mesh = &world.get::<Mesh3d>(*e).unwrap().0;
            let bvh = world.resource::<MeshrayScene>().bvh(mesh).unwrap().clone();
            let m = world.get::<GlobalTransform>(*e).unwrap().to_matrix();
            let tri = h.extra_as::<MeshrayHit>().unwrap().triangle as usize;
            let [a, b, c] = bvh
                .mesh()
                .triangle(tri)
                .map(|q| m.transform_point3(Vec3::new(q.x, q.y, q.z)));
            let n = h.normal.unwrap();
            assert!((n.length() - 1.0).abs() < 1e-5);
            for edge in [b - a, c - a] {
                assert!(
                    n.dot(edge).abs() <= 1e-4 * edge.length(),
                    "normal {n} off the triangle"
                );
            }
        }
        hits += usize::from(!got.is_empty());
        several += usize::from(got.len() > 1);
        backs += got
            .iter()
            .filter(|(_, h)| !h.extra_as::<MeshrayHit>().unwrap().front_face)
            .count();
        // Bevy's backend tests triangles in f32 its own way: near an edge either may answer.
        if got.iter().any(|(_, h)| near_edge(h, 1e-4)) {
            continue;
        }
        let theirs = pick(&mut bevys, bevy_camera, ray);
        if theirs.iter().any(|(_, h)| h.depth.is_nan()) {
            continue;
        }
        compared_with_bevy += 1;
        assert_eq!(
            got.iter()
                .map(|(e, _)| place(&entities, *e))
                .collect::<Vec<_>>(),
            theirs
                .iter()
                .map(|(e, _)| place(&bevy_entities, *e))
                .collect::<Vec<_>>(),
            "entities along {ray:?}: ours {:?}, Bevy's {:?}",
            got.iter()
                .map(|(_, h)| (h.depth, h.extra_as::<MeshrayHit>().copied()))
                .collect::<Vec<_>>(),
            theirs
                .iter()
                .map(|(_, h)| (h.depth, h.normal))
                .collect::<Vec<_>>()
        );
        // Depths agree; normals are not compared: Bevy's backend moves the normal by the
        // model matrix, not its inverse transpose, so under a non-uniform scale its normal
        // leans off the surface (ours is checked against the world triangle below).
        for ((_, a), (_, b)) in got.iter().zip(&theirs) {
            assert!(
                (a.depth - b.depth).abs() <= 1e-4 * (1.0 + a.depth),
                "{} vs {}",
                a.depth,
                b.depth
            );
        }
    }
    assert!(
        hits > 100 && several > 15,
        "{hits} rays hit, {several} hit several entities"
    );
    assert!(backs > 0, "no back face of a two-sided entity was hit");
    assert!(
        compared_with_bevy > 300,
        "{compared_with_bevy} compared with Bevy's backend"
    );
}

#[test]
fn hits_follow_moves_despawns_spawns_and_mesh_edits() {
    let (mut app, camera, entities, handles) = app(true, 3);
    let plain: Vec<Entity> = entities
        .iter()
        .filter(|(_, k)| matches!(k, Kind::Plain))
        .map(|(e, _)| *e)
        .collect();
    // Move an entity in front of the camera: a ray straight at it hits it.
    let target = plain[0];
    let front = Transform::from_xyz(-0.5, -0.5, -2.0);
    app.world_mut().entity_mut(target).insert(front);
    app.update(); // transforms propagate in PostUpdate; the backend sees them next frame
    let straight = Ray3d::new(Vec3::ZERO, Dir3::NEG_Z);
    let first = |app: &mut App| {
        pick(app, camera, straight)
            .first()
            .map(|(e, h)| (*e, h.depth))
    };
    let hit = first(&mut app).expect("the moved entity is in front");
    assert_eq!(hit.0, target);
    // Despawn it: the ray now hits whatever was behind, or nothing, never the despawned one.
    app.world_mut().despawn(target);
    app.update();
    assert_ne!(first(&mut app).map(|h| h.0), Some(target));
    // Spawn a cube closer still: it is hit, once its BVH (already built) places it.
    let cube = handles[1].clone();
    let near = Transform::from_xyz(-0.5, -0.5, -1.5);
    let spawned = app
        .world_mut()
        .spawn((Mesh3d(cube), near, GlobalTransform::from(near)))
        .id();
    app.update();
    let hit = first(&mut app).expect("the spawned cube");
    assert_eq!(hit.0, spawned);
    assert!(
        (hit.1 - 0.5).abs() < 1e-5,
        "the cube's near face at z = -0.5: {}",
        hit.1
    );
    // Edit the cube mesh (every instance of it): moved back by 0.25, rebuilt off thread.
    {
        let mut meshes = app.world_mut().resource_mut::<Assets<Mesh>>();
        let mut mesh = meshes.get_mut(&handles[1]).unwrap();
        let Some(bevy_mesh::VertexAttributeValues::Float32x3(p)) =
            mesh.attribute_mut(Mesh::ATTRIBUTE_POSITION)
        else {
            unreachable!()
        };
        for q in p.iter_mut() {
            q[2] -= 0.25;
        }
    }
    let mut depth = 0.0;
    for _ in 0..200 {
        depth = first(&mut app).expect("still the cube").1;
        if (depth - 0.75).abs() < 1e-5 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(
        (depth - 0.75).abs() < 1e-5,
        "the edited mesh is picked: {depth}"
    );
    // A singular transform (zero scale): not pickable, no panic; pickable again once fixed.
    let flat = near.with_scale(Vec3::new(1.0, 0.0, 1.0));
    app.world_mut().entity_mut(spawned).insert(flat);
    app.update();
    assert_ne!(first(&mut app).map(|h| h.0), Some(spawned));
    app.world_mut().entity_mut(spawned).insert(near);
    app.update();
    assert_eq!(first(&mut app).map(|h| h.0), Some(spawned));
    // Its near face taken out (new triangles, so a new build): the ray passes into the box
    // and meets only the inside of its far face, a back face, culled.
    {
        let mut meshes = app.world_mut().resource_mut::<Assets<Mesh>>();
        let mut mesh = meshes.get_mut(&handles[1]).unwrap();
        let Some(Indices::U32(indices)) = mesh.indices_mut() else {
            unreachable!()
        };
        indices.drain(6..12);
    }
    let mut through = false;
    for _ in 0..200 {
        if first(&mut app).is_none_or(|h| h.0 != spawned) {
            through = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(through, "the open box is picked through");
}

/// A mesh with vertex normals (a UV sphere): hits report the interpolated normal, as Bevy's
/// backend does, in world space (here under a rotation and a uniform scale, where the two
/// ways of moving a normal agree).
#[test]
fn hits_carry_the_interpolated_vertex_normal() {
    use bevy_mesh::Meshable;
    use bevy_shape::Sphere;
    let sphere = Sphere::new(1.0).mesh().uv(16, 12);
    assert!(sphere.attribute(Mesh::ATTRIBUTE_NORMAL).is_some());
    let transform = Transform::from_xyz(0.5, -0.3, -6.0)
        .with_rotation(Quat::from_axis_angle(
            Vec3::new(1.0, 2.0, 0.5).normalize(),
            0.7,
        ))
        .with_scale(Vec3::splat(1.5));
    let mut apps = [true, false].map(|meshray| {
        let (mut app, camera) = common::headless_app(meshray);
        let world = app.world_mut();
        let handle = world.resource_mut::<Assets<Mesh>>().add(sphere.clone());
        world.spawn((
            Mesh3d(handle),
            transform,
            GlobalTransform::from(transform),
            local_box(&sphere),
            Visibility::default(),
        ));
        settle(&mut app, 1);
        (app, camera)
    });
    let mut rng = Rng(23);
    let mut hits = 0;
    for _ in 0..60 {
        let target = Vec3::new(
            rng.range(-0.8, 1.8),
            rng.range(-1.6, 1.0),
            rng.range(-6.5, -5.5),
        );
        let ray = Ray3d::new(Vec3::ZERO, Dir3::new(target).unwrap());
        let [ours, theirs] = apps
            .each_mut()
            .map(|(app, camera)| common::frame(app, *camera, Some(ray)));
        assert_eq!(ours.len(), theirs.len());
        let (Some((_, a)), Some((_, b))) = (ours.first(), theirs.first()) else {
            continue;
        };
        if near_edge(a, 1e-3) {
            continue;
        }
        // Bevy's is the interpolated vertex normal; a facet's normal differs from it by up
        // to half a facet's angle (about 0.1 here).
        let (na, nb) = (a.normal.unwrap(), b.normal.unwrap().normalize());
        assert!((na - nb).length() < 1e-3, "{na} vs Bevy's {nb}");
        hits += 1;
    }
    assert!(hits > 20, "{hits} hits");
}
