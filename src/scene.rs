//! Scenes: meshes placed as instances with affine transforms, picked through a top-level
//! BVH over the instances' world boxes, each instance's own BVH below it. The top-level tree
//! is a wide tree like a mesh's, its leaves naming instances, walked by the same walk.

use crate::aabb::RaySlabs;
use crate::bvh::build_binary;
use crate::bvh::nearest::lanes_near;
use crate::bvh::walk::{Visitor, walk};
use crate::bvh::wide::{WIDTH, WideNode, WideRay, collapse, lane_intervals, widened};
use crate::{Aabb, BuildOptions, Bvh, Error, Hit, QueryOptions, Ray, Result};
use nalgebra::{Matrix3, Matrix4, Point3, Unit, Vector3};
use std::sync::{Arc, OnceLock};

/// An instance's number in its [`Scene`], in the order they were added.
///
/// ```
/// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
/// # use nalgebra::{Matrix4, Point3, Vector3};
/// # use std::sync::Arc;
/// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
/// # // The unit triangle in the plane z = 0, its front face towards +z.
/// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
/// let mut scene = Scene::new();
/// let first: meshray::InstanceId = scene.add(triangle.clone(), Matrix4::identity())?;
/// let second = scene.add(triangle, Matrix4::new_translation(&Vector3::new(5.0, 0.0, 0.0)))?;
/// assert_eq!((first, second), (0, 1));
/// # Ok::<(), meshray::Error>(())
/// ```
pub type InstanceId = u32;

/// A mesh placed in a scene.
#[derive(Clone, Debug)]
struct Instance {
    bvh: Arc<Bvh>,
    /// Object → world, and its inverse, both in f64 (rays are moved into object space).
    to_world: Matrix4<f64>,
    to_object: Matrix4<f64>,
    world_bounds: Aabb,
    enabled: bool,
    mask: u32,
    /// From the file it was loaded from ([`Scene::load`]); empty for one placed by `add`.
    name: String,
}

/// How a scene query runs: the mesh query's options, and which instances it sees (those
/// whose mask shares a bit with `mask`).
///
/// ```
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
/// # Ok::<(), meshray::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SceneOptions {
    /// Culling and triangle test, as for a mesh. An instance's front faces are the images of
    /// its mesh's front faces, also under a mirror (see [`Scene::add`]).
    pub query: QueryOptions,
    /// Instances whose mask has no bit in common with this one are skipped.
    pub mask: u32,
}

impl Default for SceneOptions {
    fn default() -> Self {
        SceneOptions {
            query: QueryOptions::default(),
            mask: u32::MAX,
        }
    }
}

/// A hit in a scene: the instance and everything a mesh hit tells, with `point`, `normal`
/// and `shading_normal` in world space (`t` is the same in both spaces: rays are not
/// normalized when they move into object space).
///
/// ```
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
/// times without copying), picked together.
///
/// ```
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
/// scene.set_enabled(near, false)?;
/// assert_eq!(scene.closest_hit(&ray, &SceneOptions::default()).unwrap().instance, far);
/// # Ok::<(), meshray::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Scene {
    instances: Vec<Instance>,
    /// What a load reported without failing ([`Scene::load_warnings`]).
    load_warnings: Vec<Error>,
    /// The top-level tree over the instances' world boxes, built by the first query after a
    /// change ([`Scene::top`]): `k` edits in a row cost one build, not `k`.
    top: OnceLock<TopLevel>,
}

/// The top-level tree: a binary SAH tree over the instances' world boxes, one instance per
/// leaf, collapsed into wide nodes whose leaves index `order`.
#[derive(Clone, Debug, Default)]
struct TopLevel {
    nodes: Vec<WideNode>,
    order: Vec<u32>,
}

impl TopLevel {
    fn build(instances: &[Instance]) -> TopLevel {
        if instances.is_empty() {
            return TopLevel::default();
        }
        let boxes: Vec<Aabb> = instances.iter().map(|i| i.world_bounds).collect();
        let options = BuildOptions {
            max_leaf_size: 1,
            ..Default::default()
        };
        let (binary, order) = build_binary(&boxes, &options, &|_| {});
        TopLevel {
            nodes: collapse(&binary, options.traversal_cost, options.intersection_cost),
            order,
        }
    }
}

