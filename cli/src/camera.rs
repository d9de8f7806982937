//! The camera the commands and the viewer look through: a pinhole at an eye, looking at a
//! target with +y up, vertical field of view 45°.
//!
//! By default it frames a mesh's bounds: from their centre `c` at
//! `c + 2.2·h·normalize(0.45, 0.35, 1)` (`h` half the bounds' diagonal) looking at `c`. An
//! eye and target of the user's own (`--eye`, `--target`) look at the mesh from anywhere,
//! inside it too (a room, a courtyard).
//!
//! The near plane sits at a hundredth of the smaller of `h` and the eye's distance to the
//! target, the far plane beyond the bounds' farthest point. The projection matrix is written
//! out here rather than built by nalgebra's `Perspective3::new`, which panics when the two
//! planes are within `f32::EPSILON` of each other (a mesh a millionth of a unit across); a
//! mesh too large for an f32 camera is refused with a sentence saying so.
//!
//! This file uses nothing but `meshray`, `nalgebra` and `std`, so the root crate's viewer
//! test can include it as it stands (`#[path]`).

use meshray::Ray;
use meshray::geometry::Aabb;
use nalgebra::{Isometry3, Matrix4, Point2, Point3, Vector2, Vector3};

/// The vertical field of view, in degrees.
pub const FOV_Y_DEGREES: f32 = 45.0;

/// How far the framing eye is from the bounds' centre, in half-diagonals of the bounds.
pub const FRAMING_DISTANCE: f32 = 2.2;

/// The framing direction: from the front, above and to the right.
pub fn default_direction() -> Vector3<f32> {
    Vector3::new(0.45, 0.35, 1.0)
}

/// The direction `yaw` degrees about +y from +z and `pitch` degrees up (`--orbit`).
pub fn orbit_direction(yaw: f32, pitch: f32) -> Vector3<f32> {
    let (yaw, pitch) = (yaw.to_radians(), pitch.to_radians());
    Vector3::new(
        yaw.sin() * pitch.cos(),
        pitch.sin(),
        yaw.cos() * pitch.cos(),
    )
}

/// Half the diagonal of `bounds` (`h`), computed in f64 so that huge bounds do not overflow
/// on the way, and at least 1e-5 of the centre's largest coordinate (so that an eye a few
/// `h` from the centre is a different f32 point) and 1e-30 (so that the near plane is a
/// normal f32 number).
pub fn half_diagonal(bounds: &Aabb) -> f64 {
    let (min, max) = (bounds.min.cast::<f64>(), bounds.max.cast::<f64>());
    let centre = (min.coords + max.coords) * 0.5;
    ((max - min).norm() * 0.5)
        .max(centre.amax() * 1e-5)
        .max(1e-30)
}

/// A pinhole camera: eye, target, and the near and far planes that go with them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    eye: Point3<f32>,
    target: Point3<f32>,
    near: f32,
    far: f32,
}

impl Camera {
    /// The default framing of `bounds` from `direction`, `distance` half-diagonals from
    /// the centre ([`FRAMING_DISTANCE`] for the commands' picture).
    ///
    /// # Errors
    /// As [`Camera::new`].
    pub fn framing(
        bounds: &Aabb,
        direction: Vector3<f32>,
        distance: f32,
    ) -> Result<Camera, String> {
        let centre = bounds.centroid();
        Camera::orbiting(bounds, centre, direction, distance)
    }

    /// Looking at `target` from `distance` half-diagonals of `bounds` away in `direction`
    /// (the viewer's orbit).
    ///
    /// # Errors
    /// As [`Camera::new`].
    pub fn orbiting(
        bounds: &Aabb,
        target: Point3<f32>,
        direction: Vector3<f32>,
        distance: f32,
    ) -> Result<Camera, String> {
        let h = half_diagonal(bounds);
        let Some(unit) = direction.cast::<f64>().try_normalize(0.0) else {
            return Err("the camera needs a direction to look from, and was given none".into());
        };
        let eye = (target.cast::<f64>() + unit * (f64::from(distance) * h)).cast::<f32>();
        Camera::new(bounds, eye, target)
    }

