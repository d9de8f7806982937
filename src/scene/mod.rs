//! Scenes: meshes placed as instances with affine transforms, picked through a top-level
//! BVH over the instances' world boxes, each instance's own BVH below it. The top-level tree
//! is a wide tree like a mesh's, its leaves naming instances, walked by the same walk
//! (`top` says how it follows edits); the queries are in `query` (rays and the nearest
//! point), `select` (regions) and `inside` (winding numbers, inside or outside), and are
//! asked through the traits of [`crate::query`].

mod inside;
#[cfg(feature = "gltf")]
mod load;
mod query;
pub(crate) use query::in_hit_order;
mod overlap;
mod select;
mod sweep;
mod top;
mod walk;

pub use query::SceneClosestPoint;
pub use select::SceneTriangle;

use crate::transform::{affine, moved_box};
use crate::{Aabb, Bvh, Error, Hit, QueryOptions, Result};
use nalgebra::{Matrix4, Point3};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use top::TopLevel;

/// An instance's number in its [`Scene`]: [`add`](Scene::add) reuses the id
/// [`remove`](Scene::remove) freed last, else takes the next new one, as Embree's geometry
/// ids do, so ids stay dense in a scene whose objects come and go ([`Scene::load`] numbers
/// a file's instances in order from 0).
///
/// ```
/// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
/// # use nalgebra::{Matrix4, Point3, Vector3};
/// # use std::sync::Arc;
/// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
/// # // The unit triangle in the plane z = 0, its front face towards +z.
/// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
/// let mut scene = Scene::new();
/// let first: meshray::query::InstanceId = scene.add(triangle.clone(), Matrix4::identity())?;
/// let second = scene.add(triangle, Matrix4::new_translation(&Vector3::new(5.0, 0.0, 0.0)))?;
/// assert_eq!((first, second), (0, 1));
/// # Ok::<(), meshray::Error>(())
/// ```
pub type InstanceId = u32;

/// A mesh placed in a scene (its world box is kept apart, in [`Scene::bounds`]'s array).
#[derive(Clone, Debug)]
struct Instance {
    bvh: Arc<Bvh>,
    /// Object → world, and its inverse, both in f64 (rays are moved into object space).
    to_world: Matrix4<f64>,
    to_object: Matrix4<f64>,
    /// What a sweep's own-space bound needs of the placement (sweep.rs), made with it.
    inverse_bound: Option<sweep::InverseBound>,
    /// Which queries see it ([`SceneOptions::mask`]); 0 hides it from all.
    mask: u32,
    /// From the file it was loaded from ([`Scene::load`]); empty for one placed by `add`.
    name: String,
}

/// An instance as [`Scene::instance`] shows it.
#[derive(Clone, Copy, Debug)]
pub struct InstanceView<'a> {
    /// Its mesh's tree (shared: the `Arc` given to [`Scene::add`]).
    pub bvh: &'a Arc<Bvh>,
    /// Its object-to-world transform, as it was given.
    pub transform: Matrix4<f32>,
    /// Its box in world space: its mesh box's corners transformed, a little loose.
    pub bounds: Aabb,
    /// Its mask ([`Scene::set_mask`]).
    pub mask: u32,
    /// Its name: its node's in the glTF file it was loaded from ([`Scene::load`]), empty for
    /// one placed with [`add`](Scene::add).
    pub name: &'a str,
}

/// How a scene query runs: the mesh query's options, and which instances it sees: those
/// whose mask shares a bit with `mask` and that `filter` (if any) accepts.
/// Every scene query takes them; the nearest point and the selections read only `mask` and
/// `filter` (culling and the triangle test are about rays).
///
/// ```
/// use meshray::prelude::*;
/// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
/// # use nalgebra::{Matrix4, Point3, Vector3};
/// # use std::sync::Arc;
/// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
/// # // The unit triangle in the plane z = 0, its front face towards +z.
/// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
/// # let mut scene = Scene::new();
/// const PROPS: u32 = 0b10;
/// let floor = scene.add(triangle.clone(), Matrix4::identity())?;
/// let prop = scene.add(triangle, Matrix4::new_translation(&Vector3::new(0.0, 0.0, 1.0)))?;
/// scene.set_mask(prop, PROPS)?;
/// let ray = Ray::new(Point3::new(0.2, 0.2, 5.0), -Vector3::z());
/// assert_eq!(scene.closest_hit(&ray, &SceneOptions::default()).unwrap().instance, prop);
/// // Everything but the props.
/// let no_props = SceneOptions { mask: !PROPS, ..Default::default() };
/// assert_eq!(scene.closest_hit(&ray, &no_props).unwrap().instance, floor);
/// // Pick through the instance being dragged.
/// let dragged = prop;
/// let not_dragged = |id| id != dragged;
/// let under = SceneOptions { filter: Some(&not_dragged), ..Default::default() };
/// assert_eq!(scene.closest_hit(&ray, &under).unwrap().instance, floor);
/// # Ok::<(), meshray::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct SceneOptions<'a> {
    /// Culling and triangle test, as for a mesh. An instance's front faces are the images of
    /// its mesh's front faces, also under a mirror (see [`Scene::add`]).
    pub query: QueryOptions,
    /// Instances whose mask has no bit in common with this one are skipped.
    pub mask: u32,
    /// Instances for which this returns `false` are skipped (`None`: none is). Called only
    /// for instances the walk reaches, so it can be a hash-set lookup.
    pub filter: Option<&'a (dyn Fn(InstanceId) -> bool + Sync)>,
}

