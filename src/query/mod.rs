//! One query surface for a mesh's tree ([`Bvh`]) and a scene of placed meshes ([`Scene`]):
//! the options and answers every query shares, and three traits, [`RayCast`] for rays,
//! [`PointQuery`] for points and [`Sweep`] for spheres and capsules moving along a ray, so
//! code written once over a trait serves both (the bindings, picking, and queries added
//! later).
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
pub use crate::scene::{InstanceId, SceneClosestPoint, SceneHit, SceneOptions, SceneTriangle};
pub use crate::triangle::{Culling, QueryOptions};
pub use crate::winding::WindingAccuracy;
use nalgebra::{Unit, Vector3};

mod overlap;
mod sweep;
pub use overlap::Overlap;
pub use sweep::{SceneSweepHit, Sweep, SweepHit};

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
pub trait RayCast: Sync {
    /// The options every query of this geometry takes: [`QueryOptions`] for a mesh,
    /// [`SceneOptions`] (which holds them, and the instances' mask and filter) for a scene.
    /// Made from a mesh's options, they see everything with those settings.
    type Options<'a>: Sync + From<QueryOptions>;
    /// The compact answer: [`CompactHit`], or [`SceneCompactHit`].
    type Compact: Copy + std::fmt::Debug + PartialEq + Send + Sync;
    /// The whole answer: [`Hit`], or [`SceneHit`].
    type Hit;
    /// Which triangle a hit names: its number (`u32`) in a mesh, a [`SceneTriangle`] in a
    /// scene; ordered, so lists of them sort and deduplicate.
    type Triangle: Copy + Ord + std::hash::Hash + std::fmt::Debug;

