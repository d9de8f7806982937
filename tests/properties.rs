//! Property tests over random triangle soups and rays (proptest): the BVH agrees with the
//! brute force bit for bit, and the geometric facts every ray caster must respect hold.
mod common;

use common::{Chunks, brute_all_f32};
use meshray::prelude::*;
use meshray::{BuildOptions, Bvh, Culling, Mesh, QueryOptions, Ray};
use nalgebra::{Point3, Vector3};
use proptest::prelude::*;

fn point(range: f32) -> impl Strategy<Value = Point3<f32>> {
    (-range..range, -range..range, -range..range).prop_map(|(x, y, z)| Point3::new(x, y, z))
}

/// A soup of 1..200 triangles, some sharing vertices, some degenerate.
fn soup() -> impl Strategy<Value = Mesh> {
    (
        prop::collection::vec(point(10.0), 3..120),
        prop::collection::vec(any::<[u32; 3]>(), 1..200),
    )
        // A soup whose triangles all use one vertex is refused (Error::MeshTooSmall): skip it.
        .prop_filter_map("every triangle on one point", |(positions, raw)| {
            let n = positions.len() as u32;
            let triangles = raw.into_iter().map(|t| t.map(|i| i % n)).collect();
            Mesh::from_buffers(positions, triangles).ok()
        })
}

/// A small-integer soup: every coordinate an integer in [-8, 8], so sums and products in
/// the tests stay exact in f32 and translating by integers changes no bit of the answers.
fn integer_soup() -> impl Strategy<Value = Mesh> {
    let tris = prop::collection::vec(prop::collection::vec(-8i32..=8, 9), 1..60);
    // All corners on one point is refused (Error::MeshTooSmall): skip it.
    tris.prop_filter_map("every corner on one point", |tris| {
        let mut positions = Vec::new();
        for t in &tris {
            for c in t.chunks(3) {
                positions.push(Point3::new(c[0] as f32, c[1] as f32, c[2] as f32));
            }
        }
        let triangles = (0..tris.len() as u32)
            .map(|i| [3 * i, 3 * i + 1, 3 * i + 2])
            .collect();
        Mesh::from_buffers(positions, triangles).ok()
    })
}

fn ray() -> impl Strategy<Value = Ray> {
    (point(20.0), point(1.0), -1.0f32..5.0, 0.0f32..40.0).prop_map(|(o, d, t0, len)| {
        Ray::with_range(
            o,
            d.coords,
            t0,
            if len > 35.0 { f32::INFINITY } else { t0 + len },
        )
    })
}

fn culling() -> impl Strategy<Value = Culling> {
    prop_oneof![
        Just(Culling::None),
        Just(Culling::Back),
        Just(Culling::Front)
    ]
}

