"""The installed Python wheel works where no Rust toolchain is: run by `.ci/run` in fresh virtual
environments (several CPython versions, one abi3 wheel) with cargo and rustc off PATH.
Not a pytest module: a script, so it runs without pytest installed."""

import shutil
import sys

import numpy as np

import meshray

assert shutil.which("cargo") is None and shutil.which("rustc") is None, "a Rust toolchain is on PATH"
vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float32)
bvh = meshray.BVH(meshray.Mesh(vertices, np.array([[0, 1, 2]])))
hits = bvh.cast(np.array([[0.2, 0.2, 1.0], [2.0, 2.0, 1.0]]), np.array([[0.0, 0.0, -1.0]] * 2))
assert hits["t"].tolist() == [1.0, float("inf")] and hits["triangle"].tolist() == [0, -1], hits
print(f"meshray {meshray.__file__} works on Python {sys.version.split()[0]}, no Rust on PATH")
