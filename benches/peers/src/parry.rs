//! parry3d's `TriMesh` (its own BVH) through `RayCast`.
//!
//! parry's rays have no start parameter, so a ray starting at `t_min` is cast from
//! `origin + t_min·direction` over `t_max − t_min` and `t_min` is added back to the hit. The
//! shifted origin rounds, so on secondary rays of large-coordinate scenes (Sponza, ~1e3 units)
//! some hits land a few 1e-4 off meshray's `t` on the same triangle.

use crate::engine::{Engine, query_loops};
use meshray::{Mesh, Ray};
use parry3d::math::Vector;
use parry3d::query::RayCast;
use parry3d::shape::TriMesh;

pub struct Parry {
    mesh: TriMesh,
}

impl Parry {
    /// Builds the `TriMesh` with no flags: no vertex merging or triangle removal, so parry's
    /// triangle numbers are the mesh's.
    pub fn build(mesh: &Mesh) -> Parry {
        let vertices: Vec<Vector> = mesh
            .positions()
            .iter()
            .map(|p| Vector::new(p.x, p.y, p.z))
            .collect();
        let mesh = TriMesh::new(vertices, mesh.triangles().to_vec()).expect("parry3d TriMesh");
        Parry { mesh }
    }

    /// The shifted ray and its length, or `None` for a ray meshray calls invalid.
    fn ray(ray: &Ray) -> Option<(parry3d::query::Ray, f32)> {
        if !ray.is_valid() {
            return None;
        }
        let (o, d, t0) = (ray.origin(), ray.direction(), ray.t_min());
        let start = if t0 == 0.0 { o } else { o + d * t0 };
        let length = (ray.t_max() - t0).min(f32::MAX);
        let ray = parry3d::query::Ray::new(
            Vector::new(start.x, start.y, start.z),
            Vector::new(d.x, d.y, d.z),
        );
        Some((ray, length))
    }
}

impl Engine for Parry {
    query_loops!(Parry, peers_closest_parry3d, peers_any_parry3d);

    fn name(&self) -> &str {
        "parry3d"
    }

    fn closest(&self, ray: &Ray) -> Option<(f32, u32)> {
        let (shifted, length) = Parry::ray(ray)?;
        self.mesh
            .cast_local_ray_and_get_normal(&shifted, length, false)
            .map(|hit| (hit.time_of_impact + ray.t_min(), hit.subshape))
    }

    fn any(&self, ray: &Ray) -> bool {
        Parry::ray(ray)
            .is_some_and(|(shifted, length)| self.mesh.intersects_local_ray(&shifted, length))
    }

    fn structure_bytes(&self) -> Option<usize> {
        // parry's own figure: its BVH's node, parent and leaf arrays, by capacity. The leaves
        // name triangles of the TriMesh's vertex and index arrays (the mesh, not counted).
        Some(self.mesh.bvh().heap_memory_size())
    }
}

query_loops!(loops Parry, peers_closest_parry3d, peers_any_parry3d);
