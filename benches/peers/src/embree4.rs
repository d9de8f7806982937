//! Embree 4, opened at run time (`libloading`), through a minimal FFI of its C API.
//!
//! Embree 4 exports the same C names as the Embree 3 that build.rs links (`rtcNewDevice`,
//! `rtcIntersect1`...), some with other signatures, so it is never linked: the library is
//! opened with `dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND)` and its functions are taken by
//! address. `RTLD_LOCAL` (libloading's default) keeps its symbols out of the global namespace,
//! where they would clash with Embree 3's; `RTLD_DEEPBIND` is needed as well, because Embree 4
//! calls some of its own exported functions through its PLT (`rtcSetNewGeometryBuffer`,
//! `rtcIntersect4/8/16`, `rtcOccluded*`...) and needs oneTBB: without it the dynamic linker
//! binds those to the global scope first, i.e. to Embree 3 and the system's libtbb (seen with
//! `LD_DEBUG=bindings`). With it, Embree 4 and the libtbb it brings resolve to themselves.
//!
//! The library is, in this order: `$MESHRAY_EMBREE4` (a file, or a directory holding a
//! `libembree4*.so*`, such as the `embreex.libs` directory of an unpacked `embreex` wheel);
//! `benches/peers/embree4/` (ignored by git), likewise; `libembree4.so.4` through the loader's
//! own search (`LD_LIBRARY_PATH`, the ldconfig cache). When none opens, the engine is skipped
//! with a one-line note saying why.
//!
//! Everything else is as for Embree 3 (`embree.rs`): one device with `threads=1` (plus
//! `isa=...` from `MESHRAY_EMBREE_ISA`), one scene per mesh with default flags and the same
//! build quality, one triangle geometry in Embree-allocated buffers, the bytes `rtcCommitScene`
//! leaves allocated by the memory monitor. Queries are `rtcIntersect1(scene, &rayhit, NULL)`
//! and `rtcOccluded1(scene, &ray, NULL)`: Embree 4 has no intersect context argument, and null
//! arguments mean its defaults (incoherent rays, every feature), as Embree 3's
//! `rtcInitIntersectContext` context does.

use crate::embree_abi::*;
use crate::embree_isa_config;
use crate::engine::{Engine, query_loops};
use libloading::os::unix::Library;
use meshray::{Mesh, Ray};
use std::ffi::{OsString, c_char, c_void};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicIsize, Ordering};

/// The environment variable naming the library (or a directory holding it).
pub const ENV: &str = "MESHRAY_EMBREE4";

/// `struct RTCHit` for `RTC_MAX_INSTANCE_LEVEL_COUNT` 1 with `RTC_GEOMETRY_INSTANCE_ARRAY`
/// (Embree 4's defaults: `instPrimID` follows `instID`, 36 bytes padded to 48). A build
/// without instance arrays has the 32 bytes of Embree 3's and leaves the rest untouched.
#[repr(C, align(16))]
struct RtcHit {
    ng: [f32; 3],
    u: f32,
    v: f32,
    prim_id: u32,
    geom_id: u32,
    inst_id: [u32; 1],
    inst_prim_id: [u32; 1],
}

#[repr(C)]
struct RtcRayHit {
    ray: RtcRay,
    hit: RtcHit,
}

const _: () = {
    assert!(size_of::<RtcHit>() == 48);
    assert!(size_of::<RtcRayHit>() == 96);
};

type MemoryMonitor = unsafe extern "C" fn(*mut c_void, isize, bool) -> bool;

