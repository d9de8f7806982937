"""`meshray.open3d.RaycastingScene` against Open3D's own `RaycastingScene` (when Open3D is
installed; skipped otherwise): the same keys, dtypes and shapes, and the same answers on the
shared meshes and random rays and points, one geometry alone and two in one scene. Ties (a ray through
an edge or between coplanar triangles) may name another triangle at the same distance.
Occupancy and the sign of the signed distance are compared with Open3D's where its ray
parity is right (away from the open bunny), with the exact winding number elsewhere; the bad-input cases are refused as Open3D refuses them."""

import numpy as np
import pytest

import meshray
from meshray.open3d import INVALID_ID, RaycastingScene

from test_meshray import cramer, point_triangle_distance, random_rays, shared

o3d = pytest.importorskip("open3d")


def as_numpy(x):
    """An answer of the drop-in (an Open3D tensor, as Open3D's are) as numpy."""
    return x.numpy() if isinstance(x, o3d.core.Tensor) else x


class Numpy:
    """meshray's scene with its answers read as numpy, for comparing them element by
    element; `.scene` is the scene itself."""

    def __init__(self, scene):
        self.scene = scene

    def __getattr__(self, name):
        method = getattr(self.scene, name)

        def call(*args, **kwargs):
            out = method(*args, **kwargs)
            if isinstance(out, dict):
                return {key: as_numpy(value) for key, value in out.items()}
            return as_numpy(out)

        return call


def scenes(paths):
    """The same meshes in Open3D's scene and in meshray's (its answers read as numpy:
    `Numpy`): the first as it is, the next ones moved along x by 1.2 widths each (so they
    overlap no ray's answer by accident)."""
    ours, theirs = RaycastingScene(), o3d.t.geometry.RaycastingScene()
    meshes = []
    for k, path in enumerate(paths):
        mesh = o3d.t.io.read_triangle_mesh(str(path))
        vertices = mesh.vertex.positions.numpy().astype(np.float32)
        width = vertices[:, 0].max() - vertices[:, 0].min()
        vertices = vertices + np.float32(1.2 * k * width) * np.array([1, 0, 0], np.float32)
        faces = mesh.triangle.indices.numpy().astype(np.uint32)
        assert ours.add_triangles(vertices, faces) == theirs.add_triangles(
            o3d.core.Tensor(vertices), o3d.core.Tensor(faces)
        )
        meshes.append((vertices, faces))
    return Numpy(ours), theirs, meshes


def f64_t(meshes, geometry, triangle, origins, directions):
    """Each ray's distance to the given triangle, in float64 (inf when it misses)."""
    out = np.full(len(origins), np.inf)
    for g, (vertices, faces) in enumerate(meshes):
        rows = np.flatnonzero(geometry == g)
        a, b, c = (vertices[faces[triangle[rows]]][:, k].astype(np.float64) for k in range(3))
        o, d = origins[rows].astype(np.float64), directions[rows].astype(np.float64)
        _, _, t = cramer(o, d, a, b, c)
        out[rows] = t
    return out


@pytest.fixture(scope="module", params=[1, 2], ids=["one geometry", "two geometries"])
def meshes_in_scene(request):
    """The armadillo alone (the drop-in asks its BVH), or the armadillo and the bunny (the
    drop-in asks a meshray Scene)."""
    names = ["armadillo/armadillo.obj", "stanford-bunny/stanford-bunny.obj"]
    return scenes([shared(name) for name in names[: request.param]])


def is_closed(faces):
    """Whether every edge is shared by exactly two triangles (the bunny's base is open)."""
    f = faces.astype(np.int64)
    edges = np.sort(np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]]), axis=1)
    return bool((np.unique(edges, axis=0, return_counts=True)[1] == 2).all())


