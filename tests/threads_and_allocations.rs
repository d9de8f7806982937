//! Closest and any hit allocate nothing (checked with a counting allocator), and a built BVH
//! answers the same from many threads at once.
mod common;

use meshray::{Bvh, Culling, Mesh, QueryOptions};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

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
    Bvh::build(Mesh::load_obj(common::asset("scene.obj")).unwrap())
}

#[test]
fn closest_and_any_hit_allocate_nothing() {
    let bvh = scene();
    let mut rng = common::Rng::new(3);
    let mut rays = common::random_rays(bvh.mesh(), 2000, &mut rng);
    rays.extend(common::camera_rays(bvh.mesh(), 40));
    let mut hits = 0;
    for (culling, watertight) in [
        (Culling::None, false),
        (Culling::Back, false),
        (Culling::Front, false),
        (Culling::None, true),
    ] {
        let options = QueryOptions {
            culling,
            watertight,
        };
        let before = allocations();
        for ray in &rays {
            hits += bvh.closest_hit(ray, &options).is_some() as usize;
            hits += bvh.any_hit(ray, &options).is_some() as usize;
        }
        assert_eq!(allocations() - before, 0, "queries allocated ({culling:?})");
    }
    assert!(
        hits > 1000,
        "the rays must hit something for this to test anything"
    );
    // the counter does count: all_hits allocates its vector
    let before = allocations();
    let all = bvh.all_hits(&rays[0], &QueryOptions::default());
    assert!(all.is_empty() || allocations() > before);
}

#[test]
fn built_structures_are_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Bvh>();
    check::<Mesh>();
    check::<meshray::Error>();
}

#[test]
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
