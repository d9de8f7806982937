"""The trimesh adapter against trimesh's own ray intersector (pure numpy), and building from
trimesh and Open3D meshes, where those are installed."""

import numpy as np
import pytest

import meshray

trimesh = pytest.importorskip("trimesh")
import meshray.trimesh  # noqa: E402

from test_meshray import ASSET, brute_force, random_rays, uv_sphere  # noqa: E402


def scene():
    m = meshray.Mesh.load(ASSET)
    return trimesh.Trimesh(m.vertices, m.faces, process=False)


def test_from_trimesh_keeps_vertices_and_faces():
    tm = scene()
    mesh = meshray.from_trimesh(tm)
    np.testing.assert_array_equal(mesh.faces, tm.faces)
    np.testing.assert_array_equal(mesh.vertices, tm.vertices.astype(np.float32))


def test_adapter_answers_as_trimesh_does():
    tm = scene()
    ours = meshray.trimesh.RayMeshIntersector(tm)
    theirs = trimesh.ray.ray_triangle.RayMeshIntersector(tm)
    origins, directions = random_rays(tm.vertices, 400, np.random.default_rng(8))
    _, _, near_edge = brute_force(tm.vertices, tm.faces, origins, directions)
    clear = ~near_edge
    first = ours.intersects_first(origins, directions)
    their_first = theirs.intersects_first(origins, directions)
    # Where the first triangles differ, both are hit at the same t: a tie of coplanar
    # triangles (the asset scene's boxes stand on its ground), which trimesh breaks its way.
    for i in np.flatnonzero(clear & (first != their_first)):
        t = [
            brute_force(tm.vertices, tm.faces[[k]], origins[[i]], directions[[i]])[0][0]
            for k in (first[i], their_first[i])
        ]
        assert min(first[i], their_first[i]) >= 0 and abs(t[0] - t[1]) <= 1e-6 * t[1], f"ray {i}"
    assert (clear & (first != their_first)).sum() <= 0.05 * len(first)
    anyhit = ours.intersects_any(origins, directions)
    np.testing.assert_array_equal(anyhit, first >= 0)
    # Every hit of every ray: the same places on the same rays (one per place, as trimesh
    # reports them), each on a triangle trimesh also hits there.
    loc, ray, tri = ours.intersects_location(origins, directions)
    t_loc, t_ray, t_tri = theirs.intersects_location(origins, directions)
    mine = sorted((r, *np.round(p, 3)) for r, p in zip(ray, loc) if clear[r])
    want = sorted((r, *np.round(p, 3)) for r, p in zip(t_ray, t_loc) if clear[r])
    assert len(mine) == len(want) and len(mine) > 200
    np.testing.assert_allclose(np.array(mine), np.array(want), atol=2e-3)
    their_pairs = set(zip(t_ray, t_tri))
    for r, t in zip(ray, tri):
        if clear[r] and (r, t) not in their_pairs:
            other = [k for rr, k in their_pairs if rr == r]
            t_mine = brute_force(tm.vertices, tm.faces[[t]], origins[[r]], directions[[r]])[0][0]
            t_all = np.array(
                [brute_force(tm.vertices, tm.faces[[k]], origins[[r]], directions[[r]])[0][0] for k in other]
            )
            assert np.isfinite(t_mine) and np.any(np.abs(t_all - t_mine) <= 1e-6 * t_mine)
    # Nearest first, and capped.
    _, capped_ray = ours.intersects_id(origins, directions, max_hits=1)
    assert len(capped_ray) == len(np.unique(ray))
    tri1, ray1 = ours.intersects_id(origins, directions, multiple_hits=False)
    np.testing.assert_array_equal(tri1, first[ray1])


def test_one_line_switch_and_contains():
    v = uv_sphere()
    tm = trimesh.Trimesh(v.vertices, v.faces, process=False)
    tm.ray = meshray.trimesh.RayMeshIntersector(tm)
    points = np.random.default_rng(9).uniform(-1.2, 1.2, size=(500, 3))
    r = np.linalg.norm(points, axis=1)
    clear = (r < 0.98) | (r > 1.01)
    np.testing.assert_array_equal(tm.ray.contains_points(points)[clear], r[clear] < 1)
    locations, index_ray, index_tri = tm.ray.intersects_location([[0, 0, 5]], [[0, 0, -1]])
    assert sorted(np.round(locations[:, 2], 2)) == [-1.0, 1.0] and set(index_ray) == {0}


def test_from_open3d():
    o3d = pytest.importorskip("open3d")
    tm = scene()
    legacy = o3d.geometry.TriangleMesh(
        o3d.utility.Vector3dVector(tm.vertices), o3d.utility.Vector3iVector(tm.faces)
    )
    for mesh in [legacy, o3d.t.geometry.TriangleMesh.from_legacy(legacy)]:
        np.testing.assert_array_equal(meshray.from_open3d(mesh).faces, tm.faces)
