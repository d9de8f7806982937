//! Single-ray queries (closest and any hit, their short forms, closest point, scene hits)
//! allocate nothing (checked with a counting allocator that is itself checked), and a built BVH
//! answers the same from many threads at once.
mod common;

use meshray::prelude::*;
use meshray::query::WindingAccuracy;
use meshray::{Bvh, Culling, Mesh, QueryOptions, Ray, RayQuery, Scene, SceneOptions};
use nalgebra::{Matrix4, Point3, Vector3};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

/// Counts allocations made by the current thread.
struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; it only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's layout contract is passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations() -> usize {
    ALLOCATIONS.with(|c| c.get())
}

fn scene() -> Bvh {
    Bvh::build(Mesh::load(common::asset("scene.obj")).unwrap())
}

/// Runs `query` over the rays and asserts it allocated nothing; returns how many answered.
fn allocation_free(what: &str, rays: &[Ray], mut query: impl FnMut(&Ray) -> bool) -> usize {
    let before = allocations();
    let answered = rays.iter().filter(|ray| query(ray)).count();
    assert_eq!(allocations() - before, 0, "{what} allocated");
    answered
}

/// Runs `f` on a worker of a two-thread pool of its own (directly where threads cannot be
/// made, as on wasm32-wasip1, where rayon runs everything on the calling thread).
fn on_a_pool_of_its_own<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    match rayon::ThreadPoolBuilder::new().num_threads(2).build() {
        Ok(pool) => pool.install(f),
        Err(_) => f(),
    }
}

/// Every single-ray query a picking loop calls, through the query traits, on `g` (a tree, or
/// a scene whose top level is up to date), with rays into `mesh` that mostly hit.
fn queries_allocate_nothing<G: RayCast + PointQuery>(name: &str, g: &G, mesh: &Mesh) {
    let mut rng = common::Rng::new(3);
    let mut rays = common::random_rays(mesh, 2000, &mut rng);
    rays.extend(common::camera_rays(mesh, 40));
    let at = <G as PointQuery>::Options::default();
    for (culling, watertight) in [
        (Culling::None, false),
        (Culling::Back, false),
        (Culling::Front, false),
        (Culling::None, true),
    ] {
        let options = <G as RayCast>::Options::from(QueryOptions {
            culling,
            watertight,
        });
        let what = |q: &str| format!("{name}: {q} ({culling:?}, watertight {watertight})");
        let hits = allocation_free(&what("closest_hit"), &rays, |r| {
            g.closest_hit(r, &options).is_some()
        });
        allocation_free(&what("any_hit"), &rays, |r| {
            g.any_hit(r, &options).is_some()
        });
        allocation_free(&what("closest_triangle"), &rays, |r| {
            g.cast_ray(r, RayQuery::Closest, &options).is_some()
        });
        allocation_free(&what("any_triangle"), &rays, |r| {
            g.cast_ray(r, RayQuery::Any, &options).is_some()
        });
        // Every hit, compact, into a vector already large enough.
        let mut all = Vec::with_capacity(4096);
        allocation_free(&what("all_triangles"), &rays, |r| {
            g.all_triangles(r, &options, &mut all);
            !all.is_empty()
        });
        // The batch query into a vector already large enough (camera rows walk as packets).
        // Counted on a worker of a pool of this test's own, warmed up: a thread outside a
        // pool hands its work to the global one through a shared queue, which allocates a
        // block now and then for whichever thread comes (other tests' jobs count too).
        on_a_pool_of_its_own(|| {
            let mut batch = Vec::with_capacity(rays.len());
            g.cast_rays(&rays, RayQuery::Closest, &options, &mut batch);
            let before = allocations();
            g.cast_rays(&rays, RayQuery::Closest, &options, &mut batch);
            assert_eq!(allocations() - before, 0, "{}", what("cast_rays"));
            assert_eq!(batch.iter().flatten().count(), hits);
            let before = allocations();
            g.cast_rays(&rays, RayQuery::Any, &options, &mut batch);
            assert_eq!(allocations() - before, 0, "{}", what("cast_rays, any hit"));
            assert_eq!(batch.iter().flatten().count(), hits);
        });
        // (Back-face culling on random rays still hits about half as often.)
        assert!(
            hits * 6 > rays.len(),
            "{}: only {hits} hits: the test would test little",
            what("closest_hit")
        );
    }
    let near = allocation_free(&format!("{name}: closest_point"), &rays, |r| {
        g.closest_point(r.origin(), f32::INFINITY, &at).is_some()
    });
    assert_eq!(near, rays.len());
    // Inside or outside: the first call makes the far-field terms and the lattice; then
    // nothing, for the lattice's segments and the sums' fallbacks alike.
    let first = rays[0].origin();
    g.contains(first, &at);
    let inside = allocation_free(&format!("{name}: contains"), &rays, |r| {
        g.contains(r.origin() + r.direction() * 0.5, &at)
    });
    assert!(
        inside > 0,
        "{name}: no point inside: the test would test little"
    );
    // (The exact sum is O(n) per point: a hundred points show it allocates nothing.)
    for (accuracy, points) in [
        (WindingAccuracy::default(), rays.len()),
        (WindingAccuracy::Exact, 100),
    ] {
        allocation_free(&format!("{name}: winding_number"), &rays[..points], |r| {
            g.winding_number(r.origin(), accuracy, &at) > 0.5
        });
    }
    allocation_free(&format!("{name}: signed_distance"), &rays, |r| {
        g.signed_distance(r.origin(), f32::INFINITY, &at).is_some()
    });
}

