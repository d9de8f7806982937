//! Progress of a batch: `progress(done, total)` for a callable, a `tqdm` bar for `True`,
//! nothing for `None` or `False`; called between blocks of rays with the GIL held, so an
//! exception it raises stops the batch.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};

/// How a batch reports its progress: `progress(done, total)` for a callable, a `tqdm` bar
/// for `True`, nothing for `None` or `False`.
pub(crate) enum Report<'py> {
    Silent,
    Call(Bound<'py, PyAny>),
    Bar(Bound<'py, PyAny>),
}

impl<'py> Report<'py> {
    pub(crate) fn new(
        py: Python<'py>,
        progress: Option<&Bound<'py, PyAny>>,
        n: usize,
    ) -> PyResult<Self> {
        let Some(progress) = progress else {
            return Ok(Report::Silent);
        };
        if !progress.is_instance_of::<PyBool>() {
            if !progress.is_callable() {
                return Err(PyValueError::new_err(
                    "progress: expected True, False, None or a callable progress(done, total)",
                ));
            }
            return Ok(Report::Call(progress.clone()));
        }
        if !progress.is_truthy()? {
            return Ok(Report::Silent);
        }
        match py.import("tqdm") {
            Ok(tqdm) => {
                let options = PyDict::new(py);
                options.set_item("total", n)?;
                options.set_item("unit", "ray")?;
                options.set_item("unit_scale", true)?;
                Ok(Report::Bar(tqdm.getattr("tqdm")?.call((), Some(&options))?))
            }
            Err(_) => {
                let message = "progress=True shows a bar with tqdm, which is not installed \
                               (pip install tqdm); or pass a callable progress(done, total)";
                py.import("warnings")?.call_method1("warn", (message,))?;
                Ok(Report::Silent)
            }
        }
    }

    /// Rays `start..end` of `n` are answered.
    pub(crate) fn done(&self, start: usize, end: usize, n: usize) -> PyResult<()> {
        match self {
            Report::Silent => Ok(()),
            Report::Call(f) => f.call1((end, n)).map(drop),
            Report::Bar(bar) => bar.call_method1("update", (end - start,)).map(drop),
        }
    }

    /// The batch is over: a bar is closed.
    pub(crate) fn finish(&self) -> PyResult<()> {
        match self {
            Report::Bar(bar) => bar.call_method0("close").map(drop),
            _ => Ok(()),
        }
    }
}
