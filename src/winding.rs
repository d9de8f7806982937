//! Winding numbers: how many times a surface wraps around a point. For a closed,
//! outward-facing mesh it is 1 inside and 0 outside; for a mesh with holes, overlaps or loose
//! triangles it still answers the question "inside?" sensibly (the *generalized* winding
//! number of Jacobson, Kavan and Sorkine-Hornung 2013): the sum of the signed solid angles
//! the triangles subtend at the point, over 4π.
//!
//! Two pieces live here, the tree-free mathematics:
//! - [`solid_angle`]: one triangle's signed solid angle (Van Oosterom and Strackee 1983),
//!   in `f64`;
//! - [`FarField`]: a group of triangles seen from afar, as Barill, Dickson, Schmidt, Levin
//!   and Jacobson ("Fast Winding Numbers for Soups and Clouds", 2018) sum them: the
//!   integrand of the solid angle, `(x − p)·n / |x − p|³`, expanded in a Taylor series about
//!   the group's centre to second order, so a group costs one evaluation of a cubic however
//!   many triangles it holds.

use nalgebra::Vector3;
use wide::f64x4;

/// How a winding number is summed: fast, from far-field terms for the parts of the mesh
/// far from the point, or exactly, one solid angle per triangle.
///
/// ```
/// use meshray::query::WindingAccuracy;
///
/// assert_eq!(WindingAccuracy::default(), WindingAccuracy::FarField { beta: 2.0 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WindingAccuracy {
    /// A subtree whose triangles all lie within `r` of its centre is summed as one
    /// second-order far-field term when the point is farther than `beta · r` from that
    /// centre (Barill et al. 2018's β; theirs and libigl's default is 2). The error of
    /// each such term falls as `beta⁻³`; what it comes to over real meshes is measured
    /// and bounded in the guide (`docs/guide.md`, "Inside or outside"), and checked by
    /// `tests/winding.rs`. Values below 1 (and NaN) are taken as 1.
    FarField {
        /// Distance, in subtree radii, beyond which a subtree is summed as one term.
        beta: f64,
    },
    /// Every triangle's solid angle, in `f64`: what a brute force over the triangles
    /// answers, in O(n) per point.
    Exact,
}

impl Default for WindingAccuracy {
    fn default() -> Self {
        WindingAccuracy::FarField { beta: 2.0 }
    }
}

/// The sums [`inside_by_stages`] tries, each with the margin from ½ beyond which its answer
/// is taken: a fast one first, a finer one for the few points it leaves, then the exact sum.
/// Each margin is many times the largest error of its sum measured over the shared meshes
/// (`docs/guide.md`, "Inside or outside").
const STAGES: [(WindingAccuracy, f64); 3] = [
    STAGE_ONE,
    (WindingAccuracy::FarField { beta: 6.0 }, 0.002),
    (WindingAccuracy::FarField { beta: 20.0 }, 1e-4),
];

/// The first stage: the default fast sum, taken beyond 0.1 of ½ (its largest error measured
/// is about a tenth of that).
pub(crate) const STAGE_ONE: (WindingAccuracy, f64) = (WindingAccuracy::FarField { beta: 2.0 }, 0.1);

/// Whether the winding number that `winding` sums is at least ½, as the exact sum says:
/// each stage of [`STAGES`] answers when its sum is beyond its margin of ½, the exact sum
/// otherwise.
pub(crate) fn inside_by_stages(winding: impl Fn(WindingAccuracy) -> f64) -> bool {
    for (accuracy, margin) in STAGES {
        let w = winding(accuracy);
        if (w - 0.5).abs() > margin {
            return w > 0.5;
        }
    }
    winding(WindingAccuracy::Exact) >= 0.5
}

