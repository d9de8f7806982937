//! What the fuzz targets check, shared by the cargo-fuzz targets in `tests/fuzz` and by
//! `tests/fuzz_replay.rs`, which replays the kept corpus (and random inputs) under
//! `cargo test`. Each check panics on a wrong answer; any other panic is a crash.
#![allow(dead_code)]

#[cfg(feature = "gltf")]
pub mod gltf_json;

use meshray::geometry::intersect_triangle;
use meshray::prelude::*;
use meshray::{BuildOptions, Bvh, Culling, LoadOptions, Mesh, QueryOptions, Ray};
use nalgebra::{Point3, Vector3};

/// Reads values off the fuzzer's bytes; past the end it reads zeros.
pub struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Bytes<'a> {
        Bytes { data, pos: 0 }
    }

    pub fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    /// A float: mostly small exact values (so coincidences — shared edges, axis-parallel
    /// rays, rays through vertices — are common), sometimes an arbitrary value in ±1024,
    /// sometimes a special value (zeros, infinities, NaN, the smallest normal).
    ///
    /// Magnitudes stay within a range f32 can resolve: with a vertex at 1e25 beside others
    /// near 1, or a ray starting 1e30 away, no f32 triangle test can tell hit from miss (it may
    /// accept a point outside the triangle's own box, which the BVH's box test then rightly
    /// rejects), so a brute force of the same test is no oracle there.
    pub fn f32(&mut self) -> f32 {
        match self.u8() % 8 {
            0 => {
                let raw = u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()]);
                (raw as f64 / u32::MAX as f64 * 2048.0 - 1024.0) as f32
            }
            1 => [
                0.0,
                -0.0,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NAN,
                f32::MIN_POSITIVE,
                1000.0,
                -1e-3,
            ][self.u8() as usize % 8],
            _ => (self.u8() as i8) as f32 / 16.0,
        }
    }

    /// Like [`f32`](Self::f32) but never NaN or infinite.
    pub fn finite_f32(&mut self) -> f32 {
        let x = self.f32();
        if x.is_finite() { x } else { 0.5 }
    }

    pub fn point(&mut self) -> Point3<f32> {
        Point3::new(self.f32(), self.f32(), self.f32())
    }

    pub fn finite_point(&mut self) -> Point3<f32> {
        Point3::new(self.finite_f32(), self.finite_f32(), self.finite_f32())
    }
}

/// Every hit of the crate's own triangle test over every triangle, sorted by (t, triangle).
fn brute(mesh: &Mesh, ray: &Ray, options: &QueryOptions) -> Vec<(f32, u32)> {
    let mut hits: Vec<(f32, u32)> = (0..mesh.triangle_count())
        .filter_map(|i| {
            let [a, b, c] = mesh.triangle(i);
            intersect_triangle(ray, a, b, c, options).map(|h| (h.t, i as u32))
        })
        .collect();
    hits.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    hits
}

/// Whether a hit of the triangle test lies outside the triangle's own box. The f32 triangle
/// tests can accept such a point (a ray starting one ulp beside a vertex; a grazing ray on a
/// sliver, far outside), and the tree's exact box test then rightly rejects it.
fn outside_own_box(mesh: &Mesh, ray: &Ray, t: f32, triangle: u32) -> bool {
    let corners = mesh.triangle(triangle as usize);
    let (o, d) = (ray.origin(), ray.direction());
    (0..3).any(|k| {
        // p − lo = (o − lo) + t·d: both terms are exact in f64 (a difference and a product of
        // f32 values), so the sign of the sum is right even for a point 1e-40 outside.
        let lo = corners.iter().map(|c| c[k]).fold(f32::INFINITY, f32::min);
        let hi = corners
            .iter()
            .map(|c| c[k])
            .fold(f32::NEG_INFINITY, f32::max);
        let step = t as f64 * d[k] as f64;
        (o[k] as f64 - lo as f64) + step < 0.0 || (o[k] as f64 - hi as f64) + step > 0.0
    })
}