    /// The answer to one ray as [`cast_rays`](RayCast::cast_rays) gives it: for
    /// [`RayQuery::Closest`] the closest hit as [`closest_hit`](RayCast::closest_hit) finds it,
    /// for [`RayQuery::Any`] the hit [`any_hit`](RayCast::any_hit) finds, reporting only the
    /// triangle, `t` and barycentrics. It reads nothing of the mesh, so batch work
    /// (visibility, scan simulation, benchmarks) skips the cache misses of gathering normals,
    /// texture coordinates and ids; [`hit_details`](RayCast::hit_details) fills those in later.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh, QueryOptions, Ray, RayQuery};
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), Vector3::new(0.0, 0.0, -1.0));
    /// let options = QueryOptions::default();
    /// let short = bvh.cast_ray(&ray, RayQuery::Closest, &options).expect("the sphere is there");
    /// assert_eq!(bvh.hit_details(&ray, &short), bvh.closest_hit(&ray, &options));
    ///
    /// // Is the line of sight from a to b blocked? (The sphere is in between.)
    /// let (a, b) = (Point3::new(0.0, 1.0, 5.0), Point3::new(0.0, 1.0, -3.0));
    /// let sight = Ray::with_range(a, b - a, 0.0, 1.0);
    /// let blocker = bvh.cast_ray(&sight, RayQuery::Any, &options).expect("blocked");
    /// assert!(blocker.t > 0.0 && blocker.t < 1.0);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// A scene:
    ///
    /// ```
    /// # use meshray::prelude::*;
    /// # use meshray::{Bvh, Mesh, Ray, RayQuery, Scene, SceneOptions};
    /// # use meshray::query::SceneCompactHit;
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// scene.add(triangle.clone(), Matrix4::identity())?;
    /// let front = scene.add(triangle, Matrix4::new_translation(&Vector3::new(0.0, 0.0, 1.0)))?;
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 5.0), -Vector3::z());
    /// let options = SceneOptions::default();
    /// let SceneCompactHit { instance: id, hit } = scene.cast_ray(&ray, RayQuery::Closest, &options).unwrap();
    /// let whole = scene.closest_hit(&ray, &options).unwrap();
    /// assert_eq!((id, hit.triangle, hit.t), (whole.instance, whole.hit.triangle, whole.hit.t));
    /// assert_eq!((id, hit.t), (front, 4.0));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    fn cast_ray(
        &self,
        ray: &Ray,
        query: RayQuery,
        options: &Self::Options<'_>,
    ) -> Option<Self::Compact>;

    /// Every hit along the ray in its range, compact (the triangle, `t` and barycentrics),
    /// into `hits` (cleared first), sorted by `t`, then triangle: what
    /// [`all_hits`](RayCast::all_hits) finds, without making each hit whole
    /// ([`hit_details`](RayCast::hit_details) does that for one) and without allocating once
    /// `hits` is large enough. For listing every crossing of many rays.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// // Through the sphere and on to the ground.
    /// let ray = Ray::new(Point3::new(0.1, 3.0, 0.05), -Vector3::y());
    /// let options = QueryOptions::default();
    /// let mut hits = Vec::new();
    /// bvh.all_triangles(&ray, &options, &mut hits);
    /// let whole = bvh.all_hits(&ray, &options);
    /// assert_eq!(hits.len(), 3);
    /// for (compact, whole) in hits.iter().zip(&whole) {
    ///     assert_eq!((compact.t, compact.triangle), (whole.t, whole.triangle));
    /// }
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// A scene:
    ///
    /// ```
    /// # use meshray::prelude::*;
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// for z in [0.0, 1.0, 2.0] {
    ///     scene.add(triangle.clone(), Matrix4::new_translation(&Vector3::new(0.0, 0.0, z)))?;
    /// }
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 5.0), -Vector3::z());
    /// let mut hits = Vec::new();
    /// scene.all_triangles(&ray, &SceneOptions::default(), &mut hits);
    /// let order: Vec<_> = hits.iter().map(|h| (h.instance, h.hit.t)).collect();
    /// assert_eq!(order, [(2, 3.0), (1, 4.0), (0, 5.0)]);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    fn all_triangles(&self, ray: &Ray, options: &Self::Options<'_>, hits: &mut Vec<Self::Compact>);

    /// How many triangles the ray hits in its range: [`all_hits`](RayCast::all_hits)`.len()`
    /// without building the hits, and without allocating. With the watertight test on a
    /// closed mesh, an odd count from a point means the point is inside (crossing parity),
    /// unless the ray passes exactly through an edge or vertex, which both neighbours count.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// // From the sphere's centre: out through its shell once, then the ground.
    /// let ray = Ray::new(Point3::new(0.1, 1.05, 0.05), -Vector3::y());
    /// let options = QueryOptions { watertight: true, ..Default::default() };
    /// assert_eq!(bvh.count_hits(&ray, &options), bvh.all_hits(&ray, &options).len());
    /// assert_eq!(bvh.count_hits(&ray, &options), 2);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// A scene:
    ///
    /// ```
    /// # use meshray::prelude::*;
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// for z in [0.0, 1.0, 2.0] {
    ///     scene.add(triangle.clone(), Matrix4::new_translation(&Vector3::new(0.0, 0.0, z)))?;
    /// }
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 5.0), -Vector3::z());
    /// assert_eq!(scene.count_hits(&ray, &SceneOptions::default()), 3);
    /// let upper = SceneOptions { filter: Some(&|id| id > 0), ..Default::default() };
    /// assert_eq!(scene.count_hits(&ray, &upper), 2);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    fn count_hits(&self, ray: &Ray, options: &Self::Options<'_>) -> usize;

    /// Everything [`Hit`] tells about a hit [`cast_ray`](RayCast::cast_ray) or
    /// [`cast_rays`](RayCast::cast_rays) found for this `ray`.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), -Vector3::z());
    /// let short = bvh.cast_ray(&ray, meshray::RayQuery::Closest, &QueryOptions::default()).unwrap();
    /// let hit = bvh.hit_details(&ray, &short).unwrap();
    /// assert_eq!((hit.t, hit.triangle), (short.t, short.triangle));
    /// assert_eq!(bvh.mesh().objects()[hit.object as usize], "sphere");
    /// assert!(hit.uv.is_some()); // the sphere has texture coordinates
    ///
    /// // A hand-made CompactHit naming no triangle of the mesh has no details.
    /// let bogus = meshray::CompactHit { triangle: u32::MAX, ..short };
    /// assert!(bvh.hit_details(&ray, &bogus).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// `None` when `hit.triangle` is not a triangle of the mesh (`CompactHit`'s fields are
    /// public, so a caller can make one); pass hits this BVH's queries returned.
    fn hit_details(&self, ray: &Ray, hit: &Self::Compact) -> Option<Self::Hit>;

    /// The unit geometric normal, in this geometry's space (a scene's: the world's), of
    /// the triangle a compact hit names: [`hit_details`](RayCast::hit_details)' `normal`,
    /// bit for bit, read from a table of every triangle's normal instead of the triangle's
    /// corners. The first call on a tree makes the table (O(n), 12 bytes per triangle, on
    /// all cores), which is kept until a [`refit`](Bvh::refit): for batches of hits
    /// (a depth and normal image, a scan), where one read per hit beats three. `None` as
    /// for `hit_details`.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh, Ray, RayQuery};
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// let ray = Ray::new([0.0, 1.0, 10.0], [0.0, 0.0, -1.0]);
    /// let hit = bvh.cast_ray(&ray, RayQuery::Closest, &Default::default()).unwrap();
    /// assert_eq!(bvh.hit_normal(&hit), bvh.hit_details(&ray, &hit).map(|h| h.normal));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    fn hit_normal(&self, hit: &Self::Compact) -> Option<Unit<Vector3<f32>>>;

    /// [`cast_ray`](RayCast::cast_ray) with a geometric normal of the hit triangle, as
    /// Embree's `Ng`: not normalized, its length unspecified (a mesh's is the cross product
    /// `(B − A) × (C − A)` the triangle test computes, twice the triangle's area; a scene's
    /// is [`hit_normal`](RayCast::hit_normal)'s). A mesh takes it from the leaf its walk has
    /// just tested, still in the core's cache, where `hit_normal` reads a table laid out by
    /// triangle number (a read from anywhere in memory). For batches that want every hit's
    /// normal (a normal image, Open3D's `cast_rays`): normalizing a batch of them in a loop
    /// of its own (independent square roots and divisions, in flight together) costs less
    /// than normalizing each after its walk.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh, Ray, RayQuery};
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// let ray = Ray::new([0.0, 1.0, 10.0], [0.0, 0.0, -1.0]);
    /// let (hit, n) = bvh.cast_ray_normal(&ray, RayQuery::Closest, &Default::default()).unwrap();
    /// assert_eq!(Some(hit), bvh.cast_ray(&ray, RayQuery::Closest, &Default::default()));
    /// let unit = bvh.hit_normal(&hit).unwrap();
    /// assert!((n.normalize() - unit.into_inner()).amax() < 1e-6);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    fn cast_ray_normal(
        &self,
        ray: &Ray,
        query: RayQuery,
        options: &Self::Options<'_>,
    ) -> Option<(Self::Compact, Vector3<f32>)> {
        let hit = self.cast_ray(ray, query, options)?;
        Some((hit, self.hit_normal(&hit)?.into_inner()))
    }

    /// A compact hit as a mesh's: the instance it is in (a scene's; `None` for a mesh) and
    /// the triangle, `t` and barycentrics in that instance's mesh.
    fn mesh_hit(hit: &Self::Compact) -> (Option<InstanceId>, CompactHit);

    /// The triangle a compact hit names.
    fn triangle(hit: &Self::Compact) -> Self::Triangle;

    /// The ray parameter of a compact hit (the hit is at `origin + t·direction`).
    fn distance(hit: &Self::Compact) -> f32 {
        Self::mesh_hit(hit).1.t
    }

    /// The first triangle along the ray within its range: the smallest `t`, as a test of
    /// every triangle would find. `None` for a miss and for an invalid ray
    /// ([`Ray::is_valid`]). Allocates nothing.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Culling, QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// // Towards the sphere (centre (0, 1, 0), radius 1) from z = 10.
    /// let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), -Vector3::z());
    /// let hit = bvh.closest_hit(&ray, &QueryOptions::default()).unwrap();
    /// assert!((hit.t - 9.0).abs() < 1e-2 && hit.front_face);
    ///
    /// // From inside the sphere, front faces only: its inside is all back faces, so the ray
    /// // leaves it unseen and finds nothing behind.
    /// let inside = Ray::new(Point3::new(0.0, 1.0, 0.0), -Vector3::z());
    /// let front_only = QueryOptions { culling: Culling::Back, ..Default::default() };
    /// assert!(bvh.closest_hit(&inside, &front_only).is_none());
    /// assert!(!bvh.closest_hit(&inside, &QueryOptions::default()).unwrap().front_face);
    ///
    /// // A range that stops short of the sphere: no hit.
    /// assert!(bvh.closest_hit(&Ray::with_range(ray.origin(), ray.direction(), 0.0, 8.0), &QueryOptions::default()).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// A scene:
    ///
    /// ```
    /// # use meshray::prelude::*;
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// scene.add(triangle.clone(), Matrix4::identity())?;
    /// let front = scene.add(triangle, Matrix4::new_translation(&Vector3::new(0.0, 0.0, 1.0)))?;
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 5.0), -Vector3::z());
    /// let hit = scene.closest_hit(&ray, &SceneOptions::default()).unwrap();
    /// assert_eq!((hit.instance, hit.hit.t), (front, 4.0));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    fn closest_hit(&self, ray: &Ray, options: &Self::Options<'_>) -> Option<Self::Hit> {
        let hit = self.cast_ray(ray, RayQuery::Closest, options)?;
        self.hit_details(ray, &hit)
    }

    /// Some hit within the ray's range, the first the walk meets (not necessarily the
    /// closest): the cheap question "is anything there?", for shadows and lines of sight.
    /// Allocates nothing.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// // A shadow ray from a point on the ground towards a light high above the sphere.
    /// let ground = Point3::new(0.3, 0.0, 0.2);
    /// let light = Point3::new(0.0, 10.0, 0.0);
    /// // t_min skips the ground point itself; t_max stops at the light.
    /// let shadow = Ray::with_range(ground, light - ground, 1e-4, 1.0);
    /// assert!(bvh.any_hit(&shadow, &QueryOptions::default()).is_some()); // in the sphere's shadow
    /// let open_sky = Ray::with_range(Point3::new(3.0, 0.0, 3.0), Vector3::new(0.0, 10.0, 0.0), 1e-4, 1.0);
    /// assert!(bvh.any_hit(&open_sky, &QueryOptions::default()).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// A scene:
    ///
    /// ```
    /// # use meshray::prelude::*;
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// scene.add(triangle, Matrix4::identity())?;
    /// // Is the segment from (0.2, 0.2, 1) to (0.2, 0.2, -1) blocked?
    /// let sight = Ray::with_range(Point3::new(0.2, 0.2, 1.0), Vector3::new(0.0, 0.0, -2.0), 0.0, 1.0);
    /// assert!(scene.any_hit(&sight, &SceneOptions::default()).is_some());
    /// assert!(scene.any_hit(&Ray::with_range(sight.origin(), sight.direction(), 0.0, 0.4), &SceneOptions::default()).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    fn any_hit(&self, ray: &Ray, options: &Self::Options<'_>) -> Option<Self::Hit> {
        let hit = self.cast_ray(ray, RayQuery::Any, options)?;
        self.hit_details(ray, &hit)
    }

    /// Every hit within the ray's range, sorted by `t` (ties by triangle number).
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Culling, QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    ///
    /// // Through the sphere: in at its front, out at its back.
    /// let ray = Ray::new(Point3::new(0.1, 1.05, 10.0), -Vector3::z());
    /// let hits = bvh.all_hits(&ray, &QueryOptions::default());
    /// assert_eq!(hits.len(), 2);
    /// assert!(hits[0].t < hits[1].t && hits[0].front_face && !hits[1].front_face);
    /// let front_only = QueryOptions { culling: Culling::Back, ..Default::default() };
    /// assert_eq!(bvh.all_hits(&ray, &front_only).len(), 1);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// A scene:
    ///
    /// ```
    /// # use meshray::prelude::*;
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// for z in [0.0, 1.0, 2.0] {
    ///     scene.add(triangle.clone(), Matrix4::new_translation(&Vector3::new(0.0, 0.0, z)))?;
    /// }
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 5.0), -Vector3::z());
    /// let hits = scene.all_hits(&ray, &SceneOptions::default());
    /// let order: Vec<_> = hits.iter().map(|h| (h.instance, h.hit.t)).collect();
    /// assert_eq!(order, [(2, 3.0), (1, 4.0), (0, 5.0)]);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    fn all_hits(&self, ray: &Ray, options: &Self::Options<'_>) -> Vec<Self::Hit> {
        let mut hits = Vec::new();
        self.all_triangles(ray, options, &mut hits);
        hits.iter()
            .filter_map(|hit| self.hit_details(ray, hit))
            .collect()
    }

    /// [`cast_ray`](RayCast::cast_ray) for every ray of `rays`, into `hits` (cleared, then
    /// one answer per ray, in order): on all cores with the default `parallel` feature, in
    /// chunks of a few hundred rays, and without allocating when `hits` already has the
    /// room. The answers are those of one call per ray, bit for bit.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh, Ray, RayQuery};
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// let rays: Vec<Ray> = (0..100)
    ///     .map(|i| Ray::new([i as f32 * 0.05 - 2.5, 1.0, 10.0], [0.0, 0.0, -1.0]))
    ///     .collect();
    /// let mut hits = Vec::new();
    /// bvh.cast_rays(&rays, RayQuery::Closest, &Default::default(), &mut hits);
    /// assert_eq!(hits.len(), rays.len());
    /// assert_eq!(hits[50], bvh.cast_ray(&rays[50], RayQuery::Closest, &Default::default()));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    fn cast_rays(
        &self,
        rays: &[Ray],
        query: RayQuery,
        options: &Self::Options<'_>,
        hits: &mut Vec<Option<Self::Compact>>,
    ) {
        hits.clear();
        hits.resize(rays.len(), None);
        #[cfg(feature = "parallel")]
        if rays.len() > RAYS_PER_TASK && rayon::current_num_threads() > 1 {
            use rayon::prelude::*;
            hits.par_chunks_mut(RAYS_PER_TASK)
                .zip(rays.par_chunks(RAYS_PER_TASK))
                .for_each(|(out, rays)| {
                    for (slot, ray) in out.iter_mut().zip(rays) {
                        *slot = self.cast_ray(ray, query, options);
                    }
                });
            return;
        }
        for (slot, ray) in hits.iter_mut().zip(rays) {
            *slot = self.cast_ray(ray, query, options);
        }
    }
}

