//! Shared test helpers: a seeded RNG, the shared-mesh finder, ray sets and brute-force
//! oracles (the crate's own f32 kernel over every triangle, and an independent f64 solve).
#![allow(dead_code)]

use meshray::geometry::intersect_triangle;
use meshray::{Camera, Culling, Mesh, QueryOptions, Ray};
use nalgebra::{Isometry3, Perspective3, Point2, Point3, Vector2, Vector3};
use std::path::PathBuf;

/// Where a ray from `o` along `d` enters and leaves the bounding box of the triangle
/// `tri`, as the library's slab tests compute them in `f32` (`(−∞, +∞)` where no plane
/// bounds it). tests/grazing.rs and the GPU crate's grazing rays (which include this file)
/// set `t_min` past the exit.
pub fn triangle_box_bounds(
    tri: &[Point3<f32>; 3],
    o: &Point3<f32>,
    d: &Vector3<f32>,
) -> (f32, f32) {
    let (mut entry, mut exit) = (f32::NEG_INFINITY, f32::INFINITY);
    for k in 0..3 {
        let lo = tri[0][k].min(tri[1][k]).min(tri[2][k]);
        let hi = tri[0][k].max(tri[1][k]).max(tri[2][k]);
        let inv = 1.0 / d[k];
        let (near, far) = if inv >= 0.0 { (lo, hi) } else { (hi, lo) };
        entry = entry.max((near - o[k]) * inv);
        exit = exit.min((far - o[k]) * inv);
    }
    (entry, exit)
}

/// A wavy `n × n` grid of unit cells in the x–z plane (`2·n²` triangles), a small mesh that
/// is neither flat nor closed, for scenes of many instances.
pub fn wavy_grid(n: usize) -> Mesh {
    let mut positions = Vec::new();
    for j in 0..=n {
        for i in 0..=n {
            let (x, z) = (i as f32, j as f32);
            positions.push(Point3::new(x, (x * 0.7).sin() * (z * 0.4).cos(), z));
        }
    }
    let mut triangles = Vec::new();
    for j in 0..n {
        for i in 0..n {
            let v = (j * (n + 1) + i) as u32;
            let w = v + n as u32 + 1;
            triangles.push([v, v + 1, w]);
            triangles.push([v + 1, w + 1, w]);
        }
    }
    Mesh::from_buffers(positions, triangles).expect("a valid grid")
}

/// splitmix64: small, seeded, good enough for test inputs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f32()
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Uniform on the unit sphere.
    pub fn unit_vector(&mut self) -> Vector3<f32> {
        let z = self.range(-1.0, 1.0);
        let phi = self.range(0.0, std::f32::consts::TAU);
        let r = (1.0 - z * z).max(0.0).sqrt();
        Vector3::new(r * phi.cos(), r * phi.sin(), z)
    }
}

/// The repository's root (the folder holding `.ci/run`): the crate including this module is
/// the test crate in `tests/`, the command-line crate in `cli/`, or the library itself (its
/// benches).
pub fn repository() -> PathBuf {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    crate_dir
        .ancestors()
        .find(|dir| dir.join(".ci/run").is_file())
        .expect("the crates lie inside the repository")
        .to_path_buf()
}

/// The shared meshes' directory: `MESHRAY_MESHES`, else `../shared/meshes` beside the crate.
/// `None` (with a printed note) when absent and tests/build.rs did not find them either (the tests
/// that need them are then ignored); a failure when tests/build.rs found them or under `CI=true`.
pub fn meshes_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("MESHRAY_MESHES")
        .map(PathBuf::from)
        .unwrap_or_else(|| repository().join("../shared/meshes"));
    if dir.join("manifest.tsv").is_file() {
        return Some(dir);
    }
    // tests/build.rs sets `shared_meshes` when it found them (or under CI=true): the tests that
    // need them are compiled as ignored otherwise, so here their absence is a failure.
    if cfg!(shared_meshes) {
        panic!(
            "the shared meshes are missing at {} (set MESHRAY_MESHES; under CI=true they are required)",
            dir.display()
        );
    }
    eprintln!(
        "note: shared meshes not found at {}; using the project's own assets only (set MESHRAY_MESHES)",
        dir.display()
    );
    None
}

