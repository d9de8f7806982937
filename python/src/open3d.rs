//! The Open3D drop-in's answers (`meshray.open3d.RaycastingScene`), made here in Open3D's
//! layout: each of the drop-in's methods is one call of four (`per_primitive`: hits and
//! closest points; `per_ray`: occlusions and counts; `per_point`: distances and occupancy;
//! `list_intersections`), which reads the `(..., 6)` rays or `(..., 3)` points in place (a
//! copy only when they are not C-contiguous) and writes Open3D's arrays in one pass, on
//! `nthreads` threads (Open3D's meaning: 0, its default, or less is every core) without the
//! GIL. The questions are the library's traits' (through [`Geometry`]); only the layout is
//! Open3D's.

use crate::geometry::{PyGeometry, on_geometry};
use crate::queries::{self, Geometry};
use meshray::prelude::*;
use meshray::{QueryOptions, Ray, RayQuery};
use nalgebra::{Unit, Vector3};
use numpy::{Element, PyArray1, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use std::sync::{Arc, Mutex, PoisonError};

/// Open3D's id of no geometry and no primitive (a miss).
const INVALID_ID: u32 = u32::MAX;

/// Rays or points per task: enough to pay for the task, few enough to share the work out.
const TASK: usize = 256;

/// An `(..., width)` float32 array (Open3D's rays: width 6; points: 3), read in place.
struct Rows<'py> {
    array: PyReadonlyArrayDyn<'py, f32>,
    /// The rows in C order, when the array's are not (a strided view, Fortran order).
    copy: Option<Vec<f32>>,
    width: usize,
}

impl<'py> Rows<'py> {
    /// Reads `object` (a numpy array: the drop-in hands an Open3D tensor's memory over as
    /// one) as `(..., width)` float32, refusing anything else as Open3D does, with a
    /// `ValueError` that names the argument, the dtype and the shape.
    fn read(object: &Bound<'py, PyAny>, name: &str, width: usize) -> PyResult<Self> {
        let array = object.extract::<PyReadonlyArrayDyn<'py, f32>>().ok();
        let Some(array) = array.filter(|a| a.shape().last() == Some(&width)) else {
            let describe = |attribute: &str| match object.getattr(attribute) {
                Ok(value) => value.str().map_or_else(|_| "?".into(), |s| s.to_string()),
                Err(_) => "none".into(),
            };
            return Err(PyValueError::new_err(format!(
                "{name}: expected float32 with shape (..., {width}), got {} with shape {}",
                describe("dtype"),
                describe("shape"),
            )));
        };
        let copy = (!array.is_c_contiguous()).then(|| array.as_array().iter().copied().collect());
        Ok(Rows { array, copy, width })
    }

    /// The rows, flat.
    fn flat(&self) -> PyResult<&[f32]> {
        match &self.copy {
            Some(copy) => Ok(copy),
            None => Ok(self.array.as_slice()?),
        }
    }

    /// How many rows.
    fn len(&self) -> usize {
        self.array.len() / self.width
    }

    /// `values` (`k` per row) as an array of the rows' leading shape, and `k` when it is
    /// above 1 (numpy's reshape of a new array: no copy).
    fn shaped<'a, T: Element>(
        &self,
        py: Python<'a>,
        values: Vec<T>,
        k: usize,
    ) -> PyResult<Bound<'a, PyAny>> {
        let shape = self.array.shape();
        let mut shape = shape[..shape.len() - 1].to_vec();
        if k > 1 {
            shape.push(k);
        }
        Ok(PyArray1::from_vec(py, values).reshape(shape)?.into_any())
    }
}

/// Runs `work` without the GIL on `nthreads` threads, as Open3D reads the argument: 0 (its
/// default) or less is every core, `n` a pool of `n` threads (made on first use and kept;
/// at most every core: more would only take turns).
fn on_threads<T: Send>(
    py: Python<'_>,
    nthreads: i64,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let n = usize::try_from(nthreads).unwrap_or(0);
    if n == 0 || n >= rayon::current_num_threads() {
        return Ok(py.detach(work));
    }
    let pool = pool(n)?;
    Ok(py.detach(|| pool.install(work)))
}

/// The pool of `n` threads.
fn pool(n: usize) -> PyResult<Arc<rayon::ThreadPool>> {
    static POOLS: Mutex<Vec<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, pool)) = pools.iter().find(|(size, _)| *size == n) {
        return Ok(pool.clone());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("could not start {n} threads: {e}")))?;
    let pool = Arc::new(pool);
    pools.push((n, pool.clone()));
    Ok(pool)
}

