"""meshray from Python: answers against a numpy float64 brute force on the asset scene and
the shared meshes, bad input as clear exceptions, pickling.

The shared meshes are looked up in $MESHRAY_MESHES, else ../shared/meshes beside the
repository; without them those tests are skipped, except under CI=true where that fails.
"""

import os
import pickle
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import meshray

REPO = Path(__file__).resolve().parents[2]
ASSET = REPO / "assets" / "scene.obj"


def shared(name):
    root = Path(os.environ.get("MESHRAY_MESHES", REPO.parent / "shared" / "meshes"))
    path = root / name
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and the shared mesh {path} is missing")
        pytest.skip(f"needs the shared meshes ({path})")
    return path


def cramer(o, d, a, b, c):
    """Ray o + t·d against triangles (a, b, c rows), in float64 by Cramer's rule: the
    barycentrics u, v (of b and c) and t, NaN or infinite where d is parallel to one. `o`
    and `d` are one ray (broadcast over the triangles) or one row each."""
    e1, e2 = b - a, c - a
    p = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, p)
    s = o - a
    q = np.cross(s, e1)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.einsum("ij,ij->i", s, p) / det
        v = np.einsum("ij,ij->i", np.broadcast_to(d, q.shape), q) / det
        t = np.einsum("ij,ij->i", e2, q) / det
    return u, v, t


def brute_force(vertices, faces, origins, directions, t_min=0.0, t_max=np.inf):
    """Nearest hit of each ray over every triangle, in float64 (Cramer's rule, vectorized
    over the triangles): t (inf on a miss), triangle (-1), and the smallest barycentric
    margin of any triangle the ray passes within 1e-5 of (where float32 may differ)."""
    v = vertices.astype(np.float64)
    a, b, c = v[faces[:, 0]], v[faces[:, 1]], v[faces[:, 2]]
    ts, tris, near_edge = [], [], []
    for o, d in zip(origins.astype(np.float64), directions.astype(np.float64)):
        u, w, t = cramer(o, d, a, b, c)
        ok = np.isfinite(t)
        margin = np.minimum(np.minimum(u, w), 1 - u - w)
        inside = ok & (margin >= 0) & (t >= t_min) & (t <= t_max)
        close = ok & (np.abs(margin) < 1e-5) & (t >= t_min) & (t <= t_max)
        near_edge.append(bool(close.any()))
        if inside.any():
            k = np.flatnonzero(inside)
            best = k[np.argmin(t[k])]
            ts.append(t[best])
            tris.append(best)
        else:
            ts.append(np.inf)
            tris.append(-1)
    return np.array(ts), np.array(tris), np.array(near_edge)


def random_rays(vertices, n, rng):
    """Rays from a sphere around the mesh towards random points of its box."""
    lo, hi = vertices.min(axis=0), vertices.max(axis=0)
    centre, radius = (lo + hi) / 2, np.linalg.norm(hi - lo)
    normal = rng.normal(size=(n, 3))
    origins = centre + radius * normal / np.linalg.norm(normal, axis=1, keepdims=True)
    targets = lo + (hi - lo) * rng.random((n, 3))
    return origins.astype(np.float32), (targets - origins).astype(np.float32)


def check_cast(mesh, n, seed):
    bvh = meshray.BVH(mesh)
    vertices, faces = mesh.vertices, mesh.faces
    origins, directions = random_rays(vertices, n, np.random.default_rng(seed))
    got = bvh.cast(origins, directions)
    want_t, want_tri, near_edge = brute_force(vertices, faces, origins, directions)
    clear = ~near_edge
    assert clear.sum() > 0.9 * n
    # Where they differ, it is a tie: the reported triangle is hit at the nearest t too
    # (coplanar overlapping triangles; among equal float32 t, meshray takes the lowest number).
    differ = np.flatnonzero(clear & (got["triangle"] != want_tri))
    for i in differ:
        assert got["triangle"][i] >= 0 and want_tri[i] >= 0, f"ray {i}: hit and miss"
        t_own, _, _ = brute_force(vertices, faces[[got["triangle"][i]]], origins[[i]], directions[[i]])
        assert abs(t_own[0] - want_t[i]) <= 1e-6 * want_t[i], f"ray {i}: not a tie"
    assert len(differ) <= 0.01 * n
    hit = clear & (want_tri >= 0)
    assert hit.sum() > 0.2 * n, "the rays should hit the mesh often"
    np.testing.assert_allclose(got["t"][hit], want_t[hit], rtol=1e-5)
    assert np.all(np.isinf(got["t"][clear & (want_tri < 0)]))
    # The point is on the ray at t, the normal a unit vector across the triangle.
    at = origins[hit] + got["t"][hit, None] * directions[hit]
    np.testing.assert_allclose(got["point"][hit], at, rtol=1e-4, atol=1e-4 * np.abs(vertices).max())
    np.testing.assert_allclose(np.linalg.norm(got["normal"][hit], axis=1), 1.0, rtol=1e-5)
    # Any hit says hit exactly where closest hit does.
    anyhit = bvh.cast(origins, directions, any_hit=True)
    np.testing.assert_array_equal(anyhit["triangle"][clear] >= 0, want_tri[clear] >= 0)
    blocked = bvh.occluded(origins, directions)
    assert blocked.dtype == np.bool_
    np.testing.assert_array_equal(blocked, anyhit["triangle"] >= 0)
    return bvh


