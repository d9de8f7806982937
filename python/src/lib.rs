//! `meshray._meshray`: the Rust side of the Python package. numpy arrays in and out; batches
//! run on all cores (rayon) with the GIL released; every error the crate types becomes a
//! Python exception (never a panic across the boundary: inputs are checked here first).

use meshray::prelude::*;
use meshray::query::WindingAccuracy;
use meshray::tree::{BuildQuality, SavedBvh};
use meshray::{BuildOptions, Bvh, Culling, QueryOptions, Ray, RayQuery};
use nalgebra::{Point3, Vector3};
use numpy::ndarray::{Array1, Array2};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt};
use rayon::prelude::*;
use std::sync::Arc;

mod scene;

create_exception!(
    _meshray,
    MeshrayError,
    PyException,
    "An error meshray reports: a malformed file, a mesh it refuses, a bad saved BVH."
);

/// A meshray error as a Python exception: a missing file is `FileNotFoundError`, other
/// reading failures `OSError`, the rest `MeshrayError`; the message names the file and line
/// when the crate does.
fn to_py(e: meshray::Error) -> PyErr {
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

/// `numpy.asarray(object, dtype)`: arrays, lists and tuples alike, copied only when the
/// dtype differs.
fn as_array<'py>(object: &Bound<'py, PyAny>, dtype: &str) -> PyResult<Bound<'py, PyAny>> {
    let numpy = object.py().import("numpy")?;
    let array = numpy.call_method1("asarray", (object, dtype))?;
    if array.getattr("ndim")?.extract::<usize>()? == 2 {
        Ok(array)
    } else {
        // A single row or an empty list: as (n, 3) rows if it can be.
        array.call_method1("reshape", ((-1i64, 3i64),))
    }
}

/// A triangle mesh: vertex positions and index triples.
#[pyclass(module = "meshray", frozen)]
struct Mesh {
    inner: Arc<meshray::Mesh>,
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

/// The culling setting by name.
fn culling(cull: &str) -> PyResult<Culling> {
    match cull {
        "none" => Ok(Culling::None),
        "back" => Ok(Culling::Back),
        "front" => Ok(Culling::Front),
        _ => Err(PyValueError::new_err(format!(
            "cull: expected \"none\", \"back\" or \"front\", got {cull:?}"
        ))),
    }
}

/// An `(n, 3)` array as contiguous, aligned float32 rows (a copy only when its dtype or
/// layout differs): the rays' own precision, read without a float64 detour.
fn rows3<'py>(array: &Bound<'py, PyAny>, what: &str) -> PyResult<PyReadonlyArray2<'py, f32>> {
    let numpy = array.py().import("numpy")?;
    let array = &numbers(array, what)?;
    let array = numpy
        // C order and aligned: arrays unpickled from a buffer (Dask) may be misaligned.
        .call_method1("require", (array, "float32", "CA"))
        .and_then(|a| a.call_method1("reshape", ((-1i64, 3i64),)).map(|r| (a, r)))
        .map_err(|_| {
            PyValueError::new_err(format!("{what}: expected an (n, 3) array of numbers"))
        })?;
    let (original, reshaped) = array;
    let shape: Vec<usize> = original.getattr("shape")?.extract()?;
    if !(shape.len() == 2 && shape[1] == 3 || shape.len() == 1 && shape[0] == 3 || shape == [0]) {
        return Err(PyValueError::new_err(format!(
            "{what}: expected shape (n, 3), got {shape:?}"
        )));
    }
    reshaped
        .extract()
        .map_err(|_| PyValueError::new_err(format!("{what}: expected an (n, 3) array of numbers")))
}

/// `object` as a numpy array of numbers: a list, or an array of ints or floats as it is; an
/// array of objects whose elements are all numbers as floats. Anything else (strings, bools,
/// `None` among objects) is refused as "not numbers", naming the first bad element: numpy
/// would read `None` as NaN and a string of digits as its number.
fn numbers<'py>(object: &Bound<'py, PyAny>, what: &str) -> PyResult<Bound<'py, PyAny>> {
    let numpy = object.py().import("numpy")?;
    let array = numpy.call_method1("asarray", (object,)).map_err(|_| {
        PyValueError::new_err(format!("{what}: expected an (n, 3) array of numbers"))
    })?;
    let dtype = array.getattr("dtype")?;
    match dtype.getattr("kind")?.extract::<String>()?.as_str() {
        "i" | "u" | "f" => Ok(array),
        "O" => {
            // Python ints and floats, numpy's number scalars; not bools, not None.
            let (number, bool_) = (numpy.getattr("number")?, numpy.getattr("bool_")?);
            let is_number = |x: &Bound<'py, PyAny>| -> PyResult<bool> {
                let boolean = x.is_instance_of::<PyBool>() || x.is_instance(&bool_)?;
                Ok(!boolean
                    && (x.is_instance_of::<PyInt>()
                        || x.is_instance_of::<PyFloat>()
                        || x.is_instance(&number)?))
            };
            for item in numpy.call_method1("ndenumerate", (&array,))?.try_iter()? {
                let (index, x): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item?.extract()?;
                if !is_number(&x)? {
                    return Err(PyValueError::new_err(format!(
                        "{what}: not numbers: {what}{} is {}",
                        place(&index)?,
                        x.repr()?
                    )));
                }
            }
            array.call_method1("astype", ("float64",))
        }
        _ => Err(PyValueError::new_err(format!(
            "{what}: not numbers: an array of dtype {}",
            dtype.str()?
        ))),
    }
}

