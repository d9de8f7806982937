//! Embree 3 through a minimal FFI of its C API (only what this comparison calls).
//!
//! One device for the program, created with `threads=1` so the build runs on one thread like
//! the other engines' (plus `isa=...` when `MESHRAY_EMBREE_ISA` asks, see main.rs); one scene
//! per mesh with default flags and build quality; one triangle geometry with Embree-allocated
//! (and so padded) vertex and index buffers. Queries are `rtcIntersect1` / `rtcOccluded1`
//! with a context as `rtcInitIntersectContext` makes it.
//!
//! Embree has no per-scene memory query; its size here comes from the device's memory monitor
//! (`rtcSetDeviceMemoryMonitorFunction`, which Embree calls with the bytes of each block it
//! allocates or frees): what `rtcCommitScene` leaves allocated, i.e. the BVH with its
//! triangle leaves as Embree reserves them (its allocator takes memory in blocks, so this
//! is what the scene holds rather than what its nodes fill). The vertex and index buffers
//! are allocated before the commit and not counted.

use crate::embree_abi::*;
use crate::engine::{Engine, query_loops};
use meshray::{Mesh, Ray};
use std::ffi::{c_char, c_void};
use std::rc::Rc;
use std::sync::atomic::{AtomicIsize, Ordering};

const RTC_INTERSECT_CONTEXT_FLAG_INCOHERENT: u32 = 0;

/// `struct RTCIntersectContext` for RTC_MAX_INSTANCE_LEVEL_COUNT 1 and RTC_MIN_WIDTH 0 (the
/// values in Debian's rtcore_config.h for 3.13.5).
#[repr(C)]
struct RtcIntersectContext {
    flags: u32,
    filter: Option<unsafe extern "C" fn(*const c_void)>,
    inst_id: [u32; 1],
}

#[repr(C, align(16))]
struct RtcHit {
    ng: [f32; 3],
    u: f32,
    v: f32,
    prim_id: u32,
    geom_id: u32,
    inst_id: [u32; 1],
}

#[repr(C)]
struct RtcRayHit {
    ray: RtcRay,
    hit: RtcHit,
}

const _: () = {
    assert!(size_of::<RtcIntersectContext>() == 24);
    assert!(size_of::<RtcHit>() == 32);
    assert!(size_of::<RtcRayHit>() == 80);
};

unsafe extern "C" {
    fn rtcNewDevice(config: *const c_char) -> RtcDevice;
    fn rtcReleaseDevice(device: RtcDevice);
    fn rtcGetDeviceError(device: RtcDevice) -> u32;
    fn rtcGetDeviceProperty(device: RtcDevice, property: u32) -> isize;
    fn rtcSetDeviceMemoryMonitorFunction(
        device: RtcDevice,
        monitor: Option<unsafe extern "C" fn(*mut c_void, isize, bool) -> bool>,
        user: *mut c_void,
    );
    fn rtcNewScene(device: RtcDevice) -> RtcScene;
    fn rtcReleaseScene(scene: RtcScene);
    fn rtcCommitScene(scene: RtcScene);
    fn rtcSetSceneBuildQuality(scene: RtcScene, quality: u32);
    fn rtcNewGeometry(device: RtcDevice, kind: u32) -> RtcGeometry;
    fn rtcSetNewGeometryBuffer(
        geometry: RtcGeometry,
        kind: u32,
        slot: u32,
        format: u32,
        byte_stride: usize,
        item_count: usize,
    ) -> *mut c_void;
    fn rtcCommitGeometry(geometry: RtcGeometry);
    fn rtcAttachGeometry(scene: RtcScene, geometry: RtcGeometry) -> u32;
    fn rtcReleaseGeometry(geometry: RtcGeometry);
    fn rtcIntersect1(scene: RtcScene, context: *mut RtcIntersectContext, rayhit: *mut RtcRayHit);
    fn rtcOccluded1(scene: RtcScene, context: *mut RtcIntersectContext, ray: *mut RtcRay);
}