def test_cast_rays_equals_open3d(meshes_in_scene):
    ours, theirs, meshes = meshes_in_scene
    lo = np.min([v.min(0) for v, _ in meshes], axis=0)
    hi = np.max([v.max(0) for v, _ in meshes], axis=0)
    rng = np.random.default_rng(3)
    origins, directions = random_rays(np.stack([lo, hi]), 20_000, rng)
    rays = np.concatenate([origins, directions], axis=1)
    got, want = ours.cast_rays(rays), {k: v.numpy() for k, v in theirs.cast_rays(o3d.core.Tensor(rays)).items()}
    assert set(got) == set(want)
    for key in want:
        assert got[key].dtype == want[key].dtype and got[key].shape == want[key].shape, key
    hit = np.isfinite(want["t_hit"])
    assert (np.isfinite(got["t_hit"]) == hit).mean() > 0.999
    both = hit & np.isfinite(got["t_hit"])
    np.testing.assert_allclose(got["t_hit"][both], want["t_hit"][both], rtol=1e-4)
    same = both & (got["primitive_ids"] == want["primitive_ids"]) & (got["geometry_ids"] == want["geometry_ids"])
    # Another triangle only at a tie: Open3D's triangle is as near, in float64.
    other = both & ~same
    t_theirs = f64_t(meshes, want["geometry_ids"][other], want["primitive_ids"][other], origins[other], directions[other])
    np.testing.assert_allclose(t_theirs, got["t_hit"][other], rtol=1e-4)
    assert other.mean() < 0.01, other.mean()
    np.testing.assert_allclose(got["primitive_uvs"][same], want["primitive_uvs"][same], atol=1e-3)
    np.testing.assert_allclose(got["primitive_normals"][same], want["primitive_normals"][same], atol=1e-4)
    miss = ~np.isfinite(got["t_hit"])
    assert (got["geometry_ids"][miss] == INVALID_ID).all() and (got["primitive_ids"][miss] == INVALID_ID).all()
    assert (got["primitive_uvs"][miss] == 0).all() and (got["primitive_normals"][miss] == 0).all()
    # Tensors out, whatever goes in (numpy here, as Open3D answers it); the leading shape kept.
    grid = ours.scene.cast_rays(rays[:24].reshape(4, 6, 6))
    assert isinstance(grid["t_hit"], o3d.core.Tensor) and tuple(grid["primitive_uvs"].shape) == (4, 6, 2)
    np.testing.assert_array_equal(grid["t_hit"].numpy().ravel(), got["t_hit"][:24])


def test_occlusions_and_intersections_equal_open3d(meshes_in_scene):
    ours, theirs, meshes = meshes_in_scene
    vertices = np.concatenate([v for v, _ in meshes])
    origins, directions = random_rays(vertices, 5_000, np.random.default_rng(4))
    rays = np.concatenate([origins, directions], axis=1)
    tensor = o3d.core.Tensor(rays)
    for tnear, tfar in [(0.0, np.inf), (0.3, 0.6)]:
        got = ours.test_occlusions(rays, tnear=tnear, tfar=tfar)
        want = theirs.test_occlusions(tensor, tnear=tnear, tfar=tfar).numpy()
        assert got.dtype == want.dtype and (got == want).mean() > 0.999
    got, want = ours.count_intersections(rays), theirs.count_intersections(tensor).numpy()
    assert got.dtype == want.dtype and (got == want).mean() > 0.995
    listed = ours.list_intersections(rays)
    theirs_listed = {k: v.numpy() for k, v in theirs.list_intersections(tensor).items()}
    for key, value in theirs_listed.items():
        assert listed[key].dtype == value.dtype, key
    splits = listed["ray_splits"]
    np.testing.assert_array_equal(np.diff(splits), got)
    # Per ray, nearest first, the same distances where the counts agree.
    for r in np.flatnonzero(got == want)[:500]:
        mine = listed["t_hit"][splits[r] : splits[r + 1]]
        other = theirs_listed["t_hit"][theirs_listed["ray_splits"][r] : theirs_listed["ray_splits"][r + 1]]
        assert (np.diff(mine) >= 0).all()
        np.testing.assert_allclose(mine, np.sort(other), rtol=1e-4)
        assert (listed["ray_ids"][splits[r] : splits[r + 1]] == r).all()


