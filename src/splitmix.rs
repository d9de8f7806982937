//! SplitMix64 (Steele, Lea and Flood 2014): a small seeded generator, the same sequence for
//! the same seed on every machine. The library draws [`diagnostics::measured_cost`]'s standard rays
//! from it, and the unit tests their inputs.
//!
//! [`diagnostics::measured_cost`]: crate::diagnostics::measured_cost

/// The generator's state.
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`, 53 bits.
    pub(crate) fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}
