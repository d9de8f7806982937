//! What a compact ray query asks of a ray: the closest hit, or any hit.

/// What [`RayCast::cast_ray`](crate::query::RayCast::cast_ray) and
/// [`RayCast::cast_rays`](crate::query::RayCast::cast_rays) ask of each ray.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RayQuery {
    /// The nearest hit, as [`RayCast::closest_hit`](crate::query::RayCast::closest_hit)
    /// finds it.
    #[default]
    Closest,
    /// Whether the ray hits anything: the first hit found, as
    /// [`RayCast::any_hit`](crate::query::RayCast::any_hit) finds it (shadow rays, lines of
    /// sight). Faster than [`RayQuery::Closest`], since the walk stops at the first hit.
    Any,
}
