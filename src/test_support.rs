//! Helpers shared by the unit tests.

use crate::splitmix::SplitMix64;
use nalgebra::Point3;

/// The unit tests' one generator: the library's SplitMix64 with the draws tests want.
pub(crate) struct Rng(SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64(seed))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in `[0, 1)`, 24 bits.
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Uniform in `[lo, hi)`.
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }

    /// Uniform in `0..n` (`n` small: the modulo's bias is negligible for tests).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
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
