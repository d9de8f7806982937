"""Type stubs for meshray (the native module `meshray._meshray`)."""

from os import PathLike
from typing import Callable, Dict, Literal, Optional, Sequence, Union, final

from typing_extensions import Self

import numpy as np
import numpy.typing as npt

__all__ = ["BVH", "Geometry", "Mesh", "MeshrayError", "Scene", "from_trimesh", "from_open3d", "gpu_stats"]

_Array = npt.ArrayLike
_Vec3 = Sequence[float]

class MeshrayError(Exception):
    """An error meshray reports: a malformed file, a mesh it refuses, a bad saved BVH."""

@final
class Mesh:
    """A triangle mesh: vertex positions and index triples."""

    def __new__(cls, vertices: _Array, faces: _Array) -> "Mesh":
        """From an (n, 3) array of positions and an (m, 3) array of vertex indices."""
    @staticmethod
    def load(path: Union[str, PathLike]) -> "Mesh":
        """Reads OBJ, STL, PLY or glTF/GLB (by extension)."""
    @property
    def vertices(self) -> npt.NDArray[np.float32]: ...
    @property
    def faces(self) -> npt.NDArray[np.int64]: ...
    @property
    def triangle_count(self) -> int: ...

class Geometry:
    """What BVH and Scene share: every query (a scene's answers add an instance column)."""

    def cast(
        self,
        origins: _Array,
        directions: _Array,
        *,
        any_hit: bool = False,
        progress: Union[bool, Callable[[int, int], object], None] = None,
        device: Literal["cpu", "gpu"] = "cpu",
        t_min: float = 0.0,
        t_max: float = float("inf"),
        watertight: bool = True,
        cull: Literal["none", "back", "front"] = "none",
    ) -> Dict[str, np.ndarray]:
        """One ray per row: t (inf on a miss), instance (a scene's, -1), triangle (-1), u, v, point, normal.
        device="gpu" (a BVH's rays, watertight, no culling): cast on the GPU, the same answers."""
    def pick(
        self,
        view: _Array,
        projection: _Array,
        viewport: Sequence[float],
        pixels: _Array,
        *,
        t_min: float = 0.0,
        t_max: float = float("inf"),
        watertight: bool = True,
        cull: Literal["none", "back", "front"] = "none",
    ) -> Dict[str, np.ndarray]:
        """Casts the camera rays through pixels (x, y); the same dict as cast."""
    def all_hits(
        self,
        origin: _Vec3,
        direction: _Vec3,
        *,
        t_min: float = 0.0,
        t_max: float = float("inf"),
        watertight: bool = True,
        cull: Literal["none", "back", "front"] = "none",
    ) -> Dict[str, np.ndarray]:
        """Every hit of one ray, nearest first: t, instance (a scene's), triangle, u, v."""
    def occluded(
        self,
        origins: _Array,
        directions: _Array,
        *,
        t_min: float = 0.0,
        t_max: float = float("inf"),
        watertight: bool = True,
        cull: Literal["none", "back", "front"] = "none",
    ) -> npt.NDArray[np.bool_]:
        """Whether each ray hits anything in its range (no details)."""
    def cast_spheres(
        self,
        origins: _Array,
        directions: _Array,
        radius: float,
        *,
        axis: Optional[Sequence[float]] = None,
        t_min: float = 0.0,
        t_max: float = float("inf"),
        watertight: bool = True,
        cull: Literal["none", "back", "front"] = "none",
    ) -> Dict[str, np.ndarray]:
        """Where a sphere (a capsule with `axis`) moving along each ray first touches:
        t (inf on none), instance (a scene's), triangle, point, normal, u, v."""
    def intersecting_triangles(
        self, other: Self, transform: Optional[_Array] = None
    ) -> npt.NDArray[np.int64]:
        """Pairs of intersecting triangles of this and `other` (the same kind), sorted,
        exact: `(k, 2)` (triangle, other's) for a BVH, `(k, 4)` (instance, triangle,
        other's instance, triangle) for a Scene."""
    def intersects(self, other: Self, transform: Optional[_Array] = None) -> bool:
        """Whether any triangle meets one of `other` placed by `transform` (stops at the
        first pair)."""
    def self_intersections(self) -> npt.NDArray[np.int64]:
        """Pairs of the geometry's own triangles that intersect (a mesh's neighbours left
        out), as `intersecting_triangles` gives them."""
    def count_hits(
        self,
        origins: _Array,
        directions: _Array,
        *,
        t_min: float = 0.0,
        t_max: float = float("inf"),
        watertight: bool = True,
        cull: Literal["none", "back", "front"] = "none",
    ) -> npt.NDArray[np.int32]:
        """How many triangles each ray hits (cast_all's count per ray, without the hits)."""
    def cast_all(
        self,
        origins: _Array,
        directions: _Array,
        *,
        t_min: float = 0.0,
        t_max: float = float("inf"),
        watertight: bool = True,
        cull: Literal["none", "back", "front"] = "none",
    ) -> Dict[str, np.ndarray]:
        """Every hit of every ray, flattened: ray, t, instance (a scene's), triangle, u, v."""
    def closest_points(self, points: _Array, max_distance: float = float("inf")) -> Dict[str, np.ndarray]:
        """Per point: point (NaN if none near), instance (a scene's), triangle (-1), distance (inf), u, v."""
    def winding_numbers(self, points: _Array, beta: float = 2.0, exact: bool = False) -> npt.NDArray[np.float64]:
        """Generalized winding number per point (fast far-field sum, or exact)."""
    def contains(self, points: _Array, method: str = "winding") -> npt.NDArray[np.bool_]:
        """Inside: winding number >= 1/2 ("winding"), or ray crossing parity ("parity")."""
    def signed_distance(self, points: _Array, max_distance: float = float("inf")) -> npt.NDArray[np.float64]:
        """Distance to the surface, negative inside; NaN when nothing is within max_distance."""

