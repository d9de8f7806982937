//! Sweeps (`meshray::query::Sweep`): every sphere and capsule cast equals an f64 brute force
//! over every triangle — found here by another route than the crate's closed forms: the
//! distance from the moving shape to a triangle is convex in time, so its first contact is
//! found by a golden-section search for the nearest approach and bisection before it, on a
//! point–triangle distance of this file's own — on the project's scene, the shared meshes
//! and random soups, with starting-in-contact and grazing cases, under culling; a scene
//! answers the same through rotations, non-uniform scales and mirrors; bad shapes are
//! refused with a typed error.
mod common;

use common::*;
use meshray::query::{RayCast, Sweep, SweepHit};
use meshray::{Bvh, Culling, Error, Mesh, QueryOptions, Ray, Scene, SceneOptions};
use nalgebra::{Matrix4, Point3, Unit, Vector3};
use std::sync::Arc;

type P = [f64; 3];

fn sub(a: P, b: P) -> P {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn add_scaled(a: P, d: P, s: f64) -> P {
    [a[0] + s * d[0], a[1] + s * d[1], a[2] + s * d[2]]
}

fn norm(a: P) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

/// A moving capsule in f64: axis from `start + τ·dir` to that plus `axis`.
#[derive(Clone, Copy, Debug)]
struct Shape {
    start: P,
    axis: P,
    dir: P,
    radius: f64,
}

impl Shape {
    fn of(ray: &Ray, axis: [f32; 3], radius: f32) -> Shape {
        let (o, d) = (ray.origin(), ray.direction());
        let dir = [d.x, d.y, d.z].map(f64::from);
        let o = [o.x, o.y, o.z].map(f64::from);
        Shape {
            start: add_scaled(o, dir, f64::from(ray.t_min())),
            axis: axis.map(f64::from),
            dir,
            radius: f64::from(radius),
        }
    }

    /// The distance from the axis at `τ` to the triangle (convex along the axis, so the
    /// nearest point of the axis by golden section; a sphere's is its centre's).
    fn distance(&self, tau: f64, [a, b, c]: [P; 3]) -> f64 {
        let start = add_scaled(self.start, self.dir, tau);
        let at = |s: f64| point_triangle_distance(add_scaled(start, self.axis, s), a, b, c);
        if self.axis == [0.0; 3] {
            return at(0.0);
        }
        golden(0.0, 1.0, at).1.min(at(0.0)).min(at(1.0))
    }

    /// How long until the shape is past the triangle for good (its distance only grows
    /// after): the nearest approach lies before.
    fn horizon(&self, tri: [P; 3]) -> f64 {
        let speed = norm(self.dir);
        let far = tri
            .iter()
            .map(|p| norm(sub(*p, self.start)))
            .fold(0.0, f64::max);
        (far + norm(self.axis) + self.radius) / speed * 1.01 + 1e-9
    }

    /// The reference first contact with one triangle in `[0, limit]`, and the nearest
    /// approach's distance minus the radius (how clear a miss or a graze is).
    fn contact(&self, tri: [P; 3], limit: f64) -> (Option<f64>, f64) {
        let d0 = self.distance(0.0, tri);
        if d0 <= self.radius {
            return (Some(0.0), d0 - self.radius);
        }
        let end = self.horizon(tri).min(limit);
        let (nearest, d) = golden(0.0, end, |t| self.distance(t, tri));
        let (nearest, d) = if self.distance(end, tri) < d {
            (end, self.distance(end, tri))
        } else {
            (nearest, d)
        };
        if d > self.radius {
            return (None, d - self.radius);
        }
        let (mut lo, mut hi) = (0.0, nearest);
        for _ in 0..100 {
            let mid = (lo + hi) / 2.0;
            if self.distance(mid, tri) <= self.radius {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        (Some(hi), d - self.radius)
    }
}

/// Whether `culling` keeps triangle `tri` against motion `dir` (the crate's documented
/// rule: back faces are met from behind, `n·d ≥ 0`).
fn kept(culling: Culling, [a, b, c]: [P; 3], dir: P) -> bool {
    let (e1, e2) = (sub(b, a), sub(c, a));
    let n = [
        e1[1] * e2[2] - e1[2] * e2[1],
        e1[2] * e2[0] - e1[0] * e2[2],
        e1[0] * e2[1] - e1[1] * e2[0],
    ];
    let rate = n[0] * dir[0] + n[1] * dir[1] + n[2] * dir[2];
    match culling {
        Culling::None => true,
        Culling::Back => rate < 0.0,
        Culling::Front => rate > 0.0,
    }
}

/// When the shape's path first comes near `tri` (its box grown by the shape's reach,
/// generously), if it does in `[0, limit]`: a lower bound of its contact's `τ`, the brute
/// force's only shortcut (it tests triangles in that order and stops past the answer).
fn near(s: &Shape, tri: &[P; 3], limit: f64) -> Option<f64> {
    let (mut enter, mut exit) = (0.0f64, limit);
    for k in 0..3 {
        let lo = tri.iter().map(|p| p[k]).fold(f64::INFINITY, f64::min);
        let hi = tri.iter().map(|p| p[k]).fold(f64::NEG_INFINITY, f64::max);
        let pad = s.radius * 1.01 + 1e-6 * (lo.abs() + hi.abs() + 1.0);
        let (lo, hi) = (lo - s.axis[k].max(0.0) - pad, hi - s.axis[k].min(0.0) + pad);
        let (o, d) = (s.start[k], s.dir[k]);
        if d == 0.0 {
            if o < lo || o > hi {
                return None;
            }
            continue;
        }
        let (t0, t1) = ((lo - o) / d, (hi - o) / d);
        enter = enter.max(t0.min(t1));
        exit = exit.min(t0.max(t1));
    }
    (enter <= exit).then_some(enter)
}

/// Checks one sweep's answer against the brute force over `tris`: the same `t` (relative
/// 1e-6) on a triangle whose own contact is then, or both none; a disagreement only at a
/// graze (the nearest approach within 1e-9 of the scene's size of the radius).
#[allow(clippy::too_many_arguments)]
fn check(
    label: &str,
    s: &Shape,
    t_min: f64,
    t_max: f64,
    tris: &[[P; 3]],
    culling: Culling,
    got: Option<(u32, f32)>,
    size: f64,
) -> bool {
    let limit = t_max - t_min;
    let graze = 1e-9 * size;
    let mut best: Option<(f64, u32)> = None;
    let mut contacts = Vec::new();
    let mut order: Vec<(f64, usize)> = tris
        .iter()
        .enumerate()
        .filter(|(_, tri)| kept(culling, **tri, s.dir))
        .filter_map(|(i, tri)| near(s, tri, limit).map(|entry| (entry, i)))
        .collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0));
    let got_tau = got.map_or(0.0, |(_, t)| f64::from(t) - t_min);
    for (entry, i) in order {
        // Past both answers (with room for their tolerance), no contact can come earlier.
        let past = best.map_or(f64::INFINITY, |(b, _)| b).max(got_tau);
        if entry > past * (1.0 + 1e-5) + 1e-5 * size / norm(s.dir) {
            break;
        }
        let tri = &tris[i];
        let (tau, clearance) = s.contact(*tri, limit);
        contacts.push((i as u32, tau, clearance));
        if let Some(tau) = tau
            && best.is_none_or(|(b, _)| tau < b)
        {
            best = Some((tau, i as u32));
        }
    }
    let speed = norm(s.dir);
    match (got, best) {
        (None, None) => false,
        (Some((triangle, t)), Some((tau, _))) => {
            let t_ref = t_min + tau;
            let tol = 1e-6 * t_ref.abs() + 1e-6 * size / speed;
            // Its own triangle touches then too (a tie may name another).
            let own = contacts.iter().find(|(i, ..)| *i == triangle);
            let own_ok = own.is_some_and(|&(_, tau_own, clearance)| {
                tau_own.is_some_and(|x| (t_min + x - f64::from(t)).abs() <= tol)
                    || clearance.abs() <= graze
            });
            let earlier_graze = contacts.iter().all(|&(_, tau_i, clearance)| {
                tau_i.is_none_or(|x| t_min + x >= f64::from(t) - tol) || clearance.abs() <= graze
            });
            assert!(
                own_ok && earlier_graze,
                "{label}: got t = {t} on {triangle}, the brute force {t_ref} ({s:?})"
            );
            true
        }
        (got, best) => {
            // Only a graze may be found by one and missed by the other.
            let grazes = contacts
                .iter()
                .filter(|(_, tau, _)| tau.is_some())
                .all(|&(_, _, clearance)| clearance.abs() <= graze);
            let found_grazes = got.is_none_or(|(triangle, _)| {
                contacts
                    .iter()
                    .any(|&(i, _, clearance)| i == triangle && clearance.abs() <= graze)
            });
            assert!(
                grazes && found_grazes,
                "{label}: got {got:?}, the brute force {best:?} ({s:?})"
            );
            got.is_some()
        }
    }
}

/// Random sweeps around a mesh: spheres and capsules of small and larger radii from
/// around it towards points of its box, some starting on its surface.
fn sweeps(mesh: &Mesh, n: usize, seed: u64) -> Vec<(Ray, [f32; 3], f32)> {
    let (_, h) = frame(mesh);
    let mut rng = Rng::new(seed);
    let mut rays = random_rays(mesh, n, &mut rng);
    rays.extend(surface_rays(mesh, n / 4, &mut rng));
    rays.into_iter()
        .enumerate()
        .map(|(k, ray)| {
            let radius = h * [0.002, 0.01, 0.05, 0.0][k % 4];
            let axis = if k % 3 == 0 {
                (rng.unit_vector() * (0.05 * h)).into()
            } else {
                [0.0; 3]
            };
            (ray, axis, radius)
        })
        .collect()
}

fn brute_force_mesh(name: &str, mesh: Mesh, n: usize) {
    let (_, h) = frame(&mesh);
    let tris = triangles64(&mesh, None);
    let bvh = Bvh::build(mesh);
    let mut hits = 0;
    for (k, (ray, axis, radius)) in sweeps(bvh.mesh(), n, 7).iter().enumerate() {
        let culling = [Culling::None, Culling::Back, Culling::Front][k % 3];
        let options = QueryOptions {
            culling,
            ..Default::default()
        };
        let got = bvh.cast_capsule(ray, *axis, *radius, &options).unwrap();
        if let Some(hit) = &got {
            check_hit(&bvh, ray, *axis, *radius, hit);
        }
        let s = Shape::of(ray, *axis, *radius);
        hits += usize::from(check(
            &format!("{name} sweep {k}"),
            &s,
            f64::from(ray.t_min()),
            f64::from(ray.t_max()),
            &tris,
            culling,
            got.map(|h| (h.triangle, h.t)),
            f64::from(h),
        ));
    }
    assert!(hits > n / 4, "{name}: only {hits} contacts");
}

/// A hit's details agree with each other: the point is on its triangle at its
/// barycentrics, the shape's axis at `t` is the radius away (or nearer, at `t_min`), the
/// normal is unit and points from the triangle to the shape.
fn check_hit(bvh: &Bvh, ray: &Ray, axis: [f32; 3], radius: f32, hit: &SweepHit) {
    let [a, b, c] = bvh.mesh().triangle(hit.triangle as usize);
    let at = a.coords * (1.0 - hit.u - hit.v) + b.coords * hit.u + c.coords * hit.v;
    let scale = a
        .coords
        .amax()
        .max(b.coords.amax())
        .max(c.coords.amax())
        .max(1.0);
    assert!((at - hit.point.coords).amax() <= 1e-5 * scale, "{hit:?}");
    assert!((hit.normal.norm() - 1.0).abs() < 1e-5);
    let s = Shape::of(ray, axis, radius);
    let tri = [a, b, c].map(|p| [p.x, p.y, p.z].map(f64::from));
    let tau = f64::from(hit.t) - f64::from(ray.t_min());
    let d = s.distance(tau.max(0.0), tri);
    let r = f64::from(radius);
    assert!(
        d <= r + 1e-5 * f64::from(scale),
        "{hit:?}: {d} from the triangle"
    );
    if hit.t > ray.t_min() {
        assert!(
            (d - r).abs() <= 1e-5 * f64::from(scale),
            "{hit:?}: {d} against {r}"
        );
    }
    // A sphere's normal is the way from the contact to its centre, where they are apart.
    if axis == [0.0; 3] {
        let away = ray.at(hit.t) - hit.point;
        if away.norm() > 1e-3 * scale {
            assert!(
                hit.normal.dot(&away.normalize()) > 0.999,
                "{hit:?}: the normal against {away:?}"
            );
        }
    }
}

#[test]
fn sweeps_match_a_brute_force_on_the_asset_scene() {
    brute_force_mesh("scene", Mesh::load(asset("scene.obj")).unwrap(), 400);
}

#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
fn sweeps_match_a_brute_force_on_shared_meshes() {
    for name in [
        "stanford-bunny/stanford-bunny.obj",
        "crytek-sponza/sponza.obj",
        "spot/spot.obj",
    ] {
        let mesh = shared_mesh(name).expect("the shared meshes are there");
        brute_force_mesh(name, mesh, 120);
    }
}

#[test]
fn sweeps_match_a_brute_force_on_random_soups() {
    let mut rng = Rng::new(3);
    for soup in 0..6 {
        let positions: Vec<Point3<f32>> = (0..300)
            .map(|_| {
                Point3::new(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                )
            })
            .collect();
        // Small triangles scattered about: each a corner and two nearby points.
        let mut points = Vec::new();
        let mut faces = Vec::new();
        for (i, p) in positions.iter().enumerate() {
            points.push(*p);
            points.push(p + rng.unit_vector() * 0.2);
            points.push(p + rng.unit_vector() * 0.2);
            faces.push([3 * i as u32, 3 * i as u32 + 1, 3 * i as u32 + 2]);
        }
        let mesh = Mesh::from_buffers(points, faces).unwrap();
        brute_force_mesh(&format!("soup {soup}"), mesh, 150);
    }
}

#[test]
fn starting_in_contact_grazing_and_ties() {
    // Two copies of one triangle in the plane z = 0, and a third above.
    let p = vec![
        Point3::new(0.0, 0.0, 0.0),
        Point3::new(1.0, 0.0, 0.0),
        Point3::new(0.0, 1.0, 0.0),
        Point3::new(0.0, 0.0, 2.0),
        Point3::new(1.0, 0.0, 2.0),
        Point3::new(0.0, 1.0, 2.0),
    ];
    let bvh = Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2], [0, 1, 2], [3, 4, 5]]).unwrap());
    let o = QueryOptions::default();
    // Falling onto the copies: the lower-numbered one, at t = 1 − 0.5.
    let hit = bvh
        .cast_sphere(&Ray::new([0.2, 0.2, 1.0], [0.0, 0.0, -1.0]), 0.5, &o)
        .unwrap();
    let hit = hit.unwrap();
    assert_eq!((hit.triangle, hit.t), (0, 0.5));
    assert_eq!(hit.normal.into_inner(), Vector3::z());
    // Already touching at t_min (the boundary counts): reported there, moving either way.
    for d in [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]] {
        let ray = Ray::with_range([0.2, 0.2, 0.25], d, 0.5, 3.0);
        let start = Ray::with_range([0.2, 0.2, 0.25], d, 0.0, 3.0);
        let hit = bvh.cast_sphere(&start, 0.25, &o).unwrap().unwrap();
        assert_eq!((hit.triangle, hit.t), (0, 0.0));
        // From t_min = 0.5 on: moved up by 0.5 first, it is off the plane; sideways it
        // still touches.
        let later = bvh.cast_sphere(&ray, 0.25, &o).unwrap();
        if d[2] > 0.0 {
            // Up towards the third triangle at z = 2: touches at z = 1.75.
            assert_eq!(later.map(|h| (h.triangle, h.t)), Some((2, 1.5)));
        } else {
            assert_eq!(later.map(|h| (h.triangle, h.t)), Some((0, 0.5)));
        }
    }
    // Gliding along the plane exactly its radius above: touching all the way, from t_min.
    let glide = Ray::with_range([-2.0, 0.2, 0.5], [1.0, 0.0, 0.0], 0.0, 10.0);
    let hit = bvh.cast_sphere(&glide, 0.5, &o).unwrap().unwrap();
    assert_eq!(hit.triangle, 0);
    assert!((hit.t - 2.0).abs() < 1e-6, "{hit:?}");
    // A hair higher: never.
    let glide = Ray::with_range([-2.0, 0.2, 0.5001], [1.0, 0.0, 0.0], 0.0, 10.0);
    assert!(bvh.cast_sphere(&glide, 0.5, &o).unwrap().is_none());
    // Culling: from below, the back of the plane's triangles (their normal is +z).
    let up = Ray::new([0.2, 0.2, -1.0], [0.0, 0.0, 1.0]);
    let back = QueryOptions {
        culling: Culling::Back,
        ..o
    };
    assert!(bvh.cast_sphere(&up, 0.1, &back).unwrap().is_none());
    let front = QueryOptions {
        culling: Culling::Front,
        ..o
    };
    assert_eq!(
        bvh.cast_sphere(&up, 0.1, &front)
            .unwrap()
            .map(|h| h.triangle),
        Some(0)
    );
    // A zero radius is a ray: the same triangle and t as the ray's closest hit.
    let ray = Ray::new([0.3, 0.1, 5.0], [0.0, 0.0, -1.0]);
    let point = bvh.cast_sphere(&ray, 0.0, &o).unwrap().unwrap();
    let hit = bvh.closest_hit(&ray, &o).unwrap();
    assert_eq!((point.triangle, point.t), (hit.triangle, hit.t));
    assert_eq!(point.normal, hit.normal);
}

