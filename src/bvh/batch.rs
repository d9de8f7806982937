//! Batch queries: many rays at once, answered in order, on all cores with the `parallel`
//! feature (rayon's global pool, or the pool the caller `install`s).

use super::{Bvh, CompactHit, Hit, QueryOptions};
use crate::Ray;

/// Rays per task: big enough that scheduling costs nothing next to the walks, small enough
/// that two threads share a batch of a few thousand rays evenly.
#[cfg(feature = "parallel")]
const RAYS_PER_TASK: usize = 256;

impl Bvh {
    /// [`closest_hit`](Bvh::closest_hit) for each ray; `hits[i]` answers `rays[i]`.
    /// With the default `parallel` feature the rays are shared among rayon's threads. Groups
    /// of eight neighbouring camera rays walk the tree together, as in
    /// [`closest_triangles_into`](Bvh::closest_triangles_into).
    ///
    /// ```
    /// use meshray::{Bvh, Mesh, QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// let rays: Vec<Ray> = (0..100)
    ///     .map(|i| Ray::new(Point3::new(i as f32 * 0.05 - 2.5, 1.0, 10.0), -Vector3::z()))
    ///     .collect();
    /// let hits = bvh.closest_hit_per_ray(&rays, &QueryOptions::default());
    /// for (ray, hit) in rays.iter().zip(&hits) {
    ///     assert_eq!(*hit, bvh.closest_hit(ray, &QueryOptions::default()));
    /// }
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn closest_hit_per_ray(&self, rays: &[Ray], options: &QueryOptions) -> Vec<Option<Hit>> {
        self.map_chunks(rays, |chunk, out| {
            let mut short = Vec::with_capacity(chunk.len());
            self.closest_triangles_into(chunk, options, &mut short);
            let details = chunk.iter().zip(short);
            out.extend(details.map(|(ray, hit)| hit.map(|h| self.own_hit_details(ray, &h))));
        })
    }

    /// [`closest_triangle`](Bvh::closest_triangle) for each ray, in order, on all cores
    /// like [`closest_hit_per_ray`](Bvh::closest_hit_per_ray) (and with its packets of
    /// neighbouring rays).
    ///
    /// ```
    /// use meshray::{QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// let rays: Vec<Ray> = (0..64)
    ///     .map(|i| Ray::new(Point3::new(i as f32 * 0.1 - 3.2, 1.0, 10.0), -Vector3::z()))
    ///     .collect();
    /// let hits = bvh.closest_triangle_per_ray(&rays, &QueryOptions::default());
    /// for (ray, hit) in rays.iter().zip(&hits) {
    ///     assert_eq!(*hit, bvh.closest_triangle(ray, &QueryOptions::default()));
    /// }
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn closest_triangle_per_ray(
        &self,
        rays: &[Ray],
        options: &QueryOptions,
    ) -> Vec<Option<CompactHit>> {
        self.map_chunks(rays, |chunk, out| {
            let mut short = Vec::with_capacity(chunk.len());
            self.closest_triangles_into(chunk, options, &mut short);
            out.extend(short);
        })
    }

    /// [`any_hit`](Bvh::any_hit) for each ray, in order; parallel like
    /// [`closest_hit_per_ray`](Bvh::closest_hit_per_ray).
    ///
    /// ```
    /// use meshray::{QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// // Which of these points on the ground can see a light high above the sphere?
    /// let light = Point3::new(0.0, 10.0, 0.0);
    /// let points = [Point3::new(0.3, 0.0, 0.2), Point3::new(3.0, 0.0, 3.0)];
    /// let rays: Vec<Ray> = points.iter().map(|&p| Ray::with_range(p, light - p, 1e-4, 1.0)).collect();
    /// let blocked = bvh.any_hit_per_ray(&rays, &QueryOptions::default());
    /// assert!(blocked[0].is_some() && blocked[1].is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn any_hit_per_ray(&self, rays: &[Ray], options: &QueryOptions) -> Vec<Option<Hit>> {
        self.map_chunks(rays, |chunk, out| {
            out.extend(chunk.iter().map(|ray| self.any_hit(ray, options)));
        })
    }

    /// `fill(chunk, out)` appends the answers of each chunk of rays (whole packets of eight),
    /// the chunks shared among threads; the answers in ray order.
    #[cfg(feature = "parallel")]
    fn map_chunks<T, F>(&self, rays: &[Ray], fill: F) -> Vec<T>
    where
        T: Send,
        F: Fn(&[Ray], &mut Vec<T>) + Sync + Send,
    {
        use rayon::prelude::*;
        let mut out: Vec<T> = Vec::with_capacity(rays.len());
        let parts: Vec<Vec<T>> = rays
            .par_chunks(RAYS_PER_TASK)
            .map(|chunk| {
                let mut part = Vec::with_capacity(chunk.len());
                fill(chunk, &mut part);
                part
            })
            .collect();
        for part in parts {
            out.extend(part);
        }
        out
    }

    #[cfg(not(feature = "parallel"))]
    fn map_chunks<T, F>(&self, rays: &[Ray], fill: F) -> Vec<T>
    where
        F: Fn(&[Ray], &mut Vec<T>),
    {
        let mut out = Vec::with_capacity(rays.len());
        fill(rays, &mut out);
        out
    }
}