/// The ray of a row `(ox, oy, oz, dx, dy, dz)`, searched over `[t_min, t_max]`.
#[inline]
fn ray(row: &[f32], t_min: f32, t_max: f32) -> Ray {
    Ray::with_range(
        [row[0], row[1], row[2]],
        [row[3], row[4], row[5]],
        t_min,
        t_max,
    )
}

/// The point of a row `(x, y, z)`.
fn point(row: &[f32]) -> [f32; 3] {
    [row[0], row[1], row[2]]
}

/// `answer(make(row))` for each row, into an array of the rows' leading shape: tasks of
/// [`TASK`] rows on `nthreads` threads without the GIL, each task's rays or points made in
/// a loop of their own before the queries (a ray's reciprocal direction then waits on no
/// walk).
fn each_row<'py, I: Send, T: Element + Copy + Default + Send>(
    py: Python<'py>,
    rows: &Rows<'py>,
    nthreads: i64,
    make: impl Fn(&[f32]) -> I + Sync,
    answer: impl Fn(&I) -> T + Sync,
) -> PyResult<Bound<'py, PyAny>> {
    let (flat, width) = (rows.flat()?, rows.width);
    let mut out = vec![T::default(); rows.len()];
    on_threads(py, nthreads, || {
        (out.par_chunks_mut(TASK), flat.par_chunks(width * TASK))
            .into_par_iter()
            .for_each_init(Vec::new, |made, (out, rows)| {
                made.clear();
                made.extend(rows.chunks_exact(width).map(&make));
                for (x, item) in out.iter_mut().zip(made.iter()) {
                    *x = answer(item);
                }
            })
    })?;
    rows.shaped(py, out, 1)
}

/// What `cast_rays` and `compute_closest_points` find per row: where (the hit's `t`, or the
/// nearest point), the geometry, the primitive and the barycentrics; and what names it for
/// its normal (`K`: a hit's triangle's normal, not normalized; a closest point).
struct Found<K> {
    at: [f32; 3],
    geometry: u32,
    primitive: u32,
    uv: [f32; 2],
    key: K,
}

/// Open3D's answers per row of `cast_rays` (`at`: `t_hit`, one float a row) and
/// `compute_closest_points` (`at`: `points`, three): a miss is `miss` there, `INVALID_ID`
/// in the ids, zero uvs and normals.
struct Primitives {
    at: Vec<f32>,
    at_width: usize,
    geometry_ids: Vec<u32>,
    primitive_ids: Vec<u32>,
    primitive_uvs: Vec<f32>,
    primitive_normals: Vec<f32>,
}

impl Primitives {
    /// `find(make(row))` for each row of `rows` (flat, `width` floats a row) and its
    /// `normal`, in tasks of [`TASK`] rows (each task's rays or points made first, in a loop
    /// of their own), written in Open3D's arrays.
    #[allow(clippy::too_many_arguments)]
    fn new<I: Send, K: Copy + Send>(
        rows: &[f32],
        width: usize,
        at_width: usize,
        miss: f32,
        make: impl Fn(&[f32]) -> I + Sync,
        find: impl Fn(&I) -> Option<Found<K>> + Sync,
        normal: impl Fn(&K) -> Option<Unit<Vector3<f32>>> + Sync,
    ) -> Primitives {
        let n = rows.len() / width;
        // Zeroed arrays come from the system already zero (no pass over them here); each
        // row's `at` and ids are written once below, hit or miss.
        let mut out = Primitives {
            at: vec![0.0; at_width * n],
            at_width,
            geometry_ids: vec![0; n],
            primitive_ids: vec![0; n],
            primitive_uvs: vec![0.0; 2 * n],
            primitive_normals: vec![0.0; 3 * n],
        };
        (
            rows.par_chunks(width * TASK),
            out.at.par_chunks_mut(at_width * TASK),
            out.geometry_ids.par_chunks_mut(TASK),
            out.primitive_ids.par_chunks_mut(TASK),
            out.primitive_uvs.par_chunks_mut(2 * TASK),
            out.primitive_normals.par_chunks_mut(3 * TASK),
        )
            .into_par_iter()
            .for_each_init(
                <(Vec<I>, Vec<(usize, K)>)>::default,
                |(made, keys), (rows, at, ids, primitives, uvs, normals)| {
                    made.clear();
                    made.extend(rows.chunks_exact(width).map(&make));
                    keys.clear();
                    for (k, item) in made.iter().enumerate() {
                        let at = &mut at[at_width * k..at_width * (k + 1)];
                        let Some(found) = find(item) else {
                            at.fill(miss);
                            (ids[k], primitives[k]) = (INVALID_ID, INVALID_ID);
                            continue;
                        };
                        at.copy_from_slice(&found.at[..at_width]);
                        (ids[k], primitives[k]) = (found.geometry, found.primitive);
                        uvs[2 * k..2 * k + 2].copy_from_slice(&found.uv);
                        keys.push((k, found.key));
                    }
                    // The normals in a loop of their own, where many are in flight at once
                    // (after each query, one waits alone): a closest point's is a read from
                    // anywhere in the tree's table, a hit's a normalization.
                    for (k, key) in keys.iter() {
                        if let Some(n) = normal(key) {
                            normals[3 * k..3 * k + 3].copy_from_slice(n.as_slice());
                        }
                    }
                },
            );
        out
    }

