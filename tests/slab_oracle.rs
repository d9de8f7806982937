//! An independent oracle for `Aabb::intersect_ray`: the near-face method, in f64.
//!
//! A ray (origin `o`, direction `d`, range `[t_min, t_max]`) meets a closed box iff the point
//! `o + t_min·d` lies inside the box, or the ray enters through one of the (at most three)
//! faces it can enter through: for each axis `a` with `d[a] != 0`, the face `x[a] = min[a]`
//! when `d[a] > 0`, else `x[a] = max[a]`, crossed at `t = (plane − o[a]) / d[a]`; it enters
//! there iff `t` is in the range and the crossing point lies in the face's rectangle. None of
//! this uses meshray's slab code.
//!
//! The random test compares hit/miss on millions of box/ray pairs. The slab test runs in f32,
//! so where the exact answer changes under a perturbation of the box planes of the size of
//! f32 rounding, either answer is acceptable: such cases are counted as ambiguous and
//! skipped (and the count must stay tiny). Everywhere else the answers must agree exactly,
//! and a hit's interval must lie between the intervals of the perturbed boxes.

mod common;

use meshray::Ray;
use meshray::geometry::Aabb;
use nalgebra::{Point3, Vector3};

// ---------------------------------------------------------------------------------------
// The oracle
// ---------------------------------------------------------------------------------------

/// A closed box in f64.
#[derive(Clone, Copy, Debug)]
struct Box64 {
    min: [f64; 3],
    max: [f64; 3],
}

/// Coordinate `axis` of the ray's point at `t`; exact for a zero direction component (so an
/// infinite `t` gives the origin's coordinate, not `0 · inf = NaN`).
fn coordinate(o: &[f64; 3], d: &[f64; 3], t: f64, axis: usize) -> f64 {
    if d[axis] == 0.0 {
        o[axis]
    } else {
        o[axis] + t * d[axis]
    }
}

fn within(lo: f64, x: f64, hi: f64) -> bool {
    lo <= x && x <= hi
}

/// The near-face method: the parameter where the ray first is in the box, or `None` when it
/// never is. Any NaN input makes every comparison false: never a hit.
fn near_face_entry(b: &Box64, o: &[f64; 3], d: &[f64; 3], t_min: f64, t_max: f64) -> Option<f64> {
    // An empty or NaN range holds no point (the point check below would not see a NaN
    // `t_max`).
    if t_min.is_nan() || t_max.is_nan() || t_min > t_max {
        return None;
    }
    if (0..3).all(|a| within(b.min[a], coordinate(o, d, t_min, a), b.max[a])) {
        return Some(t_min);
    }
    let mut entry: Option<f64> = None;
    for a in 0..3 {
        if d[a] == 0.0 {
            continue;
        }
        let plane = if d[a] > 0.0 { b.min[a] } else { b.max[a] };
        let t = (plane - o[a]) / d[a];
        if !within(t_min, t, t_max) {
            continue;
        }
        let in_face = (0..3)
            .filter(|&c| c != a)
            .all(|c| within(b.min[c], coordinate(o, d, t, c), b.max[c]));
        if in_face {
            entry = Some(entry.map_or(t, |e| e.min(t)));
        }
    }
    entry
}

/// The parameter where the ray last is in the box: the entry of the reversed ray.
fn near_face_exit(b: &Box64, o: &[f64; 3], d: &[f64; 3], t_min: f64, t_max: f64) -> Option<f64> {
    let reversed = [-d[0], -d[1], -d[2]];
    near_face_entry(b, o, &reversed, -t_max, -t_min).map(|s| -s)
}

// ---------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------

/// One box and one ray, as meshray sees them (f32).
#[derive(Clone, Copy, Debug)]
struct Case {
    min: [f32; 3],
    max: [f32; 3],
    origin: [f32; 3],
    direction: [f32; 3],
    t_min: f32,
    t_max: f32,
}

impl Case {
    fn aabb(&self) -> Aabb {
        Aabb::new(Point3::from(self.min), Point3::from(self.max))
    }

