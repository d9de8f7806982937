//! Scenes against an f64 brute force over every transformed triangle: random scenes of
//! shared meshes with rotations, non-uniform scales, mirrors, disabled instances and masks;
//! moving an instance keeps its BVH; bad transforms and ids are errors.

mod common;

use common::Rng;
use meshray::prelude::*;
use meshray::selection::Region;
use meshray::{
    Bvh, Camera, Culling, Error, Mesh, QueryOptions, Ray, RayQuery, Scene, SceneOptions,
};
use nalgebra::{Matrix4, Point3, Rotation3, Vector3};
use std::sync::Arc;

/// One world-space hit of the oracle.
#[derive(Clone, Copy, Debug)]
struct Exact {
    t: f64,
    instance: u32,
    triangle: u32,
    /// Within 1e-5 (barycentric) of an edge: f32 may answer either way.
    borderline: bool,
    normal: Vector3<f64>,
}

struct Placed {
    mesh: Arc<Bvh>,
    transform: Matrix4<f32>,
    mask: u32,
}

fn oracle(placed: &[Placed], ray: &Ray, options: &SceneOptions) -> Vec<Exact> {
    let o = ray.origin().cast::<f64>();
    let d = ray.direction().cast::<f64>();
    let mut out = Vec::new();
    for (id, p) in placed.iter().enumerate() {
        if p.mask & options.mask == 0 || options.filter.is_some_and(|f| !f(id as u32)) {
            continue;
        }
        let m = p.transform.cast::<f64>();
        // A mirror keeps the mesh's front side in front: the world winding turns over.
        let mirrored = m.fixed_view::<3, 3>(0, 0).determinant() < 0.0;
        let mesh = p.mesh.mesh();
        for i in 0..mesh.triangle_count() {
            let [a, b, c] = mesh
                .triangle(i)
                .map(|q| m.transform_point(&q.cast::<f64>()));
            let (b, c) = if mirrored { (c, b) } else { (b, c) };
            let (e1, e2) = (b - a, c - a);
            let n = e1.cross(&e2);
            let det = -n.dot(&d);
            if det == 0.0 {
                continue;
            }
            match options.query.culling {
                Culling::Back if det < 0.0 => continue,
                Culling::Front if det > 0.0 => continue,
                _ => {}
            }
            let s = o - a;
            let w = d.cross(&s);
            let u = -e2.dot(&w) / det;
            let v = e1.dot(&w) / det;
            let t = n.dot(&s) / det;
            let margin = u.min(v).min(1.0 - u - v);
            if margin < -1e-5 || t < f64::from(ray.t_min()) || t > f64::from(ray.t_max()) {
                continue;
            }
            out.push(Exact {
                t,
                instance: id as u32,
                triangle: i as u32,
                borderline: margin <= 1e-5,
                normal: n.normalize(),
            });
        }
    }
    out.sort_by(|a, b| a.t.total_cmp(&b.t));
    out
}

fn random_transform(rng: &mut Rng, spread: f32, mirror: bool) -> Matrix4<f32> {
    let axis = rng.unit_vector();
    let rotation = Rotation3::from_axis_angle(
        &nalgebra::Unit::new_normalize(axis),
        rng.range(0.0, std::f32::consts::TAU),
    );
    let mut scale = Vector3::new(
        rng.range(0.5, 2.0),
        rng.range(0.5, 2.0),
        rng.range(0.5, 2.0),
    );
    if mirror {
        scale.x = -scale.x;
    }
    let translation = Vector3::new(
        rng.range(-spread, spread),
        rng.range(-spread, spread),
        rng.range(-spread, spread),
    );
    Matrix4::new_translation(&translation)
        * rotation.to_homogeneous()
        * Matrix4::new_nonuniform_scaling(&scale)
}