#[test]
fn the_counter_counts() {
    // Without this the tests below could pass whatever the queries do.
    let before = allocations();
    let boxed = std::hint::black_box(Box::new(7u64));
    assert_eq!(allocations(), before + 1);
    drop(boxed);
    let bvh = scene();
    let (c, h) = common::frame(bvh.mesh());
    let ray = Ray::new(c + Vector3::z() * (3.0 * h), -Vector3::z());
    let before = allocations();
    let all = bvh.all_hits(&ray, &QueryOptions::default());
    assert!(
        !all.is_empty() && allocations() > before,
        "all_hits returns a vector"
    );
}

#[test]
fn queries_allocate_nothing_on_the_scene() {
    let bvh = Arc::new(scene());
    queries_allocate_nothing("scene", &*bvh, bvh.mesh());
    // The same through a scene of that one tree placed where it is.
    let mut placed = Scene::new();
    placed.add(bvh.clone(), Matrix4::identity()).unwrap();
    placed.update();
    queries_allocate_nothing("scene, as one instance", &placed, bvh.mesh());
}

#[test]
#[cfg_attr(
    not(shared_meshes),
    ignore = "needs the shared meshes: ../shared/meshes or MESHRAY_MESHES"
)]
fn queries_allocate_nothing_on_deep_trees() {
    // Deeper trees than the scene's: a traversal stack that spilled to the heap would show.
    for name in [
        "crytek-sponza/sponza.obj",
        "happy-buddha/happy_vrip_res3.obj",
    ] {
        let bvh = Bvh::build(common::shared_mesh(name).unwrap());
        queries_allocate_nothing(name, &bvh, bvh.mesh());
    }
}