    fn ray(&self) -> Ray {
        Ray::with_range(
            Point3::from(self.origin),
            Vector3::from(self.direction),
            self.t_min,
            self.t_max,
        )
    }

    fn box64(&self) -> Box64 {
        Box64 {
            min: self.min.map(f64::from),
            max: self.max.map(f64::from),
        }
    }

    fn o(&self) -> [f64; 3] {
        self.origin.map(f64::from)
    }

    fn d(&self) -> [f64; 3] {
        self.direction.map(f64::from)
    }

    fn oracle_entry(&self, b: &Box64) -> Option<f64> {
        near_face_entry(
            b,
            &self.o(),
            &self.d(),
            self.t_min.into(),
            self.t_max.into(),
        )
    }

    fn oracle_exit(&self, b: &Box64) -> Option<f64> {
        near_face_exit(
            b,
            &self.o(),
            &self.d(),
            self.t_min.into(),
            self.t_max.into(),
        )
    }

    /// How far a box plane may move to account for the slab test's f32 rounding: computing
    /// `(plane − o) · (1/d)` in f32 is exact up to a few ulps of `|plane| + |o|` in plane
    /// units (the margin is over 5× that), plus a relative 1e-5 of the box's size.
    fn margin(&self) -> f64 {
        let size = (0..3)
            .map(|a| f64::from(self.max[a]) - f64::from(self.min[a]))
            .fold(0.0, f64::max);
        let magnitude = self
            .min
            .iter()
            .chain(&self.max)
            .chain(&self.origin)
            .map(|c| f64::from(c.abs()))
            .fold(0.0, f64::max);
        1e-5 * size + 1e-6 * (1.0 + magnitude)
    }

    /// How far each plane may move. A plane on an axis where the direction is ±0 does not
    /// move: there the slab test only looks at the sign of `plane − o`, which f32 gets right.
    /// Nor does a plane through the origin: `plane − o` is then exactly 0, and so is its `t`.
    fn plane_margins(&self) -> [[f64; 2]; 3] {
        let m = self.margin();
        std::array::from_fn(|a| {
            let moves = |plane: f32| {
                if self.direction[a] == 0.0 || plane == self.origin[a] {
                    0.0
                } else {
                    m
                }
            };
            [moves(self.min[a]), moves(self.max[a])]
        })
    }

    /// The box with every plane moved outwards.
    fn grown(&self) -> Box64 {
        let b = self.box64();
        let m = self.plane_margins();
        Box64 {
            min: std::array::from_fn(|a| b.min[a] - m[a][0]),
            max: std::array::from_fn(|a| b.max[a] + m[a][1]),
        }
    }

    /// The smallest boxes among those with each plane moved by up to its margin: the box
    /// with every plane moved inwards, except on an axis too thin for that, where the
    /// smallest boxes are flat plates anywhere in `[max − m, min + m]`. The set of boxes a
    /// ray hits is convex in the planes and closed under growing, so a ray that hits the
    /// plates at both ends of that range (on every thin axis) hits every perturbed box.
    fn smallest(&self) -> Vec<Box64> {
        let b = self.box64();
        let m = self.plane_margins();
        let choices: [Vec<(f64, f64)>; 3] = std::array::from_fn(|a| {
            let lo = b.min[a] + m[a][0];
            let hi = b.max[a] - m[a][1];
            if lo <= hi {
                vec![(lo, hi)]
            } else {
                vec![(hi, hi), (lo, lo)]
            }
        });
        let mut boxes = Vec::with_capacity(8);
        for &(x0, x1) in &choices[0] {
            for &(y0, y1) in &choices[1] {
                for &(z0, z1) in &choices[2] {
                    boxes.push(Box64 {
                        min: [x0, y0, z0],
                        max: [x1, y1, z1],
                    });
                }
            }
        }
        boxes
    }
}

// ---------------------------------------------------------------------------------------
// A deterministic random source
// ---------------------------------------------------------------------------------------

/// The tests' splitmix64 ([`common::Rng`]) drawing the f64 values these cases need.
struct SplitMix64(common::Rng);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    fn signed_zero(&mut self) -> f64 {
        if self.chance(0.5) { 0.0 } else { -0.0 }
    }
}

