//! Errors: every error the crate types becomes a Python exception (a missing file
//! `FileNotFoundError`, other reading failures `OSError`, the rest `MeshrayError`), and bad
//! arguments a `ValueError` naming the argument; never a panic across the boundary.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyOSError};
use pyo3::prelude::*;

create_exception!(
    _meshray,
    MeshrayError,
    PyException,
    "An error meshray reports: a malformed file, a mesh it refuses, a bad saved BVH."
);

/// A meshray error as a Python exception; the message names the file and line when the
/// crate does.
pub(crate) fn to_py(e: meshray::Error) -> PyErr {
    match &e {
        meshray::Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(e.to_string())
        }
        meshray::Error::Io { .. } | meshray::Error::ReferencedFile { .. } => {
            PyOSError::new_err(e.to_string())
        }
        _ => MeshrayError::new_err(e.to_string()),
    }
}