def test_cast_equals_brute_force_on_the_asset_scene():
    check_cast(meshray.Mesh.load(ASSET), 2000, 1)


@pytest.mark.parametrize(
    "name",
    ["stanford-bunny/stanford-bunny.obj", "crytek-sponza/sponza.obj", "conference/conference.obj"],
)
def test_cast_equals_brute_force_on_shared_meshes(name):
    check_cast(meshray.Mesh.load(shared(name)), 300, 2)


def test_t_range_culling_and_watertight():
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float32)
    bvh = meshray.BVH(meshray.Mesh(vertices, np.array([[0, 1, 2]])))
    o, d = np.array([[0.2, 0.2, 1.0]]), np.array([[0.0, 0.0, -1.0]])
    assert bvh.cast(o, d)["t"][0] == 1.0
    assert np.isinf(bvh.cast(o, d, t_max=0.5)["t"][0])
    assert np.isinf(bvh.cast(o, d, cull="front")["t"][0])  # the front face, culled
    assert bvh.cast(o, d, cull="back")["triangle"][0] == 0
    assert bvh.cast(o, d, watertight=True)["triangle"][0] == 0
    # A zero or NaN direction hits nothing (documented), never raises.
    bad = bvh.cast(np.zeros((2, 3)), np.array([[0.0, 0.0, 0.0], [np.nan, 0.0, -1.0]]))
    assert np.all(bad["triangle"] == -1)


def test_ray_options_are_keywords_read_alike_by_every_ray_query():
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float32)
    bvh = meshray.BVH(meshray.Mesh(vertices, np.array([[0, 1, 2]])))
    scene = meshray.Scene()
    scene.add(bvh)
    o, d = np.array([[0.2, 0.2, 1.0]]), np.array([[0.0, 0.0, -1.0]])
    for geometry in (bvh, scene):
        # Each query honours each option: the range, and culling of the front face.
        assert not geometry.occluded(o, d, t_max=0.5)[0] and geometry.occluded(o, d, t_min=0.5)[0]
        assert geometry.count_hits(o, d, cull="front")[0] == 0
        assert geometry.count_hits(o, d, cull="back", watertight=False)[0] == 1
        assert len(geometry.cast_all(o, d, t_min=1.5)["t"]) == 0
        assert len(geometry.all_hits(o[0], d[0], t_max=0.99)["t"]) == 0
        for query in (geometry.cast, geometry.occluded, geometry.count_hits, geometry.cast_all):
            name = query.__name__
            with pytest.raises(TypeError, match=rf"{name}\(\) got an unexpected keyword argument 'tmax'"):
                query(o, d, tmax=0.5)
            with pytest.raises(TypeError):  # options are keyword-only
                query(o, d, 0.0, 0.5)
            with pytest.raises(TypeError, match=rf"{name}\(\) argument 't_max'"):
                query(o, d, t_max="far")
            with pytest.raises(TypeError, match="argument 'watertight'"):
                query(o, d, watertight="yes")
            with pytest.raises(ValueError, match="t_min must be >= 0"):
                query(o, d, t_min=-1.0)
            with pytest.raises(ValueError, match="cull"):
                query(o, d, cull="sideways")


