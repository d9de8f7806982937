//! The batch query: a slice of rays in, one answer per ray out, on all cores. The command,
//! the Python and the JavaScript packages all cast through it, so the choices below (how rays
//! are shared among threads) are made once. Every ray walks on its own: eight camera rays
//! walking together as a packet cost more instructions than eight of the single-ray walk
//! (callgrind, camera rays on the bunny, Crytek Sponza and the conference room), so the
//! packet walk went with the old walk.

use crate::QueryOptions;
use crate::Ray;
use crate::bvh::{Bvh, CompactHit};

/// Rays per task: big enough that scheduling costs nothing next to the walks, small enough
/// that two threads share a batch of a few thousand rays evenly.
#[cfg(feature = "parallel")]
const RAYS_PER_TASK: usize = 256;

/// What a batch asks of each ray.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RayQuery {
    /// The nearest hit, as [`Bvh::closest_hit`] finds it.
    #[default]
    Closest,
    /// Whether the ray hits anything: the first hit found, as [`Bvh::any_hit`] finds
    /// it (shadow rays, lines of sight). Faster than [`RayQuery::Closest`], since the walk
    /// stops at the first hit.
    Any,
}

impl Bvh {
    /// Answers every ray of `rays`: `hits[i]` is the answer to `rays[i]`, exactly what
    /// [`cast_ray`](Bvh::cast_ray) answers for it alone. `hits` is cleared first; a loop that reuses it allocates nothing
    /// once it is large enough. [`hit_details`](Bvh::hit_details) turns an answer into a
    /// full [`Hit`](crate::Hit).
    ///
    /// With the default `parallel` feature the rays are shared among the threads of the
    /// current rayon pool (the global one, or the one the caller `install`s; one thread
    /// casts them in order), in runs of consecutive rays, so neighbouring rays of a camera
    /// walk the same nodes while they are in cache.
    ///
    /// ```
    /// use meshray::{Bvh, Mesh, QueryOptions, Ray, RayQuery};
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// // A camera at z = 10 looking down -z, through 64 pixels of a row.
    /// let eye = Point3::new(0.0, 1.0, 10.0);
    /// let rays: Vec<Ray> = (0..64)
    ///     .map(|i| Ray::new(eye, Vector3::new(-0.2 + 0.00625 * i as f32, 0.01, -1.0)))
    ///     .collect();
    /// let options = QueryOptions::default();
    /// let mut hits = Vec::new();
    /// bvh.cast_rays(&rays, RayQuery::Closest, &options, &mut hits);
    /// for (ray, hit) in rays.iter().zip(&hits) {
    ///     assert_eq!(*hit, bvh.cast_ray(ray, RayQuery::Closest, &options));
    /// }
    ///
    /// // Which of these points on the ground can see a light high above the sphere?
    /// let light = Point3::new(0.0, 10.0, 0.0);
    /// let points = [Point3::new(0.3, 0.0, 0.2), Point3::new(3.0, 0.0, 3.0)];
    /// let shadow: Vec<Ray> =
    ///     points.iter().map(|&p| Ray::with_range(p, light - p, 1e-4, 1.0)).collect();
    /// bvh.cast_rays(&shadow, RayQuery::Any, &options, &mut hits);
    /// assert!(hits[0].is_some() && hits[1].is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn cast_rays(
        &self,
        rays: &[Ray],
        query: RayQuery,
        options: &QueryOptions,
        hits: &mut Vec<Option<CompactHit>>,
    ) {
        hits.clear();
        hits.resize(rays.len(), None);
        #[cfg(feature = "parallel")]
        if rays.len() > RAYS_PER_TASK && rayon::current_num_threads() > 1 {
            use rayon::prelude::*;
            hits.par_chunks_mut(RAYS_PER_TASK)
                .zip(rays.par_chunks(RAYS_PER_TASK))
                .for_each(|(out, rays)| self.cast_in_order(rays, query, options, out));
            return;
        }
        self.cast_in_order(rays, query, options, hits);
    }

    /// [`cast_rays`](Bvh::cast_rays) on this thread, into `out` (as long as `rays`).
    fn cast_in_order(
        &self,
        rays: &[Ray],
        query: RayQuery,
        options: &QueryOptions,
        out: &mut [Option<CompactHit>],
    ) {
        match query {
            RayQuery::Any => {
                for (slot, ray) in out.iter_mut().zip(rays) {
                    *slot = self.any_triangle(ray, options);
                }
            }
            RayQuery::Closest => {
                for (slot, ray) in out.iter_mut().zip(rays) {
                    *slot = self.closest_triangle(ray, options);
                }
            }
        }
    }
}
