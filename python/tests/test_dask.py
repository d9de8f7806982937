"""meshray.dask on a LocalCluster of two worker processes: the answer is exactly the
single-process one, and each worker builds or loads the BVH once, not once per chunk."""

import numpy as np
import pytest

import meshray

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
import dask.array as da  # noqa: E402

import meshray.dask  # noqa: E402

from test_meshray import ASSET, random_rays  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None
    )
    with distributed.Client(cluster) as client:
        yield client
    cluster.close()


def loads_per_worker(client):
    return client.run(lambda: __import__("meshray.dask").dask.loads)


def test_dask_cast_equals_one_process(client, tmp_path):
    mesh = meshray.Mesh.load(ASSET)
    bvh = meshray.BVH(mesh)
    origins, directions = random_rays(mesh.vertices, 20_000, np.random.default_rng(7))
    want = bvh.cast(origins, directions)
    o = da.from_array(origins, chunks=(1000, 3))
    d = da.from_array(directions, chunks=(1000, 3))
    before = loads_per_worker(client)
    # From a BVH object, a mesh file and a saved BVH file.
    saved = tmp_path / "scene.meshray"
    saved.write_bytes(bvh.to_bytes())
    for source in [bvh, ASSET, saved]:
        got = dask.compute(meshray.dask.cast(source, o, d))[0]
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=f"{name} from {source}")
            assert got[name].dtype == want[name].dtype
    after = loads_per_worker(client)
    # Twenty chunks per source, three sources: at most one load per source and worker.
    assert len(after) == 2
    for worker, count in after.items():
        assert count - before[worker] <= 3, f"{worker} loaded {count - before[worker]} times"
    assert sum(after.values()) - sum(before.values()) >= 3
    # Options pass through.
    far = dask.compute(meshray.dask.cast(bvh, o, d, t_max=0.5, any_hit=True))[0]
    np.testing.assert_array_equal(far["triangle"], bvh.cast(origins, directions, t_max=0.5, any_hit=True)["triangle"])


def test_dask_cast_refuses_bad_shapes():
    bvh = meshray.BVH(meshray.Mesh.load(ASSET))
    with pytest.raises(ValueError, match=r"\(n, 3\)"):
        meshray.dask.cast(bvh, da.zeros((10, 2)), da.zeros((10, 2)))
