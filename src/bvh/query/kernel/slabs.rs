//! The slab test of a node's eight boxes in the portable twin ([`lane_slabs`], [`entered`]),
//! with the ray as it wants it ([`WideRay`]), the boxes grown by a moving shape's reach
//! ([`Grow`]), and how far every walk widens a box's exit ([`EXIT_SLACK`]).

use crate::aabb::RaySlabs;
use crate::bvh::wide::WIDTH;

/// Eight boxes' coordinates on one axis, one lane each.
pub(crate) type BoxLanes = ::wide::f32x8;

/// How far (relative) the walk widens each box's exit before comparing it with the entry.
///
/// The slab test's `t` values and the triangle test's `t` are rounded differently, so a
/// triangle lying on its box's face can hit at a `t` a few ulps before the box's computed
/// entry. With a closer hit already found at a `t` in between, the exact comparison would cull
/// that box and lose the closer triangle (seen on the coplanar overlapping triangles of the
/// conference room). Widening by 2^-20 (8 ulps), as conservative traversal does (Ize 2013),
/// keeps such boxes; the triangle test still uses the exact range, so answers stay those of a
/// brute force.
pub(crate) const EXIT_SLACK: f32 = 1.0 / (1u32 << 20) as f32;

#[inline(always)]
pub(crate) fn widened(far: f32) -> f32 {
    far + far.abs() * EXIT_SLACK
}

/// How far each box grows before the slab test: to `[min − below, max + above]`. A moving
/// shape's reach (a sweep walks the boxes its path can reach as a ray walks boxes); nothing
/// for a ray.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Grow {
    pub below: [f32; 3],
    pub above: [f32; 3],
}

impl Grow {
    /// No growth: a ray's walk.
    pub(crate) const NONE: Grow = Grow {
        below: [0.0; 3],
        above: [0.0; 3],
    };

    /// Where the ray's origin moves for the planes it meets first (`near`) and last on axis
    /// `a` of a box so grown: a plane `min − below` met from `o` is `min` met from
    /// `o + below`, and `max + above` is `max` met from `o − above`. Both are `o` itself
    /// for [`Grow::NONE`].
    #[inline(always)]
    pub(crate) fn origins(&self, origin: f32, a: usize, negative: bool) -> (f32, f32) {
        let (from_min, from_max) = (origin + self.below[a], origin - self.above[a]);
        if *self == Grow::NONE {
            (origin, origin)
        } else if negative {
            (from_max, from_min)
        } else {
            (from_min, from_max)
        }
    }
}

/// The ray as the wide slab test wants it: the origin for the planes it meets first and for
/// those it meets last on each axis (the same point but for a [`Grow`]n walk), and the
/// inverse direction, splatted.
pub(crate) struct WideRay {
    pub near_origin: [BoxLanes; 3],
    pub far_origin: [BoxLanes; 3],
    pub inv_direction: [BoxLanes; 3],
    pub negative: [bool; 3],
}

impl WideRay {
    /// The direction's sign bits: bit `a` set when it is negative on axis `a` (which of the
    /// AVX2 walk's per-octant kernels runs, and which order the ray tree's walks follow).
    #[inline(always)]
    pub(crate) fn octant(&self) -> u8 {
        self.negative
            .iter()
            .enumerate()
            .fold(0, |bits, (a, &n)| bits | (u8::from(n) << a))
    }

    /// The ray's lanes, its boxes grown by `grow`.
    pub(crate) fn new(ray: &RaySlabs, grow: &Grow) -> WideRay {
        // Element by element: `array::map` went through an out-of-line `try_map` per call.
        let (o, inv, n) = (&ray.origin, &ray.inv_direction, &ray.negative);
        let (x, y, z) = (
            grow.origins(o[0], 0, n[0]),
            grow.origins(o[1], 1, n[1]),
            grow.origins(o[2], 2, n[2]),
        );
        WideRay {
            near_origin: [
                BoxLanes::splat(x.0),
                BoxLanes::splat(y.0),
                BoxLanes::splat(z.0),
            ],
            far_origin: [
                BoxLanes::splat(x.1),
                BoxLanes::splat(y.1),
                BoxLanes::splat(z.1),
            ],
            inv_direction: [
                BoxLanes::splat(inv[0]),
                BoxLanes::splat(inv[1]),
                BoxLanes::splat(inv[2]),
            ],
            negative: ray.negative,
        }
    }
}

/// `if t > bound { t } else { bound }` lane by lane: a NaN `t` keeps the bound. On x86 that
/// is exactly what `maxps(t, bound)` computes.
#[inline(always)]
pub(crate) fn raise(bound: BoxLanes, t: BoxLanes) -> BoxLanes {
    #[cfg(target_feature = "sse")]
    {
        t.fast_max(bound)
    }
    #[cfg(not(target_feature = "sse"))]
    {
        raise_portable(bound, t)
    }
}

