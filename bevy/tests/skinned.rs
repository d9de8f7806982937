//! Skinned and morphing meshes in a headless app: a cylinder whose upper half follows a
//! second joint bends frame by frame (and bulges by a morph target), and the backend's hits
//! equal a brute force over the triangles posed as Bevy's vertex shader poses them (the
//! morph targets' deltas by their weights, then each joint's `GlobalTransform` times its
//! inverse bind pose, blended by the vertex's weights), in f64: the same triangle and
//! depth, whatever a skinned entity's own transform says (Bevy ignores it).

use bevy_asset::{AssetApp, Assets, RenderAssetUsages};
use bevy_ecs::prelude::*;
use bevy_math::{DMat4, DVec3, Dir3, Mat4, Quat, Vec3};
use bevy_mesh::morph::{MeshMorphWeights, MorphAttributes, MorphWeights};
use bevy_mesh::skinning::{SkinnedMesh, SkinnedMeshInverseBindposes};
use bevy_mesh::{Indices, Mesh, Mesh3d, PrimitiveTopology, VertexAttributeValues};
use bevy_picking::mesh_picking::ray_cast::RayCastBackfaces;
use bevy_shape::Ray3d;
use bevy_transform::components::{GlobalTransform, Transform};
use meshray_bevy::MeshrayHit;

mod common;
use common::{Rng, frame, headless_app, settle};

/// A cylinder of radius 0.5 along y from 0 to 4 (`rings` × `segments` quads, open ends),
/// its upper half weighted to joint 1 over a smooth blend from y = 1.5 to 2.5.
fn skinned_cylinder(rings: u32, segments: u32) -> Mesh {
    let mut positions = Vec::new();
    let (mut joints, mut weights) = (Vec::new(), Vec::new());
    for r in 0..=rings {
        let y = 4.0 * r as f32 / rings as f32;
        let t = (y - 1.5).clamp(0.0, 1.0);
        let upper = t * t * (3.0 - 2.0 * t);
        for s in 0..segments {
            let a = std::f32::consts::TAU * s as f32 / segments as f32;
            positions.push([0.5 * a.cos(), y, 0.5 * a.sin()]);
            joints.push([0u16, 1, 0, 0]);
            weights.push([1.0 - upper, upper, 0.0, 0.0]);
        }
    }
    let at = |r: u32, s: u32| r * segments + s % segments;
    let mut indices = Vec::new();
    for r in 0..rings {
        for s in 0..segments {
            indices.extend([at(r, s), at(r + 1, s), at(r, s + 1)]);
            indices.extend([at(r, s + 1), at(r + 1, s), at(r + 1, s + 1)]);
        }
    }
    Mesh::new(
        PrimitiveTopology::TriangleList,
        RenderAssetUsages::default(),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_POSITION, positions)
    .with_inserted_attribute(
        Mesh::ATTRIBUTE_JOINT_INDEX,
        VertexAttributeValues::Uint16x4(joints),
    )
    .with_inserted_attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT, weights)
    .with_inserted_indices(Indices::U32(indices))
}

/// `mesh` with two morph targets: a bulge (outwards, most at y = 2) and a lean (along x,
/// growing with y).
fn with_morph_targets(mut mesh: Mesh) -> Mesh {
    let Some(VertexAttributeValues::Float32x3(positions)) =
        mesh.attribute(Mesh::ATTRIBUTE_POSITION)
    else {
        unreachable!()
    };
    let bulge = positions.iter().map(|&[x, y, z]| {
        let k = 0.8 * (-(y - 2.0) * (y - 2.0)).exp();
        MorphAttributes::new(Vec3::new(k * x, 0.0, k * z), Vec3::ZERO, Vec3::ZERO)
    });
    let lean = positions.iter().map(|&[_, y, _]| {
        MorphAttributes::new(Vec3::new(0.3 * y, 0.0, 0.0), Vec3::ZERO, Vec3::ZERO)
    });
    let targets = bulge.chain(lean).collect();
    mesh.set_morph_targets(targets);
    mesh
}