impl Default for SceneOptions<'_> {
    fn default() -> Self {
        SceneOptions {
            query: QueryOptions::default(),
            mask: u32::MAX,
            filter: None,
        }
    }
}

/// Every instance, with these culling and triangle-test settings.
impl From<QueryOptions> for SceneOptions<'_> {
    fn from(query: QueryOptions) -> Self {
        SceneOptions {
            query,
            ..Default::default()
        }
    }
}

impl std::fmt::Debug for SceneOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SceneOptions")
            .field("query", &self.query)
            .field("mask", &self.mask)
            .field("filter", &self.filter.map(|_| "Fn(InstanceId) -> bool"))
            .finish()
    }
}

impl SceneOptions<'_> {
    /// Whether a query with these options sees `instance` (number `id`).
    fn sees(&self, id: InstanceId, instance: &Instance) -> bool {
        instance.mask & self.mask != 0 && self.filter.is_none_or(|f| f(id))
    }

    /// The instances a top-level leaf names (`ids`) that are still in `slots` (not removed
    /// since the tree was built) and that a query with these options sees.
    fn seen_in<'s>(
        &'s self,
        slots: &'s [Option<Instance>],
        ids: &'s [InstanceId],
    ) -> impl Iterator<Item = (InstanceId, &'s Instance)> + 's {
        ids.iter()
            .filter_map(move |&id| match slots.get(id as usize) {
                Some(Some(instance)) if self.sees(id, instance) => Some((id, instance)),
                _ => None,
            })
    }
}

/// A hit in a scene: the instance and everything a mesh hit tells, with `point`, `normal`
/// and `shading_normal` in world space (`t` is the same in both spaces: rays are not
/// normalized when they move into object space).
///
/// ```
/// use meshray::prelude::*;
/// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
/// # use nalgebra::{Matrix4, Point3, Vector3};
/// # use std::sync::Arc;
/// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
/// # // The unit triangle in the plane z = 0, its front face towards +z.
/// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
/// # let mut scene = Scene::new();
/// // The triangle turned to stand in the plane x = 2, facing +x.
/// let turn = Matrix4::new_translation(&Vector3::new(2.0, 0.0, 0.0))
///     * Matrix4::from_axis_angle(&Vector3::y_axis(), std::f32::consts::FRAC_PI_2);
/// let id = scene.add(triangle, turn)?;
/// let ray = Ray::new(Point3::new(10.0, 0.2, -0.2), -Vector3::x());
/// let found = scene.closest_hit(&ray, &SceneOptions::default()).unwrap();
/// assert_eq!(found.instance, id);
/// // World space: the point on the plane x = 2, the normal along +x; t as in world space.
/// assert!((found.hit.point - Point3::new(2.0, 0.2, -0.2)).norm() < 1e-5);
/// assert!((found.hit.normal.x - 1.0).abs() < 1e-5 && found.hit.front_face);
/// assert!((found.hit.t - 8.0).abs() < 1e-5);
/// # Ok::<(), meshray::Error>(())
/// ```
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SceneHit {
    /// The instance hit.
    pub instance: InstanceId,
    /// The hit, in world space.
    pub hit: Hit,
}

/// Meshes placed with transforms, sharing their BVHs (an `Arc<Bvh>` can be placed many
/// times without copying), picked together; instances come, go and move all the time, and
/// the top-level tree follows them lazily (see [`update`](Scene::update)).
///
/// ```
/// use meshray::prelude::*;
/// use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
/// use nalgebra::{Matrix4, Point3, Vector3};
/// use std::sync::Arc;
///
/// let scene_mesh = Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
/// let bvh = Arc::new(Bvh::build(scene_mesh));
/// let mut scene = Scene::new();
/// let near = scene.add(bvh.clone(), Matrix4::identity())?;
/// let far = scene.add(bvh, Matrix4::new_translation(&Vector3::new(0.0, 0.0, -50.0)))?;
/// let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), -Vector3::z());
/// assert_eq!(scene.closest_hit(&ray, &SceneOptions::default()).unwrap().instance, near);
/// scene.set_mask(near, 0)?; // hidden from every query
/// assert_eq!(scene.closest_hit(&ray, &SceneOptions::default()).unwrap().instance, far);
/// scene.remove(far)?;
/// assert!(scene.closest_hit(&ray, &SceneOptions::default()).is_none());
/// # Ok::<(), meshray::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct Scene {
    /// Instance `id` at `slots[id]`; `None` for an id [`remove`](Scene::remove) freed.
    slots: Vec<Option<Instance>>,
    /// Each id's world box (empty for a freed id): dense, for the top-level refit.
    bounds: Vec<Aabb>,
    /// Freed ids, the next `add`'s last.
    free: Vec<InstanceId>,
    /// What a load reported without failing ([`Scene::load_warnings`]).
    load_warnings: Vec<Error>,
    /// The top-level trees, up to date, made by the first query after an edit (or
    /// [`Scene::update`]): `k` edits in a row cost one update, not `k`.
    top: OnceLock<TopLevel>,
    /// The trees as they were before the last edits, for that update to refit in place.
    stale: Mutex<Option<TopLevel>>,
}