impl Instance {
    /// An enabled instance with mask all ones, its world box computed.
    fn new(bvh: Arc<Bvh>, transform: &Matrix4<f32>) -> Result<Instance> {
        let (to_world, to_object) = affine(transform)?;
        Ok(Instance {
            name: String::new(),
            world_bounds: placed_bounds(&bvh, &to_world)?,
            bvh,
            to_world,
            to_object,
            enabled: true,
            mask: u32::MAX,
        })
    }
}

/// Checks a transform: finite, affine (last row 0 0 0 1), invertible.
fn affine(transform: &Matrix4<f32>) -> Result<(Matrix4<f64>, Matrix4<f64>)> {
    let m = transform.cast::<f64>();
    let bad = |reason| Err(Error::InvalidTransform { reason });
    if !m.iter().all(|x| x.is_finite()) {
        return bad("a NaN or infinite entry");
    }
    if m.row(3) != nalgebra::RowVector4::new(0.0, 0.0, 0.0, 1.0) {
        return bad("not affine: the last row must be 0 0 0 1");
    }
    let linear: Matrix3<f64> = m.fixed_view::<3, 3>(0, 0).into_owned();
    let det = linear.determinant();
    let Some(inverse) = m.try_inverse().filter(|_| det != 0.0 && det.is_finite()) else {
        return bad("singular");
    };
    Ok((m, inverse))
}

/// The world box of `bvh` placed by `to_world`, which must stay inside the range where the
/// queries are exact ([`Mesh::MAX_COORDINATE`](crate::Mesh::MAX_COORDINATE)) in world space
/// too.
fn placed_bounds(bvh: &Bvh, to_world: &Matrix4<f64>) -> Result<Aabb> {
    let bounds = world_bounds(bvh, to_world);
    let limit = crate::Mesh::MAX_COORDINATE;
    if bounds
        .min
        .iter()
        .chain(bounds.max.iter())
        .all(|c| c.abs() <= limit)
    {
        Ok(bounds)
    } else {
        Err(Error::InvalidTransform {
            reason: "it places the mesh beyond ±2^40 (about 1.1e12), where f32 queries are no longer exact",
        })
    }
}

fn transform_point(m: &Matrix4<f64>, p: &Point3<f64>) -> Point3<f64> {
    m.transform_point(p)
}