/// The mesh's positions moved by its morph targets' deltas times `weights`, in f64.
fn morphed(mesh: &Mesh, weights: &[f32]) -> Vec<DVec3> {
    let Some(VertexAttributeValues::Float32x3(positions)) =
        mesh.attribute(Mesh::ATTRIBUTE_POSITION)
    else {
        unreachable!()
    };
    let n = positions.len();
    let targets = mesh.morph_targets().map_or(&[][..], |t| &t[..]);
    (0..n)
        .map(|v| {
            let base = Vec3::from_array(positions[v]).as_dvec3();
            weights.iter().enumerate().fold(base, |p, (k, &w)| {
                p + f64::from(w) * targets[k * n + v].position.as_dvec3()
            })
        })
        .collect()
}

/// The triangles over `positions` (one per vertex of `mesh`).
fn triangles_of(mesh: &Mesh, positions: &[DVec3]) -> Vec<[DVec3; 3]> {
    let Some(Indices::U32(indices)) = mesh.indices() else {
        unreachable!()
    };
    indices
        .chunks_exact(3)
        .map(|t| [0, 1, 2].map(|k| positions[t[k] as usize]))
        .collect()
}

/// The triangles as Bevy draws them, in f64: every vertex morphed by `weights`, then moved
/// by the blend of its joints' matrices (`GlobalTransform` × inverse bind pose).
fn posed_triangles(
    mesh: &Mesh,
    joints: &[GlobalTransform],
    inverse: &[Mat4],
    weights: &[f32],
) -> Vec<[DVec3; 3]> {
    let positions = morphed(mesh, weights);
    let Some(VertexAttributeValues::Uint16x4(index)) = mesh.attribute(Mesh::ATTRIBUTE_JOINT_INDEX)
    else {
        unreachable!()
    };
    let Some(VertexAttributeValues::Float32x4(weight)) =
        mesh.attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT)
    else {
        unreachable!()
    };
    let matrices: Vec<DMat4> = joints
        .iter()
        .zip(inverse)
        .map(|(g, b)| g.to_matrix().as_dmat4() * b.as_dmat4())
        .collect();
    let posed: Vec<DVec3> = positions
        .iter()
        .enumerate()
        .map(|(v, &p)| {
            (0..4)
                .filter(|&k| weight[v][k] != 0.0)
                .map(|k| {
                    matrices[index[v][k] as usize].transform_point3(p) * f64::from(weight[v][k])
                })
                .sum()
        })
        .collect();
    triangles_of(mesh, &posed)
}

/// The nearest hit of a ray over every triangle (both sides), in f64: `(t, triangle)`.
fn brute_force(triangles: &[[DVec3; 3]], ray: &Ray3d) -> Option<(f64, usize)> {
    let (o, d) = (ray.origin.as_dvec3(), Vec3::from(ray.direction).as_dvec3());
    triangles
        .iter()
        .enumerate()
        .filter_map(|(i, [a, b, c])| {
            let (e1, e2) = (*b - *a, *c - *a);
            let p = d.cross(e2);
            let det = e1.dot(p);
            if det == 0.0 {
                return None;
            }
            let s = o - *a;
            let u = s.dot(p) / det;
            let q = s.cross(e1);
            let v = d.dot(q) / det;
            let t = e2.dot(q) / det;
            (u >= 0.0 && v >= 0.0 && u + v <= 1.0 && t >= 0.0).then_some((t, i))
        })
        .min_by(|x, y| x.0.total_cmp(&y.0))
}

#[test]
fn a_bending_skinned_cylinder_is_picked_where_it_is_drawn() {
    bend_and_pick(false);
}

#[test]
fn a_bending_bulging_cylinder_is_picked_where_it_is_drawn() {
    bend_and_pick(true);
}