def test_all_hits_are_sorted_and_complete():
    mesh = meshray.Mesh.load(ASSET)
    bvh = meshray.BVH(mesh)
    origins, directions = random_rays(mesh.vertices, 50, np.random.default_rng(3))
    for o, d in zip(origins, directions):
        hits = bvh.all_hits(o, d)
        assert np.all(np.diff(hits["t"]) >= 0)
        first = bvh.cast(o[None], d[None])
        if len(hits["t"]):
            assert hits["t"][0] == first["t"][0]
        else:
            assert first["triangle"][0] == -1


def test_triangle_normals_are_the_normals_cast_reports():
    mesh = meshray.Mesh.load(ASSET)
    bvh = meshray.BVH(mesh)
    normals = bvh.triangle_normals
    v, f = mesh.vertices.astype(np.float64), mesh.faces
    want = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    assert normals.shape == (len(f), 3) and normals.dtype == np.float32
    np.testing.assert_allclose(normals, want, atol=1e-5)
    origins, directions = random_rays(mesh.vertices, 500, np.random.default_rng(9))
    hits = bvh.cast(origins, directions)
    hit = hits["triangle"] >= 0
    np.testing.assert_array_equal(hits["normal"][hit], normals[hits["triangle"][hit]])


def test_cast_all_and_count_hits_equal_brute_force():
    mesh = meshray.Mesh.load(ASSET)
    bvh = meshray.BVH(mesh)
    v, f = mesh.vertices.astype(np.float64), mesh.faces
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    origins, directions = random_rays(mesh.vertices, 300, np.random.default_rng(8))
    listed = bvh.cast_all(origins, directions)
    counts = bvh.count_hits(origins, directions)
    assert counts.dtype == np.int32
    np.testing.assert_array_equal(counts, np.bincount(listed["ray"], minlength=len(origins)))
    for r, (o, d) in enumerate(zip(origins.astype(np.float64), directions.astype(np.float64))):
        # Every triangle the ray crosses at t >= 0, in float64.
        u, w, t = cramer(o, d, a, b, c)
        inside = (u >= 0) & (w >= 0) & (u + w <= 1) & (t >= 0)
        # Crossings within 1e-6 (barycentric) of an edge may count once or twice.
        margin = np.minimum(np.minimum(u, w), 1 - u - w)
        sure = inside & (margin > 1e-6)
        maybe = inside & ~sure
        assert sure.sum() <= counts[r] <= sure.sum() + 2 * maybe.sum(), r
        mine = listed["triangle"][listed["ray"] == r]
        assert set(np.flatnonzero(sure)) <= set(mine.tolist()), r
        assert np.all(np.diff(listed["t"][listed["ray"] == r]) >= 0)


def point_triangle_distance(p, a, b, c):
    """Distance from p to each triangle (a, b, c rows), float64, by projection and edges."""
    def segment(p, x, y):
        d = y - x
        t = np.clip(np.einsum("ij,ij->i", p - x, d) / np.maximum(np.einsum("ij,ij->i", d, d), 1e-300), 0, 1)
        return np.linalg.norm(p - (x + t[:, None] * d), axis=1)

    n = np.cross(b - a, c - a)
    nn = np.einsum("ij,ij->i", n, n)
    s = p - a
    u = np.einsum("ij,ij->i", np.cross(s, c - a), n) / np.where(nn > 0, nn, 1)
    v = np.einsum("ij,ij->i", np.cross(b - a, s), n) / np.where(nn > 0, nn, 1)
    face = np.abs(np.einsum("ij,ij->i", s, n)) / np.sqrt(np.where(nn > 0, nn, 1))
    edges = np.minimum(np.minimum(segment(p, a, b), segment(p, b, c)), segment(p, c, a))
    inside = (nn > 0) & (u >= 0) & (v >= 0) & (u + v <= 1)
    return np.where(inside, face, edges)


