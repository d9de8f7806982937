//! The CPU's half of a GPU batch, without wgpu: the kernel's text, the layouts it reads and
//! writes, and the finish that turns its narrowed answers into exact ones. The device code
//! (the crate's `wgpu` feature) drives the kernel natively; the npm package's WebAssembly
//! builds this module alone and drives the same kernel through the browser's WebGPU.

use meshray::prelude::*;
use meshray::{Bvh, CompactHit, QueryOptions, Ray, RayQuery};
use std::time::Duration;

/// The kernel (WGSL): one invocation per ray, bindings 0 nodes, 1 packets (read-only
/// storage: [`Bvh::raw_tree`]'s words), 2 rays ([`GpuRay`]s, read-only storage), 3 answers
/// ([`GpuAnswer`]s, read-write storage), 4 parameters (a uniform of four `u32`s: the ray
/// count, the mode ([`MODE_CLOSEST`], [`MODE_ANY`]), 0, 0); entry point `main`, workgroups
/// of [`WORKGROUP`].
pub const KERNEL: &str = include_str!("closest.wgsl");

/// The kernel's workgroup size.
pub const WORKGROUP: u32 = 64;
/// Rays per dispatch (the workgroup count stays under 65,535 on one axis).
pub const CHUNK: usize = 1 << 20;
/// The kernel's mode for closest hits.
pub const MODE_CLOSEST: u32 = 0;
/// The kernel's mode for any hits.
pub const MODE_ANY: u32 = 1;

/// Bytes of a [`GpuRay`].
pub const RAY_BYTES: u64 = std::mem::size_of::<GpuRay>() as u64;
/// Bytes of a [`GpuHit`].
pub const HIT_BYTES: u64 = std::mem::size_of::<GpuHit>() as u64;
/// Bytes of a [`GpuAnswer`].
pub const ANSWER_BYTES: u64 = std::mem::size_of::<GpuAnswer>() as u64;

/// What one batch cost and how much of it the CPU redid.
#[derive(Clone, Copy, Debug, Default)]
pub struct BatchStats {
    /// Rays cast.
    pub rays: usize,
    /// Rays the GPU flagged for the CPU to cast again (candidate list or stack overflowed,
    /// a corner not finite).
    pub flagged: usize,
    /// Of those, flagged because the walk's stack overflowed.
    pub overflow: usize,
    /// Rays the GPU narrowed to several candidates (a near tie, or a triangle it could not
    /// decide within reach), which the CPU tested one by one.
    pub several: usize,
    /// The candidates the CPU tested, all rays together (the best included).
    pub tested: usize,
    /// Rays whose certain best the exact test refused (cast again on the CPU).
    pub refused: usize,
    /// Nodes the GPU visited, all rays together.
    pub visits: u64,
    /// Time from upload of the rays to the answers read back.
    pub gpu: Duration,
    /// Time spent finishing on the CPU.
    pub finish: Duration,
}

/// How the CPU finishes a ray the GPU narrowed to several candidates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    /// Casts it again with `Bvh::cast_ray`: every answer is `cast_ray`'s bit for bit.
    CastRay,
    /// Tests the candidates with the exact triangle test and keeps the least `t`, ties to the
    /// lowest triangle number: the answer of the scalar test over every triangle the kernel's
    /// walk could not rule out (a brute force). Since main's 478fe97 (a hit's `t` raised to
    /// its box entry) that has been `cast_ray`'s on every ray tested (see NOTES.md).
    Candidates,
}

/// One ray as the kernel reads it: the layout of a rays buffer (32 bytes, `f32`s in the
/// device's byte order; WGSL: `struct { o: array<f32, 3>, t_min: f32, d: array<f32, 3>,
/// t_max: f32 }`). As [`Ray::with_range`]: any values are accepted, and a ray that cannot
/// hit answers none.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuRay {
    /// The origin.
    pub origin: [f32; 3],
    /// The range's start.
    pub t_min: f32,
    /// The direction (not normalized: `t` is in its units).
    pub direction: [f32; 3],
    /// The range's end (`+∞` for no end).
    pub t_max: f32,
}

