//! The benchmark's ray sets and the ray/hit file format of `../shared/DESIGN.md`.
//!
//! Ray file, little-endian: a 32-byte header (magic `BVHRAYS1`, ray count u64, seed u64, kind
//! u32 — 0 primary, 1 random, 2 secondary — and image width u32, 0 unless primary), then per
//! ray eight f32: `ox oy oz dx dy dz tmin tmax`. Hit file: per ray an f32 `t` (+inf on a miss)
//! and a u32 triangle index (`u32::MAX` on a miss), in the ray file's order.
//!
//! Shared by the `bench` and `scaling` commands, the peer comparison (`benches/peers`) and
//! the tests, so all of them read and make the same rays.

use meshray::prelude::*;
use meshray::{Bvh, Mesh, QueryOptions, Ray};
use nalgebra::{Point3, Vector3};
use std::fmt;
use std::path::Path;

/// The file's first eight bytes.
pub const MAGIC: &[u8; 8] = b"BVHRAYS1";
const HEADER_BYTES: usize = 32;
const RAY_BYTES: usize = 32;
const HIT_BYTES: usize = 8;

/// Which of the three standard sets a ray file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One ray per pixel of a square pinhole image.
    Primary,
    /// From a sphere around the mesh to points inside its bounds.
    Random,
    /// One diffuse bounce from each primary hit.
    Secondary,
}

impl Kind {
    /// The set's name as the bench prints it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Primary => "primary",
            Kind::Random => "random",
            Kind::Secondary => "secondary",
        }
    }

    fn code(self) -> u32 {
        match self {
            Kind::Primary => 0,
            Kind::Random => 1,
            Kind::Secondary => 2,
        }
    }
}

/// A set of rays with its header fields.
#[derive(Clone, Debug)]
pub struct RaySet {
    /// Which set.
    pub kind: Kind,
    /// The seed the rays were made with (0 for the primary set, which is not random).
    pub seed: u64,
    /// The image width for a primary set, else 0.
    pub width: u32,
    /// The rays, in file order.
    pub rays: Vec<Ray>,
}