/// An Embree device, released on drop, and the bytes it has allocated through its memory
/// monitor.
pub struct Device(RtcDevice, Box<AtomicIsize>);

/// The memory monitor: adds each allocation (positive) or release (negative) to the counter
/// `user` points to, and lets it happen.
unsafe extern "C" fn count_bytes(user: *mut c_void, bytes: isize, _post: bool) -> bool {
    // SAFETY: `user` is the device's boxed counter, which outlives the device (see Drop).
    unsafe { &*(user as *const AtomicIsize) }.fetch_add(bytes, Ordering::Relaxed);
    true
}

impl Device {
    pub fn new() -> Rc<Device> {
        let config = crate::embree_isa_config();
        // SAFETY: the config is a NUL-terminated string; Embree copies what it needs.
        let device = unsafe { rtcNewDevice(config.as_ptr()) };
        assert!(!device.is_null(), "rtcNewDevice failed");
        let counter = Box::new(AtomicIsize::new(0));
        // SAFETY: the device is live; the counter's address is stable (boxed) and is freed
        // only after the device is released.
        unsafe {
            rtcSetDeviceMemoryMonitorFunction(
                device,
                Some(count_bytes),
                &*counter as *const AtomicIsize as *mut c_void,
            )
        };
        Rc::new(Device(device, counter))
    }

    /// The bytes the device holds now, as its memory monitor has counted them.
    fn allocated(&self) -> isize {
        self.1.load(Ordering::Relaxed)
    }

    fn property(&self, property: u32) -> isize {
        // SAFETY: the device is live; the property is one of the header's.
        unsafe { rtcGetDeviceProperty(self.0, property) }
    }

    /// "3.13.5", from `RTC_DEVICE_PROPERTY_VERSION` (31305).
    pub fn version(&self) -> String {
        let v = self.property(RTC_DEVICE_PROPERTY_VERSION);
        format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100)
    }

    /// Whether this Embree was compiled to cull back faces (then it would disagree).
    pub fn culls_back_faces(&self) -> bool {
        self.property(RTC_DEVICE_PROPERTY_BACKFACE_CULLING_ENABLED) != 0
    }

    fn check(&self, what: &str) {
        // SAFETY: the device is live.
        let error = unsafe { rtcGetDeviceError(self.0) };
        assert_eq!(error, 0, "Embree error {error} after {what}");
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: every scene holds an `Rc` to the device, so none is left.
        unsafe { rtcReleaseDevice(self.0) }
    }
}

/// Embree's `RTCBuildQuality`.
#[derive(Clone, Copy, Debug)]
pub enum BuildQuality {
    Low = 0,
    Medium = 1,
    High = 2,
}

pub struct Embree {
    scene: RtcScene,
    /// What the commit left allocated, by the memory monitor.
    bytes: usize,
    /// Keeps the device alive as long as the scene.
    _device: Rc<Device>,
}

impl Embree {
    pub fn build(device: &Rc<Device>, mesh: &Mesh) -> Embree {
        Embree::build_with_quality(device, mesh, BuildQuality::Medium)
    }