/// A sphere or capsule starting on a surface touches several triangles at once: the answer
/// is `t_min` and the lowest-numbered of them (ties go to the lowest triangle), whatever
/// order the tree holds them in. A wavy grid with its triangles shuffled, spheres and
/// capsules placed on random points of it, against the f64 distance to every triangle.
#[test]
fn a_shape_starting_on_a_surface_names_the_lowest_triangle_it_touches() {
    let grid = wavy_grid(24);
    let mut rng = Rng::new(43);
    let mut triangles = grid.triangles().to_vec();
    for k in (1..triangles.len()).rev() {
        triangles.swap(k, rng.below(k + 1));
    }
    let mesh = Mesh::from_buffers(grid.positions().to_vec(), triangles).unwrap();
    let tris = triangles64(&mesh, None);
    let bvh = Bvh::build(mesh);
    let o = QueryOptions::default();
    let (mut checked, mut several) = (0, 0);
    for (k, ray) in surface_rays(bvh.mesh(), 400, &mut rng).iter().enumerate() {
        let radius = [0.3f32, 0.7, 1.5][k % 3];
        let axis = if k % 4 == 0 {
            [0.4, 0.3, -0.2]
        } else {
            [0.0; 3]
        };
        let s = Shape::of(ray, axis, radius);
        let clearances: Vec<f64> = tris
            .iter()
            .map(|t| s.distance(0.0, *t) - s.radius)
            .collect();
        // A triangle at the radius itself (to rounding) could go either way: not judged.
        if clearances.iter().any(|c| c.abs() < 1e-9) {
            continue;
        }
        let touching: Vec<usize> = (0..tris.len()).filter(|&i| clearances[i] < 0.0).collect();
        let Some(&lowest) = touching.first() else {
            continue;
        };
        let hit = bvh.cast_capsule(ray, axis, radius, &o).unwrap().unwrap();
        assert_eq!(
            (hit.triangle as usize, hit.t),
            (lowest, ray.t_min()),
            "sweep {k}: {touching:?}"
        );
        checked += 1;
        several += usize::from(touching.len() > 3);
    }
    assert!(
        checked > 300 && several > 200,
        "{checked} checked, {several} touching several"
    );
}