def test_distances_occupancy_and_signed_distance_equal_open3d(meshes_in_scene):
    ours, theirs, meshes = meshes_in_scene
    vertices = np.concatenate([v for v, _ in meshes])
    lo, hi = vertices.min(0), vertices.max(0)
    points = (lo + (hi - lo) * np.random.default_rng(5).random((3_000, 3))).astype(np.float32)
    tensor = o3d.core.Tensor(points)
    got, want = ours.compute_closest_points(points), {
        k: v.numpy() for k, v in theirs.compute_closest_points(tensor).items()
    }
    assert set(got) == set(want)
    for key in want:
        assert got[key].dtype == want[key].dtype and got[key].shape == want[key].shape, key
    distance = ours.compute_distance(points)
    # Open3D's distances are float32 differences of coordinates (up to `scale`): off by a few
    # of their ulps. Where the two differ by more than a rounding, meshray's equals a float64
    # brute force over every triangle.
    scale = np.abs(vertices).max()
    theirs_distance = theirs.compute_distance(tensor).numpy()
    np.testing.assert_allclose(distance, theirs_distance, rtol=1e-4, atol=4e-7 * scale)
    for i in np.flatnonzero(~np.isclose(distance, theirs_distance, rtol=1e-5, atol=1e-6))[:50]:
        exact = min(
            point_triangle_distance(
                np.repeat(points[i : i + 1].astype(np.float64), len(f), axis=0),
                *(v.astype(np.float64)[f[:, k]] for k in range(3)),
            ).min()
            for v, f in meshes
        )
        assert abs(distance[i] - exact) <= 1e-6 * max(exact, 1), (i, distance[i], exact, theirs_distance[i])
    np.testing.assert_allclose(np.linalg.norm(got["points"] - points, axis=1), distance, rtol=1e-4, atol=4e-7 * scale)
    # The nearest point is often a vertex or an edge shared by several triangles, so the
    # triangle named may differ; the point itself may not, but at a tie: two points of the
    # surface as near, within rounding (about 1 % of these points, far from a curved mesh).
    near = np.linalg.norm(got["points"] - want["points"], axis=1) <= 1e-6 * scale
    theirs_near = np.linalg.norm(want["points"].astype(np.float64) - points, axis=1)
    assert (near | np.isclose(theirs_near, distance, rtol=0, atol=4e-7 * scale)).all()
    assert near.mean() > 0.98, near.mean()
    mine = point_triangle_distance(
        points.astype(np.float64),
        *(
            np.stack([meshes[g][0][meshes[g][1][t, k]] for g, t in zip(got["geometry_ids"], got["primitive_ids"])]).astype(np.float64)
            for k in range(3)
        ),
    )
    np.testing.assert_allclose(mine, distance, rtol=1e-5, atol=1e-6)  # the triangle named is that near
    # Open3D's occupancy is the parity of a ray's crossings: right where the point is
    # outside the box of every open mesh (the bunny's), compared there. Inside an open
    # mesh's box meshray's is the exact winding number's (Open3D's is wrong at a few points,
    # some with a winding number of 0: their ray leaves through the hole).
    occupancy = ours.compute_occupancy(points)
    assert occupancy.dtype == np.float32
    near_open = np.zeros(len(points), bool)
    for v, f in meshes:
        if not is_closed(f):
            near_open |= ((points >= v.min(0)) & (points <= v.max(0))).all(axis=1)
    assert near_open.sum() < len(points) / 2
    theirs_occupancy = theirs.compute_occupancy(tensor).numpy()
    np.testing.assert_array_equal(occupancy[~near_open], theirs_occupancy[~near_open])
    winding = sum(
        meshray.BVH(meshray.Mesh(v, f)).winding_numbers(points[near_open], exact=True) for v, f in meshes
    )
    np.testing.assert_array_equal(occupancy[near_open], winding >= 0.5)
    signed = ours.compute_signed_distance(points)
    theirs_signed = theirs.compute_signed_distance(tensor).numpy()
    np.testing.assert_allclose(np.abs(signed), np.abs(theirs_signed), rtol=1e-4, atol=4e-7 * scale)
    np.testing.assert_array_equal(signed[~near_open] < 0, theirs_signed[~near_open] < 0)
    np.testing.assert_array_equal(signed < 0, occupancy == 1)


