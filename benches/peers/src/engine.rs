//! The common face of every ray caster compared, and meshray's own.

use meshray::prelude::*;
use meshray::{Bvh, CompactHit, QueryOptions, Ray, RayQuery};

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

    /// [`closest`](Engine::closest) for every ray: the engine's `peers_closest_<name>` loop
    /// (see [`query_loops!`]), what the comparison times and `--callgrind` counts.
    fn closest_all(&self, rays: &[Ray], out: &mut [Option<(f32, u32)>]);

    /// [`any`](Engine::any) for every ray: the engine's `peers_any_<name>` loop.
    fn any_all(&self, rays: &[Ray], out: &mut [bool]);
}

/// Defines an engine's query loops, `$closest` and `$any` (named `peers_closest_<engine>` and
/// `peers_any_<engine>`), over `$engine`'s [`Engine::closest`] and [`Engine::any`], and
/// implements [`Engine::closest_all`] and [`Engine::any_all`] as calls to them (the macro goes
/// inside the engine's `impl Engine`, the loops beside it). The loops are `#[inline(never)]` and
/// unmangled, so their symbols are exactly these names in every build: the timed comparison
/// and `--callgrind` run the same function, and `valgrind --tool=callgrind
/// --toggle-collect=peers_closest_<engine>` counts what the loop and everything it calls
/// execute, nothing else. The per-ray call is static, as each loop is compiled for its engine.
macro_rules! query_loops {
    // Beside the impl: the loop functions themselves.
    (loops $engine:ty, $closest:ident, $any:ident) => {
        /// The closest-hit loop this engine's `closest_all` calls (see `query_loops!`).
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub fn $closest(engine: &$engine, rays: &[meshray::Ray], out: &mut [Option<(f32, u32)>]) {
            for (ray, slot) in rays.iter().zip(out) {
                *slot = $crate::engine::Engine::closest(engine, ray);
            }
        }

        /// The any-hit loop this engine's `any_all` calls (see `query_loops!`).
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub fn $any(engine: &$engine, rays: &[meshray::Ray], out: &mut [bool]) {
            for (ray, slot) in rays.iter().zip(out) {
                *slot = $crate::engine::Engine::any(engine, ray);
            }
        }
    };
    // Inside the impl: the two methods, calling them.
    ($_engine:ty, $closest:ident, $any:ident) => {
        fn closest_all(&self, rays: &[meshray::Ray], out: &mut [Option<(f32, u32)>]) {
            $closest(self, rays, out)
        }

        fn any_all(&self, rays: &[meshray::Ray], out: &mut [bool]) {
            $any(self, rays, out)
        }
    };
}
pub(crate) use query_loops;

/// meshray with its default query options (both faces, the watertight triangle test): one
/// ray at a time, or (`batch`) through the batch query `cast_rays`, where eight neighbouring
/// camera rays walk the tree together, on a pool of one thread like every peer.
pub struct Meshray {
    bvh: std::sync::Arc<Bvh>,
    options: QueryOptions,
    batch: bool,
    one_thread: rayon::ThreadPool,
}

impl Meshray {
    pub fn new(bvh: std::sync::Arc<Bvh>, batch: bool) -> Meshray {
        Meshray {
            bvh,
            options: QueryOptions::default(),
            batch,
            one_thread: rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .expect("a one-thread pool"),
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
        if self.batch {
            peers_closest_meshray_batch(self, rays, out)
        } else {
            peers_closest_meshray(self, rays, out)
        }
    }

    fn any_all(&self, rays: &[Ray], out: &mut [bool]) {
        if self.batch {
            peers_any_meshray_batch(self, rays, out)
        } else {
            peers_any_meshray(self, rays, out)
        }
    }

    fn closest(&self, ray: &Ray) -> Option<(f32, u32)> {
        // The short answer (t, triangle, u, v), like Embree's rtcIntersect1.
        self.bvh
            .cast_ray(ray, RayQuery::Closest, &self.options)
            .map(|h| (h.t, h.triangle))
    }

    fn any(&self, ray: &Ray) -> bool {
        self.bvh
            .cast_ray(ray, RayQuery::Any, &self.options)
            .is_some()
    }

    fn structure_bytes(&self) -> Option<usize> {
        // `Stats::bytes_per_triangle`: nodes, leaf triangles and the leaf-to-mesh map.
        let stats = self.bvh.stats();
        Some((f64::from(stats.bytes_per_triangle) * stats.triangles as f64).round() as usize)
    }
}

query_loops!(loops Meshray, peers_closest_meshray, peers_any_meshray);

/// The batch query's closest-hit loop (see [`query_loops!`]): blocks of 4,096 rays into one
/// reused vector, as an application casting an image tile by tile would (and as `meshray
/// bench --batch` does).
#[unsafe(no_mangle)]
#[inline(never)]
pub fn peers_closest_meshray_batch(engine: &Meshray, rays: &[Ray], out: &mut [Option<(f32, u32)>]) {
    engine.batch(rays, RayQuery::Closest, out, |hit| {
        hit.map(|h| (h.t, h.triangle))
    });
}

/// The batch query's any-hit loop, as [`peers_closest_meshray_batch`].
#[unsafe(no_mangle)]
#[inline(never)]
pub fn peers_any_meshray_batch(engine: &Meshray, rays: &[Ray], out: &mut [bool]) {
    engine.batch(rays, RayQuery::Any, out, |hit| hit.is_some());
}

impl Meshray {
    /// `cast_rays` on the engine's one thread, in blocks of 4,096 rays; `out[k]` is
    /// `answer(hit)` of the `k`-th ray.
    fn batch<T: Send>(
        &self,
        rays: &[Ray],
        query: RayQuery,
        out: &mut [T],
        answer: impl Fn(Option<CompactHit>) -> T + Sync,
    ) {
        let mut hits = Vec::with_capacity(4096);
        self.one_thread.install(|| {
            for (rays, out) in rays.chunks(4096).zip(out.chunks_mut(4096)) {
                self.bvh.cast_rays(rays, query, &self.options, &mut hits);
                for (slot, hit) in out.iter_mut().zip(&hits) {
                    *slot = answer(*hit);
                }
            }
        });
    }
}
