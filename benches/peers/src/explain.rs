//! `--mismatches N`: every ray on which an engine answers differently from meshray is judged
//! against the true answer, found by testing the ray against every triangle in f64 on the
//! mesh's own f32 coordinates (exact to far below the margins seen): counted by who was
//! wrong and how (a hit missed, and how far inside its triangle the line passed; a false
//! hit, and how far outside), the first `N` per set and engine printed with both answers.

use crate::engine::Engine;
use meshray::{Mesh, Ray};

/// Every engine's answers to one set, engine 0 (meshray) first.
pub enum Answers {
    Closest(Vec<Vec<Option<(f32, u32)>>>),
    Any(Vec<Vec<bool>>),
}

/// The ray's line against triangle `tri` in f64 (Möller–Trumbore): `t` and the smallest
/// barycentric coordinate (negative: the line passes outside, by that fraction of the
/// triangle), or `None` for a line parallel to the triangle's plane.
fn exact(mesh: &Mesh, ray: &Ray, tri: u32) -> Option<(f64, f64)> {
    let p = |i: u32| mesh.positions()[i as usize].cast::<f64>();
    let [a, b, c] = mesh.triangles()[tri as usize];
    let (a, b, c) = (p(a), p(b), p(c));
    let o = ray.origin().cast::<f64>();
    let d = ray.direction().cast::<f64>();
    let (e1, e2) = (b - a, c - a);
    let h = d.cross(&e2);
    let det = e1.dot(&h);
    if det == 0.0 {
        return None;
    }
    let s = o - a;
    let u = s.dot(&h) / det;
    let q = s.cross(&e1);
    let v = d.dot(&q) / det;
    let t = e2.dot(&q) / det;
    Some((t, u.min(v).min(1.0 - u - v)))
}

/// One answer as printed: its `t` (shortest round-trip decimals), its triangle and that
/// triangle against the ray in f64.
fn describe(mesh: &Mesh, ray: &Ray, answer: Option<(f32, u32)>) -> String {
    match answer {
        None => "miss".into(),
        Some((t, tri)) => match exact(mesh, ray, tri) {
            Some((t64, margin)) => {
                format!("t {t} tri {tri} (f64: t {t64:.9e}, min barycentric {margin:.1e})")
            }
            None => format!("t {t} tri {tri} (f64: parallel)"),
        },
    }
}

/// The f64 verdict on an answer's triangle: the smallest barycentric coordinate, or minus the
/// distance outside the ray's range relative to `max(1, t)` when that is smaller; negative
/// means the line passes outside the triangle or the hit is outside the range (−inf for a
/// line parallel to the triangle).
fn margin(mesh: &Mesh, ray: &Ray, tri: u32) -> f64 {
    let Some((t, m)) = exact(mesh, ray, tri) else {
        return f64::NEG_INFINITY;
    };
    let outside = (f64::from(ray.t_min()) - t).max(t - f64::from(ray.t_max())) / t.abs().max(1.0);
    if outside > 0.0 { m.min(-outside) } else { m }
}

/// The true closest hit in f64, by testing every triangle: its `t` and triangle.
fn truth(mesh: &Mesh, ray: &Ray) -> Option<(f64, u32)> {
    let mut best: Option<(f64, u32)> = None;
    for tri in 0..mesh.triangle_count() as u32 {
        if let Some((t, m)) = exact(mesh, ray, tri)
            && m >= 0.0
            && t >= f64::from(ray.t_min())
            && t <= f64::from(ray.t_max())
            && best.is_none_or(|(b, _)| t < b)
        {
            best = Some((t, tri));
        }
    }
    best
}

/// Whether an answer agrees with the truth (the same tolerance as the tables').
fn right(answer: Option<(f32, u32)>, truth: Option<(f64, u32)>) -> bool {
    match (answer, truth) {
        (Some((t, _)), Some((t0, _))) => (f64::from(t) - t0).abs() <= 1e-4 * t0.abs().max(1.0),
        (a, b) => a.is_some() == b.is_some(),
    }
}

/// How a wrong answer is wrong: a hit missed (the true hit's triangle margin: how far inside
/// it the line passed), a false hit nearer than the truth (its triangle's margin: how far
/// outside, negative), or the right triangle (one the line meets at the true `t`) with a
/// `t` off by more than the tolerance (the relative error).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Error {
    Missed,
    False,
    TOff,
}

fn error(
    mesh: &Mesh,
    ray: &Ray,
    answer: Option<(f32, u32)>,
    truth: Option<(f64, u32)>,
) -> (Error, f64) {
    if let (Some((t, tri)), Some((t0, _))) = (answer, truth)
        && let Some((t_tri, _)) = exact(mesh, ray, tri)
        && (t_tri - t0).abs() <= 1e-4 * t0.abs().max(1.0)
    {
        return (Error::TOff, (f64::from(t) - t0).abs() / t0.abs().max(1.0));
    }
    match (answer, truth) {
        (Some((t, tri)), Some((t0, _))) if f64::from(t) < t0 => {
            (Error::False, margin(mesh, ray, tri))
        }
        (Some((_, tri)), None) => (Error::False, margin(mesh, ray, tri)),
        (_, Some((_, tri))) => (Error::Missed, margin(mesh, ray, tri)),
        (None, None) => unreachable!("a miss agreeing with a miss is right"),
    }
}