def test_closest_points_equal_brute_force():
    mesh = meshray.Mesh.load(ASSET)
    bvh = meshray.BVH(mesh)
    v = mesh.vertices.astype(np.float64)
    f = mesh.faces
    a, b, c = v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]
    rng = np.random.default_rng(4)
    lo, hi = v.min(axis=0), v.max(axis=0)
    points = (lo - 1 + (hi - lo + 2) * rng.random((300, 3))).astype(np.float32)
    got = bvh.closest_points(points)
    for i, p in enumerate(points.astype(np.float64)):
        d = point_triangle_distance(np.broadcast_to(p, a.shape), a, b, c)
        assert abs(got["distance"][i] - d.min()) <= 1e-5 * (1 + d.min())
        assert d[got["triangle"][i]] <= d.min() * (1 + 1e-6) + 1e-9
    np.testing.assert_allclose(np.linalg.norm(got["point"] - points, axis=1), got["distance"], rtol=1e-4, atol=1e-5)
    near = bvh.closest_points(points, max_distance=0.1)
    far = got["distance"] > 0.1 * (1 + 1e-6)
    assert np.all(near["triangle"][far] == -1) and np.all(np.isinf(near["distance"][far]))


def uv_sphere(n=24):
    """A closed unit sphere, outward winding."""
    rings = []
    for i in range(1, n):
        th = np.pi * i / n
        for j in range(2 * n):
            ph = np.pi * j / n
            rings.append([np.sin(th) * np.cos(ph), np.cos(th), np.sin(th) * np.sin(ph)])
    v = np.array([[0, 1, 0]] + rings + [[0, -1, 0]], dtype=np.float32)
    faces, m, last = [], 2 * n, len(v) - 1
    ring = lambda i, j: 1 + (i - 1) * m + j % m
    for j in range(m):
        faces.append([0, ring(1, j + 1), ring(1, j)])
        faces.append([last, ring(n - 1, j), ring(n - 1, j + 1)])
    for i in range(1, n - 1):
        for j in range(m):
            faces.append([ring(i, j), ring(i, j + 1), ring(i + 1, j)])
            faces.append([ring(i, j + 1), ring(i + 1, j + 1), ring(i + 1, j)])
    return meshray.Mesh(v, np.array(faces))


def test_contains_on_a_closed_sphere():
    bvh = meshray.BVH(uv_sphere())
    rng = np.random.default_rng(5)
    points = rng.uniform(-1.5, 1.5, size=(4000, 3)).astype(np.float32)
    r = np.linalg.norm(points, axis=1)
    inside = bvh.contains(points)
    # The tessellated sphere lies between radius cos(pi/24) and 1.
    clear = (r < 0.99 * np.cos(np.pi / 24)) | (r > 1.01)
    np.testing.assert_array_equal(inside[clear], r[clear] < 1)
    assert inside.sum() > 500
    # Points on the vertices' rays and on the axis (through vertices and edges) too.
    axis = np.array([[0, 0.5, 0], [0, -0.5, 0], [0, 1.5, 0], [0.5, 0, 0]], dtype=np.float32)
    np.testing.assert_array_equal(bvh.contains(axis), [True, True, False, True])


def numpy_winding(vertices, faces, points):
    """The winding number at each point by brute force in float64: the solid angle of every
    triangle (Van Oosterom and Strackee), vectorized over the triangles, summed over 4 pi."""
    v = vertices.astype(np.float64)
    out = []
    for p in points.astype(np.float64):
        a, b, c = v[faces[:, 0]] - p, v[faces[:, 1]] - p, v[faces[:, 2]] - p
        la, lb, lc = (np.linalg.norm(x, axis=1) for x in (a, b, c))
        det = np.einsum("ij,ij->i", a, np.cross(b, c))
        dots = lambda x, y: np.einsum("ij,ij->i", x, y)  # noqa: E731
        den = la * lb * lc + dots(a, b) * lc + dots(a, c) * lb + dots(b, c) * la
        out.append(2 * np.arctan2(det, den).sum() / (4 * np.pi))
    return np.array(out)