#[test]
fn scene_queries_allocate_nothing_once_the_tree_is_built() {
    let bvh = Arc::new(scene());
    let mut scene = Scene::new();
    for i in 0..50 {
        let at = Vector3::new((i % 10) as f32 * 4.0, 0.0, (i / 10) as f32 * -4.0);
        scene
            .add(bvh.clone(), Matrix4::new_translation(&at))
            .unwrap();
    }
    let mut rng = common::Rng::new(8);
    let probe = Bvh::build(
        Mesh::from_buffers(
            vec![
                scene.bounds().min,
                scene.bounds().max,
                Point3::new(scene.bounds().min.x, scene.bounds().max.y, 0.0),
            ],
            vec![[0, 1, 2]],
        )
        .unwrap(),
    );
    let rays = common::random_rays(probe.mesh(), 2000, &mut rng);
    let options = SceneOptions::default();
    // The first query after edits builds the top-level tree (and may allocate); then none.
    scene.closest_hit(&rays[0], &options);
    let hits = allocation_free("scene closest_hit", &rays, |r| {
        scene.closest_hit(r, &options).is_some()
    });
    allocation_free("scene any_hit", &rays, |r| {
        scene.any_hit(r, &options).is_some()
    });
    assert!(hits > 200, "{hits} hits");
    allocation_free("scene closest_point", &rays, |r| {
        scene.closest_point(r.origin(), 5.0, &options).is_some()
    });
    scene.contains(rays[0].origin(), &options);
    allocation_free("scene contains", &rays, |r| {
        scene.contains(r.origin(), &options)
    });
    allocation_free("scene signed_distance", &rays, |r| {
        scene.signed_distance(r.origin(), 5.0, &options).is_some()
    });
    // A frame of edits: moves refit the top-level tree in place, and `update` does it then,
    // so the queries after it allocate nothing either (its scratch list is kept).
    for frame in 0..3 {
        for id in (frame..50).step_by(7) {
            let at = Vector3::new(
                (id % 10) as f32 * 4.0,
                frame as f32,
                (id / 10) as f32 * -4.0,
            );
            scene
                .set_transform(id, Matrix4::new_translation(&at))
                .unwrap();
        }
        scene.update();
        let hits = allocation_free("scene closest_hit after edits", &rays, |r| {
            scene.closest_hit(r, &options).is_some()
        });
        assert!(hits > 200, "{hits} hits");
    }
}

#[test]
fn posing_allocates_nothing_after_the_first_pose() {
    // 100 × 100 quads: 10,201 vertices, more than one parallel chunk.
    let mesh = common::wavy_grid(100);
    let n = mesh.positions().len();
    let (joints, weights) = mesh
        .positions()
        .iter()
        .map(|p| {
            let w = (p.x / 100.0).clamp(0.0, 1.0);
            ([0u16, 1, 0, 0], [1.0 - w, w, 0.0, 0.0])
        })
        .unzip();
    let rig = meshray::pose::Rig::new(&mesh)
        .with_skin(joints, weights)
        .unwrap()
        .with_morph_targets(vec![vec![Vector3::y(); n]])
        .unwrap();
    let mut bvh = Bvh::build(mesh);
    let pose = |k: f32| {
        [
            Matrix4::identity(),
            Matrix4::new_translation(&Vector3::new(0.0, k, 0.0)),
        ]
    };
    on_a_pool_of_its_own(|| {
        let first = pose(1.0);
        let p = meshray::pose::Pose {
            joints: &first,
            morph_weights: &[0.5],
        };
        bvh.pose(&rig, &p).unwrap();
        let mut posed = vec![Point3::origin(); n];
        for k in 2..5 {
            let joints = pose(k as f32);
            let p = meshray::pose::Pose {
                joints: &joints,
                morph_weights: &[0.5 / k as f32],
            };
            let before = allocations();
            let update = bvh.pose(&rig, &p).unwrap();
            rig.pose_into(&p, &mut posed).unwrap();
            assert_eq!(allocations() - before, 0, "pose {k} allocated");
            assert!(!update.rebuilt);
            assert_eq!(bvh.mesh().positions(), &posed[..]);
        }
    });
}

#[test]
fn built_structures_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Bvh>();
    check::<Mesh>();
    check::<meshray::Error>();
    check::<Scene>();
    check::<meshray::pose::Rig>();
}