def test_rays_pinhole_equal_open3d():
    intrinsic = np.array([[100, 0, 32], [0, 120, 24], [0, 0, 1]], np.float64)
    extrinsic = np.array([[0.8, -0.6, 0, 0.1], [0.6, 0.8, 0, 0.2], [0, 0, 1, 3], [0, 0, 0, 1]])
    for args in [
        (o3d.core.Tensor(intrinsic), o3d.core.Tensor(extrinsic), 64, 48),
        (60.0, o3d.core.Tensor([0.3, 0.1, 0.0]), o3d.core.Tensor([1.0, 2.0, 5.0]), o3d.core.Tensor([0, 0.2, 1.0]), 64, 48),
    ]:
        want = o3d.t.geometry.RaycastingScene.create_rays_pinhole(*args).numpy()
        got = RaycastingScene.create_rays_pinhole(*args)
        assert isinstance(got, o3d.core.Tensor)
        np.testing.assert_allclose(got.numpy(), want, atol=1e-5)
    plain = RaycastingScene.create_rays_pinhole(intrinsic, extrinsic, 64, 48)
    assert isinstance(plain, o3d.core.Tensor) and tuple(plain.shape) == (48, 64, 6)
    assert plain.dtype == o3d.core.float32


def test_what_open3d_refuses_is_refused():
    scene = RaycastingScene()
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    for bad_vertices, bad_faces, words in [
        (vertices.astype(np.float64), np.array([[0, 1, 2]], np.uint32), "vertex_positions: expected float32"),
        (vertices, np.array([[0, 1, 2]], np.int64), "triangle_indices: expected uint32"),
        (vertices[:, :2], np.array([[0, 1, 2]], np.uint32), r"shape \(\.\.\., 3\)"),
    ]:
        with pytest.raises(ValueError, match=words):
            scene.add_triangles(bad_vertices, bad_faces)
        with pytest.raises(Exception):
            o3d.t.geometry.RaycastingScene().add_triangles(o3d.core.Tensor(bad_vertices), o3d.core.Tensor(bad_faces))
    scene.add_triangles(vertices, np.array([[0, 1, 2]], np.uint32))
    for bad in (np.zeros((2, 6), np.float64), np.zeros((2, 5), np.float32)):
        with pytest.raises(ValueError, match="rays: expected float32 with shape"):
            scene.cast_rays(bad)
    with pytest.raises(ValueError, match="query_points"):
        scene.compute_distance(np.zeros((2, 3), np.float64))


def test_threads_layouts_and_tensors():
    """`nthreads` as Open3D reads it (0 or less: every core; n: n threads; the same
    answers), strided rays and points read as they lie, the leading shape kept, tensors out
    sharing the answers' memory; what Open3D refuses of `nsamples` (even, or below 1)
    refused naming it, and a negative `tnear` (which meshray's rays do not take)."""
    ours, _, meshes = scenes([shared("stanford-bunny/stanford-bunny.obj")])
    origins, directions = random_rays(meshes[0][0], 4_000, np.random.default_rng(6))
    rays = np.concatenate([origins, directions], axis=1)
    points = origins + 0.3 * directions
    everyone = ours.cast_rays(rays)
    for nthreads in (1, 2, 0, -1):
        for key, value in ours.cast_rays(rays, nthreads=nthreads).items():
            np.testing.assert_array_equal(value, everyone[key], err_msg=f"{key}, nthreads={nthreads}")
        np.testing.assert_array_equal(
            ours.count_intersections(rays, nthreads=nthreads), ours.count_intersections(rays)
        )
        np.testing.assert_array_equal(
            ours.compute_signed_distance(points, nthreads=nthreads), ours.compute_signed_distance(points)
        )
    # Every other ray of a Fortran-ordered copy, shaped (40, 50, 6): the same answers.
    strided = np.asfortranarray(np.repeat(rays, 2, axis=0))[::2].reshape(40, 100, 6)[:, ::2]
    assert not strided.flags.c_contiguous
    picked = rays.reshape(40, 100, 6)[:, ::2]
    got = ours.cast_rays(strided)
    assert got["t_hit"].shape == (40, 50) and got["primitive_normals"].shape == (40, 50, 3)
    np.testing.assert_array_equal(got["t_hit"], everyone["t_hit"].reshape(40, 100)[:, ::2])
    np.testing.assert_array_equal(ours.test_occlusions(strided), np.isfinite(got["t_hit"]))
    listed = ours.list_intersections(picked)
    assert listed["ray_splits"].shape == (2001,) and listed["primitive_uvs"].shape[1:] == (2,)
    near = ours.compute_closest_points(points[::2])
    np.testing.assert_array_equal(near["points"], ours.compute_closest_points(points)["points"][::2])
    # Tensors out, from tensors or numpy in (as Open3D answers), with the same answers.
    tensor = ours.scene.cast_rays(o3d.core.Tensor(rays))
    np.testing.assert_array_equal(tensor["t_hit"].numpy(), everyone["t_hit"])
    for given in (o3d.core.Tensor(points), points):
        assert isinstance(ours.scene.compute_occupancy(given, nsamples=3), o3d.core.Tensor)
    with pytest.raises(ValueError, match="tnear"):
        ours.test_occlusions(rays, tnear=-1.0)
    for nsamples in (0, 2, -1):
        with pytest.raises(ValueError, match="nsamples"):
            ours.compute_occupancy(points, nsamples=nsamples)
        with pytest.raises(RuntimeError):
            o3d.t.geometry.RaycastingScene().compute_occupancy(o3d.core.Tensor(points), nsamples=nsamples)