/// The functions this comparison calls, taken from the opened library.
struct Api {
    new_device: unsafe extern "C" fn(*const c_char) -> RtcDevice,
    release_device: unsafe extern "C" fn(RtcDevice),
    get_device_error: unsafe extern "C" fn(RtcDevice) -> u32,
    get_device_property: unsafe extern "C" fn(RtcDevice, u32) -> isize,
    set_device_memory_monitor_function:
        unsafe extern "C" fn(RtcDevice, Option<MemoryMonitor>, *mut c_void),
    new_scene: unsafe extern "C" fn(RtcDevice) -> RtcScene,
    release_scene: unsafe extern "C" fn(RtcScene),
    commit_scene: unsafe extern "C" fn(RtcScene),
    set_scene_build_quality: unsafe extern "C" fn(RtcScene, u32),
    set_scene_flags: unsafe extern "C" fn(RtcScene, u32),
    new_geometry: unsafe extern "C" fn(RtcDevice, u32) -> RtcGeometry,
    set_new_geometry_buffer:
        unsafe extern "C" fn(RtcGeometry, u32, u32, u32, usize, usize) -> *mut c_void,
    commit_geometry: unsafe extern "C" fn(RtcGeometry),
    attach_geometry: unsafe extern "C" fn(RtcScene, RtcGeometry) -> u32,
    release_geometry: unsafe extern "C" fn(RtcGeometry),
    /// `rtcIntersect1(scene, rayhit, args)`; args null.
    intersect1: unsafe extern "C" fn(RtcScene, *mut RtcRayHit, *mut c_void),
    /// `rtcOccluded1(scene, ray, args)`; args null.
    occluded1: unsafe extern "C" fn(RtcScene, *mut RtcRay, *mut c_void),
    /// The file opened.
    path: String,
}

/// glibc's `RTLD_DEEPBIND` (dlfcn.h), which libloading does not name.
const RTLD_DEEPBIND: i32 = 0x8;

/// The places looked in, in order (see the module's documentation).
fn candidates() -> Vec<OsString> {
    fn in_dir(dir: &Path) -> Option<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("libembree4") && n.contains(".so"))
            })
            .collect();
        found.sort();
        found.into_iter().next()
    }
    fn resolve(path: PathBuf) -> Option<OsString> {
        if !path.is_dir() {
            return Some(path.into_os_string());
        }
        in_dir(&path)
            .or_else(|| in_dir(&path.join("embreex.libs")))
            .map(PathBuf::into_os_string)
    }
    if let Some(given) = std::env::var_os(ENV) {
        // Named: that one only, so a wrong path is reported rather than passed over.
        return resolve(PathBuf::from(&given)).into_iter().collect();
    }
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("embree4");
    let mut out: Vec<OsString> = in_dir(&beside)
        .map(PathBuf::into_os_string)
        .into_iter()
        .collect();
    out.push("libembree4.so.4".into());
    out
}

impl Api {
    fn open() -> Result<Api, String> {
        let candidates = candidates();
        if candidates.is_empty() {
            return Err(format!(
                "{ENV}={}: no libembree4*.so* there",
                std::env::var_os(ENV).unwrap_or_default().to_string_lossy()
            ));
        }
        let mut errors = Vec::new();
        for path in candidates {
            let flags = libloading::os::unix::RTLD_NOW
                | libloading::os::unix::RTLD_LOCAL
                | if cfg!(all(target_os = "linux", target_env = "gnu")) {
                    RTLD_DEEPBIND
                } else {
                    0
                };
            // SAFETY: opening runs the library's initializers: Embree's and oneTBB's, which
            // only set up their own state. Its symbols stay local to it (see above).
            match unsafe { Library::open(Some(&path), flags) } {
                Ok(library) => return Api::take(library, path.to_string_lossy().into_owned()),
                Err(e) => errors.push(e.to_string()),
            }
        }
        if std::env::var_os(ENV).is_none() {
            errors.insert(
                0,
                format!("{ENV} unset, no libembree4*.so* in benches/peers/embree4/"),
            );
        }
        Err(errors.join("; "))
    }

    /// Takes the functions' addresses; the library is never closed (its functions are used
    /// until the process exits, and oneTBB's threads do not like being unloaded).
    fn take(library: Library, path: String) -> Result<Api, String> {
        let library: &'static Library = Box::leak(Box::new(library));
        macro_rules! function {
            ($name:literal) => {
                // SAFETY: the field's type is the function's C signature in Embree 4's
                // headers (include/embree4/rtcore_*.h); the library is never unloaded.
                *unsafe { library.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("{path}: {e}"))?
            };
        }
        Ok(Api {
            new_device: function!("rtcNewDevice"),
            release_device: function!("rtcReleaseDevice"),
            get_device_error: function!("rtcGetDeviceError"),
            get_device_property: function!("rtcGetDeviceProperty"),
            set_device_memory_monitor_function: function!("rtcSetDeviceMemoryMonitorFunction"),
            new_scene: function!("rtcNewScene"),
            release_scene: function!("rtcReleaseScene"),
            commit_scene: function!("rtcCommitScene"),
            set_scene_build_quality: function!("rtcSetSceneBuildQuality"),
            set_scene_flags: function!("rtcSetSceneFlags"),
            new_geometry: function!("rtcNewGeometry"),
            set_new_geometry_buffer: function!("rtcSetNewGeometryBuffer"),
            commit_geometry: function!("rtcCommitGeometry"),
            attach_geometry: function!("rtcAttachGeometry"),
            release_geometry: function!("rtcReleaseGeometry"),
            intersect1: function!("rtcIntersect1"),
            occluded1: function!("rtcOccluded1"),
            path,
        })
    }
}

