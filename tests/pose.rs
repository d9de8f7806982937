//! Posed meshes: a tree posed with a rig answers, frame after frame, what a brute force over
//! the posed triangles answers (the crate's own f32 test to the bit, an independent f64
//! solve within its error bound); the posed positions are the skinning formula's; a pose
//! that spreads the mesh apart rebuilds the tree; bad poses leave it as it was.

mod common;

use common::{Chunks, ExactMesh, Rng};
use meshray::pose::{Pose, Rig};
use meshray::prelude::*;
use meshray::{Bvh, Error, Mesh, QueryOptions, Ray};
use nalgebra::{Matrix4, Point3, Vector3};

/// A closed cylinder of radius 0.5 along y from 0 to 4, `rings` × `segments` quads and two
/// capped ends.
fn cylinder(rings: u32, segments: u32) -> Mesh {
    let mut positions = Vec::new();
    for r in 0..=rings {
        let y = 4.0 * r as f32 / rings as f32;
        for s in 0..segments {
            let a = std::f32::consts::TAU * s as f32 / segments as f32;
            positions.push([0.5 * a.cos(), y, 0.5 * a.sin()]);
        }
    }
    let (bottom, top) = (positions.len() as u32, positions.len() as u32 + 1);
    positions.push([0.0, 0.0, 0.0]);
    positions.push([0.0, 4.0, 0.0]);
    let at = |r: u32, s: u32| r * segments + s % segments;
    let mut triangles = Vec::new();
    for r in 0..rings {
        for s in 0..segments {
            triangles.push([at(r, s), at(r + 1, s), at(r, s + 1)]);
            triangles.push([at(r, s + 1), at(r + 1, s), at(r + 1, s + 1)]);
        }
    }
    for s in 0..segments {
        triangles.push([bottom, at(0, s), at(0, s + 1)]);
        triangles.push([top, at(rings, s + 1), at(rings, s)]);
    }
    Mesh::from_buffers(positions, triangles).unwrap()
}

/// Two joints: the lower half follows joint 0, the upper half joint 1, blended smoothly
/// over the middle (y from 1.5 to 2.5); one morph target bulges the middle outwards.
fn bending_rig(mesh: &Mesh) -> Rig {
    let (joints, weights): (Vec<[u16; 4]>, Vec<[f32; 4]>) = mesh
        .positions()
        .iter()
        .map(|p| {
            let t = ((p.y - 1.5) / 1.0).clamp(0.0, 1.0);
            let upper = t * t * (3.0 - 2.0 * t);
            ([0, 1, 0, 0], [1.0 - upper, upper, 0.0, 0.0])
        })
        .unzip();
    let bulge = mesh
        .positions()
        .iter()
        .map(|p| {
            let out = Vector3::new(p.x, 0.0, p.z);
            out * 0.3 * (-(p.y - 2.0).powi(2)).exp()
        })
        .collect();
    Rig::new(mesh)
        .with_skin(joints, weights)
        .unwrap()
        .with_morph_targets(vec![bulge])
        .unwrap()
}

/// Joint 1 bends the upper half by `angle` about the z axis through (0, 2, 0).
fn bend(angle: f32) -> [Matrix4<f32>; 2] {
    let pivot = Vector3::new(0.0, 2.0, 0.0);
    let turn = Matrix4::new_translation(&pivot)
        * Matrix4::from_scaled_axis(Vector3::z() * angle)
        * Matrix4::new_translation(&-pivot);
    [Matrix4::identity(), turn]
}

/// The posed positions by the formula, in f64, from the rig's inputs.
fn posed_f64(mesh: &Mesh, joints: &[Matrix4<f32>; 2], bulge: f32) -> Vec<[f64; 3]> {
    mesh.positions()
        .iter()
        .map(|p| {
            let t = ((p.y - 1.5) / 1.0).clamp(0.0, 1.0);
            let upper = f64::from(t * t * (3.0 - 2.0 * t));
            let out = Vector3::new(p.x, 0.0, p.z) * 0.3 * (-(p.y - 2.0).powi(2)).exp();
            let q = p.coords.cast::<f64>() + out.cast::<f64>() * f64::from(bulge);
            let m = joints[0].cast::<f64>() * (1.0 - upper) + joints[1].cast::<f64>() * upper;
            let r = m * q.push(1.0);
            [r.x, r.y, r.z]
        })
        .collect()
}