/// Rays per task of [`RayCast::cast_rays`]: enough to pay for a task, few enough to share
/// a batch's uneven rays among the cores.
#[cfg(feature = "parallel")]
const RAYS_PER_TASK: usize = 256;

/// Point queries: what a [`Bvh`] and a [`Scene`] both answer about a point, measured in the
/// geometry's (for a scene, the world's) space. The options are the ray queries' (for a
/// scene, its mask and filter choose the instances; culling and the triangle test do not
/// apply to points).
pub trait PointQuery: Sync {
    /// As [`RayCast::Options`]; the default sees everything.
    type Options<'a>: Sync + Default;
    /// The answer of [`closest_point`](PointQuery::closest_point): [`ClosestPoint`], or
    /// [`SceneClosestPoint`].
    type Closest;

    /// A closest point as a mesh's: the instance it is on (a scene's; `None` for a mesh)
    /// and the triangle, point, barycentrics and distance (in this geometry's space).
    fn mesh_point(closest: &Self::Closest) -> (Option<InstanceId>, ClosestPoint);

    /// The point of the surface nearest to `point` within `max_distance` (inclusive; pass
    /// `f32::INFINITY` for no limit): the triangle, the point, its barycentrics and the
    /// distance, exactly as testing every triangle would find it (distances are compared in
    /// `f64`; of equally near triangles the lowest number wins). `None` when no triangle is
    /// that near, and for a NaN or infinite `point` or a NaN or negative `max_distance`.
    /// Allocates nothing.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh};
    /// use nalgebra::{Matrix4, Point3};
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// // High above the scene: the nearest point is on top of something.
    /// let near = bvh.closest_point(Point3::new(0.0, 50.0, 0.0), f32::INFINITY, &Default::default()).unwrap();
    /// assert!(near.distance > 40.0 && near.point.y > 0.0);
    /// assert!(bvh.closest_point(Point3::new(0.0, 50.0, 0.0), 1.0, &Default::default()).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// A scene:
    ///
    /// ```
    /// # use meshray::prelude::*;
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// scene.add(triangle.clone(), Matrix4::identity())?;
    /// // Stretched 4x along x and moved to z = 10: measured in world space, stretch included.
    /// let far = scene.add(triangle, Matrix4::new_translation(&Vector3::new(0.0, 0.0, 10.0))
    ///     * Matrix4::new_nonuniform_scaling(&Vector3::new(4.0, 1.0, 1.0)))?;
    /// let p = Point3::new(3.0, 0.1, 8.0);
    /// let all = SceneOptions::default();
    /// let near = scene.closest_point(p, f32::INFINITY, &all).unwrap();
    /// assert_eq!(near.instance, far);
    /// assert!((near.closest.distance - 2.0).abs() < 1e-5);
    /// assert!((near.closest.point - Point3::new(3.0, 0.1, 10.0)).norm() < 1e-5);
    /// // Nothing within 1, or with a mask no instance shares.
    /// assert!(scene.closest_point(p, 1.0, &all).is_none());
    /// let none = SceneOptions { mask: 0, ..Default::default() };
    /// assert!(scene.closest_point(p, f32::INFINITY, &none).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    fn closest_point(
        &self,
        point: impl Into<mint::Point3<f32>>,
        max_distance: f32,
        options: &Self::Options<'_>,
    ) -> Option<Self::Closest>;

    /// The generalized winding number of the surface around `point` (Jacobson et al. 2013): the
    /// sum of the signed solid angles its triangles subtend there, over 4π. For a closed
    /// mesh whose triangles face outwards (counter-clockwise seen from outside) it is 1
    /// inside and 0 outside (−1 inside one that faces inwards; 2 inside two nested shells);
    /// for a mesh with holes, overlaps or loose triangles it moves smoothly between, and
    /// "at least ½" is still the best answer to "inside?".
    ///
    /// `accuracy` chooses the sum: [`WindingAccuracy::FarField`] in O(log n) per point,
    /// [`WindingAccuracy::Exact`] in O(n). NaN for a NaN or infinite `point`. The first call on a tree computes its far-field terms (O(n), about 110 bytes
    /// per eight-lane node of the tree); they are kept until a [`refit`](Bvh::refit).
    /// Allocates nothing after that.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh};
    /// use meshray::query::WindingAccuracy;
    /// use nalgebra::Point3;
    ///
    /// // A closed tetrahedron, its triangles counter-clockwise seen from outside.
    /// let corners = vec![
    ///     Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0),
    ///     Point3::new(0.0, 1.0, 0.0), Point3::new(0.0, 0.0, 1.0),
    /// ];
    /// let closed = Mesh::from_buffers(corners, vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])?;
    /// let bvh = Bvh::build(closed);
    /// let inside = bvh.winding_number(Point3::new(0.2, 0.2, 0.2), WindingAccuracy::Exact, &Default::default());
    /// assert!((inside - 1.0).abs() < 1e-12);
    /// let outside = bvh.winding_number(Point3::new(2.0, 0.2, 0.2), WindingAccuracy::default(), &Default::default());
    /// assert!(outside.abs() < 1e-3);
    ///
    /// // Without its bottom face it is open: the winding number says how much it encloses.
    /// let (positions, mut triangles) = (bvh.mesh().positions().to_vec(), bvh.mesh().triangles().to_vec());
    /// triangles.remove(0);
    /// let open = Bvh::build(Mesh::from_buffers(positions, triangles)?);
    /// let w = open.winding_number(Point3::new(0.2, 0.2, 0.2), WindingAccuracy::Exact, &Default::default());
    /// assert!(w > 0.5 && w < 1.0, "{w}");
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// A scene:
    ///
    /// ```
    /// # use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh, Scene, SceneOptions};
    /// use meshray::query::WindingAccuracy;
    /// use nalgebra::{Matrix4, Point3, Vector3};
    /// use std::sync::Arc;
    ///
    /// let corners = vec![
    ///     Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0),
    ///     Point3::new(0.0, 1.0, 0.0), Point3::new(0.0, 0.0, 1.0),
    /// ];
    /// let tetrahedron = Mesh::from_buffers(corners, vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])?;
    /// let tree = Arc::new(Bvh::build(tetrahedron));
    /// let mut scene = Scene::new();
    /// scene.add(tree.clone(), Matrix4::new_translation(&Vector3::new(10.0, 0.0, 0.0)))?;
    /// // Mirrored in x: still closed, still facing outwards once placed.
    /// scene.add(tree, Matrix4::new_nonuniform_scaling(&Vector3::new(-2.0, 2.0, 2.0)))?;
    /// let all = SceneOptions::default();
    /// let w = |p| scene.winding_number(p, WindingAccuracy::Exact, &all);
    /// assert!((w(Point3::new(10.2, 0.2, 0.2)) - 1.0).abs() < 1e-9);
    /// assert!((w(Point3::new(-0.4, 0.4, 0.4)) - 1.0).abs() < 1e-9);
    /// assert!(w(Point3::new(5.0, 0.4, 0.4)).abs() < 1e-9);
    /// assert!(scene.contains(Point3::new(-0.4, 0.4, 0.4), &all));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    fn winding_number(
        &self,
        point: impl Into<mint::Point3<f32>>,
        accuracy: WindingAccuracy,
        options: &Self::Options<'_>,
    ) -> f64;

    /// Whether `point` is inside the surface: its exact winding number is at least ½ (see
    /// [`winding_number`](PointQuery::winding_number)). On a closed mesh that is the parity of a
    /// ray's crossings, without a ray's troubles at edges; on a mesh with holes, overlaps or
    /// loose triangles it is still what "inside" means (Barill et al. 2018). Answers as the
    /// exact sum would (off the surface itself, where the winding number is not defined):
    /// mostly from the known winding number of a nearby lattice point and the crossings of
    /// the short segment from it, one short ray; else the fast sum, then, only where that
    /// comes within its error of ½, finer ones (`docs/guide.md`, "Inside or outside").
    /// `false` for a NaN or infinite `point`. The first call makes the lattice (about one
    /// point per four triangles, a fast sum each, on all cores); it is kept until a
    /// [`refit`](Bvh::refit). Allocates nothing after that.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh};
    /// use nalgebra::Point3;
    ///
    /// let corners = vec![
    ///     Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0),
    ///     Point3::new(0.0, 1.0, 0.0), Point3::new(0.0, 0.0, 1.0),
    /// ];
    /// let bvh = Bvh::build(Mesh::from_buffers(corners, vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])?);
    /// assert!(bvh.contains(Point3::new(0.1, 0.1, 0.1), &Default::default()));
    /// assert!(!bvh.contains(Point3::new(0.5, 0.5, 0.5), &Default::default()));
    /// assert!(!bvh.contains(Point3::new(f32::NAN, 0.0, 0.0), &Default::default()));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    fn contains(&self, point: impl Into<mint::Point3<f32>>, options: &Self::Options<'_>) -> bool;

    /// The distance from `point` to the surface, negative inside it (where
    /// [`contains`](PointQuery::contains) holds): the distance of
    /// [`closest_point`](PointQuery::closest_point), in `f64`, signed by the winding number. `None`
    /// when no triangle is within `max_distance` (pass `f32::INFINITY` for no limit), and as
    /// `closest_point` answers `None`.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh};
    /// use nalgebra::Point3;
    ///
    /// let corners = vec![
    ///     Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0),
    ///     Point3::new(0.0, 1.0, 0.0), Point3::new(0.0, 0.0, 1.0),
    /// ];
    /// let bvh = Bvh::build(Mesh::from_buffers(corners, vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])?);
    /// // 0.1 above the bottom face, inside; 0.5 below it, outside.
    /// assert!((bvh.signed_distance(Point3::new(0.2, 0.2, 0.1), 1.0, &Default::default()).unwrap() + 0.1).abs() < 1e-7);
    /// assert!((bvh.signed_distance(Point3::new(0.2, 0.2, -0.5), 1.0, &Default::default()).unwrap() - 0.5).abs() < 1e-7);
    /// assert_eq!(bvh.signed_distance(Point3::new(0.2, 0.2, -5.0), 1.0, &Default::default()), None);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// A scene:
    ///
    /// ```
    /// # use meshray::prelude::*;
    /// # use meshray::{Bvh, Mesh, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let corners = vec![
    /// #     Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0),
    /// #     Point3::new(0.0, 1.0, 0.0), Point3::new(0.0, 0.0, 1.0),
    /// # ];
    /// # let tetrahedron = Mesh::from_buffers(corners, vec![[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])?;
    /// let mut scene = Scene::new();
    /// // The unit tetrahedron, scaled 2x: its bottom face at z = 0 spans 2 by 2.
    /// scene.add(Arc::new(Bvh::build(tetrahedron)), Matrix4::new_scaling(2.0))?;
    /// let all = SceneOptions::default();
    /// let d = scene.signed_distance(Point3::new(0.4, 0.4, 0.2), f32::INFINITY, &all).unwrap();
    /// assert!((d + 0.2).abs() < 1e-6, "{d}");
    /// let d = scene.signed_distance(Point3::new(0.4, 0.4, -0.3), f32::INFINITY, &all).unwrap();
    /// assert!((d - 0.3).abs() < 1e-6, "{d}");
    /// # Ok::<(), meshray::Error>(())
    /// ```
    fn signed_distance(
        &self,
        point: impl Into<mint::Point3<f32>>,
        max_distance: f32,
        options: &Self::Options<'_>,
    ) -> Option<f64>;
}