impl Scene {
    /// An empty scene.
    ///
    /// ```
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
    /// converts into `mint`'s column-major one, as glam's `Mat4` does), enabled, mask all ones. Returns its id. O(1): the
    /// top-level tree is rebuilt by the next query, once for any number of edits (see also
    /// [`add_all`](Scene::add_all)).
    ///
    /// A mirror (negative determinant) turns the world winding over but keeps the mesh's
    /// front side in front, as glTF, three.js and Unity do: a mirrored closed mesh still
    /// faces outwards, and back-face culling still shows its outside.
    ///
    /// ```
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
        let id = self.next_id()?;
        let instance = Instance::new(bvh, &Matrix4::from(transform.into()))?;
        self.instances.push(instance);
        self.changed();
        Ok(id)
    }

    /// Places many instances at once, all or none: if any transform is refused, none is
    /// added. Returns their ids, consecutive, in order. Like [`add`](Scene::add) it only
    /// marks the top-level tree stale; the next query builds it once.
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// // A row of 1,000 triangles, one step apart along x.
    /// let row = (0..1000).map(|i| (triangle.clone(), Matrix4::new_translation(&Vector3::new(i as f32, 0.0, 0.0))));
    /// let ids = scene.add_all(row)?;
    /// assert_eq!(ids, 0..1000);
    /// let ray = Ray::new(Point3::new(700.2, 0.2, 1.0), -Vector3::z());
    /// assert_eq!(scene.closest_hit(&ray, &SceneOptions::default()).unwrap().instance, 700);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidTransform`] for the first refused transform; the scene is then
    /// unchanged.
    pub fn add_all<M: Into<mint::ColumnMatrix4<f32>>>(
        &mut self,
        items: impl IntoIterator<Item = (Arc<Bvh>, M)>,
    ) -> Result<std::ops::Range<InstanceId>> {
        let first = self.next_id()?;
        let new = items
            .into_iter()
            .map(|(bvh, transform)| Instance::new(bvh, &Matrix4::from(transform.into())))
            .collect::<Result<Vec<_>>>()?;
        let end = InstanceId::try_from(self.instances.len() + new.len())
            .ok()
            .filter(|&end| end < InstanceId::MAX)
            .ok_or(Error::InvalidTransform {
                reason: "too many instances: ids would overflow",
            })?;
        self.instances.extend(new);
        self.changed();
        Ok(first..end)
    }

    /// An instance's name: its node's in the glTF file it was loaded from
    /// ([`Scene::load`]), empty for one placed with [`add`](Scene::add); `None` for an
    /// unknown id.
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Scene};
    /// # use nalgebra::{Matrix4, Point3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// let id = scene.add(triangle, Matrix4::identity())?;
    /// assert_eq!((scene.name(id), scene.name(id + 1)), (Some(""), None));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn name(&self, id: InstanceId) -> Option<&str> {
        self.instances.get(id as usize).map(|i| i.name.as_str())
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
        debug_assert_eq!(names.len(), self.instances.len());
        for (instance, name) in self.instances.iter_mut().zip(names) {
            instance.name = name;
        }
        self.load_warnings = warnings;
    }

    /// The id the next instance gets, if there is one left.
    fn next_id(&self) -> Result<InstanceId> {
        InstanceId::try_from(self.instances.len())
            .ok()
            .filter(|&id| id < InstanceId::MAX)
            .ok_or(Error::InvalidTransform {
                reason: "too many instances: ids would overflow",
            })
    }

    /// Marks the top-level tree stale: the next query rebuilds it.
    fn changed(&mut self) {
        self.top = OnceLock::new();
    }

    /// The top-level tree, built now if an edit made it stale. Only the first query after
    /// an edit pays (and allocates); concurrent queries wait for that one build.
    fn top(&self) -> &TopLevel {
        self.top.get_or_init(|| TopLevel::build(&self.instances))
    }

    #[cfg(feature = "gltf")]
    /// Whether [`add`](Scene::add) would take this transform.
    pub(crate) fn is_usable_transform(transform: &Matrix4<f32>) -> bool {
        affine(transform).is_ok()
    }

    /// Moves an instance: a new object-to-world transform. Its mesh BVH is kept; the
    /// top-level tree over the instances is marked stale and rebuilt by the next query
    /// (O(k log k) for k instances, once however many instances moved).
    ///
    /// # Errors
    /// [`Error::InvalidTransform`] as for [`add`](Scene::add), or
    /// [`Error::UnknownInstance`]; the scene is then unchanged.
    ///
    /// ```
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
        let instance = self.get_mut(id)?;
        instance.world_bounds = placed_bounds(&instance.bvh, &to_world)?;
        instance.to_world = to_world;
        instance.to_object = to_object;
        self.changed();
        Ok(())
    }

    /// Shows or hides an instance: a disabled instance is skipped by every query (and still
    /// counted by [`len`](Scene::len) and [`bounds`](Scene::bounds)).
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// let id = scene.add(triangle, Matrix4::identity())?;
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 1.0), -Vector3::z());
    /// scene.set_enabled(id, false)?;
    /// assert!(scene.closest_hit(&ray, &SceneOptions::default()).is_none());
    /// scene.set_enabled(id, true)?;
    /// assert!(scene.closest_hit(&ray, &SceneOptions::default()).is_some());
    /// assert!(scene.set_enabled(1, false).is_err());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::UnknownInstance`].
    pub fn set_enabled(&mut self, id: InstanceId, enabled: bool) -> Result<()> {
        self.get_mut(id)?.enabled = enabled;
        Ok(())
    }

    /// Sets an instance's mask (see [`SceneOptions::mask`]; new instances have all bits set).
    ///
    /// ```
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
        self.instances.len()
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
        self.instances.is_empty()
    }

    /// The box around every instance in world space (enabled or not), a little loose: each
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
        self.instances
            .iter()
            .fold(Aabb::EMPTY, |b, i| b.union(&i.world_bounds))
    }

    /// An instance's box in world space (its mesh box's corners transformed, a little
    /// loose).
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// let id = scene.add(triangle, Matrix4::new_scaling(3.0))?;
    /// let bounds = scene.instance_bounds(id).unwrap();
    /// assert!((bounds.max - Point3::new(3.0, 3.0, 0.0)).norm() < 1e-4);
    /// assert!(bounds.contains(&meshray::Aabb::new(Point3::origin(), Point3::new(3.0, 3.0, 0.0))));
    /// assert_eq!(scene.instance_bounds(id + 1), None);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn instance_bounds(&self, id: InstanceId) -> Option<Aabb> {
        self.instances.get(id as usize).map(|i| i.world_bounds)
    }

    /// An instance's mesh BVH.
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// let id = scene.add(triangle.clone(), Matrix4::identity())?;
    /// assert!(Arc::ptr_eq(scene.bvh(id).unwrap(), &triangle)); // shared, not copied
    /// assert!(scene.bvh(id + 1).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn bvh(&self, id: InstanceId) -> Option<&Arc<Bvh>> {
        self.instances.get(id as usize).map(|i| &i.bvh)
    }

    fn get_mut(&mut self, id: InstanceId) -> Result<&mut Instance> {
        let count = self.instances.len();
        self.instances
            .get_mut(id as usize)
            .ok_or(Error::UnknownInstance { id, count })
    }

    /// The first hit along the ray among the enabled instances the options' mask selects.
    /// `None` for a miss, an invalid ray or an empty scene. Allocates nothing.
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
    /// let front = scene.add(triangle, Matrix4::new_translation(&Vector3::new(0.0, 0.0, 1.0)))?;
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 5.0), -Vector3::z());
    /// let hit = scene.closest_hit(&ray, &SceneOptions::default()).unwrap();
    /// assert_eq!((hit.instance, hit.hit.t), (front, 4.0));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn closest_hit(&self, ray: &Ray, options: &SceneOptions) -> Option<SceneHit> {
        self.closest_hit_filtered(ray, options, |_| true)
    }

    /// [`closest_hit`](Scene::closest_hit) among the instances `filter` also accepts.
    ///
    /// ```
    /// # use meshray::{Bvh, Mesh, Ray, Scene, SceneOptions};
    /// # use nalgebra::{Matrix4, Point3, Vector3};
    /// # use std::sync::Arc;
    /// # let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// # // The unit triangle in the plane z = 0, its front face towards +z.
    /// # let triangle = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?));
    /// let mut scene = Scene::new();
    /// let back = scene.add(triangle.clone(), Matrix4::identity())?;
    /// let front = scene.add(triangle, Matrix4::new_translation(&Vector3::new(0.0, 0.0, 1.0)))?;
    /// let ray = Ray::new(Point3::new(0.2, 0.2, 5.0), -Vector3::z());
    /// // Pick through the instance being dragged.
    /// let dragged = front;
    /// let under = scene.closest_hit_filtered(&ray, &SceneOptions::default(), |id| id != dragged);
    /// assert_eq!(under.unwrap().instance, back);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn closest_hit_filtered(
        &self,
        ray: &Ray,
        options: &SceneOptions,
        filter: impl Fn(InstanceId) -> bool,
    ) -> Option<SceneHit> {
        let mut best: Option<(InstanceId, Ray, crate::CompactHit)> = None;
        self.walk(ray, options, &filter, |id, instance, t_max| {
            let local = object_ray(instance, ray, *t_max)?;
            let hit = instance.bvh.closest_triangle(&local, &options.query)?;
            // Of instances hit at the same `t`, the lowest number wins, in any walk order.
            if let Some((best_id, _, b)) = &best
                && b.t == hit.t
                && *best_id < id
            {
                return Some(false);
            }
            *t_max = hit.t;
            best = Some((id, local, hit));
            Some(false)
        });
        best.map(|(id, local, hit)| self.details(id, &local, &hit))
    }

    /// Some hit along the ray (the first found, not necessarily the closest).
    ///
    /// ```
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
    /// assert!(scene.any_hit(&sight.with_t_range(0.0, 0.4), &SceneOptions::default()).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn any_hit(&self, ray: &Ray, options: &SceneOptions) -> Option<SceneHit> {
        let mut found = None;
        self.walk(ray, options, &|_| true, |id, instance, t_max| {
            let local = object_ray(instance, ray, *t_max)?;
            let hit = instance.bvh.any_triangle(&local, &options.query)?;
            found = Some((id, local, hit));
            Some(true)
        });
        found.map(|(id, local, hit)| self.details(id, &local, &hit))
    }

    /// Every hit along the ray, sorted by `t` (then instance, then triangle).
    ///
    /// ```
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
    pub fn all_hits(&self, ray: &Ray, options: &SceneOptions) -> Vec<SceneHit> {
        let (mut hits, mut local_hits) = (Vec::new(), Vec::new());
        let t_end = ray.t_max();
        self.walk(ray, options, &|_| true, |id, instance, _| {
            let local = object_ray(instance, ray, t_end)?;
            instance
                .bvh
                .all_hits_into(&local, &options.query, &mut local_hits);
            hits.extend(local_hits.drain(..).map(|hit| self.to_world(id, hit)));
            Some(false)
        });
        hits.sort_by(|a, b| {
            a.hit
                .t
                .total_cmp(&b.hit.t)
                .then(a.instance.cmp(&b.instance))
                .then(a.hit.triangle.cmp(&b.hit.triangle))
        });
        hits
    }

    /// Walks the top-level tree near box first; `visit(id, instance, t_max)` queries an
    /// instance (lowering `t_max` for closest hit) and returns `Some(true)` to stop.
    fn walk(
        &self,
        ray: &Ray,
        options: &SceneOptions,
        filter: &dyn Fn(InstanceId) -> bool,
        visit: impl FnMut(InstanceId, &Instance, &mut f32) -> Option<bool>,
    ) {
        if !ray.is_valid() {
            return;
        }
        let top = self.top();
        let mut visitor = InstanceRays {
            ray: WideRay::new(&RaySlabs::new(ray)),
            t_min: ray.t_min(),
            t_max: ray.t_max(),
            scene: self,
            order: &top.order,
            mask: options.mask,
            filter,
            visit,
        };
        walk(&top.nodes, &mut visitor);
    }

    /// The point of the scene nearest to `point` within `max_distance` (inclusive), among
    /// the enabled instances `mask` selects: the instance and, in world space, the point,
    /// the triangle, its barycentrics and the distance. Distances are measured in world
    /// space (exact under any affine transform, non-uniform scales included: each
    /// instance's triangles and boxes are moved to world space as the search reaches them);
    /// ties go to the lowest instance, then triangle. `None` as for
    /// [`Bvh::closest_point`].
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
    /// // Stretched 4x along x and moved to z = 10: measured in world space, stretch included.
    /// let far = scene.add(triangle, Matrix4::new_translation(&Vector3::new(0.0, 0.0, 10.0))
    ///     * Matrix4::new_nonuniform_scaling(&Vector3::new(4.0, 1.0, 1.0)))?;
    /// let p = Point3::new(3.0, 0.1, 8.0);
    /// let (id, near) = scene.closest_point(p, f32::INFINITY, u32::MAX).unwrap();
    /// assert_eq!(id, far);
    /// assert!((near.distance - 2.0).abs() < 1e-5);
    /// assert!((near.point - Point3::new(3.0, 0.1, 10.0)).norm() < 1e-5);
    /// // Nothing within 1, or with a mask no instance shares.
    /// assert!(scene.closest_point(p, 1.0, u32::MAX).is_none());
    /// assert!(scene.closest_point(p, f32::INFINITY, 0).is_none());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn closest_point(
        &self,
        point: impl Into<mint::Point3<f32>>,
        max_distance: f32,
        mask: u32,
    ) -> Option<(InstanceId, crate::ClosestPoint)> {
        let point = Point3::from(point.into());
        if !point.iter().all(|c| c.is_finite()) || !(max_distance >= 0.0) {
            return None;
        }
        let top = self.top();
        let mut visitor = NearestInstance {
            scene: self,
            order: &top.order,
            p: point.cast::<f64>(),
            limit: f64::from(max_distance) * f64::from(max_distance),
            mask,
            best: None,
        };
        walk(&top.nodes, &mut visitor);
        let best = visitor.best;
        best.map(|(id, triangle, n)| {
            (
                id,
                crate::ClosestPoint {
                    triangle,
                    point: n.point.cast::<f32>(),
                    u: n.u as f32,
                    v: n.v as f32,
                    distance: n.distance_squared.sqrt() as f32,
                },
            )
        })
    }

    /// The full hit of instance `id` for a short one found with the object-space ray `local`.
    fn details(&self, id: InstanceId, local: &Ray, hit: &crate::CompactHit) -> SceneHit {
        let bvh = &self.instances[id as usize].bvh;
        self.to_world(id, bvh.own_hit_details(local, hit))
    }

    /// An object-space hit of instance `id` moved to world space.
    fn to_world(&self, id: InstanceId, mut h: Hit) -> SceneHit {
        let instance = &self.instances[id as usize];
        let m = &instance.to_world;
        h.point = transform_point(m, &h.point.cast::<f64>()).cast::<f32>();
        // Normals move by the inverse transpose. Under a mirror this keeps the object's front
        // side in front (the world winding turns over, the faces do not), as glTF, three.js
        // and Unity have it: a mirrored closed mesh still faces outwards.
        let normal_matrix: Matrix3<f64> = instance.to_object.fixed_view::<3, 3>(0, 0).transpose();
        let to_world_normal =
            |n: &Vector3<f32>| Unit::try_new((normal_matrix * n.cast::<f64>()).cast::<f32>(), 0.0);
        if let Some(n) = to_world_normal(&h.normal.into_inner()) {
            h.normal = n;
        }
        h.shading_normal = h
            .shading_normal
            .and_then(|n| to_world_normal(&n.into_inner()));
        // `front_face` stays the mesh's: the world ray meets the moved normal from the same
        // side (n·M⁻¹ · M·d = n·d), and it is the side the culling used.
        SceneHit {
            instance: id,
            hit: h,
        }
    }
}

