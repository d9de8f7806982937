"""meshray: exact, fast ray casting against triangle meshes (a BVH written in Rust).

    >>> import numpy as np, meshray
    >>> vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float32)
    >>> bvh = meshray.BVH(meshray.Mesh(vertices, np.array([[0, 1, 2]])))
    >>> hits = bvh.cast(np.array([[0.2, 0.2, 1.0]]), np.array([[0.0, 0.0, -1.0]]))
    >>> float(hits["t"][0]), int(hits["triangle"][0])
    (1.0, 0)

Several meshes, or one mesh placed many times, go in a `Scene`, each instance with a 4 x 4
transform (row-major; one BVH placed twice is not copied):

    >>> scene = meshray.Scene()
    >>> scene.add(bvh)
    0
    >>> scene.add(bvh, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.5], [0, 0, 0, 1]])
    1
    >>> hits = scene.cast(np.array([[0.2, 0.2, 1.0]]), np.array([[0.0, 0.0, -1.0]]))
    >>> int(hits["instance"][0]), float(hits["t"][0])
    (1, 0.5)

Every batch runs on all cores with the GIL released. Answers are those of testing every
triangle (in float32, the nearest hit's ties going to the lowest triangle number).
"""

from ._meshray import BVH, Geometry, Mesh, MeshrayError, Scene, gpu_stats

__all__ = ["BVH", "Geometry", "Mesh", "MeshrayError", "Scene", "from_trimesh", "from_open3d", "gpu_stats"]


def from_trimesh(mesh):
    """A `Mesh` from a `trimesh.Trimesh` (its vertices and faces, as they are)."""
    return Mesh(mesh.vertices, mesh.faces)


def from_open3d(mesh):
    """A `Mesh` from an Open3D triangle mesh: the tensor `open3d.t.geometry.TriangleMesh`
    (its `vertex.positions` and `triangle.indices`) or the legacy
    `open3d.geometry.TriangleMesh` (`vertices` and `triangles`)."""
    if hasattr(mesh, "vertex"):
        return Mesh(mesh.vertex.positions.numpy(), mesh.triangle.indices.numpy())
    import numpy as np

    return Mesh(np.asarray(mesh.vertices), np.asarray(mesh.triangles))