impl RayCast for Bvh {
    type Options<'a> = QueryOptions;
    type Compact = CompactHit;
    type Hit = Hit;
    type Triangle = u32;

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

    fn hit_normal(&self, hit: &CompactHit) -> Option<Unit<Vector3<f32>>> {
        self.cached_normal(hit.triangle)
    }

    #[inline]
    fn cast_ray_normal(
        &self,
        ray: &Ray,
        query: RayQuery,
        options: &QueryOptions,
    ) -> Option<(CompactHit, Vector3<f32>)> {
        Bvh::cast_ray_normal(self, ray, query, options)
    }

    #[inline]
    fn mesh_hit(hit: &CompactHit) -> (Option<InstanceId>, CompactHit) {
        (None, *hit)
    }

    #[inline]
    fn triangle(hit: &CompactHit) -> u32 {
        hit.triangle
    }
}

impl PointQuery for Bvh {
    type Options<'a> = QueryOptions;
    type Closest = ClosestPoint;

    #[inline]
    fn mesh_point(closest: &ClosestPoint) -> (Option<InstanceId>, ClosestPoint) {
        (None, *closest)
    }

    fn closest_point(
        &self,
        point: impl Into<mint::Point3<f32>>,
        max_distance: f32,
        _: &QueryOptions,
    ) -> Option<ClosestPoint> {
        Bvh::closest_point(self, point, max_distance)
    }

