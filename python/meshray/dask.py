"""Ray batches across a Dask cluster: the rays are a dask array, each worker process gets the
BVH once (not once per chunk), and the answer is the one a single process gives.

    >>> import dask.array as da, numpy as np, meshray, meshray.dask
    >>> vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float32)
    >>> bvh = meshray.BVH(meshray.Mesh(vertices, np.array([[0, 1, 2]])))
    >>> origins = da.from_array(np.tile([[0.2, 0.2, 1.0]], (10, 1)), chunks=(4, 3))
    >>> directions = da.from_array(np.tile([[0.0, 0.0, -1.0]], (10, 1)), chunks=(4, 3))
    >>> hits = meshray.dask.cast(bvh, origins, directions)
    >>> hits["t"].compute().tolist() == [1.0] * 10
    True

The source is a `BVH` (its bytes, `BVH.to_bytes`, go into the task graph once and reach each
worker once), or a path every worker can read: a mesh file (each worker builds its BVH once)
or a file of `BVH.to_bytes` bytes ending in `.meshray` (each worker loads it once, which is
faster than building for big meshes). With a `distributed` cluster, run
`meshray.dask.cast(...)` while a `Client` is connected: workers need this package installed
(`pip install ./python`) and, for a path, the file at that path.
"""

import os
import threading

import numpy as np

from . import BVH, Mesh

__all__ = ["cast", "loads"]

_cache: dict = {}
_lock = threading.Lock()

#: How many BVHs this process has built or loaded for `cast` (a worker's count shows that
#: the BVH came once, not once per chunk).
loads = 0

# The columns of one packed block: every answer as float64 (exact for float32 values and for
# triangle numbers below 2^53).
_COLUMNS = {"t": 0, "triangle": 1, "u": 2, "v": 3, "point": slice(4, 7), "normal": slice(7, 10)}


def _bvh(token, source, quality):
    """This process's BVH for `token`, built or loaded on first use."""
    global loads
    with _lock:
        bvh = _cache.get(token)
        if bvh is None:
            if isinstance(source, bytes):
                bvh = BVH.from_bytes(source)
            elif str(source).endswith(".meshray"):
                with open(source, "rb") as f:
                    bvh = BVH.from_bytes(f.read())
            else:
                bvh = BVH(Mesh.load(source), quality=quality)
            _cache[token] = bvh
            loads += 1
        return bvh


def _cast_block(origins, directions, token, source, quality, options):
    hits = _bvh(token, source, quality).cast(origins, directions, **options)
    packed = np.empty((len(origins), 10))
    for name, column in _COLUMNS.items():
        packed[:, column] = hits[name]
    return packed


def cast(source, origins, directions, *, quality="default", **options):
    """`BVH.cast` over dask arrays of rays: `origins` and `directions` are `(n, 3)` dask
    arrays (or anything `dask.array.asarray` takes), chunked the same way along rows; the
    options are `BVH.cast`'s (`t_min`, `t_max`, `any_hit`, `watertight`, `cull`). Returns a
    dict of lazy dask arrays `t`, `triangle`, `u`, `v`, `point`, `normal`, with `BVH.cast`'s
    dtypes and meanings. `quality` applies when the source is a mesh file."""
    import dask
    import dask.array as da
    from dask.base import tokenize

    if isinstance(source, BVH):
        payload = source.to_bytes()
        token = tokenize(payload)
    else:
        payload = os.fspath(source)
        token = tokenize(payload, os.stat(payload).st_mtime_ns, quality)
    # One task holds the source; every chunk depends on it, so it travels once per worker.
    source_key = dask.delayed(payload, pure=True)
    origins = da.asarray(origins)
    directions = da.asarray(directions)
    if origins.ndim != 2 or origins.shape[1] != 3 or directions.shape != origins.shape:
        raise ValueError(
            f"origins and directions must both be (n, 3), got {origins.shape} and {directions.shape}"
        )
    origins = origins.rechunk({1: 3})
    directions = directions.rechunk(origins.chunks)
    packed = da.map_blocks(
        _cast_block,
        origins,
        directions,
        token,
        source_key,
        quality,
        options,
        chunks=(origins.chunks[0], (10,)),
        dtype=np.float64,
        meta=np.empty((0, 10)),
    )
    return {
        "t": packed[:, 0].astype(np.float32),
        "triangle": packed[:, 1].astype(np.int64),
        "u": packed[:, 2].astype(np.float32),
        "v": packed[:, 3].astype(np.float32),
        "point": packed[:, 4:7].astype(np.float32),
        "normal": packed[:, 7:10].astype(np.float32),
    }