    /// Looking from `eye` at `target`, with the near and far planes chosen for `bounds`.
    ///
    /// # Errors
    /// A sentence when the eye or target is not finite or they coincide, or when the mesh is
    /// too large to look at through an f32 camera.
    pub fn new(bounds: &Aabb, eye: Point3<f32>, target: Point3<f32>) -> Result<Camera, String> {
        let h = half_diagonal(bounds);
        let too_large = || {
            format!("the mesh is too large for a camera in f32 numbers: half its diagonal is {h:e}")
        };
        if !(eye.iter().all(|x| x.is_finite()) && target.iter().all(|x| x.is_finite())) {
            return Err(too_large());
        }
        if eye == target {
            return Err(format!(
                "the eye and the target are the same point, ({}, {}, {}): the camera needs a direction",
                eye.x, eye.y, eye.z
            ));
        }
        let (eye64, centre) = (eye.cast::<f64>(), bounds.centroid().cast::<f64>());
        let look = (target.cast::<f64>() - eye64).norm();
        let near = (0.01 * h.min(look)) as f32;
        let far = ((eye64 - centre).norm() + 2.0 * h) as f32;
        if !far.is_finite() {
            return Err(too_large());
        }
        let camera = Camera {
            eye,
            target,
            near: near.max(f32::MIN_POSITIVE),
            far: far.max(2.0 * near),
        };
        // Every pixel's ray is made the same way; one that works says the matrices do.
        camera
            .ray(Vector2::new(2.0, 2.0), Point2::new(1.0, 1.0))
            .map_err(|e| format!("no camera can look from there: {e}"))?;
        Ok(camera)
    }

    /// Where the eye is.
    pub fn eye(&self) -> Point3<f32> {
        self.eye
    }

    /// The point looked at (the image's centre).
    pub fn target(&self) -> Point3<f32> {
        self.target
    }

    /// The view matrix: world to camera space, +y up (−z or +z when looking straight down
    /// or up). Made in f64: in f32 the length of an eye-to-target vector shorter than about
    /// 1e-19 underflows.
    pub fn view(&self) -> Matrix4<f32> {
        let (eye, target) = (self.eye.cast::<f64>(), self.target.cast::<f64>());
        let direction = target - eye;
        let up = if direction.cross(&Vector3::y()).norm() > 1e-6 * direction.norm() {
            Vector3::y()
        } else if direction.y < 0.0 {
            -Vector3::z()
        } else {
            Vector3::z()
        };
        Isometry3::look_at_rh(&eye, &target, &up)
            .to_homogeneous()
            .cast::<f32>()
    }

    /// The perspective projection for an image of `aspect` = width / height: OpenGL's
    /// matrix (what `Perspective3::new` makes), written out so that no pair of planes can
    /// make it panic, its depth terms ordered so that huge planes do not overflow.
    pub fn projection(&self, aspect: f32) -> Matrix4<f32> {
        let (near, far) = (self.near, self.far);
        let f = 1.0 / (FOV_Y_DEGREES.to_radians() * 0.5).tan();
        let mut m = Matrix4::zeros();
        m[(0, 0)] = f / aspect;
        m[(1, 1)] = f;
        m[(2, 2)] = (far + near) / (near - far);
        m[(2, 3)] = 2.0 * near * (far / (near - far));
        m[(3, 2)] = -1.0;
        m
    }

    /// The ray through `pixel` of an image of `size` (pixels, origin top left): from the
    /// near plane, unit direction, `t` from 0 to infinity.
    ///
    /// # Errors
    /// As [`meshray::Camera::new`] and [`meshray::Camera::pixel_ray`].
    pub fn ray(&self, size: Vector2<f32>, pixel: Point2<f32>) -> meshray::Result<Ray> {
        self.picking(size)?.pixel_ray(pixel)
    }

    /// This camera as the library's picking sees it, for an image of `size` pixels.
    ///
    /// # Errors
    /// As [`meshray::Camera::new`].
    pub fn picking(&self, size: Vector2<f32>) -> meshray::Result<meshray::Camera> {
        meshray::Camera::new(self.view(), self.projection(size.x / size.y), size)
    }
}

/// Where the user put the eye, if anywhere: what `--eye`, `--target` and `--orbit` say
/// (see `Args::camera_flag`). Nothing given is the default framing.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Placement {
    /// The eye, from `--eye`.
    pub eye: Option<Point3<f32>>,
    /// The point looked at, from `--target`; the bounds' centre when not given.
    pub target: Option<Point3<f32>>,
    /// The eye's direction from the target, from `--orbit`, when no eye is given.
    pub direction: Option<Vector3<f32>>,
}

impl Placement {
    /// The camera: at the eye looking at the target; without an eye, [`FRAMING_DISTANCE`]
    /// half-diagonals from the target in the given or default direction.
    ///
    /// # Errors
    /// As [`Camera::new`].
    pub fn camera(&self, bounds: &Aabb) -> Result<Camera, String> {
        let target = self.target.unwrap_or_else(|| bounds.centroid());
        match self.eye {
            Some(eye) => Camera::new(bounds, eye, target),
            None => Camera::orbiting(
                bounds,
                target,
                self.direction.unwrap_or_else(default_direction),
                FRAMING_DISTANCE,
            ),
        }
    }
}