def test_winding_numbers_contains_and_signed_distance_on_an_open_hemisphere():
    """An open mesh, where crossing parity is wrong: the winding number decides."""
    sphere = uv_sphere()
    v, f = sphere.vertices, sphere.faces
    upper = f[(v[f][:, :, 1] >= -1e-6).all(axis=1)]
    bvh = meshray.BVH(meshray.Mesh(v, upper))
    rng = np.random.default_rng(8)
    points = rng.uniform(-1.2, 1.2, size=(600, 3)).astype(np.float32)
    w = numpy_winding(v, upper, points)
    np.testing.assert_allclose(bvh.winding_numbers(points, exact=True), w, atol=1e-9)
    fast = bvh.winding_numbers(points)
    assert fast.dtype == np.float64 and np.abs(fast - w).max() <= 0.02
    clear = np.abs(w - 0.5) > 1e-9
    np.testing.assert_array_equal(bvh.contains(points)[clear], w[clear] >= 0.5)
    # The old answer, kept under its name, differs on this open mesh.
    parity = bvh.contains(points, method="parity")
    assert parity.shape == (600,) and (parity != (w >= 0.5)).any()
    d = bvh.signed_distance(points)
    near = bvh.closest_points(points)["distance"]
    np.testing.assert_allclose(np.abs(d), near, rtol=1e-6)
    np.testing.assert_array_equal(d < 0, bvh.contains(points) & (near > 0))
    # Beyond max_distance: NaN. Bad arguments: clear errors.
    assert np.isnan(bvh.signed_distance(points, max_distance=0.0)).sum() >= 599
    with pytest.raises(ValueError, match="beta"):
        bvh.winding_numbers(points, beta=0.5)
    with pytest.raises(ValueError, match="method"):
        bvh.contains(points, method="rays")
    with pytest.raises(ValueError, match="max_distance"):
        bvh.signed_distance(points, max_distance=-1.0)
    bad = np.array([[np.nan, 0, 0], [0, np.inf, 0]], dtype=np.float32)
    assert np.isnan(bvh.winding_numbers(bad)).all()
    assert not bvh.contains(bad).any()
    assert np.isnan(bvh.signed_distance(bad)).all()


def test_selection():
    mesh = meshray.Mesh.load(ASSET)
    bvh = meshray.BVH(mesh)
    v = mesh.vertices
    everything = bvh.select_box(v.min(axis=0), v.max(axis=0))
    np.testing.assert_array_equal(everything, np.arange(mesh.triangle_count))
    assert len(bvh.select_box([100, 100, 100], [101, 101, 101])) == 0
    shell = bvh.select_sphere([0, 1, 0], 1.0)
    assert len(shell) > 0 and np.all(np.diff(shell) > 0)


def test_qualities_and_pickling_give_the_same_answers():
    mesh = meshray.Mesh.load(ASSET)
    origins, directions = random_rays(mesh.vertices, 500, np.random.default_rng(6))
    want = meshray.BVH(mesh).cast(origins, directions)
    for quality in ["fast", "high"]:
        got = meshray.BVH(mesh, quality=quality).cast(origins, directions)
        np.testing.assert_array_equal(got["t"], want["t"])
    bvh = pickle.loads(pickle.dumps(meshray.BVH(mesh)))
    np.testing.assert_array_equal(bvh.cast(origins, directions)["triangle"], want["triangle"])
    np.testing.assert_array_equal(bvh.mesh.faces, mesh.faces)
    with pytest.raises(meshray.MeshrayError, match="not a saved meshray BVH"):
        meshray.BVH.from_bytes(b"\x07 not a tree")


def test_indices_must_be_whole_numbers_and_coordinates_numbers():
    tri = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float64)
    # A fraction would be truncated to another vertex: refused, naming it.
    with pytest.raises(ValueError, match=r"faces\[0, 1\] = 1.5 is not a vertex index \(not a whole number\)"):
        meshray.Mesh(tri, [[0.0, 1.5, 2.0]])
    for bad in (np.nan, np.inf):
        with pytest.raises(ValueError, match=r"faces\[0, 2\] = (nan|inf) is not a vertex index"):
            meshray.Mesh(tri, np.array([[0.0, 1.0, bad]]))
    # Whole numbers as floats are taken as the integers they are.
    mesh = meshray.Mesh(tri, np.array([[0.0, 1.0, 2.0]], dtype=np.float32))
    assert mesh.faces.tolist() == [[0, 1, 2]]
    # None among objects is not a number (numpy would read it as NaN).
    with pytest.raises(ValueError, match=r"vertices: not numbers: vertices\[1, 2\] is None"):
        meshray.Mesh(np.array([[0, 0, 0], [1, 0, None], [0, 1, 0]], dtype=object), [[0, 1, 2]])
    with pytest.raises(ValueError, match=r"faces: not numbers: faces\[0, 0\] is None"):
        meshray.Mesh(tri, np.array([[None, 1, 2]], dtype=object))
    with pytest.raises(ValueError, match=r"vertices: not numbers: an array of dtype <U1"):
        meshray.Mesh(np.array([["1", "2", "3"]]), [[0, 0, 0]])
    with pytest.raises(ValueError, match=r"faces: not numbers: faces\[0, 1\] is True"):
        meshray.Mesh(tri, np.array([[0, True, 2]], dtype=object))
    with pytest.raises(ValueError, match=r"faces: not numbers: an array of dtype bool"):
        meshray.Mesh(tri, np.array([[False, True, True]]))
    # Objects that are all numbers are fine.
    objects = np.array([[0, 0, 0], [1.0, 0, 0], [0, np.float32(1), 0]], dtype=object)
    assert meshray.Mesh(objects, np.array([[0, 1, 2]], dtype=object)).triangle_count == 1