/// The signed solid angle of triangle `a, b, c` at `p`: positive when `p` sees the triangle's
/// back (the side away from its normal `(b − a) × (c − a)`), as a point inside an
/// outward-facing closed mesh sees every triangle. In `(−2π, 2π]`; 0 for a degenerate
/// triangle and for a point in the triangle's plane outside it.
///
/// `tan(Ω/2) = a·(b × c) / (|a||b||c| + (a·b)|c| + (a·c)|b| + (b·c)|a|)` with the corners
/// taken relative to `p` (Van Oosterom and Strackee 1983), computed in `f64`. The
/// definition [`solid_angles_x4`] computes four at a time (tests compare them).
#[cfg(test)]
pub(crate) fn solid_angle(p: [f64; 3], a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> f64 {
    let rel =
        |q: [f32; 3]| Vector3::new(q[0] as f64 - p[0], q[1] as f64 - p[1], q[2] as f64 - p[2]);
    let (a, b, c) = (rel(a), rel(b), rel(c));
    let (la, lb, lc) = (a.norm(), b.norm(), c.norm());
    let numerator = a.dot(&b.cross(&c));
    let denominator = la * lb * lc + a.dot(&b) * lc + a.dot(&c) * lb + b.dot(&c) * la;
    2.0 * numerator.atan2(denominator)
}

/// The moments of a group of triangles about a centre `c`, in `f64`, as the builder of the
/// far-field terms merges them up the tree: with `δ = x − c` and `n` the unit normal over
/// each triangle's area,
/// - `normal`: `∫ n dA` (the area-weighted normal),
/// - `first`: `∫ δ_i n_k dA`, at `[i][k]`,
/// - `second`: `∫ δ_i δ_j n_k dA`, at `[i][j][k]` (symmetric in `i`, `j`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Moments {
    pub centre: Vector3<f64>,
    pub area: f64,
    pub normal: Vector3<f64>,
    pub first: [[f64; 3]; 3],
    pub second: [[[f64; 3]; 3]; 3],
}

impl Moments {
    /// The moments of one triangle about `centre`. A triangle is flat, so `n` is constant
    /// over it and the integrals are those of `1`, `δ` and `δ δᵀ` over the triangle: its
    /// area, area times its centroid, and `area/12 · (Σ δ_v δ_vᵀ + s sᵀ)` with `δ_v` its
    /// corners and `s` their sum.
    pub fn of_triangle(centre: Vector3<f64>, a: [f32; 3], b: [f32; 3], c: [f32; 3]) -> Moments {
        let rel = |q: [f32; 3]| Vector3::new(q[0] as f64, q[1] as f64, q[2] as f64) - centre;
        let (a, b, c) = (rel(a), rel(b), rel(c));
        let area_normal = (b - a).cross(&(c - a)) * 0.5;
        let sum = a + b + c;
        let mut moments = Moments {
            centre,
            area: area_normal.norm(),
            normal: area_normal,
            ..Moments::default()
        };
        for i in 0..3 {
            for k in 0..3 {
                moments.first[i][k] = sum[i] / 3.0 * area_normal[k];
                for j in 0..3 {
                    let corners = a[i] * a[j] + b[i] * b[j] + c[i] * c[j] + sum[i] * sum[j];
                    moments.second[i][j][k] = corners / 12.0 * area_normal[k];
                }
            }
        }
        moments
    }

    /// The same moments about another centre: with `s = old − new`, `δ_new = δ_old + s`, so
    /// `∫ δ_i n_k` gains `s_i N_k` and `∫ δ_i δ_j n_k` gains `s_i M_jk + s_j M_ik + s_i s_j N_k`.
    pub fn moved_to(&self, centre: Vector3<f64>) -> Moments {
        let s = self.centre - centre;
        let mut moved = *self;
        moved.centre = centre;
        for i in 0..3 {
            for k in 0..3 {
                moved.first[i][k] += s[i] * self.normal[k];
                for j in 0..3 {
                    moved.second[i][j][k] += s[i] * self.first[j][k]
                        + s[j] * self.first[i][k]
                        + s[i] * s[j] * self.normal[k];
                }
            }
        }
        moved
    }

    /// Adds `other`, taken about the same centre.
    pub fn add(&mut self, other: &Moments) {
        debug_assert_eq!(self.centre, other.centre);
        self.area += other.area;
        self.normal += other.normal;
        for i in 0..3 {
            for k in 0..3 {
                self.first[i][k] += other.first[i][k];
                for j in 0..3 {
                    self.second[i][j][k] += other.second[i][j][k];
                }
            }
        }
    }
}