/// The BVH answers as the brute force does: the same hits (bit for bit), except that it may
/// leave out hits the triangle test accepted outside the triangle's own box; never one more.
pub fn compare(bvh: &Bvh, ray: &Ray, options: &QueryOptions) {
    let mesh = bvh.mesh();
    let brute = brute(mesh, ray, options);
    if !ray.is_valid() {
        assert!(brute.is_empty(), "an invalid ray hit: {ray:?}");
    }
    let all: Vec<(f32, u32)> = bvh
        .all_hits(ray, options)
        .iter()
        .map(|h| (h.t, h.triangle))
        .collect();
    for hit in &all {
        assert!(
            brute.contains(hit),
            "the BVH's hit {hit:?} is no brute-force hit, for {ray:?} {options:?}"
        );
    }
    for &(t, tri) in &brute {
        assert!(
            all.contains(&(t, tri)) || outside_own_box(mesh, ray, t, tri),
            "the BVH lost the hit {:?}; all {all:?}, brute {brute:?}, for {ray:?} {options:?}",
            (t, tri)
        );
    }
    // Closest and any hit: a brute-force hit, and no farther than any hit that lies in its
    // own box. (Hits outside their own box may be seen by one query and culled by another.)
    let genuine: Vec<(f32, u32)> = brute
        .iter()
        .copied()
        .filter(|&(t, tri)| !outside_own_box(mesh, ray, t, tri))
        .collect();
    let closest = bvh.closest_hit(ray, options);
    let any = bvh.any_hit(ray, options);
    for (name, hit) in [("closest", closest), ("any", any)] {
        if let Some(h) = hit {
            assert!(
                brute.contains(&(h.t, h.triangle)),
                "{name} hit {h:?} is no brute-force hit, for {ray:?}"
            );
            assert!(h.t >= ray.t_min() && h.t <= ray.t_max());
        } else {
            assert!(
                genuine.is_empty(),
                "{name} hit missed {genuine:?} for {ray:?} {options:?}"
            );
        }
    }
    if let (Some(h), Some(first)) = (closest, genuine.first()) {
        assert!(
            h.t <= first.0,
            "closest t {} beyond the hit {first:?} for {ray:?} {options:?}",
            h.t
        );
    }
    if let Some(h) = closest
        && genuine.len() == brute.len()
    {
        // no doubtful hits at all: exactly the brute force's closest
        assert_eq!(
            h.t.to_bits(),
            brute[0].0.to_bits(),
            "closest t for {ray:?} {options:?}"
        );
    }
}

fn all_options() -> impl Iterator<Item = QueryOptions> {
    [Culling::None, Culling::Back, Culling::Front]
        .into_iter()
        .flat_map(|culling| {
            [false, true].map(|watertight| QueryOptions {
                culling,
                watertight,
            })
        })
}

/// Target `obj_bytes`: any bytes as an OBJ file → mesh → BVH → queries against brute force.
pub fn obj_bytes(data: &[u8]) {
    let options = LoadOptions {
        max_triangles: 2_000,
        ..Default::default()
    };
    let Ok(mesh) = Mesh::from_bytes(
        data,
        &LoadOptions {
            format: Some(meshray::mesh::Format::Obj),
            ..options
        },
    ) else {
        return;
    };
    assert!(mesh.triangle_count() > 0 && mesh.triangle_count() <= 2_000);
    let bvh = Bvh::build(mesh);
    meshray::diagnostics::validate(&bvh).expect("a valid BVH");
    aimed_rays(&bvh, data);
}

/// Three rays from the bytes `data`, aimed at points in the BVH's box from outside it: every
/// query answers as the brute force does.
pub fn aimed_rays(bvh: &Bvh, data: &[u8]) {
    let b = bvh.bounds();
    let mut bytes = Bytes::new(data);
    for k in 0..3 {
        let corner = |bytes: &mut Bytes| {
            let s = |bytes: &mut Bytes| bytes.u8() as f32 / 255.0;
            Point3::new(
                b.min.x + (b.max.x - b.min.x) * s(bytes),
                b.min.y + (b.max.y - b.min.y) * s(bytes),
                b.min.z + (b.max.z - b.min.z) * s(bytes),
            )
        };
        let target = corner(&mut bytes);
        let origin =
            target + Vector3::new(1.0 + k as f32, 2.0, 3.0 - k as f32) * (b.extent().norm() + 1.0);
        let ray = Ray::new(origin, target - origin);
        for options in all_options() {
            compare(bvh, &ray, &options);
        }
    }
}

