//! The common face of every ray caster compared, and meshray's own.

use meshray::{Bvh, QueryOptions, Ray};

/// A ray caster built over one mesh. Triangle numbers are the mesh's (file order).
pub trait Engine {
    /// The name printed in the tables.
    fn name(&self) -> &str;

    /// The closest hit within the ray's range: its `t` and triangle number.
    fn closest(&self, ray: &Ray) -> Option<(f32, u32)>;

    /// Whether anything is hit within the ray's range.
    fn any(&self, ray: &Ray) -> bool;

    /// Bytes of the structure the queries walk, the mesh's own vertex and index arrays not
    /// counted (copies of triangles the structure keeps are), or `None` where the engine
    /// gives no way to tell.
    fn structure_bytes(&self) -> Option<usize> {
        None
    }

    /// [`closest`](Engine::closest) for every ray. A provided method, so the loop is compiled
    /// per engine and the per-ray call is static even through `dyn Engine`.
    fn closest_all(&self, rays: &[Ray], out: &mut [Option<(f32, u32)>]) {
        for (ray, slot) in rays.iter().zip(out) {
            *slot = self.closest(ray);
        }
    }

    /// [`any`](Engine::any) for every ray.
    fn any_all(&self, rays: &[Ray], out: &mut [bool]) {
        for (ray, slot) in rays.iter().zip(out) {
            *slot = self.any(ray);
        }
    }
}

/// meshray with its default query options (both faces, Cramer's rule).
pub struct Meshray {
    bvh: Bvh,
    options: QueryOptions,
}

impl Meshray {
    pub fn new(bvh: Bvh) -> Meshray {
        Meshray {
            bvh,
            options: QueryOptions::default(),
        }
    }
}

impl Engine for Meshray {
    fn name(&self) -> &str {
        "meshray"
    }

    fn closest(&self, ray: &Ray) -> Option<(f32, u32)> {
        // The short answer (t, triangle, u, v), like Embree's rtcIntersect1.
        self.bvh
            .closest_triangle(ray, &self.options)
            .map(|h| (h.t, h.triangle))
    }

    fn any(&self, ray: &Ray) -> bool {
        self.bvh.any_triangle(ray, &self.options).is_some()
    }

    fn structure_bytes(&self) -> Option<usize> {
        // `Stats::bytes_per_triangle`: nodes, leaf triangles and the leaf-to-mesh map.
        let stats = self.bvh.stats();
        Some((f64::from(stats.bytes_per_triangle) * stats.triangles as f64).round() as usize)
    }
}