/// Which kinds of cases were generated.
#[derive(Default, Debug)]
struct Mix {
    flat_box: usize,
    origin_inside: usize,
    one_zero_component: usize,
    two_zero_components: usize,
    origin_in_face_plane_of_zero_axis: usize,
    origin_on_face_plane_of_moving_axis: usize,
    negative_t_min: usize,
    infinite_t_min: usize,
    finite_t_max: usize,
}

fn random_case(rng: &mut SplitMix64, mix: &mut Mix) -> Case {
    loop {
        // The box: centre in [-10, 10]³, sides from 0.1 to 10, sometimes flat on one axis.
        let flat_axis = rng.chance(0.15).then(|| rng.below(3));
        let mut min = [0f32; 3];
        let mut max = [0f32; 3];
        for a in 0..3 {
            let centre = rng.range(-10.0, 10.0);
            let side = 10f64.powf(rng.range(-1.0, 1.0));
            min[a] = (centre - side / 2.0) as f32;
            max[a] = if flat_axis == Some(a) {
                min[a]
            } else {
                (centre + side / 2.0) as f32
            };
        }
        let lo = min.map(f64::from);
        let size: [f64; 3] = std::array::from_fn(|a| f64::from(max[a]) - lo[a]);
        let big = size.iter().copied().fold(0.0, f64::max);

        // A target in the box grown by 30% of its largest side (about half the rays hit).
        let target: [f64; 3] = std::array::from_fn(|a| {
            if size[a] == 0.0 {
                lo[a]
            } else {
                lo[a] - 0.3 * big + rng.unit() * (size[a] + 0.6 * big)
            }
        });

        let inside = rng.chance(0.15);
        let mut origin = [0f64; 3];
        let mut direction = [0f64; 3];
        if inside {
            for a in 0..3 {
                origin[a] = lo[a] + rng.unit() * size[a];
                direction[a] = rng.range(-1.0, 1.0);
            }
        } else {
            let away: [f64; 3] = std::array::from_fn(|_| rng.range(-1.0, 1.0));
            let norm = away.iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm < 0.1 {
                continue;
            }
            let distance = big * rng.range(0.5, 4.0);
            for a in 0..3 {
                origin[a] = target[a] + away[a] / norm * distance;
                direction[a] = target[a] - origin[a];
            }
        }

        // Axis-parallel rays: one or two components ±0, the origin in that slab or (often)
        // exactly in one of its planes.
        let mut zero_axes = [false; 3];
        let mut in_zero_face_plane = false;
        if rng.chance(0.3) {
            let k = 1 + rng.below(2);
            let keep = rng.below(3);
            let axes: Vec<usize> = (0..3).filter(|&a| a != keep).take(k).collect();
            for &a in &axes {
                zero_axes[a] = true;
                direction[a] = rng.signed_zero();
                if rng.chance(0.25) {
                    origin[a] = if rng.chance(0.5) {
                        min[a].into()
                    } else {
                        max[a].into()
                    };
                    in_zero_face_plane = true;
                } else if !inside {
                    origin[a] = target[a];
                }
            }
            if k == 1 {
                mix.one_zero_component += 1;
            } else {
                mix.two_zero_components += 1;
            }
        }

        // Sometimes put the origin exactly in a face plane of an axis the ray moves along.
        let mut on_moving_face_plane = false;
        if rng.chance(0.05) {
            let a = rng.below(3);
            if !zero_axes[a] {
                origin[a] = if rng.chance(0.5) {
                    min[a].into()
                } else {
                    max[a].into()
                };
                on_moving_face_plane = true;
            }
        }

        // Directions are not normalized: scale them by 1/100 to 100.
        let scale = 10f64.powf(rng.range(-2.0, 2.0));
        let direction = direction.map(|x| (x * scale) as f32);
        if direction.iter().all(|&x| x == 0.0) {
            continue;
        }
        let origin = origin.map(|x| x as f32);

        // The range, in units of the parameter of the target.
        let unit_t = 1.0 / scale;
        let r = rng.unit();
        let t_min = if r < 0.55 {
            0.0
        } else if r < 0.8 {
            -rng.range(0.0, 3.0) * unit_t
        } else if r < 0.95 {
            rng.range(0.0, 1.5) * unit_t
        } else {
            f64::NEG_INFINITY
        };
        let t_max = if rng.chance(0.5) {
            f64::INFINITY
        } else if t_min.is_finite() && rng.chance(0.03) {
            t_min
        } else {
            let start = if t_min.is_finite() { t_min } else { -unit_t };
            start + rng.range(0.0, 2.5) * unit_t
        };

        mix.flat_box += usize::from(flat_axis.is_some());
        mix.origin_inside += usize::from(inside);
        mix.origin_in_face_plane_of_zero_axis += usize::from(in_zero_face_plane);
        mix.origin_on_face_plane_of_moving_axis += usize::from(on_moving_face_plane);
        mix.negative_t_min += usize::from(t_min < 0.0 && t_min.is_finite());
        mix.infinite_t_min += usize::from(t_min.is_infinite());
        mix.finite_t_max += usize::from(t_max.is_finite());
        return Case {
            min,
            max,
            origin,
            direction,
            t_min: t_min as f32,
            t_max: t_max as f32,
        };
    }
}

