"""meshray.Scene from Python: instances placed by transforms, every query against a float64
brute force over the instances' triangles moved to world space; edits; bad input."""

import threading

import numpy as np
import pytest

import meshray
from test_meshray import ASSET, cramer, point_triangle_distance, random_rays, uv_sphere


def placement(angle, axis, scale, offset):
    """A row-major 4 x 4 transform: rotation about `axis`, uniform or per-axis `scale`,
    then `offset`."""
    axis = np.asarray(axis, np.float64) / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    rotation = np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k
    m = np.eye(4)
    m[:3, :3] = rotation @ np.diag(np.broadcast_to(scale, 3))
    m[:3, 3] = offset
    return m.astype(np.float32)


def world_triangles(meshes, transforms):
    """Every instance's triangles in world space (float64), and each one's instance and
    triangle number."""
    corners, instance, triangle = [], [], []
    for k, (mesh, m) in enumerate(zip(meshes, transforms)):
        v = mesh.vertices.astype(np.float64) @ m[:3, :3].astype(np.float64).T + m[:3, 3]
        corners.append(v[mesh.faces])
        instance.append(np.full(len(mesh.faces), k))
        triangle.append(np.arange(len(mesh.faces)))
    corners = np.concatenate(corners)
    return corners[:, 0], corners[:, 1], corners[:, 2], np.concatenate(instance), np.concatenate(triangle)


@pytest.fixture(scope="module")
def placed():
    """The asset scene twice (turned, stretched, moved) and a sphere: a Scene of three
    instances, and the brute force's world triangles."""
    scene_mesh, sphere = meshray.Mesh.load(ASSET), uv_sphere()
    meshes = [scene_mesh, scene_mesh, sphere]
    transforms = [
        np.eye(4, dtype=np.float32),
        placement(0.7, [1, 2, 0.5], [1.5, 0.8, 1.2], [2.0, 1.0, -3.0]),
        placement(0.3, [0, 0, 1], 0.8, [-1.0, 3.0, 1.0]),
    ]
    scene = meshray.Scene()
    bvhs = {id(scene_mesh): meshray.BVH(scene_mesh), id(sphere): meshray.BVH(sphere)}
    ids = [scene.add(bvhs[id(mesh)], m) for mesh, m in zip(meshes, transforms)]
    assert ids == [0, 1, 2] and len(scene) == 3
    return scene, meshes, transforms, world_triangles(meshes, transforms)


def test_cast_count_and_cast_all_equal_brute_force(placed):
    scene, meshes, transforms, (a, b, c, instance, triangle) = placed
    lo, hi = np.minimum(a, b).min(axis=0), np.maximum(a, b).max(axis=0)
    origins, directions = random_rays(np.array([lo, hi], np.float32), 400, np.random.default_rng(11))
    got = scene.cast(origins, directions)
    counts = scene.count_hits(origins, directions)
    listed = scene.cast_all(origins, directions)
    assert set(got) == {"t", "instance", "triangle", "u", "v", "point", "normal"}
    assert counts.dtype == np.int32
    np.testing.assert_array_equal(counts, np.bincount(listed["ray"], minlength=len(origins)))
    compared = hits = 0
    for r, (o, d) in enumerate(zip(origins.astype(np.float64), directions.astype(np.float64))):
        u, w, t = cramer(o, d, a, b, c)
        margin = np.minimum(np.minimum(u, w), 1 - u - w)
        crossed = np.isfinite(t) & (margin >= 0) & (t >= 0)
        if (np.isfinite(t) & (np.abs(margin) < 1e-5) & (t >= 0)).any():
            continue  # near an edge, where float32 may differ
        compared += 1
        assert counts[r] == crossed.sum(), r
        mine = listed["ray"] == r
        assert sorted(zip(listed["instance"][mine], listed["triangle"][mine])) == sorted(
            zip(instance[crossed], triangle[crossed])
        ), r
        if not crossed.any():
            assert got["instance"][r] == -1 and got["triangle"][r] == -1 and np.isinf(got["t"][r])
            continue
        hits += 1
        best = np.flatnonzero(crossed)[np.argmin(t[crossed])]
        assert abs(got["t"][r] - t[best]) <= 1e-4 * max(1.0, t[best]), r
        if (got["instance"][r], got["triangle"][r]) != (instance[best], triangle[best]):
            # A tie: the triangle found is crossed at the same t.
            same = crossed & (instance == got["instance"][r]) & (triangle == got["triangle"][r])
            assert same.any() and abs(t[same][0] - t[best]) <= 1e-5 * max(1.0, t[best]), r
            continue
        k = best
        np.testing.assert_allclose(got["point"][r], o + t[k] * d, rtol=1e-4, atol=1e-4)
        n = np.cross(b[k] - a[k], c[k] - a[k])
        np.testing.assert_allclose(got["normal"][r], n / np.linalg.norm(n), atol=1e-4)
        np.testing.assert_allclose([got["u"][r], got["v"][r]], [u[k], w[k]], atol=1e-4)
    assert compared > 300 and hits > 100, (compared, hits)
    # Any hit: a hit exactly where the closest hit finds one.
    anyhit = scene.cast(origins, directions, any_hit=True)
    np.testing.assert_array_equal(anyhit["instance"] >= 0, got["instance"] >= 0)
    np.testing.assert_array_equal(scene.occluded(origins, directions), got["instance"] >= 0)


