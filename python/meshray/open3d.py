"""Open3D's `RaycastingScene` on meshray: switch by replacing one import.

    >>> import numpy as np
    >>> from meshray.open3d import RaycastingScene   # was: o3d.t.geometry.RaycastingScene
    >>> scene = RaycastingScene()
    >>> vertices = np.array([[0, 0, 0], [2, 0, 0], [0, 2, 0]], dtype=np.float32)
    >>> scene.add_triangles(vertices, np.array([[0, 1, 2]], dtype=np.uint32))
    0
    >>> hits = scene.cast_rays(np.array([[0.5, 0.25, 3, 0, 0, -2]], dtype=np.float32))
    >>> # Open3D tensors where Open3D is installed (as Open3D answers), numpy arrays elsewhere:
    >>> hits = {k: v.numpy() if hasattr(v, "numpy") else v for k, v in hits.items()}
    >>> float(hits["t_hit"][0]), int(hits["primitive_ids"][0]), hits["primitive_uvs"][0].tolist()
    (1.5, 0, [0.25, 0.125])

The same methods, arguments, defaults, result keys and dtypes as Open3D 0.20's
`open3d.t.geometry.RaycastingScene`: `add_triangles`, `cast_rays`, `test_occlusions`,
`count_intersections`, `list_intersections`, `compute_closest_points`, `compute_distance`,
`compute_signed_distance`, `compute_occupancy` and `create_rays_pinhole`. Rays are
`(..., 6)` float32 (origin, direction), points `(..., 3)` float32; results keep the leading
shape. As in Open3D, results are `open3d.core.Tensor`s whatever the input (sharing the
answer's memory), where Open3D is installed; numpy arrays where it is not. A miss is
`t_hit = inf` and `INVALID_ID` in the id arrays, with zero uvs and normals, as in Open3D.
What Open3D refuses (other dtypes, shapes) is refused with a `ValueError` that names the
argument, its dtype and its shape. `add_triangles` takes a mesh as Open3D's does: an
`open3d.t.geometry.TriangleMesh` with float32 positions and indices of any integer type
(converted to uint32), or a legacy `open3d.geometry.TriangleMesh` (converted as
`from_legacy` converts it); indices outside the mesh's vertices (negative ones included)
are refused.

Where the answers differ, meshray's are the exact ones: hits are those of the watertight
triangle test (no ray slips through a shared edge), and occupancy and the sign of the
signed distance come from the winding number (right on open meshes and soups, where
Open3D's ray parity is not); `nsamples` is checked as Open3D checks it (odd, at least 1)
and unused; a negative `tnear` is refused (meshray's rays start at 0 or later). The
geometries are the instances of a meshray `Scene` (one top-level tree over their BVHs); a
lone geometry is queried through its BVH directly. Each query is one call into Rust, which
reads the rays or points where they are (a copy only when they are not C-contiguous) and
writes Open3D's arrays in one pass without the GIL, on `nthreads` threads as Open3D reads
it (0, the default, or less is every core).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import BVH, Mesh, Scene
from ._meshray import open3d as _native

__all__ = ["RaycastingScene"]

INVALID_ID = 4294967295


def _numpy(x):
    """An Open3D tensor (on any device) or vector, or anything numpy takes, as numpy."""
    if hasattr(x, "cpu") and hasattr(x, "numpy"):
        return x.cpu().numpy()
    return np.asarray(x)


_NOT_LOOKED_UP = object()
_open3d_module: Any = _NOT_LOOKED_UP


def _open3d():
    """Open3D's module where it is installed, else None; imported once, on first use."""
    global _open3d_module
    if _open3d_module is _NOT_LOOKED_UP:
        try:
            import open3d

            _open3d_module = open3d
        except ImportError:
            _open3d_module = None
    return _open3d_module


