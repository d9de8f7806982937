//! obvhs: its compressed wide BVH (CWBVH, 8-wide, SIMD node tests) built with the crate's
//! `build_cwbvh_from_tris` helper and `BvhBuildParams::medium_build()` (documented as about
//! Embree's build time with faster traversal), traversed with `CwBvh::ray_traverse`. The
//! triangles are laid out in the BVH's primitive order as `RtTriangle`s (the crate's CPU
//! triangle with its `intersect`, a two-sided Möller–Trumbore), as its cornell-box example
//! does, so the leaf test needs no index lookup.

use crate::engine::{Engine, query_loops};
use glam::Vec3A;
use meshray::{Mesh, Ray};
use obvhs::BvhBuildParams;
use obvhs::cwbvh::CwBvh;
use obvhs::cwbvh::builder::build_cwbvh_from_tris;
use obvhs::ray::RayHit;
use obvhs::rt_triangle::RtTriangle;
use obvhs::triangle::Triangle;
use std::time::Duration;

pub struct Obvhs {
    bvh: CwBvh,
    /// `tris[i]` is the mesh's triangle `bvh.primitive_indices[i]`.
    tris: Vec<RtTriangle>,
}

impl Obvhs {
    pub fn build(mesh: &Mesh) -> Obvhs {
        let v = |i: u32| {
            let p = mesh.positions()[i as usize];
            Vec3A::new(p.x, p.y, p.z)
        };
        let triangles: Vec<Triangle> = mesh
            .triangles()
            .iter()
            .map(|&[a, b, c]| Triangle {
                v0: v(a),
                v1: v(b),
                v2: v(c),
            })
            .collect();
        let bvh = build_cwbvh_from_tris(
            &triangles,
            BvhBuildParams::medium_build(),
            &mut Duration::default(),
        );
        let tris = bvh
            .primitive_indices
            .iter()
            .map(|&i| RtTriangle::from(&triangles[i as usize]))
            .collect();
        Obvhs { bvh, tris }
    }

    fn ray(ray: &Ray) -> obvhs::ray::Ray {
        let (o, d) = (ray.origin(), ray.direction());
        obvhs::ray::Ray::new(
            Vec3A::new(o.x, o.y, o.z),
            Vec3A::new(d.x, d.y, d.z),
            ray.t_min(),
            ray.t_max(),
        )
    }
}

impl Engine for Obvhs {
    query_loops!(Obvhs, peers_closest_obvhs, peers_any_obvhs);

    fn name(&self) -> &str {
        "obvhs"
    }

    fn closest(&self, ray: &Ray) -> Option<(f32, u32)> {
        if !ray.is_valid() {
            return None;
        }
        let mut hit = RayHit::none();
        self.bvh
            .ray_traverse(Obvhs::ray(ray), &mut hit, |r, i| self.tris[i].intersect(r))
            .then(|| (hit.t, self.bvh.primitive_indices[hit.primitive_id as usize]))
    }

    fn any(&self, ray: &Ray) -> bool {
        ray.is_valid()
            && !self
                .bvh
                .ray_traverse_miss(Obvhs::ray(ray), |r, i| self.tris[i].intersect(r))
    }

    fn structure_bytes(&self) -> Option<usize> {
        // The compressed nodes, the primitive order and the triangles laid out in it.
        let exact = self.bvh.exact_node_aabbs.as_deref().map_or(0, size_of_val);
        Some(
            size_of_val(&self.bvh.nodes[..])
                + size_of_val(&self.bvh.primitive_indices[..])
                + size_of_val(&self.tris[..])
                + exact,
        )
    }
}

query_loops!(loops Obvhs, peers_closest_obvhs, peers_any_obvhs);