/// A sweep after a refit walks the refit tree: a mesh moved by a refit is found where it
/// now is and not where it was, and a sphere passing its moved edge touches it within the
/// radius and not beyond.
#[test]
fn a_sweep_finds_a_refit_mesh_where_it_now_is() {
    let mut bvh = Bvh::build(Mesh::load(asset("scene.obj")).unwrap());
    let o = QueryOptions::default();
    // Down onto the ground (y = 0) at x = 0.5, then at x = 100.5 after a refit by +100 in x.
    let old = Ray::new([0.5, 5.0, 3.1], [0.0, -1.0, 0.0]);
    let new = Ray::new([100.5, 5.0, 3.1], [0.0, -1.0, 0.0]);
    let before = bvh.cast_sphere(&old, 0.25, &o).unwrap().unwrap();
    assert!(bvh.cast_sphere(&new, 0.25, &o).unwrap().is_none());
    let moved: Vec<_> = bvh
        .mesh()
        .positions()
        .iter()
        .map(|p| Point3::new(p.x + 100.0, p.y, p.z))
        .collect();
    bvh.refit(&moved).unwrap();
    assert!(bvh.cast_sphere(&old, 0.25, &o).unwrap().is_none());
    let after = bvh.cast_sphere(&new, 0.25, &o).unwrap().unwrap();
    assert_eq!((after.t, after.triangle), (before.t, before.triangle));
    // Along the ground's edge (x = 104 after the move), a sphere of radius 0.5 centred
    // 0.4 beyond it touches the edge; one 0.6 beyond it passes clear.
    let along = |x: f32| Ray::new([x, 0.0, 20.0], [0.0, 0.0, -1.0]);
    assert!(bvh.cast_sphere(&along(104.4), 0.5, &o).unwrap().is_some());
    assert!(bvh.cast_sphere(&along(104.6), 0.5, &o).unwrap().is_none());
}

