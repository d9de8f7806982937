//! Sweeps: how far a sphere or a capsule can move along a ray before it touches the
//! geometry, and where it touches. A ray is a point moving; a character controller, a camera
//! that must not enter walls, a tool path or a robot arm moves a volume.

use super::{InstanceId, RayCast};
use crate::bvh::Bvh;
use crate::scene::Scene;
use crate::sweep::{Contact, Moving};
use crate::{Error, Ray, Result};
use nalgebra::{Point3, Unit, Vector3};

/// Where a moving sphere or capsule first touches a mesh ([`Sweep::cast_sphere`],
/// [`Sweep::cast_capsule`]).
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SweepHit {
    /// How far the shape moved: its centre (a capsule: its axis' first end) is at
    /// `origin + t·direction` when it first touches. `t_min` when it touches already there.
    pub t: f32,
    /// The triangle it touches, by its number in the mesh (file order).
    pub triangle: u32,
    /// The point of the triangle it touches.
    pub point: Point3<f32>,
    /// Weight of corner `B` at `point` (as in [`Hit::u`](crate::Hit::u)).
    pub u: f32,
    /// Weight of corner `C` at `point`.
    pub v: f32,
    /// The unit normal of the contact, from the triangle towards the shape: the way to push
    /// it out, or to slide along. Where the shape's axis itself touches (or the radius is
    /// zero), the triangle's normal, turned against the motion.
    pub normal: Unit<Vector3<f32>>,
}

/// A scene's answer to a sweep: the instance touched, and the contact in world space (the
/// triangle is the instance's mesh's).
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SceneSweepHit {
    /// The instance touched.
    pub instance: InstanceId,
    /// The contact, in world space.
    pub hit: SweepHit,
}

/// Sweeps of a sphere or a capsule along a ray: what a [`Bvh`] and a [`Scene`] both answer.
///
/// Exact: the contact is found in `f64` from the `f32` triangles, against the triangles'
/// faces, edges and corners alike, and is what a brute force over every triangle finds (the
/// `t` within its last bits); the walk only skips boxes the shape cannot reach. Ties go to
/// the lowest triangle (a scene's: the lowest instance, then triangle). Culling is as for
/// rays, by the side the motion meets a triangle's plane from (`Back` keeps the triangles
/// the shape moves against, `n·d < 0`); the triangle test's choice in the options
/// (`watertight`) does not apply. A scene sweeps each instance in world space, its
/// triangles moved by its transform, so a non-uniform scale or a shear is answered exactly
/// too; an instance placed by a translation alone is swept in its own space, the shape
/// moved back instead (the same shape there, and the mesh's own, faster walk).
///
/// ```
/// use meshray::prelude::*;
/// use meshray::{Bvh, Mesh, Ray};
///
/// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
/// // A ball of radius 0.25 dropped from above onto the ground (y = 0) beside the sphere.
/// let drop = Ray::new([3.1, 5.0, 3.2], [0.0, -1.0, 0.0]);
/// let hit = bvh.cast_sphere(&drop, 0.25, &Default::default())?.unwrap();
/// assert!((hit.t - 4.75).abs() < 1e-5);
/// assert!((hit.point.y).abs() < 1e-6 && hit.normal.y > 0.99);
/// // A negative radius is refused.
/// assert!(bvh.cast_sphere(&drop, -1.0, &Default::default()).is_err());
/// # Ok::<(), meshray::Error>(())
/// ```
pub trait Sweep: RayCast {
    /// The answer: [`SweepHit`] for a mesh, [`SceneSweepHit`] for a scene.
    type SweepHit;

    /// The first contact of a sphere of `radius` whose centre moves along `ray`, over its
    /// range: the smallest `t` in `[t_min, t_max]` at which the sphere touches a triangle
    /// (at `t_min` when it touches one already). `Ok(None)` when it touches nothing in
    /// range, and for a ray that cannot hit ([`Ray::is_valid`]: a NaN, a zero direction).
    ///
    /// # Errors
    /// [`Error::InvalidShape`] for a negative, NaN or infinite radius.
    fn cast_sphere(
        &self,
        ray: &Ray,
        radius: f32,
        options: &Self::Options<'_>,
    ) -> Result<Option<Self::SweepHit>> {
        self.cast_capsule(ray, [0.0; 3], radius, options)
    }