/// `index` (a tuple of ints from `numpy.ndenumerate`) as `[i, k]`.
fn place(index: &Bound<'_, PyAny>) -> PyResult<String> {
    let index: Vec<i64> = index.extract()?;
    let parts: Vec<String> = index.iter().map(i64::to_string).collect();
    Ok(format!("[{}]", parts.join(", ")))
}

/// `object` ([`numbers`]) with every value a whole number: vertex indices given as floats
/// are taken when each is one (`2.0`), and refused with the first that is not (`1.5`, NaN,
/// infinite), which a cast would silently truncate.
fn whole_numbers<'py>(object: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let numpy = object.py().import("numpy")?;
    let array = numbers(object, "faces")?;
    if array
        .getattr("dtype")?
        .getattr("kind")?
        .extract::<String>()?
        != "f"
    {
        return Ok(array);
    }
    let trunc = numpy.call_method1("trunc", (&array,))?;
    let whole = numpy.call_method1(
        "logical_and",
        (
            numpy.call_method1("isfinite", (&array,))?,
            numpy.call_method1("equal", (&array, trunc))?,
        ),
    )?;
    let bad = numpy.call_method1("argwhere", (numpy.call_method1("logical_not", (whole,))?,))?;
    if bad.len()? > 0 {
        let tuple = object.py().import("builtins")?.getattr("tuple")?;
        let index = tuple.call1((bad.get_item(0)?.call_method0("tolist")?,))?;
        return Err(PyValueError::new_err(format!(
            "faces{} = {} is not a vertex index (not a whole number)",
            place(&index)?,
            array.get_item(&index)?.str()?
        )));
    }
    Ok(array)
}