    /// The answers as Open3D's dict, `at` under `at_name`, in the rows' leading shape.
    fn into_dict<'py>(
        self,
        py: Python<'py>,
        rows: &Rows<'_>,
        at_name: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        out.set_item(at_name, rows.shaped(py, self.at, self.at_width)?)?;
        out.set_item("geometry_ids", rows.shaped(py, self.geometry_ids, 1)?)?;
        out.set_item("primitive_ids", rows.shaped(py, self.primitive_ids, 1)?)?;
        out.set_item("primitive_uvs", rows.shaped(py, self.primitive_uvs, 2)?)?;
        out.set_item(
            "primitive_normals",
            rows.shaped(py, self.primitive_normals, 3)?,
        )?;
        Ok(out)
    }
}

/// A ray's first hit, with its triangle's normal (not normalized: a loop of their own
/// normalizes a task's, [`Primitives::new`]).
fn first_hit<G: Geometry>(g: &G) -> impl Fn(&Ray) -> Option<Found<Vector3<f32>>> + Sync + '_ {
    let options = ray_options::<G>();
    move |ray| {
        let (hit, normal) = g.cast_ray_normal(ray, RayQuery::Closest, &options)?;
        let (instance, h) = G::mesh_hit(&hit);
        Some(Found {
            at: [h.t, 0.0, 0.0],
            geometry: instance.unwrap_or(0),
            primitive: h.triangle,
            uv: [h.u, h.v],
            key: normal,
        })
    }
}

/// A point's nearest surface point.
fn nearest<G: Geometry>(
    g: &G,
) -> impl Fn(&[f32; 3]) -> Option<Found<<G as PointQuery>::Closest>> + Sync + '_ {
    let options = <G as PointQuery>::Options::default();
    move |&p| {
        let found = g.closest_point(p, f32::INFINITY, &options)?;
        let (instance, c) = G::mesh_point(&found);
        Some(Found {
            at: [c.point.x, c.point.y, c.point.z],
            geometry: instance.unwrap_or(0),
            primitive: c.triangle,
            uv: [c.u, c.v],
            key: found,
        })
    }
}

/// Open3D's `cast_rays` (`answer = "hits"`, of `(..., 6)` rays: per ray `t_hit`, inf on a
/// miss) and `compute_closest_points` (`"closest_points"`, of `(..., 3)` points: per point
/// the nearest surface point, `points`, NaN where there is no surface); both with
/// `geometry_ids` and `primitive_ids` (`INVALID_ID` for none), `primitive_uvs` and
/// `primitive_normals` (unit, world space; zero for none).
#[pyfunction]
#[pyo3(signature = (geometry, array, answer, nthreads = 0))]
pub(crate) fn per_primitive<'py>(
    py: Python<'py>,
    geometry: PyRef<'_, PyGeometry>,
    array: &Bound<'py, PyAny>,
    answer: &str,
    nthreads: i64,
) -> PyResult<Bound<'py, PyDict>> {
    let target = geometry.target();
    let (rows, at) = match answer {
        "hits" => (Rows::read(array, "rays", 6)?, "t_hit"),
        "closest_points" => (Rows::read(array, "query_points", 3)?, "points"),
        _ => return Err(PyValueError::new_err(format!("no such answer: {answer:?}"))),
    };
    let flat = rows.flat()?;
    let unbounded = |row: &[f32]| ray(row, 0.0, f32::INFINITY);
    let found = on_threads(py, nthreads, || {
        on_geometry!(target, g => match rows.width {
            6 => Primitives::new(flat, 6, 1, f32::INFINITY, unbounded, first_hit(g), |n| Unit::try_new(*n, 0.0)),
            _ => Primitives::new(flat, 3, 3, f32::NAN, point, nearest(g), |c| g.closest_normal(c)),
        })
    })?;
    found.into_dict(py, &rows, at)
}

