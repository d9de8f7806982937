//! What the slab test of a node's eight boxes shares between the walks and the queries that
//! grow it: how far it widens a box's exit ([`EXIT_SLACK`]), and the boxes grown by a moving
//! shape's reach ([`Grow`]).

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