/// The far-field term of a group of triangles: its moments folded into the few numbers the
/// second-order expansion reads, in `f32` (the evaluation runs in `f64`). 27 numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct FarField {
    /// The expansion's centre.
    pub centre: [f32; 3],
    /// No triangle of the group is farther than this from the centre (rounded up).
    pub radius: f32,
    /// `∫ n dA`.
    normal: [f32; 3],
    /// `∫ δ·n dA`, the trace of the first moment.
    trace: f32,
    /// The symmetric part of the first moment `M_ik = ∫ δ_i n_k dA`: xx, yy, zz, xy, xz, yz
    /// (the expansion reads only `yᵀ M y`).
    first: [f32; 6],
    /// `2u + v` with `u_j = Σ_i T_iji`, `v_k = Σ_i T_iik`, `T` the second moment: what the
    /// second-order term reads linearly.
    contracted: [f32; 3],
    /// The cubic form `Σ T_ijk y_i y_j y_k` by monomial: xxx, yyy, zzz, xxy, xxz, xyy, yyz,
    /// xzz, yzz, xyz.
    cubic: [f32; 10],
}

/// The slot of monomial `y_i y_j y_k` in [`FarField::cubic`].
fn cubic_slot(i: usize, j: usize, k: usize) -> usize {
    let mut counts = [0u8; 3];
    for axis in [i, j, k] {
        counts[axis] += 1;
    }
    match counts {
        [3, 0, 0] => 0,
        [0, 3, 0] => 1,
        [0, 0, 3] => 2,
        [2, 1, 0] => 3,
        [2, 0, 1] => 4,
        [1, 2, 0] => 5,
        [0, 2, 1] => 6,
        [1, 0, 2] => 7,
        [0, 1, 2] => 8,
        _ => 9,
    }
}

impl FarField {
    /// The term of a group with these moments (taken about a centre that is exactly an
    /// `f32` point) whose triangles all lie within `radius` of it.
    pub fn new(moments: &Moments, radius: f64) -> FarField {
        let f = |x: f64| x as f32;
        let m = &moments.first;
        let t = &moments.second;
        let mut contracted = [0.0; 3];
        let mut cubic = [0.0; 10];
        for a in 0..3 {
            for b in 0..3 {
                contracted[a] += 2.0 * t[b][a][b] + t[b][b][a];
                for c in 0..3 {
                    cubic[cubic_slot(a, b, c)] += t[a][b][c];
                }
            }
        }
        FarField {
            centre: moments.centre.map(f).into(),
            // Rounded up past f32's rounding, so the radius stays an upper bound.
            radius: f(radius * (1.0 + 1e-6)),
            normal: moments.normal.map(f).into(),
            trace: f(m[0][0] + m[1][1] + m[2][2]),
            first: [
                m[0][0],
                m[1][1],
                m[2][2],
                m[0][1] + m[1][0],
                m[0][2] + m[2][0],
                m[1][2] + m[2][1],
            ]
            .map(f),
            contracted: contracted.map(f),
            cubic: cubic.map(f),
        }
    }

    /// The group's solid angle at `p` (times 4π, the winding number), from the expansion
    /// about the centre: with `y = c − p`, `r = |y|` and `G(y) = y/r³`, the integrand
    /// `G(y + δ)·n` to second order in `δ` integrates to
    /// `G·N + ∂_i G_k M_ik + ½ ∂_i ∂_j G_k T_ijk`, where
    /// `∂_i G_k = δ_ik/r³ − 3 y_i y_k/r⁵` and
    /// `∂_i ∂_j G_k = −3 (δ_ik y_j + δ_ij y_k + δ_jk y_i)/r⁵ + 15 y_i y_j y_k/r⁷`.
    /// Accurate when `p` is well outside the radius (the error falls as `(radius/r)³`). The
    /// definition [`FarFieldLanes::far_sum`] computes for eight lanes (tests compare them).
    #[cfg(test)]
    pub fn solid_angle(&self, p: [f64; 3]) -> f64 {
        let g = |v: [f32; 3]| [v[0] as f64, v[1] as f64, v[2] as f64];
        let c = g(self.centre);
        let y = [c[0] - p[0], c[1] - p[1], c[2] - p[2]];
        let dot = |v: [f32; 3]| y[0] * v[0] as f64 + y[1] * v[1] as f64 + y[2] * v[2] as f64;
        let r2 = y[0] * y[0] + y[1] * y[1] + y[2] * y[2];
        let inv_r2 = 1.0 / r2;
        let inv_r3 = inv_r2 * inv_r2.sqrt();
        let inv_r5 = inv_r3 * inv_r2;
        let inv_r7 = inv_r5 * inv_r2;
        let [xx, yy, zz, xy, xz, yz] = self.first.map(|v| v as f64);
        let quadratic = xx * y[0] * y[0]
            + yy * y[1] * y[1]
            + zz * y[2] * y[2]
            + xy * y[0] * y[1]
            + xz * y[0] * y[2]
            + yz * y[1] * y[2];
        let k = self.cubic.map(|v| v as f64);
        let (x, yv, z) = (y[0], y[1], y[2]);
        let cubic = k[0] * x * x * x
            + k[1] * yv * yv * yv
            + k[2] * z * z * z
            + k[3] * x * x * yv
            + k[4] * x * x * z
            + k[5] * x * yv * yv
            + k[6] * yv * yv * z
            + k[7] * x * z * z
            + k[8] * yv * z * z
            + k[9] * x * yv * z;
        let zeroth = dot(self.normal) * inv_r3;
        let first = self.trace as f64 * inv_r3 - 3.0 * quadratic * inv_r5;
        let second = 0.5 * (-3.0 * dot(self.contracted) * inv_r5 + 15.0 * cubic * inv_r7);
        zeroth + first + second
    }
}