fn build(mesh: Mesh, leaf: usize) -> Bvh {
    let bvh = Bvh::build_with(
        mesh,
        &BuildOptions {
            max_leaf_size: leaf,
            bins: 8,
            ..Default::default()
        },
    );
    meshray::diagnostics::validate(&bvh).unwrap();
    bvh
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn bvh_equals_brute_force(mesh in soup(), rays in prop::collection::vec(ray(), 1..40),
                              culling in culling(), leaf in 1usize..10, watertight in any::<bool>()) {
        let bvh = build(mesh, leaf);
        let options = QueryOptions { culling, watertight };
        for ray in &rays {
            let brute = brute_all_f32(bvh.mesh(), &Chunks::new(bvh.mesh()), ray, &options);
            let closest = bvh.closest_hit(ray, &options);
            prop_assert_eq!(closest.map(|h| h.t), brute.first().map(|b| b.0));
            if let Some(h) = closest {
                prop_assert!(brute.iter().any(|&(t, tri)| t == h.t && tri == h.triangle));
            }
            prop_assert_eq!(bvh.any_hit(ray, &options).is_some(), closest.is_some());
            let all: Vec<_> = bvh.all_hits(ray, &options).iter().map(|h| (h.t, h.triangle)).collect();
            prop_assert_eq!(bvh.count_hits(ray, &options), brute.len());
            prop_assert_eq!(all, brute);
        }
    }

    #[test]
    fn a_ray_aimed_inside_a_triangle_hits_it_or_something_nearer(
        mesh in soup(), pick in any::<usize>(), u in 0.05f32..0.9, v in 0.05f32..0.9,
        from in point(30.0)) {
        prop_assume!(u + v < 0.95);
        let bvh = build(mesh, 4);
        let mesh = bvh.mesh();
        let i = pick % mesh.triangle_count();
        let [a, b, c] = mesh.triangle(i);
        let n = (b - a).cross(&(c - a));
        // a well-shaped triangle, seen at a decent angle
        prop_assume!(n.norm() > 1e-2 * (b - a).norm().max((c - a).norm()).powi(2));
        let target = a + (b - a) * u + (c - a) * v;
        let direction = target - from;
        prop_assume!(direction.norm() > 1e-3 && n.normalize().dot(&direction.normalize()).abs() > 0.05);
        let ray = Ray::new(from, direction);
        let hit = bvh.closest_hit(&ray, &QueryOptions::default());
        prop_assert!(hit.is_some(), "missed triangle {} aimed at its interior", i);
        let hit = hit.unwrap();
        prop_assert!(hit.t <= 1.0 + 1e-4, "t = {} beyond the aimed point at t = 1", hit.t);
        if hit.triangle as usize == i {
            prop_assert!((hit.t - 1.0).abs() < 1e-3);
            prop_assert!((hit.u - u).abs() < 1e-2 && (hit.v - v).abs() < 1e-2);
        }
    }

    #[test]
    fn translating_scene_and_ray_by_integers_changes_nothing(
        mesh in integer_soup(), o in prop::collection::vec(-12i32..=12, 3), d in prop::collection::vec(-4i32..=4, 3),
        shift in prop::collection::vec(-64i32..=64, 3)) {
        prop_assume!(d.iter().any(|&x| x != 0));
        let s = Vector3::new(shift[0] as f32, shift[1] as f32, shift[2] as f32);
        let moved = Mesh::from_buffers(
            mesh.positions().iter().map(|p| p + s),
            mesh.triangles().to_vec(),
        ).unwrap();
        let origin = Point3::new(o[0] as f32, o[1] as f32, o[2] as f32);
        let direction = Vector3::new(d[0] as f32, d[1] as f32, d[2] as f32);
        let (a, b) = (build(mesh, 4), build(moved, 4));
        let options = QueryOptions::default();
        let ha = a.closest_hit(&Ray::new(origin, direction), &options);
        let hb = b.closest_hit(&Ray::new(origin + s, direction), &options);
        // Every product is exact on small integers, so the answers agree bit for bit.
        let bits = |h: Option<meshray::Hit>| h.map(|h| (h.triangle, h.t.to_bits(), h.u.to_bits(), h.v.to_bits(), h.front_face));
        prop_assert_eq!(bits(ha), bits(hb));
    }

    /// Scaling the scene and the ray's origin by a power of two anywhere in the range the
    /// crate accepts (coordinates up to 2^40) is exact in floating point, as long as nothing
    /// overflows or underflows and no absolute epsilon hides in the code: the hit is the same
    /// triangle with the same barycentrics, bit for bit, at exactly 2^k times the `t`, and the
    /// closest point exactly 2^k times as far.
    #[test]
    fn scaling_by_powers_of_two_across_the_range_changes_no_bit(
        mesh in soup(), rays in prop::collection::vec(ray(), 1..20), k in -40i32..=33) {
        let scale = 2f32.powi(k);
        let scaled = Mesh::from_buffers(
            mesh.positions().iter().map(|p| p * scale),
            mesh.triangles().to_vec(),
        ).unwrap();
        let (a, b) = (build(mesh, 4), build(scaled, 4));
        for options in [QueryOptions::default(), QueryOptions { watertight: true, ..Default::default() }] {
            for ray in &rays {
                let moved = Ray::with_range(ray.origin() * scale, ray.direction(), ray.t_min() * scale, ray.t_max() * scale);
                let (ha, hb) = (a.closest_hit(ray, &options), b.closest_hit(&moved, &options));
                let key = |h: Option<meshray::Hit>, s: f32| h.map(|h| (h.triangle, (h.t * s).to_bits(), h.u.to_bits(), h.v.to_bits()));
                prop_assert_eq!(key(ha, scale), key(hb, 1.0), "k = {}, watertight {}", k, options.watertight);
                let pa = a.closest_point(ray.origin(), f32::INFINITY, &Default::default()).map(|c| (c.triangle, (c.distance * scale).to_bits()));
                let pb = b.closest_point(moved.origin(), f32::INFINITY, &Default::default()).map(|c| (c.triangle, c.distance.to_bits()));
                prop_assert_eq!(pa, pb, "closest point, k = {}", k);
            }
        }
    }

    #[test]
    fn any_hit_agrees_with_closest_hit(mesh in soup(), rays in prop::collection::vec(ray(), 1..40)) {
        let bvh = build(mesh, 8);
        let options = QueryOptions::default();
        for ray in &rays {
            let any = bvh.any_hit(ray, &options);
            let closest = bvh.closest_hit(ray, &options);
            prop_assert_eq!(any.is_some(), closest.is_some());
            if let (Some(any), Some(closest)) = (any, closest) {
                prop_assert!(any.t >= closest.t && any.t <= ray.t_max() && any.t >= ray.t_min());
            }
        }
    }
}