fn check_scene(meshes: &[Arc<Bvh>], seed: u64) {
    let mut rng = Rng::new(seed);
    let mut scene = Scene::new();
    let mut placed = Vec::new();
    let spread = 3.0;
    for k in 0..8 {
        let mesh = meshes[k % meshes.len()].clone();
        // Scale each mesh to about unit size first.
        let (c, h) = common::frame(mesh.mesh());
        let fit = Matrix4::new_scaling(1.0 / h) * Matrix4::new_translation(&-c.coords);
        let transform = random_transform(&mut rng, spread, k % 3 == 2) * fit;
        let id = scene.add(mesh.clone(), transform).unwrap();
        assert_eq!(id as usize, k);
        // Instance 5 hidden from every query (mask 0).
        let mask = match k {
            5 => 0,
            _ if k % 4 == 1 => 0b10,
            _ => 0b01,
        };
        scene.set_mask(id, mask).unwrap();
        placed.push(Placed {
            mesh,
            transform,
            mask,
        });
    }
    let not_three = |id| id != 3;
    let options_set = [
        SceneOptions::default(),
        SceneOptions {
            filter: Some(&not_three),
            ..Default::default()
        },
        SceneOptions {
            mask: 0b01,
            ..Default::default()
        },
        SceneOptions {
            query: QueryOptions {
                culling: Culling::Back,
                watertight: true,
            },
            ..Default::default()
        },
    ];
    let (mut compared, mut borderline, mut hits) = (0, 0, 0);
    for options in &options_set {
        for _ in 0..700 {
            let origin = Point3::new(
                rng.range(-6.0, 6.0),
                rng.range(-6.0, 6.0),
                rng.range(-6.0, 6.0),
            );
            let target = Point3::new(
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
                rng.range(-3.0, 3.0),
            );
            let ray = Ray::new(origin, target - origin);
            let exact = oracle(&placed, &ray, options);
            if exact.iter().any(|e| e.borderline) {
                borderline += 1;
                continue;
            }
            compared += 1;
            let got = scene.closest_hit(&ray, options);
            // The compact query finds the same hit; the any-hit one, a hit exactly when it.
            let compact = scene.cast_ray(&ray, RayQuery::Closest, options);
            assert_eq!(
                compact.map(|c| (c.instance, c.hit.triangle, c.hit.t, c.hit.u, c.hit.v)),
                got.map(|g| (g.instance, g.hit.triangle, g.hit.t, g.hit.u, g.hit.v)),
                "{ray:?}"
            );
            let some = scene.cast_ray(&ray, RayQuery::Any, options);
            assert_eq!(some.is_some(), got.is_some(), "{ray:?}");
            let all = scene.all_hits(&ray, options);
            let mut compact = Vec::new();
            scene.all_triangles(&ray, options, &mut compact);
            assert_eq!(
                compact
                    .iter()
                    .map(|c| (c.instance, c.hit.triangle, c.hit.t))
                    .collect::<Vec<_>>(),
                all.iter()
                    .map(|h| (h.instance, h.hit.triangle, h.hit.t))
                    .collect::<Vec<_>>(),
                "{ray:?}"
            );
            assert_eq!(all.len(), exact.len(), "all hits of {ray:?}");
            assert_eq!(
                scene.count_hits(&ray, options),
                exact.len(),
                "count of {ray:?}"
            );
            match exact.first() {
                None => {
                    assert!(got.is_none(), "oracle misses: {ray:?}");
                    assert!(scene.any_hit(&ray, options).is_none());
                }
                Some(e) => {
                    hits += 1;
                    let g = got.expect("oracle hits");
                    let tol = 1e-4 * e.t.max(1.0);
                    assert!(
                        (f64::from(g.hit.t) - e.t).abs() <= tol,
                        "t {} vs {}",
                        g.hit.t,
                        e.t
                    );
                    let same = (g.instance, g.hit.triangle) == (e.instance, e.triangle);
                    let tie = exact.iter().any(|x| {
                        (x.instance, x.triangle) == (g.instance, g.hit.triangle)
                            && (x.t - e.t).abs() <= tol
                    });
                    assert!(
                        same || tie,
                        "{ray:?}: got {:?}, want {e:?}",
                        (g.instance, g.hit.triangle)
                    );
                    let at = ray.at(g.hit.t);
                    assert!(
                        (g.hit.point - at).norm() <= 1e-3 * (1.0 + at.coords.norm()),
                        "point"
                    );
                    if same {
                        let n = g.hit.normal.into_inner().cast::<f64>();
                        assert!(
                            (n - e.normal).norm() < 1e-3,
                            "normal {n:?} vs {:?}",
                            e.normal
                        );
                        assert_eq!(
                            g.hit.front_face,
                            e.normal.dot(&ray.direction().cast::<f64>()) < 0.0
                        );
                    }
                    let any = scene.any_hit(&ray, options).expect("something is hit");
                    assert!(
                        exact
                            .iter()
                            .any(|x| (x.instance, x.triangle) == (any.instance, any.hit.triangle))
                    );
                }
            }
        }
    }
    assert!(
        compared > 2000 && hits > 400,
        "{compared} compared, {hits} hits"
    );
    assert!(borderline * 20 < compared, "{borderline} borderline rays");
}

