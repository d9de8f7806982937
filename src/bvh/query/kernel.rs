//! The single-ray walk: what `Bvh::closest_hit`, `any_hit` and `cast_ray` run, and the walk
//! of every query that wants the leaf lanes a ray enters in order (every hit, the count, a
//! scene's top level, a sweep's grown boxes). It walks the `Bvh`'s tree ([`WideNode`], laid
//! out by [`ray_node`](crate::bvh::ray_node)).
//!
//! Per node visit: the six slab distances `(bound − o)·(1/d)` (a relative error of a few ulps
//! wherever the origin is, `±0` directions giving `±inf`, a `NaN` plane keeping the bound)
//! with the far planes' reciprocals and the range's end widened by
//! [`EXIT_SLACK`](slabs::EXIT_SLACK), so no box that holds a hit up to the `f64`
//! plane's `t` is culled; the clamp to the ray's range; a compare into a mask. One child
//! entered goes straight on; two or more are put in the node's order for the ray's octant
//! (farthest first), compacted and pushed, the nearest then taken back off the top; at a node
//! whose children overlap too much for any order made ahead
//! ([`SORT`](crate::bvh::wide::SORT)), sorted by distance instead. A leaf lane (one packet
//! of four triangles) goes to the walk's leaves: for a closest or any hit the packet test
//! (the edge test of Woop, Benthin and Wald (2013) in the ray's sheared space, the lanes kept
//! only where the sheared `f32` `t`, give or take a conservative bound on its error (Pharr,
//! Jakob and Humphreys, *Physically Based Rendering*, 3rd ed., §3.9.6), can land in the range,
//! then finished by the scalar test: the `f64` plane's `t`, the degenerate and
//! nearly-parallel rules, culling, ties to the lowest triangle number), so every answer is the
//! scalar watertight test's, bit for bit; for the other queries the caller's visit. An any
//! hit pushes the entered lanes in lane order with no distances, never culls at the pop, and
//! ends at the first accepted lane.
//!
//! The walk is written once ([`walk`]), over the lane types of [`lanes`], and instantiated
//! for x86 with AVX2 and FMA ([`x86`], compiled again for AVX-512) and on portable lanes
//! ([`portable`], the "portable twin" below), so both visit the same nodes in the same order
//! with the same answers by construction (the tests below still compare them on every CPU
//! with AVX2); [`isa`] chooses once per process. The x86 walk is compiled once per ray
//! octant, with the watertight test's axes chosen per query, so a query kind is eight small
//! copies per instruction set (why: the x86 module's notes).

mod isa;
pub(crate) mod lanes;
mod network;
pub(crate) mod portable;
pub(crate) mod slabs;
mod walk;
#[cfg(target_arch = "x86_64")]
mod x86;

use crate::bvh::build::MAX_WIDE_DEPTH;
use crate::bvh::ray_hits::Tally;
use crate::bvh::wide::WideNode;
use crate::triangle::TriangleHit;
use crate::{QueryOptions, Ray};
#[cfg(target_arch = "x86_64")]
use isa::X86;
use slabs::Grow;

/// The order `visit::<NEAREST_FIRST, _>` takes a node's entered children in: nearest first,
/// a waiting child dropped once its entry lies beyond the range's end (a closest hit).
pub(crate) const NEAREST_FIRST: bool = false;

/// The order `visit::<IN_LANE_ORDER, _>` takes them in: the node's lane order where it does
/// not sort, nothing dropped (any hit, every hit, the count).
pub(crate) const IN_LANE_ORDER: bool = true;

/// Where a child's key lies in the ray's span through its box at a node that sorts
/// ([`SORT`](crate::bvh::wide::SORT)): `near + KEY_POINT · (far − near)`. Measured
/// against the entry distance (0) and the midpoint (0.5) on the closest hit
/// (docs/how-it-works/ray-kernel.md §8): entry order finds Crytek Sponza's winners first but
/// the conference room's late; this point keeps the first and not the second.
const KEY_POINT: f32 = 0.15;

/// The deepest leaf the walk's stack allows (`RayTree` refuses deeper trees): with this the
/// stack stays under a page, which spares every query a stack probe.
pub(crate) const DEPTH_LIMIT: usize = 40;

/// Stack entries: a node visit adds at most seven (it writes eight above the top and takes
/// one), once per level.
const CAPACITY: usize = capacity(DEPTH_LIMIT);

/// The stack of the portable twin for a tree deeper than [`DEPTH_LIMIT`]: as deep as any tree
/// the builder makes or validation lets through.
const DEEP_CAPACITY: usize = capacity(MAX_WIDE_DEPTH);