    /// [`build`](Embree::build) with `RTC_BUILD_QUALITY_LOW`, `MEDIUM` (the default) or
    /// `HIGH`.
    pub fn build_with_quality(device: &Rc<Device>, mesh: &Mesh, quality: BuildQuality) -> Embree {
        let (positions, triangles) = (mesh.positions(), mesh.triangles());
        let d = device.0;
        // SAFETY: the device is live.
        let scene = unsafe { rtcNewScene(d) };
        // SAFETY: the scene is live; the values are the header's RTCBuildQuality.
        unsafe { rtcSetSceneBuildQuality(scene, quality as u32) };
        // SAFETY: the device is live; the type is one of the header's.
        let geometry = unsafe { rtcNewGeometry(d, RTC_GEOMETRY_TYPE_TRIANGLE) };
        device.check("rtcNewScene / rtcNewGeometry");
        // SAFETY: the geometry is live; Embree allocates 12·count bytes plus its padding.
        let vertices = unsafe {
            rtcSetNewGeometryBuffer(
                geometry,
                RTC_BUFFER_TYPE_VERTEX,
                0,
                RTC_FORMAT_FLOAT3,
                12,
                positions.len(),
            )
        };
        // SAFETY: as above, 12·count bytes for three u32 per triangle.
        let indices = unsafe {
            rtcSetNewGeometryBuffer(
                geometry,
                RTC_BUFFER_TYPE_INDEX,
                0,
                RTC_FORMAT_UINT3,
                12,
                triangles.len(),
            )
        };
        device.check("rtcSetNewGeometryBuffer");
        assert!(!vertices.is_null() && !indices.is_null());
        // SAFETY: both buffers were just allocated for this geometry, for these counts, and
        // nothing else touches it until the commit below.
        unsafe { fill_buffers(vertices, indices, positions, triangles) };
        // SAFETY: the geometry and scene are live; the scene keeps its own reference to the
        // geometry, so ours is released after attaching.
        unsafe {
            rtcCommitGeometry(geometry);
            rtcAttachGeometry(scene, geometry);
            rtcReleaseGeometry(geometry);
        }
        let before = device.allocated();
        // SAFETY: the scene is live, its one geometry committed and attached.
        unsafe { rtcCommitScene(scene) };
        device.check("rtcCommitScene");
        Embree {
            scene,
            bytes: (device.allocated() - before).max(0) as usize,
            _device: Rc::clone(device),
        }
    }

    fn context() -> RtcIntersectContext {
        RtcIntersectContext {
            flags: RTC_INTERSECT_CONTEXT_FLAG_INCOHERENT,
            filter: None,
            inst_id: [RTC_INVALID_GEOMETRY_ID],
        }
    }
}

impl Drop for Embree {
    fn drop(&mut self) {
        // SAFETY: the scene is live and released once; the device outlives it (`_device`).
        unsafe { rtcReleaseScene(self.scene) }
    }
}

impl Engine for Embree {
    query_loops!(Embree, peers_closest_embree3, peers_any_embree3);

    fn name(&self) -> &str {
        "embree3"
    }

    fn closest(&self, ray: &Ray) -> Option<(f32, u32)> {
        if !ray.is_valid() {
            return None;
        }
        let mut rayhit = RtcRayHit {
            ray: RtcRay::new(ray),
            hit: RtcHit {
                ng: [0.0; 3],
                u: 0.0,
                v: 0.0,
                prim_id: RTC_INVALID_GEOMETRY_ID,
                geom_id: RTC_INVALID_GEOMETRY_ID,
                inst_id: [RTC_INVALID_GEOMETRY_ID],
            },
        };
        let mut context = Embree::context();
        // SAFETY: the scene is committed; context and rayhit are valid, 16-aligned locals.
        unsafe { rtcIntersect1(self.scene, &mut context, &mut rayhit) };
        (rayhit.hit.geom_id != RTC_INVALID_GEOMETRY_ID)
            .then_some((rayhit.ray.tfar, rayhit.hit.prim_id))
    }

    fn any(&self, ray: &Ray) -> bool {
        if !ray.is_valid() {
            return false;
        }
        let mut r = RtcRay::new(ray);
        let mut context = Embree::context();
        // SAFETY: as for rtcIntersect1; Embree sets tfar to -inf on a hit.
        unsafe { rtcOccluded1(self.scene, &mut context, &mut r) };
        r.tfar == f32::NEG_INFINITY
    }

    fn structure_bytes(&self) -> Option<usize> {
        Some(self.bytes)
    }
}

query_loops!(loops Embree, peers_closest_embree3, peers_any_embree3);