/// Prints up to `limit` mismatches per engine for one set, each with both answers, the
/// truth and the verdict, then every mismatch of the engine counted by verdict.
pub fn print(
    mesh: &Mesh,
    set: &str,
    rays: &[Ray],
    engines: &[&dyn Engine],
    answers: &Answers,
    limit: usize,
) {
    for (i, engine) in engines.iter().enumerate().skip(1) {
        let name = engine.name();
        let differs: Vec<usize> = match answers {
            Answers::Closest(all) => (0..rays.len())
                .filter(|&k| match (all[i][k], all[0][k]) {
                    (Some((t, tri)), Some((t0, tri0))) => {
                        (t - t0).abs() > 1e-4 * t0.abs().max(1.0) || tri != tri0
                    }
                    (a, b) => a.is_some() != b.is_some(),
                })
                .collect(),
            Answers::Any(all) => (0..rays.len())
                .filter(|&k| all[i][k] != all[0][k])
                .collect(),
        };
        // (who was wrong, how, count, largest |margin|)
        let mut tally: Vec<(&str, Option<Error>, usize, f64)> = Vec::new();
        for (n, &k) in differs.iter().enumerate() {
            let ray = &rays[k];
            // For any-hit the engines' closest answers stand in for the triangle found.
            let (mine, reference) = match answers {
                Answers::Closest(all) => (all[i][k], all[0][k]),
                Answers::Any(_) => (engine.closest(ray), engines[0].closest(ray)),
            };
            let t = truth(mesh, ray);
            let (who, how, m) = match (right(mine, t), right(reference, t)) {
                // Both right: a tie between two triangles at the same `t`, both hit
                // (overlapping or coincident triangles) or one just outside its own (the
                // line through a shared edge or vertex, within either engine's rounding).
                (true, true) => {
                    let m = |answer: Option<(f32, u32)>| {
                        answer.map_or(f64::INFINITY, |(_, tri)| margin(mesh, ray, tri))
                    };
                    let (m_mine, m_reference) = (m(mine), m(reference));
                    if m_mine >= 0.0 && m_reference >= 0.0 {
                        ("overlap", None, 0.0)
                    } else if m_reference < 0.0 {
                        ("meshray", None, m_reference)
                    } else {
                        (name, None, m_mine)
                    }
                }
                (false, true) => {
                    let (e, m) = error(mesh, ray, mine, t);
                    (name, Some(e), m)
                }
                (true, false) => {
                    let (e, m) = error(mesh, ray, reference, t);
                    ("meshray", Some(e), m)
                }
                (false, false) => {
                    let (e, m) = error(mesh, ray, mine, t);
                    ("both", Some(e), m)
                }
            };
            match tally.iter_mut().find(|e| e.0 == who && e.1 == how) {
                Some(entry) => {
                    entry.2 += 1;
                    entry.3 = entry.3.max(m.abs());
                }
                None => tally.push((who, how, 1, m.abs())),
            }
            if n >= limit {
                continue;
            }
            // Shortest round-trip decimals, so the ray can be rebuilt exactly.
            let (o, d) = (ray.origin(), ray.direction());
            println!(
                "  {set} {name} ray {k}: o ({}, {}, {}) d ({}, {}, {}) t in [{}, {}]",
                o.x,
                o.y,
                o.z,
                d.x,
                d.y,
                d.z,
                ray.t_min(),
                ray.t_max(),
            );
            println!("    meshray: {}", describe(mesh, ray, reference));
            println!("    {name}: {}", describe(mesh, ray, mine));
            let t = t.map(|(t, tri)| (t as f32, tri));
            println!("    f64, all triangles: {}", describe(mesh, ray, t));
        }
        tally.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        if !tally.is_empty() {
            let parts: Vec<String> = tally
                .iter()
                .map(|&(who, how, count, m)| match how {
                    None if who == "overlap" => {
                        format!("{count} ties on two hit triangles (overlapping)")
                    }
                    None => format!(
                        "{count} ties at an edge, {who}'s triangle just outside (by up to {m:.1e})"
                    ),
                    Some(Error::Missed) => {
                        format!("{count} {who} wrong, missed a hit (inside by up to {m:.1e})")
                    }
                    Some(Error::False) => {
                        format!("{count} {who} wrong, false hit (outside by up to {m:.1e})")
                    }
                    Some(Error::TOff) => format!(
                        "{count} {who} wrong, right triangle but t off (relative, up to {m:.1e})"
                    ),
                })
                .collect();
            println!("  {set} {name}: {}", parts.join("; "));
        }
    }
}