/// The summed solid angles at `p` of the first `used` of four triangles whose corners are
/// given by axis, then lane (a tree leaf's packet): [`solid_angle`] four at a time, in
/// `f64`, with the vectorized `atan2` of the `wide` crate (Cephes' rational approximation,
/// within an ulp or two of the scalar one). And whether `p` lies on one of them (in its
/// plane and not outside it: `a·(b × c) = 0` with the denominator not positive, or on a
/// corner), where the winding number is not defined.
pub(crate) fn solid_angles_x4(
    p: [f64; 3],
    a: &[[f32; 4]; 3],
    b: &[[f32; 4]; 3],
    c: &[[f32; 4]; 3],
    used: usize,
) -> (f64, bool) {
    let rel = |q: &[[f32; 4]; 3], axis: usize| {
        f64x4::from(q[axis].map(f64::from)) - f64x4::splat(p[axis])
    };
    let (ax, ay, az) = (rel(a, 0), rel(a, 1), rel(a, 2));
    let (bx, by, bz) = (rel(b, 0), rel(b, 1), rel(b, 2));
    let (cx, cy, cz) = (rel(c, 0), rel(c, 1), rel(c, 2));
    let la = (ax * ax + ay * ay + az * az).sqrt();
    let lb = (bx * bx + by * by + bz * bz).sqrt();
    let lc = (cx * cx + cy * cy + cz * cz).sqrt();
    let numerator = ax * (by * cz - bz * cy) + ay * (bz * cx - bx * cz) + az * (bx * cy - by * cx);
    let ab = ax * bx + ay * by + az * bz;
    let ac = ax * cx + ay * cy + az * cz;
    let bc = bx * cx + by * cy + bz * cz;
    let denominator = la * lb * lc + ab * lc + ac * lb + bc * la;
    let half = numerator.atan2(denominator).to_array();
    let (numerator, denominator) = (numerator.to_array(), denominator.to_array());
    let (mut sum, mut on) = (0.0, false);
    for lane in 0..used {
        // A point on a corner gives 0/0: that triangle subtends nothing there (as the scalar
        // atan2(0, 0) = 0 says).
        if half[lane].is_nan() {
            on = true;
        } else {
            sum += 2.0 * half[lane];
            on |= numerator[lane] == 0.0 && denominator[lane] <= 0.0;
        }
    }
    (sum, on)
}

/// The far-field terms of a wide node's eight lanes, by field, then lane: what
/// [`FarFieldLanes::far_sum`] reads four lanes at a time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct FarFieldLanes {
    centre: [[f32; 8]; 3],
    radius: [f32; 8],
    normal: [[f32; 8]; 3],
    trace: [f32; 8],
    first: [[f32; 8]; 6],
    contracted: [[f32; 8]; 3],
    cubic: [[f32; 8]; 10],
}