/// The stack entries a walk of a tree whose leaves are no deeper than `depth` needs.
const fn capacity(depth: usize) -> usize {
    7 * depth + 8
}

/// A hit the walk found: the packet slot (`packet · 4 + lane`) and the triangle answer
/// (`Bvh::ray_hit` makes it a `CompactHit`).
pub(crate) type Found = (u32, TriangleHit);

/// The tree the walk reads: its nodes, the packets, the slot-to-triangle map, and the depth
/// of its deepest leaf lane (which stack the walk takes).
#[derive(Clone, Copy)]
pub(crate) struct Tree<'a> {
    pub nodes: &'a [crate::bvh::wide::WideNode],
    pub packets: &'a [crate::bvh::leaf::TrianglePacket],
    pub index: &'a [u32],
    pub depth: usize,
}

/// The closest hit (`ANY == false`) or the first hit found (`ANY == true`) of `ray` (valid)
/// in `tree`, the scalar test's answers: the x86 walk where the CPU has AVX2 and FMA, the
/// portable twin where it lacks them (or `MESHRAY_SIMD=portable`), for Cramer's rule
/// (`watertight: false`, which only the portable twin's leaf test has), or for a tree deeper
/// than [`DEPTH_LIMIT`].
#[inline(always)]
pub(crate) fn cast<const ANY: bool>(
    tree: Tree,
    ray: &Ray,
    options: &QueryOptions,
) -> Option<Found> {
    if tree.depth > DEPTH_LIMIT {
        return deep_cast::<ANY>(tree, ray, options);
    }
    #[cfg(target_arch = "x86_64")]
    if options.watertight
        && let Some(cpu) = X86::detect()
    {
        return x86::cast::<ANY>(cpu, tree, ray, options.culling);
    }
    portable::cast::<ANY, CAPACITY, ()>(tree, ray, options, &mut ())
}

/// [`cast`] for a tree deeper than [`DEPTH_LIMIT`], out of line: the portable twin with the
/// deepest stack, which only degenerate meshes need.
#[inline(never)]
fn deep_cast<const ANY: bool>(tree: Tree, ray: &Ray, options: &QueryOptions) -> Option<Found> {
    portable::cast::<ANY, DEEP_CAPACITY, ()>(tree, ray, options, &mut ())
}

/// [`visit_grown`] for a tree deeper than [`DEPTH_LIMIT`], out of line as [`deep_cast`]
/// is: its deepest stack would otherwise be in the frame of every caller's walk.
#[inline(never)]
fn deep_visit<const LANE_ORDER: bool, V: FnMut(u32, &mut f32) -> bool>(
    nodes: &[WideNode],
    depth: usize,
    ray: &Ray,
    grow: &Grow,
    t_max: f32,
    visit: V,
) {
    portable::visit::<LANE_ORDER, DEEP_CAPACITY, V>(nodes, depth, ray, grow, t_max, visit);
}

/// [`cast`] for a query that reports what it tested: the portable twin, which visits the
/// same nodes in the same order as the x86 walk and gives the same answers, counting the
/// boxes it tests and the triangles of the packets it reaches into `tally`.
pub(crate) fn cast_tallied<const ANY: bool, T: Tally>(
    tree: Tree,
    ray: &Ray,
    options: &QueryOptions,
    tally: &mut T,
) -> Option<Found> {
    if tree.depth > DEPTH_LIMIT {
        portable::cast::<ANY, DEEP_CAPACITY, T>(tree, ray, options, tally)
    } else {
        portable::cast::<ANY, CAPACITY, T>(tree, ray, options, tally)
    }
}

/// Walks `nodes` (root at 0; none, no walk), whose deepest leaf lane is at `depth`, for
/// `ray` (valid) over `ray.t_min()..t_max`, calling `visit(entry, t_max)` with each leaf lane
/// the ray enters — its first entry: a packet of a mesh's tree, or a place in a scene's
/// instance order — and the current end of the range, which it may lower; `visit` returns
/// `true` to stop. `LANE_ORDER == false` walks nearest child first and drops a waiting child whose
/// entry lies beyond the end (a closest hit); `LANE_ORDER == true` takes the children in the node's
/// lane order where it does not sort and drops nothing (any hit, every hit, the count). No
/// box holding a hit up to the end is culled. With AVX2 and FMA the x86 walk, else the
/// portable twin, in the same order.
#[inline(always)]
pub(crate) fn visit<const LANE_ORDER: bool, V: FnMut(u32, &mut f32) -> bool>(
    nodes: &[WideNode],
    depth: usize,
    ray: &Ray,
    t_max: f32,
    visit: V,
) {
    visit_grown::<LANE_ORDER, V>(nodes, depth, ray, &Grow::NONE, t_max, visit);
}

