//! Selection queries against brute force over every triangle: box, sphere, frustum (box
//! select) and visible-through-a-rectangle, on the scene and shared meshes; and the triangle
//! predicates against sampling.

mod common;

use common::{Chunks, Rng};
use meshray::geometry::Aabb;
use meshray::selection::Region;
use meshray::{Bvh, Camera, Mesh, QueryOptions};
use nalgebra::{Isometry3, Matrix4, Perspective3, Point2, Point3, Vector3};

fn brute(mesh: &Mesh, keep: impl Fn(&[Point3<f32>; 3]) -> bool) -> Vec<u32> {
    (0..mesh.triangle_count())
        .filter(|&i| keep(&mesh.triangle(i)))
        .map(|i| i as u32)
        .collect()
}

fn random_box(rng: &mut Rng, c: Point3<f32>, h: f32) -> Aabb {
    let centre = c + Vector3::new(
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
        rng.range(-1.0, 1.0),
    ) * h;
    let mut half = Vector3::new(rng.f32(), rng.f32(), rng.f32()) * (0.3 * h);
    if rng.below(8) == 0 {
        half[rng.below(3)] = 0.0; // a flat box
    }
    Aabb::new(centre - half, centre + half)
}

/// The standard camera of the tests' ray sets, 400×300.
fn camera(mesh: &Mesh) -> Camera {
    let (c, h) = common::frame(mesh);
    let eye = c + Vector3::new(0.45, 0.35, 1.0).normalize() * (2.2 * h);
    let view = Isometry3::look_at_rh(&eye, &c, &Vector3::y()).to_homogeneous();
    let projection =
        Perspective3::new(4.0 / 3.0, 45f32.to_radians(), 0.01 * h, 10.0 * h).to_homogeneous();
    Camera::new(view, projection, [400.0, 300.0]).unwrap()
}

fn check(name: &str, mesh: Mesh) {
    let bvh = Bvh::build(mesh.clone());
    let (c, h) = common::frame(&mesh);
    let mut rng = Rng::new(2026);
    let mut selected = 0;
    for _ in 0..12 {
        let b = random_box(&mut rng, c, h);
        let region = Region::Box(b);
        let want = brute(&mesh, |&[p, q, r]| region.overlaps_triangle(p, q, r));
        assert_eq!(bvh.triangles_in(&region), want, "{name} box {b:?}");
        selected += want.len();
        let centre = c + rng.unit_vector() * (rng.f32() * h);
        let radius = rng.f32() * 0.4 * h;
        let region = Region::Sphere { centre, radius };
        let want = brute(&mesh, |&[p, q, r]| region.overlaps_triangle(p, q, r));
        assert_eq!(bvh.triangles_in(&region), want, "{name} sphere");
        selected += want.len();
    }
    let camera = camera(&mesh);
    let chunks = Chunks::new(&mesh);
    let options = QueryOptions::default();
    for _ in 0..4 {
        let a = Point2::new(rng.range(0.0, 400.0), rng.range(0.0, 300.0));
        let b = Point2::new(
            (a.x + rng.range(5.0, 120.0)).min(400.0),
            (a.y + rng.range(5.0, 90.0)).min(300.0),
        );
        let frustum = Region::Frustum(camera.frustum(a, b).unwrap());
        let want = brute(&mesh, |&[p, q, r]| frustum.overlaps_triangle(p, q, r));
        let all = bvh.triangles_in(&frustum);
        assert_eq!(all, want, "{name} frustum {a} {b}");
        for samples in [1, 2] {
            let visible =
                meshray::picking::visible_triangles(&bvh, &camera, a, b, samples, &options)
                    .unwrap();
            // Brute force: every sample ray's first triangle over every triangle.
            let mut seen = Vec::new();
            let step = 1.0 / samples as f32;
            for j in 0..300 {
                for i in 0..400 {
                    for sy in 0..samples {
                        for sx in 0..samples {
                            let x = i as f32 + (sx as f32 + 0.5) * step;
                            let y = j as f32 + (sy as f32 + 0.5) * step;
                            if x < a.x || x >= b.x || y < a.y || y >= b.y {
                                continue;
                            }
                            let ray = camera.pixel_ray(Point2::new(x, y)).unwrap();
                            if let Some(&(_, t)) =
                                common::brute_all_f32(&mesh, &chunks, &ray, &options).first()
                            {
                                seen.push(t);
                            }
                        }
                    }
                }
            }
            seen.sort_unstable();
            seen.dedup();
            // Equal, but for exact ties where the BVH may name the other triangle at the same t.
            let extra: Vec<_> = visible.iter().filter(|t| !seen.contains(t)).collect();
            let missing: Vec<_> = seen.iter().filter(|t| !visible.contains(t)).collect();
            assert!(
                extra.len() <= 2 && missing.len() <= 2,
                "{name} visible {a} {b} x{samples}: extra {extra:?}, missing {missing:?}"
            );
            assert!(
                visible.iter().all(|t| all.binary_search(t).is_ok()),
                "visible ⊆ frustum"
            );
            selected += visible.len();
        }
    }
    assert!(
        selected > 100,
        "{name}: the queries must select something ({selected})"
    );
}

