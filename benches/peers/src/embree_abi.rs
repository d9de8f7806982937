//! What Embree 3 and Embree 4 share in their C API, as the two engines use it: the handle
//! types, the constants, and `struct RTCRay` (the same layout in both; `RTCHit` differs, so
//! each engine declares its own).

use meshray::Ray;
use nalgebra::Point3;
use std::ffi::c_void;

pub type RtcDevice = *mut c_void;
pub type RtcScene = *mut c_void;
pub type RtcGeometry = *mut c_void;

pub const RTC_GEOMETRY_TYPE_TRIANGLE: u32 = 0;
pub const RTC_BUFFER_TYPE_INDEX: u32 = 0;
pub const RTC_BUFFER_TYPE_VERTEX: u32 = 1;
pub const RTC_FORMAT_UINT3: u32 = 0x5003;
pub const RTC_FORMAT_FLOAT3: u32 = 0x9003;
pub const RTC_INVALID_GEOMETRY_ID: u32 = u32::MAX;
/// `RTCSceneFlags::RTC_SCENE_FLAG_ROBUST` (Embree 3 and 4 alike).
pub const RTC_SCENE_FLAG_ROBUST: u32 = 1 << 2;
pub const RTC_DEVICE_PROPERTY_VERSION: u32 = 0;
pub const RTC_DEVICE_PROPERTY_BACKFACE_CULLING_ENABLED: u32 = 65;

/// `struct RTCRay` of rtcore_ray.h (embree3/ and embree4/ alike).
#[repr(C, align(16))]
pub struct RtcRay {
    pub org: [f32; 3],
    pub tnear: f32,
    pub dir: [f32; 3],
    pub time: f32,
    pub tfar: f32,
    pub mask: u32,
    pub id: u32,
    pub flags: u32,
}

const _: () = assert!(size_of::<RtcRay>() == 48);

impl RtcRay {
    /// meshray's ray with its range, every mask bit set.
    pub fn new(ray: &Ray) -> RtcRay {
        let (o, d) = (ray.origin(), ray.direction());
        RtcRay {
            org: [o.x, o.y, o.z],
            tnear: ray.t_min(),
            dir: [d.x, d.y, d.z],
            time: 0.0,
            tfar: ray.t_max(),
            mask: u32::MAX,
            id: 0,
            flags: 0,
        }
    }
}

/// Copies a mesh into the vertex and index buffers Embree allocated for its geometry
/// (`rtcSetNewGeometryBuffer`'s answers), as both engines build their scenes.
///
/// # Safety
/// `vertices` and `indices` must be non-null buffers Embree allocated for
/// `positions.len()` `FLOAT3` vertices and `triangles.len()` `UINT3` triangles of a geometry
/// not yet committed, which nothing else touches meanwhile.
pub unsafe fn fill_buffers(
    vertices: *mut c_void,
    indices: *mut c_void,
    positions: &[Point3<f32>],
    triangles: &[[u32; 3]],
) {
    // SAFETY: the caller's promise: Embree's buffers are 16-byte aligned, 3·len f32 / u32
    // long, and owned by the geometry alone until its commit.
    let (vertices, indices) = unsafe {
        (
            std::slice::from_raw_parts_mut(vertices as *mut f32, 3 * positions.len()),
            std::slice::from_raw_parts_mut(indices as *mut u32, 3 * triangles.len()),
        )
    };
    for (dst, p) in vertices.chunks_exact_mut(3).zip(positions) {
        dst.copy_from_slice(&[p.x, p.y, p.z]);
    }
    for (dst, t) in indices.chunks_exact_mut(3).zip(triangles) {
        dst.copy_from_slice(t);
    }
}
