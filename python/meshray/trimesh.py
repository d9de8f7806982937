"""trimesh's ray API on meshray, so trimesh code switches in one line:

    mesh.ray = meshray.trimesh.RayMeshIntersector(mesh)

after which `mesh.ray.intersects_location(...)`, `intersects_first`, `intersects_any`,
`intersects_id` and `contains_points` answer from meshray's BVH (built once, here): the
answers of testing every triangle, each hit of each ray reported once, nearest first.
"""

import numpy as np

from . import BVH, from_trimesh

__all__ = ["RayMeshIntersector"]


class RayMeshIntersector:
    """A drop-in for `trimesh.ray.ray_triangle.RayMeshIntersector` (and trimesh's embree
    one) over meshray."""

    def __init__(self, mesh, quality="default"):
        self.mesh = mesh
        self.bvh = BVH(from_trimesh(mesh), quality=quality)

    def intersects_first(self, ray_origins, ray_directions, **kwargs):
        """The first triangle each ray hits, -1 for a miss."""
        return self.bvh.cast(ray_origins, ray_directions)["triangle"]

    def intersects_any(self, ray_origins, ray_directions, **kwargs):
        """Whether each ray hits the mesh."""
        return self.bvh.occluded(ray_origins, ray_directions)

    def intersects_id(
        self,
        ray_origins,
        ray_directions,
        multiple_hits=True,
        max_hits=None,
        return_locations=False,
        **kwargs,
    ):
        """`(index_tri, index_ray)`, and the locations with `return_locations`: every hit of
        every ray (at most `max_hits` each, nearest first), or only the first with
        `multiple_hits=False`. With locations, hits at the same place on the same ray count
        once, as in trimesh."""
        origins = np.asarray(ray_origins, dtype=np.float64).reshape(-1, 3)
        directions = np.asarray(ray_directions, dtype=np.float64).reshape(-1, 3)
        if multiple_hits:
            hits = self.bvh.cast_all(origins, directions)
            ray, tri, t = hits["ray"], hits["triangle"], hits["t"]
            if max_hits is not None:
                # Rank of each hit along its ray (hits come sorted by ray, then t).
                start = np.searchsorted(ray, ray, side="left")
                keep = np.arange(len(ray)) - start < max_hits
                ray, tri, t = ray[keep], tri[keep], t[keep]
        else:
            first = self.bvh.cast(origins, directions)
            ray = np.flatnonzero(first["triangle"] >= 0)
            tri, t = first["triangle"][ray], first["t"][ray]
        if not return_locations:
            return tri, ray
        locations = origins[ray] + t[:, None].astype(np.float64) * directions[ray]
        if len(ray):
            # As trimesh does: one hit per place per ray (coplanar triangles and shared
            # edges hit at the same point count once), the nearest triangle kept.
            key = np.column_stack((ray, np.round(locations, 8)))
            first = np.sort(np.unique(key, axis=0, return_index=True)[1])
            tri, ray, locations = tri[first], ray[first], locations[first]
        return tri, ray, locations

    def intersects_location(self, ray_origins, ray_directions, multiple_hits=True, **kwargs):
        """`(locations, index_ray, index_tri)` of the hits, as trimesh returns them."""
        tri, ray, locations = self.intersects_id(
            ray_origins, ray_directions, multiple_hits=multiple_hits, return_locations=True
        )
        return locations, ray, tri

    def contains_points(self, points):
        """Whether each point is inside the (closed) mesh."""
        return self.bvh.contains(points)