/// `if t < bound { t } else { bound }` lane by lane (`minps(t, bound)` on x86).
#[inline(always)]
pub(crate) fn lower(bound: BoxLanes, t: BoxLanes) -> BoxLanes {
    #[cfg(target_feature = "sse")]
    {
        t.fast_min(bound)
    }
    #[cfg(not(target_feature = "sse"))]
    {
        lower_portable(bound, t)
    }
}

/// [`raise`] without x86's `maxps` (WebAssembly, ARM): a compare and a select. Compiled in
/// tests everywhere, so x86 checks it against `maxps` too.
#[cfg(any(test, not(target_feature = "sse")))]
#[inline(always)]
fn raise_portable(bound: BoxLanes, t: BoxLanes) -> BoxLanes {
    t.simd_gt(bound).bitselect(t, bound)
}

/// [`lower`] without x86's `minps`.
#[cfg(any(test, not(target_feature = "sse")))]
#[inline(always)]
fn lower_portable(bound: BoxLanes, t: BoxLanes) -> BoxLanes {
    t.simd_lt(bound).bitselect(t, bound)
}

/// The entries and exits (not yet widened) of eight boxes given as rows of corners (`min`,
/// `max`: x, y, z), clamped to `t_min..t_max`: the
/// node visit of the ray walk's portable twin.
#[inline(always)]
pub(crate) fn lane_slabs(
    min: &[[f32; WIDTH]; 3],
    max: &[[f32; WIDTH]; 3],
    ray: &WideRay,
    t_min: f32,
    t_max: f32,
) -> (BoxLanes, BoxLanes) {
    let mut near = BoxLanes::splat(t_min);
    let mut far = BoxLanes::splat(t_max);
    for a in 0..3 {
        let (lo, hi) = if ray.negative[a] {
            (max[a], min[a])
        } else {
            (min[a], max[a])
        };
        let (lo, hi) = (BoxLanes::from(lo), BoxLanes::from(hi));
        (near, far) = slab_axis(
            (near, far),
            (lo, hi),
            (ray.near_origin[a], ray.far_origin[a]),
            ray.inv_direction[a],
        );
    }
    (near, far)
}

/// One axis of the slab test, lane by lane: `near` raised to the entry `(lo − o)·inv` and
/// `far` lowered to the exit `(hi − o')·inv` (`lo`, `hi` the planes the ray meets first and
/// last, `o`, `o'` the origins it meets them from: [`WideRay`]), as
/// [`slab_interval`](crate::aabb::slab_interval) rounds it.
#[inline(always)]
pub(crate) fn slab_axis(
    (near, far): (BoxLanes, BoxLanes),
    (lo, hi): (BoxLanes, BoxLanes),
    (near_origin, far_origin): (BoxLanes, BoxLanes),
    inv_direction: BoxLanes,
) -> (BoxLanes, BoxLanes) {
    let t0 = (lo - near_origin) * inv_direction;
    let t1 = (hi - far_origin) * inv_direction;
    (raise(near, t0), lower(far, t1))
}

/// A bit per lane whose entry `near` is no later than its exit `far` widened by
/// [`EXIT_SLACK`].
#[inline(always)]
pub(crate) fn entered(near: BoxLanes, far: BoxLanes) -> u32 {
    let far = far + far.abs() * BoxLanes::splat(EXIT_SLACK);
    near.simd_le(far).to_bitmask()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The portable min and max (what WebAssembly and ARM run) give the same bits as x86's,
    /// NaN lanes and signed zeros included: a NaN `t` keeps the bound, ties keep the bound.
    #[test]
    fn portable_raise_and_lower_equal_the_x86_ones() {
        let special = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            3.5e-39,
            1e30,
        ];
        let mut checked = 0;
        for (i, &a) in special.iter().enumerate() {
            for &b in &special {
                let bound = BoxLanes::from([a, b, a, b, -a, -b, b, a]);
                let t = BoxLanes::from([b, a, special[(i + 3) % 10], b, a, -b, -a, b]);
                let bits = |x: BoxLanes| x.to_array().map(f32::to_bits);
                assert_eq!(
                    bits(raise(bound, t)),
                    bits(raise_portable(bound, t)),
                    "{a} {b}"
                );
                assert_eq!(
                    bits(lower(bound, t)),
                    bits(lower_portable(bound, t)),
                    "{a} {b}"
                );
                checked += 1;
            }
        }
        assert_eq!(checked, 100);
    }
}