impl From<&Ray> for GpuRay {
    fn from(r: &Ray) -> GpuRay {
        GpuRay {
            origin: r.origin().coords.into(),
            t_min: r.t_min(),
            direction: r.direction().into(),
            t_max: r.t_max(),
        }
    }
}

impl From<&GpuRay> for Ray {
    fn from(r: &GpuRay) -> Ray {
        Ray::with_range(r.origin, r.direction, r.t_min, r.t_max)
    }
}

impl GpuRay {
    /// `ray` as the kernel is given it from the CPU: itself, or, for a ray the CPU answers
    /// without the kernel (an invalid one: none; one with a tiny direction component: its
    /// own cast), an empty range the kernel skips.
    pub fn for_kernel(ray: &Ray) -> GpuRay {
        if ray.is_valid() && !tiny_direction(ray) {
            GpuRay::from(ray)
        } else {
            GpuRay {
                origin: [0.0; 3],
                t_min: 1.0,
                direction: [0.0, 0.0, 1.0],
                t_max: 0.0,
            }
        }
    }
}

/// One answer as a hits buffer holds it (16 bytes; WGSL: `struct { t: f32, triangle: u32,
/// u: f32, v: f32 }`): the fields of [`CompactHit`], bit for bit; a miss has `triangle`
/// [`NO_HIT`], `t` `+∞`, `u` and `v` 0.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuHit {
    /// The ray's parameter at the hit.
    pub t: f32,
    /// The mesh's triangle number, or [`NO_HIT`].
    pub triangle: u32,
    /// The barycentric coordinate of the triangle's second corner.
    pub u: f32,
    /// The barycentric coordinate of its third corner.
    pub v: f32,
}

/// [`GpuHit::triangle`] of a ray that hits nothing.
pub const NO_HIT: u32 = u32::MAX;

impl From<Option<CompactHit>> for GpuHit {
    fn from(hit: Option<CompactHit>) -> GpuHit {
        match hit {
            Some(h) => GpuHit {
                t: h.t,
                triangle: h.triangle,
                u: h.u,
                v: h.v,
            },
            None => GpuHit {
                t: f32::INFINITY,
                triangle: NO_HIT,
                u: 0.0,
                v: 0.0,
            },
        }
    }
}

/// One ray's answer as the kernel writes it (64 bytes): not the answer yet, but what the
/// CPU needs to finish it ([`Finisher`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuAnswer {
    /// The slot of the certain hit of least `t`, or none (`u32::MAX`).
    pub best: u32,
    /// Its `t` in the kernel's `f32` (not the CPU's).
    pub t: f32,
    /// Why the CPU must look again (see `closest.wgsl`).
    pub flags: u32,
    /// Nodes the walk visited.
    pub visits: u32,
    /// How many of `candidates` are used.
    pub count: u32,
    _pad: [u32; 3],
    /// The other triangles (slots) that might be the answer.
    pub candidates: [u32; CANDIDATES],
}

/// Below this (and not zero) a direction component makes the CPU cast the ray: the kernel's
/// bounds on a box entry, `(bound − o)·(1/d)`, allow for a device that flushes a subnormal
/// `bound − o` to zero only while `1/d` is at most 2^60 (closest.wgsl's `TINY`).
const TINY_DIRECTION: f32 = 1.0 / (1u64 << 60) as f32;

/// Whether a direction component is nonzero but below [`TINY_DIRECTION`].
fn tiny_direction(ray: &Ray) -> bool {
    let d = ray.direction();
    [d.x, d.y, d.z]
        .iter()
        .any(|c| *c != 0.0 && c.abs() < TINY_DIRECTION)
}

const NONE: u32 = u32::MAX;
const FLAG_NEAR: u32 = 1;
const FLAG_OVERFLOW: u32 = 2;
const FLAG_INPUT: u32 = 4;
const FLAG_LIST: u32 = 64;
/// The flags that make the CPU cast the ray itself.
const FALLBACK: u32 = FLAG_OVERFLOW | FLAG_INPUT | FLAG_LIST;
/// The candidate list's length (the kernel's `K`).
const CANDIDATES: usize = 8;