/// The library's functions, opened on first use; the error says why not.
fn api() -> Result<&'static Api, &'static str> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(Api::open).as_ref().map_err(String::as_str)
}

/// An Embree 4 device, released on drop, and the bytes it has allocated through its memory
/// monitor.
pub struct Device {
    api: &'static Api,
    device: RtcDevice,
    counter: Box<AtomicIsize>,
}

/// The memory monitor: adds each allocation (positive) or release (negative) to the counter
/// `user` points to, and lets it happen.
unsafe extern "C" fn count_bytes(user: *mut c_void, bytes: isize, _post: bool) -> bool {
    // SAFETY: `user` is the device's boxed counter, which outlives the device (see Drop).
    unsafe { &*(user as *const AtomicIsize) }.fetch_add(bytes, Ordering::Relaxed);
    true
}

impl Device {
    /// Opens the library and makes a device, or says why not.
    pub fn new() -> Result<Rc<Device>, String> {
        let api = api().map_err(|e| format!("Embree 4 not loaded ({e})"))?;
        let config = embree_isa_config();
        // SAFETY: the config is a NUL-terminated string; Embree copies what it needs.
        let device = unsafe { (api.new_device)(config.as_ptr()) };
        if device.is_null() {
            return Err(format!("Embree 4 ({}): rtcNewDevice failed", api.path));
        }
        let counter = Box::new(AtomicIsize::new(0));
        // SAFETY: the device is live; the counter's address is stable (boxed) and is freed
        // only after the device is released.
        unsafe {
            (api.set_device_memory_monitor_function)(
                device,
                Some(count_bytes),
                &*counter as *const AtomicIsize as *mut c_void,
            )
        };
        Ok(Rc::new(Device {
            api,
            device,
            counter,
        }))
    }

    fn allocated(&self) -> isize {
        self.counter.load(Ordering::Relaxed)
    }

    fn property(&self, property: u32) -> isize {
        // SAFETY: the device is live; the property is one of the header's.
        unsafe { (self.api.get_device_property)(self.device, property) }
    }

    /// "4.4.0", from `RTC_DEVICE_PROPERTY_VERSION` (40400).
    pub fn version(&self) -> String {
        let v = self.property(RTC_DEVICE_PROPERTY_VERSION);
        format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100)
    }

    /// The file the library was opened from.
    pub fn path(&self) -> &str {
        &self.api.path
    }

    /// Whether this Embree was compiled to cull back faces (then it would disagree).
    pub fn culls_back_faces(&self) -> bool {
        self.property(RTC_DEVICE_PROPERTY_BACKFACE_CULLING_ENABLED) != 0
    }

    fn check(&self, what: &str) {
        // SAFETY: the device is live.
        let error = unsafe { (self.api.get_device_error)(self.device) };
        assert_eq!(error, 0, "Embree 4 error {error} after {what}");
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: every scene holds an `Rc` to the device, so none is left.
        unsafe { (self.api.release_device)(self.device) }
    }
}

pub struct Embree4 {
    api: &'static Api,
    scene: RtcScene,
    /// What the commit left allocated, by the memory monitor.
    bytes: usize,
    /// Keeps the device alive as long as the scene.
    _device: Rc<Device>,
}

impl Embree4 {
    /// As [`crate::embree::Embree::build`]: `RTC_BUILD_QUALITY_MEDIUM`, default scene flags.
    pub fn build(device: &Rc<Device>, mesh: &Mesh) -> Embree4 {
        Embree4::build_with_quality(device, mesh, 1)
    }

    /// With `RTCBuildQuality` `quality` (0 low, 1 medium, 2 high).
    pub fn build_with_quality(device: &Rc<Device>, mesh: &Mesh, quality: u32) -> Embree4 {
        Embree4::build_with(device, mesh, quality, 0)
    }

