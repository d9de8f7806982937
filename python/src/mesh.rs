//! `meshray.Mesh`: a triangle mesh from arrays or a file.

use crate::convert::{as_array, float_rows, rows3, whole_numbers};
use crate::errors::to_py;
use nalgebra::Point3;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::Arc;

/// A triangle mesh: vertex positions and index triples.
#[pyclass(module = "meshray", frozen)]
pub(crate) struct Mesh {
    pub(crate) inner: Arc<meshray::Mesh>,
}

#[pymethods]
impl Mesh {
    /// A mesh from an `(n, 3)` array of vertex positions and an `(m, 3)` array of vertex
    /// indices (any integer dtype).
    #[new]
    fn new(vertices: &Bound<'_, PyAny>, faces: &Bound<'_, PyAny>) -> PyResult<Mesh> {
        let positions: Vec<Point3<f32>> = float_rows(&rows3(vertices, "vertices")?)?
            .into_iter()
            .map(Point3::from)
            .collect();
        let faces: PyReadonlyArray2<'_, i64> = as_array(&whole_numbers(faces)?, "int64")
            .and_then(|a| a.extract())
            .map_err(|_| PyValueError::new_err("faces: expected an (m, 3) array of integers"))?;
        let view = faces.as_array();
        if view.ncols() != 3 {
            return Err(PyValueError::new_err(format!(
                "faces: expected shape (m, 3), got {:?}",
                faces.shape()
            )));
        }
        let mut triangles = Vec::with_capacity(view.nrows());
        for (row, face) in view.rows().into_iter().enumerate() {
            let mut t = [0u32; 3];
            for k in 0..3 {
                t[k] = u32::try_from(face[k])
                    .ok()
                    .filter(|&i| (i as usize) < positions.len())
                    .ok_or_else(|| {
                        PyValueError::new_err(format!(
                            "faces[{row}, {k}] = {} is not a vertex index (0 to {})",
                            face[k],
                            positions.len() as i64 - 1
                        ))
                    })?;
            }
            triangles.push(t);
        }
        let inner = meshray::Mesh::from_buffers(positions, triangles).map_err(to_py)?;
        Ok(Mesh {
            inner: Arc::new(inner),
        })
    }

    /// Reads a mesh from a file: OBJ, STL, PLY, glTF/GLB (by extension).
    #[staticmethod]
    fn load(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Mesh> {
        let inner = py.detach(|| meshray::Mesh::load(&path)).map_err(to_py)?;
        Ok(Mesh {
            inner: Arc::new(inner),
        })
    }

    /// The vertex positions, `(n, 3)` float32 (a copy).
    #[getter]
    fn vertices<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f32>> {
        let p = self.inner.positions();
        Array2::from_shape_fn((p.len(), 3), |(i, k)| p[i][k]).into_pyarray(py)
    }

    /// The triangles' vertex indices, `(m, 3)` int64 (a copy).
    #[getter]
    fn faces<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<i64>> {
        let t = self.inner.triangles();
        Array2::from_shape_fn((t.len(), 3), |(i, k)| i64::from(t[i][k])).into_pyarray(py)
    }

    /// How many triangles the mesh has.
    #[getter]
    fn triangle_count(&self) -> usize {
        self.inner.triangle_count()
    }

    fn __repr__(&self) -> String {
        format!(
            "meshray.Mesh({} vertices, {} triangles)",
            self.inner.positions().len(),
            self.inner.triangle_count()
        )
    }
}