fn meshes() -> Vec<Arc<Bvh>> {
    let mut out = vec![Arc::new(Bvh::build(
        Mesh::load(common::asset("scene.obj")).unwrap(),
    ))];
    for name in ["spot/spot.obj", "teapot/teapot.obj"] {
        if let Some(mesh) = common::shared_mesh(name) {
            out.push(Arc::new(Bvh::build(mesh)));
        }
    }
    out
}

#[test]
fn scenes_equal_an_f64_brute_force() {
    let meshes = meshes();
    for seed in [1, 2] {
        check_scene(&meshes, seed);
    }
}

#[test]
fn moving_an_instance_keeps_its_bvh() {
    let bvh = Arc::new(Bvh::build(Mesh::load(common::asset("scene.obj")).unwrap()));
    let mut scene = Scene::new();
    let id = scene.add(bvh.clone(), Matrix4::identity()).unwrap();
    let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), -Vector3::z());
    let before = scene
        .closest_hit(&ray, &SceneOptions::default())
        .unwrap()
        .hit
        .t;
    scene
        .set_transform(id, Matrix4::new_translation(&Vector3::new(0.0, 0.0, -2.0)))
        .unwrap();
    let after = scene
        .closest_hit(&ray, &SceneOptions::default())
        .unwrap()
        .hit
        .t;
    assert!((after - before - 2.0).abs() < 1e-4, "{before} -> {after}");
    assert!(
        Arc::ptr_eq(scene.instance(id).unwrap().bvh, &bvh),
        "the mesh BVH is shared, not rebuilt"
    );
}

#[test]
fn bad_transforms_and_ids_are_errors() {
    let bvh = Arc::new(Bvh::build(Mesh::load(common::asset("scene.obj")).unwrap()));
    let mut scene = Scene::new();
    assert!(
        scene
            .closest_hit(
                &Ray::new(Point3::origin(), Vector3::x()),
                &SceneOptions::default()
            )
            .is_none()
    );
    for bad in [
        Matrix4::zeros(),
        Matrix4::new_nonuniform_scaling(&Vector3::new(1.0, 0.0, 1.0)),
        Matrix4::from_element(f32::NAN),
        {
            let mut m = Matrix4::identity();
            m[(3, 0)] = 0.5; // projective
            m
        },
    ] {
        assert!(matches!(
            scene.add(bvh.clone(), bad),
            Err(Error::InvalidTransform { .. })
        ));
    }
    let id = scene.add(bvh, Matrix4::identity()).unwrap();
    assert!(matches!(
        scene.set_transform(id, Matrix4::zeros()),
        Err(Error::InvalidTransform { .. })
    ));
    assert!(matches!(
        scene.set_mask(7, 0),
        Err(Error::UnknownInstance { id: 7, count: 1 })
    ));
    let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), -Vector3::z());
    assert!(
        scene.closest_hit(&ray, &SceneOptions::default()).is_some(),
        "unchanged after errors"
    );
}

