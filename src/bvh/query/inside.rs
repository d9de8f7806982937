//! Inside or outside, fast: the winding number at a point from a nearby point where it is
//! known, and the triangles the segment between them crosses.
//!
//! Off the surface the generalized winding number `w` changes in two ways only: by exactly
//! ±1 where a path crosses a triangle (+1 through a face whose normal points against the
//! path, as when entering an outward-facing closed mesh), and smoothly, with a gradient that
//! is the Biot–Savart field of the mesh's *boundary* (the solid angle of a surface changes
//! with the viewpoint only through its rim; the edges two triangles share cancel). So for a
//! lattice point `g` near `p`, `w(p) = w(g) + J + S`, where `J` is the signed count of the
//! crossings of the segment `d = p − g` and `S = ∫ ∇w·d` the smooth change. Each lattice
//! point keeps `∇w(g)` from the boundary ([`Boundary::gradient`]) with bounds on that
//! estimate's error `ε` and on `∇w`'s derivatives `C` within `reach`, so `S = ∇w(g)·d` within
//! `|d|·ε + |d|²·C/2`. On a closed mesh there is no boundary and `S` is 0.
//!
//! [`InsideGrid`] keeps `w` (the fast sum) and that gradient at the points of a lattice over
//! the mesh's box, made on the first `contains` (O(lattice points · log n), on all cores),
//! and whether the surface comes near each at all. `contains` then casts one short segment
//! (none from a lattice point the surface does not come near); when that cannot decide (a
//! crossing near an edge or an end, a point outside the lattice, a boundary too near, an
//! estimate too close to ½) it falls back to the staged sums of [`inside_by_stages`].

use crate::boundary::Boundary;
use crate::bvh::leaf::LANES;
use crate::bvh::packet::LeafTest;
use crate::bvh::walk::{Visitor, walk};
use crate::bvh::wide::{WIDTH, WideNode};
use crate::bvh::{Bvh, par};
use crate::closest_point::box_distance_squared;
use crate::winding::{STAGE_ONE, inside_by_stages};
use crate::{QueryOptions, Ray};
use nalgebra::{Point3, Vector3};

/// Crossings within this fraction of the segment's ends (at least: see [`end_band`]), or
/// this near a triangle's edge in barycentric terms, are left to the staged sums (the f32
/// segment and the f32 test could place them on the wrong side).
const END_BAND: f32 = 1e-4;
const EDGE_BAND: f32 = 1e-5;

/// The band at the segment's ends, as a fraction of its `length`, within which a crossing
/// is left to the staged sums: [`END_BAND`], or more for a segment short beside the mesh.
/// The watertight test's `t` is a weighted mean of the corners' sheared depths, relative to
/// the segment's start, each within the mesh's `diagonal`: its error is a few f32 ulps of
/// `diagonal / length` (about 2.4e-7 of it), and the band is forty times that, so a
/// crossing inside the segment is never reported outside the range cast (`[−band,
/// 1 + band]`), and one reported within the band is never counted.
fn end_band(length: f32, diagonal: f32) -> f32 {
    END_BAND.max(1e-5 * diagonal / length)
}

/// The lattice: `w` and `K` at `counts[0] × counts[1] × counts[2]` points `origin + i·step`.
#[derive(Clone, Debug)]
pub(crate) struct InsideGrid {
    origin: [f32; 3],
    step: [f32; 3],
    counts: [usize; 3],
    /// Half a cell's diagonal: every point of the lattice's box is this near a lattice point.
    reach: f32,
    /// The mesh's box's diagonal, which bounds the f32 test's error in `t` (see [`end_band`]).
    diagonal: f32,
    /// The fast sum's winding number at each lattice point, x fastest; NaN for one on the
    /// surface.
    winding: Vec<f32>,
    /// Whether no leaf's box comes within `reach` of each lattice point: then no segment
    /// from it to a point within `reach` crosses the surface, and no ray is cast.
    clear: Vec<bool>,
    /// The mesh's boundary edges.
    boundary: Boundary,
    /// At each lattice point: `∇w` from the boundary (three numbers), a bound on that
    /// estimate's error, and a bound on `∇w`'s derivatives within `reach` (infinite where
    /// an edge comes that near); rounded so the bounds stay bounds.
    gradient: Vec<[f32; 5]>,
}

