//! `meshray.Geometry`: what `BVH` and `Scene` share, every query, each a method written once
//! here (its arguments read once, by [`RayRows`] and the functions of `convert`) over the
//! library's traits (`queries`). A `BVH` holds a mesh's tree, a `Scene` placed trees; the
//! methods dispatch on which.

use crate::convert::{RayOptions, RayRows, as_array, camera, points, ray_query, winding_accuracy};
use crate::errors::to_py;
use crate::gpu::{Device, OnDevice, check_options};
use crate::queries::{self, Inside};
use meshray::prelude::*;
use meshray::query::SceneTriangle;
use meshray::{Bvh, QueryOptions, Ray, Scene};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::{Arc, Mutex};

/// A mesh's BVH, or a scene of placed ones: what the queries are asked of. (The base class
/// of `meshray.BVH` and `meshray.Scene`.)
#[pyclass(module = "meshray", name = "Geometry", subclass, frozen)]
pub(crate) struct PyGeometry {
    inner: Inner,
    /// A mesh's copy on the GPU (`device="gpu"`), made on its first GPU cast.
    on_device: OnDevice,
}

/// Which geometry.
enum Inner {
    Mesh(Arc<Bvh>),
    /// The scene as it stands. A query works on a snapshot (the `Arc`, cloned under the
    /// lock) without the GIL; an edit while queries run on other threads edits a copy (the
    /// instances' list, not their BVHs), so neither waits for the other, and the lock is
    /// never held while the GIL is released.
    Scene(Mutex<Arc<Scene>>),
}

impl PyGeometry {
    /// A mesh's BVH.
    pub(crate) fn mesh(bvh: Arc<Bvh>) -> PyGeometry {
        PyGeometry {
            inner: Inner::Mesh(bvh),
            on_device: OnDevice::default(),
        }
    }

    /// An empty scene.
    pub(crate) fn scene() -> PyGeometry {
        PyGeometry {
            inner: Inner::Scene(Mutex::new(Arc::new(Scene::new()))),
            on_device: OnDevice::default(),
        }
    }

    /// The mesh's BVH (`None` for a scene).
    pub(crate) fn bvh(&self) -> Option<&Arc<Bvh>> {
        match &self.inner {
            Inner::Mesh(bvh) => Some(bvh),
            Inner::Scene(_) => None,
        }
    }

    /// The scene as it stands now, for one query (`None` for a mesh).
    pub(crate) fn snapshot(&self) -> Option<Arc<Scene>> {
        match &self.inner {
            Inner::Mesh(_) => None,
            Inner::Scene(scene) => Some(scene.lock().unwrap_or_else(|e| e.into_inner()).clone()),
        }
    }

    /// Edits the scene (a copy of it when a query still holds the current one); `None` for
    /// a mesh.
    pub(crate) fn edit<T>(&self, f: impl FnOnce(&mut Scene) -> T) -> Option<T> {
        match &self.inner {
            Inner::Mesh(_) => None,
            Inner::Scene(scene) => {
                let mut scene = scene.lock().unwrap_or_else(|e| e.into_inner());
                Some(f(Arc::make_mut(&mut scene)))
            }
        }
    }
}

/// One query's geometry: a mesh's tree, or the scene as it stood when the query began.
pub(crate) enum Target {
    /// A mesh's tree.
    Mesh(Arc<Bvh>),
    /// A snapshot of the scene.
    Scene(Arc<Scene>),
}

impl PyGeometry {
    /// What a query asks: the tree, or a snapshot of the scene (taken under the lock, and
    /// then free of it: a query runs without the GIL while the scene may be edited).
    pub(crate) fn target(&self) -> Target {
        match &self.inner {
            Inner::Mesh(bvh) => Target::Mesh(bvh.clone()),
            Inner::Scene(scene) => {
                Target::Scene(scene.lock().unwrap_or_else(|e| e.into_inner()).clone())
            }
        }
    }
}

/// Runs `$body` with `$g` bound to a [`Target`]'s geometry, a `&Bvh` or a `&Scene`, so the
/// body, generic code over [`queries::Geometry`], is written once.
macro_rules! on_geometry {
    ($target:expr, $g:ident => $body:expr) => {
        match $target {
            $crate::geometry::Target::Mesh(bvh) => {
                let $g: &meshray::Bvh = &bvh;
                $body
            }
            $crate::geometry::Target::Scene(scene) => {
                let $g: &meshray::Scene = &scene;
                $body
            }
        }
    };
}
pub(crate) use on_geometry;