/// `g`'s ray options: Open3D's (both faces; the watertight test, as Open3D's robust scenes).
fn ray_options<G: Geometry>() -> <G as RayCast>::Options<'static> {
    QueryOptions::default().into()
}

/// Whether a ray hits anything in its range.
fn occluded<G: Geometry>(g: &G) -> impl Fn(&Ray) -> bool + Sync + '_ {
    let options = ray_options::<G>();
    move |ray| g.cast_ray(ray, RayQuery::Any, &options).is_some()
}

/// How many triangles a ray crosses in its range.
fn crossings<G: Geometry>(g: &G) -> impl Fn(&Ray) -> i32 + Sync + '_ {
    let options = ray_options::<G>();
    move |ray| i32::try_from(g.count_hits(ray, &options)).unwrap_or(i32::MAX)
}

/// The distance from a point to the surface (inf when there is none).
fn distance<G: Geometry>(g: &G) -> impl Fn(&[f32; 3]) -> f32 + Sync + '_ {
    let options = <G as PointQuery>::Options::default();
    move |&p| {
        g.closest_point(p, f32::INFINITY, &options)
            .map_or(f32::INFINITY, |c| G::mesh_point(&c).1.distance)
    }
}

/// A point's distance, negative inside (by the exact winding number); NaN where
/// there is no surface.
fn signed_distance<G: Geometry>(g: &G) -> impl Fn(&[f32; 3]) -> f32 + Sync + '_ {
    let options = <G as PointQuery>::Options::default();
    move |&p| {
        g.signed_distance(p, f32::INFINITY, &options)
            .map_or(f32::NAN, |d| d as f32)
    }
}

/// 1 where a point is inside (its exact winding number is at least ½), else 0.
fn occupancy<G: Geometry>(g: &G) -> impl Fn(&[f32; 3]) -> f32 + Sync + '_ {
    let options = <G as PointQuery>::Options::default();
    move |&p| f32::from(u8::from(g.contains(p, &options)))
}

/// Open3D's `test_occlusions` (`answer = "occlusions"`: whether each ray hits anything with
/// `tnear <= t <= tfar`, a bool array) and `count_intersections` (`"intersections"`: how
/// many times each ray crosses the surfaces, int32; over `[tnear, tfar]` too, which
/// Open3D's call leaves at `[0, inf)`).
#[pyfunction]
#[pyo3(signature = (geometry, rays, answer, tnear = 0.0, tfar = f32::INFINITY, nthreads = 0))]
pub(crate) fn per_ray<'py>(
    py: Python<'py>,
    geometry: PyRef<'_, PyGeometry>,
    rays: &Bound<'py, PyAny>,
    answer: &str,
    tnear: f32,
    tfar: f32,
    nthreads: i64,
) -> PyResult<Bound<'py, PyAny>> {
    if tnear.is_nan() || tnear < 0.0 || tfar.is_nan() {
        return Err(PyValueError::new_err(format!(
            "tnear, tfar: expected tnear >= 0 and tfar not NaN, got {tnear} and {tfar}"
        )));
    }
    let rows = Rows::read(rays, "rays", 6)?;
    let make_ray = |row: &[f32]| ray(row, tnear, tfar);
    on_geometry!(geometry.target(), g => match answer {
        "occlusions" => each_row(py, &rows, nthreads, make_ray, occluded(g)),
        "intersections" => each_row(py, &rows, nthreads, make_ray, crossings(g)),
        _ => Err(PyValueError::new_err(format!("no such answer per ray: {answer:?}"))),
    })
}

/// Open3D's `compute_distance` (`answer = "distance"`: the distance from each point to the
/// nearest surface), `compute_signed_distance` (`"signed_distance"`: negative inside) and
/// `compute_occupancy` (`"occupancy"`: 1 inside, 0 outside); float32 arrays. `nsamples`
/// (Open3D's rays per point for its parity vote) is checked as Open3D checks it and
/// unused: inside is the exact winding number's answer.
#[pyfunction]
#[pyo3(signature = (geometry, query_points, answer, nthreads = 0, nsamples = 1))]
pub(crate) fn per_point<'py>(
    py: Python<'py>,
    geometry: PyRef<'_, PyGeometry>,
    query_points: &Bound<'py, PyAny>,
    answer: &str,
    nthreads: i64,
    nsamples: i64,
) -> PyResult<Bound<'py, PyAny>> {
    check_samples(nsamples)?;
    let rows = Rows::read(query_points, "query_points", 3)?;
    on_geometry!(geometry.target(), g => match answer {
        "distance" => each_row(py, &rows, nthreads, point, distance(g)),
        "signed_distance" => each_row(py, &rows, nthreads, point, signed_distance(g)),
        "occupancy" => each_row(py, &rows, nthreads, point, occupancy(g)),
        _ => Err(PyValueError::new_err(format!("no such answer per point: {answer:?}"))),
    })
}

