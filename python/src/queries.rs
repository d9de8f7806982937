//! Every query of `BVH` and `Scene`, written once over the library's query traits
//! (`RayCast` for rays, `PointQuery` for points): numpy answers filled on all cores with the
//! GIL released. A mesh's answers and a scene's differ only in the `instance` column, which a
//! scene's carry.

use crate::convert::{RayRows, check_distance, rows};
use crate::report::Report;
use meshray::prelude::*;
use meshray::query::{
    ClosestPoint, InstanceId, SceneClosestPoint, SceneCompactHit, SceneSweepHit, SweepHit,
    WindingAccuracy,
};
use meshray::{Bvh, CompactHit, Culling, QueryOptions, Ray, RayQuery, Scene};
use nalgebra::{Unit, Vector3};
use numpy::IntoPyArray;
use numpy::ndarray::{Array1, Array2};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use rayon::prelude::*;

/// What the binding needs of a geometry beyond the two traits: whether its answers carry an
/// `instance` column (a scene's). Its options come from the traits (`From<QueryOptions>`
/// for rays, `Default` for points: a scene's Python queries see every instance).
pub(crate) trait Geometry: RayCast + PointQuery + Sweep {
    /// Whether answers carry an `instance` column.
    const INSTANCES: bool;

    /// A sweep's answer as a mesh's: the instance (a scene's) and the contact.
    fn mesh_sweep(hit: &<Self as Sweep>::SweepHit) -> (Option<InstanceId>, SweepHit);

    /// The unit normal (world space) of a closest point's triangle, from the tree's table.
    fn closest_normal(&self, closest: &<Self as PointQuery>::Closest)
    -> Option<Unit<Vector3<f32>>>;
}

/// A closest point's triangle as a compact hit, for its normal.
fn on_triangle(c: &ClosestPoint) -> CompactHit {
    CompactHit {
        triangle: c.triangle,
        t: c.distance,
        u: c.u,
        v: c.v,
    }
}

impl Geometry for Bvh {
    const INSTANCES: bool = false;

    fn mesh_sweep(hit: &SweepHit) -> (Option<InstanceId>, SweepHit) {
        (None, *hit)
    }

    fn closest_normal(&self, closest: &ClosestPoint) -> Option<Unit<Vector3<f32>>> {
        self.hit_normal(&on_triangle(closest))
    }
}

impl Geometry for Scene {
    const INSTANCES: bool = true;

    fn mesh_sweep(hit: &SceneSweepHit) -> (Option<InstanceId>, SweepHit) {
        (Some(hit.instance), hit.hit)
    }

    fn closest_normal(&self, c: &SceneClosestPoint) -> Option<Unit<Vector3<f32>>> {
        self.hit_normal(&SceneCompactHit {
            instance: c.instance,
            hit: on_triangle(&c.closest),
        })
    }
}

/// Rays per block of a cast: the progress report's step, and the most rays made at once.
const BLOCK: usize = 1 << 16;

/// `cast`: ray `ray(i)` for `i` in `0..n` cast with `query`, in blocks of [`BLOCK`] (each
/// made, cast with the batch query and written on all cores without the GIL; `progress`
/// told between blocks). Per ray: `t` (inf on a miss), `instance` (a scene's, -1),
/// `triangle` (-1), `u`, `v`, `point` (`origin + t·direction`) and `normal` (the unit
/// geometric normal from the tree's table, in world space for a scene; NaN on a miss).
pub(crate) fn cast<'py, G: Geometry>(
    py: Python<'py>,
    g: &G,
    n: usize,
    ray: impl Fn(usize) -> Ray + Sync,
    query: RayQuery,
    options: QueryOptions,
    progress: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let options = <G as RayCast>::Options::from(options);
    let on_cpu = |rays: &[Ray], hits: &mut Vec<_>| g.cast_rays(rays, query, &options, hits);
    cast_with(py, g, n, ray, on_cpu, progress)
}

