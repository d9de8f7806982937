//! `meshray._meshray`: the Rust side of the Python package, a file per class (`mesh`,
//! `bvh`, `scene`, and `geometry`, their shared base, which holds every query) beside the
//! queries written once over the library's traits (`queries`), the arrays in and out
//! (`convert`), progress reports (`report`) and errors (`errors`). numpy arrays in and out;
//! batches run on all cores (rayon) with the GIL released; every error the crate types
//! becomes a Python exception (never a panic across the boundary: inputs are checked here
//! first).

use pyo3::prelude::*;

mod bvh;
mod convert;
mod errors;
mod geometry;
mod mesh;
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
    Ok(())
}