    fn winding_number(
        &self,
        point: impl Into<mint::Point3<f32>>,
        accuracy: WindingAccuracy,
        _: &QueryOptions,
    ) -> f64 {
        Bvh::winding_number(self, point, accuracy)
    }

    fn contains(&self, point: impl Into<mint::Point3<f32>>, _: &QueryOptions) -> bool {
        Bvh::contains(self, point)
    }

    fn signed_distance(
        &self,
        point: impl Into<mint::Point3<f32>>,
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
    type Triangle = SceneTriangle;

    /// The hit [`closest_hit`](RayCast::closest_hit) (or, for [`RayQuery::Any`],
    /// [`any_hit`](RayCast::any_hit)) finds, compact: the instance and the triangle, `t` and
    /// barycentrics, without moving the point and normals to world space (which reads the
    /// triangle's corners). `t` is the world ray's, so the point is `ray.at(t)`. Allocates
    /// nothing.
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

    /// How many triangles the ray hits in its range, over every instance the options let
    /// it see: [`all_hits`](RayCast::all_hits)`.len()` without making the hits, and without
    /// allocating (once the top-level trees are up to date).
    fn count_hits(&self, ray: &Ray, options: &SceneOptions<'_>) -> usize {
        Scene::count_hits(self, ray, options)
    }

    fn hit_details(&self, ray: &Ray, hit: &SceneCompactHit) -> Option<SceneHit> {
        self.compact_hit_details(ray, hit.instance, &hit.hit)
    }

    fn hit_normal(&self, hit: &SceneCompactHit) -> Option<Unit<Vector3<f32>>> {
        Scene::hit_normal(self, hit.instance, &hit.hit)
    }

    #[inline]
    fn mesh_hit(hit: &SceneCompactHit) -> (Option<InstanceId>, CompactHit) {
        (Some(hit.instance), hit.hit)
    }

    #[inline]
    fn triangle(hit: &SceneCompactHit) -> SceneTriangle {
        SceneTriangle {
            instance: hit.instance,
            triangle: hit.hit.triangle,
        }
    }
}

impl PointQuery for Scene {
    type Options<'a> = SceneOptions<'a>;
    type Closest = SceneClosestPoint;