/// Finishes the kernel's answers on one tree on the CPU, each ray bit for bit what
/// `Bvh::cast_ray` answers (closest hits), or a hit exactly where it finds one (any hits).
#[derive(Clone, Copy)]
pub struct Finisher<'b> {
    bvh: &'b Bvh,
    /// Slot → the mesh's triangle number.
    index: &'b [u32],
}

impl<'b> Finisher<'b> {
    /// The finish on `bvh`, the tree the kernel walked (uploaded as [`Bvh::raw_tree`] gives
    /// it).
    pub fn new(bvh: &'b Bvh) -> Finisher<'b> {
        Finisher {
            bvh,
            index: bvh.raw_triangle_index(),
        }
    }

    /// The exact answer of `ray` in `mode` ([`MODE_CLOSEST`], else any hit) from the
    /// kernel's `answer` for it, the rays narrowed, tested and cast again counted into
    /// `stats`. `ray` is the caller's ray, not the one the kernel was given
    /// ([`GpuRay::for_kernel`]).
    pub fn answer(
        &self,
        ray: &Ray,
        answer: &GpuAnswer,
        mode: u32,
        stats: &mut BatchStats,
    ) -> Option<CompactHit> {
        match mode {
            MODE_CLOSEST => self.closest(ray, answer, Finish::CastRay, stats),
            _ => self.any(ray, answer, stats),
        }
    }

    /// The library's own test on one slot's triangle: the walk's answer for it, bit for bit.
    fn exact(&self, ray: &Ray, slot: u32) -> Option<CompactHit> {
        let triangle = self.index[slot as usize];
        let [a, b, c] = self.bvh.mesh().triangle(triangle as usize);
        meshray::geometry::intersect_triangle(ray, a, b, c, &QueryOptions::default()).map(|h| {
            CompactHit {
                t: h.t,
                triangle,
                u: h.u,
                v: h.v,
            }
        })
    }

    /// An any-hit answer from the kernel's: its certain hit, confirmed by the exact test, or
    /// the first of its candidates the exact test accepts; the CPU's own any-hit cast where
    /// the kernel flagged the ray or the exact test refused the certain hit.
    pub(crate) fn any(
        &self,
        ray: &Ray,
        answer: &GpuAnswer,
        stats: &mut BatchStats,
    ) -> Option<CompactHit> {
        if let Err(decided) = self.triage(ray, answer, RayQuery::Any, stats) {
            return decided;
        }
        let cpu = || {
            self.bvh
                .cast_ray(ray, RayQuery::Any, &QueryOptions::default())
        };
        if answer.best != NONE {
            stats.tested += 1;
            let found = self.exact(ray, answer.best);
            if found.is_none() {
                stats.refused += 1;
                return cpu();
            }
            return found;
        }
        // No certain hit: every triangle that might hit in range is listed.
        stats.several += usize::from(answer.count > 1);
        answer.candidates[..answer.count as usize]
            .iter()
            .find_map(|&slot| {
                stats.tested += 1;
                self.exact(ray, slot)
            })
    }

    /// The start both finishes share: `Err` with the answer where the ray is decided
    /// without the kernel's (an invalid ray: none; a tiny direction component or a flag
    /// that makes the CPU cast it: `query` cast on the CPU), `Ok` to go on.
    fn triage(
        &self,
        ray: &Ray,
        answer: &GpuAnswer,
        query: RayQuery,
        stats: &mut BatchStats,
    ) -> Result<(), Option<CompactHit>> {
        if !ray.is_valid() {
            return Err(None);
        }
        stats.visits += u64::from(answer.visits);
        let fallback = answer.flags & FALLBACK != 0 || !self.names_triangles(answer);
        if tiny_direction(ray) || fallback {
            stats.flagged += 1;
            stats.overflow += usize::from(fallback && answer.flags & FLAG_OVERFLOW != 0);
            return Err(self.bvh.cast_ray(ray, query, &QueryOptions::default()));
        }
        Ok(())
    }

    /// Whether every slot `answer` names holds a triangle of this tree. The kernel's always
    /// do; answers handed over from elsewhere (a browser's read-back) might not, and a ray
    /// whose answer does not is cast on the CPU instead.
    fn names_triangles(&self, answer: &GpuAnswer) -> bool {
        let holds = |slot: u32| {
            self.index
                .get(slot as usize)
                .is_some_and(|&t| t != u32::MAX)
        };
        (answer.best == NONE || holds(answer.best))
            && answer.count as usize <= CANDIDATES
            && answer.candidates[..(answer.count as usize).min(CANDIDATES)]
                .iter()
                .all(|&slot| holds(slot))
    }

    /// The exact closest hit from the kernel's answer.
    pub(crate) fn closest(
        &self,
        ray: &Ray,
        answer: &GpuAnswer,
        finish: Finish,
        stats: &mut BatchStats,
    ) -> Option<CompactHit> {
        if let Err(decided) = self.triage(ray, answer, RayQuery::Closest, stats) {
            return decided;
        }
        let options = QueryOptions::default();
        let cpu = || self.bvh.cast_ray(ray, RayQuery::Closest, &options);
        if answer.flags & FLAG_NEAR != 0 {
            stats.several += 1;
            if finish == Finish::CastRay {
                return cpu();
            }
        }
        let exact = |slot: u32| self.exact(ray, slot);
        let mut best = None;
        if answer.best != NONE {
            stats.tested += 1;
            match exact(answer.best) {
                Some(h) => best = Some(h),
                None => {
                    stats.refused += 1;
                    return cpu();
                }
            }
        }
        // The least t, ties to the lowest triangle number, as the walk keeps its best.
        for &slot in &answer.candidates[..answer.count as usize] {
            stats.tested += 1;
            if let Some(h) = exact(slot) {
                let closer = match best {
                    Some(b) => h.t < b.t || (h.t == b.t && h.triangle < b.triangle),
                    None => true,
                };
                if closer {
                    best = Some(h);
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use meshray::Mesh;

    /// Answers that name no triangle of the tree (as bytes from elsewhere might) send their
    /// ray to the CPU's cast: never a panic, never a wrong hit.
    #[test]
    fn answers_naming_no_triangle_are_cast_again() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/scene.obj");
        let bvh = Bvh::build(Mesh::load(path).unwrap());
        let finisher = Finisher::new(&bvh);
        let slots = bvh.raw_triangle_index().len() as u32;
        let empty = bvh
            .raw_triangle_index()
            .iter()
            .position(|&t| t == u32::MAX)
            .map(|s| s as u32);
        let ray = Ray::new([0.0, 1.0, 10.0], [0.0, 0.0, -1.0]);
        let want = bvh.cast_ray(&ray, RayQuery::Closest, &QueryOptions::default());
        assert!(want.is_some());
        let answer = |best: u32, count: u32, candidates: [u32; CANDIDATES]| GpuAnswer {
            best,
            t: 1.0,
            flags: 0,
            visits: 1,
            count,
            _pad: [0; 3],
            candidates,
        };
        let mut bad = vec![
            answer(slots, 0, [0; CANDIDATES]),
            answer(u32::MAX - 1, 0, [0; CANDIDATES]),
            answer(NONE, 9, [0; CANDIDATES]),
            answer(NONE, u32::MAX, [0; CANDIDATES]),
            answer(NONE, 2, [0, slots + 5, 0, 0, 0, 0, 0, 0]),
        ];
        if let Some(e) = empty {
            bad.push(answer(e, 0, [0; CANDIDATES]));
        }
        for (k, a) in bad.iter().enumerate() {
            let mut stats = BatchStats::default();
            assert_eq!(
                finisher.answer(&ray, a, MODE_CLOSEST, &mut stats),
                want,
                "answer {k}"
            );
            assert_eq!(stats.flagged, 1, "answer {k} cast again");
            let any = finisher.answer(&ray, a, MODE_ANY, &mut stats);
            assert_eq!(any.is_some(), want.is_some(), "answer {k}, any hit");
        }
    }
}