/// [`cast`] with each block's hits from `answer` (the batch query on the CPU, or the GPU's).
pub(crate) fn cast_with<'py, G: Geometry>(
    py: Python<'py>,
    g: &G,
    n: usize,
    ray: impl Fn(usize) -> Ray + Sync,
    answer: impl Fn(&[Ray], &mut Vec<Option<G::Compact>>) + Sync,
    progress: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut out = Answers::new(n, G::INSTANCES);
    let report = Report::new(py, progress, n)?;
    let (mut rays, mut hits, mut normals) = (Vec::with_capacity(BLOCK.min(n)), vec![], vec![]);
    for start in (0..n).step_by(BLOCK) {
        let end = (start + BLOCK).min(n);
        py.detach(|| {
            (start..end)
                .into_par_iter()
                .map(&ray)
                .collect_into_vec(&mut rays);
            answer(&rays, &mut hits);
            // The table of normals is made by the first call, from this thread (on all
            // cores), rather than inside the loop below.
            if let Some(first) = hits.iter().flatten().next() {
                g.hit_normal(first);
            }
            // The normals in a loop of their own: each is a read from anywhere in the table,
            // and a short loop keeps many in flight at once.
            hits.par_iter()
                .with_min_len(4096)
                .map(|h| h.as_ref().and_then(|h| g.hit_normal(h)))
                .collect_into_vec(&mut normals);
            out.fill::<G>(start, &rays, &hits, &normals);
        });
        report.done(start, end, n)?;
    }
    report.finish()?;
    out.into_dict(py)
}

/// What `cast` answers, one entry per ray.
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

    /// Writes rows `start..` from a block's rays, hits and normals, in parallel (a miss
    /// leaves its row as [`Answers::new`] made it).
    fn fill<G: RayCast>(
        &mut self,
        start: usize,
        rays: &[Ray],
        hits: &[Option<G::Compact>],
        normals: &[Option<Unit<Vector3<f32>>>],
    ) {
        let end = start + rays.len();
        (
            self.t[start..end].par_iter_mut(),
            self.triangle[start..end].par_iter_mut(),
            self.u[start..end].par_iter_mut(),
            self.v[start..end].par_iter_mut(),
            self.point[3 * start..3 * end].par_chunks_mut(3),
            self.normal[3 * start..3 * end].par_chunks_mut(3),
            (rays, hits, normals).into_par_iter(),
        )
            .into_par_iter()
            .with_min_len(1024)
            .for_each(|(t, tri, u, v, p, nrm, (ray, hit, normal))| {
                let Some(hit) = hit else { return };
                let (_, h) = G::mesh_hit(hit);
                (*t, *tri, *u, *v) = (h.t, i64::from(h.triangle), h.u, h.v);
                p.copy_from_slice(ray.at(h.t).coords.as_slice());
                if let Some(n) = normal {
                    nrm.copy_from_slice(n.as_slice());
                }
            });
        if let Some(instance) = &mut self.instance {
            (instance[start..end].par_iter_mut(), hits.par_iter())
                .into_par_iter()
                .with_min_len(1024)
                .for_each(|(x, hit)| {
                    let id = hit.as_ref().and_then(|h| G::mesh_hit(h).0);
                    *x = id.map_or(-1, i64::from);
                });
        }
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

/// `answer(ray)` for each ray, on all cores without the GIL.
pub(crate) fn each_ray<T: Send>(
    py: Python<'_>,
    rays: &RayRows<'_>,
    answer: impl Fn(&Ray) -> T + Sync,
) -> PyResult<Vec<T>> {
    let rays = rays.rays()?;
    Ok(py.detach(|| rays.par_iter().with_min_len(256).map(&answer).collect()))
}

/// `answer(point)` for each point, on all cores without the GIL.
pub(crate) fn each_point<T: Send>(
    py: Python<'_>,
    points: &[[f32; 3]],
    answer: impl Fn([f32; 3]) -> T + Sync,
) -> Vec<T> {
    py.detach(|| {
        points
            .par_iter()
            .with_min_len(256)
            .map(|&q| answer(q))
            .collect()
    })
}

/// `occluded`: whether each ray hits anything in its range.
pub(crate) fn occluded<G: Geometry>(
    py: Python<'_>,
    g: &G,
    rays: &RayRows<'_>,
) -> PyResult<Vec<bool>> {
    let options = <G as RayCast>::Options::from(rays.query_options());
    each_ray(py, rays, |ray| {
        g.cast_ray(ray, RayQuery::Any, &options).is_some()
    })
}

/// `cast_spheres`: where a sphere of `radius` (a capsule of that axis, when `axis` is not
/// zero) moving along each ray first touches, as a dict of arrays: `t` (inf where it touches
/// nothing), `instance` (a scene's, -1), `triangle` (-1), `point` and `normal` (`(n, 3)`,
/// NaN), `u`, `v` (NaN). The shape was checked by the caller.
pub(crate) fn cast_spheres<'py, G: Geometry>(
    py: Python<'py>,
    g: &G,
    rays: &RayRows<'_>,
    axis: [f32; 3],
    radius: f32,
) -> PyResult<Bound<'py, PyDict>> {
    let options = <G as RayCast>::Options::from(rays.query_options());
    let found = each_ray(py, rays, |ray| {
        let hit = g.cast_capsule(ray, axis, radius, &options).ok().flatten();
        hit.map(|h| G::mesh_sweep(&h))
    })?;
    let n = found.len();
    let (mut point, mut normal) = (
        Array2::from_elem((n, 3), f32::NAN),
        Array2::from_elem((n, 3), f32::NAN),
    );
    let (mut instance, mut triangle) = (Array1::from_elem(n, -1i64), Array1::from_elem(n, -1i64));
    let mut t = Array1::from_elem(n, f32::INFINITY);
    let (mut u, mut v) = (
        Array1::from_elem(n, f32::NAN),
        Array1::from_elem(n, f32::NAN),
    );
    for (i, found) in found.iter().enumerate() {
        let Some((id, h)) = found else { continue };
        for k in 0..3 {
            point[(i, k)] = h.point[k];
            normal[(i, k)] = h.normal[k];
        }
        (t[i], u[i], v[i]) = (h.t, h.u, h.v);
        instance[i] = id.map_or(-1, i64::from);
        triangle[i] = i64::from(h.triangle);
    }
    let out = PyDict::new(py);
    out.set_item("t", t.into_pyarray(py))?;
    if G::INSTANCES {
        out.set_item("instance", instance.into_pyarray(py))?;
    }
    out.set_item("triangle", triangle.into_pyarray(py))?;
    out.set_item("point", point.into_pyarray(py))?;
    out.set_item("normal", normal.into_pyarray(py))?;
    out.set_item("u", u.into_pyarray(py))?;
    out.set_item("v", v.into_pyarray(py))?;
    Ok(out)
}