/// 6 frames of the skinned cylinder bending (and, with `morph`, bulging and leaning by
/// weights on a `MorphWeights` entity its `MeshMorphWeights` refers to), 40 rays each.
fn bend_and_pick(morph: bool) {
    let (mut app, camera) = headless_app(true);
    app.init_asset::<SkinnedMeshInverseBindposes>();
    let world = app.world_mut();
    let mesh = if morph {
        with_morph_targets(skinned_cylinder(32, 24))
    } else {
        skinned_cylinder(32, 24)
    };
    let handle = world.resource_mut::<Assets<Mesh>>().add(mesh.clone());
    // The mesh is bound where the joints stand at rest: joint 0 at (0, -2, -8) (the mesh's
    // origin), joint 1 two above it; the inverse bind poses take the mesh into each joint's
    // frame.
    let rest = [
        Transform::from_xyz(0.0, -2.0, -8.0),
        Transform::from_xyz(0.0, 2.0, 0.0),
    ];
    let inverse = vec![
        Mat4::IDENTITY,
        Mat4::from_translation(Vec3::new(0.0, -2.0, 0.0)),
    ];
    let bindposes = world
        .resource_mut::<Assets<SkinnedMeshInverseBindposes>>()
        .add(SkinnedMeshInverseBindposes::from(inverse.clone()));
    let root = world.spawn((rest[0], GlobalTransform::from(rest[0]))).id();
    let child = world
        .spawn((rest[1], GlobalTransform::default(), ChildOf(root)))
        .id();
    // The entity's own transform is nonsense on purpose: Bevy does not use it when skinning.
    let odd = Transform::from_xyz(5.0, 5.0, 5.0).with_scale(Vec3::splat(3.0));
    let weights = world
        .spawn(MorphWeights::new(vec![0.0, 0.0], None).unwrap())
        .id();
    let skinned = world
        .spawn((
            Mesh3d(handle),
            odd,
            GlobalTransform::from(odd),
            SkinnedMesh {
                inverse_bindposes: bindposes,
                joints: vec![root, child],
            },
            RayCastBackfaces,
        ))
        .id();
    if morph {
        world
            .entity_mut(skinned)
            .insert(MeshMorphWeights::Reference(weights));
    }
    settle(&mut app, 1);
    let mut rng = Rng(17);
    let around = (Vec3::new(-2.5, -2.5, -8.5), Vec3::new(2.5, 2.5, -7.5));
    let mut hits = 0;
    for step in 0..6 {
        let bend = Quat::from_rotation_z(0.35 * step as f32);
        app.world_mut()
            .get_mut::<Transform>(child)
            .unwrap()
            .rotation = bend;
        app.world_mut().get_mut::<Transform>(root).unwrap().rotation =
            Quat::from_rotation_x(0.05 * step as f32);
        let w = if morph {
            vec![0.2 * step as f32, 1.0 - 0.3 * step as f32]
        } else {
            vec![]
        };
        if morph {
            let mut set = app.world_mut().get_mut::<MorphWeights>(weights).unwrap();
            set.weights_mut().copy_from_slice(&w);
        }
        app.update(); // transforms propagate
        let globals: Vec<GlobalTransform> = [root, child]
            .map(|j| *app.world().get::<GlobalTransform>(j).unwrap())
            .to_vec();
        let triangles = posed_triangles(&mesh, &globals, &inverse, &w);
        hits += pick_and_check(
            &mut app, camera, skinned, &triangles, &mut rng, step, around,
        );
    }
    assert!(hits > 6 * 40 / 2, "{hits} hits of {}", 6 * 40);
}

