//! `--sweep FRACTION`: a sphere whose radius is `FRACTION` of the mesh's half diagonal moves
//! along each ray of the sets; meshray's `cast_sphere` beside parry3d's shape cast of a
//! `Ball` against its `TriMesh` (`cast_shapes`, its own tree), one thread, the same sweeps,
//! alternated pass by pass. parry's answer has no triangle number, so agreement is judged on
//! whether each sweep touches and at which `t`, and each differing answer by the distance
//! from the ball's centre to the mesh at its `t` (a contact holds when it is the radius).
//!
//! Beside them, meshray's closest hit of the same rays (issue 41 asks a small sphere's
//! sweep for at least half its rate): timed in the same rotation, so each pass's ratio of the
//! two compares runs seconds apart, and the column is the median of those ratios.
//!
//! parry's cast takes a pose and a velocity, not a range: the ball starts at
//! `origin + t_min·direction` with velocity `direction` and a maximum time of impact of
//! `t_max − t_min`, and `t_min` is added back to its time of impact; a ball touching the
//! mesh at the start is an impact at time 0 for both (parry's `stop_at_penetration`).

use crate::{group, median};
use meshray::prelude::*;
use meshray::{Bvh, Mesh, QueryOptions, Ray, RayQuery};
use meshray_cli::rays::RaySet;
use parry3d::math::{Pose, Vector};
use parry3d::query::{ShapeCastOptions, cast_shapes};
use parry3d::shape::{Ball, TriMesh};
use std::time::Instant;

/// At most this many sweeps per set (every `n`-th ray of a larger set): parry's cast takes
/// microseconds each.
pub const MAX_SWEEPS: usize = 20_000;

/// The two answers of one sweep: where it first touches (`t`), if it does.
type Answers = Vec<Option<f32>>;

/// Times both engines on each set (its first [`MAX_SWEEPS`] rays) and prints a table row per
/// set: sweeps per second, their ratio, and the sweeps answered differently.
pub fn run(name: &str, mesh: &Mesh, bvh: &Bvh, sets: &[RaySet], fraction: f32, passes: usize) {
    let bounds = mesh.bounds();
    let radius = fraction * (bounds.max - bounds.min).norm() * 0.5;
    let vertices: Vec<Vector> = mesh
        .positions()
        .iter()
        .map(|p| Vector::new(p.x, p.y, p.z))
        .collect();
    let started = Instant::now();
    let parry = TriMesh::new(vertices, mesh.triangles().to_vec()).expect("parry3d TriMesh");
    let parry_ms = started.elapsed().as_secs_f64() * 1e3;
    let ball = Ball::new(radius);
    println!(
        "\n== {name}: {} triangles; a sphere of radius {radius} ({fraction} of the half \
         diagonal), one thread, median of {passes} passes; parry3d's TriMesh built in \
         {parry_ms:.1} ms ==",
        group(mesh.triangle_count())
    );
    println!(
        "{:<10} {:>8} {:>12} {:>9} {:>10} {:>12} {:>10} {:>6} {:>6} {:>14} {:>14}",
        "set",
        "sweeps",
        "meshray M/s",
        "ray M/s",
        "sweep/ray",
        "parry3d M/s",
        "meshray/x",
        "hit≠",
        "t≠",
        "meshray wrong",
        "parry3d wrong"
    );
    let options = QueryOptions::default();
    for set in sets {
        // Spread over the whole set (an image's first rows are mostly sky).
        let stride = set.rays.len().div_ceil(MAX_SWEEPS).max(1);
        let rays: Vec<Ray> = set.rays.iter().step_by(stride).copied().collect();
        let rays = &rays[..];
        let ours = |out: &mut Answers| {
            for (ray, slot) in rays.iter().zip(out.iter_mut()) {
                *slot = match bvh.cast_sphere(ray, radius, &options) {
                    Ok(Some(hit)) => Some(hit.t),
                    _ => None,
                };
            }
        };
        let theirs = |out: &mut Answers| {
            for (ray, slot) in rays.iter().zip(out.iter_mut()) {
                *slot = parry_sweep(&parry, &ball, ray);
            }
        };
        let closest = || {
            let hit = |ray| bvh.cast_ray(ray, RayQuery::Closest, &options).is_some();
            rays.iter().filter(|ray| hit(ray)).count()
        };
        let mut answers = [vec![None; rays.len()], vec![None; rays.len()]];
        let mut speeds = [Vec::new(), Vec::new(), Vec::new()];
        for pass in 0..passes {
            for k in 0..3 {
                let i = (pass + k) % 3;
                let started = Instant::now();
                match i {
                    0 => ours(&mut answers[0]),
                    1 => theirs(&mut answers[1]),
                    _ => {
                        std::hint::black_box(closest());
                    }
                }
                let seconds = started.elapsed().as_secs_f64();
                speeds[i].push(rays.len() as f64 / seconds / 1e6);
            }
        }
        let ratios: Vec<f64> = speeds[0]
            .iter()
            .zip(&speeds[2])
            .map(|(s, r)| s / r)
            .collect();
        // Each answer that differs is judged by the distance from the ball's centre to the
        // mesh at its `t`: a contact holds it within 0.1 % of the radius (or within the
        // radius when touching at the start); a miss is wrong where the other engine's
        // contact holds.
        let (mut hit_off, mut t_off, mut wrong) = (0, 0, [0, 0]);
        let holds = |ray: &Ray, t: f32| {
            let centre = ray.at(t);
            let near = bvh.closest_point(centre, f32::INFINITY, &Default::default());
            near.is_some_and(|near| {
                let ratio = near.distance / radius;
                (ratio - 1.0).abs() <= 1e-3 || (t <= ray.t_min() && ratio <= 1.0)
            })
        };
        for ((a, b), ray) in answers[0].iter().zip(&answers[1]).zip(rays) {
            let held = [a, b].map(|t| t.is_some_and(|t| holds(ray, t)));
            match (a, b) {
                (Some(x), Some(y)) if (x - y).abs() > 1e-4 * x.abs().max(1.0) => t_off += 1,
                (Some(_), None) | (None, Some(_)) => hit_off += 1,
                _ => continue,
            }
            for (k, answer) in [a, b].into_iter().enumerate() {
                let other = held[1 - k];
                wrong[k] += usize::from(if answer.is_some() { !held[k] } else { other });
            }
        }
        let [mine, peer, ray] = speeds.map(median);
        println!(
            "{:<10} {:>8} {:>12.3} {:>9.3} {:>10.2} {:>12.4} {:>10.1} {:>6} {:>6} {:>14} {:>14}",
            set.kind.name(),
            group(rays.len()),
            mine,
            ray,
            median(ratios),
            peer,
            mine / peer,
            hit_off,
            t_off,
            wrong[0],
            wrong[1]
        );
    }
}

/// parry3d's first contact of `ball` moving along `ray` (valid rays only), as a ray `t`.
fn parry_sweep(mesh: &TriMesh, ball: &Ball, ray: &Ray) -> Option<f32> {
    if !ray.is_valid() {
        return None;
    }
    let (o, d, t0) = (ray.origin(), ray.direction(), ray.t_min());
    let start = o + d * t0;
    let options = ShapeCastOptions::with_max_time_of_impact((ray.t_max() - t0).min(f32::MAX));
    let hit = cast_shapes(
        &Pose::translation(start.x, start.y, start.z),
        Vector::new(d.x, d.y, d.z),
        ball,
        &Pose::IDENTITY,
        Vector::ZERO,
        mesh,
        options,
    )
    .expect("parry3d casts a ball against a TriMesh")?;
    Some(hit.time_of_impact + t0)
}