/// A flat `3n` vector as an `(n, 3)` array, without a copy.
fn rows(flat: Vec<f32>) -> PyResult<Array2<f32>> {
    Array2::from_shape_vec((flat.len() / 3, 3), flat)
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A 4 × 4 matrix written row by row (numpy's `M[i][j]`), as mint's column-major one.
fn matrix(rows: &[[f32; 4]; 4]) -> mint::ColumnMatrix4<f32> {
    let mut columns = [0.0f32; 16];
    for (i, row) in rows.iter().enumerate() {
        for (j, &x) in row.iter().enumerate() {
            columns[4 * j + i] = x;
        }
    }
    mint::ColumnMatrix4::from(columns)
}

/// What `cast` answers, one entry per ray, filled in parallel.
struct Answers {
    t: Vec<f32>,
    /// The instance hit (a scene's cast), -1 on a miss; `None` for a mesh's cast.
    instance: Option<Vec<i64>>,
    triangle: Vec<i64>,
    u: Vec<f32>,
    v: Vec<f32>,
    point: Vec<f32>,
    normal: Vec<f32>,
}

/// One ray's hit, as `cast` reports it (a scene's cast writes the instance itself).
struct Row {
    t: f32,
    triangle: u32,
    u: f32,
    v: f32,
    point: [f32; 3],
    normal: [f32; 3],
}

/// How a batch reports its progress: `progress(done, total)` for a callable, a `tqdm` bar
/// for `True`, nothing for `None` or `False`.
enum Report<'py> {
    Silent,
    Call(Bound<'py, PyAny>),
    Bar(Bound<'py, PyAny>),
}

impl<'py> Report<'py> {
    fn new(py: Python<'py>, progress: Option<&Bound<'py, PyAny>>, n: usize) -> PyResult<Self> {
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
    fn done(&self, start: usize, end: usize, n: usize) -> PyResult<()> {
        match self {
            Report::Silent => Ok(()),
            Report::Call(f) => f.call1((end, n)).map(drop),
            Report::Bar(bar) => bar.call_method1("update", (end - start,)).map(drop),
        }
    }

    /// The batch is over: a bar is closed.
    fn finish(&self) -> PyResult<()> {
        match self {
            Report::Bar(bar) => bar.call_method0("close").map(drop),
            _ => Ok(()),
        }
    }
}

impl Answers {
    /// Answers for `n` rays, all misses; with an `instance` column for a scene.
    fn new(n: usize, instances: bool) -> Answers {
        Answers {
            t: vec![f32::INFINITY; n],
            instance: instances.then(|| vec![-1; n]),
            triangle: vec![-1; n],
            u: vec![f32::NAN; n],
            v: vec![f32::NAN; n],
            point: vec![f32::NAN; 3 * n],
            normal: vec![f32::NAN; 3 * n],
        }
    }

    /// Casts `ray(i)` for `i` in `0..n` in blocks of 65,536: for each block the rays are
    /// made and `answer(rays, out, start)` answers them into `out` from row `start` (with
    /// [`Answers::fill`]), on all cores with the GIL released; `progress(done, n)` is called
    /// between blocks.
    fn cast(
        py: Python<'_>,
        n: usize,
        instances: bool,
        ray: impl Fn(usize) -> Ray + Sync,
        progress: Option<&Bound<'_, PyAny>>,
        mut answer: impl FnMut(&[Ray], &mut Answers, usize) + Send,
    ) -> PyResult<Answers> {
        const BLOCK: usize = 1 << 16;
        let mut out = Answers::new(n, instances);
        let report = Report::new(py, progress, n)?;
        let mut rays = Vec::with_capacity(BLOCK.min(n));
        for start in (0..n).step_by(BLOCK) {
            let end = (start + BLOCK).min(n);
            py.detach(|| {
                (start..end)
                    .into_par_iter()
                    .map(&ray)
                    .collect_into_vec(&mut rays);
                answer(&rays, &mut out, start);
            });
            report.done(start, end, n)?;
        }
        report.finish()?;
        Ok(out)
    }

    /// Writes rows `start..start + len` in parallel, all but the instance: `row(i)` is the
    /// hit of the block's ray `i`, if any (a miss leaves the row as [`Answers::new`] made it).
    fn fill(&mut self, start: usize, len: usize, row: impl Fn(usize) -> Option<Row> + Sync) {
        let end = start + len;
        (
            self.t[start..end].par_iter_mut(),
            self.triangle[start..end].par_iter_mut(),
            self.u[start..end].par_iter_mut(),
            self.v[start..end].par_iter_mut(),
            self.point[3 * start..3 * end].par_chunks_mut(3),
            self.normal[3 * start..3 * end].par_chunks_mut(3),
            (0..len).into_par_iter(),
        )
            .into_par_iter()
            .with_min_len(1024)
            .for_each(|(t, tri, u, v, p, nrm, i)| {
                let Some(r) = row(i) else { return };
                (*t, *tri, *u, *v) = (r.t, i64::from(r.triangle), r.u, r.v);
                p.copy_from_slice(&r.point);
                nrm.copy_from_slice(&r.normal);
            });
    }

    /// A mesh's cast: the batch query (`Bvh::cast_rays`, on all cores), the point and
    /// normal (read from `tree`'s per-triangle normals) made for hits only.
    fn cast_bvh(
        py: Python<'_>,
        tree: &PyBvh,
        n: usize,
        ray: impl Fn(usize) -> Ray + Sync,
        any_hit: bool,
        options: &QueryOptions,
        progress: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Answers> {
        let bvh = &*tree.inner;
        let normals = py.detach(|| tree.normals());
        let query = ray_query(any_hit);
        let (mut hits, mut hit_normals) = (Vec::new(), Vec::new());
        Answers::cast(py, n, false, ray, progress, |rays, out, start| {
            bvh.cast_rays(rays, query, options, &mut hits);
            // The normals first, in a loop of their own: each is a read from anywhere in the
            // table, and a short loop keeps many in flight at once.
            hits.par_iter()
                .with_min_len(4096)
                .map(|h| h.map_or([0.0; 3], |h| normals[h.triangle as usize]))
                .collect_into_vec(&mut hit_normals);
            out.fill(start, rays.len(), |i| {
                let h = hits[i]?;
                let at = rays[i].at(h.t);
                Some(Row {
                    t: h.t,
                    triangle: h.triangle,
                    u: h.u,
                    v: h.v,
                    point: [at.x, at.y, at.z],
                    normal: hit_normals[i],
                })
            });
        })
    }

    fn into_dict(self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let out = PyDict::new(py);
        out.set_item("t", self.t.into_pyarray(py))?;
        if let Some(instance) = self.instance {
            out.set_item("instance", instance.into_pyarray(py))?;
        }
        out.set_item("triangle", self.triangle.into_pyarray(py))?;
        out.set_item("u", self.u.into_pyarray(py))?;
        out.set_item("v", self.v.into_pyarray(py))?;
        out.set_item("point", rows(self.point)?.into_pyarray(py))?;
        out.set_item("normal", rows(self.normal)?.into_pyarray(py))?;
        Ok(out)
    }
}

/// `cast`'s `any_hit` as the batch query's question.
fn ray_query(any_hit: bool) -> RayQuery {
    if any_hit {
        RayQuery::Any
    } else {
        RayQuery::Closest
    }
}

/// Refuses a NaN or negative `t_min` and a NaN `t_max`.
fn check_range(t_min: f32, t_max: f32) -> PyResult<()> {
    if t_min.is_nan() || t_min < 0.0 || t_max.is_nan() {
        return Err(PyValueError::new_err(
            "t_min must be >= 0 and t_max not NaN",
        ));
    }
    Ok(())
}

/// Reads `origins` and `directions` as float32 rows of the same length, and checks the
/// shared `t` range: what every ray query starts from.
fn ray_rows<'py>(
    origins: &Bound<'py, PyAny>,
    directions: &Bound<'py, PyAny>,
    t_min: f32,
    t_max: f32,
) -> PyResult<(PyReadonlyArray2<'py, f32>, PyReadonlyArray2<'py, f32>)> {
    check_range(t_min, t_max)?;
    let (o, d) = (rows3(origins, "origins")?, rows3(directions, "directions")?);
    if o.len() != d.len() {
        return Err(PyValueError::new_err(format!(
            "origins and directions differ in length: {} and {}",
            o.len() / 3,
            d.len() / 3
        )));
    }
    Ok((o, d))
}

/// Ray `i` of the flat float32 rows `o` and `d` (as `ray_rows` reads them), over
/// `[t_min, t_max]`: made where a batch needs it, not all beforehand.
fn nth_ray<'a>(
    o: &'a [f32],
    d: &'a [f32],
    t_min: f32,
    t_max: f32,
) -> impl Fn(usize) -> Ray + Sync + 'a {
    move |i| {
        Ray::with_range(
            [o[3 * i], o[3 * i + 1], o[3 * i + 2]],
            [d[3 * i], d[3 * i + 1], d[3 * i + 2]],
            t_min,
            t_max,
        )
    }
}

/// The rays of `ray_rows`, made.
fn rays(
    origins: &Bound<'_, PyAny>,
    directions: &Bound<'_, PyAny>,
    t_min: f32,
    t_max: f32,
) -> PyResult<Vec<Ray>> {
    let (o, d) = ray_rows(origins, directions, t_min, t_max)?;
    Ok(float_rows(&o)?
        .into_iter()
        .zip(float_rows(&d)?)
        .map(|(o, d)| Ray::with_range(o, d, t_min, t_max))
        .collect())
}

/// The rows of an `(n, 3)` float32 array.
fn float_rows(array: &PyReadonlyArray2<'_, f32>) -> PyResult<Vec<[f32; 3]>> {
    Ok(array
        .as_slice()?
        .chunks_exact(3)
        .map(|p| [p[0], p[1], p[2]])
        .collect())
}

/// `answer(point)` for each row of `points` (`(n, 3)`), on all cores without the GIL.
fn each_point<T: Send>(
    py: Python<'_>,
    points: &Bound<'_, PyAny>,
    answer: impl Fn([f32; 3]) -> T + Sync,
) -> PyResult<Vec<T>> {
    let queries = float_rows(&rows3(points, "points")?)?;
    Ok(py.detach(|| {
        queries
            .par_iter()
            .with_min_len(256)
            .map(|&q| answer(q))
            .collect()
    }))
}

/// `answer(ray)` for each ray of `origins` and `directions` (checked as by `ray_rows`), on
/// all cores without the GIL.
fn each_ray<T: Send>(
    py: Python<'_>,
    (origins, directions): (&Bound<'_, PyAny>, &Bound<'_, PyAny>),
    (t_min, t_max): (f32, f32),
    answer: impl Fn(&Ray) -> T + Sync,
) -> PyResult<Vec<T>> {
    let rays = rays(origins, directions, t_min, t_max)?;
    Ok(py.detach(|| rays.par_iter().with_min_len(256).map(&answer).collect()))
}

/// Refuses a NaN or negative `max_distance`.
fn check_distance(max_distance: f32) -> PyResult<()> {
    if max_distance.is_nan() || max_distance < 0.0 {
        return Err(PyValueError::new_err("max_distance must be >= 0"));
    }
    Ok(())
}

/// The nearest points as a dict of arrays: `point` (NaN where there is none), `instance`
/// (for a scene: `-1`), `triangle` (-1), `distance` (inf), `u`, `v`.
fn closest_columns<'py>(
    py: Python<'py>,
    found: &[Option<(Option<u32>, meshray::query::ClosestPoint)>],
    instances: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let n = found.len();
    let mut point = Array2::from_elem((n, 3), f32::NAN);
    let (mut instance, mut triangle, mut distance) = (
        Array1::from_elem(n, -1i64),
        Array1::from_elem(n, -1i64),
        Array1::from_elem(n, f32::INFINITY),
    );
    let (mut u, mut v) = (
        Array1::from_elem(n, f32::NAN),
        Array1::from_elem(n, f32::NAN),
    );
    for (i, c) in found.iter().enumerate() {
        let Some((id, c)) = c else { continue };
        for k in 0..3 {
            point[(i, k)] = c.point[k];
        }
        instance[i] = id.map_or(-1, i64::from);
        triangle[i] = i64::from(c.triangle);
        distance[i] = c.distance;
        u[i] = c.u;
        v[i] = c.v;
    }
    let out = PyDict::new(py);
    out.set_item("point", point.into_pyarray(py))?;
    if instances {
        out.set_item("instance", instance.into_pyarray(py))?;
    }
    out.set_item("triangle", triangle.into_pyarray(py))?;
    out.set_item("distance", distance.into_pyarray(py))?;
    out.set_item("u", u.into_pyarray(py))?;
    out.set_item("v", v.into_pyarray(py))?;
    Ok(out)
}

/// The winding-number accuracy by `beta` and `exact`.
fn winding_accuracy(beta: f64, exact: bool) -> PyResult<WindingAccuracy> {
    if exact {
        return Ok(WindingAccuracy::Exact);
    }
    if beta.is_nan() || beta < 1.0 {
        return Err(PyValueError::new_err(
            "beta must be >= 1 (2 is Barill et al.'s and libigl's default)",
        ));
    }
    Ok(WindingAccuracy::FarField { beta })
}

/// Every hit of every ray of `rays` as [`hit_columns`]' dict: `hits(ray, scratch)` lists
/// one ray's hits in order into `scratch` (cleared first) and `columns` reads one hit's
/// instance, `t`, triangle and barycentrics. Tasks of 256 rays on all cores without the
/// GIL, one scratch vector per thread: no allocation per ray.
fn list_hits<'py, H: Copy + Send + Sync>(
    py: Python<'py>,
    rays: &[Ray],
    instances: bool,
    hits: impl Fn(&Ray, &mut Vec<H>) + Sync,
    columns: impl Fn(&H) -> (Option<u32>, f32, u32, f32, f32),
) -> PyResult<Bound<'py, PyDict>> {
    const TASK: usize = 256;
    // Per task: its rays' hits in order, and how many each ray has.
    let tasks: Vec<(Vec<H>, Vec<u32>)> = py.detach(|| {
        rays.par_chunks(TASK)
            .map_init(Vec::new, |scratch, rays| {
                let (mut found, mut counts) = (Vec::new(), Vec::with_capacity(rays.len()));
                for ray in rays {
                    hits(ray, scratch);
                    found.extend_from_slice(scratch);
                    counts.push(scratch.len() as u32);
                }
                (found, counts)
            })
            .collect()
    });
    let count = tasks.iter().map(|(found, _)| found.len()).sum();
    let listed = tasks.iter().enumerate().flat_map(|(k, (found, counts))| {
        let rows = counts
            .iter()
            .enumerate()
            .flat_map(move |(i, &n)| std::iter::repeat_n(k * TASK + i, n as usize));
        rows.zip(found).map(|(r, h)| {
            let (id, t, triangle, u, v) = columns(h);
            (r, id, t, triangle, u, v)
        })
    });
    hit_columns(py, count, instances, listed)
}