/// A shared mesh by its path in the manifest (e.g. `stanford-bunny/stanford-bunny.obj`).
pub fn shared_mesh(name: &str) -> Option<Mesh> {
    let dir = meshes_dir()?;
    Some(Mesh::load(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}")))
}

/// The benches' meshes: the project's scene and, when present, three shared ones of
/// different kinds (a scan, an architectural scene, a large scan), with short names.
pub fn bench_meshes() -> Vec<(String, Mesh)> {
    let mut out = vec![("scene".to_string(), Mesh::load(asset("scene.obj")).unwrap())];
    for name in [
        "stanford-bunny/stanford-bunny.obj",
        "crytek-sponza/sponza.obj",
        "armadillo/armadillo.obj",
    ] {
        if let Some(mesh) = shared_mesh(name) {
            out.push((name.split('/').next().unwrap().to_string(), mesh));
        }
    }
    out
}

pub fn asset(name: &str) -> PathBuf {
    repository().join("assets").join(name)
}

/// The centre of the mesh's bounds and half its diagonal.
pub fn frame(mesh: &Mesh) -> (Point3<f32>, f32) {
    let b = mesh.bounds();
    (b.centroid(), (b.extent().norm() * 0.5).max(1e-6))
}

/// `side × side` camera rays through pixel centres, from c + 2.2·h·normalize(0.45, 0.35, 1)
/// looking at c, vertical field of view 45°.
pub fn camera_rays(mesh: &Mesh, side: usize) -> Vec<Ray> {
    let (c, h) = frame(mesh);
    let eye = c + Vector3::new(0.45, 0.35, 1.0).normalize() * (2.2 * h);
    let view = Isometry3::look_at_rh(&eye, &c, &Vector3::y()).to_homogeneous();
    let projection =
        Perspective3::new(1.0, 45f32.to_radians(), 0.01 * h, 10.0 * h).to_homogeneous();
    let viewport = Vector2::new(side as f32, side as f32);
    let camera = Camera::new(view, projection, viewport).unwrap();
    let mut rays = Vec::with_capacity(side * side);
    for j in 0..side {
        for i in 0..side {
            let pixel = Point2::new(i as f32 + 0.5, j as f32 + 0.5);
            rays.push(camera.pixel_ray(pixel).unwrap());
        }
    }
    rays
}

/// Rays from uniform points on the sphere of radius 1.5·h about c to uniform points in the
/// bounds; the direction is the difference, not normalized.
pub fn random_rays(mesh: &Mesh, n: usize, rng: &mut Rng) -> Vec<Ray> {
    random_rays_in(&mesh.bounds(), n, rng)
}

/// [`random_rays`] for any box (a scene's): c its centre, h half its diagonal.
pub fn random_rays_in(b: &meshray::geometry::Aabb, n: usize, rng: &mut Rng) -> Vec<Ray> {
    let (c, h) = (b.centroid(), (b.extent().norm() * 0.5).max(1e-6));
    (0..n)
        .map(|_| {
            let origin = c + rng.unit_vector() * (1.5 * h);
            let target = Point3::new(
                rng.range(b.min.x, b.max.x),
                rng.range(b.min.y, b.max.y),
                rng.range(b.min.z, b.max.z),
            );
            Ray::new(origin, target - origin)
        })
        .collect()
}

/// Short rays leaving random points of random triangles in random directions, over
/// `t` in [1e-4·h, 0.1·h] (unit directions, so `t` is a distance).
pub fn surface_rays(mesh: &Mesh, n: usize, rng: &mut Rng) -> Vec<Ray> {
    let (_, h) = frame(mesh);
    (0..n)
        .map(|_| {
            let [a, b, c] = mesh.triangle(rng.below(mesh.triangle_count()));
            let (mut u, mut v) = (rng.f32(), rng.f32());
            if u + v > 1.0 {
                (u, v) = (1.0 - u, 1.0 - v);
            }
            let p = a + (b - a) * u + (c - a) * v;
            Ray::with_range(p, rng.unit_vector(), 1e-4 * h, 0.1 * h)
        })
        .collect()
}

/// Triangles grouped in runs of [`CHUNK`] along a Morton (Z-order) curve of their
/// centroids, with a generously grown f64 box per run, so the brute forces can skip runs the
/// ray cannot come near. The box test is independent of the crate's code (f64, its own slab
/// logic) and conservative: each box grows by 1e-3 of its diagonal plus 1e-5 of the mesh's
/// size, far more than f32 rounding can move a hit.
pub struct Chunks {
    order: Vec<u32>,
    boxes: Vec<([f64; 3], [f64; 3])>,
}

pub const CHUNK: usize = 32;

/// Spreads the low 21 bits of `x` to every third bit.
fn spread(mut x: u64) -> u64 {
    x &= 0x1f_ffff;
    x = (x | x << 32) & 0x1f_0000_0000_ffff;
    x = (x | x << 16) & 0x1f_0000_ff00_00ff;
    x = (x | x << 8) & 0x100f_00f0_0f00_f00f;
    x = (x | x << 4) & 0x10c3_0c30_c30c_30c3;
    (x | x << 2) & 0x1249_2492_4924_9249
}

impl Chunks {
    pub fn new(mesh: &Mesh) -> Chunks {
        let n = mesh.triangle_count();
        let bounds = mesh.bounds();
        let (_, h) = frame(mesh);
        let extent = bounds.extent().map(|e| e.max(1e-30));
        let key = |i: usize| {
            let [a, b, c] = mesh.triangle(i);
            let centroid = (a.coords + b.coords + c.coords) / 3.0;
            let q = |k: usize| {
                let x = ((centroid[k] - bounds.min[k]) / extent[k]).clamp(0.0, 1.0);
                spread((x * ((1 << 21) - 1) as f32) as u64)
            };
            q(0) | q(1) << 1 | q(2) << 2
        };
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_cached_key(|&i| key(i as usize));
        let boxes = order
            .chunks(CHUNK)
            .map(|run| {
                let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
                for &i in run {
                    for p in mesh.triangle(i as usize) {
                        for k in 0..3 {
                            lo[k] = lo[k].min(p[k] as f64);
                            hi[k] = hi[k].max(p[k] as f64);
                        }
                    }
                }
                let diag = ((0..3).map(|k| (hi[k] - lo[k]).powi(2)).sum::<f64>()).sqrt();
                let pad = 1e-3 * diag + 1e-5 * h as f64 + 1e-30;
                (lo.map(|x| x - pad), hi.map(|x| x + pad))
            })
            .collect();
        Chunks { order, boxes }
    }

    /// The triangle numbers of every run whose box the ray's line meets within a widened
    /// range of t.
    pub fn candidates(&self, ray: &Ray) -> impl Iterator<Item = usize> + '_ {
        let p = ray.origin();
        let o = [p.x as f64, p.y as f64, p.z as f64];
        let dv = ray.direction();
        let d = [dv.x as f64, dv.y as f64, dv.z as f64];
        let (t_min, t_max) = (ray.t_min() as f64, ray.t_max() as f64);
        let (t_lo, t_hi) = (
            t_min - 1e-3 * t_min.abs() - 1e-9,
            t_max + 1e-3 * t_max.abs() + 1e-9,
        );
        let valid = ray.is_valid();
        self.boxes
            .iter()
            .enumerate()
            .filter_map(move |(c, (lo, hi))| {
                let (mut near, mut far) = (t_lo, t_hi);
                for k in 0..3 {
                    if d[k] == 0.0 {
                        if o[k] < lo[k] || o[k] > hi[k] {
                            return None;
                        }
                        continue;
                    }
                    let (a, b) = ((lo[k] - o[k]) / d[k], (hi[k] - o[k]) / d[k]);
                    near = near.max(a.min(b));
                    far = far.min(a.max(b));
                }
                let end = ((c + 1) * CHUNK).min(self.order.len());
                (valid && near <= far)
                    .then(|| self.order[c * CHUNK..end].iter().map(|&i| i as usize))
            })
            .flatten()
    }
}