/// Rays at the posed mesh: from around its box to points inside it.
fn rays_at(mesh: &Mesh, rng: &mut Rng, n: usize) -> Vec<Ray> {
    let mut rays = common::random_rays(mesh, n, rng);
    rays.extend(common::camera_rays(mesh, 24));
    rays
}

/// Closest, any and all hits against the f32 brute force (bits) and the f64 solve (within
/// its error bound, on rays it does not call borderline); returns the rays that hit.
fn check_picks(bvh: &Bvh, rays: &[Ray]) -> usize {
    let mesh = bvh.mesh();
    let (chunks, exact) = (Chunks::new(mesh), ExactMesh::new(mesh));
    let options = QueryOptions::default();
    let (mut hits, mut borderline) = (0, 0);
    for ray in rays {
        let brute = common::brute_all_f32(mesh, &chunks, ray, &options);
        let closest = bvh.closest_hit(ray, &options);
        assert_eq!(
            closest.map(|h| h.t.to_bits()),
            brute.first().map(|&(t, _)| t.to_bits()),
            "{ray:?}"
        );
        if let Some(h) = closest {
            assert!(brute.contains(&(h.t, h.triangle)), "{ray:?}");
            hits += 1;
        }
        assert_eq!(bvh.any_hit(ray, &options).is_some(), closest.is_some());
        let all: Vec<(f32, u32)> = bvh
            .all_hits(ray, &options)
            .iter()
            .map(|h| (h.t, h.triangle))
            .collect();
        assert_eq!(all, brute, "{ray:?}");
        let f64_hits = exact.hits(&chunks, ray, &options);
        // Borderline hits (f32 may answer either way) matter when they could be the closest.
        let reach = closest.map_or(f64::INFINITY, |h| f64::from(h.t) * (1.0 + 1e-5));
        if f64_hits
            .iter()
            .any(|e| e.borderline && e.t - e.t_tolerance <= reach)
        {
            borderline += 1;
            continue;
        }
        let nearest = f64_hits
            .iter()
            .filter(|e| !e.borderline)
            .min_by(|a, b| a.t.total_cmp(&b.t));
        match (closest, nearest) {
            (None, None) => {}
            (Some(h), Some(e)) => assert!(
                (f64::from(h.t) - e.t).abs() <= e.t_tolerance + 1e-6 * e.t.abs(),
                "{ray:?}: {} vs f64 {}",
                h.t,
                e.t
            ),
            (c, e) => panic!("{ray:?}: {c:?} vs f64 {e:?}"),
        }
    }
    assert!(
        borderline * 50 <= rays.len(),
        "{borderline} of {} rays borderline: the f64 bound is too loose to test",
        rays.len()
    );
    hits
}

#[test]
fn a_bending_cylinder_is_picked_where_it_is_drawn_frame_by_frame() {
    let mesh = cylinder(48, 40);
    let rig = bending_rig(&mesh);
    let mut bvh = Bvh::build(mesh.clone());
    let mut rng = Rng::new(11);
    let mut rebuilt = 0;
    for frame in 0..=12 {
        let angle = frame as f32 * 0.2; // up to 2.4 radians: folded back on itself
        let joints = bend(angle);
        let bulge = [(frame as f32 * 0.5).sin()];
        let update = bvh
            .pose(
                &rig,
                &Pose {
                    joints: &joints,
                    morph_weights: &bulge,
                },
            )
            .unwrap();
        rebuilt += usize::from(update.rebuilt);
        assert!(
            update.growth >= 0.5 && update.growth.is_finite(),
            "{update:?}"
        );
        // The tree's mesh holds the posed positions: the formula's, to f32 rounding.
        for (got, want) in bvh
            .mesh()
            .positions()
            .iter()
            .zip(posed_f64(&mesh, &joints, bulge[0]))
        {
            let d = (got.cast::<f64>() - Point3::from(want)).norm();
            assert!(d <= 1e-5, "frame {frame}: {got} vs {want:?}");
        }
        let rays = rays_at(bvh.mesh(), &mut rng, 600);
        let hits = check_picks(&bvh, &rays);
        assert!(hits * 5 > rays.len(), "frame {frame}: {hits} hits");
        // The same answers as a tree built for this pose.
        let fresh = Bvh::build(bvh.mesh().clone());
        for ray in &rays {
            let key = |h: Option<meshray::Hit>| h.map(|h| h.t.to_bits());
            assert_eq!(
                key(bvh.closest_hit(ray, &QueryOptions::default())),
                key(fresh.closest_hit(ray, &QueryOptions::default()))
            );
        }
    }
    println!("bending cylinder: {rebuilt} rebuilds in 13 frames");
}