/// One hit in a list of hits: the ray's row, the instance (a scene's), `t`, the triangle
/// and the barycentrics.
type Listed = (usize, Option<u32>, f32, u32, f32, f32);

/// `count` hits of many rays as a dict of flat arrays: `ray` (the row each hit belongs to),
/// `t`, `instance` (for a scene), `triangle`, `u`, `v`, in the order given.
fn hit_columns<'py>(
    py: Python<'py>,
    count: usize,
    instances: bool,
    hits: impl Iterator<Item = Listed>,
) -> PyResult<Bound<'py, PyDict>> {
    let (mut ray, mut t, mut triangle) = (
        Vec::with_capacity(count),
        Vec::with_capacity(count),
        Vec::with_capacity(count),
    );
    let (mut instance, mut u, mut v) = (
        Vec::with_capacity(if instances { count } else { 0 }),
        Vec::with_capacity(count),
        Vec::with_capacity(count),
    );
    for (r, id, ht, tri, hu, hv) in hits {
        ray.push(r as i64);
        t.push(ht);
        if instances {
            instance.push(id.map_or(-1, i64::from));
        }
        triangle.push(i64::from(tri));
        u.push(hu);
        v.push(hv);
    }
    let out = PyDict::new(py);
    out.set_item("ray", ray.into_pyarray(py))?;
    out.set_item("t", t.into_pyarray(py))?;
    if instances {
        out.set_item("instance", instance.into_pyarray(py))?;
    }
    out.set_item("triangle", triangle.into_pyarray(py))?;
    out.set_item("u", u.into_pyarray(py))?;
    out.set_item("v", v.into_pyarray(py))?;
    Ok(out)
}

