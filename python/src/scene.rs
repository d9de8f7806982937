//! `meshray.Scene`: BVHs placed by transforms and queried together, the Python face of
//! `meshray::Scene` (several meshes behind one top-level tree, as Open3D's scene holds
//! several geometries).

use crate::{
    Answers, PyBvh, Row, check_distance, closest_columns, each_point, each_ray, list_hits, matrix,
    nth_ray, query, ray_query, ray_rows, rays, to_py, winding_accuracy,
};
use meshray::prelude::*;
use meshray::query::InstanceId;
use meshray::{Bvh, RayQuery, Scene, SceneOptions};
use nalgebra::{Matrix3, Vector3};
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;
use std::sync::{Arc, Mutex};

/// Meshes placed by 4 × 4 transforms and queried together: each instance is a `BVH` (one
/// BVH can be placed many times without a copy) and its world transform; queries answer in
/// world space and name the instance. (`PyScene` in Rust; `meshray.Scene` in Python.)
#[pyclass(module = "meshray", name = "Scene", frozen)]
pub(crate) struct PyScene {
    /// The scene as it stands. A query works on a snapshot (the `Arc`, cloned under the lock)
    /// without the GIL; an edit while queries run on other threads edits a copy (the
    /// instances' list, not their BVHs), so neither waits for the other, and the lock is
    /// never held while the GIL is released.
    inner: Mutex<Arc<Placed>>,
}

/// The scene, and what `cast` needs of each instance to report a hit's normal in world
/// space without reading the triangle's corners.
#[derive(Clone, Default)]
struct Placed {
    scene: Scene,
    /// By instance id; `None` for a removed id.
    normals: Vec<Option<Normals>>,
}

/// An instance's BVH's per-triangle normals and its transform's normal matrix (the inverse
/// transpose of its linear part).
type Normals = (Arc<[[f32; 3]]>, Matrix3<f32>);

impl PyScene {
    /// The scene as it stands now, for one query.
    fn snapshot(&self) -> Arc<Placed> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Edits the scene (a copy of it when a query still holds the current one).
    fn edit<T>(&self, f: impl FnOnce(&mut Placed) -> T) -> T {
        let mut placed = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        f(Arc::make_mut(&mut placed))
    }
}

/// The matrix that moves normals under `transform` (row-major 4 × 4): the inverse
/// transpose of its linear part, as the core's scene moves them (zero when singular, which
/// the scene refuses anyway).
fn normal_matrix(rows: &[[f32; 4]; 4]) -> Matrix3<f32> {
    let linear = Matrix3::from_fn(|i, j| f64::from(rows[i][j]));
    linear
        .try_inverse()
        .map_or_else(Matrix3::zeros, |inverse| inverse.transpose().cast::<f32>())
}

/// An instance as pickled: its id, its BVH's index in the pickle's list, its transform.
type Placement = (InstanceId, usize, [[f32; 4]; 4]);

/// A scene as pickled: its BVHs, and its instances as [`Placement`]s.
type Pickled = (Vec<PyBvh>, Vec<Placement>);

/// An instance id from Python (refused when negative or too large, as an unknown id).
fn id(value: i64) -> PyResult<InstanceId> {
    InstanceId::try_from(value)
        .map_err(|_| PyValueError::new_err(format!("no instance {value} in the scene")))
}

/// A transform written row by row (`None`: the identity).
fn transform(rows: Option<[[f32; 4]; 4]>) -> [[f32; 4]; 4] {
    rows.unwrap_or([
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 1.0],
    ])
}

/// The scene query options: culling and triangle test by name, as for a mesh's queries.
fn options(cull: &str, watertight: bool) -> PyResult<SceneOptions<'static>> {
    Ok(SceneOptions {
        query: query(cull, watertight)?,
        ..Default::default()
    })
}

#[pymethods]
impl PyScene {
    /// An empty scene.
    #[new]
    fn new() -> PyScene {
        PyScene {
            inner: Mutex::new(Arc::new(Placed::default())),
        }
    }

    /// Places `bvh` by `transform` (a 4 × 4 array, row-major as written on paper: `transform
    /// @ [x, y, z, 1]`; the identity when omitted) and returns the instance's id (0, 1, ...;
    /// a removed id is reused). Refuses a singular, non-affine or non-finite transform.
    #[pyo3(signature = (bvh, transform = None))]
    fn add(
        &self,
        py: Python<'_>,
        bvh: &PyBvh,
        transform: Option<[[f32; 4]; 4]>,
    ) -> PyResult<InstanceId> {
        let rows = self::transform(transform);
        let (tree, normals) = (bvh.inner.clone(), py.detach(|| bvh.normals().clone()));
        self.edit(|placed| {
            let id = placed.scene.add(tree, matrix(&rows))?;
            let slot = id as usize;
            if placed.normals.len() <= slot {
                placed.normals.resize(slot + 1, None);
            }
            placed.normals[slot] = Some((normals, normal_matrix(&rows)));
            Ok(id)
        })
        .map_err(to_py)
    }