/// `count_hits`: how many triangles each ray hits in its range.
pub(crate) fn count_hits<G: Geometry>(
    py: Python<'_>,
    g: &G,
    rays: &RayRows<'_>,
) -> PyResult<Vec<i32>> {
    let options = <G as RayCast>::Options::from(rays.query_options());
    each_ray(py, rays, |ray| {
        i32::try_from(g.count_hits(ray, &options)).unwrap_or(i32::MAX)
    })
}

/// `cast_all`: every hit of every ray as a dict of flat arrays: `ray` (the row each hit
/// belongs to), `t`, `instance` (a scene's), `triangle`, `u`, `v`, sorted by ray, then `t`
/// (then instance, then triangle). Tasks of 256 rays on all cores without the GIL, one
/// scratch vector per thread: no allocation per ray.
pub(crate) fn cast_all<'py, G: Geometry>(
    py: Python<'py>,
    g: &G,
    rays: &[Ray],
    options: QueryOptions,
) -> PyResult<Bound<'py, PyDict>> {
    let options = <G as RayCast>::Options::from(options);
    let tasks = py.detach(|| every_hit(g, rays.len(), |i| rays[i], &options));
    let count = tasks.iter().map(|(found, _)| found.len()).sum();
    let listed = tasks.iter().enumerate().flat_map(|(k, (found, counts))| {
        let rows = counts
            .iter()
            .enumerate()
            .flat_map(move |(i, &n)| std::iter::repeat_n(k * HIT_TASK + i, n as usize));
        rows.zip(found).map(|(r, h)| (r, G::mesh_hit(h)))
    });
    hit_columns(py, count, G::INSTANCES, listed)
}

/// Rays per task of [`every_hit`].
pub(crate) const HIT_TASK: usize = 256;

