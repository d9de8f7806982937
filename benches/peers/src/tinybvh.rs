//! tinybvh's BVH8_CPU (Jacco Bikker's single-header C++ library, 1.6.8, the header the
//! `tinybvh-rs` crate ships, found by build.rs) through our C shim, `tinybvh/shim.cpp`, compiled by build.rs with
//! `-O3 -march=native`. BVH8_CPU is its fastest CPU layout: an 8-wide tree walked with AVX2,
//! leaves of four triangles tested at once (Möller–Trumbore, two-sided). The build is
//! tinybvh's default (`Build`: binned SAH, its AVX builder), on one thread
//! (`NO_THREADED_BUILDS`).
//!
//! tinybvh's rays have no start parameter and test `0 < t < t_max`: a ray starting at
//! `t_min > 0` is cast from `origin + t_min·direction` over `t_max − t_min` and `t_min` is added
//! back to the hit, as for parry3d (so the same rounding applies). Rays with `t_min = 0` are
//! passed as they are; a hit at exactly `t = 0` or `t = t_max`, which meshray's closed range
//! takes, is not one for tinybvh. The direction is passed unnormalized, so `t` means the same.

use crate::engine::{Engine, query_loops};
use meshray::{Mesh, Ray};
use std::ffi::{CStr, c_char, c_int, c_void};

unsafe extern "C" {
    fn mrtb_compiled_with_avx2() -> c_int;
    fn mrtb_version() -> *const c_char;
    fn mrtb_compiler() -> *const c_char;
    fn mrtb_build(
        positions: *const f32,
        vertex_count: usize,
        indices: *const u32,
        triangle_count: u32,
    ) -> *mut c_void;
    fn mrtb_free(engine: *mut c_void);
    fn mrtb_bytes(engine: *const c_void) -> usize;
    fn mrtb_intersect(
        engine: *const c_void,
        origin: *const f32,
        direction: *const f32,
        t_max: f32,
        t: *mut f32,
        triangle: *mut u32,
    ) -> c_int;
    fn mrtb_occluded(
        engine: *const c_void,
        origin: *const f32,
        direction: *const f32,
        t_max: f32,
    ) -> c_int;
}

/// "1.6.8", from the header's version macros.
pub fn version() -> String {
    // SAFETY: the shim returns a pointer to a static NUL-terminated string.
    unsafe { CStr::from_ptr(mrtb_version()) }
        .to_string_lossy()
        .into_owned()
}

/// The C++ compiler's version string and the command line build.rs gave it.
pub fn compiler() -> String {
    // SAFETY: as for `version`.
    let version = unsafe { CStr::from_ptr(mrtb_compiler()) }.to_string_lossy();
    format!("{version}: {}", env!("PEER_TINYBVH_FLAGS"))
}

/// Why BVH8_CPU cannot run here, or `None` when it can: its traversal is AVX2 and FMA code,
/// compiled in only when the compiler had them enabled (`-march=native` on a machine with
/// them), and it must also run on a CPU that has them.
pub fn unavailable() -> Option<&'static str> {
    // SAFETY: no arguments, no state.
    if unsafe { mrtb_compiled_with_avx2() } == 0 {
        return Some("tinybvh's BVH8_CPU needs AVX2 and FMA, which the compiler did not enable");
    }
    #[cfg(target_arch = "x86_64")]
    if !(is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")) {
        return Some("tinybvh's BVH8_CPU needs AVX2 and FMA, which this CPU lacks");
    }
    None
}

pub struct TinyBvh {
    engine: *mut c_void,
}

impl TinyBvh {
    /// Builds the tree; `None` for a mesh tinybvh cannot take (no triangles, more than
    /// `u32::MAX`), or when [`unavailable`] says it cannot run.
    pub fn build(mesh: &Mesh) -> Option<TinyBvh> {
        if unavailable().is_some() {
            return None;
        }
        let (positions, triangles) = (mesh.positions(), mesh.triangles());
        let count = u32::try_from(triangles.len()).ok()?;
        // nalgebra's Point3<f32> is `repr(C)` over three f32, so the slice is 3·len floats.
        const _: () = assert!(size_of::<nalgebra::Point3<f32>>() == 12);
        // SAFETY: `positions` holds 3·len f32 and `triangles` 3·count u32; the shim checks
        // each index against the vertex count and copies what it keeps.
        let engine = unsafe {
            mrtb_build(
                positions.as_ptr().cast::<f32>(),
                positions.len(),
                triangles.as_ptr().cast::<u32>(),
                count,
            )
        };
        (!engine.is_null()).then_some(TinyBvh { engine })
    }

    /// The origin and length to pass for `ray`, or `None` for a ray meshray calls invalid.
    fn shifted(ray: &Ray) -> Option<([f32; 3], f32)> {
        if !ray.is_valid() {
            return None;
        }
        let (o, d, t0) = (ray.origin(), ray.direction(), ray.t_min());
        let start = if t0 == 0.0 { o } else { o + d * t0 };
        Some(([start.x, start.y, start.z], ray.t_max() - t0))
    }
}

impl Drop for TinyBvh {
    fn drop(&mut self) {
        // SAFETY: built by mrtb_build, freed once.
        unsafe { mrtb_free(self.engine) }
    }
}

impl Engine for TinyBvh {
    query_loops!(TinyBvh, peers_closest_tinybvh, peers_any_tinybvh);

    fn name(&self) -> &str {
        "tinybvh"
    }

    fn closest(&self, ray: &Ray) -> Option<(f32, u32)> {
        let (origin, length) = TinyBvh::shifted(ray)?;
        let d = ray.direction();
        let direction = [d.x, d.y, d.z];
        let (mut t, mut triangle) = (0.0f32, 0u32);
        // SAFETY: the engine is live; the arrays hold three floats; t and triangle are
        // written only on a hit.
        let hit = unsafe {
            mrtb_intersect(
                self.engine,
                origin.as_ptr(),
                direction.as_ptr(),
                length,
                &mut t,
                &mut triangle,
            )
        };
        (hit != 0).then_some((t + ray.t_min(), triangle))
    }

    fn any(&self, ray: &Ray) -> bool {
        let Some((origin, length)) = TinyBvh::shifted(ray) else {
            return false;
        };
        let d = ray.direction();
        let direction = [d.x, d.y, d.z];
        // SAFETY: as for `closest`.
        unsafe { mrtb_occluded(self.engine, origin.as_ptr(), direction.as_ptr(), length) != 0 }
    }

    fn structure_bytes(&self) -> Option<usize> {
        // SAFETY: the engine is live.
        Some(unsafe { mrtb_bytes(self.engine) })
    }
}

query_loops!(loops TinyBvh, peers_closest_tinybvh, peers_any_tinybvh);