/// Whether `pixel` lies on an image of `size` (edges included).
pub fn on_image(size: Vector2<f32>, pixel: Point2<f32>) -> bool {
    (0.0..=size.x).contains(&pixel.x) && (0.0..=size.y).contains(&pixel.y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Perspective3;

    fn unit_box(scale: f32, offset: f32) -> Aabb {
        Aabb::new(
            Point3::new(offset, offset, offset),
            Point3::new(offset + scale, offset + scale, offset + scale),
        )
    }

    #[test]
    fn the_projection_is_nalgebras() {
        let camera = Camera::framing(&unit_box(2.0, -1.0), default_direction(), 2.2).unwrap();
        let ours = camera.projection(4.0 / 3.0);
        let theirs = Perspective3::new(
            4.0 / 3.0,
            FOV_Y_DEGREES.to_radians(),
            camera.near,
            camera.far,
        )
        .to_homogeneous();
        assert!(
            (ours - theirs).amax() <= 1e-6 * theirs.amax(),
            "{ours} {theirs}"
        );
    }

    #[test]
    fn any_scale_the_library_can_hold_is_framed_without_panic() {
        // nalgebra's Perspective3::new panics on the planes of the two smallest.
        let mut framed = 0;
        for scale in [1e-30, 1e-12, 1e-7, 1e-3, 1.0, 1e6, 1e11, 1e20, 1e30] {
            for offset in [0.0, 1.0, -1e6, 1e11, 1e20] {
                let bounds = unit_box(scale, offset);
                // Only what the library takes (coordinates within ±2^40, a box at least
                // 2^-40 across): a mesh with these corners.
                let corners = [
                    bounds.min,
                    bounds.max,
                    Point3::new(bounds.min.x, bounds.max.y, bounds.min.z),
                ];
                if meshray::Mesh::from_buffers(corners, vec![[0, 1, 2]]).is_err() {
                    continue;
                }
                framed += 1;
                let camera = Camera::framing(&bounds, default_direction(), 2.2)
                    .unwrap_or_else(|e| panic!("{scale} at {offset}: {e}"));
                let ray = camera
                    .ray(Vector2::new(64.0, 48.0), Point2::new(32.0, 24.0))
                    .unwrap();
                // The centre pixel looks at the bounds' centre.
                let to_centre = (bounds.centroid() - ray.origin()).cast::<f64>().normalize();
                let along = ray.direction().cast::<f64>().normalize().dot(&to_centre);
                assert!(along > 0.9999, "{scale} at {offset}: {along}");
            }
        }
        assert!(framed >= 16, "{framed} boxes framed");
    }

    #[test]
    fn a_mesh_beyond_f32_and_a_camera_without_direction_are_sentences() {
        let huge = Aabb::new(Point3::new(-3e38, 0.0, 0.0), Point3::new(3e38, 1.0, 1.0));
        let error = Camera::framing(&huge, default_direction(), 2.2).unwrap_err();
        assert!(error.contains("too large"), "{error}");
        let p = Point3::new(1.0, 2.0, 3.0);
        let error = Camera::new(&unit_box(1.0, 0.0), p, p).unwrap_err();
        assert!(error.contains("same point"), "{error}");
    }

    #[test]
    fn an_eye_inside_looks_at_the_target() {
        let bounds = unit_box(10.0, 0.0);
        let (eye, target) = (Point3::new(5.0, 1.7, 5.0), Point3::new(9.0, 1.7, 5.0));
        let camera = Camera::new(&bounds, eye, target).unwrap();
        let ray = camera
            .ray(Vector2::new(100.0, 100.0), Point2::new(50.0, 50.0))
            .unwrap();
        assert!((ray.direction() - Vector3::x()).norm() < 1e-6);
        // The ray starts at the near plane, a hundredth of the eye's distance to the target.
        assert!((ray.origin() - eye).norm() <= 0.04 + 1e-5);
        // Straight down works too (up is then −z).
        let down = Camera::new(
            &bounds,
            Point3::new(5.0, 9.0, 5.0),
            Point3::new(5.0, 0.0, 5.0),
        );
        let ray = down
            .unwrap()
            .ray(Vector2::new(10.0, 10.0), Point2::new(5.0, 5.0))
            .unwrap();
        assert!((ray.direction() + Vector3::y()).norm() < 1e-6);
    }
}
