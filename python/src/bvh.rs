//! `meshray.BVH`: a bounding volume hierarchy over one mesh (`PyBvh` in Rust; `BVH` in
//! Python, as trimesh and Open3D users spell it). Its queries are `Geometry`'s; here are
//! building, the mesh, selections and saving.

use crate::convert::{camera, rows};
use crate::errors::{MeshrayError, to_py};
use crate::geometry::PyGeometry;
use crate::mesh::Mesh;
use meshray::prelude::*;
use meshray::tree::{BuildQuality, SavedBvh};
use meshray::{BuildOptions, Bvh, CompactHit, QueryOptions};
use nalgebra::Point3;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rayon::prelude::*;
use std::sync::Arc;

/// A bounding volume hierarchy over a mesh: build it once, cast many rays.
#[pyclass(module = "meshray", name = "BVH", extends = PyGeometry, frozen)]
pub(crate) struct PyBvh {}

impl PyBvh {
    /// A Python `BVH` holding `bvh` (shared, as a scene's are when it is pickled).
    pub(crate) fn wrap(py: Python<'_>, bvh: Arc<Bvh>) -> PyResult<Bound<'_, PyBvh>> {
        Bound::new(
            py,
            PyClassInitializer::from(PyGeometry::mesh(bvh)).add_subclass(PyBvh {}),
        )
    }

    /// The tree of a Python `BVH`.
    pub(crate) fn tree<'a>(slf: &'a Bound<'_, PyBvh>) -> &'a Arc<Bvh> {
        slf.as_super()
            .get()
            .bvh()
            .expect("a BVH's geometry is a mesh's tree")
    }
}

/// `bvh`'s triangle numbers as an int64 array.
fn numbered(py: Python<'_>, found: Vec<u32>) -> Bound<'_, PyArray1<i64>> {
    found
        .into_iter()
        .map(i64::from)
        .collect::<Vec<_>>()
        .into_pyarray(py)
}

#[pymethods]
impl PyBvh {
    /// Builds the BVH of `mesh` (`quality`: "fast", "default" or "high"), with the GIL
    /// released and on all cores.
    #[new]
    #[pyo3(signature = (mesh, quality = "default"))]
    fn new(py: Python<'_>, mesh: &Mesh, quality: &str) -> PyResult<PyClassInitializer<PyBvh>> {
        let quality = match quality {
            "fast" => BuildQuality::Fast,
            "default" => BuildQuality::Default,
            "high" => BuildQuality::High,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "quality: expected \"fast\", \"default\" or \"high\", got {quality:?}"
                )));
            }
        };
        let options = BuildOptions {
            quality,
            ..Default::default()
        };
        let mesh = (*mesh.inner).clone();
        let bvh = py.detach(|| Bvh::build_with(mesh, &options));
        Ok(PyClassInitializer::from(PyGeometry::mesh(Arc::new(bvh))).add_subclass(PyBvh {}))
    }

    /// The mesh the BVH was built over.
    #[getter]
    fn mesh(slf: &Bound<'_, Self>) -> Mesh {
        Mesh {
            inner: Arc::new(PyBvh::tree(slf).mesh().clone()),
        }
    }

    /// Each triangle's unit normal, `(m, 3)` float32: the `normal` a cast reports (+z for a
    /// degenerate triangle, which no ray hits), from the tree's table of them (made once, on
    /// first use; a copy each call).
    #[getter]
    fn triangle_normals<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let bvh = PyBvh::tree(slf);
        let n = bvh.mesh().triangle_count();
        let flat: Vec<f32> = slf.py().detach(|| {
            (0..n as u32)
                .into_par_iter()
                .with_min_len(4096)
                .flat_map_iter(|triangle| {
                    let hit = CompactHit {
                        t: 0.0,
                        triangle,
                        u: 0.0,
                        v: 0.0,
                    };
                    let normal = bvh.hit_normal(&hit).expect("a triangle of the mesh");
                    [normal.x, normal.y, normal.z]
                })
                .collect()
        });
        Ok(rows(flat)?.into_pyarray(slf.py()))
    }

    /// The triangles overlapping the view frustum under the screen rectangle with corners
    /// `a` and `b` (pixels), hidden ones included, ascending: box select. Camera as for
    /// `pick`.
    fn select_frustum<'py>(
        slf: &Bound<'py, Self>,
        view: [[f32; 4]; 4],
        projection: [[f32; 4]; 4],
        viewport: [f32; 2],
        a: [f32; 2],
        b: [f32; 2],
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let frustum = camera(&view, &projection, viewport)?
            .frustum(a, b)
            .map_err(to_py)?;
        let bvh = PyBvh::tree(slf);
        let region = meshray::selection::Region::Frustum(frustum);
        let found = slf.py().detach(|| bvh.triangles_in(&region));
        Ok(numbered(slf.py(), found))
    }

    /// The triangles visible through the screen rectangle with corners `a` and `b`: the
    /// nearest hits of `samples × samples` rays per pixel, ascending. Camera as for `pick`.
    #[pyo3(signature = (view, projection, viewport, a, b, samples = 1))]
    #[allow(clippy::too_many_arguments)]
    fn visible<'py>(
        slf: &Bound<'py, Self>,
        view: [[f32; 4]; 4],
        projection: [[f32; 4]; 4],
        viewport: [f32; 2],
        a: [f32; 2],
        b: [f32; 2],
        samples: u32,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let camera = camera(&view, &projection, viewport)?;
        let bvh = PyBvh::tree(slf);
        let found = slf
            .py()
            .detach(|| {
                meshray::picking::visible_triangles(
                    &**bvh,
                    &camera,
                    a,
                    b,
                    samples,
                    &QueryOptions::default(),
                )
            })
            .map_err(to_py)?;
        Ok(numbered(slf.py(), found))
    }

    /// The triangles overlapping the box `[lo, hi]` (touching counts), ascending.
    fn select_box<'py>(
        slf: &Bound<'py, Self>,
        lo: [f32; 3],
        hi: [f32; 3],
    ) -> Bound<'py, PyArray1<i64>> {
        let region = meshray::selection::Region::Box(meshray::geometry::Aabb::new(lo, hi));
        numbered(slf.py(), PyBvh::tree(slf).triangles_in(&region))
    }

    /// The triangles within `radius` of `centre`, ascending.
    fn select_sphere<'py>(
        slf: &Bound<'py, Self>,
        centre: [f32; 3],
        radius: f32,
    ) -> Bound<'py, PyArray1<i64>> {
        let region = meshray::selection::Region::Sphere {
            centre: Point3::from(centre),
            radius,
        };
        numbered(slf.py(), PyBvh::tree(slf).triangles_in(&region))
    }

    /// The BVH as bytes (the mesh and the tree's shape), for `BVH.from_bytes` and pickling.
    fn to_bytes<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = postcard::to_allocvec(&SavedBvh::from(&**PyBvh::tree(slf)))
            .map_err(|e| MeshrayError::new_err(format!("could not save the BVH: {e}")))?;
        Ok(PyBytes::new(slf.py(), &bytes))
    }

    /// A BVH from `to_bytes`'s bytes, checked (a damaged or foreign buffer is refused with
    /// the reason).
    #[staticmethod]
    fn from_bytes<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyBvh>> {
        let saved: SavedBvh = postcard::from_bytes(data)
            .map_err(|e| MeshrayError::new_err(format!("not a saved meshray BVH: {e}")))?;
        let bvh = py.detach(|| Bvh::try_from(saved)).map_err(to_py)?;
        PyBvh::wrap(py, Arc::new(bvh))
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let py = slf.py();
        let from_bytes = py.get_type::<PyBvh>().getattr("from_bytes")?;
        Ok((from_bytes, (PyBvh::to_bytes(slf)?,)))
    }

    fn __repr__(slf: &Bound<'_, Self>) -> String {
        format!(
            "meshray.BVH({} triangles)",
            PyBvh::tree(slf).mesh().triangle_count()
        )
    }
}