    #[inline]
    fn mesh_point(closest: &SceneClosestPoint) -> (Option<InstanceId>, ClosestPoint) {
        (Some(closest.instance), closest.closest)
    }

    /// The point of the scene nearest to `point` within `max_distance` (inclusive), among
    /// the instances the options let the query see (their `mask` and `filter`; culling and
    /// the triangle test do not apply): the instance and, in world space, the point,
    /// the triangle, its barycentrics and the distance. Distances are measured in world
    /// space (exact under any affine transform, non-uniform scales included: each
    /// instance's triangles and boxes are moved to world space as the search reaches them);
    /// ties go to the lowest instance, then triangle. `None` as for
    /// [`closest_point`](PointQuery::closest_point) for a mesh.
    fn closest_point(
        &self,
        point: impl Into<mint::Point3<f32>>,
        max_distance: f32,
        options: &SceneOptions<'_>,
    ) -> Option<SceneClosestPoint> {
        Scene::closest_point(self, point, max_distance, options)
    }

    /// The generalized winding number of the scene around `point`: the sum of the winding
    /// numbers of the instances `options` sees ([`winding_number`](PointQuery::winding_number) for a mesh),
    /// each its mesh's at the point moved into the mesh's frame (also under a mirror: the
    /// images of front faces are front faces, as for culling). 1 inside one closed instance,
    /// 2 where two overlap.
    /// NaN for a NaN or infinite `point`; 0 for an empty scene. O(instances) per point.
    fn winding_number(
        &self,
        point: impl Into<mint::Point3<f32>>,
        accuracy: WindingAccuracy,
        options: &SceneOptions<'_>,
    ) -> f64 {
        Scene::winding_number(self, point, accuracy, options)
    }

    /// Whether `point` is inside the scene: its exact winding number (see
    /// [`winding_number`](PointQuery::winding_number)) is at least ½, answered as
    /// [`contains`](PointQuery::contains) for a mesh answers for a mesh. `false` for a NaN or
    /// infinite `point`.
    fn contains(&self, point: impl Into<mint::Point3<f32>>, options: &SceneOptions<'_>) -> bool {
        Scene::contains(self, point, options)
    }

    /// The world-space distance from `point` to the nearest instance `options` sees,
    /// negative where [`contains`](PointQuery::contains) holds: the distance of
    /// [`closest_point`](PointQuery::closest_point), in `f64`. `None` as `closest_point` answers
    /// `None` (nothing within `max_distance`, a NaN or infinite point).
    fn signed_distance(
        &self,
        point: impl Into<mint::Point3<f32>>,
        max_distance: f32,
        options: &SceneOptions<'_>,
    ) -> Option<f64> {
        Scene::signed_distance(self, point, max_distance, options)
    }
}