#[test]
fn bad_shapes_are_refused_and_bad_rays_miss() {
    let bvh = Bvh::build(Mesh::load(asset("scene.obj")).unwrap());
    let ray = Ray::new([0.0, 5.0, 0.0], [0.0, -1.0, 0.0]);
    let o = QueryOptions::default();
    for radius in [-1.0, f32::NAN, f32::INFINITY, -0.0001] {
        let e = bvh.cast_sphere(&ray, radius, &o).unwrap_err();
        assert!(matches!(e, Error::InvalidShape { .. }), "{radius}: {e}");
        assert!(e.to_string().contains("radius"), "{e}");
    }
    for axis in [[f32::NAN, 0.0, 0.0], [0.0, f32::INFINITY, 0.0]] {
        let e = bvh.cast_capsule(&ray, axis, 0.1, &o).unwrap_err();
        assert!(matches!(e, Error::InvalidShape { .. }), "{axis:?}: {e}");
    }
    let scene = Scene::new();
    assert!(
        scene
            .cast_sphere(&ray, f32::NAN, &SceneOptions::default())
            .is_err()
    );
    // A NaN or zero ray misses; so does an empty scene.
    for bad in [
        Ray::new([f32::NAN, 0.0, 0.0], [0.0, -1.0, 0.0]),
        Ray::new([0.0, 5.0, 0.0], [0.0, 0.0, 0.0]),
        Ray::new([0.0, 5.0, 0.0], [f32::NAN, -1.0, 0.0]),
    ] {
        assert!(bvh.cast_sphere(&bad, 0.1, &o).unwrap().is_none());
    }
    assert!(
        scene
            .cast_sphere(&ray, 0.1, &SceneOptions::default())
            .unwrap()
            .is_none()
    );
    // A range that starts beyond `f32`'s reach (its start, in `f64`, past 3.4e38, infinite
    // in the walks' `f32` box tests) touches nothing, in a mesh and in a scene, and panics
    // nowhere; the same ray from 0 touches the ground.
    let shared = Arc::new(bvh);
    let bvh = &*shared;
    let mut placed = Scene::new();
    placed
        .add(shared.clone(), Matrix4::<f32>::identity())
        .unwrap();
    placed
        .add(shared.clone(), Matrix4::new_scaling(2.0))
        .unwrap();
    placed.update();
    let far = Ray::with_range([0.0, 5.0, 0.0], [0.0, 1e12, 0.0], 1e30, f32::INFINITY);
    let down = Ray::new([0.0, 5.0, 0.0], [0.0, -1e12, 0.0]);
    assert!(bvh.cast_sphere(&far, 0.1, &o).unwrap().is_none());
    assert!(bvh.cast_sphere(&down, 0.1, &o).unwrap().is_some());
    let so = SceneOptions::default();
    assert!(placed.cast_sphere(&far, 0.1, &so).unwrap().is_none());
    assert!(placed.cast_sphere(&down, 0.1, &so).unwrap().is_some());
}

