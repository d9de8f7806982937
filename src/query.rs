//! One query surface for a mesh's tree ([`Bvh`]) and a scene of placed meshes ([`Scene`]):
//! the options and answers every query shares, and two traits, [`RayCast`] for rays and
//! [`PointQuery`] for points, so code written once over either trait serves both (the
//! bindings, picking, and queries added later).
//!
//! As parry answers a `TriMesh` and a `Compound` through its `RayCast` and `PointQuery`
//! traits: each trait asks for a few methods, which the types' own walks answer (static
//! dispatch: nothing is boxed, nothing walks twice), and provides the rest on top of them.
//! The compact answers ([`CompactHit`], [`SceneCompactHit`]) read nothing of the mesh beyond
//! the walk; [`RayCast::hit_details`] makes one whole ([`Hit`], [`SceneHit`]).
//!
//! ```
//! use meshray::query::{PointQuery, RayCast, RayQuery};
//! use meshray::{Bvh, Mesh, Ray, Scene};
//! use nalgebra::{Matrix4, Point3, Vector3};
//! use std::sync::Arc;
//!
//! /// How far each ray travels before it meets something, for a mesh or a scene alike.
//! fn depths<G: RayCast>(geometry: &G, rays: &[Ray], options: &G::Options<'_>) -> Vec<Option<f32>> {
//!     rays.iter()
//!         .map(|ray| geometry.cast_ray(ray, RayQuery::Closest, options).map(|h| G::distance(&h)))
//!         .collect()
//! }
//!
//! let bvh = Arc::new(Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?));
//! let mut scene = Scene::new();
//! scene.add(bvh.clone(), Matrix4::identity())?;
//! let rays = [Ray::new(Point3::new(0.0, 1.0, 10.0), -Vector3::z())];
//! // One instance placed where the mesh is: the same answers, bit for bit.
//! assert_eq!(depths(&*bvh, &rays, &Default::default()), depths(&scene, &rays, &Default::default()));
//! // Points too: the sphere's centre is inside the closed sphere, in both.
//! let centre = Point3::new(0.0, 1.0, 0.0);
//! assert!(PointQuery::contains(&*bvh, centre, &Default::default()));
//! assert!(PointQuery::contains(&scene, centre, &Default::default()));
//! # Ok::<(), meshray::Error>(())
//! ```

use crate::Ray;
use crate::bvh::Bvh;
pub use crate::bvh::{ClosestPoint, CompactHit, Hit, RayQuery};
use crate::scene::Scene;
use crate::scene::in_hit_order;
pub use crate::scene::{InstanceId, SceneClosestPoint, SceneHit, SceneOptions};
pub use crate::triangle::{Culling, QueryOptions};
pub use crate::winding::WindingAccuracy;
use nalgebra::Point3;

/// A scene's compact answer to a ray: the instance hit and the hit in its mesh (the
/// triangle is the instance's mesh's; `t` is the world ray's, since an instance's ray is
/// the world ray moved into its space).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SceneCompactHit {
    /// The instance hit.
    pub instance: InstanceId,
    /// The hit in the instance's mesh.
    pub hit: CompactHit,
}

/// Ray queries: what a [`Bvh`] and a [`Scene`] both answer.
///
/// An implementation gives the compact cast of one ray, every hit along it, the count and
/// the details of a compact hit; the whole answers and the batch are provided on top. Every
/// answer is what a test of every triangle answers (ties to the lowest triangle, then
/// instance), and no query allocates beyond the lists it fills.
pub trait RayCast {
    /// The options every query of this geometry takes: [`QueryOptions`] for a mesh,
    /// [`SceneOptions`] (which holds them, and the instances' mask and filter) for a scene.
    type Options<'a>;
    /// The compact answer: [`CompactHit`], or [`SceneCompactHit`].
    type Compact: Copy + std::fmt::Debug + PartialEq;
    /// The whole answer: [`Hit`], or [`SceneHit`].
    type Hit;

