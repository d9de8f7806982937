"""Sweeps and overlaps from Python (`BVH.cast_spheres`, `Scene.cast_spheres`,
`BVH.intersecting_triangles`, `BVH.self_intersections`): a sphere or capsule moving along
each ray stops where a float64 brute force over every triangle says it first touches (the
Rust tests compare with an exact brute force; here: at the reported `t` the shape is its
radius from the nearest triangle, and at earlier times along the path it is farther), a
zero radius is a ray, a scene answers as its meshes, and bad shapes are refused; the
overlap pairs come as the binding promises."""

import numpy as np
import pytest

import meshray
from test_meshray import ASSET, point_triangle_distance, random_rays


def corners(mesh):
    v, f = mesh.vertices.astype(np.float64), mesh.faces
    return v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]


def nearest(p, tris):
    """The distance from point p to the nearest triangle."""
    a, b, c = tris
    return point_triangle_distance(np.broadcast_to(p, a.shape), a, b, c).min()


def test_spheres_stop_where_they_first_touch():
    mesh = meshray.Mesh.load(ASSET)
    bvh = meshray.BVH(mesh)
    tris = corners(mesh)
    o, d = random_rays(mesh.vertices, 120, np.random.default_rng(5))
    radius = 0.2
    got = bvh.cast_spheres(o, d, radius)
    assert set(got) == {"t", "triangle", "point", "normal", "u", "v"}
    hit = np.isfinite(got["t"])
    assert 30 < hit.sum() < 120
    o64, d64 = o.astype(np.float64), d.astype(np.float64)
    for i in range(len(o)):
        # Earlier along the path (sampled), the sphere is clear of every triangle.
        end = got["t"][i] if hit[i] else 3.0
        for s in np.linspace(0, 1, 25)[:-1]:
            assert nearest(o64[i] + s * end * d64[i], tris) > radius * (1 - 1e-4), i
        if not hit[i]:
            assert got["triangle"][i] == -1 and np.isnan(got["point"][i]).all()
            continue
        centre = o64[i] + got["t"][i] * d64[i]
        assert abs(nearest(centre, tris) - radius) <= 1e-4 * radius, i
        # The contact: on its triangle, the radius from the centre, the normal towards it.
        a, b, c = (x[got["triangle"][i]] for x in tris)
        assert point_triangle_distance(got["point"][i][None].astype(np.float64), a[None], b[None], c[None])[0] < 1e-5
        np.testing.assert_allclose(np.linalg.norm(centre - got["point"][i]), radius, rtol=1e-4)
        np.testing.assert_allclose(got["normal"][i], (centre - got["point"][i]) / radius, atol=1e-4)


def test_a_zero_radius_is_a_ray_and_a_capsule_reaches_further():
    mesh = meshray.Mesh.load(ASSET)
    bvh = meshray.BVH(mesh)
    o, d = random_rays(mesh.vertices, 200, np.random.default_rng(6))
    ray = bvh.cast(o, d)
    ball = bvh.cast_spheres(o, d, 0.0)
    np.testing.assert_array_equal(ball["t"], ray["t"])
    np.testing.assert_array_equal(ball["triangle"], ray["triangle"])
    # A capsule whose axis sticks out ahead of the centre touches no later than its sphere.
    sphere = bvh.cast_spheres(o, d, 0.1)
    capsule = bvh.cast_spheres(o, d, 0.1, axis=(0.0, 0.5, 0.0))
    assert np.all(capsule["t"] <= sphere["t"])
    assert np.any(capsule["t"] < sphere["t"])


def test_a_scene_answers_as_its_meshes():
    mesh = meshray.Mesh.load(ASSET)
    bvh = meshray.BVH(mesh)
    scene = meshray.Scene()
    scene.add(bvh, np.eye(4, dtype=np.float32))
    o, d = random_rays(mesh.vertices, 200, np.random.default_rng(7))
    a = bvh.cast_spheres(o, d, 0.05, cull="back")
    b = scene.cast_spheres(o, d, 0.05, cull="back")
    np.testing.assert_array_equal(a["t"], b["t"])
    np.testing.assert_array_equal(a["triangle"], b["triangle"])
    assert np.all(b["instance"][np.isfinite(b["t"])] == 0)
    assert np.all(b["instance"][~np.isfinite(b["t"])] == -1)