#[test]
fn selections_equal_brute_force_on_the_scene() {
    check("scene", Mesh::load(common::asset("scene.obj")).unwrap());
}

#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
fn selections_equal_brute_force_on_shared_meshes() {
    for name in ["spot/spot.obj", "stanford-bunny/stanford-bunny.obj"] {
        let Some(mesh) = common::shared_mesh(name) else {
            return;
        };
        check(name, mesh);
    }
}

/// The predicates never miss a triangle that has a sampled point well inside the region,
/// and never select one whose box lies apart from it.
#[test]
fn predicates_agree_with_sampling() {
    let mut rng = Rng::new(9);
    let (mut inside, mut apart) = (0, 0);
    for _ in 0..5000 {
        let p = |rng: &mut Rng| {
            Point3::new(
                rng.range(-2.0, 2.0),
                rng.range(-2.0, 2.0),
                rng.range(-2.0, 2.0),
            )
        };
        let (a, b, c) = (p(&mut rng), p(&mut rng), p(&mut rng));
        let bx = random_box(&mut rng, Point3::origin(), 2.0);
        let tri_box = Aabb::new(a.inf(&b).inf(&c), a.sup(&b).sup(&c));
        let overlaps = Region::Box(bx).overlaps_triangle(a, b, c);
        if !(0..3).all(|k| tri_box.min[k] <= bx.max[k] && bx.min[k] <= tri_box.max[k]) {
            assert!(!overlaps, "boxes apart");
            apart += 1;
        }
        let margin = 1e-4;
        let sample_inside = (0..200).any(|_| {
            let (mut u, mut v) = (rng.f32(), rng.f32());
            if u + v > 1.0 {
                (u, v) = (1.0 - u, 1.0 - v);
            }
            let s = a + (b - a) * u + (c - a) * v;
            (0..3).all(|k| s[k] > bx.min[k] + margin && s[k] < bx.max[k] - margin)
        });
        if sample_inside {
            assert!(overlaps, "a point of the triangle is inside the box");
            inside += 1;
        }
        // Sphere: the centre on the triangle is always within any radius.
        let on = a + (b - a) * 0.25 + (c - a) * 0.25;
        let ball = Region::Sphere {
            centre: on,
            radius: 1e-3,
        };
        assert!(ball.overlaps_triangle(a, b, c));
    }
    assert!(
        inside > 100 && apart > 100,
        "{inside} inside, {apart} apart"
    );
}

#[test]
fn bad_regions_select_nothing() {
    let bvh = Bvh::build(Mesh::load(common::asset("scene.obj")).unwrap());
    let nan = Aabb::new(Point3::new(f32::NAN, 0.0, 0.0), Point3::new(1.0, 1.0, 1.0));
    let sphere = |centre: Point3<f32>, radius| Region::Sphere { centre, radius };
    for region in [
        Region::Box(nan),
        Region::Box(Aabb::EMPTY),
        sphere(Point3::origin(), f32::NAN),
        sphere(Point3::new(f32::INFINITY, 0.0, 0.0), 1.0),
        sphere(Point3::origin(), -1.0),
    ] {
        assert!(bvh.triangles_in(&region).is_empty(), "{region:?}");
    }
    let camera = camera(bvh.mesh());
    let p = Point2::new(10.0, 10.0);
    assert!(camera.frustum(p, p).is_err());
    assert!(Camera::new(Matrix4::identity(), Matrix4::zeros(), [400.0, 300.0]).is_err());
    let options = QueryOptions::default();
    let zero_samples =
        meshray::picking::visible_triangles(&bvh, &camera, p, Point2::new(20.0, 20.0), 0, &options);
    assert!(zero_samples.is_err());
}
