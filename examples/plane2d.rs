//! The 2D relatives of the 3D tests: a ray against a segment (Cramer's rule in the plane)
//! and against a rectangle (the slab test, with the near and far points), for line of
//! sight on a floor plan or hit tests in a 2D editor.
//!
//! ```text
//! cargo run --release --example plane2d
//! ```

use meshray::plane::{Ray2, Rect, ray_segment};
use nalgebra::{Point2, Vector2};

mod common;

const USAGE: &str = "usage: cargo run --release --example plane2d\n";

fn main() {
    common::args(USAGE);
    // Walls of a floor plan, as segments.
    let walls = [
        (Point2::new(0.0, 0.0), Point2::new(10.0, 0.0)),
        (Point2::new(10.0, 0.0), Point2::new(10.0, 6.0)),
        (Point2::new(4.0, 2.0), Point2::new(4.0, 5.0)),
    ];
    // A line of sight from (1, 3) to the east: which wall does it meet first?
    let ray = Ray2::new(Point2::new(1.0, 3.0), Vector2::new(1.0, 0.0));
    let first = walls
        .iter()
        .enumerate()
        .filter_map(|(k, &(a, b))| ray_segment(&ray, a, b).map(|hit| (k, hit)))
        .min_by(|(_, p), (_, q)| p.t.total_cmp(&q.t));
    match first {
        // `s` is where along the wall (0 at its first end, 1 at its second) the ray met it.
        Some((k, hit)) => println!(
            "wall {k} at t = {}, s = {}, point {}",
            hit.t, hit.s, hit.point
        ),
        None => println!("no wall in sight"),
    }

    // A rectangle (a room, a widget): where a ray enters it and where it leaves.
    let room = Rect::new(Point2::new(2.0, 1.0), Point2::new(6.0, 4.0));
    let ray = Ray2::new(Point2::new(0.0, 0.0), Vector2::new(2.0, 1.0));
    match room.intersect_ray(&ray) {
        Some(hit) => println!(
            "enters at t = {} {}, leaves at t = {} {}",
            hit.t_near, hit.near, hit.t_far, hit.far
        ),
        None => println!("misses the room"),
    }
    // A ray that starts inside enters at its own start (t = 0).
    let inside = Ray2::new(Point2::new(3.0, 2.0), Vector2::new(0.0, -1.0));
    let hit = room.intersect_ray(&inside).expect("a ray from inside hits");
    assert_eq!(hit.t_near, 0.0);
    println!("from inside: leaves at {}", hit.far);
}