/// The crate's own f32 test (Cramer or watertight, as the options say) over every triangle
/// (skipping only runs of triangles whose grown box the ray misses): every hit as
/// (t, triangle), sorted by t then triangle (so the first is the closest, the lowest number on
/// a tie).
pub fn brute_all_f32(
    mesh: &Mesh,
    chunks: &Chunks,
    ray: &Ray,
    options: &QueryOptions,
) -> Vec<(f32, u32)> {
    let mut hits = Vec::new();
    for i in chunks.candidates(ray) {
        let [a, b, c] = mesh.triangle(i);
        if let Some(h) = intersect_triangle(ray, a, b, c, options) {
            hits.push((h.t, i as u32));
        }
    }
    hits.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    hits
}

/// A triangle's answer from the f64 oracle.
#[derive(Clone, Copy, Debug)]
pub struct Exact {
    pub triangle: u32,
    pub t: f64,
    /// f32 can go either way: the point is within rounding of an edge, or t within rounding
    /// of the range's ends.
    pub borderline: bool,
    /// Tolerance on t for comparing an f32 answer with this one.
    pub t_tolerance: f64,
}

/// A triangle in f64, with what the error bound needs.
struct ExactTriangle {
    a: [f64; 3],
    e1: [f64; 3],
    e2: [f64; 3],
    n: [f64; 3],
    /// The longest edge, L1 norm.
    edge: f64,
}

