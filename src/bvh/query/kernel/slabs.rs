//! What the slab test of a node's eight boxes shares between the walks: how far it widens a
//! box's exit ([`EXIT_SLACK`]), the boxes grown by a moving shape's reach ([`Grow`]), and the
//! portable lanes' minimum and maximum with x86's rule for `NaN` ([`raise`], [`lower`]).

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