/// A ray's walk of the top-level tree: instance boxes by the slab test, and in the leaves
/// the enabled instances the mask and filter accept, queried by `visit`.
struct InstanceRays<'a, V> {
    ray: WideRay,
    t_min: f32,
    t_max: f32,
    scene: &'a Scene,
    order: &'a [u32],
    mask: u32,
    filter: &'a dyn Fn(InstanceId) -> bool,
    visit: V,
}

impl<V: FnMut(InstanceId, &Instance, &mut f32) -> Option<bool>> Visitor for InstanceRays<'_, V> {
    type Key = f32;
    const ORDERED: bool = true;

    fn node(&mut self, _: u32, node: &WideNode) -> (u32, [f32; WIDTH]) {
        lane_intervals(node, &self.ray, self.t_min, self.t_max)
    }

    fn worth(&self, entry: f32) -> bool {
        entry <= widened(self.t_max)
    }

    fn leaf(&mut self, first: u32, count: u32, _: f32) -> bool {
        for &i in &self.order[first as usize..(first + count) as usize] {
            let instance = &self.scene.instances[i as usize];
            if !instance.enabled || instance.mask & self.mask == 0 || !(self.filter)(i) {
                continue;
            }
            if (self.visit)(i, instance, &mut self.t_max) == Some(true) {
                return true;
            }
        }
        false
    }
}