/// Mesh triangles in f64, ready for the oracle.
pub struct ExactMesh {
    tris: Vec<ExactTriangle>,
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}
fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn l1(a: [f64; 3]) -> f64 {
    a[0].abs() + a[1].abs() + a[2].abs()
}

impl ExactMesh {
    pub fn new(mesh: &Mesh) -> ExactMesh {
        let tris = (0..mesh.triangle_count())
            .map(|i| {
                let [a, b, c] = mesh
                    .triangle(i)
                    .map(|p| [p.x as f64, p.y as f64, p.z as f64]);
                let (e1, e2) = (sub(b, a), sub(c, a));
                ExactTriangle {
                    a,
                    e1,
                    e2,
                    n: cross(e1, e2),
                    edge: l1(e1).max(l1(e2)).max(l1(sub(c, b))),
                }
            })
            .collect();
        ExactMesh { tris }
    }

    /// Every triangle the ray may hit in f64 (solved by Cramer's rule in f64 from the f32
    /// inputs), each flagged borderline when an error bound of the f32 computation says f32
    /// could answer either way.
    pub fn hits(&self, chunks: &Chunks, ray: &Ray, options: &QueryOptions) -> Vec<Exact> {
        let culling = options.culling;
        let p = ray.origin();
        let o = [p.x as f64, p.y as f64, p.z as f64];
        let dv = ray.direction();
        let d = [dv.x as f64, dv.y as f64, dv.z as f64];
        let (t_min, t_max) = (ray.t_min() as f64, ray.t_max() as f64);
        // The f32 inputs are exact; each f32 difference, product or sum then adds a relative
        // error of at most ε/2, so the numerators D1, D2 are off by at most about
        // 3ε·|d|·|s|·|edge|, D3 by 3ε·|n|·|s|, and |D| by 3ε·|d|·|edge|²; dividing by |D|
        // bounds the error of u, v (whose sum is compared with |D|) and t = D3/D. The
        // factor 8 covers the constants; L1 norms over-estimate the Euclidean ones, which
        // only widens the margin. The watertight test's sheared coordinates carry errors of
        // up to 4ε·|s| (the shear adds |d|/|d_z| <= 3 times the along-ray offset), so its
        // edge functions get twice the constant.
        let eps = if options.watertight { 16.0 } else { 8.0 } * f32::EPSILON as f64;
        let d_mag = l1(d);
        let mut out = Vec::new();
        for i in chunks.candidates(ray) {
            let tri = &self.tris[i];
            let det = -dot(tri.n, d);
            if det == 0.0 {
                continue;
            }
            match culling {
                Culling::Back if det < 0.0 => continue,
                Culling::Front if det > 0.0 => continue,
                _ => {}
            }
            let s = sub(o, tri.a);
            let w = cross(d, s);
            let (sign, abs_det) = if det < 0.0 { (-1.0, -det) } else { (1.0, det) };
            let d1 = -dot(tri.e2, w) * sign;
            let d2 = dot(tri.e1, w) * sign;
            let m = d1.min(d2).min(abs_det - d1 - d2);
            let det_err = eps * d_mag * tri.edge * tri.edge;
            let bary_tol = eps * d_mag * l1(s) * tri.edge + det_err; // in units of |D|
            if m < -bary_tol {
                continue;
            }
            let t = dot(tri.n, s) * sign / abs_det;
            let t_tol = (eps * l1(tri.n) * l1(s) + t.abs() * det_err) / abs_det;
            if t < t_min - t_tol || t > t_max + t_tol {
                continue;
            }
            let borderline = m <= bary_tol || t <= t_min + t_tol || t >= t_max - t_tol;
            out.push(Exact {
                triangle: i as u32,
                t,
                borderline,
                t_tolerance: t_tol,
            });
        }
        out
    }
}