def test_bad_shapes_and_arguments_are_refused():
    bvh = meshray.BVH(meshray.Mesh.load(ASSET))
    o = np.zeros((2, 3), np.float32)
    d = np.ones((2, 3), np.float32)
    for radius in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="radius"):
            bvh.cast_spheres(o, d, radius)
    with pytest.raises(ValueError, match="axis"):
        bvh.cast_spheres(o, d, 0.1, axis=(float("nan"), 0, 0))
    with pytest.raises(ValueError, match="directions"):
        bvh.cast_spheres(o, d[:1], 0.1)
    with pytest.raises(TypeError, match="cast_spheres"):
        bvh.cast_spheres(o, d, 0.1, radius_scale=2)
    # NaN and zero rays touch nothing.
    bad = bvh.cast_spheres(np.array([[np.nan, 0, 0], [0, 5, 0]], np.float32), np.array([[0, -1, 0], [0, 0, 0]], np.float32), 0.1)
    assert np.all(np.isinf(bad["t"])) and np.all(bad["triangle"] == -1)


def test_intersecting_triangles_and_self_intersections():
    mesh = meshray.Mesh.load(ASSET)
    bvh = meshray.BVH(mesh)
    raised = np.eye(4, dtype=np.float32)
    raised[1, 3] = 1.5
    pairs = bvh.intersecting_triangles(bvh, raised)
    assert pairs.dtype == np.int64 and pairs.ndim == 2 and pairs.shape[1] == 2 and len(pairs) > 50
    assert np.all(np.diff(pairs[:, 0]) >= 0)
    # Each reported pair's boxes overlap (the Rust tests check every pair exactly).
    tris = corners(mesh)
    moved = tuple(x + np.array([0, 1.5, 0]) for x in tris)
    for i, j in pairs[:: max(1, len(pairs) // 40)]:
        a = [x[i] for x in tris]
        b = [x[j] for x in moved]
        # The two triangles' boxes overlap.
        lo = np.maximum(np.min(a, axis=0), np.min(b, axis=0))
        hi = np.minimum(np.max(a, axis=0), np.max(b, axis=0))
        assert np.all(lo <= hi + 1e-9)
    far = np.eye(4, dtype=np.float32)
    far[0, 3] = 100
    assert bvh.intersecting_triangles(bvh, far).shape == (0, 2)
    assert bvh.intersects(bvh, raised) and not bvh.intersects(bvh, far)
    with pytest.raises(meshray.MeshrayError, match="transform"):
        bvh.intersecting_triangles(bvh, np.zeros((4, 4), np.float32))
    # The scene's box and cone stand on the ground: they meet it; pairs are i < j.
    own = bvh.self_intersections()
    assert len(own) > 0 and np.all(own[:, 0] < own[:, 1])


def test_a_scenes_overlaps_are_its_meshes_placed():
    mesh = meshray.Mesh.load(ASSET)
    bvh = meshray.BVH(mesh)
    raised = np.eye(4, dtype=np.float32)
    raised[1, 3] = 1.5
    scene = meshray.Scene()
    first = scene.add(bvh, np.eye(4, dtype=np.float32))
    second = scene.add(bvh, raised)
    far = np.eye(4, dtype=np.float32)
    far[0, 3] = 100
    scene.add(bvh, far)
    # One scene's instances: each mesh's own pairs, and the raised copy against the first
    # exactly as the two meshes placed so.
    own = scene.self_intersections()
    assert own.dtype == np.int64 and own.shape[1] == 4
    across = own[own[:, 0] != own[:, 2]]
    np.testing.assert_array_equal(across[:, [0, 2]], [[first, second]] * len(across))
    np.testing.assert_array_equal(across[:, [1, 3]], bvh.intersecting_triangles(bvh, raised))
    for i in range(3):
        inside = own[(own[:, 0] == i) & (own[:, 2] == i)]
        np.testing.assert_array_equal(inside[:, [1, 3]], bvh.self_intersections())
    # Against another scene placed by a transform.
    other = meshray.Scene()
    other.add(bvh, np.eye(4, dtype=np.float32))
    pairs = scene.intersecting_triangles(other, raised)
    assert pairs.shape[1] == 4
    np.testing.assert_array_equal(
        pairs[pairs[:, 0] == first][:, [1, 3]], bvh.intersecting_triangles(bvh, raised)
    )
    assert scene.intersecting_triangles(other, far).shape[1] == 4
    with pytest.raises(TypeError, match="same kind"):
        scene.intersecting_triangles(bvh)
    with pytest.raises(TypeError, match="same kind"):
        bvh.intersects(scene)
    assert scene.intersects(other, raised)
    far_away = np.eye(4, dtype=np.float32)
    far_away[0, 3] = 1000
    assert not scene.intersects(other, far_away)
    with pytest.raises(meshray.MeshrayError, match="transform"):
        scene.intersecting_triangles(other, np.zeros((4, 4), np.float32))