/// The nearest-point search over instances: nearest world box first, each instance searched
/// in world space; boxes beyond the best distance are skipped.
struct NearestInstance<'a> {
    scene: &'a Scene,
    order: &'a [u32],
    p: Point3<f64>,
    /// The best squared distance so far (the caller's limit at first).
    limit: f64,
    mask: u32,
    best: Option<(u32, u32, crate::closest_point::Nearest)>,
}

impl Visitor for NearestInstance<'_> {
    type Key = f64;
    const ORDERED: bool = true;

    fn node(&mut self, _: u32, node: &WideNode) -> (u32, [f64; WIDTH]) {
        lanes_near(node, &self.p, None, |d2| self.worth(d2))
    }

    fn worth(&self, d2: f64) -> bool {
        d2 <= self.limit * (1.0 + 1e-9)
    }

    fn leaf(&mut self, first: u32, count: u32, _: f64) -> bool {
        for &id in &self.order[first as usize..(first + count) as usize] {
            let instance = &self.scene.instances[id as usize];
            if !instance.enabled || instance.mask & self.mask == 0 {
                continue;
            }
            let Some((t, n)) =
                instance
                    .bvh
                    .nearest_triangle(&self.p, self.limit, Some(&instance.to_world))
            else {
                continue;
            };
            let better = match &self.best {
                None => true,
                Some((bid, _, bn)) => {
                    n.distance_squared < bn.distance_squared
                        || (n.distance_squared == bn.distance_squared && id < *bid)
                }
            };
            if better {
                self.limit = n.distance_squared;
                self.best = Some((id, t, n));
            }
        }
        false
    }
}

