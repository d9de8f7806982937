//! `meshray.Scene`: BVHs placed by transforms and queried together, the Python face of
//! `meshray::Scene` (several meshes behind one top-level tree, as Open3D's scene holds
//! several geometries). Its queries are `Geometry`'s; here are its edits and pickling.

use crate::bvh::PyBvh;
use crate::convert::matrix;
use crate::errors::to_py;
use crate::geometry::PyGeometry;
use meshray::Bvh;
use meshray::query::InstanceId;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::Arc;

/// Meshes placed by 4 × 4 transforms and queried together: each instance is a `BVH` (one
/// BVH can be placed many times without a copy) and its world transform; queries answer in
/// world space and name the instance. (`PyScene` in Rust; `meshray.Scene` in Python.)
#[pyclass(module = "meshray", name = "Scene", extends = PyGeometry, frozen)]
pub(crate) struct PyScene {}

/// An instance as pickled: its id, its BVH's index in the pickle's list, its transform.
type Placement = (InstanceId, usize, [[f32; 4]; 4]);

/// A scene as pickled: its BVHs (each once, however often placed), and its instances.
type Pickled<'py> = (Vec<Bound<'py, PyBvh>>, Vec<Placement>);

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

impl PyScene {
    /// Edits the scene.
    fn edit<T>(slf: &Bound<'_, Self>, f: impl FnOnce(&mut meshray::Scene) -> T) -> T {
        slf.as_super()
            .get()
            .edit(f)
            .expect("a Scene's geometry is a scene")
    }

    /// The scene as it stands now.
    fn snapshot(slf: &Bound<'_, Self>) -> Arc<meshray::Scene> {
        slf.as_super()
            .get()
            .snapshot()
            .expect("a Scene's geometry is a scene")
    }
}

#[pymethods]
impl PyScene {
    /// An empty scene.
    #[new]
    fn new() -> PyClassInitializer<PyScene> {
        PyClassInitializer::from(PyGeometry::scene()).add_subclass(PyScene {})
    }

    /// Places `bvh` by `transform` (a 4 × 4 array, row-major as written on paper: `transform
    /// @ [x, y, z, 1]`; the identity when omitted) and returns the instance's id (0, 1, ...;
    /// a removed id is reused). Refuses a singular, non-affine or non-finite transform.
    #[pyo3(signature = (bvh, transform = None))]
    fn add(
        slf: &Bound<'_, Self>,
        bvh: &Bound<'_, PyBvh>,
        transform: Option<[[f32; 4]; 4]>,
    ) -> PyResult<InstanceId> {
        let (tree, rows) = (PyBvh::tree(bvh).clone(), self::transform(transform));
        PyScene::edit(slf, |scene| scene.add(tree, matrix(&rows))).map_err(to_py)
    }

    /// Moves instance `id` to `transform` (row-major 4 × 4).
    fn set_transform(slf: &Bound<'_, Self>, id: i64, transform: [[f32; 4]; 4]) -> PyResult<()> {
        let id = self::id(id)?;
        PyScene::edit(slf, |scene| scene.set_transform(id, matrix(&transform))).map_err(to_py)
    }

    /// Removes instance `id` (its id may be reused by a later `add`).
    fn remove(slf: &Bound<'_, Self>, id: i64) -> PyResult<()> {
        let id = self::id(id)?;
        PyScene::edit(slf, |scene| scene.remove(id).map(drop)).map_err(to_py)
    }

    /// How many instances the scene holds.
    fn __len__(slf: &Bound<'_, Self>) -> usize {
        PyScene::snapshot(slf).len()
    }

    /// Pickles as its BVHs (each once, however often placed) and its instances' ids,
    /// BVHs and transforms: `Scene._restore` puts them back under the same ids.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Pickled<'py>)> {
        let py = slf.py();
        let scene = PyScene::snapshot(slf);
        let (mut trees, mut instances): (Vec<Arc<Bvh>>, Vec<Placement>) = (vec![], vec![]);
        for id in scene.ids() {
            let Some(view) = scene.instance(id) else {
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
        let bvhs = trees
            .into_iter()
            .map(|tree| PyBvh::wrap(py, tree))
            .collect::<PyResult<_>>()?;
        let restore = py.get_type::<PyScene>().getattr("_restore")?;
        Ok((restore, (bvhs, instances)))
    }

    /// The scene `__reduce__` took apart: `instances` are `(id, index into bvhs,
    /// transform)`, placed under their ids (the ids between them, removed when pickled, are
    /// free again).
    #[staticmethod]
    fn _restore<'py>(
        py: Python<'py>,
        bvhs: Vec<Bound<'py, PyBvh>>,
        instances: Vec<Placement>,
    ) -> PyResult<Bound<'py, PyScene>> {
        let mut scene = meshray::Scene::new();
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
            let tree = PyBvh::tree(bvh);
            while next < id {
                gaps.push(
                    scene
                        .add(tree.clone(), matrix(&self::transform(None)))
                        .map_err(to_py)?,
                );
                next += 1;
            }
            scene.add(tree.clone(), matrix(&rows)).map_err(to_py)?;
            next += 1;
        }
        for id in gaps {
            scene.remove(id).map_err(to_py)?;
        }
        let restored = Bound::new(py, PyScene::new())?;
        PyScene::edit(&restored, |placed| *placed = scene);
        Ok(restored)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> String {
        format!("meshray.Scene({} instances)", PyScene::__len__(slf))
    }
}