def test_open3d_meshes_are_added_as_open3d_adds_them():
    """`add_triangles(mesh)` with Open3D's own meshes: `create_box` and `create_sphere`
    (int64 indices), int32 indices, a legacy mesh; the answers Open3D's tests expect of the
    cube (away from its faces' diagonals); what Open3D refuses (float64 positions) refused;
    indices outside the vertices refused."""
    rays = np.array([[0.25, 0.5, -1, 0, 0, 1], [0.25, 0.5, 0.5, 0, 0, 1], [10, 10, 10, 1, 0, 0]], np.float32)
    box = o3d.t.geometry.TriangleMesh.create_box()
    assert box.triangle.indices.dtype == o3d.core.int64
    for mesh in (
        box,
        o3d.t.geometry.TriangleMesh.create_box(int_dtype=o3d.core.int32),
        o3d.geometry.TriangleMesh.create_box(),
    ):
        scene, theirs = RaycastingScene(), o3d.t.geometry.RaycastingScene()
        assert scene.add_triangles(mesh) == 0
        theirs.add_triangles(mesh if hasattr(mesh, "vertex") else o3d.t.geometry.TriangleMesh.from_legacy(mesh))
        got = scene.count_intersections(rays)
        assert isinstance(got, o3d.core.Tensor)
        np.testing.assert_array_equal(got.numpy(), [2, 1, 0])
        np.testing.assert_array_equal(got.numpy(), theirs.count_intersections(o3d.core.Tensor(rays)).numpy())
    sphere = RaycastingScene()
    sphere.add_triangles(o3d.t.geometry.TriangleMesh.create_sphere(0.8))
    np.testing.assert_array_equal(
        sphere.compute_occupancy(np.array([[0, 0, 0], [1, 1, 1]], np.float32)).numpy(), [1, 0]
    )
    wide = o3d.t.geometry.TriangleMesh.create_box(float_dtype=o3d.core.float64)
    with pytest.raises(ValueError, match="vertex positions: expected float32"):
        RaycastingScene().add_triangles(wide)
    with pytest.raises(RuntimeError):
        o3d.t.geometry.RaycastingScene().add_triangles(wide)
    for bad in (-1, 8):
        broken = o3d.t.geometry.TriangleMesh.create_box()
        indices = broken.triangle.indices.numpy().copy()
        indices[3, 1] = bad
        broken.triangle.indices = o3d.core.Tensor(indices)
        with pytest.raises(ValueError, match="triangle indices must lie in 0..7"):
            RaycastingScene().add_triangles(broken)