/// The ray in the instance's object space, its range `[t_min, t_max]` kept (the direction is
/// transformed, not normalized, so `t` means the same point). `None` when it does not fit f32.
fn object_ray(instance: &Instance, ray: &Ray, t_max: f32) -> Option<Ray> {
    let m = &instance.to_object;
    let o = transform_point(m, &ray.origin().cast::<f64>()).cast::<f32>();
    let d = (m.fixed_view::<3, 3>(0, 0) * ray.direction().cast::<f64>()).cast::<f32>();
    let local = Ray::with_range(o, d, ray.t_min(), t_max);
    local.is_valid().then_some(local)
}

/// The world box around an instance: its mesh box's corners moved to world space, rounded
/// outwards by a few ulps so rounding never makes it miss its own triangles.
fn world_bounds(bvh: &Bvh, to_world: &Matrix4<f64>) -> Aabb {
    let b = bvh.bounds();
    let mut lo = Vector3::repeat(f64::INFINITY);
    let mut hi = Vector3::repeat(f64::NEG_INFINITY);
    for i in 0..8 {
        let corner = Point3::new(
            if i & 1 == 0 { b.min.x } else { b.max.x },
            if i & 2 == 0 { b.min.y } else { b.max.y },
            if i & 4 == 0 { b.min.z } else { b.max.z },
        )
        .cast::<f64>();
        let w = transform_point(to_world, &corner);
        lo = lo.inf(&w.coords);
        hi = hi.sup(&w.coords);
    }
    let pad = (hi - lo).norm() * 1e-6 + 1e-30;
    Aabb::new(
        Point3::from((lo - Vector3::repeat(pad)).cast::<f32>()),
        Point3::from((hi + Vector3::repeat(pad)).cast::<f32>()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Mesh;

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

    #[test]
    fn edits_leave_the_top_level_tree_to_the_next_query() {
        // `add` once rebuilt the whole tree per call: 10,000 instances took 16.5 s.
        let (triangle, mut scene) = (triangle(), Scene::new());
        for i in 0..2000 {
            scene.add(triangle.clone(), at(2.0 * i as f32)).unwrap();
            assert!(scene.top.get().is_none(), "add {i} built the tree");
        }
        let ray = Ray::new(Point3::new(1500.2, 0.2, 1.0), -Vector3::z());
        let hit = scene.closest_hit(&ray, &SceneOptions::default()).unwrap();
        assert_eq!(hit.instance, 750);
        let built = scene.top.get().unwrap().nodes.as_ptr();
        // Further queries reuse it; a move marks it stale, the next query sees the move.
        assert!(scene.any_hit(&ray, &SceneOptions::default()).is_some());
        assert_eq!(scene.top.get().unwrap().nodes.as_ptr(), built);
        scene.set_transform(750, at(-10.0)).unwrap();
        assert!(scene.top.get().is_none());
        assert!(scene.closest_hit(&ray, &SceneOptions::default()).is_none());
        let ids = scene
            .add_all((0..3).map(|i| (triangle.clone(), at(1500.0 + i as f32 * 0.01))))
            .unwrap();
        assert_eq!(ids, 2000..2003);
        assert!(scene.top.get().is_none());
        assert_eq!(
            scene
                .closest_hit(&ray, &SceneOptions::default())
                .unwrap()
                .instance,
            2000
        );
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
            scene.instance_bounds(id).unwrap().max.x < 1.001,
            "unchanged"
        );
        let all = scene.add_all([(triangle.clone(), at(1.0)), (triangle, far)]);
        assert!(all.is_err());
        assert_eq!(scene.len(), 1);
    }
}
