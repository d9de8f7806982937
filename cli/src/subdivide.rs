//! Bigger meshes for the scaling runs, made at run time: each level splits every triangle
//! into four at its edge midpoints, so the surface stays the same and the count grows 4×.

use meshray::Mesh;
use nalgebra::Point3;

/// `mesh` with every triangle split `levels` times (×4 triangles per level). Neighbours
/// still share their edges' points exactly; corners are duplicated per triangle, which ray
/// casting does not mind.
pub fn subdivide(mesh: &Mesh, levels: u32) -> Mesh {
    let mut triangles: Vec<[Point3<f32>; 3]> = (0..mesh.triangle_count())
        .map(|i| mesh.triangle(i))
        .collect();
    for _ in 0..levels {
        let mut next = Vec::with_capacity(triangles.len() * 4);
        for [a, b, c] in triangles {
            let (ab, bc, ca) = (midpoint(&a, &b), midpoint(&b, &c), midpoint(&c, &a));
            next.extend([[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]);
        }
        triangles = next;
    }
    let positions: Vec<Point3<f32>> = triangles.iter().flatten().copied().collect();
    let indices = (0..triangles.len() as u32)
        .map(|t| [3 * t, 3 * t + 1, 3 * t + 2])
        .collect();
    Mesh::from_buffers(positions, indices).expect("a subdivided valid mesh is valid")
}

/// The midpoint in f64 (exact for f32 inputs), rounded once; addition commutes, so both
/// triangles along an edge get the same point.
fn midpoint(p: &Point3<f32>, q: &Point3<f32>) -> Point3<f32> {
    ((p.cast::<f64>().coords + q.cast::<f64>().coords) * 0.5)
        .cast::<f32>()
        .into()
}