def test_closest_points_and_inside_equal_brute_force(placed):
    scene, meshes, transforms, (a, b, c, instance, triangle) = placed
    rng = np.random.default_rng(12)
    lo, hi = np.minimum(a, b).min(axis=0), np.maximum(a, b).max(axis=0)
    points = (lo - 1 + (hi - lo + 2) * rng.random((300, 3))).astype(np.float32)
    got = scene.closest_points(points)
    for i, p in enumerate(points.astype(np.float64)):
        d = point_triangle_distance(np.broadcast_to(p, a.shape), a, b, c)
        assert abs(got["distance"][i] - d.min()) <= 1e-5 * (1 + d.min()), i
        mine = (instance == got["instance"][i]) & (triangle == got["triangle"][i])
        assert d[mine][0] <= d.min() * (1 + 1e-5) + 1e-7, i
    np.testing.assert_allclose(np.linalg.norm(got["point"] - points, axis=1), got["distance"], rtol=1e-4, atol=1e-5)
    # Inside: only the sphere (instance 2, radius 0.8 about (-1, 3, 1)) is closed.
    sphere_points = (np.array([-1.0, 3.0, 1.0]) + rng.uniform(-1.2, 1.2, (2000, 3))).astype(np.float32)
    r = np.linalg.norm(sphere_points - np.array([-1.0, 3.0, 1.0]), axis=1)
    clear = (r < 0.79 * np.cos(np.pi / 24)) | (r > 0.81)
    inside = scene.contains(sphere_points)
    np.testing.assert_array_equal(inside[clear], r[clear] < 0.8)
    signed = scene.signed_distance(sphere_points)
    distance = scene.closest_points(sphere_points)["distance"]
    np.testing.assert_allclose(np.abs(signed), distance, rtol=1e-6)
    np.testing.assert_array_equal(signed < 0, inside)
    w = scene.winding_numbers(sphere_points, exact=True)
    np.testing.assert_array_equal(w >= 0.5, inside)


def test_edits_and_bad_input():
    sphere = meshray.BVH(uv_sphere())
    scene = meshray.Scene()
    assert repr(scene) == "meshray.Scene(0 instances)"
    ray = (np.array([[0.0, 0.0, 10.0]]), np.array([[0.0, 0.0, -1.0]]))
    assert scene.cast(*ray)["instance"][0] == -1
    first = scene.add(sphere)
    second = scene.add(sphere, placement(0, [0, 0, 1], 1, [0, 0, 5]))
    hit = scene.cast(*ray)
    assert hit["instance"][0] == second and abs(hit["t"][0] - 4.0) < 1e-5
    assert scene.count_hits(*ray)[0] == 4
    scene.set_transform(second, placement(0, [0, 0, 1], 1, [5, 0, 0]))
    assert scene.cast(*ray)["instance"][0] == first
    scene.remove(first)
    assert len(scene) == 1 and scene.cast(*ray)["instance"][0] == -1
    with pytest.raises(meshray.MeshrayError):
        scene.remove(first)
    with pytest.raises(ValueError, match="no instance -1"):
        scene.remove(-1)
    with pytest.raises(meshray.MeshrayError):
        scene.add(sphere, np.zeros((4, 4)))
    with pytest.raises(ValueError, match="transform"):
        scene.add(sphere, np.eye(3))
    with pytest.raises(ValueError, match="cull"):
        scene.cast(*ray, cull="sideways")
    with pytest.raises(ValueError, match="max_distance"):
        scene.closest_points(ray[0], max_distance=-1.0)
    with pytest.raises(ValueError, match="origins and directions differ"):
        scene.cast(ray[0], np.zeros((2, 3)))


def test_edits_while_other_threads_query():
    """A query works on the scene as it stood when it began; edits on another thread
    neither wait for it nor change its answers."""
    sphere = meshray.BVH(uv_sphere())
    scene = meshray.Scene()
    scene.add(sphere)
    origins, directions = random_rays(np.array([[-1, -1, -1], [1, 1, 1]], np.float32), 200_000, np.random.default_rng(3))
    # t_max = 2 keeps the rays within 10 of the origin, away from the spheres added far off.
    want = scene.cast(origins, directions, t_max=2.0)["t"]
    errors = []

    def query():
        try:
            for _ in range(3):
                got = scene.cast(origins, directions, t_max=2.0)["t"]
                np.testing.assert_array_equal(got, want)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=query) for _ in range(2)]
    for t in threads:
        t.start()
    for k in range(50):
        far = scene.add(sphere, placement(0, [0, 0, 1], 1, [100.0 + k, 0, 0]))
        if k % 2:
            scene.remove(far)
    for t in threads:
        t.join()
    assert not errors, errors
    assert len(scene) == 26