/// A cylinder without a skin, placed by its own transform, bulging and leaning by its own
/// weights (`MeshMorphWeights::Value`) over 6 frames, then back at rest when they go.
#[test]
fn a_morphing_cylinder_is_picked_where_it_is_drawn() {
    let (mut app, camera) = headless_app(true);
    let mut mesh = with_morph_targets(skinned_cylinder(32, 24));
    mesh.remove_attribute(Mesh::ATTRIBUTE_JOINT_INDEX);
    mesh.remove_attribute(Mesh::ATTRIBUTE_JOINT_WEIGHT);
    let world = app.world_mut();
    let handle = world.resource_mut::<Assets<Mesh>>().add(mesh.clone());
    let place = Transform::from_xyz(0.3, -2.0, -8.0)
        .with_rotation(Quat::from_rotation_z(0.4))
        .with_scale(Vec3::splat(1.2));
    let entity = world
        .spawn((
            Mesh3d(handle),
            place,
            GlobalTransform::from(place),
            MeshMorphWeights::Value {
                weights: vec![0.0, 0.0],
            },
            RayCastBackfaces,
        ))
        .id();
    settle(&mut app, 1);
    let mut rng = Rng(23);
    let around = (Vec3::new(-3.0, -2.5, -8.5), Vec3::new(3.0, 3.0, -7.5));
    let mut hits = 0;
    for step in 0..7 {
        let w = if step < 6 {
            vec![0.25 * step as f32, 0.8 - 0.2 * step as f32]
        } else {
            vec![]
        };
        if step < 6 {
            *app.world_mut().get_mut::<MeshMorphWeights>(entity).unwrap() =
                MeshMorphWeights::Value { weights: w.clone() };
        } else {
            // The weights gone: drawn (and picked) at rest.
            app.world_mut()
                .entity_mut(entity)
                .remove::<MeshMorphWeights>();
        }
        app.update();
        let matrix = place.to_matrix().as_dmat4();
        let positions: Vec<DVec3> = morphed(&mesh, &w)
            .into_iter()
            .map(|p| matrix.transform_point3(p))
            .collect();
        let triangles = triangles_of(&mesh, &positions);
        hits += pick_and_check(&mut app, camera, entity, &triangles, &mut rng, step, around);
    }
    assert!(hits > 7 * 40 / 2, "{hits} hits of {}", 7 * 40);
}

/// 40 rays from the camera at the origin, mostly at a posed triangle (a point near its
/// centre), sometimes anywhere in the box `around`: each one's hit must be `entity`'s, at
/// the brute force's depth and triangle (another triangle only at a tie, a ray through a
/// shared edge). Returns how many hit.
fn pick_and_check(
    app: &mut bevy_app::App,
    camera: Entity,
    entity: Entity,
    triangles: &[[DVec3; 3]],
    rng: &mut Rng,
    step: usize,
    (low, high): (Vec3, Vec3),
) -> usize {
    let mut hits = 0;
    for _ in 0..40 {
        let target = if rng.next() < 0.8 {
            let i = (rng.next() * triangles.len() as f32) as usize % triangles.len();
            let [a, b, c] = triangles[i];
            ((a + b + c) / 3.0).as_vec3()
        } else {
            Vec3::new(
                rng.range(low.x, high.x),
                rng.range(low.y, high.y),
                rng.range(low.z, high.z),
            )
        };
        let ray = Ray3d::new(Vec3::ZERO, Dir3::new(target).unwrap());
        let got = frame(app, camera, Some(ray));
        match (got.first(), brute_force(triangles, &ray)) {
            (None, None) => {}
            (Some((e, hit)), Some((t, triangle))) => {
                assert_eq!(*e, entity);
                assert!(
                    (f64::from(hit.depth) - t).abs() <= 1e-4 * t,
                    "step {step}: depth {} vs {t}",
                    hit.depth
                );
                let m = hit.extra_as::<MeshrayHit>().unwrap();
                if m.triangle as usize != triangle {
                    let near_edge = m.u.min(m.v).min(1.0 - m.u - m.v) < 1e-4;
                    assert!(
                        near_edge,
                        "step {step}: triangle {} vs {triangle}",
                        m.triangle
                    );
                }
                hits += 1;
            }
            (g, w) => panic!("step {step}: {g:?} vs brute force {w:?}"),
        }
    }
    hits
}
