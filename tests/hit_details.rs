//! What a hit reports about its point, against an independent f64 oracle: the ray–plane
//! system solved by Gaussian elimination with partial pivoting (not Cramer's rule, not the
//! library's formulas), then the point, the geometric normal, and the interpolated shading
//! normal and texture coordinates computed from the oracle's barycentrics in f64.
//!
//! Tolerances are a priori bounds for f32 arithmetic, not fitted: an error of a few ulps in
//! each product, amplified by how ill-conditioned the ray is against the triangle
//! (`|d|·|s|·|e| / |D|`, the condition number of Cramer's rule). Rays so ill-conditioned that
//! the bound would exceed 1e-3 are skipped, and counted, so a test that checks nothing fails.
mod common;

use common::Rng;
use meshray::prelude::*;
use meshray::{Bvh, Hit, Mesh, QueryOptions, Ray};
use nalgebra::{Matrix3, Point3, Vector3};

type V = Vector3<f64>;

fn wide(p: &Point3<f32>) -> V {
    p.coords.cast::<f64>()
}

/// `(u, v, t)` with `A + u·(B − A) + v·(C − A) = O + t·d`, by Gaussian elimination with
/// partial pivoting on the 3×3 system in f64.
fn solve(a: V, b: V, c: V, o: V, d: V) -> Option<(f64, f64, f64)> {
    let m = Matrix3::from_columns(&[b - a, c - a, -d]);
    let mut rows = [
        [m[(0, 0)], m[(0, 1)], m[(0, 2)], (o - a)[0]],
        [m[(1, 0)], m[(1, 1)], m[(1, 2)], (o - a)[1]],
        [m[(2, 0)], m[(2, 1)], m[(2, 2)], (o - a)[2]],
    ];
    for col in 0..3 {
        let pivot = (col..3).max_by(|&i, &j| rows[i][col].abs().total_cmp(&rows[j][col].abs()))?;
        rows.swap(col, pivot);
        if rows[col][col] == 0.0 {
            return None;
        }
        let pivot_row = rows[col];
        for row in &mut rows[col + 1..] {
            let f = row[col] / pivot_row[col];
            for (x, p) in row.iter_mut().zip(pivot_row).skip(col) {
                *x -= f * p;
            }
        }
    }
    let mut x = [0.0; 3];
    for r in (0..3).rev() {
        let sum: f64 = (r + 1..3).map(|k| rows[r][k] * x[k]).sum();
        x[r] = (rows[r][3] - sum) / rows[r][r];
    }
    Some((x[0], x[1], x[2]))
}

/// Checks one hit against the oracle; `false` if the ray is too ill-conditioned to judge.
fn check(mesh: &Mesh, ray: &Ray, hit: &Hit) -> bool {
    let t = hit.triangle as usize;
    let [a, b, c] = mesh.triangle(t).map(|p| wide(&p));
    let (o, d) = (wide(&ray.origin()), ray.direction().cast::<f64>());
    let (e1, e2) = (b - a, c - a);
    let n = e1.cross(&e2);
    let det = n.dot(&d).abs();
    let condition = d.norm() * (o - a).norm() * e1.norm().max(e2.norm()) / det;
    let eps = f64::from(f32::EPSILON);
    let tol_uv = 64.0 * eps * condition;
    // (a NaN condition, from a zero determinant, is skipped too)
    if tol_uv.is_nan() || tol_uv >= 1e-3 {
        return false;
    }
    let (u, v, t64) = solve(a, b, c, o, d).expect("a hit's system is not singular");
    let at = format!("triangle {t}, ray {ray:?}");
    assert!(
        (f64::from(hit.u) - u).abs() <= tol_uv,
        "u {} vs {u} (tol {tol_uv:e}), {at}",
        hit.u
    );
    assert!(
        (f64::from(hit.v) - v).abs() <= tol_uv,
        "v {} vs {v} (tol {tol_uv:e}), {at}",
        hit.v
    );
    // t: the precision promise's 1e-5 relative (t is computed in f64 and rounded once).
    assert!(
        (f64::from(hit.t) - t64).abs() <= 1e-5 * t64.abs() + 1e-30,
        "t {} vs {t64}, {at}",
        hit.t
    );
    // The point is on the triangle where the barycentrics say, and on the ray at t.
    let p = a * (1.0 - u - v) + b * u + c * v;
    let scale = a.abs().max().max(b.abs().max()).max(c.abs().max()) + (o + d * t64).abs().max();
    let tol_p = (tol_uv * (e1.norm() + e2.norm()) + 8.0 * eps * scale).max(1e-30);
    assert!(
        (wide(&hit.point) - p).norm() <= tol_p,
        "point {:?} vs {p:?} (tol {tol_p:e}), {at}",
        hit.point
    );
    // The geometric normal, and which face: the side n points to is the front.
    let unit = n.normalize();
    assert!(
        (hit.normal.into_inner().cast::<f64>() - unit).norm() <= 1e-5,
        "normal, {at}"
    );
    assert_eq!(hit.front_face, n.dot(&d) < 0.0, "front_face, {at}");
    // Shading normal and uv, interpolated in f64 with the oracle's barycentrics.
    let weights = [1.0 - u - v, u, v];
    if let Some(corners) = mesh.attributes(t).normals {
        let sum: V = (0..3).map(|k| corners[k].cast::<f64>() * weights[k]).sum();
        let largest = corners
            .iter()
            .map(|c| c.cast::<f64>().norm())
            .fold(0.0, f64::max);
        if sum.norm() > 1e-3 * largest {
            let want = sum.normalize();
            let got = hit
                .shading_normal
                .expect("the mesh has normals here")
                .into_inner();
            let tol = 4.0 * tol_uv * largest / sum.norm() + 1e-5;
            assert!(
                (got.cast::<f64>() - want).norm() <= tol,
                "shading normal {got:?} vs {want:?}, {at}"
            );
        }
    } else {
        assert!(hit.shading_normal.is_none(), "{at}");
    }
    if let Some(corners) = mesh.attributes(t).uvs {
        let want: nalgebra::Vector2<f64> = (0..3)
            .map(|k| corners[k].coords.cast::<f64>() * weights[k])
            .sum();
        let got = hit.uv.expect("the mesh has uvs here").coords.cast::<f64>();
        let largest = corners
            .iter()
            .map(|c| c.coords.cast::<f64>().norm())
            .fold(0.0, f64::max);
        let tol = 4.0 * tol_uv * largest + 8.0 * eps * largest + 1e-7;
        assert!((got - want).norm() <= tol, "uv {got:?} vs {want:?}, {at}");
    } else {
        assert!(hit.uv.is_none(), "{at}");
    }
    assert_eq!(hit.object, mesh.attributes(t).object, "{at}");
    assert_eq!(hit.material, mesh.attributes(t).material, "{at}");
    true
}