/// [`visit`] over boxes grown by `grow` (a moving shape's reach): each leaf lane whose grown
/// box the ray enters. At [`Grow::NONE`], [`visit`] itself.
#[inline(always)]
pub(crate) fn visit_grown<const LANE_ORDER: bool, V: FnMut(u32, &mut f32) -> bool>(
    nodes: &[WideNode],
    depth: usize,
    ray: &Ray,
    grow: &Grow,
    t_max: f32,
    visit: V,
) {
    if nodes.is_empty() {
        return;
    }
    if depth > DEPTH_LIMIT {
        return deep_visit::<LANE_ORDER, V>(nodes, depth, ray, grow, t_max, visit);
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(cpu) = X86::detect() {
        return x86::visit::<LANE_ORDER, V>(cpu, nodes, depth, ray, grow, t_max, visit);
    }
    portable::visit::<LANE_ORDER, CAPACITY, V>(nodes, depth, ray, grow, t_max, visit);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Culling;
    use crate::bvh::leaf::LANES;
    use crate::bvh::packet::LeafTest;
    use crate::test_support::{Rng, p};
    use crate::{Bvh, Mesh};
    use nalgebra::{Point3, Vector3};

    /// Two thousand triangles: a grid of small ones (shared edges, coplanar neighbours) and
    /// a soup of random ones across it.
    fn mesh(rng: &mut Rng) -> Mesh {
        let mut points = Vec::new();
        let mut faces = Vec::new();
        let n = 24;
        for i in 0..=n {
            for j in 0..=n {
                points.push(p(i as f32, j as f32, ((i * j) % 5) as f32 * 0.1));
            }
        }
        for i in 0..n {
            for j in 0..n {
                let a = (i * (n + 1) + j) as u32;
                let (b, c, d) = (a + 1, a + n as u32 + 1, a + n as u32 + 2);
                faces.push([a, b, d]);
                faces.push([a, d, c]);
            }
        }
        for _ in 0..800 {
            let base = points.len() as u32;
            let centre = p(
                rng.range(0.0, 24.0),
                rng.range(0.0, 24.0),
                rng.range(-4.0, 4.0),
            );
            for _ in 0..3 {
                let size = rng.range(0.1, 2.0);
                points.push(
                    centre
                        + Vector3::new(
                            rng.range(-1.0, 1.0),
                            rng.range(-1.0, 1.0),
                            rng.range(-1.0, 1.0),
                        ) * size,
                );
            }
            faces.push([base, base + 1, base + 2]);
        }
        Mesh::from_buffers(points, faces).unwrap()
    }

    fn rays(rng: &mut Rng, n: usize) -> Vec<Ray> {
        (0..n)
            .map(|k| {
                let o = Point3::new(
                    rng.range(-4.0, 28.0),
                    rng.range(-4.0, 28.0),
                    rng.range(-8.0, 8.0),
                );
                let mut d = Vector3::new(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                );
                match k % 6 {
                    0 => d.x = 0.0,
                    1 => d = Vector3::new(-0.0, 0.0, -1.0),
                    2 => d.y = -0.0,
                    _ => {}
                }
                match k % 5 {
                    0 => Ray::with_range(o, d, 0.5, 6.0),
                    _ => Ray::new(o, d),
                }
            })
            .collect()
    }

    /// The leaf lanes a walk visits, in order, with the range's end at each, the visit
    /// lowering the end to the packet's closest hit (`ANY == false`) or leaving it; `x86`:
    /// the x86 walk's (the CPU must have AVX2), else the portable twin's.
    fn visits<const ANY: bool>(bvh: &Bvh, ray: &Ray, grow: &Grow, x86: bool) -> Vec<(u32, u32)> {
        let test = LeafTest::new(ray, &QueryOptions::default());
        let mut seen = Vec::new();
        let visit = |packet: u32, t_max: &mut f32| {
            seen.push((packet, t_max.to_bits()));
            let end = *t_max;
            test.run(&bvh.leaf_packets, packet as usize, LANES, t_max, |_, h| {
                Some(if ANY { end } else { h.t })
            })
        };
        if x86 {
            #[cfg(target_arch = "x86_64")]
            {
                let cpu = X86::all_here()[0];
                x86::visit::<ANY, _>(cpu, &bvh.nodes, bvh.depth, ray, grow, ray.t_max(), visit);
            }
        } else {
            portable::visit::<ANY, CAPACITY, _>(
                &bvh.nodes,
                bvh.depth,
                ray,
                grow,
                ray.t_max(),
                visit,
            );
        }
        seen
    }

    /// The deep trees' grown walk (`deep_visit`, out of line) visits the leaf lanes the
    /// portable walk with the shallow stack visits, in the same order with the same ends,
    /// grown or not, with a visit that lowers the end.
    #[test]
    fn deep_visit_equals_the_portable_walk() {
        let mut rng = Rng::new(41);
        let bvh = Bvh::build(mesh(&mut rng));
        let grown = Grow {
            below: [0.1, 0.25, 0.0],
            above: [0.3, 0.0, 0.05],
        };
        let mut visited = 0;
        for ray in rays(&mut rng, 2000) {
            for grow in [Grow::NONE, grown] {
                let run = |deep: bool| {
                    let mut seen = Vec::new();
                    let visit = |packet: u32, t_max: &mut f32| {
                        seen.push((packet, t_max.to_bits()));
                        *t_max *= 0.9;
                        false
                    };
                    if deep {
                        deep_visit::<false, _>(
                            &bvh.nodes,
                            bvh.depth,
                            &ray,
                            &grow,
                            ray.t_max(),
                            visit,
                        );
                    } else {
                        portable::visit::<false, CAPACITY, _>(
                            &bvh.nodes,
                            bvh.depth,
                            &ray,
                            &grow,
                            ray.t_max(),
                            visit,
                        );
                    }
                    seen
                };
                let deep = run(true);
                assert_eq!(deep, run(false), "{ray:?}");
                visited += deep.len();
            }
        }
        assert!(visited > 2_000, "{visited} leaf visits");
    }

    /// The x86 walk visits the same leaf lanes in the same order with the same range as the
    /// portable twin, in both orders, grown boxes or not, and casts the same answers bit for
    /// bit, the closest hit and (from the same order) any hit, at each instruction set this
    /// CPU has, whatever `MESHRAY_SIMD` says; the portable twin with the deep trees' stack
    /// answers alike.
    #[test]
    #[cfg_attr(
        not(target_arch = "x86_64"),
        ignore = "the x86 walk exists on x86-64 only"
    )]
    fn x86_equals_portable_walk() {
        if !isa::Isa::x86_runs_here("walk") {
            return;
        }
        let mut rng = Rng::new(38);
        let bvh = Bvh::build(mesh(&mut rng));
        assert!(bvh.depth <= DEPTH_LIMIT);
        let tree = bvh.ray_tree();
        let grown = Grow {
            below: [0.1, 0.25, 0.0],
            above: [0.3, 0.0, 0.05],
        };
        let bits =
            |f: Option<Found>| f.map(|(s, h)| (s, h.t.to_bits(), h.u.to_bits(), h.v.to_bits()));
        let mut visited = 0;
        let mut hits = 0;
        for ray in rays(&mut rng, 4000) {
            for grow in [Grow::NONE, grown] {
                let closest = visits::<false>(&bvh, &ray, &grow, false);
                assert_eq!(closest, visits::<false>(&bvh, &ray, &grow, true), "{ray:?}");
                assert_eq!(
                    visits::<true>(&bvh, &ray, &grow, false),
                    visits::<true>(&bvh, &ray, &grow, true),
                    "{ray:?}"
                );
                visited += closest.len();
            }
            for culling in [Culling::None, Culling::Back, Culling::Front] {
                let options = QueryOptions {
                    culling,
                    ..QueryOptions::default()
                };
                for any in [false, true] {
                    let (twin, deep) = if any {
                        (
                            portable::cast::<true, CAPACITY, ()>(tree, &ray, &options, &mut ()),
                            deep_cast::<true>(tree, &ray, &options),
                        )
                    } else {
                        (
                            portable::cast::<false, CAPACITY, ()>(tree, &ray, &options, &mut ()),
                            deep_cast::<false>(tree, &ray, &options),
                        )
                    };
                    hits += usize::from(twin.is_some());
                    assert_eq!(bits(deep), bits(twin), "any {any}: {ray:?}");
                    #[cfg(target_arch = "x86_64")]
                    for cpu in X86::all_here() {
                        let x86 = if any {
                            x86::cast::<true>(cpu, tree, &ray, culling)
                        } else {
                            x86::cast::<false>(cpu, tree, &ray, culling)
                        };
                        assert_eq!(
                            bits(x86),
                            bits(twin),
                            "{cpu:?} {culling:?} any {any}: {ray:?}"
                        );
                    }
                }
            }
        }
        assert!(visited > 4_000, "{visited} leaf visits");
        assert!(hits > 4_000, "{hits} hits");
    }
}