def _mesh_arrays(mesh):
    """An Open3D mesh's vertex positions and triangle indices as Open3D's `add_triangles`
    takes them: an `open3d.t.geometry.TriangleMesh`'s float32 positions (other float types
    refused, as Open3D refuses them) and its indices of any integer type (`create_box` and
    `create_sphere` give int64) as uint32; a legacy mesh's float64 positions and int32
    indices converted as `TriangleMesh.from_legacy` converts them. Indices outside the
    vertices, which converting would wrap, are refused."""
    if hasattr(mesh, "vertex") and hasattr(mesh, "triangle"):
        p, i = _numpy(mesh.vertex.positions), _numpy(mesh.triangle.indices)
        legacy = False
    elif hasattr(mesh, "vertices") and hasattr(mesh, "triangles"):
        p, i = _numpy(mesh.vertices), _numpy(mesh.triangles)
        legacy = True
    else:
        raise ValueError(
            "add_triangles: expected vertex positions and triangle indices, or an "
            "open3d.t.geometry.TriangleMesh (or a legacy open3d.geometry.TriangleMesh)"
        )
    if p.ndim != 2 or p.shape[1] != 3 or not (legacy or p.dtype == np.float32):
        raise ValueError(
            f"add_triangles: the mesh's vertex positions: expected float32 with shape (n, 3), "
            f"got {p.dtype} with shape {p.shape}"
        )
    if i.ndim != 2 or i.shape[1] != 3 or not np.issubdtype(i.dtype, np.integer):
        raise ValueError(
            f"add_triangles: the mesh's triangle indices: expected integers with shape (m, 3), "
            f"got {i.dtype} with shape {i.shape}"
        )
    if i.size and (i.min() < 0 or i.max() >= len(p)):
        raise ValueError(
            f"add_triangles: the mesh's triangle indices must lie in 0..{len(p) - 1} (it has "
            f"{len(p)} vertices), got {i.min()}..{i.max()}"
        )
    return p.astype(np.float32), i.astype(np.uint32)


def _array(x, name, dtype, last):
    """`x` (numpy or an Open3D tensor) as a numpy array of `dtype` whose last axis is
    `last` long; refused otherwise, as Open3D refuses it."""
    a = _numpy(x)
    if a.dtype != np.dtype(dtype) or a.ndim < 1 or a.shape[-1] != last:
        raise ValueError(
            f"{name}: expected {np.dtype(dtype).name} with shape (..., {last}), "
            f"got {a.dtype} with shape {a.shape}"
        )
    return a


def _out(value):
    """An answer as Open3D gives it: tensors where Open3D is installed, else numpy."""
    o3d = _open3d()
    if o3d is None:
        return value
    # from_numpy shares the array's memory: no copy.
    if isinstance(value, dict):
        return {k: o3d.core.Tensor.from_numpy(v) for k, v in value.items()}
    return o3d.core.Tensor.from_numpy(value)


