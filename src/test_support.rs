//! Helpers shared by the unit tests.

use nalgebra::Point3;

/// A seeded linear congruential generator: `uniform(lo, hi)` gives the same sequence for the
/// same seed on every machine.
pub(crate) struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Lcg {
        Lcg(seed)
    }

    /// Uniform in `[lo, hi)`.
    pub fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        lo + ((self.0 >> 40) as f32 / (1u64 << 24) as f32) * (hi - lo)
    }
}

/// Shorthand for a point.
pub(crate) fn p(x: f32, y: f32, z: f32) -> Point3<f32> {
    Point3::new(x, y, z)
}

/// The triangle (0,0,0), (1,0,0), (0,1,0): its front face looks up +z.
pub(crate) fn unit_triangle() -> [Point3<f32>; 3] {
    [p(0.0, 0.0, 0.0), p(1.0, 0.0, 0.0), p(0.0, 1.0, 0.0)]
}