// ---------------------------------------------------------------------------------------
// The comparison
// ---------------------------------------------------------------------------------------

/// What one case says.
enum Verdict {
    Agree { hit: bool },
    Ambiguous,
    Disagree(String),
}

/// The interval invariants every hit must satisfy.
fn check_interval(case: &Case, near: f32, far: f32) -> Result<(), String> {
    if near >= case.t_min && far <= case.t_max && near <= far {
        Ok(())
    } else {
        Err(format!(
            "interval ({near}, {far}) breaks t_min <= t_near <= t_far <= t_max for {case:?}"
        ))
    }
}

fn compare(case: &Case) -> Verdict {
    let got = case.aabb().intersect_ray(&case.ray());
    if let Some((near, far)) = got
        && let Err(e) = check_interval(case, near, far)
    {
        return Verdict::Disagree(e);
    }

    let grown = case.grown();
    let smallest = case.smallest();
    let robust_miss = case.oracle_entry(&grown).is_none();
    let robust_hit = smallest.iter().all(|b| case.oracle_entry(b).is_some());
    let exact = case.oracle_entry(&case.box64());
    if robust_miss {
        return match got {
            None => Verdict::Agree { hit: false },
            Some(i) => Verdict::Disagree(format!(
                "meshray hits at {i:?}, the oracle misses (exact entry {exact:?}): {case:?}"
            )),
        };
    }
    if !robust_hit {
        return Verdict::Ambiguous;
    }
    let Some((near, far)) = got else {
        return Verdict::Disagree(format!(
            "meshray misses, the oracle hits at t = {exact:?}: {case:?}"
        ));
    };

    // The grown box is entered first and left last; the smallest boxes are entered last
    // and left first. f32's t lies between.
    let slack = |t: f64| 1e-12 * (1.0 + t.abs());
    let earliest_entry = case.oracle_entry(&grown).expect("the grown box is hit");
    let latest_exit = case.oracle_exit(&grown).expect("the grown box is hit");
    let mut latest_entry = f64::NEG_INFINITY;
    let mut earliest_exit = f64::INFINITY;
    for b in &smallest {
        latest_entry = latest_entry.max(case.oracle_entry(b).expect("robust hit"));
        earliest_exit = earliest_exit.min(case.oracle_exit(b).expect("robust hit"));
    }
    let (near, far) = (f64::from(near), f64::from(far));
    let near_ok = earliest_entry - slack(earliest_entry) <= near
        && near <= latest_entry + slack(latest_entry);
    let far_ok =
        earliest_exit - slack(earliest_exit) <= far && far <= latest_exit + slack(latest_exit);
    if !(near_ok && far_ok) {
        return Verdict::Disagree(format!(
            "interval ({near}, {far}) outside the oracle's bounds: entry in \
             [{earliest_entry}, {latest_entry}], exit in [{earliest_exit}, {latest_exit}] \
             for {case:?}"
        ));
    }
    Verdict::Agree { hit: true }
}