    /// With `RTC_SCENE_FLAG_ROBUST`, as Open3D's `RaycastingScene` and trimesh's embreex
    /// build their scenes: watertight traversal and triangle test (`BVH8Triangle4v`, the
    /// Plücker test), the like-for-like peer of meshray's default.
    pub fn build_robust(device: &Rc<Device>, mesh: &Mesh) -> Embree4 {
        Embree4::build_with(device, mesh, 1, RTC_SCENE_FLAG_ROBUST)
    }

    fn build_with(device: &Rc<Device>, mesh: &Mesh, quality: u32, flags: u32) -> Embree4 {
        let api = device.api;
        let (positions, triangles) = (mesh.positions(), mesh.triangles());
        let d = device.device;
        // SAFETY: the device is live.
        let scene = unsafe { (api.new_scene)(d) };
        // SAFETY: the scene is live; the values are the header's RTCBuildQuality and
        // RTCSceneFlags.
        unsafe {
            (api.set_scene_build_quality)(scene, quality);
            (api.set_scene_flags)(scene, flags);
        }
        // SAFETY: the device is live; the type is one of the header's.
        let geometry = unsafe { (api.new_geometry)(d, RTC_GEOMETRY_TYPE_TRIANGLE) };
        device.check("rtcNewScene / rtcNewGeometry");
        // SAFETY: the geometry is live; Embree allocates 12·count bytes plus its padding.
        let vertices = unsafe {
            (api.set_new_geometry_buffer)(
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
            (api.set_new_geometry_buffer)(
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
            (api.commit_geometry)(geometry);
            (api.attach_geometry)(scene, geometry);
            (api.release_geometry)(geometry);
        }
        let before = device.allocated();
        // SAFETY: the scene is live, its one geometry committed and attached.
        unsafe { (api.commit_scene)(scene) };
        device.check("rtcCommitScene");
        Embree4 {
            api,
            scene,
            bytes: (device.allocated() - before).max(0) as usize,
            _device: Rc::clone(device),
        }
    }
}

impl Drop for Embree4 {
    fn drop(&mut self) {
        // SAFETY: the scene is live and released once; the device outlives it (`_device`).
        unsafe { (self.api.release_scene)(self.scene) }
    }
}

impl Engine for Embree4 {
    query_loops!(Embree4, peers_closest_embree4, peers_any_embree4);

    fn name(&self) -> &str {
        "embree4"
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
                inst_prim_id: [RTC_INVALID_GEOMETRY_ID],
            },
        };
        // SAFETY: the scene is committed; rayhit is a valid, 16-aligned local; null
        // arguments are Embree's defaults.
        unsafe { (self.api.intersect1)(self.scene, &mut rayhit, std::ptr::null_mut()) };
        (rayhit.hit.geom_id != RTC_INVALID_GEOMETRY_ID)
            .then_some((rayhit.ray.tfar, rayhit.hit.prim_id))
    }

    fn any(&self, ray: &Ray) -> bool {
        if !ray.is_valid() {
            return false;
        }
        let mut r = RtcRay::new(ray);
        // SAFETY: as for rtcIntersect1; Embree sets tfar to -inf on a hit.
        unsafe { (self.api.occluded1)(self.scene, &mut r, std::ptr::null_mut()) };
        r.tfar == f32::NEG_INFINITY
    }

    fn structure_bytes(&self) -> Option<usize> {
        Some(self.bytes)
    }
}

query_loops!(loops Embree4, peers_closest_embree4, peers_any_embree4);

/// Embree 4's scene built with `RTC_SCENE_FLAG_ROBUST` ([`Embree4::build_robust`]): its own
/// row and query loops.
pub struct Embree4Robust(pub Embree4);

impl Engine for Embree4Robust {
    query_loops!(
        Embree4Robust,
        peers_closest_embree4_robust,
        peers_any_embree4_robust
    );

    fn name(&self) -> &str {
        "embree4 robust"
    }

    fn closest(&self, ray: &Ray) -> Option<(f32, u32)> {
        self.0.closest(ray)
    }

    fn any(&self, ray: &Ray) -> bool {
        self.0.any(ray)
    }

    fn structure_bytes(&self) -> Option<usize> {
        self.0.structure_bytes()
    }
}

query_loops!(loops Embree4Robust, peers_closest_embree4_robust, peers_any_embree4_robust);
