"""`BVH.cast(..., device="gpu")`: the rays cast on the GPU (Vulkan: a hardware driver, or Mesa's
lavapipe on the CPU in CI) answer exactly as `device="cpu"` does, every array bit for bit
(an any hit: the same rays hit); bad arguments are refused. Without a Vulkan adapter these
tests are skipped, except under CI=true, where that is a failure."""

import os

import numpy as np
import pytest

import meshray
from test_meshray import ASSET, random_rays, shared


def gpu_or_skip(bvh, o, d):
    """A first GPU cast, or a skip (a failure under CI=true) where there is no adapter."""
    try:
        return bvh.cast(o, d, device="gpu")
    except meshray.MeshrayError as e:
        if "no Vulkan adapter" not in str(e) and "no GPU support" not in str(e):
            raise
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and the GPU cast is unavailable: {e}")
        pytest.skip(str(e))


def rays_with_bad_ones(mesh, n, seed):
    o, d = random_rays(mesh.vertices, n, np.random.default_rng(seed))
    nan, inf = np.float32("nan"), np.float32("inf")
    bad_o = np.array([[nan, 0, 0], [0, 1, 5], [inf, 1, 5], [0, 1, 5], [0, 1, 5]], np.float32)
    bad_d = np.array([[0, 0, 1], [0, nan, -1], [0, 0, -1], [0, 0, 0], [1e-30, 0, -1]], np.float32)
    return np.concatenate([o, bad_o]), np.concatenate([d, bad_d])


def assert_same(got, want):
    assert set(got) == set(want)
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)


@pytest.mark.parametrize("name", [None, "stanford-bunny/stanford-bunny.obj"])
def test_the_gpus_answers_are_the_cpus(name):
    mesh = meshray.Mesh.load(ASSET if name is None else shared(name))
    bvh = meshray.BVH(mesh)
    o, d = rays_with_bad_ones(mesh, 20_000, 3)
    gpu_or_skip(bvh, o[:1], d[:1])
    before = meshray.gpu_stats()
    got = bvh.cast(o, d, device="gpu")
    want = bvh.cast(o, d)
    assert_same(got, want)
    # The rays went to the GPU: counted there, few flagged for the CPU's own cast.
    stats = meshray.gpu_stats()
    assert stats["name"] and stats["backend"] == "Vulkan"
    assert stats["rays"] - before["rays"] == len(o)
    assert stats["flagged"] - before["flagged"] < len(o) // 100
    assert np.isfinite(want["t"]).sum() > 5_000
    # Ranges: a later start and an earlier end, for every ray.
    assert_same(bvh.cast(o, d, device="gpu", t_min=0.4, t_max=0.9), bvh.cast(o, d, t_min=0.4, t_max=0.9))
    # Any hit: the same rays hit, each hit on a triangle the ray meets at its t.
    any_gpu = bvh.cast(o, d, any_hit=True, device="gpu")
    any_cpu = bvh.cast(o, d, any_hit=True)
    np.testing.assert_array_equal(any_gpu["triangle"] >= 0, any_cpu["triangle"] >= 0)
    hit = any_gpu["triangle"] >= 0
    np.testing.assert_allclose(any_gpu["point"][hit], o[hit] + any_gpu["t"][hit, None] * d[hit], rtol=1e-5, atol=1e-5)


def test_a_progress_report_and_blocks_as_on_the_cpu():
    bvh = meshray.BVH(meshray.Mesh.load(ASSET))
    o, d = random_rays(bvh.mesh.vertices, 70_000, np.random.default_rng(4))
    gpu_or_skip(bvh, o[:1], d[:1])
    seen = []
    got = bvh.cast(o, d, device="gpu", progress=lambda done, total: seen.append((done, total)))
    assert seen == [(65_536, 70_000), (70_000, 70_000)]
    assert_same(got, bvh.cast(o, d))


def test_bad_devices_and_options_are_refused():
    bvh = meshray.BVH(meshray.Mesh.load(ASSET))
    o, d = random_rays(bvh.mesh.vertices, 10, np.random.default_rng(5))
    with pytest.raises(ValueError, match="device"):
        bvh.cast(o, d, device="tpu")
    with pytest.raises(ValueError, match="watertight"):
        bvh.cast(o, d, device="gpu", cull="back")
    with pytest.raises(ValueError, match="watertight"):
        bvh.cast(o, d, device="gpu", watertight=False)
    scene = meshray.Scene()
    scene.add(bvh, np.eye(4))
    with pytest.raises(ValueError, match="scene"):
        scene.cast(o, d, device="gpu")