#[test]
fn closest_point_equals_an_f64_brute_force_under_any_affine_transform() {
    let meshes = meshes();
    let mut rng = Rng::new(5);
    let mut scene = Scene::new();
    let mut placed = Vec::new();
    for k in 0..6 {
        let mesh = meshes[k % meshes.len()].clone();
        let (c, h) = common::frame(mesh.mesh());
        let fit = Matrix4::new_scaling(1.0 / h) * Matrix4::new_translation(&-c.coords);
        let transform = random_transform(&mut rng, 3.0, k % 3 == 1) * fit;
        scene.add(mesh.clone(), transform).unwrap();
        let mask = if k == 4 { 0b10 } else { 0b01 };
        scene.set_mask(k as u32, mask).unwrap();
        placed.push((mesh, transform.cast::<f64>(), mask));
    }
    for _ in 0..60 {
        let q = Point3::new(
            rng.range(-5.0, 5.0),
            rng.range(-5.0, 5.0),
            rng.range(-5.0, 5.0),
        );
        let qp = [q.x as f64, q.y as f64, q.z as f64];
        let (mut best, mut distances) = (f64::INFINITY, Vec::new());
        for (id, (bvh, m, mask)) in placed.iter().enumerate() {
            if mask & 0b01 == 0 {
                continue;
            }
            let mesh = bvh.mesh();
            for i in 0..mesh.triangle_count() {
                let [a, b, c] = mesh
                    .triangle(i)
                    .map(|p| m.transform_point(&p.cast::<f64>()))
                    .map(|p| [p.x, p.y, p.z]);
                let d = common::point_triangle_distance(qp, a, b, c);
                best = best.min(d);
                distances.push(((id as u32, i as u32), d));
            }
        }
        let ones = SceneOptions {
            mask: 0b01,
            ..Default::default()
        };
        let found = scene
            .closest_point(q, f32::INFINITY, &ones)
            .expect("a scene is somewhere");
        let (id, got) = (found.instance, found.closest);
        let tol = 1e-9 + 1e-6 * best;
        assert!(
            (f64::from(got.distance) - best).abs() <= tol,
            "{} vs {best}",
            got.distance
        );
        let mine = distances
            .iter()
            .find(|(key, _)| *key == (id, got.triangle))
            .expect("a placed triangle")
            .1;
        assert!(
            (mine - best).abs() <= tol,
            "the reported triangle is among the nearest"
        );
        assert!(((got.point - q).norm() - got.distance).abs() <= 1e-4 * (1.0 + got.distance));
        assert_ne!(id, 4, "masked out");
        assert!(
            scene
                .closest_point(q, (best * 0.99) as f32, &ones)
                .is_none()
        );
    }
}