#[pymethods]
impl PyGeometry {
    /// Casts one ray per row of `origins` and `directions` (`(n, 3)` arrays; directions need
    /// not be unit length: `t` is in their units). Returns a dict of arrays, one entry per
    /// ray: `t` (inf on a miss), `instance` (a scene's: -1 on a miss), `triangle` (-1 on a
    /// miss; a scene's: the number in that instance's mesh), `u`, `v` (barycentrics of the
    /// second and third corner), `point` and `normal` (the unit geometric normal; a scene's
    /// in world space; NaN on a miss). `any_hit=True` returns some hit rather than the
    /// nearest (faster, for visibility). A ray with a zero, NaN or infinite direction hits
    /// nothing. `progress(done, total)`, if given, is called after each block of 65,536 rays
    /// (with the GIL held; an exception it raises stops the batch and is raised here);
    /// `progress=True` shows a `tqdm` bar instead (a warning when tqdm is not installed).
    ///
    /// The options every ray query takes, by keyword: `t_min` and `t_max` (the range
    /// searched; 0 and inf), `watertight` (the default, `True`: the watertight triangle
    /// test; `False`: plain Cramer's rule, a little faster, can slip through a shared edge)
    /// and `cull` ("none", "back" or "front").
    ///
    /// `device="gpu"` (a `BVH`'s rays, the watertight test without culling): the rays cast
    /// on the GPU through Vulkan (a hardware driver, or Mesa's lavapipe on the CPU) and
    /// finished on the CPU, every answer the same as `device="cpu"`'s, bit for bit (an
    /// `any_hit` the same where a ray hits, though which triangle may differ). The mesh is
    /// uploaded on its first GPU cast and kept.
    #[pyo3(signature = (origins, directions, *, any_hit = false, progress = None, device = "cpu", **options))]
    #[allow(clippy::too_many_arguments)]
    fn cast<'py>(
        &self,
        py: Python<'py>,
        origins: &Bound<'py, PyAny>,
        directions: &Bound<'py, PyAny>,
        any_hit: bool,
        progress: Option<&Bound<'py, PyAny>>,
        device: &str,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let device = Device::read(device)?;
        let rays = RayRows::read("cast", origins, directions, options)?;
        let (source, query) = (rays.source()?, ray_query(any_hit));
        let options = rays.query_options();
        match (device, self.target()) {
            (Device::Cpu, target) => {
                on_geometry!(target, g => queries::cast(py, g, rays.len(), |i| source.ray(i), query, options, progress))
            }
            (Device::Gpu, Target::Mesh(bvh)) => {
                check_options(&options)?;
                let copy = self.on_device.get(&bvh)?;
                let on_gpu =
                    |rays: &[Ray], hits: &mut Vec<_>| OnDevice::cast(copy, rays, query, hits);
                queries::cast_with(py, &*bvh, rays.len(), |i| source.ray(i), on_gpu, progress)
            }
            (Device::Gpu, Target::Scene(_)) => Err(PyValueError::new_err(
                "device=\"gpu\": a BVH's rays only; a scene's are cast on the CPU",
            )),
        }
    }

    /// Picks through pixels: for each `(x, y)` row of `pixels` (pixel coordinates, origin top
    /// left, `y` down), the camera ray of `view` and `projection` (4 × 4 arrays, row-major as
    /// written on paper: `projection @ view @ point`) in a viewport of `viewport = (width,
    /// height)` pixels, cast as `cast` does (its `t` from the near plane, in the camera's
    /// units), with `cast`'s options. The same dict as `cast`.
    #[pyo3(signature = (view, projection, viewport, pixels, **options))]
    fn pick<'py>(
        &self,
        py: Python<'py>,
        view: [[f32; 4]; 4],
        projection: [[f32; 4]; 4],
        viewport: [f32; 2],
        pixels: &Bound<'py, PyAny>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let options = RayOptions::read("pick", options)?;
        let camera = camera(&view, &projection, viewport)?;
        let pixels: PyReadonlyArray2<'py, f32> = as_array(pixels, "float32")
            .and_then(|a| a.call_method1("reshape", ((-1i64, 2i64),)))
            .and_then(|a| a.extract())
            .map_err(|_| PyValueError::new_err("pixels: expected an (n, 2) array of numbers"))?;
        let rays = pixels
            .as_array()
            .rows()
            .into_iter()
            .map(|p| {
                camera
                    .pixel_ray([p[0], p[1]])
                    .map(|ray| options.ranged(ray))
            })
            .collect::<Result<Vec<Ray>, _>>()
            .map_err(to_py)?;
        let (closest, query) = (meshray::RayQuery::Closest, options.query);
        on_geometry!(self.target(), g => queries::cast(py, g, rays.len(), |i| rays[i], closest, query, None))
    }

    /// Every hit of one ray, nearest first: a dict of arrays `t`, `instance` (a scene's),
    /// `triangle`, `u`, `v`. `cast`'s options.
    #[pyo3(signature = (origin, direction, **options))]
    fn all_hits<'py>(
        &self,
        py: Python<'py>,
        origin: &Bound<'py, PyAny>,
        direction: &Bound<'py, PyAny>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let rays = RayRows::read("all_hits", origin, direction, options)?;
        if rays.len() != 1 {
            return Err(PyValueError::new_err(
                "expected one origin and one direction",
            ));
        }
        let (made, query) = (rays.rays()?, rays.query_options());
        let out = on_geometry!(self.target(), g => queries::cast_all(py, g, &made, query))?;
        out.del_item("ray")?;
        Ok(out)
    }

    /// Whether each ray hits anything in its range (a bool array): `cast(any_hit=True)`'s
    /// answer to "is there a hit?" without the hit's details, for shadow rays and lines of
    /// sight. `cast`'s options.
    #[pyo3(signature = (origins, directions, **options))]
    fn occluded<'py>(
        &self,
        py: Python<'py>,
        origins: &Bound<'py, PyAny>,
        directions: &Bound<'py, PyAny>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let rays = RayRows::read("occluded", origins, directions, options)?;
        Ok(on_geometry!(self.target(), g => queries::occluded(py, g, &rays))?.into_pyarray(py))
    }

    /// Sweeps: where a sphere of `radius` whose centre moves along each ray (`origins`,
    /// `directions`: `(n, 3)`; over `t_min`..`t_max`) first touches the geometry — its faces,
    /// edges and corners, exactly (as an f64 brute force over every triangle finds it). With
    /// `axis` (3 numbers), a capsule instead: every point within `radius` of the segment
    /// from the ray's origin to `origin + axis`, moving along the ray. A dict of arrays:
    /// `t` (how far it moved; inf where it touches nothing; `t_min` where it touches
    /// already), `instance` (a scene's, -1), `triangle` (-1), `point` (the contact on the
    /// triangle) and `normal` (unit, from the triangle towards the shape: the way to push it
    /// out; `(n, 3)`, NaN), `u`, `v` (the point's barycentrics, NaN). All cores, without
    /// the GIL. `cast`'s options (`cull` by the side the motion meets a triangle from;
    /// `watertight` does not apply). A negative, NaN or infinite `radius`, or a non-finite
    /// `axis`, is a `ValueError`.
    #[pyo3(signature = (origins, directions, radius, *, axis = None, **options))]
    fn cast_spheres<'py>(
        &self,
        py: Python<'py>,
        origins: &Bound<'py, PyAny>,
        directions: &Bound<'py, PyAny>,
        radius: f32,
        axis: Option<[f32; 3]>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let rays = RayRows::read("cast_spheres", origins, directions, options)?;
        let axis = axis.unwrap_or([0.0; 3]);
        if !(radius >= 0.0 && radius.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "radius: expected a finite number of at least 0, got {radius}"
            )));
        }
        if !axis.iter().all(|c| c.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "axis: expected three finite numbers, got {axis:?}"
            )));
        }
        on_geometry!(self.target(), g => queries::cast_spheres(py, g, &rays, axis, radius))
    }

    /// Which triangles of this geometry and of `other` (of the same kind: a `BVH` with a
    /// `BVH`, a `Scene` with a `Scene`) placed by `transform` (4 × 4, row-major as written
    /// on paper; the identity when omitted) intersect, sorted: a `BVH`'s as an `(k, 2)`
    /// int64 array of pairs (this mesh's triangle, `other`'s); a `Scene`'s as `(k, 4)`
    /// rows (instance, triangle, `other`'s instance, triangle). Decided exactly
    /// (orientation signs in exact arithmetic): touching and coplanar overlaps count,
    /// zero-area triangles meet nothing. On all cores, without the GIL. A singular,
    /// non-affine or non-finite transform is refused (`MeshrayError`); another kind of
    /// `other` is a `TypeError`.
    #[pyo3(signature = (other, transform = None))]
    fn intersecting_triangles<'py>(
        &self,
        py: Python<'py>,
        other: &Bound<'py, PyGeometry>,
        transform: Option<[[f32; 4]; 4]>,
    ) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let m = crate::convert::matrix(&transform.unwrap_or(IDENTITY));
        let all = QueryOptions::default();
        match (self.target(), other.get().target()) {
            (Target::Mesh(a), Target::Mesh(b)) => {
                let pairs = py
                    .detach(|| a.intersecting_triangles(&b, m, &all))
                    .map_err(to_py)?;
                pair_rows(py, &pairs, |&(i, j)| [i64::from(i), i64::from(j)])
            }
            (Target::Scene(a), Target::Scene(b)) => {
                let pairs = py
                    .detach(|| a.intersecting_triangles(&b, m, &all.into()))
                    .map_err(to_py)?;
                pair_rows(py, &pairs, scene_row)
            }
            _ => Err(PyTypeError::new_err(
                "intersecting_triangles: other must be of the same kind (a BVH with a BVH, a \
                 Scene with a Scene)",
            )),
        }
    }

    /// Whether any triangle of this geometry meets one of `other` (of the same kind) placed
    /// by `transform`: as `len(intersecting_triangles(other, transform)) > 0`, but the walk
    /// stops at the first intersecting pair (a clash check). Without the GIL.
    #[pyo3(signature = (other, transform = None))]
    fn intersects(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyGeometry>,
        transform: Option<[[f32; 4]; 4]>,
    ) -> PyResult<bool> {
        let m = crate::convert::matrix(&transform.unwrap_or(IDENTITY));
        let all = QueryOptions::default();
        match (self.target(), other.get().target()) {
            (Target::Mesh(a), Target::Mesh(b)) => {
                py.detach(|| a.intersects(&b, m, &all)).map_err(to_py)
            }
            (Target::Scene(a), Target::Scene(b)) => py
                .detach(|| a.intersects(&b, m, &all.into()))
                .map_err(to_py),
            _ => Err(PyTypeError::new_err(
                "intersects: other must be of the same kind (a BVH with a BVH, a Scene with \
                 a Scene)",
            )),
        }
    }

    /// Where the geometry intersects itself: its pairs of triangles that share a point,
    /// sorted, as `intersecting_triangles` gives them (a `BVH`'s with `i < j`, neighbours
    /// with a corner at the same position left out: they touch there by construction; a
    /// `Scene`'s: each instance's own, and every pair from two instances that overlap or
    /// touch, the first instance's number lower or the same). On all cores, without the GIL.
    fn self_intersections<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let all = QueryOptions::default();
        match self.target() {
            Target::Mesh(a) => {
                let pairs = py.detach(|| a.self_intersections(&all));
                pair_rows(py, &pairs, |&(i, j)| [i64::from(i), i64::from(j)])
            }
            Target::Scene(a) => {
                let pairs = py.detach(|| a.self_intersections(&all.into()));
                pair_rows(py, &pairs, scene_row)
            }
        }
    }

    /// How many triangles each ray hits in its range (an int32 array): `cast_all`'s count
    /// per ray, without making the hits. `cast`'s options.
    #[pyo3(signature = (origins, directions, **options))]
    fn count_hits<'py>(
        &self,
        py: Python<'py>,
        origins: &Bound<'py, PyAny>,
        directions: &Bound<'py, PyAny>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyArray1<i32>>> {
        let rays = RayRows::read("count_hits", origins, directions, options)?;
        Ok(on_geometry!(self.target(), g => queries::count_hits(py, g, &rays))?.into_pyarray(py))
    }

    /// Every hit of every ray, flattened: a dict of arrays `ray` (the row each hit belongs
    /// to), `t`, `instance` (a scene's), `triangle`, `u`, `v`, sorted by ray, then `t` (then
    /// instance, then triangle). `cast`'s options.
    #[pyo3(signature = (origins, directions, **options))]
    fn cast_all<'py>(
        &self,
        py: Python<'py>,
        origins: &Bound<'py, PyAny>,
        directions: &Bound<'py, PyAny>,
        options: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let rays = RayRows::read("cast_all", origins, directions, options)?;
        let (made, query) = (rays.rays()?, rays.query_options());
        on_geometry!(self.target(), g => queries::cast_all(py, g, &made, query))
    }

    /// The nearest point of the surface to each row of `points` (`(n, 3)`), within
    /// `max_distance` (a scene's measured in world space): a dict of arrays `point` (NaN
    /// where nothing is that near), `instance` (a scene's, -1), `triangle` (-1), `distance`
    /// (inf), `u`, `v`. Distances are compared in float64.
    #[pyo3(signature = (points, max_distance = f32::INFINITY))]
    fn closest_points<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        max_distance: f32,
    ) -> PyResult<Bound<'py, PyDict>> {
        let points = self::points(points)?;
        on_geometry!(self.target(), g => queries::closest_points(py, g, &points, max_distance))
    }

    /// The generalized winding number at each row of `points` (`(n, 3)`): about 1 inside a
    /// closed outward-facing surface, 0 outside, in between near the holes of an open one
    /// (a scene's: the sum over its instances). A float64 array (NaN for a NaN or infinite
    /// point). Fast by default (Barill et al.'s far-field sum with `beta`, within 0.02 of the
    /// exact sum at `beta = 2`); `exact=True` sums every triangle's solid angle. All cores,
    /// without the GIL.
    #[pyo3(signature = (points, beta = 2.0, exact = false))]
    fn winding_numbers<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        beta: f64,
        exact: bool,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let accuracy = winding_accuracy(beta, exact)?;
        let points = self::points(points)?;
        let w =
            on_geometry!(self.target(), g => queries::winding_numbers(py, g, &points, accuracy));
        Ok(w.into_pyarray(py))
    }

    /// Whether each row of `points` is inside: a bool array. `method="winding"` (the
    /// default): the exact winding number is at least 1/2, right on open meshes, soups and
    /// meshes with overlaps as on closed ones. `method="parity"`: the answer before winding
    /// numbers, for closed meshes only: the parity of a ray's crossings (watertight test),
    /// the same answer along three fixed directions taken by majority.
    #[pyo3(signature = (points, method = "winding"))]
    fn contains<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        method: &str,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let method = match method {
            "winding" => Inside::Winding,
            "parity" => Inside::Parity,
            other => {
                return Err(PyValueError::new_err(format!(
                    "method must be 'winding' or 'parity', not {other:?}"
                )));
            }
        };
        let points = self::points(points)?;
        let inside = on_geometry!(self.target(), g => queries::contains(py, g, &points, method));
        Ok(inside.into_pyarray(py))
    }

    /// The distance from each row of `points` to the surface (a scene's in world space),
    /// negative inside (where `contains` holds): a float64 array, NaN where nothing is within
    /// `max_distance` (or the point is NaN or infinite). The magnitude is `closest_points`'
    /// distance.
    #[pyo3(signature = (points, max_distance = f32::INFINITY))]
    fn signed_distance<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        max_distance: f32,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let points = self::points(points)?;
        let d = on_geometry!(self.target(), g => queries::signed_distance(py, g, &points, max_distance))?;
        Ok(d.into_pyarray(py))
    }
}

/// The identity, row by row.
const IDENTITY: [[f32; 4]; 4] = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

/// Pairs as an int64 array, one row each as `row` writes it (`N` columns).
fn pair_rows<'py, T, const N: usize>(
    py: Python<'py>,
    pairs: &[T],
    row: impl Fn(&T) -> [i64; N],
) -> PyResult<Bound<'py, PyArray2<i64>>> {
    let width = N;
    let flat: Vec<i64> = pairs.iter().flat_map(row).collect();
    PyArray1::from_vec(py, flat).reshape([pairs.len(), width])
}

/// A scene's pair of triangles as a row: instance, triangle, instance, triangle.
fn scene_row((s, t): &(SceneTriangle, SceneTriangle)) -> [i64; 4] {
    [s.instance, s.triangle, t.instance, t.triangle].map(i64::from)
}