fn segment_distance(p: [f64; 3], a: [f64; 3], b: [f64; 3]) -> f64 {
    let d = sub(b, a);
    let len = dot(d, d);
    let t = if len > 0.0 {
        (dot(sub(p, a), d) / len).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let q = [a[0] + t * d[0], a[1] + t * d[1], a[2] + t * d[2]];
    dot(sub(p, q), sub(p, q)).sqrt()
}

/// The distance from `p` to the triangle in f64, by another route than the crate's
/// (project onto the plane; outside the triangle, the nearest of the three edges).
pub fn point_triangle_distance(p: [f64; 3], a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> f64 {
    let (e1, e2) = (sub(b, a), sub(c, a));
    let n = cross(e1, e2);
    let nn = dot(n, n);
    let edges = segment_distance(p, a, b)
        .min(segment_distance(p, a, c))
        .min(segment_distance(p, b, c));
    if nn == 0.0 {
        return edges;
    }
    // Barycentrics of the projection, by areas.
    let s = sub(p, a);
    let u = dot(cross(s, e2), n) / nn;
    let v = dot(cross(e1, s), n) / nn;
    if u >= 0.0 && v >= 0.0 && u + v <= 1.0 {
        (dot(s, n) / nn.sqrt()).abs()
    } else {
        edges
    }
}

/// A mesh's triangles in f64, moved by `m` (in f64) when given: the corners the sweep and
/// overlap brute forces compare with.
pub fn triangles64(mesh: &Mesh, m: Option<&nalgebra::Matrix4<f64>>) -> Vec<[[f64; 3]; 3]> {
    (0..mesh.triangle_count())
        .map(|i| {
            mesh.triangle(i).map(|p| {
                let p = p.cast::<f64>();
                let p = m.map_or(p, |m| m.transform_point(&p));
                [p.x, p.y, p.z]
            })
        })
        .collect()
}

/// The minimum of a convex `f` on `[lo, hi]` by golden-section search: where, and the
/// value (the sweep and overlap brute forces' independent route to a nearest approach).
pub fn golden(mut lo: f64, mut hi: f64, f: impl Fn(f64) -> f64) -> (f64, f64) {
    for _ in 0..70 {
        let (x, y) = (
            hi - (hi - lo) * 0.618_033_988_75,
            lo + (hi - lo) * 0.618_033_988_75,
        );
        if f(x) <= f(y) {
            hi = y;
        } else {
            lo = x;
        }
    }
    let x = (lo + hi) / 2.0;
    (x, f(x))
}

/// A fresh directory for a test's files, `name` and this process's id under cargo's scratch
/// directory for integration tests (`CARGO_TARGET_TMPDIR`). A host path, so it also works
/// under WASI, where `std::env::temp_dir` and the process id are unsupported (the WASI
/// runner, js/wasi-run.mjs, preopens the host's root; there the id is left out).
pub fn scratch_dir(name: &str) -> PathBuf {
    #[cfg(not(target_os = "wasi"))]
    let name = format!("{name}-{}", std::process::id());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).expect("a scratch directory");
    dir
}