/// Box against triangle by the separating axis test, in f64, written apart from the crate's:
/// the box's three normals, the triangle's normal and the nine edge cross products.
fn box_overlaps_triangle(lo: [f64; 3], hi: [f64; 3], t: [[f64; 3]; 3]) -> bool {
    let sub = |a: [f64; 3], b: [f64; 3]| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let cross = |a: [f64; 3], b: [f64; 3]| {
        [
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ]
    };
    let dot = |a: [f64; 3], b: [f64; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let edges = [sub(t[1], t[0]), sub(t[2], t[1]), sub(t[0], t[2])];
    let units = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    let mut axes = units.to_vec();
    axes.push(cross(edges[0], edges[1]));
    for e in edges {
        for u in units {
            axes.push(cross(e, u));
        }
    }
    axes.iter().all(|&axis| {
        let tri = t.map(|p| dot(axis, p));
        let (tmin, tmax) = (
            tri.iter().copied().fold(f64::INFINITY, f64::min),
            tri.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let (mut bmin, mut bmax) = (0.0, 0.0);
        for a in 0..3 {
            let (x, y) = (axis[a] * lo[a], axis[a] * hi[a]);
            bmin += x.min(y);
            bmax += x.max(y);
        }
        !(tmax < bmin || bmax < tmin)
    })
}

#[test]
fn selections_equal_an_f64_brute_force_under_any_affine_transform() {
    let meshes = meshes();
    let mut rng = Rng::new(11);
    let mut scene = Scene::new();
    let mut placed = Vec::new();
    for k in 0..7 {
        let mesh = meshes[k % meshes.len()].clone();
        let (c, h) = common::frame(mesh.mesh());
        let fit = Matrix4::new_scaling(1.0 / h) * Matrix4::new_translation(&-c.coords);
        let transform = random_transform(&mut rng, 2.0, k % 3 == 1) * fit;
        let id = scene.add(mesh.clone(), transform).unwrap();
        let mask = if k == 4 { 0b10 } else { 0b01 };
        scene.set_mask(id, mask).unwrap();
        placed.push((mesh, transform.cast::<f64>(), mask));
    }
    let not_two = |id| id != 2;
    let options = SceneOptions {
        mask: 0b01,
        filter: Some(&not_two),
        ..Default::default()
    };
    // Every triangle the options let through, in world space.
    let mut world = Vec::new();
    for (id, (bvh, m, mask)) in placed.iter().enumerate() {
        if mask & 0b01 == 0 || id == 2 {
            continue;
        }
        let mesh = bvh.mesh();
        for i in 0..mesh.triangle_count() {
            let corners = mesh
                .triangle(i)
                .map(|p| m.transform_point(&p.cast::<f64>()))
                .map(|p| [p.x, p.y, p.z]);
            world.push(((id as u32, i as u32), corners));
        }
    }
    let (mut boxes_found, mut spheres_found) = (0, 0);
    for round in 0..40 {
        let centre = Point3::new(
            rng.range(-2.5, 2.5),
            rng.range(-2.5, 2.5),
            rng.range(-2.5, 2.5),
        );
        let half = Vector3::new(
            rng.range(0.05, 1.0),
            rng.range(0.05, 1.0),
            rng.range(0.05, 1.0),
        );
        let region = meshray::geometry::Aabb::new(centre - half, centre + half);
        let got: Vec<_> = scene
            .triangles_in(&Region::Box(region), &options)
            .iter()
            .map(|t| (t.instance, t.triangle))
            .collect();
        let (lo, hi) = (region.min.cast::<f64>(), region.max.cast::<f64>());
        let want: Vec<_> = world
            .iter()
            .filter(|(_, t)| box_overlaps_triangle([lo.x, lo.y, lo.z], [hi.x, hi.y, hi.z], *t))
            .map(|(key, _)| *key)
            .collect();
        assert_eq!(got, want, "box {round}: {region:?}");
        boxes_found += got.len();

        let radius = rng.range(0.05, 1.2);
        let got: Vec<_> = scene
            .triangles_in(&Region::Sphere { centre, radius }, &options)
            .iter()
            .map(|t| (t.instance, t.triangle))
            .collect();
        let c = [centre.x as f64, centre.y as f64, centre.z as f64];
        let r = f64::from(radius);
        for ((key, t), inside) in world
            .iter()
            .map(|(key, t)| {
                let d = common::point_triangle_distance(c, t[0], t[1], t[2]);
                ((key, t), d)
            })
            .map(|((key, t), d)| ((key, t), (d - r, got.binary_search(key).is_ok())))
        {
            let (margin, selected) = inside;
            // The oracle's distance takes another route: a few ulps either way of the radius
            // may answer either way.
            if margin.abs() > 1e-12 * (1.0 + r) {
                assert_eq!(selected, margin <= 0.0, "sphere {round}: {key:?} {t:?}");
            }
        }
        spheres_found += got.len();
    }
    assert!(
        boxes_found > 1000 && spheres_found > 1000,
        "{boxes_found} {spheres_found}"
    );
    // The frustum selection holds every visible triangle, and the visible ones are hits.
    let view = nalgebra::Isometry3::look_at_rh(
        &Point3::new(0.5, 1.0, 8.0),
        &Point3::origin(),
        &Vector3::y(),
    )
    .to_homogeneous();
    let projection = nalgebra::Perspective3::new(1.0, 0.9, 0.1, 100.0).to_homogeneous();
    let camera = Camera::new(view, projection, [120.0, 120.0]).unwrap();
    let (a, b) = (
        nalgebra::Point2::new(30.0, 40.0),
        nalgebra::Point2::new(90.0, 80.0),
    );
    let frustum = Region::Frustum(camera.frustum(a, b).unwrap());
    let inside = scene.triangles_in(&frustum, &options);
    let visible = meshray::picking::visible_triangles(&scene, &camera, a, b, 1, &options).unwrap();
    assert!(visible.len() > 20 && inside.len() > visible.len());
    assert!(visible.iter().all(|t| inside.binary_search(t).is_ok()));
    // Against the frustum test on each world triangle rounded to f32: the same set but for
    // triangles the rounding moves across a plane.
    let rounded: Vec<_> = world
        .iter()
        .filter(|(_, t)| {
            let [p, q, r] = t.map(|c| Point3::new(c[0] as f32, c[1] as f32, c[2] as f32));
            frustum.overlaps_triangle(p, q, r)
        })
        .map(|(key, _)| *key)
        .collect();
    let got: Vec<_> = inside.iter().map(|t| (t.instance, t.triangle)).collect();
    let differ = got
        .iter()
        .filter(|k| rounded.binary_search(k).is_err())
        .count()
        + rounded
            .iter()
            .filter(|k| got.binary_search(k).is_err())
            .count();
    assert!(
        differ * 1000 <= got.len(),
        "{differ} of {} differ",
        got.len()
    );
}
