//! The query surface (`meshray::query`): a `Bvh` and a one-instance `Scene` placed where the
//! mesh is answer every ray and point query through the same traits with the same bits —
//! compact casts (closest and any), every hit, the count, the whole hits made from compact
//! ones, closest points, winding numbers, inside tests and signed distances — on the
//! project's scene and the shared meshes, camera, random and surface-leaving rays, under
//! each culling and both triangle tests; and the normals from the tree's table equal the
//! whole hits' under rotations, non-uniform scales and mirrors (and, normalized, those a
//! cast takes from the leaves). Code written once over the traits (a binding, a picking
//! helper) thus serves both.
mod common;

use common::*;
use meshray::query::{PointQuery, RayCast, RayQuery, SceneCompactHit, WindingAccuracy};
use meshray::{Bvh, CompactHit, Culling, Mesh, QueryOptions, Ray, Scene, SceneOptions};
use nalgebra::Matrix4;
use std::sync::Arc;

fn bits(h: &CompactHit) -> (u32, u32, u32, u32) {
    (h.triangle, h.t.to_bits(), h.u.to_bits(), h.v.to_bits())
}

fn scene_bits(h: &SceneCompactHit) -> (u32, u32, u32, u32) {
    assert_eq!(h.instance, 0, "the scene's one instance");
    bits(&h.hit)
}

/// Casts through the traits only, as a binding would.
fn compact<G: RayCast>(
    g: &G,
    ray: &Ray,
    query: RayQuery,
    options: &G::Options<'_>,
) -> Option<G::Compact> {
    g.cast_ray(ray, query, options)
}