/// Why a ray or hit file could not be read or written: the file's name and what is wrong.
#[derive(Debug)]
pub struct FileError {
    /// The file.
    pub path: String,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for FileError {}

fn file_error(path: &Path, message: impl Into<String>) -> FileError {
    FileError {
        path: path.display().to_string(),
        message: message.into(),
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

fn f32_at(bytes: &[u8], at: usize) -> f32 {
    f32::from_bits(u32_at(bytes, at))
}

impl RaySet {
    /// Encodes the set in the ray file format.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_BYTES + RAY_BYTES * self.rays.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.rays.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.seed.to_le_bytes());
        out.extend_from_slice(&self.kind.code().to_le_bytes());
        out.extend_from_slice(&self.width.to_le_bytes());
        for ray in &self.rays {
            let (o, d) = (ray.origin(), ray.direction());
            for x in [o.x, o.y, o.z, d.x, d.y, d.z, ray.t_min(), ray.t_max()] {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        out
    }

    /// Decodes a ray file's bytes; `path` only names the file in errors. The length must be
    /// exactly the header's count of rays. Rays are taken as stored, invalid ones included
    /// (the queries answer those with no hit).
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<RaySet, FileError> {
        if bytes.len() < HEADER_BYTES {
            return Err(file_error(
                path,
                format!(
                    "{} bytes, shorter than the {HEADER_BYTES}-byte header",
                    bytes.len()
                ),
            ));
        }
        if &bytes[..8] != MAGIC {
            return Err(file_error(path, "not a ray file (magic is not BVHRAYS1)"));
        }
        let count = u64_at(bytes, 8);
        let seed = u64_at(bytes, 16);
        let kind = match u32_at(bytes, 24) {
            0 => Kind::Primary,
            1 => Kind::Random,
            2 => Kind::Secondary,
            other => return Err(file_error(path, format!("unknown ray kind {other}"))),
        };
        let width = u32_at(bytes, 28);
        let body = (bytes.len() - HEADER_BYTES) as u64;
        if count.checked_mul(RAY_BYTES as u64) != Some(body) {
            return Err(file_error(
                path,
                format!(
                    "the header promises {count} rays but {body} bytes follow it ({} rays)",
                    body as f64 / RAY_BYTES as f64
                ),
            ));
        }
        let rays = bytes[HEADER_BYTES..]
            .chunks_exact(RAY_BYTES)
            .map(|r| {
                let x = |i: usize| f32_at(r, 4 * i);
                Ray::with_range(
                    Point3::new(x(0), x(1), x(2)),
                    Vector3::new(x(3), x(4), x(5)),
                    x(6),
                    x(7),
                )
            })
            .collect();
        Ok(RaySet {
            kind,
            seed,
            width,
            rays,
        })
    }

    /// Reads a ray file.
    pub fn read(path: &Path) -> Result<RaySet, FileError> {
        let bytes = std::fs::read(path).map_err(|e| file_error(path, e.to_string()))?;
        RaySet::from_bytes(&bytes, path)
    }

    /// Writes a ray file.
    pub fn write(&self, path: &Path) -> Result<(), FileError> {
        std::fs::write(path, self.to_bytes()).map_err(|e| file_error(path, e.to_string()))
    }
}

/// One record of a hit file: the hit's `t` and the mesh's triangle number, or a miss.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HitRecord {
    /// The hit's ray parameter; +inf for a miss.
    pub t: f32,
    /// The triangle in the mesh's (file) order; `u32::MAX` for a miss.
    pub triangle: u32,
}

impl HitRecord {
    /// The record of no hit.
    pub const MISS: HitRecord = HitRecord {
        t: f32::INFINITY,
        triangle: u32::MAX,
    };

    /// Whether the record is a hit.
    pub fn is_hit(&self) -> bool {
        self.triangle != u32::MAX
    }
}

/// Encodes hit records in the hit file format.
pub fn hits_to_bytes(hits: &[HitRecord]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HIT_BYTES * hits.len());
    for h in hits {
        out.extend_from_slice(&h.t.to_le_bytes());
        out.extend_from_slice(&h.triangle.to_le_bytes());
    }
    out
}

/// Decodes a hit file's bytes; the length must be a whole number of records.
pub fn hits_from_bytes(bytes: &[u8], path: &Path) -> Result<Vec<HitRecord>, FileError> {
    if !bytes.len().is_multiple_of(HIT_BYTES) {
        return Err(file_error(
            path,
            format!(
                "{} bytes is not a whole number of {HIT_BYTES}-byte hit records",
                bytes.len()
            ),
        ));
    }
    Ok(bytes
        .chunks_exact(HIT_BYTES)
        .map(|r| HitRecord {
            t: f32_at(r, 0),
            triangle: u32_at(r, 4),
        })
        .collect())
}

/// splitmix64: small, seeded and the same everywhere, so a seed names a ray set.
pub struct Rng(u64);

impl Rng {
    /// A generator started at `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1), 53 bits.
    fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform on the unit sphere.
    fn unit_vector(&mut self) -> Vector3<f64> {
        let z = 2.0 * self.f64() - 1.0;
        let phi = std::f64::consts::TAU * self.f64();
        let r = (1.0 - z * z).max(0.0).sqrt();
        Vector3::new(r * phi.cos(), r * phi.sin(), z)
    }
}

/// The mesh's frame in f64: the bounds' centre `c`, half their diagonal `h` (at least 1e-6,
/// and large enough against `c` for points `h` apart to differ: see
/// [`half_diagonal`](crate::camera::half_diagonal)), and the bounds.
fn frame(mesh: &Mesh) -> (Point3<f64>, f64, Point3<f64>, Point3<f64>) {
    let b = mesh.bounds();
    let lo = b.min.cast::<f64>();
    let hi = b.max.cast::<f64>();
    let c = nalgebra::center(&lo, &hi);
    let h = crate::camera::half_diagonal(&b).max(1e-6);
    (c, h, lo, hi)
}

/// A ray with a unit direction computed in f64 and rounded once.
fn unit_ray(origin: Point3<f64>, direction: Vector3<f64>, t_min: f32) -> Option<Ray> {
    let d = direction.try_normalize(0.0)?;
    Some(Ray::with_range(
        origin.cast::<f32>(),
        d.cast::<f32>(),
        t_min,
        f32::INFINITY,
    ))
}

/// The primary set: a `width × width` pinhole image, vertical field of view 45°, from
/// c + 2.2·h·normalize(0.45, 0.35, 1.0) looking at c with +y up; one ray per pixel centre,
/// row by row from the top left.
pub fn primary(mesh: &Mesh, width: u32) -> RaySet {
    let (c, h, _, _) = frame(mesh);
    let eye = c + Vector3::new(0.45, 0.35, 1.0).normalize() * (2.2 * h);
    let forward = (c - eye).normalize();
    let right = forward.cross(&Vector3::y()).normalize();
    let up = right.cross(&forward);
    let half = (22.5f64).to_radians().tan();
    let n = width as usize;
    let mut rays = Vec::with_capacity(n * n);
    for j in 0..n {
        for i in 0..n {
            let x = (2.0 * (i as f64 + 0.5) / n as f64 - 1.0) * half;
            let y = (1.0 - 2.0 * (j as f64 + 0.5) / n as f64) * half;
            rays.extend(unit_ray(eye, forward + right * x + up * y, 0.0));
        }
    }
    RaySet {
        kind: Kind::Primary,
        seed: 0,
        width,
        rays,
    }
}

/// The random set: `count` rays from uniform points on the sphere of radius 1.5·h about c
/// to uniform points in the bounds. (A draw whose two points coincide is drawn again; there
/// can be fewer rays only for bounds no f64 can tell apart, after ten draws per ray.)
pub fn random(mesh: &Mesh, count: usize, seed: u64) -> RaySet {
    let (c, h, lo, hi) = frame(mesh);
    let mut rng = Rng::new(seed);
    let mut rays = Vec::with_capacity(count);
    for _ in 0..count.saturating_mul(10) {
        if rays.len() == count {
            break;
        }
        let origin = c + rng.unit_vector() * (1.5 * h);
        let target = Point3::new(
            lo.x + (hi.x - lo.x) * rng.f64(),
            lo.y + (hi.y - lo.y) * rng.f64(),
            lo.z + (hi.z - lo.z) * rng.f64(),
        );
        rays.extend(unit_ray(origin, target - origin, 0.0));
    }
    RaySet {
        kind: Kind::Random,
        seed,
        width: 0,
        rays,
    }
}

/// The secondary set: from each hit of the primary set, one ray in a cosine-weighted
/// direction about the geometric normal turned towards the camera. The ray starts at the hit
/// point and its range begins at 1e-5·h, so it does not find its own triangle again.
pub fn secondary(bvh: &Bvh, primary: &RaySet, seed: u64) -> RaySet {
    let (_, h, _, _) = frame(bvh.mesh());
    let mut rng = Rng::new(seed);
    let options = QueryOptions::default();
    let t_min = (1e-5 * h) as f32;
    let mut rays = Vec::new();
    for ray in &primary.rays {
        let Some(hit) = bvh.closest_hit(ray, &options) else {
            continue;
        };
        let mut n = hit.normal.into_inner().cast::<f64>();
        if !hit.front_face {
            n = -n;
        }
        // Cosine-weighted: a uniform point on the unit sphere added to the normal (Shirley).
        let d = n + rng.unit_vector();
        let d = if d.norm_squared() > 1e-12 { d } else { n };
        rays.extend(unit_ray(hit.point.cast::<f64>(), d, t_min));
    }
    RaySet {
        kind: Kind::Secondary,
        seed,
        width: 0,
        rays,
    }
}