/// Every hit of each ray `ray(i)`, `i` in `0..n`, in tasks of [`HIT_TASK`] rays on all
/// cores (call it without the GIL): per task, its rays' hits in order (each ray's by `t`,
/// then instance, then triangle) and how many each ray has. One scratch list per thread:
/// no allocation per ray.
pub(crate) fn every_hit<G: RayCast>(
    g: &G,
    n: usize,
    ray: impl Fn(usize) -> Ray + Sync,
    options: &<G as RayCast>::Options<'_>,
) -> Vec<(Vec<G::Compact>, Vec<u32>)> {
    (0..n.div_ceil(HIT_TASK))
        .into_par_iter()
        .map_init(Vec::new, |scratch, task| {
            let rays = task * HIT_TASK..(n.min((task + 1) * HIT_TASK));
            let (mut found, mut counts) = (Vec::new(), Vec::with_capacity(rays.len()));
            for i in rays {
                g.all_triangles(&ray(i), options, scratch);
                found.extend_from_slice(scratch);
                counts.push(scratch.len() as u32);
            }
            (found, counts)
        })
        .collect()
}

/// `count` hits of many rays as a dict of flat arrays: `ray`, `t`, `instance` (for a
/// scene), `triangle`, `u`, `v`, in the order given.
fn hit_columns<'py>(
    py: Python<'py>,
    count: usize,
    instances: bool,
    hits: impl Iterator<Item = (usize, (Option<InstanceId>, CompactHit))>,
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
    for (r, (id, h)) in hits {
        ray.push(r as i64);
        t.push(h.t);
        if instances {
            instance.push(id.map_or(-1, i64::from));
        }
        triangle.push(i64::from(h.triangle));
        u.push(h.u);
        v.push(h.v);
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

/// `closest_points`: per point, `point` (NaN where nothing is within `max_distance`),
/// `instance` (a scene's, -1), `triangle` (-1), `distance` (inf), `u`, `v`.
pub(crate) fn closest_points<'py, G: Geometry>(
    py: Python<'py>,
    g: &G,
    points: &[[f32; 3]],
    max_distance: f32,
) -> PyResult<Bound<'py, PyDict>> {
    check_distance(max_distance)?;
    let options = <G as PointQuery>::Options::default();
    let found = each_point(py, points, |q| {
        g.closest_point(q, max_distance, &options)
            .map(|c| G::mesh_point(&c))
    });
    closest_columns(py, &found, G::INSTANCES)
}

/// The nearest points as a dict of arrays (see [`closest_points`]).
fn closest_columns<'py>(
    py: Python<'py>,
    found: &[Option<(Option<InstanceId>, ClosestPoint)>],
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

/// `winding_numbers`: the generalized winding number at each point.
pub(crate) fn winding_numbers<G: Geometry>(
    py: Python<'_>,
    g: &G,
    points: &[[f32; 3]],
    accuracy: WindingAccuracy,
) -> Vec<f64> {
    let options = <G as PointQuery>::Options::default();
    each_point(py, points, |q| g.winding_number(q, accuracy, &options))
}

/// How `contains` decides.
#[derive(Clone, Copy)]
pub(crate) enum Inside {
    /// The exact winding number is at least ½.
    Winding,
    /// The parity of a ray's crossings (watertight test), for closed surfaces: the same
    /// answer along two fixed directions in general position, a third breaking a
    /// disagreement.
    Parity,
}

/// `contains`: whether each point is inside.
pub(crate) fn contains<G: Geometry>(
    py: Python<'_>,
    g: &G,
    points: &[[f32; 3]],
    method: Inside,
) -> Vec<bool> {
    let options = <G as PointQuery>::Options::default();
    let crossing = <G as RayCast>::Options::from(QueryOptions {
        culling: Culling::None,
        watertight: true,
    });
    let directions = [
        [0.5773, 0.5774, 0.5773],
        [-0.6001, 0.2673, 0.7539],
        [0.1411, -0.8632, -0.4848],
    ];
    each_point(py, points, |q| match method {
        Inside::Winding => g.contains(q, &options),
        Inside::Parity => {
            let odd = |d: &[f32; 3]| g.count_hits(&Ray::new(q, *d), &crossing) % 2 == 1;
            let (a, b) = (odd(&directions[0]), odd(&directions[1]));
            if a == b { a } else { odd(&directions[2]) }
        }
    })
}

/// `signed_distance`: the distance to the surface, negative inside; NaN where nothing is
/// within `max_distance`.
pub(crate) fn signed_distance<G: Geometry>(
    py: Python<'_>,
    g: &G,
    points: &[[f32; 3]],
    max_distance: f32,
) -> PyResult<Vec<f64>> {
    check_distance(max_distance)?;
    let options = <G as PointQuery>::Options::default();
    Ok(each_point(py, points, |q| {
        g.signed_distance(q, max_distance, &options)
            .unwrap_or(f64::NAN)
    }))
}