fn check(name: &str, mesh: Mesh) {
    let bvh = Arc::new(Bvh::build(mesh));
    let mut scene = Scene::new();
    scene.add(bvh.clone(), Matrix4::identity()).unwrap();
    let mesh = bvh.mesh();
    let mut rng = Rng::new(39);
    let mut rays = camera_rays(mesh, 32);
    rays.extend(random_rays(mesh, 1500, &mut rng));
    rays.extend(surface_rays(mesh, 1500, &mut rng));
    let (mut mesh_hits, mut scene_hits) = (Vec::new(), Vec::new());
    let mut hits = 0;
    for (k, ray) in rays.iter().enumerate() {
        let query = QueryOptions {
            culling: [Culling::None, Culling::Back, Culling::Front][k % 3],
            watertight: k % 4 != 3,
        };
        let scene_options = SceneOptions {
            query,
            ..Default::default()
        };
        for q in [RayQuery::Closest, RayQuery::Any] {
            let a = compact(&*bvh, ray, q, &query);
            let b = compact(&scene, ray, q, &scene_options);
            assert_eq!(
                a.as_ref().map(bits),
                b.as_ref().map(scene_bits),
                "{name} ray {k} {q:?} {query:?}: {ray:?}"
            );
            if let (Some(a), Some(b)) = (a, b) {
                hits += 1;
                let (whole_a, whole_b) = (
                    bvh.hit_details(ray, &a).unwrap(),
                    RayCast::hit_details(&scene, ray, &b).unwrap(),
                );
                // The same hit; the scene's normal goes through its normal matrix (the identity here)
                // and is normalized again, which may move its last bit.
                let mut moved = whole_b.hit;
                assert!((moved.normal.into_inner() - whole_a.normal.into_inner()).amax() < 1e-6);
                moved.normal = whole_a.normal;
                if let (Some(n), Some(m)) = (whole_a.shading_normal, moved.shading_normal) {
                    assert!((n.into_inner() - m.into_inner()).amax() < 1e-6);
                    moved.shading_normal = Some(n);
                }
                assert_eq!(whole_a, moved, "{name} ray {k}: the whole hit");
                assert_eq!(whole_b.instance, 0);
                assert_eq!(
                    <Bvh as RayCast>::distance(&a),
                    <Scene as RayCast>::distance(&b)
                );
                // The normal from the table is the whole hit's, bit for bit, in both.
                assert_eq!(bvh.hit_normal(&a), Some(whole_a.normal), "{name} ray {k}");
                assert_eq!(
                    scene.hit_normal(&b),
                    Some(whole_b.hit.normal),
                    "{name} ray {k}"
                );
                assert_eq!(<Scene as RayCast>::mesh_hit(&b), (Some(0), a));
                // The leaf's normal: the mesh's cross product bit for bit, with the same hit;
                // normalized, the table's up to rounding.
                let [c0, c1, c2] = mesh.triangle(a.triangle as usize);
                let cross = (c1 - c0).cross(&(c2 - c0));
                let (hit, raw) = bvh.cast_ray_normal(ray, q, &query).unwrap();
                assert_eq!(
                    (hit, raw.map(f32::to_bits)),
                    (a, cross.map(f32::to_bits)),
                    "{name} ray {k}"
                );
                let (hit, n) = scene.cast_ray_normal(ray, q, &scene_options).unwrap();
                assert_eq!(hit, b, "{name} ray {k}");
                for n in [raw, n] {
                    assert!(
                        (n.normalize() - whole_a.normal.into_inner()).amax() < 1e-6,
                        "{name} ray {k}"
                    );
                }
            }
        }
        RayCast::all_triangles(&*bvh, ray, &query, &mut mesh_hits);
        RayCast::all_triangles(&scene, ray, &scene_options, &mut scene_hits);
        assert_eq!(
            mesh_hits.iter().map(bits).collect::<Vec<_>>(),
            scene_hits.iter().map(scene_bits).collect::<Vec<_>>(),
            "{name} ray {k}: every hit"
        );
        assert_eq!(RayCast::count_hits(&*bvh, ray, &query), mesh_hits.len());
        assert_eq!(
            RayCast::count_hits(&scene, ray, &scene_options),
            mesh_hits.len()
        );
        let whole: Vec<_> = RayCast::all_hits(&scene, ray, &scene_options)
            .into_iter()
            .map(|h| (h.hit.triangle, h.hit.t.to_bits()))
            .collect();
        let want: Vec<_> = RayCast::all_hits(&*bvh, ray, &query)
            .into_iter()
            .map(|h| (h.triangle, h.t.to_bits()))
            .collect();
        assert_eq!(want, whole, "{name} ray {k}: every hit, whole");
    }
    assert!(hits > rays.len() / 4, "{name}: only {hits} hits");
    // A compact hit naming no triangle, or no instance, has no details.
    let ray = rays[0];
    let bogus = CompactHit {
        t: 1.0,
        triangle: u32::MAX,
        u: 0.0,
        v: 0.0,
    };
    assert!(RayCast::hit_details(&*bvh, &ray, &bogus).is_none());
    let no_instance = SceneCompactHit {
        instance: 7,
        hit: CompactHit {
            triangle: 0,
            ..bogus
        },
    };
    assert!(RayCast::hit_details(&scene, &ray, &no_instance).is_none());
    assert!(bvh.hit_normal(&bogus).is_none());
    assert!(scene.hit_normal(&no_instance).is_none());

    // Points: around the mesh's box, some inside it.
    let (centre, radius) = frame(mesh);
    let (q, s) = (QueryOptions::default(), SceneOptions::default());
    for k in 0..200 {
        let p = centre
            + nalgebra::Vector3::new(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            ) * radius;
        let a = PointQuery::closest_point(&*bvh, p, f32::INFINITY, &q).unwrap();
        let b = PointQuery::closest_point(&scene, p, f32::INFINITY, &s).unwrap();
        assert_eq!(
            (a.triangle, a.distance.to_bits()),
            (b.closest.triangle, b.closest.distance.to_bits()),
            "{name} point {k}"
        );
        assert_eq!(
            PointQuery::winding_number(&*bvh, p, WindingAccuracy::FarField { beta: 2.0 }, &q)
                .to_bits(),
            PointQuery::winding_number(&scene, p, WindingAccuracy::FarField { beta: 2.0 }, &s)
                .to_bits(),
            "{name} point {k}"
        );
        if k % 10 == 0 {
            assert_eq!(
                PointQuery::contains(&*bvh, p, &q),
                PointQuery::contains(&scene, p, &s)
            );
            assert_eq!(
                PointQuery::signed_distance(&*bvh, p, f32::INFINITY, &q).map(f64::to_bits),
                PointQuery::signed_distance(&scene, p, f32::INFINITY, &s).map(f64::to_bits),
                "{name} point {k}"
            );
        }
    }
}