#[test]
fn a_scene_sweeps_placed_meshes_exactly() {
    let bvh = Arc::new(Bvh::build(Mesh::load(asset("scene.obj")).unwrap()));
    let placements = [
        Matrix4::identity(),
        // A non-uniform scale and a turn: a sphere is no sphere in the mesh's own space.
        Matrix4::new_translation(&Vector3::new(9.0, 0.0, 0.0))
            * Matrix4::from_axis_angle(&Vector3::y_axis(), 0.7)
            * Matrix4::new_nonuniform_scaling(&Vector3::new(1.0, 2.5, 0.5)),
        // A mirror.
        Matrix4::new_translation(&Vector3::new(0.0, 0.0, -9.0))
            * Matrix4::new_nonuniform_scaling(&Vector3::new(-1.0, 1.0, 1.0)),
        // A translation alone (swept in the mesh's own space, the shape moved back).
        Matrix4::new_translation(&Vector3::new(-8.5, 0.25, 7.75)),
        // A turn alone, a turn with a uniform scale, a shear (each culled in the mesh's
        // own space by a bound of the shape's preimage, tested in the world).
        Matrix4::new_translation(&Vector3::new(0.5, 9.0, 0.25))
            * Matrix4::from_axis_angle(&Unit::new_normalize(Vector3::new(1.0, 2.0, 3.0)), 1.1),
        Matrix4::new_translation(&Vector3::new(9.0, 0.5, 9.0))
            * Matrix4::from_axis_angle(&Vector3::x_axis(), 0.4)
            * Matrix4::new_scaling(0.35),
        Matrix4::new_translation(&Vector3::new(-9.0, 0.0, -9.0))
            * Matrix4::new(
                1.0, 0.5, 0.0, 0.0, //
                0.0, 1.0, 0.0, 0.0, //
                0.0, -0.25, 1.0, 0.0, //
                0.0, 0.0, 0.0, 1.0,
            ),
        // Flattened onto a plane (a thickness of 1e-8): too ill-conditioned for the own-space
        // bound (the scene's unit test `an_ill_conditioned_placement_has_no_bound` checks
        // this matrix), so swept by the generic walk, every box moved into the world.
        Matrix4::new_translation(&Vector3::new(0.0, -9.0, 0.0))
            * Matrix4::new(
                1.0, 0.0, 0.0, 0.0, //
                0.0, 1.0, 0.0, 0.0, //
                0.25, 0.25, 1e-8, 0.0, //
                0.0, 0.0, 0.0, 1.0,
            ),
    ];
    let mut scene = Scene::new();
    let mut tris = Vec::new();
    let mut owner = Vec::new();
    for (id, m) in placements.iter().enumerate() {
        scene.add(bvh.clone(), *m).unwrap();
        let placed = triangles64(bvh.mesh(), Some(&m.cast::<f64>()));
        owner.extend(std::iter::repeat_n(id as u32, placed.len()));
        tris.extend(placed);
    }
    let world = Mesh::from_buffers(
        tris.iter()
            .flatten()
            .map(|p| Point3::new(p[0] as f32, p[1] as f32, p[2] as f32))
            .collect::<Vec<_>>(),
        (0..tris.len() as u32)
            .map(|i| [3 * i, 3 * i + 1, 3 * i + 2])
            .collect(),
    )
    .unwrap();
    let (_, h) = frame(&world);
    let count = bvh.mesh().triangle_count() as u32;
    let mut hits = 0;
    for (k, (ray, axis, radius)) in sweeps(&world, 300, 11).iter().enumerate() {
        let culling = [Culling::None, Culling::Back, Culling::Front][k % 3];
        let options = SceneOptions {
            query: QueryOptions {
                culling,
                ..Default::default()
            },
            ..Default::default()
        };
        let got = scene.cast_capsule(ray, *axis, *radius, &options).unwrap();
        let s = Shape::of(ray, *axis, *radius);
        // Culling follows each instance's own winding: a mirror turns the world's over.
        let culled: Vec<[P; 3]> = tris
            .iter()
            .zip(&owner)
            .map(|(tri, &id)| {
                if id == 2 {
                    [tri[0], tri[2], tri[1]]
                } else {
                    *tri
                }
            })
            .collect();
        hits += usize::from(check(
            &format!("scene sweep {k}"),
            &s,
            f64::from(ray.t_min()),
            f64::from(ray.t_max()),
            &culled,
            culling,
            got.map(|g| (g.instance * count + g.hit.triangle, g.hit.t)),
            f64::from(h),
        ));
        // The mesh alone, where it sits unmoved, answers as its instance does.
        if let Some(g) = got.filter(|g| g.instance == 0) {
            let alone = bvh
                .cast_capsule(ray, *axis, *radius, &options.query)
                .unwrap();
            assert_eq!(alone, Some(g.hit), "scene sweep {k}");
        }
    }
    assert!(hits > 100, "only {hits} contacts");
}

#[test]
fn the_traits_serve_a_mesh_and_a_scene_alike() {
    fn drop_onto<G: Sweep>(g: &G, options: &<G as RayCast>::Options<'_>) -> Option<G::SweepHit> {
        g.cast_sphere(&Ray::new([3.1, 5.0, 3.2], [0.0, -1.0, 0.0]), 0.25, options)
            .unwrap()
    }
    let bvh = Arc::new(Bvh::build(Mesh::load(asset("scene.obj")).unwrap()));
    let mut scene = Scene::new();
    scene.add(bvh.clone(), Matrix4::identity()).unwrap();
    let a = drop_onto(&*bvh, &QueryOptions::default()).unwrap();
    let b = drop_onto(&scene, &SceneOptions::default()).unwrap();
    assert_eq!((b.instance, b.hit.triangle, b.hit.t), (0, a.triangle, a.t));
    assert!((b.hit.point - a.point).amax() < 1e-6);
}