#[test]
fn slab_test_agrees_with_the_near_face_oracle() {
    const CASES: usize = 2_000_000;
    let mut rng = SplitMix64(common::Rng::new(0x51ab_0ac1_e5ee_d001));
    let mut mix = Mix::default();
    let (mut hits, mut misses, mut ambiguous, mut disagreements) = (0usize, 0usize, 0usize, 0usize);
    let mut examples = Vec::new();
    for _ in 0..CASES {
        let case = random_case(&mut rng, &mut mix);
        match compare(&case) {
            Verdict::Agree { hit: true } => hits += 1,
            Verdict::Agree { hit: false } => misses += 1,
            Verdict::Ambiguous => ambiguous += 1,
            Verdict::Disagree(why) => {
                disagreements += 1;
                if examples.len() < 20 {
                    examples.push(why);
                }
            }
        }
    }
    println!(
        "slab oracle: {CASES} cases: {hits} hits and {misses} misses agreed, {ambiguous} \
         ambiguous (skipped, {:.4}%), {disagreements} disagreements",
        100.0 * ambiguous as f64 / CASES as f64
    );
    println!("slab oracle: case mix {mix:#?}");
    assert!(
        disagreements == 0,
        "{disagreements} disagreements with the oracle, the first ones:\n{}",
        examples.join("\n")
    );
    assert!(
        ambiguous * 1000 < CASES,
        "{ambiguous} of {CASES} cases are ambiguous (the limit is 0.1%)"
    );
    // The mix really covers what it should.
    assert!(
        hits > CASES / 4 && misses > CASES / 4,
        "{hits} hits, {misses} misses"
    );
    for (what, n) in [
        ("flat boxes", mix.flat_box),
        ("origins inside", mix.origin_inside),
        ("one zero component", mix.one_zero_component),
        ("two zero components", mix.two_zero_components),
        ("in a face plane", mix.origin_in_face_plane_of_zero_axis),
        ("on a face plane", mix.origin_on_face_plane_of_moving_axis),
        ("negative t_min", mix.negative_t_min),
        ("infinite t_min", mix.infinite_t_min),
        ("finite t_max", mix.finite_t_max),
    ] {
        assert!(n > CASES / 100, "only {n} cases with {what}");
    }
}

// ---------------------------------------------------------------------------------------
// Exact cases, where the policy matters
// ---------------------------------------------------------------------------------------

fn case(min: [f32; 3], max: [f32; 3], origin: [f32; 3], direction: [f32; 3]) -> Case {
    Case {
        min,
        max,
        origin,
        direction,
        t_min: 0.0,
        t_max: f32::INFINITY,
    }
}

const UNIT_MIN: [f32; 3] = [0.0, 0.0, 0.0];
const UNIT_MAX: [f32; 3] = [1.0, 1.0, 1.0];

/// Checks meshray and the oracle against the expected interval.
#[track_caller]
fn expect(c: Case, want: Option<(f32, f32)>) {
    let got = c.aabb().intersect_ray(&c.ray());
    assert_eq!(got, want, "meshray, {c:?}");
    let b = c.box64();
    let oracle = c.oracle_entry(&b).zip(c.oracle_exit(&b));
    let want64 = want.map(|(n, f)| (f64::from(n), f64::from(f)));
    assert_eq!(oracle, want64, "oracle, {c:?}");
}