/// A scene's normals from the table are its whole hits' normals, bit for bit, under
/// rotations, non-uniform scales and mirrors.
fn placed_normals(name: &str, mesh: Mesh) {
    let bvh = Arc::new(Bvh::build(mesh));
    let mut scene = Scene::new();
    let (centre, radius) = frame(bvh.mesh());
    let placements = [
        Matrix4::new_rotation(nalgebra::Vector3::new(0.3, -1.1, 0.7)),
        Matrix4::new_nonuniform_scaling(&nalgebra::Vector3::new(2.0, 0.5, 1.5)),
        Matrix4::new_nonuniform_scaling(&nalgebra::Vector3::new(-1.0, 1.0, 1.0)),
    ];
    for (i, m) in placements.iter().enumerate() {
        let shift = Matrix4::new_translation(&(nalgebra::Vector3::x() * (i as f32 * 3.0 * radius)));
        let to_origin = Matrix4::new_translation(&-centre.coords);
        scene.add(bvh.clone(), shift * m * to_origin).unwrap();
    }
    let mut rng = Rng::new(41);
    let world = scene.bounds();
    let mut hits = 0;
    for _ in 0..3000 {
        let at = |rng: &mut Rng| {
            nalgebra::Point3::new(
                rng.range(world.min.x, world.max.x),
                rng.range(world.min.y, world.max.y),
                rng.range(world.min.z, world.max.z),
            )
        };
        let (a, b) = (at(&mut rng), at(&mut rng));
        let ray = Ray::new(a, b - a);
        if let Some(h) = scene.cast_ray(&ray, RayQuery::Closest, &SceneOptions::default()) {
            hits += 1;
            let whole = RayCast::hit_details(&scene, &ray, &h).unwrap();
            assert_eq!(
                scene.hit_normal(&h),
                Some(whole.hit.normal),
                "{name}: {ray:?}"
            );
        }
    }
    assert!(hits > 300, "{name}: only {hits} hits");
}

#[test]
fn placed_normals_asset() {
    placed_normals("scene", Mesh::load(asset("scene.obj")).unwrap());
}

#[test]
fn a_refit_drops_the_normal_table() {
    let mut bvh = Bvh::build(Mesh::load(asset("scene.obj")).unwrap());
    let ray = Ray::new([0.0f32, 1.0, 10.0], [0.0f32, 0.0, -1.0]);
    let options = QueryOptions::default();
    let before = bvh.cast_ray(&ray, RayQuery::Closest, &options).unwrap();
    let n = bvh.hit_normal(&before).unwrap();
    // The scene turned a quarter about y: the same triangle faces another way.
    let turn = nalgebra::Rotation3::from_axis_angle(&nalgebra::Vector3::y_axis(), 1.0);
    let moved: Vec<_> = bvh.mesh().positions().iter().map(|p| turn * p).collect();
    bvh.refit(&moved).unwrap();
    let after = bvh.cast_ray(&ray, RayQuery::Closest, &options).unwrap();
    let whole = bvh.hit_details(&ray, &after).unwrap();
    assert_eq!(bvh.hit_normal(&after), Some(whole.normal));
    let (hit, raw) = bvh
        .cast_ray_normal(&ray, RayQuery::Closest, &options)
        .unwrap();
    assert_eq!(hit, after);
    assert!(
        (raw.normalize() - whole.normal.into_inner()).amax() < 1e-6,
        "the leaves follow the refit"
    );
    let same = CompactHit {
        triangle: before.triangle,
        ..after
    };
    assert_ne!(
        bvh.hit_normal(&same),
        Some(n),
        "the table follows the refit"
    );
}

#[test]
fn scene_asset() {
    check("scene", Mesh::load(asset("scene.obj")).unwrap());
}

#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
fn shared_meshes() {
    for name in [
        "stanford-bunny/stanford-bunny.obj",
        "crytek-sponza/sponza.obj",
        "conference/conference.obj",
    ] {
        let mesh = shared_mesh(name).expect("the shared meshes are there");
        placed_normals(name, mesh.clone());
        check(name, mesh);
    }
}