#[test]
fn a_pose_that_tears_the_mesh_apart_rebuilds_the_tree() {
    let mesh = cylinder(32, 24);
    let rig = bending_rig(&mesh);
    let mut bvh = Bvh::build(mesh);
    // Joint 1 flings the upper half 30 lengths away: the middle's triangles stretch across
    // the gap and the refit boxes overlap.
    let far = [
        Matrix4::identity(),
        Matrix4::new_translation(&Vector3::new(120.0, 40.0, 0.0)),
    ];
    let update = bvh
        .pose(
            &rig,
            &Pose {
                joints: &far,
                morph_weights: &[0.0],
            },
        )
        .unwrap();
    assert!(update.rebuilt, "{update:?}");
    assert!(update.growth > Bvh::REBUILD_GROWTH, "{update:?}");
    let mut rng = Rng::new(5);
    let rays = rays_at(bvh.mesh(), &mut rng, 1000);
    assert!(check_picks(&bvh, &rays) > 50);
    // Back to the bind pose: a refit of the rebuilt tree, still exact.
    let rest = [Matrix4::identity(); 2];
    let update = bvh
        .pose(
            &rig,
            &Pose {
                joints: &rest,
                morph_weights: &[],
            },
        )
        .unwrap();
    assert!(update.growth.is_finite(), "{update:?}");
    let rays = rays_at(bvh.mesh(), &mut rng, 1000);
    check_picks(&bvh, &rays);
}

#[test]
fn bad_poses_leave_the_tree_as_it_was() {
    let mesh = cylinder(16, 16);
    let rig = bending_rig(&mesh);
    let mut bvh = Bvh::build(mesh.clone());
    let joints = bend(0.7);
    bvh.pose(
        &rig,
        &Pose {
            joints: &joints,
            morph_weights: &[0.5],
        },
    )
    .unwrap();
    let before = bvh.mesh().positions().to_vec();
    let rays = rays_at(bvh.mesh(), &mut Rng::new(2), 300);
    let answers = |bvh: &Bvh| -> Vec<Option<u32>> {
        rays.iter()
            .map(|r| {
                bvh.closest_hit(r, &QueryOptions::default())
                    .map(|h| h.t.to_bits())
            })
            .collect()
    };
    let expected = answers(&bvh);
    let huge = [Matrix4::identity(), Matrix4::new_scaling(1e13)];
    let collapse = [Matrix4::new_scaling(0.0); 2];
    let other = Rig::new(&cylinder(8, 8));
    for (rig, pose) in [
        // Too few joint matrices.
        (
            &rig,
            Pose {
                joints: &joints[..1],
                morph_weights: &[],
            },
        ),
        // Posed coordinates beyond Mesh::MAX_COORDINATE.
        (
            &rig,
            Pose {
                joints: &huge,
                morph_weights: &[],
            },
        ),
        // A rig of another mesh.
        (&other, Pose::default()),
        // Every vertex at one point (after the refit: undone).
        (
            &rig,
            Pose {
                joints: &collapse,
                morph_weights: &[],
            },
        ),
    ] {
        let e = bvh.pose(rig, &pose).unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidPose { .. }
                    | Error::CoordinateOutOfRange { .. }
                    | Error::VertexCount { .. }
                    | Error::MeshTooSmall { .. }
            ),
            "{e}"
        );
        assert_eq!(bvh.mesh().positions(), &before[..]);
        assert_eq!(answers(&bvh), expected);
        meshray::diagnostics::validate(&bvh).unwrap();
    }
}