    /// The closest hit ([`RayQuery::Closest`]) or the first found ([`RayQuery::Any`]) within
    /// the ray's range, compact; `None` for a miss and for an invalid ray.
    fn cast_ray(
        &self,
        ray: &Ray,
        query: RayQuery,
        options: &Self::Options<'_>,
    ) -> Option<Self::Compact>;

    /// Every hit within the ray's range, compact, into `hits` (cleared first), sorted by `t`
    /// (ties by instance, then triangle).
    fn all_triangles(&self, ray: &Ray, options: &Self::Options<'_>, hits: &mut Vec<Self::Compact>);

    /// How many triangles the ray hits within its range, without allocating.
    fn count_hits(&self, ray: &Ray, options: &Self::Options<'_>) -> usize;

    /// The whole answer of a compact hit this geometry returned for `ray`; `None` when `hit`
    /// names no triangle (or no live instance) of it.
    fn hit_details(&self, ray: &Ray, hit: &Self::Compact) -> Option<Self::Hit>;

    /// The ray parameter of a compact hit (the hit is at `origin + t·direction`).
    fn distance(hit: &Self::Compact) -> f32;

    /// The closest hit, whole.
    fn closest_hit(&self, ray: &Ray, options: &Self::Options<'_>) -> Option<Self::Hit> {
        let hit = self.cast_ray(ray, RayQuery::Closest, options)?;
        self.hit_details(ray, &hit)
    }

    /// Some hit, the first the walk meets, whole: "is anything there?".
    fn any_hit(&self, ray: &Ray, options: &Self::Options<'_>) -> Option<Self::Hit> {
        let hit = self.cast_ray(ray, RayQuery::Any, options)?;
        self.hit_details(ray, &hit)
    }

    /// Every hit within the ray's range, whole, sorted as
    /// [`all_triangles`](RayCast::all_triangles) sorts them.
    fn all_hits(&self, ray: &Ray, options: &Self::Options<'_>) -> Vec<Self::Hit> {
        let mut hits = Vec::new();
        self.all_triangles(ray, options, &mut hits);
        hits.iter()
            .filter_map(|hit| self.hit_details(ray, hit))
            .collect()
    }
}

/// Point queries: what a [`Bvh`] and a [`Scene`] both answer about a point, measured in the
/// geometry's (for a scene, the world's) space. The options are the ray queries' (for a
/// scene, its mask and filter choose the instances; culling and the triangle test do not
/// apply to points).
pub trait PointQuery {
    /// As [`RayCast::Options`].
    type Options<'a>;
    /// The answer of [`closest_point`](PointQuery::closest_point): [`ClosestPoint`], or
    /// [`SceneClosestPoint`].
    type Closest;

    /// The point of the surface nearest to `point` within `max_distance` (inclusive); `None`
    /// when there is none, or for a non-finite point or a negative or NaN distance.
    fn closest_point(
        &self,
        point: Point3<f32>,
        max_distance: f32,
        options: &Self::Options<'_>,
    ) -> Option<Self::Closest>;

    /// The generalized winding number at `point` (Jacobson et al. 2013): 1 inside a closed,
    /// outward-facing surface, 0 outside, in between near holes; 0 for a non-finite point.
    fn winding_number(
        &self,
        point: Point3<f32>,
        accuracy: WindingAccuracy,
        options: &Self::Options<'_>,
    ) -> f64;

    /// Whether `point` is inside: the winding number at least ½, as its exact sum says.
    fn contains(&self, point: Point3<f32>, options: &Self::Options<'_>) -> bool;

    /// The distance to the surface within `max_distance`, negative inside (by
    /// [`contains`](PointQuery::contains)); `None` as for
    /// [`closest_point`](PointQuery::closest_point).
    fn signed_distance(
        &self,
        point: Point3<f32>,
        max_distance: f32,
        options: &Self::Options<'_>,
    ) -> Option<f64>;
}

impl RayCast for Bvh {
    type Options<'a> = QueryOptions;
    type Compact = CompactHit;
    type Hit = Hit;

    #[inline]
    fn cast_ray(&self, ray: &Ray, query: RayQuery, options: &QueryOptions) -> Option<CompactHit> {
        Bvh::cast_ray(self, ray, query, options)
    }

    fn all_triangles(&self, ray: &Ray, options: &QueryOptions, hits: &mut Vec<CompactHit>) {
        Bvh::all_triangles(self, ray, options, hits)
    }

    fn count_hits(&self, ray: &Ray, options: &QueryOptions) -> usize {
        Bvh::count_hits(self, ray, options)
    }

    fn hit_details(&self, ray: &Ray, hit: &CompactHit) -> Option<Hit> {
        Bvh::hit_details(self, ray, hit)
    }

    #[inline]
    fn distance(hit: &CompactHit) -> f32 {
        hit.t
    }
}

impl PointQuery for Bvh {
    type Options<'a> = QueryOptions;
    type Closest = ClosestPoint;

    fn closest_point(
        &self,
        point: Point3<f32>,
        max_distance: f32,
        _: &QueryOptions,
    ) -> Option<ClosestPoint> {
        Bvh::closest_point(self, point, max_distance)
    }

    fn winding_number(
        &self,
        point: Point3<f32>,
        accuracy: WindingAccuracy,
        _: &QueryOptions,
    ) -> f64 {
        Bvh::winding_number(self, point, accuracy)
    }

    fn contains(&self, point: Point3<f32>, _: &QueryOptions) -> bool {
        Bvh::contains(self, point)
    }

    fn signed_distance(
        &self,
        point: Point3<f32>,
        max_distance: f32,
        _: &QueryOptions,
    ) -> Option<f64> {
        Bvh::signed_distance(self, point, max_distance)
    }
}

impl RayCast for Scene {
    type Options<'a> = SceneOptions<'a>;
    type Compact = SceneCompactHit;
    type Hit = SceneHit;

    #[inline]
    fn cast_ray(
        &self,
        ray: &Ray,
        query: RayQuery,
        options: &SceneOptions<'_>,
    ) -> Option<SceneCompactHit> {
        Scene::cast_ray(self, ray, query, options)
            .map(|(instance, hit)| SceneCompactHit { instance, hit })
    }

    fn all_triangles(
        &self,
        ray: &Ray,
        options: &SceneOptions<'_>,
        hits: &mut Vec<SceneCompactHit>,
    ) {
        hits.clear();
        self.each_hit(ray, options, |instance, hit| {
            hits.push(SceneCompactHit { instance, hit })
        });
        hits.sort_unstable_by(|a, b| in_hit_order((a.instance, &a.hit), (b.instance, &b.hit)));
    }

    fn count_hits(&self, ray: &Ray, options: &SceneOptions<'_>) -> usize {
        Scene::count_hits(self, ray, options)
    }

    fn hit_details(&self, ray: &Ray, hit: &SceneCompactHit) -> Option<SceneHit> {
        self.compact_hit_details(ray, hit.instance, &hit.hit)
    }

    #[inline]
    fn distance(hit: &SceneCompactHit) -> f32 {
        hit.hit.t
    }
}

impl PointQuery for Scene {
    type Options<'a> = SceneOptions<'a>;
    type Closest = SceneClosestPoint;

    fn closest_point(
        &self,
        point: Point3<f32>,
        max_distance: f32,
        options: &SceneOptions<'_>,
    ) -> Option<SceneClosestPoint> {
        Scene::closest_point(self, point, max_distance, options)
    }

    fn winding_number(
        &self,
        point: Point3<f32>,
        accuracy: WindingAccuracy,
        options: &SceneOptions<'_>,
    ) -> f64 {
        Scene::winding_number(self, point, accuracy, options)
    }

    fn contains(&self, point: Point3<f32>, options: &SceneOptions<'_>) -> bool {
        Scene::contains(self, point, options)
    }

    fn signed_distance(
        &self,
        point: Point3<f32>,
        max_distance: f32,
        options: &SceneOptions<'_>,
    ) -> Option<f64> {
        Scene::signed_distance(self, point, max_distance, options)
    }
}