@final
class BVH(Geometry):
    """A bounding volume hierarchy over a mesh: build once, cast many rays."""

    def __new__(cls, mesh: Mesh, quality: Literal["fast", "default", "high"] = "default") -> "BVH": ...
    @property
    def mesh(self) -> Mesh: ...
    @property
    def triangle_normals(self) -> npt.NDArray[np.float32]:
        """Each triangle's unit normal, (m, 3): cast's normal."""
    def select_frustum(
        self, view: _Array, projection: _Array, viewport: Sequence[float], a: Sequence[float], b: Sequence[float]
    ) -> npt.NDArray[np.int64]:
        """Triangles in the frustum under a screen rectangle, hidden ones included."""
    def visible(
        self,
        view: _Array,
        projection: _Array,
        viewport: Sequence[float],
        a: Sequence[float],
        b: Sequence[float],
        samples: int = 1,
    ) -> npt.NDArray[np.int64]:
        """Triangles seen through a screen rectangle (samples x samples rays per pixel)."""
    def select_box(self, lo: _Vec3, hi: _Vec3) -> npt.NDArray[np.int64]: ...
    def select_sphere(self, centre: _Vec3, radius: float) -> npt.NDArray[np.int64]: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> "BVH": ...

@final
class Scene(Geometry):
    """BVHs placed by 4 x 4 transforms, queried together in world space."""

    def __new__(cls) -> "Scene": ...
    def add(self, bvh: BVH, transform: Optional[_Array] = None) -> int: ...
    def set_transform(self, id: int, transform: _Array) -> None: ...
    def remove(self, id: int) -> None: ...
    def __len__(self) -> int: ...

def gpu_stats() -> Dict[str, Union[str, int]]:
    """The GPU's adapter (name, backend, device_type) and the rays cast on it in this process:
    rays, flagged (cast again on the CPU), narrowed (finished by the CPU's exact tests)."""

def from_trimesh(mesh: object) -> Mesh:
    """A Mesh from a trimesh.Trimesh."""

def from_open3d(mesh: object) -> Mesh:
    """A Mesh from an Open3D TriangleMesh (tensor or legacy)."""