#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
fn the_bunny_nodding_is_picked_exactly() {
    let Some(mesh) = common::shared_mesh("stanford-bunny/stanford-bunny.obj") else {
        return;
    };
    // Three joints by height: the body, the head, the ears; each bends about its own pivot.
    let (lo, hi) = (mesh.bounds().min, mesh.bounds().max);
    let level = |f: f32| lo.y + f * (hi.y - lo.y);
    let (joints, weights) = mesh
        .positions()
        .iter()
        .map(|p| {
            let head = ((p.y - level(0.45)) / (0.15 * (hi.y - lo.y))).clamp(0.0, 1.0);
            let ears = ((p.y - level(0.75)) / (0.1 * (hi.y - lo.y))).clamp(0.0, 1.0);
            (
                [0u16, 1, 2, 0],
                [1.0 - head, head * (1.0 - ears), head * ears, 0.0f32],
            )
        })
        .unzip();
    let rig = Rig::new(&mesh).with_skin(joints, weights).unwrap();
    let mut bvh = Bvh::build(mesh.clone());
    let turn = |angle: f32, at: f32| {
        let pivot = Vector3::new(0.5 * (lo.x + hi.x), level(at), 0.5 * (lo.z + hi.z));
        Matrix4::new_translation(&pivot)
            * Matrix4::from_scaled_axis(Vector3::x() * angle)
            * Matrix4::new_translation(&-pivot)
    };
    let mut rng = Rng::new(8);
    for frame in 0..4 {
        let nod = 0.15 * frame as f32;
        let joints = [
            Matrix4::identity(),
            turn(nod, 0.5),
            turn(nod, 0.5) * turn(-2.0 * nod, 0.8),
        ];
        bvh.pose(
            &rig,
            &Pose {
                joints: &joints,
                morph_weights: &[],
            },
        )
        .unwrap();
        let rays = rays_at(bvh.mesh(), &mut rng, 1500);
        let hits = check_picks(&bvh, &rays);
        assert!(hits * 5 > rays.len(), "frame {frame}: {hits} hits");
    }
}

#[test]
fn a_scene_poses_one_instance_and_leaves_the_others() {
    let mesh = cylinder(24, 20);
    let rig = bending_rig(&mesh);
    let shared = std::sync::Arc::new(Bvh::build(mesh.clone()));
    let mut scene = meshray::Scene::new();
    let moved = Matrix4::new_translation(&Vector3::new(10.0, 0.0, 0.0));
    let a = scene.add(shared.clone(), Matrix4::identity()).unwrap();
    let b = scene.add(shared.clone(), moved).unwrap();
    let joints = bend(1.2);
    let pose = Pose {
        joints: &joints,
        morph_weights: &[0.4],
    };
    scene.pose_mesh(a, &rig, &pose).unwrap();
    // a answers as a tree posed alone; b (and the shared tree) as the bind pose.
    let mut posed = Bvh::build(mesh.clone());
    posed.pose(&rig, &pose).unwrap();
    assert_eq!(shared.mesh().positions(), mesh.positions());
    let options = meshray::SceneOptions::default();
    let mut rng = Rng::new(4);
    for (id, bvh, to_world) in [(a, &posed, Matrix4::identity()), (b, &*shared, moved)] {
        let local = rays_at(bvh.mesh(), &mut rng, 300);
        let mut hits = 0;
        for ray in &local {
            let world = Ray::new(
                to_world.transform_point(&ray.origin()),
                to_world.transform_vector(&ray.direction()),
            );
            let want = bvh.closest_hit(ray, &QueryOptions::default());
            let got = scene
                .closest_hit(&world, &options)
                .filter(|h| h.instance == id);
            assert_eq!(
                got.map(|h| h.hit.triangle),
                want.map(|h| h.triangle),
                "{world:?}"
            );
            hits += usize::from(want.is_some());
        }
        assert!(hits > 50, "{hits}");
    }
    // A transform that carries the posed mesh out of range: refused, a as it was.
    let far = scene
        .add(
            shared.clone(),
            Matrix4::new_translation(&Vector3::new(0.0, 1.0e12, 0.0)),
        )
        .unwrap();
    // The upper half up to y = 1.2e11 in the mesh: within range there, not at 1e12 above.
    let stretch = [Matrix4::identity(), Matrix4::new_scaling(3.0e10)];
    let e = scene
        .pose_mesh(
            far,
            &rig,
            &Pose {
                joints: &stretch,
                morph_weights: &[],
            },
        )
        .unwrap_err();
    assert!(matches!(e, Error::InvalidTransform { .. }), "{e}");
    let instance = scene.instance(far).unwrap();
    assert_eq!(instance.bvh.mesh().positions(), mesh.positions());
}