impl InsideGrid {
    fn index(&self, i: [usize; 3]) -> usize {
        (i[2] * self.counts[1] + i[1]) * self.counts[0] + i[0]
    }

    fn point(&self, i: [usize; 3]) -> [f32; 3] {
        [0, 1, 2].map(|a| self.origin[a] + i[a] as f32 * self.step[a])
    }
}

impl Bvh {
    /// Whether `p` is inside: from the lattice when the crossings decide, else the staged
    /// sums.
    pub(crate) fn contains_at(&self, p: [f64; 3]) -> bool {
        match self.inside_by_crossings(p) {
            Some(inside) => inside,
            None => inside_by_stages(|accuracy| self.winding_number_at(p, accuracy)),
        }
    }

    /// `Some(inside)` when the nearest lattice point's winding number and the crossings of
    /// the segment from it decide beyond doubt.
    fn inside_by_crossings(&self, p: [f64; 3]) -> Option<bool> {
        // While another thread makes the lattice, the exact path answers.
        let grid = self.inside_grid()?;
        let pf = p.map(|c| c as f32);
        let mut i = [0usize; 3];
        for a in 0..3 {
            let at = ((pf[a] - grid.origin[a]) / grid.step[a]).round();
            if !(at >= 0.0 && at < grid.counts[a] as f32) {
                return None;
            }
            i[a] = at as usize;
        }
        let g = grid.point(i);
        let k = grid.index(i);
        let d = Vector3::from([0, 1, 2].map(|a| pf[a] - g[a]));
        let length = d.norm();
        if length > grid.reach {
            return None;
        }
        let crossings = if length == 0.0 || grid.clear[k] {
            0
        } else {
            let band = end_band(length, grid.diagonal);
            if band > 0.25 {
                return None; // too short beside the mesh to tell its crossings' sides
            }
            self.signed_crossings(&Ray::with_range(g, d, -band, 1.0 + band), band)?
        };
        // The smooth change, from the gradient kept at the lattice point: `∇w` moves by at
        // most `change` per unit along the segment.
        let [gx, gy, gz, error, change] = grid.gradient[k];
        let l = f64::from(length);
        let estimate = f64::from(gx) * f64::from(d.x)
            + f64::from(gy) * f64::from(d.y)
            + f64::from(gz) * f64::from(d.z);
        let error = l * f64::from(error) + 0.5 * l * l * f64::from(change);
        let w = f64::from(grid.winding[k]) + f64::from(crossings) + estimate;
        ((w - 0.5).abs() > STAGE_ONE.1 + error).then_some(w > 0.5)
    }

    /// The signed count of the triangles the segment `t ∈ [0, 1]` crosses (+1 through a
    /// face whose normal points against the ray), or `None` when a crossing is too near an
    /// end or an edge to be sure of (`t` within `band` of 0 or 1, barycentrics within
    /// `EDGE_BAND` of 0).
    fn signed_crossings(&self, ray: &Ray, band: f32) -> Option<i32> {
        let options = QueryOptions::default(); // watertight, no culling
        let test = LeafTest::new(ray, &options);
        let (mut count, mut unsure) = (0i32, false);
        let t_max = ray.t_max();
        let direction = ray.direction();
        self.visit_packets(
            ray,
            #[inline(always)]
            |packet, end| {
                test.run(&self.leaf_packets, packet, LANES, end, |slot, hit| {
                    let w = 1.0 - hit.u - hit.v;
                    let tri = self.leaf_packets[slot as usize / LANES].get(slot as usize % LANES);
                    let facing = tri.normal().dot(&direction);
                    if hit.t <= band
                        || hit.t >= 1.0 - band
                        || hit.u.min(hit.v).min(w) <= EDGE_BAND
                        || facing == 0.0
                    {
                        unsure = true;
                        return None; // stop: the staged sums answer
                    }
                    count += if facing < 0.0 { 1 } else { -1 };
                    Some(t_max)
                })
            },
        );
        (!unsure).then_some(count)
    }

    /// The lattice, made on first use (on all cores); `None` while another thread makes it
    /// (see `lazy` for why nothing waits).
    fn inside_grid(&self) -> Option<&InsideGrid> {
        self.inside_grid.get_or_make(|| self.make_inside_grid())
    }

