//! What a tree costs and whether it is sound: for judging builds, drawing cost heatmaps and
//! checking a tree that came from elsewhere. Nothing here is needed to answer a query; the
//! tree's statistics ([`Stats`], from [`Bvh::stats`]) say when a refitted tree should be
//! rebuilt.

use crate::bvh::Bvh;
pub use crate::bvh::{MeasuredCost, QueryCost, Stats};
use crate::{Hit, QueryOptions, Ray, Result};

/// [`RayCast::closest_hit`](crate::query::RayCast::closest_hit), also reporting what the query cost: the boxes and
/// triangles it tested (every triangle of each packet of four it reached). For cost
/// heatmaps and for judging a tree; the same answer, from the walk's portable twin,
/// which visits the same nodes in the same order as the walk `closest_hit` runs (and so
/// runs slower than it).
///
/// ```
/// use meshray::diagnostics::closest_hit_with_cost;
/// use meshray::prelude::*;
/// use meshray::{Bvh, Mesh, QueryOptions, Ray};
/// use nalgebra::{Point3, Vector3};
///
/// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
/// let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), Vector3::new(0.0, 0.0, -1.0));
/// let (hit, cost) = closest_hit_with_cost(&bvh, &ray, &QueryOptions::default());
/// assert_eq!(hit, bvh.closest_hit(&ray, &QueryOptions::default()));
/// assert!(cost.boxes > 0 && cost.triangles > 0 && (cost.triangles as usize) < bvh.mesh().triangle_count());
/// # Ok::<(), meshray::Error>(())
/// ```
pub fn closest_hit_with_cost(
    bvh: &Bvh,
    ray: &Ray,
    options: &QueryOptions,
) -> (Option<Hit>, QueryCost) {
    bvh.closest_hit_with_cost(ray, options)
}

/// What a closest-hit query tests per ray over 4,096 standard random rays: from points on
/// the sphere of 1.5 times the bounds' half diagonal about their centre to points in the
/// bounds, seeded, so the same bounds give the same rays (a millisecond or two). Compare
/// builds, or a refitted tree with a rebuilt one, of the same mesh with it; for rays of
/// your own, sum [`closest_hit_with_cost`]'s answers.
///
/// ```
/// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
/// let cost = meshray::diagnostics::measured_cost(&bvh);
/// assert!(cost.boxes_per_ray > 0.0 && cost.triangles_per_ray < 100.0);
/// # Ok::<(), meshray::Error>(())
/// ```
pub fn measured_cost(bvh: &Bvh) -> MeasuredCost {
    bvh.measured_cost()
}

/// Checks every invariant of the tree, in O(n): children lie in range, after their parent
/// in the array and inside their parent's box, every node is reached once and uses two to eight lanes (packed first,
/// unused lanes empty), leaves hold 1 to `max_leaf_size` triangles in packets of their
/// own (unused packet lanes empty), each leaf's box is exactly the box of its triangles,
/// every mesh triangle sits in exactly one leaf, the stored leaf triangles match the mesh, there are at most `n` nodes, the depth fits
/// the traversal stack, the mesh itself is valid (indices in range, every used coordinate
/// finite and within ±[`Mesh::MAX_COORDINATE`](crate::Mesh::MAX_COORDINATE)) and the SAH
/// cost is finite. Builds run it in debug builds; tests run it after every build.
///
/// ```
/// let mesh = meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
/// meshray::diagnostics::validate(&meshray::Bvh::build(mesh))?;
/// # Ok::<(), meshray::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidBvh`](crate::Error::InvalidBvh) naming the first broken invariant.
pub fn validate(bvh: &Bvh) -> Result<()> {
    bvh.validate()
}