class RaycastingScene:
    """A scene of triangle meshes to cast rays at and measure distances to (Open3D's
    `RaycastingScene`, answered by meshray)."""

    INVALID_ID = INVALID_ID

    def __init__(self, nthreads=0, device=None):
        """An empty scene, or, given a `RaycastingScene` (Open3D's copy constructor), a copy
        of it: the same geometries under the same ids, independent from then on (adding to
        one leaves the other as it was). The trees are shared, not rebuilt: nothing here
        changes a geometry once added."""
        self._scene = Scene()
        self._bvhs = []
        if isinstance(nthreads, RaycastingScene):
            for bvh in nthreads._bvhs:
                self._bvhs.append(bvh)
                self._scene.add(bvh)

    def __copy__(self):
        return RaycastingScene(self)

    def __deepcopy__(self, memo):
        return RaycastingScene(self)

    def add_triangles(self, vertex_positions, triangle_indices=None):
        """Adds a mesh: `(n, 3)` float32 positions and `(m, 3)` uint32 indices (numpy arrays
        or Open3D tensors, as Open3D requires them), or an `open3d.t.geometry.TriangleMesh`
        (float32 positions, indices of any integer type) or a legacy
        `open3d.geometry.TriangleMesh`, converted as Open3D converts them. Returns its
        geometry id (0, 1, ...)."""
        if triangle_indices is None:
            positions, indices = _mesh_arrays(vertex_positions)
        else:
            positions = _array(vertex_positions, "vertex_positions", np.float32, 3)
            indices = _array(triangle_indices, "triangle_indices", np.uint32, 3)
        bvh = BVH(Mesh(positions.reshape(-1, 3), indices.reshape(-1, 3)))
        self._bvhs.append(bvh)
        return self._scene.add(bvh)

    def _target(self):
        """Who answers: a lone geometry's BVH (its queries skip the scene's top-level tree
        and report the normals it keeps per triangle), else the meshray `Scene`."""
        return self._bvhs[0] if len(self._bvhs) == 1 else self._scene

    def _answer(self, query, array, *args):
        """Open3D's answers to `query`, made in one call of the native module (which reads
        the array in place, refuses a wrong dtype or shape naming it, and writes Open3D's
        arrays on `nthreads` threads); tensors out where Open3D is installed, sharing memory."""
        found = query(self._target(), _numpy(array), *args)
        return _out(found)

    def cast_rays(self, rays, nthreads=0):
        """The first hit of each ray: `t_hit` (inf on a miss), `geometry_ids`,
        `primitive_ids` (`INVALID_ID`), `primitive_uvs`, `primitive_normals`."""
        return self._answer(_native.per_primitive, rays, "hits", nthreads)

    def test_occlusions(self, rays, tnear=0.0, tfar=np.inf, nthreads=0):
        """Whether each ray hits anything with `tnear <= t <= tfar` (bool)."""
        return self._answer(_native.per_ray, rays, "occlusions", tnear, tfar, nthreads)

    def count_intersections(self, rays, nthreads=0):
        """How many times each ray crosses the surfaces (int32)."""
        return self._answer(_native.per_ray, rays, "intersections", 0.0, np.inf, nthreads)

    def list_intersections(self, rays, nthreads=0):
        """Every crossing of every ray, nearest first: `ray_splits` (where each ray's
        start, then the total), `ray_ids`, `geometry_ids`, `primitive_ids`,
        `primitive_uvs`, `t_hit`."""
        return self._answer(_native.list_intersections, rays, nthreads)

    def compute_closest_points(self, query_points, nthreads=0):
        """The nearest surface point to each query point: `points`, `geometry_ids`,
        `primitive_ids`, `primitive_uvs`, `primitive_normals`."""
        return self._answer(_native.per_primitive, query_points, "closest_points", nthreads)

    def compute_distance(self, query_points, nthreads=0):
        """The distance from each query point to the nearest surface (float32)."""
        return self._answer(_native.per_point, query_points, "distance", nthreads)

    def compute_occupancy(self, query_points, nthreads=0, nsamples=1):
        """1 inside the meshes, 0 outside (float32), by the exact winding number of all
        geometries together."""
        return self._answer(_native.per_point, query_points, "occupancy", nthreads, nsamples)

    def compute_signed_distance(self, query_points, nthreads=0, nsamples=1):
        """`compute_distance`, negative inside the meshes (float32)."""
        return self._answer(_native.per_point, query_points, "signed_distance", nthreads, nsamples)

    @staticmethod
    def create_rays_pinhole(*args, **kwargs):
        """Camera rays, `(height_px, width_px, 6)` float32, one per pixel centre:
        `create_rays_pinhole(intrinsic_matrix, extrinsic_matrix, width_px, height_px)` (3×3
        intrinsics, 4×4 world-to-camera), or `create_rays_pinhole(fov_deg, center, eye, up,
        width_px, height_px)` (horizontal field of view in degrees), as Open3D makes them
        (directions not normalized: unit depth along the view axis)."""
        names_k = ("intrinsic_matrix", "extrinsic_matrix", "width_px", "height_px")
        names_f = ("fov_deg", "center", "eye", "up", "width_px", "height_px")
        values = list(args)
        by_fov = len(args) == 6 or "fov_deg" in kwargs
        for name in (names_f if by_fov else names_k)[len(args):]:
            if name not in kwargs:
                raise TypeError(f"create_rays_pinhole: missing argument {name!r}")
            values.append(kwargs[name])
        numpy = lambda v: np.asarray(_numpy(v), np.float64)  # noqa: E731
        if by_fov:
            fov, center, eye, up, width, height = values
            eye, center, up = numpy(eye), numpy(center), numpy(up)
            focal = 0.5 * width / np.tan(np.radians(float(fov)) / 2)
            intrinsic = np.array([[focal, 0, width / 2], [0, focal, height / 2], [0, 0, 1]])
            forward = (center - eye) / np.linalg.norm(center - eye)
            # Open3D's look-at: the camera's x axis is up × forward, its y forward × x.
            x_axis = np.cross(up, forward)
            x_axis /= np.linalg.norm(x_axis)
            y_axis = np.cross(forward, x_axis)
            rotation = np.stack([x_axis, y_axis, forward])  # world to camera, by rows
            origin = eye
        else:
            intrinsic, extrinsic, width, height = values
            intrinsic, extrinsic = numpy(intrinsic), numpy(extrinsic)
            rotation = extrinsic[:3, :3]
            origin = -rotation.T @ extrinsic[:3, 3]
        columns, rows = np.meshgrid(np.arange(int(width)) + 0.5, np.arange(int(height)) + 0.5)
        pixels = np.stack([columns, rows, np.ones_like(columns)], axis=-1)
        camera = pixels @ np.linalg.inv(intrinsic).T
        directions = camera @ rotation
        rays = np.concatenate([np.broadcast_to(origin, directions.shape), directions], axis=-1)
        return _out(rays.astype(np.float32))