    fn make_inside_grid(&self) -> InsideGrid {
        let bounds = self.bounds();
        let extent = [0, 1, 2].map(|a| f64::from(bounds.max[a] - bounds.min[a]).max(0.0));
        // About one lattice point per four triangles, between 16³ and 40³ in all: enough that
        // a segment is short, few enough that the lattice costs little beside the tree.
        let target = (self.mesh.triangle_count() / 4).clamp(4096, 64_000) as f64;
        let largest = extent
            .iter()
            .copied()
            .fold(0.0, f64::max)
            .max(f64::MIN_POSITIVE);
        let volume: f64 = extent.iter().map(|&e| e.max(largest * 1e-3)).product();
        let cell = (volume / target).cbrt();
        let counts = extent.map(|e| ((e / cell).ceil() as usize).clamp(1, 256) + 1);
        let step =
            [0, 1, 2].map(|a| (extent[a] / (counts[a] - 1) as f64).max(f64::MIN_POSITIVE) as f32);
        let origin: [f32; 3] = bounds.min.coords.into();
        let reach = 0.5 * Vector3::from(step).norm() * (1.0 + 1e-5);
        let mut grid = InsideGrid {
            origin,
            step,
            counts,
            reach,
            diagonal: (bounds.max - bounds.min).norm(),
            winding: Vec::new(),
            clear: Vec::new(),
            boundary: Boundary::of_mesh(self.mesh.positions(), self.mesh.triangles()),
            gradient: Vec::new(),
        };
        let total = counts.iter().product::<usize>();
        // The far-field terms first, on this thread: the parallel steps below then allocate
        // nothing on the threads that run them (which may be lent to other work meanwhile).
        let _ = self.winding_number_at(origin.map(f64::from), STAGE_ONE.0);
        let at = |k: usize| {
            let i = [
                k % counts[0],
                (k / counts[0]) % counts[1],
                k / (counts[0] * counts[1]),
            ];
            grid.point(i)
        };
        let winding = par::map_indexed(total, |k| {
            self.winding_number_and_contact(at(k).map(f64::from), STAGE_ONE.0)
        });
        let boundary = &grid.boundary;
        // A lattice point on the surface knows neither side's winding number: NaN, which no
        // comparison takes.
        let winding = winding
            .into_iter()
            .map(|(w, on)| if on { f32::NAN } else { w as f32 })
            .collect();
        let clear = par::map_indexed(total, |k| self.nothing_within(at(k), reach));
        let gradient = par::map_indexed(total, |k| {
            let g = Vector3::from(at(k).map(f64::from));
            match boundary.gradient(g, f64::from(reach)) {
                Some(e) => [
                    e.value.x as f32,
                    e.value.y as f32,
                    e.value.z as f32,
                    // Up past the f32 rounding of the value and of themselves.
                    (e.error + 1e-6 * e.value.norm()) as f32 * (1.0 + 1e-6),
                    e.change as f32 * (1.0 + 1e-6),
                ],
                None => [0.0, 0.0, 0.0, f32::INFINITY, f32::INFINITY],
            }
        });
        grid.winding = winding;
        grid.gradient = gradient;
        grid.clear = clear;
        grid
    }

    /// Whether no leaf's box comes within `reach` of `g` (so no triangle does).
    fn nothing_within(&self, g: [f32; 3], reach: f32) -> bool {
        let mut visitor = Ball {
            centre: Point3::from(g).cast(),
            reach_squared: f64::from(reach) * f64::from(reach),
            found: false,
        };
        walk(&self.nodes, &mut visitor);
        !visitor.found
    }
}

/// The walk of [`Bvh::nothing_within`]: into every lane whose box comes within the reach,
/// stopping at the first leaf.
struct Ball {
    centre: Point3<f64>,
    reach_squared: f64,
    found: bool,
}

impl Visitor for Ball {
    type Key = ();
    const ORDERED: bool = false;

    fn node(&mut self, _: u32, node: &WideNode) -> (u32, [(); WIDTH]) {
        let mut near = 0;
        for k in node.lanes() {
            let (min, max) = node.lane_corners(k);
            if box_distance_squared(&self.centre, min, max) <= self.reach_squared {
                near |= 1 << k;
            }
        }
        (near, [(); WIDTH])
    }

    fn worth(&self, _: ()) -> bool {
        true
    }

    fn leaf(&mut self, _: u32, _: u32, _: ()) -> bool {
        self.found = true;
        true
    }
}
