//! Rays that graze a triangle's plane through one of its corners: the triangle tests accept
//! such a ray within their `f32` rounding, and the plane's `t` of a ray a hair off the
//! plane lies far from the triangle along it, before or past its bounding box. The hit's
//! `t` is kept within the triangle's own box (`triangle::within_box`: raised to the entry,
//! lowered to the exit), so the walks, which cull a box the range starts after or a box
//! entered after the best hit, reach every hit the per-triangle test (and so the brute
//! force) answers. Before the lowering, a fifth of the hits here lay past their box's exit,
//! and with `t_min` just past that exit the brute force answered hits the walk did not.
//!
//! Counted and printed: hits by rays that miss the triangle's own box by rounding (its entry
//! after its exit) while the inside test accepts them. Their `t` is lowered only to the
//! entry (never before the entry of a box holding the triangle, or a walk could prune that
//! box after a nearer hit), so it can lie past the exit by the gap, and a `t_min` inside
//! that gap (a few ulps of position) would still tell the walk and the brute force apart.
mod common;

use common::{Rng, triangle_box_bounds};
use meshray::geometry::intersect_triangle;
use meshray::prelude::*;
use meshray::{Bvh, Mesh, QueryOptions, Ray, RayQuery};
use nalgebra::{Point3, Vector3};

/// Random triangles at three scales, near and far from the origin; rays along the plane,
/// tilted off it by 10⁻¹¹ to 10⁻² radians, through a corner. Every hit whose box the ray
/// enters has its `t` within that box (give or take `2⁻²⁰` of it), and with `t_min` just
/// past the box's exit the walk and the triangle test agree.
#[test]
fn a_grazing_hit_lies_within_its_triangles_box() {
    let mut rng = Rng::new(12);
    let signed = |rng: &mut Rng| f64::from(rng.range(-1.0, 1.0));
    let options = QueryOptions::default();
    let (mut hits, mut past, mut disagree, mut missed) = (0, 0, 0, 0);
    let mut first = None;
    for case in 0..100_000 {
        let scale = [1e-2, 1.0, 1e2][case % 3];
        let offset = [0.0, 1e3][case / 3 % 2];
        let corner = |rng: &mut Rng| {
            Point3::new(
                (offset + scale * signed(rng)) as f32,
                (scale * signed(rng)) as f32,
                (scale * signed(rng)) as f32,
            )
        };
        let tri = [corner(&mut rng), corner(&mut rng), corner(&mut rng)];
        let wide = tri.map(|p| p.cast::<f64>());
        let Some(normal) = (wide[1] - wide[0])
            .cross(&(wide[2] - wide[0]))
            .try_normalize(0.0)
        else {
            continue;
        };
        let mut along = Vector3::new(signed(&mut rng), signed(&mut rng), signed(&mut rng));
        along -= normal * normal.dot(&along);
        let Some(along) = along.try_normalize(0.0) else {
            continue;
        };
        let tilt = 10f64.powf(-2.0 - 9.0 * f64::from(rng.f32()));
        let direction = along + normal * tilt * signed(&mut rng).signum();
        let origin = wide[case % 3] - direction * scale * (0.5 + f64::from(rng.f32()));
        let (o, d) = (origin.map(|x| x as f32), direction.map(|x| x as f32));
        let Some(hit) = intersect_triangle(&Ray::new(o, d), tri[0], tri[1], tri[2], &options)
        else {
            continue;
        };
        hits += 1;
        let (entry, exit) = triangle_box_bounds(&tri, &o, &d);
        if hit.t <= exit + exit.abs() * 2f32.powi(-20) {
            continue;
        }
        if entry > exit {
            missed += 1;
            continue;
        }
        past += 1;
        let t_min = (exit + exit.abs() * 2f32.powi(-19)).min(hit.t);
        let ray = Ray::with_range(o, d, t_min, f32::INFINITY);
        let brute = intersect_triangle(&ray, tri[0], tri[1], tri[2], &options).map(|h| h.t);
        let bvh = Bvh::build(Mesh::from_buffers(tri.to_vec(), vec![[0u32, 1, 2]]).unwrap());
        let walk = bvh.cast_ray(&ray, RayQuery::Closest, &options).map(|h| h.t);
        if brute != walk {
            disagree += 1;
        }
        first.get_or_insert((case, hit.t, exit, brute, walk));
    }
    assert!(hits > 10_000, "{hits} hits");
    println!("{hits} grazing hits; {missed} of them by rays that miss the triangle's own box");
    assert_eq!(
        (past, disagree),
        (0, 0),
        "of {hits} grazing hits, {past} lie past their triangle's box exit and {disagree} of \
         those answer differently through the walk with t_min just past the exit; the first \
         (case, t, exit, triangle test, walk): {first:?}"
    );
}