impl Clone for Scene {
    fn clone(&self) -> Scene {
        Scene {
            slots: self.slots.clone(),
            bounds: self.bounds.clone(),
            free: self.free.clone(),
            load_warnings: self.load_warnings.clone(),
            top: self.top.clone(),
            stale: Mutex::new(
                self.stale
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .clone(),
            ),
        }
    }
}

impl Instance {
    /// An instance with mask all ones, and its world box.
    fn new(bvh: Arc<Bvh>, transform: &Matrix4<f32>) -> Result<(Instance, Aabb)> {
        let (to_world, to_object) = affine(transform)?;
        let bounds = placed_bounds(&bvh.bounds(), &to_world)?;
        let instance = Instance {
            name: String::new(),
            bvh,
            inverse_bound: sweep::InverseBound::of(&to_world, &to_object),
            to_world,
            to_object,
            mask: u32::MAX,
        };
        Ok((instance, bounds))
    }
}

/// The world box of an object box `b` placed by `to_world` (its corners moved, rounded
/// outwards), which must stay inside the range where the queries are exact
/// ([`Mesh::MAX_COORDINATE`](crate::Mesh::MAX_COORDINATE)) in world space too.
fn placed_bounds(b: &Aabb, to_world: &Matrix4<f64>) -> Result<Aabb> {
    if b.is_empty() {
        return Ok(Aabb::EMPTY);
    }
    let (min, max) = moved_box(to_world, b.min.into(), b.max.into());
    let limit = crate::Mesh::MAX_COORDINATE;
    if min.iter().chain(max.iter()).all(|c| c.abs() <= limit) {
        Ok(Aabb::new(Point3::from(min), Point3::from(max)))
    } else {
        Err(Error::InvalidTransform {
            reason: "it places the mesh beyond ±2^40 (about 1.1e12), where f32 queries are no longer exact",
        })
    }
}

/// The ids `start..start + n`, if they are all below `InstanceId::MAX`.
fn ids_from(start: usize, n: usize) -> Result<std::ops::Range<InstanceId>> {
    InstanceId::try_from(start + n)
        .ok()
        .filter(|&end| end < InstanceId::MAX)
        .map(|end| start as InstanceId..end)
        .ok_or(Error::InvalidTransform {
            reason: "too many instances: ids would overflow",
        })
}

/// The error for an id no instance has.
fn unknown(id: InstanceId, count: usize) -> Error {
    Error::UnknownInstance { id, count }
}

impl Scene {
    /// An empty scene.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Ray, Scene, SceneOptions};
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let scene = Scene::new();
    /// assert!(scene.is_empty() && scene.bounds().is_empty());
    /// let ray = Ray::new(Point3::origin(), Vector3::x());
    /// assert!(scene.closest_hit(&ray, &SceneOptions::default()).is_none());
    /// ```
    pub fn new() -> Scene {
        Scene::default()
    }

    /// Places `bvh` with the object-to-world `transform` (affine: rotation, translation,
    /// scale, shear; mirroring allowed; nalgebra's `Matrix4`, or any math crate's matrix that
    /// converts into `mint`'s column-major one, as glam's `Mat4` does), mask all
    /// ones. Returns its id: the id [`remove`](Scene::remove) freed last, if any, else the
    /// next new one. O(1): the top-level trees catch up at the next query (see
    /// [`update`](Scene::update)), once for any number of edits.
    ///
    /// A mirror (negative determinant) turns the world winding over but keeps the mesh's
    /// front side in front, as glTF, three.js and Unity do: a mirrored closed mesh still
    /// faces outwards, and back-face culling still shows its outside.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::Error;
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// // Mirrored in z: the triangle's front face still faces the way its mesh's did,
    /// // now towards -z.
    /// let mirror = Matrix4::new_nonuniform_scaling(&Vector3::new(1.0, 1.0, -1.0));
    /// let id = scene.add(triangle.clone(), mirror)?;
    /// let from_below = Ray::new(Point3::new(0.2, 0.2, -5.0), Vector3::z());
    /// let hit = scene.closest_hit(&from_below, &SceneOptions::default()).unwrap();
    /// assert!(hit.instance == id && hit.hit.front_face);
    /// // A flattening scale cannot be inverted: refused, and the scene is unchanged.
    /// let flat = Matrix4::new_nonuniform_scaling(&Vector3::new(1.0, 0.0, 1.0));
    /// assert!(matches!(scene.add(triangle, flat), Err(Error::InvalidTransform { .. })));
    /// assert_eq!(scene.len(), 1);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidTransform`] for a non-finite, non-affine or singular transform, or one
    /// that places the mesh beyond ±[`Mesh::MAX_COORDINATE`](crate::Mesh::MAX_COORDINATE).
    pub fn add(
        &mut self,
        bvh: Arc<Bvh>,
        transform: impl Into<mint::ColumnMatrix4<f32>>,
    ) -> Result<InstanceId> {
        let (instance, bounds) = Instance::new(bvh, &Matrix4::from(transform.into()))?;
        let id = match self.free.pop() {
            Some(id) => id,
            None => ids_from(self.slots.len(), 1)?.start,
        };
        self.put(id, instance, bounds);
        Ok(id)
    }