def test_bad_input_gives_clear_exceptions(tmp_path):
    tri = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float64)
    with pytest.raises(ValueError, match=r"vertices: expected shape \(n, 3\)"):
        meshray.Mesh(tri[:, :2], [[0, 1, 2]])
    with pytest.raises(ValueError, match="faces"):
        meshray.Mesh(tri, [[0, 1]])
    with pytest.raises(ValueError, match=r"faces\[0, 2\] = 3 is not a vertex index"):
        meshray.Mesh(tri, [[0, 1, 3]])
    with pytest.raises(ValueError, match="is not a vertex index"):
        meshray.Mesh(tri, [[0, -1, 2]])
    with pytest.raises(ValueError, match="vertices"):
        meshray.Mesh(np.array([["a", "b", "c"]]), [[0, 0, 0]])
    with pytest.raises(meshray.MeshrayError):
        meshray.Mesh(np.array([[np.nan, 0, 0], [1, 0, 0], [0, 1, 0]]), [[0, 1, 2]])
    with pytest.raises(meshray.MeshrayError):
        meshray.Mesh(np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64))
    with pytest.raises(FileNotFoundError):
        meshray.Mesh.load(tmp_path / "missing.obj")
    bad = tmp_path / "bad.obj"
    bad.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n")
    with pytest.raises(meshray.MeshrayError, match=r"bad\.obj:4: bad face index"):
        meshray.Mesh.load(bad)
    bvh = meshray.BVH(meshray.Mesh(tri, [[0, 1, 2]]))
    with pytest.raises(ValueError, match="differ in length"):
        bvh.cast(np.zeros((2, 3)), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="cull"):
        bvh.cast(np.zeros((1, 3)), np.ones((1, 3)), cull="sideways")
    with pytest.raises(ValueError, match="quality"):
        meshray.BVH(meshray.Mesh(tri, [[0, 1, 2]]), quality="best")
    # Non-contiguous and integer arrays are taken; empty batches give empty answers.
    origins = np.asfortranarray(np.tile([[0.2, 0.2, 1.0]], (4, 1)))[::2]
    directions = np.tile([[0, 0, -1]], (2, 1))
    np.testing.assert_array_equal(bvh.cast(origins, directions)["triangle"], [0, 0])
    empty = bvh.cast(np.zeros((0, 3)), np.zeros((0, 3)))
    assert empty["t"].shape == (0,) and empty["point"].shape == (0, 3)


def look_at(eye, target, up=(0.0, 1.0, 0.0)):
    """A right-handed view matrix, row-major (as written on paper)."""
    eye, target, up = (np.asarray(x, dtype=np.float64) for x in (eye, target, up))
    f = (target - eye) / np.linalg.norm(target - eye)
    s = np.cross(f, up)
    s /= np.linalg.norm(s)
    u = np.cross(s, f)
    return np.array(
        [[*s, -s @ eye], [*u, -u @ eye], [*-f, f @ eye], [0, 0, 0, 1]], dtype=np.float32
    )


def perspective(aspect, fovy, near, far):
    """OpenGL's perspective projection, row-major."""
    f = 1 / np.tan(fovy / 2)
    return np.array(
        [
            [f / aspect, 0, 0, 0],
            [0, f, 0, 0],
            [0, 0, (far + near) / (near - far), 2 * far * near / (near - far)],
            [0, 0, -1, 0],
        ],
        dtype=np.float32,
    )