impl FarFieldLanes {
    /// Lanes `k` of `lanes`.
    pub fn new(lanes: &[FarField; 8]) -> FarFieldLanes {
        let mut out = FarFieldLanes::default();
        for (k, f) in lanes.iter().enumerate() {
            for a in 0..3 {
                out.centre[a][k] = f.centre[a];
                out.normal[a][k] = f.normal[a];
                out.contracted[a][k] = f.contracted[a];
            }
            out.radius[k] = f.radius;
            out.trace[k] = f.trace;
            for j in 0..6 {
                out.first[j][k] = f.first[j];
            }
            for j in 0..10 {
                out.cubic[j][k] = f.cubic[j];
            }
        }
        out
    }

    /// The summed solid angles at `p` of the lanes in `used` (a bit each) whose centre is
    /// farther than `beta · radius` (`beta_squared` given), from their expansions
    /// ([`FarField::solid_angle`]); and a bit for each used lane that is not, to be opened.
    pub fn far_sum(&self, p: [f64; 3], beta_squared: f64, used: u32) -> (f64, u32) {
        let mut sum = 0.0;
        let mut near = 0;
        for half in 0..2 {
            let lanes = (used >> (4 * half)) & 0xF;
            if lanes == 0 {
                continue;
            }
            let load = |v: &[f32; 8]| {
                let q: [f32; 4] = v[4 * half..4 * half + 4].try_into().expect("four lanes");
                f64x4::from(q.map(f64::from))
            };
            let y = [0, 1, 2].map(|a| load(&self.centre[a]) - f64x4::splat(p[a]));
            let r2 = y[0] * y[0] + y[1] * y[1] + y[2] * y[2];
            let radius = load(&self.radius);
            let far_mask = r2
                .simd_gt(f64x4::splat(beta_squared) * radius * radius)
                .to_bitmask()
                & lanes;
            near |= (lanes & !far_mask) << (4 * half);
            if far_mask == 0 {
                continue;
            }
            let inv_r2 = f64x4::ONE / r2;
            let inv_r3 = inv_r2 * inv_r2.sqrt();
            let inv_r5 = inv_r3 * inv_r2;
            let inv_r7 = inv_r5 * inv_r2;
            let dot =
                |v: &[[f32; 8]; 3]| y[0] * load(&v[0]) + y[1] * load(&v[1]) + y[2] * load(&v[2]);
            let m = |j: usize| load(&self.first[j]);
            let quadratic = m(0) * y[0] * y[0]
                + m(1) * y[1] * y[1]
                + m(2) * y[2] * y[2]
                + m(3) * y[0] * y[1]
                + m(4) * y[0] * y[2]
                + m(5) * y[1] * y[2];
            let k = |j: usize| load(&self.cubic[j]);
            let (x, yv, z) = (y[0], y[1], y[2]);
            let cubic = k(0) * x * x * x
                + k(1) * yv * yv * yv
                + k(2) * z * z * z
                + k(3) * x * x * yv
                + k(4) * x * x * z
                + k(5) * x * yv * yv
                + k(6) * yv * yv * z
                + k(7) * x * z * z
                + k(8) * yv * z * z
                + k(9) * x * yv * z;
            let zeroth = dot(&self.normal) * inv_r3;
            let first = load(&self.trace) * inv_r3 - f64x4::splat(3.0) * quadratic * inv_r5;
            let second = f64x4::splat(0.5)
                * (f64x4::splat(-3.0) * dot(&self.contracted) * inv_r5
                    + f64x4::splat(15.0) * cubic * inv_r7);
            let total = (zeroth + first + second).to_array();
            for (lane, value) in total.iter().enumerate() {
                if far_mask & (1 << lane) != 0 {
                    sum += value;
                }
            }
        }
        (sum, near)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::splitmix::SplitMix64;
    use std::f64::consts::PI;

    /// The octahedron with unit corners, outward-facing.
    fn octahedron() -> Vec<[[f32; 3]; 3]> {
        let mut faces = Vec::new();
        for sx in [1.0f32, -1.0] {
            for sy in [1.0f32, -1.0] {
                for sz in [1.0f32, -1.0] {
                    let (a, b, c) = ([sx, 0.0, 0.0], [0.0, sy, 0.0], [0.0, 0.0, sz]);
                    // Outward: (b − a) × (c − a) points along (sx, sy, sz) when the signs'
                    // product is positive; swap otherwise.
                    if sx * sy * sz > 0.0 {
                        faces.push([a, b, c]);
                    } else {
                        faces.push([a, c, b]);
                    }
                }
            }
        }
        faces
    }

    fn winding(faces: &[[[f32; 3]; 3]], p: [f64; 3]) -> f64 {
        faces
            .iter()
            .map(|f| solid_angle(p, f[0], f[1], f[2]))
            .sum::<f64>()
            / (4.0 * PI)
    }

    #[test]
    fn a_closed_mesh_winds_once_around_points_inside_and_not_at_all_around_points_outside() {
        let faces = octahedron();
        for p in [[0.0, 0.0, 0.0], [0.3, -0.2, 0.1], [-0.4, 0.3, -0.25]] {
            assert!((winding(&faces, p) - 1.0).abs() < 1e-12, "{p:?}");
        }
        for p in [[2.0, 0.0, 0.0], [0.6, 0.6, 0.6], [-5.0, 3.0, 1.0]] {
            assert!(winding(&faces, p).abs() < 1e-12, "{p:?}");
        }
        // Seen from a corner's far side, one face subtends exactly an eighth of the sphere.
        let o = octahedron()[0];
        assert!((solid_angle([0.0; 3], o[0], o[1], o[2]) - PI / 2.0).abs() < 1e-12);
        // A degenerate triangle subtends nothing.
        assert_eq!(
            solid_angle([0.0; 3], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [3.0, 0.0, 0.0]),
            0.0
        );
    }

    /// The group of `faces` about their area-weighted centroid, rounded to `f32`.
    fn far_field(faces: &[[[f32; 3]; 3]]) -> FarField {
        let origin = Vector3::zeros();
        let mut total = Moments::default();
        let (mut weighted, mut area) = (Vector3::zeros(), 0.0);
        for f in faces {
            let m = Moments::of_triangle(origin, f[0], f[1], f[2]);
            let centroid = (0..3).fold(Vector3::zeros(), |s, v| {
                s + Vector3::new(f[v][0] as f64, f[v][1] as f64, f[v][2] as f64)
            }) / 3.0;
            weighted += centroid * m.area;
            area += m.area;
        }
        let centre = (weighted / area).map(|v| v as f32 as f64);
        total.centre = centre;
        let mut radius: f64 = 0.0;
        for f in faces {
            // Half built about the origin and moved, half built in place: both must agree.
            let m = Moments::of_triangle(origin, f[0], f[1], f[2]).moved_to(centre);
            total.add(&m);
            for v in f {
                let v = Vector3::new(v[0] as f64, v[1] as f64, v[2] as f64);
                radius = radius.max((v - centre).norm());
            }
        }
        let mut direct = Moments {
            centre,
            ..Moments::default()
        };
        for f in faces {
            direct.add(&Moments::of_triangle(centre, f[0], f[1], f[2]));
        }
        assert!((direct.second[0][1][2] - total.second[0][1][2]).abs() < 1e-12);
        assert!((direct.first[2][0] - total.first[2][0]).abs() < 1e-12);
        FarField::new(&total, radius)
    }

    #[test]
    fn the_far_field_expansion_converges_to_the_direct_sum_as_the_third_power_of_the_distance() {
        // A bumpy open patch: random heights over a grid, so no moment vanishes by symmetry.
        let mut rng = SplitMix64(7);
        let n = 6;
        let height: Vec<f32> = (0..(n + 1) * (n + 1))
            .map(|_| rng.unit_f64() as f32 * 0.4)
            .collect();
        let at = |i: usize, j: usize| {
            [
                i as f32 / n as f32,
                j as f32 / n as f32 + 0.1 * i as f32 / n as f32,
                height[i * (n + 1) + j],
            ]
        };
        let mut faces = Vec::new();
        for i in 0..n {
            for j in 0..n {
                faces.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
                faces.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
            }
        }
        let far = far_field(&faces);
        let c = far.centre.map(|v| v as f64);
        let mut previous = f64::INFINITY;
        for distance in [2.0, 4.0, 8.0, 16.0] {
            let mut worst: f64 = 0.0;
            for _ in 0..64 {
                let d = Vector3::new(
                    rng.unit_f64() - 0.5,
                    rng.unit_f64() - 0.5,
                    rng.unit_f64() - 0.5,
                )
                .normalize()
                    * distance
                    * far.radius as f64;
                let p = [c[0] + d.x, c[1] + d.y, c[2] + d.z];
                let exact = winding(&faces, p);
                let approximate = far.solid_angle(p) / (4.0 * PI);
                // Relative to the group's apparent size, the solid angle's own scale.
                let scale = {
                    let n = far.normal.map(|v| v as f64);
                    (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt() / (d.norm_squared() * 4.0 * PI)
                };
                worst = worst.max((approximate - exact).abs() / scale);
            }
            // Halving the ratio radius/distance cuts the relative error about 2³ = 8 times.
            assert!(
                worst < previous / 6.0,
                "at {distance} radii: {worst} after {previous}"
            );
            previous = worst;
        }
        assert!(previous < 1e-3, "{previous}");
    }

    #[test]
    fn the_vector_sums_equal_the_scalar_definitions() {
        let mut rng = SplitMix64(21);
        let mut coordinate = || (rng.unit_f64() * 4.0 - 2.0) as f32;
        for _ in 0..200 {
            let mut a = [[0.0f32; 4]; 3];
            let (mut b, mut c) = (a, a);
            for axis in 0..3 {
                for lane in 0..4 {
                    a[axis][lane] = coordinate();
                    b[axis][lane] = coordinate();
                    c[axis][lane] = coordinate();
                }
            }
            let p = [coordinate(), coordinate(), coordinate()].map(f64::from);
            let corner = |q: &[[f32; 4]; 3], lane: usize| [q[0][lane], q[1][lane], q[2][lane]];
            for used in 0..=4 {
                let scalar: f64 = (0..used)
                    .map(|l| solid_angle(p, corner(&a, l), corner(&b, l), corner(&c, l)))
                    .sum();
                let (vector, on) = solid_angles_x4(p, &a, &b, &c, used);
                assert!(!on);
                assert!((scalar - vector).abs() < 1e-12, "{scalar} vs {vector}");
            }
            // A point on a corner: that triangle subtends nothing.
            let on = corner(&a, 0).map(f64::from);
            assert_eq!(solid_angles_x4(on, &a, &b, &c, 1), (0.0, true));
        }
        // In a triangle's plane: on it (inside, on an edge) or beside it.
        let flat = |x: [f32; 3]| [[x[0]; 4], [x[1]; 4], [x[2]; 4]];
        let (a, b, c) = (
            flat([0.0, 0.0, 0.0]),
            flat([1.0, 0.0, 0.0]),
            flat([0.0, 1.0, 0.0]),
        );
        assert!(solid_angles_x4([0.25, 0.25, 0.0], &a, &b, &c, 1).1);
        assert!(solid_angles_x4([0.5, 0.0, 0.0], &a, &b, &c, 1).1);
        assert!(!solid_angles_x4([2.0, 2.0, 0.0], &a, &b, &c, 1).1);
        assert!(!solid_angles_x4([0.25, 0.25, 1e-30], &a, &b, &c, 1).1);
        // Eight groups' expansions against the scalar one, near and far lanes mixed.
        let mut faces = octahedron();
        faces.truncate(5);
        let one = far_field(&faces);
        let mut lanes = [one; 8];
        for (k, lane) in lanes.iter_mut().enumerate() {
            lane.centre[0] += k as f32 * 3.0;
        }
        let packed = FarFieldLanes::new(&lanes);
        let p = [3.2, 0.3, 0.2];
        let (sum, near) = packed.far_sum(p, 4.0, 0b1011_0111);
        let mut expected = (0.0, 0);
        for (k, lane) in lanes.iter().enumerate() {
            if 0b1011_0111 & (1 << k) == 0 {
                continue;
            }
            let c = lane.centre.map(f64::from);
            let d2: f64 = (0..3).map(|a| (c[a] - p[a]).powi(2)).sum();
            if d2 > 4.0 * f64::from(lane.radius).powi(2) {
                expected.0 += lane.solid_angle(p);
            } else {
                expected.1 |= 1 << k;
            }
        }
        assert_eq!(near, expected.1);
        assert!(
            near != 0 && near != 0b1011_0111,
            "both kinds of lane: {near:b}"
        );
        assert!((sum - expected.0).abs() < 1e-12 * expected.0.abs().max(1.0));
    }
}