    /// Moves instance `id` to `transform` (row-major 4 × 4).
    fn set_transform(&self, id: i64, transform: [[f32; 4]; 4]) -> PyResult<()> {
        let id = self::id(id)?;
        self.edit(|placed| {
            placed.scene.set_transform(id, matrix(&transform))?;
            if let Some(Some((_, m))) = placed.normals.get_mut(id as usize) {
                *m = normal_matrix(&transform);
            }
            Ok(())
        })
        .map_err(to_py)
    }

    /// Removes instance `id` (its id may be reused by a later `add`).
    fn remove(&self, id: i64) -> PyResult<()> {
        let id = self::id(id)?;
        self.edit(|placed| {
            placed.scene.remove(id)?;
            placed.normals[id as usize] = None;
            Ok(())
        })
        .map_err(to_py)
    }

    /// How many instances the scene holds.
    fn __len__(&self) -> usize {
        self.snapshot().scene.len()
    }

    /// Casts one ray per row of `origins` and `directions`, as `BVH.cast` does, in world
    /// space: the same dict, with `instance` (-1 on a miss) beside `triangle` (the triangle's
    /// number in that instance's mesh); `point` and `normal` in world space.
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
        let options = options(cull, watertight)?;
        let (origins, directions) = ray_rows(origins, directions, t_min, t_max)?;
        let (o, d) = (origins.as_slice()?, directions.as_slice()?);
        let ray = nth_ray(o, d, t_min, t_max);
        let placed = self.snapshot();
        let query = ray_query(any_hit);
        let mut found = Vec::new();
        let answers = Answers::cast(py, o.len() / 3, true, ray, progress, |rays, out, start| {
            rays.par_iter()
                .with_min_len(256)
                .map(|ray| placed.scene.cast_ray(ray, query, &options))
                .collect_into_vec(&mut found);
            out.fill(start, rays.len(), |i| {
                let (id, h) = found[i].map(|f| (f.instance, f.hit))?;
                let (normals, to_world) = placed.normals[id as usize].as_ref()?;
                let n = (to_world * Vector3::from(normals[h.triangle as usize]))
                    .try_normalize(0.0)
                    .unwrap_or_else(Vector3::zeros);
                let at = rays[i].at(h.t);
                Some(Row {
                    t: h.t,
                    triangle: h.triangle,
                    u: h.u,
                    v: h.v,
                    point: [at.x, at.y, at.z],
                    normal: [n.x, n.y, n.z],
                })
            });
            if let Some(instance) = &mut out.instance {
                (
                    instance[start..start + rays.len()].par_iter_mut(),
                    found.par_iter(),
                )
                    .into_par_iter()
                    .with_min_len(1024)
                    .for_each(|(x, f)| *x = f.map_or(-1, |f| i64::from(f.instance)));
            }
        });
        answers?.into_dict(py)
    }

    /// Whether each ray hits any instance in its range (a bool array), as `BVH.occluded`.
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
        let options = options(cull, watertight)?;
        let scene = &self.snapshot().scene;
        let blocked = each_ray(py, (origins, directions), (t_min, t_max), |ray| {
            scene.cast_ray(ray, RayQuery::Any, &options).is_some()
        })?;
        Ok(blocked.into_pyarray(py))
    }

    /// How many triangles each ray hits in its range, over all instances (an int32 array).
    /// Options as for `cast`.
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
        let options = options(cull, watertight)?;
        let scene = &self.snapshot().scene;
        let counts = each_ray(py, (origins, directions), (t_min, t_max), |ray| {
            i32::try_from(scene.count_hits(ray, &options)).unwrap_or(i32::MAX)
        })?;
        Ok(counts.into_pyarray(py))
    }

    /// Every hit of every ray, flattened: a dict of arrays `ray`, `t`, `instance`,
    /// `triangle`, `u`, `v`, sorted by ray, then `t` (then instance, then triangle).
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
        let options = options(cull, watertight)?;
        let scene = &self.snapshot().scene;
        list_hits(
            py,
            &rays(origins, directions, t_min, t_max)?,
            true,
            |ray, hits| scene.all_triangles(ray, &options, hits),
            |f| (Some(f.instance), f.hit.t, f.hit.triangle, f.hit.u, f.hit.v),
        )
    }

    /// The nearest point of any instance to each row of `points`, within `max_distance`
    /// (measured in world space): `BVH.closest_points`' dict, with `instance` (-1 where
    /// nothing is that near).
    #[pyo3(signature = (points, max_distance = f32::INFINITY))]
    fn closest_points<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        max_distance: f32,
    ) -> PyResult<Bound<'py, PyDict>> {
        check_distance(max_distance)?;
        let all = SceneOptions::default();
        let scene = &self.snapshot().scene;
        let found = each_point(py, points, |q| {
            scene
                .closest_point(q, max_distance, &all)
                .map(|c| (Some(c.instance), c.closest))
        })?;
        closest_columns(py, &found, true)
    }

    /// The generalized winding number of all instances together at each row of `points`
    /// (float64; `beta` and `exact` as for `BVH.winding_numbers`).
    #[pyo3(signature = (points, beta = 2.0, exact = false))]
    fn winding_numbers<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        beta: f64,
        exact: bool,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let accuracy = winding_accuracy(beta, exact)?;
        let all = SceneOptions::default();
        let scene = &self.snapshot().scene;
        let w = each_point(py, points, |q| scene.winding_number(q, accuracy, &all))?;
        Ok(w.into_pyarray(py))
    }

    /// Whether each row of `points` is inside the scene's meshes (the exact winding number
    /// of all instances together is at least 1/2): a bool array.
    fn contains<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let all = SceneOptions::default();
        let scene = &self.snapshot().scene;
        let inside = each_point(py, points, |q| scene.contains(q, &all))?;
        Ok(inside.into_pyarray(py))
    }

    /// The world-space distance from each row of `points` to the nearest instance, negative
    /// inside (where `contains` holds): float64, NaN where nothing is within `max_distance`.
    #[pyo3(signature = (points, max_distance = f32::INFINITY))]
    fn signed_distance<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        max_distance: f32,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        check_distance(max_distance)?;
        let all = SceneOptions::default();
        let scene = &self.snapshot().scene;
        let d = each_point(py, points, |q| {
            scene
                .signed_distance(q, max_distance, &all)
                .unwrap_or(f64::NAN)
        })?;
        Ok(d.into_pyarray(py))
    }

    /// Pickles as its BVHs (each once, however often placed) and its instances' ids,
    /// BVHs and transforms: `Scene._restore` puts them back under the same ids.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Pickled)> {
        let placed = slf.get().snapshot();
        let (mut trees, mut instances): (Vec<Arc<Bvh>>, Vec<Placement>) = (vec![], vec![]);
        for id in placed.scene.ids() {
            let Some(view) = placed.scene.instance(id) else {
                continue;
            };
            let tree = match trees.iter().position(|t| Arc::ptr_eq(t, view.bvh)) {
                Some(k) => k,
                None => {
                    trees.push(view.bvh.clone());
                    trees.len() - 1
                }
            };
            let rows = std::array::from_fn(|i| std::array::from_fn(|j| view.transform[(i, j)]));
            instances.push((id, tree, rows));
        }
        let bvhs = trees.into_iter().map(PyBvh::shared).collect();
        let restore = slf.py().get_type::<PyScene>().getattr("_restore")?;
        Ok((restore, (bvhs, instances)))
    }

    /// The scene `__reduce__` took apart: `instances` are `(id, index into bvhs,
    /// transform)`, placed under their ids (the ids between them, removed when pickled, are
    /// free again).
    #[staticmethod]
    fn _restore(
        py: Python<'_>,
        bvhs: Vec<PyRef<'_, PyBvh>>,
        instances: Vec<Placement>,
    ) -> PyResult<PyScene> {
        let scene = PyScene::new();
        let mut instances = instances;
        instances.sort_by_key(|&(id, _, _)| id);
        // The next add takes the next id: ids missing from the pickle are held by stand-ins
        // (removed below) so that each instance gets its own.
        let (mut next, mut gaps) = (0, Vec::new());
        for (id, tree, rows) in instances {
            let bvh = bvhs.get(tree).ok_or_else(|| {
                PyValueError::new_err(format!("instance {id}: no BVH {tree} in the pickle"))
            })?;
            if id < next {
                return Err(PyValueError::new_err(format!(
                    "instance {id} listed twice in the pickle"
                )));
            }
            while next < id {
                gaps.push(scene.add(py, bvh, None)?);
                next += 1;
            }
            scene.add(py, bvh, Some(rows))?;
            next += 1;
        }
        for id in gaps {
            scene.remove(i64::from(id))?;
        }
        Ok(scene)
    }

    fn __repr__(&self) -> String {
        format!("meshray.Scene({} instances)", self.__len__())
    }
}