#[test]
#[cfg_attr(target_os = "wasi", ignore = "no threads on wasm32-wasip1")]
fn many_threads_answer_like_one() {
    let bvh = scene();
    let mut rng = common::Rng::new(11);
    let rays = common::random_rays(bvh.mesh(), 4000, &mut rng);
    let options = QueryOptions::default();
    let alone: Vec<_> = rays.iter().map(|r| bvh.closest_hit(r, &options)).collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|k| {
                let (bvh, rays) = (&bvh, &rays);
                s.spawn(move || {
                    // each thread walks the rays in its own order
                    let mut order: Vec<usize> = (0..rays.len()).collect();
                    order.rotate_left(k * 997);
                    order
                        .into_iter()
                        .map(|i| (i, bvh.closest_hit(&rays[i], &options)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            for (i, hit) in h.join().unwrap() {
                assert_eq!(hit, alone[i], "ray {i}");
            }
        }
    });
}

/// A build on any number of threads makes the same tree, leaf order and all, at every build
/// quality: the parallel steps (binning the top nodes in halves, the subtrees, the
/// gathers, the leaf packing in runs of nodes) are joined in order. A wavy grid of 180,000
/// triangles, enough for each of them.
#[cfg(all(feature = "parallel", feature = "serde"))]
#[test]
fn builds_are_the_same_on_any_number_of_threads() {
    use meshray::BuildOptions;
    use meshray::tree::BuildQuality;
    let n = 300u32;
    let positions = (0..=n).flat_map(|i| {
        (0..=n).map(move |j| {
            let (x, z) = (i as f32 * 0.1, j as f32 * 0.1);
            Point3::new(x, (x * 1.7).sin() * (z * 0.9).cos(), z)
        })
    });
    let at = |i: u32, j: u32| i * (n + 1) + j;
    let triangles: Vec<[u32; 3]> = (0..n)
        .flat_map(|i| {
            (0..n).flat_map(move |j| {
                [
                    [at(i, j), at(i + 1, j), at(i, j + 1)],
                    [at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)],
                ]
            })
        })
        .collect();
    let mesh = Mesh::from_buffers(positions, triangles).unwrap();
    for quality in [
        BuildQuality::Fast,
        BuildQuality::Default,
        BuildQuality::High,
    ] {
        let options = BuildOptions {
            quality,
            ..Default::default()
        };
        let saved = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let bvh = pool.install(|| Bvh::build_with(mesh.clone(), &options));
            postcard::to_allocvec(&bvh).unwrap()
        };
        let one = saved(1);
        for threads in [2, 3] {
            assert!(saved(threads) == one, "{quality:?} on {threads} threads");
        }
    }
}

/// The tables a tree makes on first use (the unit normals, `contains`' lattice), asked for
/// the first time from inside parallel loops on eight threads, on fresh trees, many times
/// over: every answer as one thread gives it, those made while another thread makes the
/// table (without it) included, and no deadlock. (A table made while its cell is held can
/// deadlock when a worker waiting on the loop that makes it takes up a job asking for the
/// same table; that takes a steal at the wrong moment, which this test did not provoke on a
/// 2-core machine before the fix: the deterministic case is `bvh::lazy`'s unit test.) A
/// watchdog fails the test rather than let it hang.
#[test]
#[cfg_attr(target_os = "wasi", ignore = "no threads on wasm32-wasip1")]
fn first_use_tables_made_from_inside_parallel_loops() {
    use rayon::prelude::*;
    // 80,000 triangles: the tables are made in many parallel jobs.
    let mesh = common::wavy_grid(200);
    let mut rng = common::Rng::new(12);
    let rays = common::random_rays(&mesh, 3000, &mut rng);
    let points: Vec<Point3<f32>> = rays.iter().map(|r| r.at(2.0)).collect();
    let reference = Bvh::build(mesh.clone());
    let options = QueryOptions::default();
    let hits: Vec<_> = rays
        .iter()
        .map(|r| reference.cast_ray(r, RayQuery::Closest, &options))
        .collect();
    let normals: Vec<_> = hits
        .iter()
        .map(|h| h.and_then(|h| reference.hit_normal(&h)))
        .collect();
    let inside: Vec<bool> = points
        .iter()
        .map(|&p| reference.contains(p, &options))
        .collect();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        for round in 0..20 {
            let fresh = Bvh::build(mesh.clone());
            let (n, i) = pool.install(|| {
                let n: Vec<_> = hits
                    .par_iter()
                    .with_max_len(1)
                    .map(|h| h.and_then(|h| fresh.hit_normal(&h)))
                    .collect();
                let i: Vec<bool> = points
                    .par_iter()
                    .with_max_len(1)
                    .map(|&p| fresh.contains(p, &options))
                    .collect();
                (n, i)
            });
            assert_eq!(n, normals, "round {round}: the normals");
            assert_eq!(i, inside, "round {round}: inside or not");
        }
        done.send(()).unwrap();
    });
    finished
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("the parallel queries finished (or a deadlock, or a failed assertion above)");
}