/// The query options by name (`cull`: "none", "back" or "front").
fn query(cull: &str, watertight: bool) -> PyResult<QueryOptions> {
    Ok(QueryOptions {
        culling: culling(cull)?,
        watertight,
    })
}

/// A bounding volume hierarchy over a mesh: build it once, cast many rays. (`PyBvh` in
/// Rust; `meshray.BVH` in Python, as trimesh and Open3D users spell it.)
#[pyclass(module = "meshray", name = "BVH", frozen)]
struct PyBvh {
    inner: Arc<Bvh>,
    /// Each triangle's unit normal (zero when degenerate), made on the first cast: a hit's
    /// normal is then one read instead of the triangle's three corners (docs/python.md has
    /// what that saves). Shared with the scenes that place this BVH.
    normals: std::sync::OnceLock<Arc<[[f32; 3]]>>,
}

impl PyBvh {
    fn new_with(bvh: Bvh) -> PyBvh {
        PyBvh::shared(Arc::new(bvh))
    }

    /// A BVH that shares `bvh` (a scene's, for pickling it).
    fn shared(bvh: Arc<Bvh>) -> PyBvh {
        PyBvh {
            inner: bvh,
            normals: std::sync::OnceLock::new(),
        }
    }

    /// [`PyBvh::normals`], made on first use (on all cores).
    fn normals(&self) -> &Arc<[[f32; 3]]> {
        self.normals.get_or_init(|| {
            let mesh = self.inner.mesh();
            (0..mesh.triangle_count())
                .into_par_iter()
                .with_min_len(4096)
                .map(|t| {
                    let [a, b, c] = mesh.triangle(t);
                    let n = (b - a)
                        .cross(&(c - a))
                        .try_normalize(0.0)
                        .unwrap_or_else(Vector3::zeros);
                    [n.x, n.y, n.z]
                })
                .collect::<Vec<_>>()
                .into()
        })
    }
}

#[pymethods]
impl PyBvh {
    /// Builds the BVH of `mesh` (`quality`: "fast", "default" or "high"), with the GIL
    /// released and on all cores.
    #[new]
    #[pyo3(signature = (mesh, quality = "default"))]
    fn new(py: Python<'_>, mesh: &Mesh, quality: &str) -> PyResult<PyBvh> {
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
        Ok(PyBvh::new_with(bvh))
    }

    /// The mesh the BVH was built over.
    #[getter]
    fn mesh(&self) -> Mesh {
        Mesh {
            inner: Arc::new(self.inner.mesh().clone()),
        }
    }