    /// The first contact of a capsule (every point within `radius` of its axis, the segment
    /// from the ray's origin to `origin + axis`) moving along the ray's direction over its
    /// range; as [`cast_sphere`](Sweep::cast_sphere), which is the capsule of a zero axis.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh, Ray};
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// // A standing capsule (a character, its axis 1.5 tall, radius 0.3) walking towards
    /// // the sphere of radius 1 at (0, 1, 0): it stops where its side meets the sphere's
    /// // facets, a little past where it would meet a true sphere (z = 1.3).
    /// let walk = Ray::new([0.0, 0.35, 5.0], [0.0, 0.0, -1.0]);
    /// let hit = bvh.cast_capsule(&walk, [0.0, 1.5, 0.0], 0.3, &Default::default())?.unwrap();
    /// assert!(hit.t >= 3.7 && hit.t < 3.72, "{}", hit.t);
    /// assert_eq!(bvh.mesh().objects()[bvh.mesh().attributes(hit.triangle as usize).object as usize], "sphere");
    /// assert!(hit.normal.z > 0.99); // pushing it back the way it came
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidShape`] for a negative, NaN or infinite radius, or an axis that is
    /// not finite.
    fn cast_capsule(
        &self,
        ray: &Ray,
        axis: impl Into<mint::Vector3<f32>>,
        radius: f32,
        options: &Self::Options<'_>,
    ) -> Result<Option<Self::SweepHit>>;
}

/// Refuses a shape that is no shape: a negative, NaN or infinite radius, or an axis that is
/// not finite.
#[inline(always)]
fn check_shape(axis: &Vector3<f32>, radius: f32) -> Result<()> {
    if !(radius >= 0.0 && radius.is_finite()) {
        return Err(Error::InvalidShape {
            reason: format!("a sweep's radius must be finite and at least 0, not {radius}"),
        });
    }
    if !axis.iter().all(|c| c.is_finite()) {
        return Err(Error::InvalidShape {
            reason: format!("a capsule's axis must be finite, not {:?}", axis.as_slice()),
        });
    }
    Ok(())
}

/// The moving shape of a sweep (checked by [`check_shape`]) in `f64`, its range's length,
/// and `t_min`; `None` for a ray that cannot hit.
#[inline(always)]
fn moving(ray: &Ray, axis: Vector3<f32>, radius: f32) -> Option<(Moving, f64, f64)> {
    if !ray.is_valid() {
        return None;
    }
    let (t_min, t_max) = (f64::from(ray.t_min()), f64::from(ray.t_max()));
    let direction = ray.direction().cast::<f64>();
    let origin = ray.origin().cast::<f64>();
    let m = Moving {
        // The origin itself from 0 (so a `-0.0` stays one: the path is the ray, exactly).
        start: if t_min == 0.0 {
            origin
        } else {
            origin + direction * t_min
        },
        axis: axis.cast::<f64>(),
        direction,
        radius: f64::from(radius),
    };
    Some((m, t_max - t_min, t_min))
}

/// A contact as the public answer. Its normal is a unit vector in `f64` already, so in
/// `f32` within rounding of one; normalising it again cost a square root and a division
/// on the path of every answer.
fn sweep_hit(triangle: u32, c: &Contact, t_min: f64) -> SweepHit {
    SweepHit {
        t: (t_min + c.tau) as f32,
        triangle,
        point: c.point.cast::<f32>(),
        u: c.u as f32,
        v: c.v as f32,
        normal: Unit::new_unchecked(c.normal.cast::<f32>()),
    }
}

impl Sweep for Bvh {
    type SweepHit = SweepHit;

    // Inlined: the shape's check, so a sphere's zero axis is checked as a constant; the
    // sweep itself is not.
    #[inline(always)]
    fn cast_capsule(
        &self,
        ray: &Ray,
        axis: impl Into<mint::Vector3<f32>>,
        radius: f32,
        options: &crate::QueryOptions,
    ) -> Result<Option<SweepHit>> {
        let axis = Vector3::from(axis.into());
        check_shape(&axis, radius)?;
        Ok(self.sweep_shape(ray, axis, radius, options.culling))
    }
}

impl Bvh {
    /// [`Sweep::cast_capsule`] of a checked shape. The shape is made here, in the function
    /// that reads it: made by an inlined caller and read here, its `f64` fields would be
    /// stored in one width and loaded in another, each such load waiting for the stores.
    fn sweep_shape(
        &self,
        ray: &Ray,
        axis: Vector3<f32>,
        radius: f32,
        culling: crate::Culling,
    ) -> Option<SweepHit> {
        let (m, limit, t_min) = moving(ray, axis, radius)?;
        // The moving shape's path is the ray (from its `t_min`): the walk takes its
        // reciprocals, and from 0 the ray itself.
        let found = self.first_contact(
            &m,
            limit,
            culling,
            crate::bvh::facade::Placement::Own,
            Some(ray),
        );
        found.map(|(triangle, c)| sweep_hit(triangle, &c, t_min))
    }
}

impl Sweep for Scene {
    type SweepHit = SceneSweepHit;

    // Inlined (the walk is not), as a mesh's.
    #[inline(always)]
    fn cast_capsule(
        &self,
        ray: &Ray,
        axis: impl Into<mint::Vector3<f32>>,
        radius: f32,
        options: &crate::SceneOptions<'_>,
    ) -> Result<Option<SceneSweepHit>> {
        let axis = Vector3::from(axis.into());
        check_shape(&axis, radius)?;
        let Some((m, limit, t_min)) = moving(ray, axis, radius) else {
            return Ok(None);
        };
        let found = self.first_contact(&m, limit, options);
        Ok(found.map(|(instance, triangle, c)| SceneSweepHit {
            instance,
            hit: sweep_hit(triangle, &c, t_min),
        }))
    }
}