/// Refuses what Open3D refuses of `nsamples` (its rays per point, which vote): an even
/// number, or fewer than one.
fn check_samples(nsamples: i64) -> PyResult<()> {
    if nsamples < 1 || nsamples % 2 == 0 {
        return Err(PyValueError::new_err(format!(
            "nsamples: expected an odd number of rays, at least 1, got {nsamples}"
        )));
    }
    Ok(())
}

/// Open3D's `list_intersections` answers: every crossing of every ray, by ray, then `t`.
struct List {
    ray_splits: Vec<u32>,
    ray_ids: Vec<u32>,
    geometry_ids: Vec<u32>,
    primitive_ids: Vec<u32>,
    primitive_uvs: Vec<f32>,
    t_hit: Vec<f32>,
}

impl List {
    /// Every crossing of every ray of `rays` (flat rows of six) with `g`: found in tasks on
    /// all cores ([`queries::every_hit`]), then laid out in one pass.
    fn new<G: Geometry>(g: &G, rays: &[f32]) -> List {
        let n = rays.len() / 6;
        let row = |i: usize| ray(&rays[6 * i..6 * i + 6], 0.0, f32::INFINITY);
        let tasks = queries::every_hit(g, n, row, &ray_options::<G>());
        let total = tasks.iter().map(|(found, _)| found.len()).sum();
        let mut list = List {
            ray_splits: Vec::with_capacity(n + 1),
            ray_ids: Vec::with_capacity(total),
            geometry_ids: Vec::with_capacity(total),
            primitive_ids: Vec::with_capacity(total),
            primitive_uvs: Vec::with_capacity(2 * total),
            t_hit: Vec::with_capacity(total),
        };
        let (mut ray_id, mut start) = (0u32, 0u32);
        list.ray_splits.push(0);
        for (found, counts) in &tasks {
            let mut found = found.iter();
            for &count in counts {
                for hit in found.by_ref().take(count as usize) {
                    let (instance, h) = G::mesh_hit(hit);
                    list.ray_ids.push(ray_id);
                    list.geometry_ids.push(instance.unwrap_or(0));
                    list.primitive_ids.push(h.triangle);
                    list.primitive_uvs.extend_from_slice(&[h.u, h.v]);
                    list.t_hit.push(h.t);
                }
                start += count;
                list.ray_splits.push(start);
                ray_id += 1;
            }
        }
        list
    }
}

/// Open3D's `list_intersections`: every crossing of every ray, by ray, then `t`:
/// `ray_splits` (where each ray's crossings start, then their total; `n + 1` uint32, `n`
/// the rays however shaped), `ray_ids`, `geometry_ids`, `primitive_ids` (uint32),
/// `primitive_uvs` (`(k, 2)` float32) and `t_hit` (float32).
#[pyfunction]
#[pyo3(signature = (geometry, rays, nthreads = 0))]
pub(crate) fn list_intersections<'py>(
    py: Python<'py>,
    geometry: PyRef<'_, PyGeometry>,
    rays: &Bound<'py, PyAny>,
    nthreads: i64,
) -> PyResult<Bound<'py, PyDict>> {
    let rows = Rows::read(rays, "rays", 6)?;
    let flat = rows.flat()?;
    let target = geometry.target();
    let list = on_threads(
        py,
        nthreads,
        || on_geometry!(target, g => List::new(g, flat)),
    )?;
    let out = PyDict::new(py);
    out.set_item("ray_splits", PyArray1::from_vec(py, list.ray_splits))?;
    out.set_item("ray_ids", PyArray1::from_vec(py, list.ray_ids))?;
    out.set_item("geometry_ids", PyArray1::from_vec(py, list.geometry_ids))?;
    out.set_item("primitive_ids", PyArray1::from_vec(py, list.primitive_ids))?;
    let uvs = PyArray1::from_vec(py, list.primitive_uvs);
    out.set_item("primitive_uvs", uvs.reshape([list.t_hit.len(), 2])?)?;
    out.set_item("t_hit", PyArray1::from_vec(py, list.t_hit))?;
    Ok(out)
}