    /// Each triangle's unit normal, `(m, 3)` float32 (zero for a degenerate triangle): the
    /// `normal` a cast reports, (B − A) × (C − A) normalized. Made once, on first use (a
    /// copy each call).
    #[getter]
    fn triangle_normals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let normals = py.detach(|| self.normals());
        let flat: Vec<f32> = normals.iter().flatten().copied().collect();
        Ok(rows(flat)?.into_pyarray(py))
    }

    /// Casts one ray per row of `origins` and `directions` (`(n, 3)` arrays; directions need
    /// not be unit length: `t` is in their units). Returns a dict of arrays, one entry per
    /// ray: `t` (inf on a miss), `triangle` (-1 on a miss), `u`, `v` (barycentrics of the
    /// second and third corner), `point` and `normal` (the unit geometric normal, NaN on a
    /// miss). `any_hit=True` returns some hit rather than the nearest (faster, for
    /// visibility); the watertight triangle test is the default (`watertight=False`: plain
    /// Cramer's rule, a little faster, can slip through a shared edge); `cull` is "none",
    /// "back" or "front". A ray with a zero, NaN or infinite direction hits nothing.
    /// `progress(done, total)`, if given, is called after each block of 65,536 rays (with the
    /// GIL held; an exception it raises stops the batch and is raised here);
    /// `progress=True` shows a `tqdm` bar instead (a warning when tqdm is not installed).
    #[pyo3(signature = (origins, directions, t_min = 0.0, t_max = f32::INFINITY, any_hit = false, watertight = true, cull = "none", progress = None))]
    #[allow(clippy::too_many_arguments)]
    fn cast<'py>(
        &self,
        py: Python<'py>,
        origins: &Bound<'py, PyAny>,
        directions: &Bound<'py, PyAny>,
        t_min: f32,
        t_max: f32,
        any_hit: bool,
        watertight: bool,
        cull: &str,
        progress: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let options = query(cull, watertight)?;
        let (origins, directions) = ray_rows(origins, directions, t_min, t_max)?;
        let (o, d) = (origins.as_slice()?, directions.as_slice()?);
        let ray = nth_ray(o, d, t_min, t_max);
        Answers::cast_bvh(py, self, o.len() / 3, ray, any_hit, &options, progress)?.into_dict(py)
    }

    /// Picks through pixels: for each `(x, y)` row of `pixels` (pixel coordinates, origin top
    /// left, `y` down), the camera ray of `view` and `projection` (4 × 4 arrays, row-major as
    /// written on paper: `projection @ view @ point`) in a viewport of `viewport = (width,
    /// height)` pixels, cast as `cast` does. The same dict as `cast`.
    #[pyo3(signature = (view, projection, viewport, pixels, watertight = true, cull = "none"))]
    #[allow(clippy::too_many_arguments)]
    fn pick<'py>(
        &self,
        py: Python<'py>,
        view: [[f32; 4]; 4],
        projection: [[f32; 4]; 4],
        viewport: [f32; 2],
        pixels: &Bound<'py, PyAny>,
        watertight: bool,
        cull: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let options = query(cull, watertight)?;
        let pixels: PyReadonlyArray2<'py, f32> = as_array(pixels, "float32")
            .and_then(|a| a.call_method1("reshape", ((-1i64, 2i64),)))
            .and_then(|a| a.extract())
            .map_err(|_| PyValueError::new_err("pixels: expected an (n, 2) array of numbers"))?;
        let camera =
            meshray::Camera::new(matrix(&view), matrix(&projection), viewport).map_err(to_py)?;
        let rays = pixels
            .as_array()
            .rows()
            .into_iter()
            .map(|p| camera.pixel_ray([p[0], p[1]]))
            .collect::<Result<Vec<Ray>, _>>()
            .map_err(to_py)?;
        Answers::cast_bvh(py, self, rays.len(), |i| rays[i], false, &options, None)?.into_dict(py)
    }

    /// The triangles overlapping the view frustum under the screen rectangle with corners
    /// `a` and `b` (pixels), hidden ones included, ascending: box select. Camera as for
    /// `pick`.
    fn select_frustum<'py>(
        &self,
        py: Python<'py>,
        view: [[f32; 4]; 4],
        projection: [[f32; 4]; 4],
        viewport: [f32; 2],
        a: [f32; 2],
        b: [f32; 2],
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let frustum = meshray::Camera::new(matrix(&view), matrix(&projection), viewport)
            .and_then(|camera| camera.frustum(a, b))
            .map_err(to_py)?;
        let found = py.detach(|| {
            self.inner
                .triangles_in(&meshray::selection::Region::Frustum(frustum))
        });
        Ok(found
            .into_iter()
            .map(i64::from)
            .collect::<Vec<_>>()
            .into_pyarray(py))
    }

    /// The triangles visible through the screen rectangle with corners `a` and `b`: the
    /// nearest hits of `samples × samples` rays per pixel, ascending. Camera as for `pick`.
    #[pyo3(signature = (view, projection, viewport, a, b, samples = 1))]
    #[allow(clippy::too_many_arguments)]
    fn visible<'py>(
        &self,
        py: Python<'py>,
        view: [[f32; 4]; 4],
        projection: [[f32; 4]; 4],
        viewport: [f32; 2],
        a: [f32; 2],
        b: [f32; 2],
        samples: u32,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let camera =
            meshray::Camera::new(matrix(&view), matrix(&projection), viewport).map_err(to_py)?;
        let found = py
            .detach(|| {
                meshray::picking::visible_triangles(
                    &*self.inner,
                    &camera,
                    a,
                    b,
                    samples,
                    &QueryOptions::default(),
                )
            })
            .map_err(to_py)?;
        Ok(found
            .into_iter()
            .map(i64::from)
            .collect::<Vec<_>>()
            .into_pyarray(py))
    }

    /// Every hit of one ray, nearest first: a dict of arrays `t`, `triangle`, `u`, `v`.
    #[pyo3(signature = (origin, direction, t_min = 0.0, t_max = f32::INFINITY, watertight = true, cull = "none"))]
    #[allow(clippy::too_many_arguments)]
    fn all_hits<'py>(
        &self,
        py: Python<'py>,
        origin: &Bound<'py, PyAny>,
        direction: &Bound<'py, PyAny>,
        t_min: f32,
        t_max: f32,
        watertight: bool,
        cull: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let options = query(cull, watertight)?;
        let Some(&ray) = rays(origin, direction, t_min, t_max)?.first() else {
            return Err(PyValueError::new_err(
                "expected one origin and one direction",
            ));
        };
        let hits = self.inner.all_hits(&ray, &options);
        let listed = hits.iter().map(|h| (0, None, h.t, h.triangle, h.u, h.v));
        let out = hit_columns(py, hits.len(), false, listed)?;
        out.del_item("ray")?;
        Ok(out)
    }

    /// Whether each ray hits anything in its range (a bool array): `cast(any_hit=True)`'s
    /// answer to "is there a hit?" without the hit's details, for shadow rays and lines of
    /// sight. Options as for `cast`.
    #[pyo3(signature = (origins, directions, t_min = 0.0, t_max = f32::INFINITY, watertight = true, cull = "none"))]
    #[allow(clippy::too_many_arguments)]
    fn occluded<'py>(
        &self,
        py: Python<'py>,
        origins: &Bound<'py, PyAny>,
        directions: &Bound<'py, PyAny>,
        t_min: f32,
        t_max: f32,
        watertight: bool,
        cull: &str,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let options = query(cull, watertight)?;
        let blocked = each_ray(py, (origins, directions), (t_min, t_max), |ray| {
            self.inner.cast_ray(ray, RayQuery::Any, &options).is_some()
        })?;
        Ok(blocked.into_pyarray(py))
    }

    /// How many triangles each ray hits in its range (an int32 array): `cast_all`'s count
    /// per ray, without making the hits. Options as for `cast`.
    #[pyo3(signature = (origins, directions, t_min = 0.0, t_max = f32::INFINITY, watertight = true, cull = "none"))]
    #[allow(clippy::too_many_arguments)]
    fn count_hits<'py>(
        &self,
        py: Python<'py>,
        origins: &Bound<'py, PyAny>,
        directions: &Bound<'py, PyAny>,
        t_min: f32,
        t_max: f32,
        watertight: bool,
        cull: &str,
    ) -> PyResult<Bound<'py, PyArray1<i32>>> {
        let options = query(cull, watertight)?;
        let counts = each_ray(py, (origins, directions), (t_min, t_max), |ray| {
            i32::try_from(self.inner.count_hits(ray, &options)).unwrap_or(i32::MAX)
        })?;
        Ok(counts.into_pyarray(py))
    }

    /// Every hit of every ray, flattened: a dict of arrays `ray` (the row each hit belongs
    /// to), `t`, `triangle`, `u`, `v`, sorted by ray, then `t`. Options as for `cast`.
    #[pyo3(signature = (origins, directions, t_min = 0.0, t_max = f32::INFINITY, watertight = true, cull = "none"))]
    #[allow(clippy::too_many_arguments)]
    fn cast_all<'py>(
        &self,
        py: Python<'py>,
        origins: &Bound<'py, PyAny>,
        directions: &Bound<'py, PyAny>,
        t_min: f32,
        t_max: f32,
        watertight: bool,
        cull: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let options = query(cull, watertight)?;
        list_hits(
            py,
            &rays(origins, directions, t_min, t_max)?,
            false,
            |ray, hits| self.inner.all_triangles(ray, &options, hits),
            |h| (None, h.t, h.triangle, h.u, h.v),
        )
    }

    /// The nearest point of the mesh to each row of `points` (`(n, 3)`), within
    /// `max_distance`: a dict of arrays `point` (NaN where nothing is that near), `triangle`
    /// (-1), `distance` (inf), `u`, `v`. Distances are compared in float64.
    #[pyo3(signature = (points, max_distance = f32::INFINITY))]
    fn closest_points<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        max_distance: f32,
    ) -> PyResult<Bound<'py, PyDict>> {
        check_distance(max_distance)?;
        let found = each_point(py, points, |q| {
            self.inner
                .closest_point(q, max_distance, &Default::default())
                .map(|c| (None, c))
        })?;
        closest_columns(py, &found, false)
    }

    /// The generalized winding number at each row of `points` (`(n, 3)`): about 1 inside a
    /// closed outward-facing mesh, 0 outside, in between near the holes of an open one. A
    /// float64 array (NaN for a NaN or infinite point). Fast by default (Barill et al.'s
    /// far-field sum with `beta`, within 0.02 of the exact sum at `beta = 2`); `exact=True`
    /// sums every triangle's solid angle. All cores, without the GIL.
    #[pyo3(signature = (points, beta = 2.0, exact = false))]
    fn winding_numbers<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        beta: f64,
        exact: bool,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let accuracy = winding_accuracy(beta, exact)?;
        let w = each_point(py, points, |q| {
            self.inner.winding_number(q, accuracy, &Default::default())
        })?;
        Ok(w.into_pyarray(py))
    }

    /// Whether each row of `points` is inside the mesh: a bool array. `method="winding"`
    /// (the default): the exact winding number is at least 1/2, right on open meshes, soups
    /// and meshes with overlaps as on closed ones. `method="parity"`: the answer before
    /// winding numbers, for closed meshes only: the parity of a ray's crossings (watertight
    /// test), the same answer along three fixed directions taken by majority.
    #[pyo3(signature = (points, method = "winding"))]
    fn contains<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        method: &str,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let parity = match method {
            "winding" => false,
            "parity" => true,
            other => {
                return Err(PyValueError::new_err(format!(
                    "method must be 'winding' or 'parity', not {other:?}"
                )));
            }
        };
        let inside = each_point(py, points, |q| {
            if parity {
                parity_inside(&self.inner, q)
            } else {
                self.inner.contains(q, &Default::default())
            }
        })?;
        Ok(inside.into_pyarray(py))
    }

    /// The distance from each row of `points` to the mesh, negative inside (where
    /// `contains` holds): a float64 array, NaN where no triangle is within `max_distance`
    /// (or the point is NaN or infinite). The magnitude is `closest_points`' distance.
    #[pyo3(signature = (points, max_distance = f32::INFINITY))]
    fn signed_distance<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        max_distance: f32,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        check_distance(max_distance)?;
        let d = each_point(py, points, |q| {
            self.inner
                .signed_distance(q, max_distance, &Default::default())
                .unwrap_or(f64::NAN)
        })?;
        Ok(d.into_pyarray(py))
    }

    /// The triangles overlapping the box `[lo, hi]` (touching counts), ascending.
    fn select_box<'py>(
        &self,
        py: Python<'py>,
        lo: [f32; 3],
        hi: [f32; 3],
    ) -> Bound<'py, PyArray1<i64>> {
        let found = self.inner.triangles_in(&meshray::selection::Region::Box(
            meshray::geometry::Aabb::new(lo, hi),
        ));
        found
            .into_iter()
            .map(i64::from)
            .collect::<Vec<_>>()
            .into_pyarray(py)
    }

    /// The triangles within `radius` of `centre`, ascending.
    fn select_sphere<'py>(
        &self,
        py: Python<'py>,
        centre: [f32; 3],
        radius: f32,
    ) -> Bound<'py, PyArray1<i64>> {
        let found = self
            .inner
            .triangles_in(&meshray::selection::Region::Sphere {
                centre: Point3::from(centre),
                radius,
            });
        found
            .into_iter()
            .map(i64::from)
            .collect::<Vec<_>>()
            .into_pyarray(py)
    }

    /// The BVH as bytes (the mesh and the tree's shape), for `BVH.from_bytes` and pickling.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = postcard::to_allocvec(&SavedBvh::from(&*self.inner))
            .map_err(|e| MeshrayError::new_err(format!("could not save the BVH: {e}")))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// A BVH from `to_bytes`'s bytes, checked (a damaged or foreign buffer is refused with
    /// the reason).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<PyBvh> {
        let saved: SavedBvh = postcard::from_bytes(data)
            .map_err(|e| MeshrayError::new_err(format!("not a saved meshray BVH: {e}")))?;
        let bvh = py.detach(|| Bvh::try_from(saved)).map_err(to_py)?;
        Ok(PyBvh::new_with(bvh))
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let py = slf.py();
        let from_bytes = py.get_type::<PyBvh>().getattr("from_bytes")?;
        Ok((from_bytes, (slf.get().to_bytes(py)?,)))
    }

    fn __repr__(&self) -> String {
        format!(
            "meshray.BVH({} triangles)",
            self.inner.mesh().triangle_count()
        )
    }
}

/// Inside by the parity of a ray's crossings (watertight test), for closed meshes: the same
/// answer along two fixed directions in general position, a third breaking a disagreement.
fn parity_inside(bvh: &Bvh, q: [f32; 3]) -> bool {
    let options = QueryOptions {
        culling: Culling::None,
        watertight: true,
    };
    let directions = [
        [0.5773, 0.5774, 0.5773],
        [-0.6001, 0.2673, 0.7539],
        [0.1411, -0.8632, -0.4848],
    ];
    let odd = |d: &[f32; 3]| bvh.count_hits(&Ray::new(q, *d), &options) % 2 == 1;
    let (a, b) = (odd(&directions[0]), odd(&directions[1]));
    if a == b { a } else { odd(&directions[2]) }
}

/// The native module; `meshray/__init__.py` re-exports it.
#[pymodule]
fn _meshray(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Mesh>()?;
    m.add_class::<PyBvh>()?;
    m.add_class::<scene::PyScene>()?;
    m.add("MeshrayError", m.py().get_type::<MeshrayError>())?;
    Ok(())
}
