"""The Open3D drop-in's `add_triangles(mesh)` on meshes shaped as Open3D's are (their arrays
as numpy: these run without Open3D; tests/test_open3d.py repeats them on Open3D's own)."""

from types import SimpleNamespace

import numpy as np
import pytest

from meshray.open3d import RaycastingScene

# Open3D's create_box: its corners and triangles, typed as it gives them (float32 positions,
# int64 indices).
CORNERS = np.array(
    [[0, 0, 0], [1, 0, 0], [0, 0, 1], [1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 1, 1], [1, 1, 1]],
    np.float32,
)
FACES = np.array(
    [[4, 7, 5], [4, 6, 7], [0, 2, 4], [2, 6, 4], [0, 1, 2], [1, 3, 2],
     [1, 5, 7], [1, 7, 3], [2, 3, 7], [2, 7, 6], [0, 4, 1], [1, 4, 5]],
    np.int64,
)
RAYS = np.array([[0.25, 0.5, -1, 0, 0, 1], [0.25, 0.5, 0.5, 0, 0, 1], [10, 10, 10, 1, 0, 0]], np.float32)


def tensor_mesh(positions, indices):
    return SimpleNamespace(
        vertex=SimpleNamespace(positions=positions), triangle=SimpleNamespace(indices=indices)
    )


def legacy_mesh(vertices, triangles):
    return SimpleNamespace(vertices=vertices, triangles=triangles)


def counts(scene):
    found = scene.count_intersections(RAYS)
    return found.numpy() if hasattr(found, "numpy") else found


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint64, np.uint32, np.int16])
def test_any_integer_indices_are_taken(dtype):
    scene = RaycastingScene()
    assert scene.add_triangles(tensor_mesh(CORNERS, FACES.astype(dtype))) == 0
    np.testing.assert_array_equal(counts(scene), [2, 1, 0])


def test_a_legacy_mesh_is_converted():
    scene = RaycastingScene()
    scene.add_triangles(legacy_mesh(CORNERS.astype(np.float64), FACES.astype(np.int32)))
    np.testing.assert_array_equal(counts(scene), [2, 1, 0])


def test_what_open3d_refuses_of_a_mesh_is_refused():
    with pytest.raises(ValueError, match="vertex positions: expected float32"):
        RaycastingScene().add_triangles(tensor_mesh(CORNERS.astype(np.float64), FACES))
    with pytest.raises(ValueError, match="triangle indices: expected integers"):
        RaycastingScene().add_triangles(tensor_mesh(CORNERS, FACES.astype(np.float32)))
    with pytest.raises(ValueError, match="expected vertex positions and triangle indices"):
        RaycastingScene().add_triangles(CORNERS)
    for bad in (-1, 8, 2**32):
        faces = FACES.copy()
        faces[5, 2] = bad
        with pytest.raises(ValueError, match=r"must lie in 0\.\.7 \(it has 8 vertices\)"):
            RaycastingScene().add_triangles(tensor_mesh(CORNERS, faces))


def test_a_copy_is_the_same_scene_and_independent():
    """Open3D's copy constructor and `copy.deepcopy`: the same answers, then adding a
    geometry to the copy leaves the original as it was."""
    import copy

    scene = RaycastingScene()
    scene.add_triangles(tensor_mesh(CORNERS, FACES))
    for clone in (RaycastingScene(scene), copy.deepcopy(scene), copy.copy(scene)):
        np.testing.assert_array_equal(counts(clone), counts(scene))
        above = np.array([[0, 0, 2], [1, 0, 2], [0, 1, 2]], np.float32)
        assert clone.add_triangles(above, np.array([[0, 1, 2]], np.uint32)) == 1
        np.testing.assert_array_equal(counts(clone), [3, 2, 0])
        np.testing.assert_array_equal(counts(scene), [2, 1, 0])
    empty = RaycastingScene(RaycastingScene())
    np.testing.assert_array_equal(counts(empty), [0, 0, 0])