    /// [`add`](Scene::add) for many (the glTF loader's placements): the ids it returns are
    /// consecutive, and on the first refused transform the scene is left unchanged.
    #[cfg(any(feature = "gltf", test))]
    pub(crate) fn add_all<M: Into<mint::ColumnMatrix4<f32>>>(
        &mut self,
        items: impl IntoIterator<Item = (Arc<Bvh>, M)>,
    ) -> Result<std::ops::Range<InstanceId>> {
        let start = self.slots.len();
        // Placed straight into new slots (no list in between), taken back on a refusal.
        let mut refused = None;
        for (bvh, transform) in items {
            match Instance::new(bvh, &Matrix4::from(transform.into())) {
                Ok((instance, bounds)) => {
                    self.slots.push(Some(instance));
                    self.bounds.push(bounds);
                }
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        let ids = match refused {
            Some(e) => Err(e),
            None => ids_from(start, self.slots.len() - start),
        };
        if ids.is_ok() {
            self.changed();
        } else {
            self.slots.truncate(start);
            self.bounds.truncate(start);
        }
        ids
    }

    /// Takes instance `id` out of the scene and returns its BVH; `id` is free for a later
    /// [`add`](Scene::add). O(1): the top-level tree keeps an empty leaf for it until the
    /// next rebuild.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// let a = scene.add(triangle.clone(), Matrix4::identity())?;
    /// let b = scene.add(triangle.clone(), Matrix4::new_translation(&Vector3::new(0.0, 0.0, 1.0)))?;
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 5.0), -Vector3::z());
    /// assert_eq!(scene.closest_hit(&ray, &SceneOptions::default()).unwrap().instance, b);
    /// scene.remove(b)?;
    /// assert_eq!(scene.closest_hit(&ray, &SceneOptions::default()).unwrap().instance, a);
    /// assert_eq!(scene.len(), 1);
    /// assert!(scene.remove(b).is_err()); // already gone
    /// assert_eq!(scene.add(triangle, Matrix4::identity())?, b); // its id is reused
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownInstance`].
    pub fn remove(&mut self, id: InstanceId) -> Result<Arc<Bvh>> {
        self.get(id)?;
        let instance = self.slots[id as usize].take().expect("checked");
        self.bounds[id as usize] = Aabb::EMPTY;
        self.free.push(id);
        self.changed();
        // The stale tree's leaf must not stand for whichever instance gets the id next.
        if let Some(top) = self.stale.get_mut().unwrap_or_else(PoisonError::into_inner) {
            top.forget(id);
        }
        Ok(instance.bvh)
    }

    /// The ids of the instances in the scene, ascending.
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Scene};
    /// # use nalgebra::{Matrix4, Point3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// for _ in 0..4 {
    ///     scene.add(triangle.clone(), Matrix4::identity())?;
    /// }
    /// scene.remove(1)?;
    /// assert_eq!(scene.ids().collect::<Vec<_>>(), [0, 2, 3]);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn ids(&self) -> impl Iterator<Item = InstanceId> + '_ {
        (0..self.slots.len() as InstanceId).filter(|&id| self.slots[id as usize].is_some())
    }

    /// Stores `instance` as `id` (a free id or the next new one).
    fn put(&mut self, id: InstanceId, instance: Instance, bounds: Aabb) {
        let i = id as usize;
        if i == self.slots.len() {
            self.slots.push(None);
            self.bounds.push(Aabb::EMPTY);
        }
        self.slots[i] = Some(instance);
        self.bounds[i] = bounds;
        self.changed();
    }

    /// What loading the scene reported without failing: each glTF node left out for a
    /// singular transform ([`Error::NodeTransform`]) or a mesh too small to compute with
    /// ([`Error::MeshTooSmall`]). Empty for a clean load and for a scene built by hand.
    pub fn load_warnings(&self) -> &[Error] {
        &self.load_warnings
    }

    /// A loader's names for the instances (in id order) and its warnings.
    #[cfg(feature = "gltf")]
    pub(crate) fn set_loaded(&mut self, names: Vec<String>, warnings: Vec<Error>) {
        debug_assert_eq!(names.len(), self.slots.len());
        for (instance, name) in self.slots.iter_mut().flatten().zip(names) {
            instance.name = name;
        }
        self.load_warnings = warnings;
    }

    /// Marks the top-level trees stale: the next query (or [`update`](Scene::update)) brings
    /// them up to date, refitting the old ones where it can.
    fn changed(&mut self) {
        if let Some(top) = self.top.take() {
            *self.stale.get_mut().unwrap_or_else(PoisonError::into_inner) = Some(top);
        }
    }

    /// Marks the top-level trees stale after instance `id`'s box changed: the update refits
    /// the path above its leaf.
    fn moved(&mut self, id: InstanceId) {
        self.changed();
        if let Some(top) = self.stale.get_mut().unwrap_or_else(PoisonError::into_inner) {
            top.touch(id);
        }
    }

    /// Brings the top-level trees up to date now, so that the next queries neither wait nor
    /// allocate. Queries do this themselves when an edit made the trees stale (the first
    /// one pays; concurrent ones wait for it), so calling it is never needed for correct
    /// answers: an application calls it once per frame after its edits, to keep picking
    /// latency even. After moves, mesh changes and removals the trees are refitted (O(n),
    /// no allocation); after additions the added instances get a small tree of their own;
    /// the whole is rebuilt when refitting has made it much worse (the rules are in
    /// `src/scene/top.rs`).
    ///
    /// ```
    /// use meshray::prelude::*;
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// for i in 0..100 {
    ///     scene.add(triangle.clone(), Matrix4::new_translation(&Vector3::new(2.0 * i as f32, 0.0, 0.0)))?;
    /// }
    /// // A frame: move a few, update once, then pick.
    /// for id in (0..100).step_by(10) {
    ///     scene.set_transform(id, Matrix4::new_translation(&Vector3::new(2.0 * id as f32, 5.0, 0.0)))?;
    /// }
    /// scene.update();
    /// let ray = Ray::new(Point3::new(20.2, 5.2, 1.0), -Vector3::z());
    /// assert_eq!(scene.closest_hit(&ray, &SceneOptions::default()).unwrap().instance, 10);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn update(&mut self) {
        self.top();
    }

    /// The top-level trees, brought up to date now if an edit made them stale.
    fn top(&self) -> &TopLevel {
        self.top.get_or_init(|| {
            let stale = self
                .stale
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            let top = TopLevel::update(stale, &self.slots, &self.bounds);
            #[cfg(debug_assertions)]
            if let Err(e) = top.check(&self.slots, &self.bounds) {
                panic!("meshray updated an invalid top-level tree (a bug): {e}");
            }
            top
        })
    }

    /// Moves an instance: a new object-to-world transform. Its mesh BVH is kept; the
    /// top-level tree is marked stale and refitted by the next query (O(n) for n instances,
    /// once however many moved; see [`update`](Scene::update)).
    ///
    /// # Errors
    /// [`Error::InvalidTransform`] as for [`add`](Scene::add), or
    /// [`Error::UnknownInstance`]; the scene is then unchanged.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::Error;
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// let id = scene.add(triangle, Matrix4::identity())?;
    /// let ray = Ray::new(Point3::new(5.2, 0.2, 1.0), -Vector3::z());
    /// assert!(scene.closest_hit(&ray, &SceneOptions::default()).is_none());
    /// scene.set_transform(id, Matrix4::new_translation(&Vector3::new(5.0, 0.0, 0.0)))?;
    /// assert!(scene.closest_hit(&ray, &SceneOptions::default()).is_some());
    /// let unknown = scene.set_transform(7, Matrix4::identity());
    /// assert!(matches!(unknown, Err(Error::UnknownInstance { id: 7, count: 1 })));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn set_transform(
        &mut self,
        id: InstanceId,
        transform: impl Into<mint::ColumnMatrix4<f32>>,
    ) -> Result<()> {
        let (to_world, to_object) = affine(&Matrix4::from(transform.into()))?;
        let bounds = placed_bounds(&self.get(id)?.bvh.bounds(), &to_world)?;
        let instance = self.get_mut(id)?;
        instance.inverse_bound = sweep::InverseBound::of(&to_world, &to_object);
        instance.to_world = to_world;
        instance.to_object = to_object;
        self.bounds[id as usize] = bounds;
        self.moved(id);
        Ok(())
    }

    /// Places another BVH as instance `id` (a new version of its model, a level of detail),
    /// keeping its transform, mask and name.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// let id = scene.add(triangle.clone(), Matrix4::identity())?;
    /// let ray = Ray::new(Point3::new(1.5, 0.2, 1.0), -Vector3::z());
    /// assert!(scene.closest_hit(&ray, &SceneOptions::default()).is_none());
    /// // Twice as big.
    /// let q = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(2.0, 0.0, 0.0), Point3::new(0.0, 2.0, 0.0)];
    /// let big = Arc::new(Bvh::build(Mesh::from_buffers(q, vec![[0, 1, 2]])?));
    /// scene.set_mesh(id, big)?;
    /// assert!(scene.closest_hit(&ray, &SceneOptions::default()).is_some());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownInstance`], or [`Error::InvalidTransform`] when the instance's
    /// transform places the new mesh beyond ±[`Mesh::MAX_COORDINATE`](crate::Mesh::MAX_COORDINATE);
    /// the scene is then unchanged.
    pub fn set_mesh(&mut self, id: InstanceId, bvh: Arc<Bvh>) -> Result<()> {
        let bounds = placed_bounds(&bvh.bounds(), &self.get(id)?.to_world)?;
        self.get_mut(id)?.bvh = bvh;
        self.bounds[id as usize] = bounds;
        self.moved(id);
        Ok(())
    }

    /// Moves the vertices of instance `id`'s mesh to `positions` and refits its BVH (see
    /// [`Bvh::refit`]): a skinned or deforming model. Copy on write: when other instances
    /// (or the caller) share the BVH, this instance gets its own refitted copy and the others
    /// keep the old shape; when it is this instance's alone, it is refitted in place.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// let a = scene.add(triangle.clone(), Matrix4::identity())?;
    /// let b = scene.add(triangle, Matrix4::new_translation(&Vector3::new(5.0, 0.0, 0.0)))?;
    /// // Stretch a's triangle along x; b shares the mesh but keeps its shape.
    /// let stretched = [Point3::new(0.0, 0.0, 0.0), Point3::new(10.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// scene.refit_mesh(a, &stretched)?;
    /// let ray = Ray::new(Point3::new(5.5, 0.2, 1.0), -Vector3::z());
    /// let hits = scene.all_hits(&ray, &SceneOptions::default());
    /// assert_eq!(hits.iter().map(|h| h.instance).collect::<Vec<_>>(), [a, b]);
    /// let beside_b = Ray::new(Point3::new(6.5, 0.2, 1.0), -Vector3::z());
    /// let hits = scene.all_hits(&beside_b, &SceneOptions::default());
    /// assert_eq!(hits.iter().map(|h| h.instance).collect::<Vec<_>>(), [a]);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownInstance`]; the errors of [`Bvh::refit`]; [`Error::InvalidTransform`]
    /// when the transform places the moved mesh beyond
    /// ±[`Mesh::MAX_COORDINATE`](crate::Mesh::MAX_COORDINATE). The scene is then unchanged.
    pub fn refit_mesh(&mut self, id: InstanceId, positions: &[Point3<f32>]) -> Result<()> {
        let instance = self.get(id)?;
        let mesh = instance.bvh.mesh();
        let expected = mesh.positions().len();
        if positions.len() != expected {
            return Err(Error::VertexCount {
                expected,
                found: positions.len(),
            });
        }
        crate::mesh::check_coordinates(positions, mesh.triangles())?;
        let object = crate::mesh::used_bounds(positions, mesh.triangles());
        let bounds = placed_bounds(&object, &instance.to_world)?;
        // Refits in place when the instance holds the only reference, else a copy.
        Arc::make_mut(&mut self.get_mut(id)?.bvh).refit(positions)?;
        self.bounds[id as usize] = bounds;
        self.moved(id);
        Ok(())
    }

    /// Poses an instance's mesh with `rig` and refits it ([`Bvh::pose`]: in place when the
    /// instance holds the only reference to its BVH, else on a copy), and moves the
    /// instance's box in the top-level tree. For skinned characters placed in a scene: give
    /// each its own BVH (a clone of the shared one), so posing one does not pose the others.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use meshray::pose::{Pose, Rig};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// let mesh = Mesh::from_buffers(p, vec![[0, 1, 2]])?;
    /// let rig = Rig::new(&mesh).with_skin(vec![[0; 4]; 3], vec![[1.0, 0.0, 0.0, 0.0]; 3])?;
    /// let mut scene = Scene::new();
    /// let id = scene.add(Arc::new(Bvh::build(mesh)), Matrix4::identity())?;
    /// // Joint 0 lifts the triangle to z = 2.
    /// let lift = [Matrix4::new_translation(&(Vector3::z() * 2.0))];
    /// scene.pose_mesh(id, &rig, &Pose { joints: &lift, morph_weights: &[] })?;
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 5.0), -Vector3::z());
    /// assert_eq!(scene.closest_hit(&ray, &SceneOptions::default()).unwrap().hit.t, 3.0);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownInstance`]; the errors of [`Bvh::pose`]; [`Error::InvalidTransform`]
    /// when the instance's transform places the posed mesh beyond
    /// ±[`Mesh::MAX_COORDINATE`](crate::Mesh::MAX_COORDINATE). The scene then answers as
    /// before.
    pub fn pose_mesh(
        &mut self,
        id: InstanceId,
        rig: &crate::Rig,
        pose: &crate::Pose,
    ) -> Result<crate::PoseUpdate> {
        let instance = self.get_mut(id)?;
        let to_world = instance.to_world;
        let bvh = Arc::make_mut(&mut instance.bvh);
        let update = bvh.pose(rig, pose)?;
        let bounds = match placed_bounds(&bvh.bounds(), &to_world) {
            Ok(bounds) => bounds,
            Err(e) => {
                bvh.unpose();
                return Err(e);
            }
        };
        self.bounds[id as usize] = bounds;
        self.moved(id);
        Ok(update)
    }

    /// Sets an instance's mask (see [`SceneOptions::mask`]; new instances have all bits set).
    /// A mask of 0 hides the instance from every query; setting its old mask shows it again.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// let id = scene.add(triangle, Matrix4::identity())?;
    /// scene.set_mask(id, 0b100)?;
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 1.0), -Vector3::z());
    /// let only = |mask| SceneOptions { mask, ..Default::default() };
    /// assert!(scene.closest_hit(&ray, &only(0b100)).is_some());
    /// assert!(scene.closest_hit(&ray, &only(0b011)).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownInstance`].
    pub fn set_mask(&mut self, id: InstanceId, mask: u32) -> Result<()> {
        self.get_mut(id)?.mask = mask;
        Ok(())
    }

    /// How many instances the scene holds.
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// scene.add(triangle.clone(), Matrix4::identity())?;
    /// scene.add(triangle, Matrix4::new_scaling(2.0))?;
    /// assert_eq!(scene.len(), 2);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Whether the scene holds no instance.
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// assert!(scene.is_empty());
    /// scene.add(triangle, Matrix4::identity())?;
    /// assert!(!scene.is_empty());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The box around every instance in world space (whatever its mask), a little loose: each
    /// instance's box is its mesh box's corners transformed. Empty for an empty scene.
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// scene.add(triangle.clone(), Matrix4::identity())?;
    /// scene.add(triangle, Matrix4::new_translation(&Vector3::new(5.0, 0.0, 0.0)))?;
    /// let bounds = scene.bounds();
    /// assert!((bounds.min - Point3::new(0.0, 0.0, 0.0)).norm() < 1e-4);
    /// assert!((bounds.max - Point3::new(6.0, 1.0, 0.0)).norm() < 1e-4);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn bounds(&self) -> Aabb {
        self.bounds.iter().fold(Aabb::EMPTY, |b, i| b.union(i))
    }

    /// Instance `id` as it stands: its mesh's tree, transform, world box, mask and name;
    /// `None` for an id no instance has.
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Scene};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// let lift = Matrix4::new_translation(&Vector3::new(0.0, 2.0, 0.0));
    /// let id = scene.add(triangle.clone(), lift)?;
    /// let instance = scene.instance(id).unwrap();
    /// assert!(Arc::ptr_eq(instance.bvh, &triangle)); // shared, not copied
    /// assert_eq!(instance.transform, lift);
    /// assert!((instance.bounds.max - Point3::new(1.0, 3.0, 0.0)).norm() < 1e-4);
    /// assert_eq!((instance.mask, instance.name), (u32::MAX, ""));
    /// assert!(scene.instance(id + 1).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn instance(&self, id: InstanceId) -> Option<InstanceView<'_>> {
        let instance = self.get(id).ok()?;
        Some(InstanceView {
            bvh: &instance.bvh,
            transform: instance.to_world.cast::<f32>(),
            bounds: self.bounds[id as usize],
            mask: instance.mask,
            name: &instance.name,
        })
    }

    /// Instance `id`, or the error that names it unknown.
    fn get(&self, id: InstanceId) -> Result<&Instance> {
        let count = self.len();
        self.slots
            .get(id as usize)
            .and_then(Option::as_ref)
            .ok_or(unknown(id, count))
    }

    fn get_mut(&mut self, id: InstanceId) -> Result<&mut Instance> {
        let count = self.len();
        self.slots
            .get_mut(id as usize)
            .and_then(Option::as_mut)
            .ok_or(unknown(id, count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::RayCast;
    use crate::{Mesh, Ray};
    use nalgebra::Vector3;

    fn triangle() -> Arc<Bvh> {
        let p = vec![
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(1.0, 0.0, 0.0),
            Point3::new(0.0, 1.0, 0.0),
        ];
        Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]]).unwrap()))
    }

    fn at(x: f32) -> Matrix4<f32> {
        Matrix4::new_translation(&Vector3::new(x, 0.0, 0.0))
    }

    fn hit(scene: &Scene, x: f32) -> Option<InstanceId> {
        let ray = Ray::new(Point3::new(x, 0.2, 1.0), -Vector3::z());
        scene
            .closest_hit(&ray, &SceneOptions::default())
            .map(|h| h.instance)
    }

    #[test]
    fn edits_leave_the_top_level_tree_to_the_next_query() {
        // `add` once rebuilt the whole tree per call: 10,000 instances took 16.5 s.
        let (triangle, mut scene) = (triangle(), Scene::new());
        for i in 0..2000 {
            scene.add(triangle.clone(), at(2.0 * i as f32)).unwrap();
            assert!(scene.top.get().is_none(), "add {i} built the tree");
        }
        assert_eq!(hit(&scene, 1500.2), Some(750));
        let built = scene.top.get().unwrap().main.nodes.as_ptr();
        // Further queries reuse it; a move marks it stale, the next query refits it in place.
        assert_eq!(hit(&scene, 1500.2), Some(750));
        scene.set_transform(750, at(-10.0)).unwrap();
        assert!(scene.top.get().is_none());
        assert_eq!(hit(&scene, 1500.2), None);
        assert_eq!(hit(&scene, -9.8), Some(750));
        assert_eq!(scene.top.get().unwrap().main.nodes.as_ptr(), built, "refit");
        // A few added instances get a tree of their own; the main one is refitted.
        let ids = scene
            .add_all((0..3).map(|i| (triangle.clone(), at(1500.0 + i as f32 * 0.01))))
            .unwrap();
        assert_eq!(ids, 2000..2003);
        assert_eq!(hit(&scene, 1500.2), Some(2000));
        let top = scene.top.get().unwrap();
        assert_eq!((top.main.nodes.as_ptr(), top.added.order.len()), (built, 3));
        // Removing most instances makes the next update rebuild: no empty leaves are kept.
        for id in 0..1500 {
            scene.remove(id).unwrap();
        }
        scene.update();
        let top = scene.top.get().unwrap();
        assert_eq!((top.main.order.len(), top.added.order.len()), (503, 0));
        assert_eq!(hit(&scene, 1500.2), Some(2000));
        assert_eq!(hit(&scene, 2.2), None);
        // A freed id is reused by `add`, and found by the next query.
        assert_eq!(scene.add(triangle, at(-50.0)).unwrap(), 1499);
        assert_eq!(hit(&scene, -49.8), Some(1499));
    }

    #[test]
    fn moves_that_spoil_the_tree_rebuild_it() {
        let (triangle, mut scene) = (triangle(), Scene::new());
        scene
            .add_all((0..500).map(|i| (triangle.clone(), at(2.0 * i as f32))))
            .unwrap();
        scene.update();
        let built = scene.top.get().unwrap().main.nodes.as_ptr();
        // Shuffle the row: neighbours in the tree end up far apart, its nodes' boxes span
        // the row, and the refit tree's cost grows far past the rule's limit.
        let place = |id: u32| (id * 7919 % 500) as f32 * 2.0;
        for id in 0..500 {
            scene.set_transform(id, at(place(id))).unwrap();
        }
        scene.update();
        let top = scene.top.get().unwrap();
        assert_ne!(top.main.nodes.as_ptr(), built, "rebuilt");
        let first = (0..500).find(|&id| place(id) == 0.0);
        assert_eq!(hit(&scene, 0.2), first);
    }

    /// After every kind of edit the updated top-level trees keep their invariants
    /// (`TopLevel::check`): moves refitted along their paths, removals, additions into the
    /// second tree, freed ids reused, and the rebuilds the rules call for.
    #[test]
    fn updated_top_level_trees_stay_valid() {
        let (triangle, mut scene) = (triangle(), Scene::new());
        let check = |scene: &Scene| {
            let top = scene.top();
            top.check(&scene.slots, &scene.bounds).unwrap();
        };
        scene
            .add_all((0..700).map(|i| (triangle.clone(), at(2.0 * i as f32))))
            .unwrap();
        check(&scene);
        let mut seed = 7u32;
        let mut next = |n: u32| {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) % n
        };
        for round in 0..60 {
            for _ in 0..1 + next(20) {
                let id = next(800);
                match next(4) {
                    0 | 1 => {
                        let _ = scene.set_transform(id, at(next(3000) as f32 - 500.0));
                    }
                    2 => {
                        let _ = scene.remove(id);
                    }
                    _ => {
                        scene.add(triangle.clone(), at(next(3000) as f32)).unwrap();
                    }
                }
            }
            check(&scene);
            assert_eq!(
                scene
                    .top()
                    .main
                    .order
                    .iter()
                    .filter(|&&id| id != top::REMOVED)
                    .count()
                    + scene.top().added.order.len(),
                scene.len(),
                "round {round}"
            );
        }
        // A damaged tree is caught.
        scene.update();
        let mut top = scene.top().clone();
        top.main.order.swap(0, 1);
        top.main.nodes[0].max[0][0] += 1.0;
        assert!(top.check(&scene.slots, &scene.bounds).is_err());
    }

    #[test]
    fn instances_beyond_the_range_are_refused() {
        let (triangle, mut scene) = (triangle(), Scene::new());
        let far = at(2e12);
        assert!(matches!(
            scene.add(triangle.clone(), far),
            Err(Error::InvalidTransform { .. })
        ));
        let huge = Matrix4::new_scaling(1e13);
        assert!(scene.add(triangle.clone(), huge).is_err());
        let id = scene.add(triangle.clone(), at(0.0)).unwrap();
        assert!(scene.set_transform(id, far).is_err());
        assert!(
            scene.instance(id).unwrap().bounds.max.x < 1.001,
            "unchanged"
        );
        let all = scene.add_all([(triangle.clone(), at(1.0)), (triangle.clone(), far)]);
        assert!(all.is_err());
        assert_eq!(scene.len(), 1);
        // A refit that would carry the mesh beyond the range is refused, nothing changed.
        scene.set_transform(id, Matrix4::new_scaling(1e11)).unwrap();
        let grown = [
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(100.0, 0.0, 0.0),
            Point3::new(0.0, 1.0, 0.0),
        ];
        assert!(matches!(
            scene.refit_mesh(id, &grown),
            Err(Error::InvalidTransform { .. })
        ));
        assert!(Arc::ptr_eq(scene.instance(id).unwrap().bvh, &triangle));
        assert!(matches!(
            scene.refit_mesh(id, &grown[..2]),
            Err(Error::VertexCount { .. })
        ));
        let nan = [Point3::new(f32::NAN, 0.0, 0.0), grown[1], grown[2]];
        assert!(scene.refit_mesh(id, &nan).is_err());
        assert!(Arc::ptr_eq(scene.instance(id).unwrap().bvh, &triangle));
    }

    #[test]
    fn scenes_are_send_and_sync() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Scene>();
        shareable::<SceneOptions<'_>>();
    }
}