#[test]
fn ray_in_a_face_plane_hits_the_closed_box() {
    for z in [0.0f32, -0.0] {
        // In the planes y = 0 and y = 1, crossing the face: touches from t = 1 to 2.
        for plane in [0.0, 1.0] {
            expect(
                case(UNIT_MIN, UNIT_MAX, [-1.0, plane, 0.5], [1.0, z, 0.0]),
                Some((1.0, 2.0)),
            );
            // Going the other way, from the far side.
            expect(
                case(UNIT_MIN, UNIT_MAX, [3.0, plane, 0.5], [-2.0, z, -0.0]),
                Some((1.0, 1.5)),
            );
        }
        // Along an edge (in two face planes at once) and along a diagonal of a face.
        expect(
            case(UNIT_MIN, UNIT_MAX, [-1.0, 1.0, 0.0], [1.0, z, -z]),
            Some((1.0, 2.0)),
        );
        expect(
            case(UNIT_MIN, UNIT_MAX, [2.0, 2.0, 1.0], [-1.0, -1.0, z]),
            Some((1.0, 2.0)),
        );
        // In the plane but beside the face, or parallel just outside it.
        expect(
            case(UNIT_MIN, UNIT_MAX, [-1.0, 1.0, 2.0], [1.0, z, 0.0]),
            None,
        );
        expect(
            case(
                UNIT_MIN,
                UNIT_MAX,
                [-1.0, 1.0 + f32::EPSILON, 0.5],
                [1.0, z, 0.0],
            ),
            None,
        );
        // A box that is flat on y, with the ray in its plane.
        expect(
            case(
                [0.0, 2.0, 0.0],
                [4.0, 2.0, 4.0],
                [-4.0, 2.0, 1.0],
                [2.0, z, 0.0],
            ),
            Some((2.0, 4.0)),
        );
    }
}

#[test]
fn origin_on_a_face() {
    // Going in, going out (touches at t = 0), sliding along the face.
    expect(
        case(UNIT_MIN, UNIT_MAX, [0.0, 0.5, 0.5], [1.0, 0.0, 0.0]),
        Some((0.0, 1.0)),
    );
    expect(
        case(UNIT_MIN, UNIT_MAX, [0.0, 0.5, 0.5], [-1.0, 0.0, 0.0]),
        Some((0.0, 0.0)),
    );
    expect(
        case(UNIT_MIN, UNIT_MAX, [1.0, 0.5, 0.5], [0.0, 0.0, 0.5]),
        Some((0.0, 1.0)),
    );
    expect(
        case(UNIT_MIN, UNIT_MAX, [1.0, 0.5, 0.5], [2.0, 1.0, 0.0]),
        Some((0.0, 0.0)),
    );
    // On a corner, going out diagonally: touches at t = 0.
    expect(
        case(UNIT_MIN, UNIT_MAX, [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]),
        Some((0.0, 0.0)),
    );
    // On a face, with t_min > 0 and going out: misses.
    expect(
        Case {
            t_min: 0.25,
            ..case(UNIT_MIN, UNIT_MAX, [0.0, 0.5, 0.5], [-1.0, 0.0, 0.0])
        },
        None,
    );
}

#[test]
fn signed_zero_direction_components() {
    for z in [0.0f32, -0.0] {
        for w in [0.0f32, -0.0] {
            // Inside the y and z slabs: hits from t = 1 to 2.
            expect(
                case(UNIT_MIN, UNIT_MAX, [-1.0, 0.5, 0.25], [1.0, z, w]),
                Some((1.0, 2.0)),
            );
            // Outside the y slab on either side, or the z slab: misses.
            for y in [-0.5, 1.5] {
                expect(case(UNIT_MIN, UNIT_MAX, [-1.0, y, 0.5], [1.0, z, w]), None);
            }
            expect(
                case(UNIT_MIN, UNIT_MAX, [-1.0, 0.5, -1e-30], [1.0, z, w]),
                None,
            );
            // Only z moves, origin inside: leaves through z = 0 at t = 0.5.
            expect(
                case(UNIT_MIN, UNIT_MAX, [0.5, 0.5, 0.25], [z, w, -0.5]),
                Some((0.0, 0.5)),
            );
            // Only z moves, the origin in the corner edge x = y = 0.
            expect(
                case(UNIT_MIN, UNIT_MAX, [0.0, 0.0, 3.0], [z, w, -1.0]),
                Some((2.0, 3.0)),
            );
        }
    }
}