/// Rays aimed at a random interior point of a random triangle, from 0.5 to 20 times its
/// longest edge away, along a random direction at least 0.2 off the triangle's plane.
/// (From much farther, f32 barycentrics of a small triangle are only as good as
/// `ε·distance/edge`; the bound above would skip such rays.)
fn aimed_rays(mesh: &Mesh, n: usize, rng: &mut Rng) -> Vec<Ray> {
    let mut rays = Vec::with_capacity(n);
    while rays.len() < n {
        let [a, b, c] = mesh.triangle(rng.below(mesh.triangle_count()));
        let normal = (b - a).cross(&(c - a));
        let d = rng.unit_vector();
        if !(normal.norm() > 0.0 && normal.normalize().dot(&d).abs() > 0.2) {
            continue;
        }
        let (mut u, mut v) = (rng.range(0.05, 0.95), rng.range(0.05, 0.95));
        if u + v > 0.95 {
            (u, v) = (0.95 - v, 0.95 - u);
        }
        let p = a + (b - a) * u + (c - a) * v;
        let edge = [(b - a).norm(), (c - b).norm(), (a - c).norm()]
            .into_iter()
            .fold(0.0, f32::max);
        rays.push(Ray::new(p - d * (edge * rng.range(0.5, 20.0)), d));
    }
    rays
}

/// Rays aimed at random interior points of random triangles, from random directions well
/// off the triangle's plane, plus the usual random rays; every hit is checked.
fn check_mesh(name: &str, mesh: Mesh, seed: u64) {
    let bvh = Bvh::build(mesh);
    let mesh = bvh.mesh();
    let mut rng = Rng::new(seed);
    let mut rays = common::random_rays(mesh, 1000, &mut rng);
    rays.extend(aimed_rays(mesh, 4000, &mut rng));
    let (mut checked, mut skipped) = (0, 0);
    for ray in &rays {
        if let Some(hit) = bvh.closest_hit(ray, &QueryOptions::default()) {
            if check(mesh, ray, &hit) {
                checked += 1;
            } else {
                skipped += 1;
            }
        }
    }
    println!("{name}: {checked} hits checked, {skipped} too ill-conditioned to judge");
    assert!(
        checked > 2000 && skipped * 4 < checked,
        "{name}: {checked} checked, {skipped} skipped"
    );
}

#[test]
fn hit_details_equal_an_f64_oracle_on_the_scene() {
    // The scene has objects, materials, and normals and uvs on part of it.
    let mesh = Mesh::load(common::asset("scene.obj")).unwrap();
    assert!((0..mesh.triangle_count()).any(|t| mesh.attributes(t).uvs.is_some()));
    assert!((0..mesh.triangle_count()).any(|t| mesh.attributes(t).normals.is_none()));
    check_mesh("scene", mesh, 5);
}

#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
fn hit_details_equal_an_f64_oracle_on_shared_meshes() {
    // spot has normals and uvs everywhere; the sports car many objects and materials.
    for name in [
        "spot/spot.obj",
        "stanford-bunny/stanford-bunny.obj",
        "sports-car/sportsCar.obj",
    ] {
        let mesh = common::shared_mesh(name).unwrap();
        check_mesh(name, mesh, 6);
    }
}

#[test]
#[cfg_attr(
    panic = "abort",
    ignore = "catches a panic: panics abort here (wasm32-wasip1)"
)]
fn the_oracle_catches_a_wrong_convention() {
    // A hit whose u and v were swapped (the other barycentric convention) must fail.
    let p = vec![
        Point3::new(0.0, 0.0, 0.0),
        Point3::new(2.0, 0.0, 0.0),
        Point3::new(0.0, 1.0, 0.0),
    ];
    let bvh = Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]]).unwrap());
    let ray = Ray::new(Point3::new(0.5, 0.5, 3.0), -Vector3::z()); // u = 0.25, v = 0.5
    let hit = bvh.closest_hit(&ray, &QueryOptions::default()).unwrap();
    assert!(check(bvh.mesh(), &ray, &hit));
    let swapped = Hit {
        u: hit.v,
        v: hit.u,
        ..hit
    };
    let mesh = bvh.mesh().clone();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check(&mesh, &ray, &swapped)
    }));
    assert!(caught.is_err(), "swapped barycentrics passed the oracle");
}
