//! `meshray._meshray`: the Rust side of the Python package, a file per class (`mesh`,
//! `bvh`, `scene`, and `geometry`, their shared base, which holds every query) beside the
//! queries written once over the library's traits (`queries`), the arrays in and out
//! (`convert`), progress reports (`report`), errors (`errors`) and the GPU's casts (`gpu`); `open3d` answers the
//! Open3D drop-in's calls in Open3D's layout (the submodule `_meshray.open3d`). numpy arrays in and out;
//! batches run on all cores (rayon) with the GIL released; every error the crate types
//! becomes a Python exception (never a panic across the boundary: inputs are checked here
//! first).

use pyo3::prelude::*;

mod bvh;
mod convert;
mod errors;
mod geometry;
mod gpu;
mod mesh;
mod open3d;
mod queries;
mod report;
mod scene;

/// The native module; `meshray/__init__.py` re-exports it.
#[pymodule]
fn _meshray(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<mesh::Mesh>()?;
    m.add_class::<geometry::PyGeometry>()?;
    m.add_class::<bvh::PyBvh>()?;
    m.add_class::<scene::PyScene>()?;
    m.add("MeshrayError", m.py().get_type::<errors::MeshrayError>())?;
    m.add_function(wrap_pyfunction!(gpu::gpu_stats, m)?)?;
    let drop_in = PyModule::new(m.py(), "open3d")?;
    drop_in.add_function(wrap_pyfunction!(open3d::per_primitive, &drop_in)?)?;
    drop_in.add_function(wrap_pyfunction!(open3d::per_ray, &drop_in)?)?;
    drop_in.add_function(wrap_pyfunction!(open3d::list_intersections, &drop_in)?)?;
    drop_in.add_function(wrap_pyfunction!(open3d::per_point, &drop_in)?)?;
    m.add_submodule(&drop_in)?;
    Ok(())
}