def test_pickling_keeps_ids_transforms_and_shared_bvhs():
    import pickle

    sphere, asset = meshray.BVH(uv_sphere()), meshray.BVH(meshray.Mesh.load(ASSET))
    scene = meshray.Scene()
    for k in range(5):
        scene.add(sphere if k % 2 else asset, placement(0.4 * k, [1, 1, 0], 1 + 0.1 * k, [3.0 * k, 0, 0]))
    scene.remove(0)
    scene.remove(3)
    copy = pickle.loads(pickle.dumps(scene))
    assert len(copy) == 3
    origins, directions = random_rays(np.array([[-2, -2, -2], [14, 2, 2]], np.float32), 3000, np.random.default_rng(9))
    for key, want in scene.cast(origins, directions).items():
        np.testing.assert_array_equal(copy.cast(origins, directions)[key], want, err_msg=key)
    assert (scene.cast(origins, directions)["instance"] >= 0).sum() > 500
    # Each BVH once in the pickle, however often placed: two sphere instances cost one.
    one = meshray.Scene()
    one.add(sphere)
    two = meshray.Scene()
    two.add(sphere)
    two.add(sphere, placement(0, [0, 0, 1], 1, [5, 0, 0]))
    assert len(pickle.dumps(two)) < len(pickle.dumps(one)) + 200
    # The freed ids are free again: the next add takes one of them.
    assert copy.add(sphere) in (0, 3)


def test_one_query_surface_a_bvh_and_its_identity_scene_answer_alike():
    """Every query is one method of meshray.Geometry, written once over the library's traits:
    a BVH and a scene of that BVH placed where it is give the same answers (a scene's add
    the instance column), the scene's normals moved through the identity's normal matrix,
    within an ulp. Methods a scene lacked before (pick, all_hits, contains by parity) come
    with it."""
    mesh = meshray.Mesh.load(ASSET)
    bvh = meshray.BVH(mesh)
    scene = meshray.Scene()
    scene.add(bvh)
    assert isinstance(bvh, meshray.Geometry) and isinstance(scene, meshray.Geometry)
    origins, directions = random_rays(mesh.vertices, 3000, np.random.default_rng(39))
    for any_hit in (False, True):
        a = bvh.cast(origins, directions, any_hit=any_hit, cull="back")
        b = scene.cast(origins, directions, any_hit=any_hit, cull="back")
        hit = a["triangle"] >= 0
        assert hit.sum() > 500
        np.testing.assert_array_equal(b["instance"], np.where(hit, 0, -1))
        for key in ("t", "triangle", "u", "v", "point"):
            np.testing.assert_array_equal(a[key], b[key])
        np.testing.assert_allclose(a["normal"][hit], b["normal"][hit], atol=1e-6)
    np.testing.assert_array_equal(bvh.occluded(origins, directions), scene.occluded(origins, directions))
    np.testing.assert_array_equal(bvh.count_hits(origins, directions), scene.count_hits(origins, directions))
    a, b = bvh.cast_all(origins, directions), scene.cast_all(origins, directions)
    for key in ("ray", "t", "triangle", "u", "v"):
        np.testing.assert_array_equal(a[key], b[key])
    assert (b["instance"] == 0).all()
    one_a, one_b = bvh.all_hits(origins[0], directions[0]), scene.all_hits(origins[0], directions[0])
    np.testing.assert_array_equal(one_a["t"], one_b["t"])
    view = np.eye(4, dtype=np.float32)
    view[2, 3] = -6.0
    view[1, 3] = -1.0
    f = 1.0 / np.tan(0.4)
    projection = np.array([[f, 0, 0, 0], [0, f, 0, 0], [0, 0, -1.002, -0.2002], [0, 0, -1, 0]], np.float32)
    pixels = np.array([[x, y] for x in range(0, 64, 4) for y in range(0, 64, 4)], np.float32)
    a, b = bvh.pick(view, projection, (64, 64), pixels), scene.pick(view, projection, (64, 64), pixels)
    assert (a["triangle"] >= 0).any()
    np.testing.assert_array_equal(a["triangle"], b["triangle"])
    points = np.random.default_rng(39).uniform(-3, 3, size=(500, 3)).astype(np.float32)
    a, b = bvh.closest_points(points), scene.closest_points(points)
    for key in ("point", "triangle", "distance", "u", "v"):
        np.testing.assert_array_equal(a[key], b[key])
    np.testing.assert_array_equal(bvh.winding_numbers(points), scene.winding_numbers(points))
    for method in ("winding", "parity"):
        np.testing.assert_array_equal(bvh.contains(points, method=method), scene.contains(points, method=method))
    np.testing.assert_array_equal(bvh.signed_distance(points), scene.signed_distance(points))
    with pytest.raises(ValueError, match="method"):
        scene.contains(points, method="vote")
    with pytest.raises(TypeError):
        meshray.Geometry()