/// Target `soup`: a triangle soup and rays, any floats at all, against brute force.
pub fn soup(data: &[u8]) {
    let mut bytes = Bytes::new(data);
    let vertices = 3 + bytes.u8() as usize % 24;
    let triangles = 1 + bytes.u8() as usize % 40;
    // One soup in 16 may hold non-finite vertices (construction must refuse them).
    let any_floats = bytes.u8().is_multiple_of(16);
    let positions: Vec<Point3<f32>> = (0..vertices)
        .map(|_| {
            if any_floats {
                bytes.point()
            } else {
                bytes.finite_point()
            }
        })
        .collect();
    let tris: Vec<[u32; 3]> = (0..triangles)
        .map(|_| [0; 3].map(|_: u32| bytes.u8() as u32 % vertices as u32))
        .collect();
    // What the crate promises to take: every used coordinate finite and within ±2^40, and a
    // box at least 2^-40 on its longest side (computed here in f64, independently).
    let used = || tris.iter().flatten().map(|&v| positions[v as usize]);
    let in_range = used().all(|p| p.iter().all(|c| c.abs() <= Mesh::MAX_COORDINATE));
    let extent = (0..3)
        .map(|axis| {
            let (lo, hi) = used().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                (lo.min(f64::from(p[axis])), hi.max(f64::from(p[axis])))
            });
            hi - lo
        })
        .fold(0.0, f64::max);
    let acceptable = in_range && extent >= f64::from(Mesh::MIN_EXTENT);
    let mesh = match Mesh::from_buffers(positions.clone(), tris.clone()) {
        Ok(mesh) => {
            assert!(acceptable, "a soup outside the range was taken");
            mesh
        }
        Err(e) => {
            assert!(!acceptable, "a soup inside the range was refused: {e}");
            return;
        }
    };
    let build = BuildOptions {
        max_leaf_size: 1 + bytes.u8() as usize % 8,
        bins: 2 + bytes.u8() as usize % 30,
        ..Default::default()
    };
    let bvh = Bvh::build_with(mesh, &build);
    meshray::diagnostics::validate(&bvh).expect("a valid BVH");
    for _ in 0..1 + bytes.u8() % 8 {
        let (origin, direction) = (
            bytes.point(),
            Vector3::new(bytes.f32(), bytes.f32(), bytes.f32()),
        );
        let ray = match bytes.u8() % 4 {
            0 => Ray::new(origin, direction),
            _ => Ray::with_range(origin, direction, bytes.f32(), bytes.f32()),
        };
        for options in all_options() {
            compare(&bvh, &ray, &options);
        }
    }
}

/// Loads `data` in `format` with at most 2,000 triangles; a mesh it takes is built, validated
/// and queried against brute force (rays from the same bytes).
fn file_bytes(data: &[u8], format: meshray::mesh::Format) {
    let options = LoadOptions {
        max_triangles: 2_000,
        ..Default::default()
    };
    let Ok(mesh) = Mesh::from_bytes(
        data,
        &LoadOptions {
            format: Some(format),
            ..options
        },
    ) else {
        return;
    };
    assert!(mesh.triangle_count() > 0 && mesh.triangle_count() <= 2_000);
    let bvh = Bvh::build(mesh);
    meshray::diagnostics::validate(&bvh).expect("a valid BVH");
    aimed_rays(&bvh, data);
}

/// Target `ply_bytes`: any bytes as a PLY file (ASCII or binary), as `obj_bytes` for OBJ.
#[cfg(feature = "ply")]
pub fn ply_bytes(data: &[u8]) {
    file_bytes(data, meshray::mesh::Format::Ply);
}

/// Target `stl_bytes`: any bytes as an STL file (binary or ASCII), as `obj_bytes` for OBJ.
#[cfg(feature = "stl")]
pub fn stl_bytes(data: &[u8]) {
    file_bytes(data, meshray::mesh::Format::Stl);
}

/// Target `saved_tree`: a small soup from the first bytes is built and saved (postcard), the
/// saved bytes are damaged as the rest of the input says (bytes overwritten, the file cut
/// short or extended), and the result is loaded. Loading must refuse it with an error or give
/// a tree that passes validation and answers rays as brute force over its own mesh does.
#[cfg(feature = "serde")]
pub fn saved_tree(data: &[u8]) {
    let mut bytes = Bytes::new(data);
    let vertices = 3 + bytes.u8() as usize % 12;
    let triangles = 1 + bytes.u8() as usize % 16;
    let positions: Vec<Point3<f32>> = (0..vertices).map(|_| bytes.finite_point()).collect();
    let tris: Vec<[u32; 3]> = (0..triangles)
        .map(|_| [0; 3].map(|_: u32| bytes.u8() as u32 % vertices as u32))
        .collect();
    let Ok(mesh) = Mesh::from_buffers(positions, tris) else {
        return;
    };
    let build = BuildOptions {
        max_leaf_size: 1 + bytes.u8() as usize % 8,
        ..Default::default()
    };
    let saved = postcard::to_allocvec(&Bvh::build_with(mesh, &build)).expect("a tree saves");
    let mut damaged = saved.clone();
    for _ in 0..bytes.u8() % 8 {
        let at = u16::from_le_bytes([bytes.u8(), bytes.u8()]) as usize;
        match bytes.u8() % 8 {
            // cut short, or grown by one byte
            0 => damaged.truncate(at % (damaged.len() + 1)),
            1 => damaged.push(bytes.u8()),
            // one byte overwritten (a flipped bit, or any value)
            2..=4 if !damaged.is_empty() => {
                let k = at % damaged.len();
                damaged[k] ^= 1 << (bytes.u8() % 8);
            }
            _ if !damaged.is_empty() => {
                let k = at % damaged.len();
                damaged[k] = bytes.u8();
            }
            _ => {}
        }
    }
    let Ok(loaded) = postcard::from_bytes::<Bvh>(&damaged) else {
        return;
    };
    meshray::diagnostics::validate(&loaded).expect("a loaded tree is a valid tree");
    aimed_rays(&loaded, data);
}
