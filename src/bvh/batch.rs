//! Batch queries: many rays at once, answered in order, on all cores with the `parallel`
//! feature (rayon's global pool, or the pool the caller `install`s).

use super::{Bvh, Hit, QueryOptions};
use crate::Ray;

/// Rays per task: big enough that scheduling costs nothing next to the walks, small enough
/// that two threads share a batch of a few thousand rays evenly.
#[cfg(feature = "parallel")]
const RAYS_PER_TASK: usize = 256;

impl Bvh {
    /// [`closest_hit`](Bvh::closest_hit) for each ray; `hits[i]` answers `rays[i]`.
    /// With the default `parallel` feature the rays are shared among rayon's threads.
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
        self.map_rays(rays, |ray| self.closest_hit(ray, options))
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
        self.map_rays(rays, |ray| self.any_hit(ray, options))
    }

    #[cfg(feature = "parallel")]
    fn map_rays<F>(&self, rays: &[Ray], query: F) -> Vec<Option<Hit>>
    where
        F: Fn(&Ray) -> Option<Hit> + Sync + Send,
    {
        use rayon::prelude::*;
        rays.par_iter()
            .with_min_len(RAYS_PER_TASK)
            .map(query)
            .collect()
    }

    #[cfg(not(feature = "parallel"))]
    fn map_rays<F>(&self, rays: &[Ray], query: F) -> Vec<Option<Hit>>
    where
        F: Fn(&Ray) -> Option<Hit>,
    {
        rays.iter().map(query).collect()
    }
}