#[test]
fn ranges_and_negative_t_min() {
    let c = case(UNIT_MIN, UNIT_MAX, [3.0, 0.5, 0.5], [1.0, 0.0, 0.0]);
    // Behind the origin: missed with t_min = 0, hit with a negative t_min.
    expect(c, None);
    expect(Case { t_min: -10.0, ..c }, Some((-3.0, -2.0)));
    expect(
        Case {
            t_min: f32::NEG_INFINITY,
            ..c
        },
        Some((-3.0, -2.0)),
    );
    expect(
        Case {
            t_min: -2.5,
            t_max: -2.25,
            ..c
        },
        Some((-2.5, -2.25)),
    );
    // An empty range that touches the box at one point.
    expect(
        Case {
            t_min: -2.0,
            t_max: -2.0,
            ..c
        },
        Some((-2.0, -2.0)),
    );
    // A range that ends just before the box.
    expect(
        Case {
            t_min: -10.0,
            t_max: -3.5,
            ..c
        },
        None,
    );
}

#[test]
fn nan_anywhere_never_hits_and_never_panics() {
    let nan = f32::NAN;
    let good = case(UNIT_MIN, UNIT_MAX, [-1.0, 0.5, 0.5], [1.0, 0.0, 0.0]);
    expect(good, Some((1.0, 2.0)));
    let mut bad = Vec::new();
    for a in 0..3 {
        let mut c = good;
        c.origin[a] = nan;
        bad.push(c);
        let mut c = good;
        c.direction[a] = nan;
        bad.push(c);
        // NaN and infinities in the origin or direction are invalid rays too.
        let mut c = good;
        c.origin[a] = f32::INFINITY;
        bad.push(c);
        let mut c = good;
        c.direction[a] = f32::NEG_INFINITY;
        bad.push(c);
    }
    bad.push(Case { t_min: nan, ..good });
    bad.push(Case { t_max: nan, ..good });
    bad.push(Case {
        t_min: nan,
        t_max: nan,
        ..good
    });
    // A NaN that the slab test would otherwise ignore: in a zero-direction axis whose
    // plane holds the origin, and in a direction component of an axis that does not matter.
    bad.push(case(UNIT_MIN, UNIT_MAX, [-1.0, 1.0, 0.5], [1.0, 0.0, nan]));
    bad.push(case(UNIT_MIN, UNIT_MAX, [nan, 0.5, 0.5], [0.0, 0.0, 1.0]));
    for c in bad {
        let result = std::panic::catch_unwind(|| c.aabb().intersect_ray(&c.ray()));
        assert!(matches!(result, Ok(None)), "{result:?} for {c:?}");
        // The oracle agrees for NaN (it is not asked about infinities).
        if c.origin.iter().chain(&c.direction).any(|x| x.is_nan())
            || c.t_min.is_nan()
            || c.t_max.is_nan()
        {
            assert_eq!(c.oracle_entry(&c.box64()), None, "oracle, {c:?}");
        }
    }
}

#[test]
fn corners_and_flat_boxes() {
    // Through the corner (1, 1, 1) only.
    expect(
        case(UNIT_MIN, UNIT_MAX, [2.0, 0.0, 2.0], [-1.0, 1.0, -1.0]),
        Some((1.0, 1.0)),
    );
    // Past a corner by a hair: misses.
    expect(
        case(
            UNIT_MIN,
            UNIT_MAX,
            [2.0, 0.0, 2.0],
            [-1.0, 1.0 + 1.0 / 1024.0, -1.0],
        ),
        None,
    );
    // A flat box is hit through its plane, from either side.
    let (lo, hi) = ([0.0, 0.0, 0.0], [1.0, 0.0, 1.0]);
    expect(
        case(lo, hi, [0.5, 1.0, 0.5], [0.0, -1.0, 0.0]),
        Some((1.0, 1.0)),
    );
    expect(
        case(lo, hi, [0.5, -2.0, 0.5], [0.0, 4.0, 0.0]),
        Some((0.5, 0.5)),
    );
    // A box that is a single point.
    let p = [0.25, 0.5, 0.75];
    expect(
        case(p, p, [0.25, 0.5, -1.0], [0.0, 0.0, 0.5]),
        Some((3.5, 3.5)),
    );
    expect(case(p, p, [0.25, 0.5, -1.0], [0.0, 1e-3, 0.5]), None);
}
