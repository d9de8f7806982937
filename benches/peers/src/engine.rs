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

/// meshray with its default query options (both faces, Cramer's rule): one ray at a time,
/// or (`batch`) closest hits through the batch query, where eight neighbouring rays walk the
/// tree together (any hit stays one ray at a time).
pub struct Meshray {
    bvh: std::sync::Arc<Bvh>,
    options: QueryOptions,
    batch: bool,
}

impl Meshray {
    pub fn new(bvh: std::sync::Arc<Bvh>, batch: bool) -> Meshray {
        Meshray {
            bvh,
            options: QueryOptions::default(),
            batch,
        }
    }
}

impl Engine for Meshray {
    fn name(&self) -> &str {
        if self.batch {
            "meshray batch"
        } else {
            "meshray"
        }
    }

    fn closest_all(&self, rays: &[Ray], out: &mut [Option<(f32, u32)>]) {
        if !self.batch {
            for (ray, slot) in rays.iter().zip(out) {
                *slot = self.closest(ray);
            }
            return;
        }
        // In chunks of 256 rays into one reused vector, as an application casting an image
        // tile by tile would (and as `meshray bench --batch` does).
        let mut hits = Vec::with_capacity(256);
        for (rays, out) in rays.chunks(256).zip(out.chunks_mut(256)) {
            self.bvh
                .closest_triangles_into(rays, &self.options, &mut hits);
            for (slot, hit) in out.iter_mut().zip(&hits) {
                *slot = hit.map(|h| (h.t, h.triangle));
            }
        }
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