def test_pick_frustum_and_visible_selection():
    bvh = meshray.BVH(meshray.Mesh.load(ASSET))
    eye, target = np.array([0.0, 1.0, 6.0]), np.array([0.0, 1.0, 0.0])
    view, projection, viewport = look_at(eye, target), perspective(800 / 600, 0.8, 0.1, 100.0), (800, 600)
    # The centre pixel looks straight at the target.
    centre = bvh.pick(view, projection, viewport, [[400, 300]])
    straight = bvh.cast([eye], [target - eye])
    assert centre["triangle"][0] == straight["triangle"][0] >= 0
    np.testing.assert_allclose(centre["point"][0], straight["point"][0], atol=1e-4)
    # Picks over a grid of pixel centres: every hit is in the frustum of the whole rectangle
    # and among the visible triangles there.
    xs, ys = np.meshgrid(np.arange(300, 500) + 0.5, np.arange(200, 400) + 0.5)
    picks = bvh.pick(view, projection, viewport, np.column_stack([xs.ravel(), ys.ravel()]))
    hit = np.unique(picks["triangle"][picks["triangle"] >= 0])
    assert len(hit) > 50
    inside = bvh.select_frustum(view, projection, viewport, (300, 200), (500, 400))
    visible = bvh.visible(view, projection, viewport, (300, 200), (500, 400))
    np.testing.assert_array_equal(visible, hit)
    assert np.all(np.isin(visible, inside)) and len(inside) > len(visible)
    # Nothing to the far left of the scene.
    assert len(bvh.select_frustum(view, projection, viewport, (0, 0), (5, 5))) == 0
    with pytest.raises(meshray.MeshrayError, match="camera"):
        bvh.pick(np.zeros((4, 4)), projection, viewport, [[1, 1]])
    # The ray options, as cast's: a range along the camera ray (from the near plane).
    t = centre["t"][0]
    assert bvh.pick(view, projection, viewport, [[400, 300]], t_max=t)["t"][0] == t
    assert bvh.pick(view, projection, viewport, [[400, 300]], t_max=0.99 * t)["triangle"][0] == -1
    assert bvh.pick(view, projection, viewport, [[400, 300]], cull="front", watertight=False)["t"][0] != t
    with pytest.raises(TypeError, match="unexpected keyword argument 'side'"):
        bvh.pick(view, projection, viewport, [[400, 300]], side="front")


def test_progress_is_reported_and_can_stop_a_batch():
    mesh = meshray.Mesh.load(ASSET)
    bvh = meshray.BVH(mesh)
    origins, directions = random_rays(mesh.vertices, 200_000, np.random.default_rng(10))
    calls = []
    with_progress = bvh.cast(origins, directions, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(65536, 200000), (131072, 200000), (196608, 200000), (200000, 200000)]
    np.testing.assert_array_equal(with_progress["t"], bvh.cast(origins, directions)["t"])

    def stop(done, total):
        raise KeyboardInterrupt("stop")

    with pytest.raises(KeyboardInterrupt):
        bvh.cast(origins, directions, progress=stop)


def test_progress_true_shows_a_tqdm_bar(monkeypatch):
    mesh = meshray.Mesh.load(ASSET)
    bvh = meshray.BVH(mesh)
    origins, directions = random_rays(mesh.vertices, 150_000, np.random.default_rng(11))
    events = []

    class Bar:
        """Records what a tqdm bar is told (the real one draws on stderr)."""

        def __init__(self, total, unit, unit_scale):
            events.append(("total", total, unit))

        def update(self, n):
            events.append(n)

        def close(self):
            events.append("closed")

    fake = types.ModuleType("tqdm")
    fake.tqdm = Bar
    monkeypatch.setitem(sys.modules, "tqdm", fake)
    bvh.cast(origins, directions, progress=True)
    assert events == [("total", 150_000, "ray"), 65536, 65536, 150_000 - 131072, "closed"]
    events.clear()
    bvh.cast(origins, directions, progress=False)
    assert events == []
    # Without tqdm: a warning that says so, and the answers all the same.
    monkeypatch.setitem(sys.modules, "tqdm", None)
    with pytest.warns(UserWarning, match="tqdm"):
        hits = bvh.cast(origins, directions, progress=True)
    np.testing.assert_array_equal(hits["t"], bvh.cast(origins, directions)["t"])
    with pytest.raises(ValueError, match="progress"):
        bvh.cast(origins, directions, progress="yes")
