//! `device="gpu"`: a BVH's rays cast on the GPU (the `meshray-gpu` crate: a WGSL walk through
//! wgpu on Vulkan, finished on the CPU, so every answer is the CPU's bit for bit). The device
//! is made once per process, on first use; each BVH is uploaded once, on its first GPU cast,
//! and kept with it. Built with the `gpu` feature (the default); without it, or without a
//! Vulkan adapter, `device="gpu"` is refused with the reason.

use crate::errors::MeshrayError;
use meshray::{Bvh, CompactHit, QueryOptions, Ray, RayQuery};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Rays cast on the GPU in this process, those the kernel flagged for the CPU's own cast,
/// and those it narrowed to several candidates (`meshray.gpu_stats()`).
static RAYS: AtomicU64 = AtomicU64::new(0);
static FLAGGED: AtomicU64 = AtomicU64::new(0);
static NARROWED: AtomicU64 = AtomicU64::new(0);

/// What the GPU has done in this process: its adapter (`name`, `backend`, `device_type`),
/// the rays cast on it, those the kernel flagged (each cast again on the CPU) and those it
/// narrowed to several candidates (each finished by the CPU's exact tests). Raises
/// `MeshrayError` where there is no GPU (no Vulkan adapter, or a build without the `gpu`
/// feature).
#[pyfunction]
pub(crate) fn gpu_stats(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let out = PyDict::new(py);
    adapter(&out)?;
    out.set_item("rays", RAYS.load(Ordering::Relaxed))?;
    out.set_item("flagged", FLAGGED.load(Ordering::Relaxed))?;
    out.set_item("narrowed", NARROWED.load(Ordering::Relaxed))?;
    Ok(out)
}

/// Where a ray query runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Device {
    Cpu,
    Gpu,
}

impl Device {
    /// `device`'s value: "cpu" or "gpu".
    pub(crate) fn read(name: &str) -> PyResult<Device> {
        match name {
            "cpu" => Ok(Device::Cpu),
            "gpu" => Ok(Device::Gpu),
            _ => Err(PyValueError::new_err(format!(
                "device: expected \"cpu\" or \"gpu\", got {name:?}"
            ))),
        }
    }
}

/// Refuses options the GPU does not cast with: it runs the watertight test with no culling
/// (a ray's range is its own, any `t_min` and `t_max`).
pub(crate) fn check_options(options: &QueryOptions) -> PyResult<()> {
    if *options != QueryOptions::default() {
        return Err(PyValueError::new_err(
            "device=\"gpu\" casts with the watertight test and no culling (watertight=True, cull=\"none\")",
        ));
    }
    Ok(())
}

/// A BVH's copy on the GPU, made on first use.
#[derive(Default)]
pub(crate) struct OnDevice {
    #[cfg(feature = "gpu")]
    copy: std::sync::OnceLock<meshray_gpu::GpuBvh<'static>>,
}

/// The process's GPU, made on first use.
#[cfg(feature = "gpu")]
fn gpu() -> PyResult<&'static meshray_gpu::Gpu> {
    static GPU: std::sync::OnceLock<Option<meshray_gpu::Gpu>> = std::sync::OnceLock::new();
    GPU.get_or_init(meshray_gpu::Gpu::new).as_ref().ok_or_else(|| {
        MeshrayError::new_err(
            "device=\"gpu\": no Vulkan adapter here (a GPU's driver, or Mesa's lavapipe on the CPU)",
        )
    })
}

/// The GPU's adapter, into `out`.
#[cfg(feature = "gpu")]
fn adapter(out: &Bound<'_, PyDict>) -> PyResult<()> {
    let info = gpu()?.adapter.get_info();
    out.set_item("name", info.name)?;
    out.set_item("backend", format!("{:?}", info.backend))?;
    out.set_item("device_type", format!("{:?}", info.device_type))?;
    Ok(())
}

#[cfg(not(feature = "gpu"))]
fn adapter(_: &Bound<'_, PyDict>) -> PyResult<()> {
    Err(no_support())
}

/// This build's refusal.
#[cfg(not(feature = "gpu"))]
fn no_support() -> PyErr {
    MeshrayError::new_err(
        "device=\"gpu\": this build of meshray has no GPU support (built without the `gpu` feature)",
    )
}

#[cfg(feature = "gpu")]
impl OnDevice {
    /// `bvh`'s copy on the process's GPU, uploaded on the first call.
    pub(crate) fn get(&self, bvh: &Arc<Bvh>) -> PyResult<&meshray_gpu::GpuBvh<'static>> {
        let gpu = gpu()?;
        Ok(self
            .copy
            .get_or_init(|| meshray_gpu::GpuBvh::new(gpu, bvh.clone())))
    }

    /// Casts `rays` with `query` on the GPU into `hits`, one per ray.
    pub(crate) fn cast(
        copy: &meshray_gpu::GpuBvh<'static>,
        rays: &[Ray],
        query: RayQuery,
        hits: &mut Vec<Option<CompactHit>>,
    ) {
        let stats;
        (*hits, stats) = match query {
            RayQuery::Closest => copy.closest_hits(rays),
            RayQuery::Any => copy.any_hits(rays),
        };
        RAYS.fetch_add(stats.rays as u64, Ordering::Relaxed);
        FLAGGED.fetch_add(stats.flagged as u64, Ordering::Relaxed);
        NARROWED.fetch_add(stats.several as u64, Ordering::Relaxed);
    }
}

#[cfg(not(feature = "gpu"))]
impl OnDevice {
    /// Refused: this build has no GPU support.
    pub(crate) fn get(&self, _: &Arc<Bvh>) -> PyResult<&Self> {
        Err(no_support())
    }

    /// Never reached: [`get`](Self::get) refuses.
    pub(crate) fn cast(_: &Self, _: &[Ray], _: RayQuery, _: &mut Vec<Option<CompactHit>>) {}
}
