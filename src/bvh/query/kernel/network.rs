//! The order of a node's entered children where no order made ahead fits the node
//! ([`SORT`](crate::bvh::wide::SORT)): eight integer keys sorted largest first by a sorting
//! network, with no branch on how many were entered. Each lane's key is its distance's bits
//! made monotonic as an integer, the low three bits replaced by the lane number (so keys are
//! distinct and the lane is read back from the sorted key), and [`NOT_ENTERED`] for a lane
//! the ray does not enter. The network has 19 comparators in six layers (Knuth, *The Art of
//! Computer Programming* vol. 3, §5.3.4); the x86 walk runs each layer as one permutation, a
//! maximum, a minimum and a blend ([`x86::sort_descending`]), the portable twin pair by pair
//! ([`sorted_lanes`]), so both push the children in the same order.

use crate::bvh::wide::WIDTH;

/// The sort key of a lane whose distance is `t`: its bits as an `i32` ordered as the floats
/// are (negative values' magnitude bits flipped), the low three bits replaced by the lane
/// number.
#[inline(always)]
pub(crate) fn order_key(t: f32, lane: usize) -> i32 {
    let bits = t.to_bits() as i32;
    let monotonic = bits ^ (((bits >> 31) as u32) >> 1) as i32;
    (monotonic & !7) | lane as i32
}

/// The sorting network, layer by layer: each pair `(i, j)`, `i < j`, leaves the larger key
/// in lane `i`.
pub(crate) const NETWORK: [&[(usize, usize)]; 6] = [
    &[(0, 2), (1, 3), (4, 6), (5, 7)],
    &[(0, 4), (1, 5), (2, 6), (3, 7)],
    &[(0, 1), (2, 3), (4, 5), (6, 7)],
    &[(2, 4), (3, 5)],
    &[(1, 4), (3, 6)],
    &[(1, 2), (3, 4), (5, 6)],
];

/// The key of a lane the ray does not enter: below every entered lane's.
pub(crate) const NOT_ENTERED: i32 = i32::MIN;

/// The lanes of `mask` largest first by [`order_key`] of their `t` (the lanes not in it
/// after them), sorted by [`NETWORK`]: the scalar twin of the x86 sort, key for key.
#[inline(always)]
pub(crate) fn sorted_lanes(mask: u32, t: &[f32; WIDTH]) -> [usize; WIDTH] {
    let mut keys = [NOT_ENTERED; WIDTH];
    for (k, key) in keys.iter_mut().enumerate() {
        if mask & (1 << k) != 0 {
            *key = order_key(t[k], k);
        }
    }
    for layer in NETWORK {
        for &(i, j) in layer {
            (keys[i], keys[j]) = (keys[i].max(keys[j]), keys[i].min(keys[j]));
        }
    }
    keys.map(|key| (key & 7) as usize)
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    use super::NOT_ENTERED;
    use crate::bvh::wide::WIDTH;
    use std::arch::x86_64::*;

    /// [`order_key`](super::order_key) of each lane's `t`, [`NOT_ENTERED`] where `entered`
    /// is clear.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[allow(unsafe_code)]
    #[inline(always)]
    pub(crate) unsafe fn order_keys(t: __m256, entered: __m256) -> __m256i {
        // SAFETY: the caller promises AVX2.
        unsafe {
            let bits = _mm256_castps_si256(t);
            let flip = _mm256_srli_epi32::<1>(_mm256_srai_epi32::<31>(bits));
            let key = _mm256_or_si256(
                _mm256_and_si256(_mm256_xor_si256(bits, flip), _mm256_set1_epi32(!7)),
                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
            );
            _mm256_blendv_epi8(
                _mm256_set1_epi32(NOT_ENTERED),
                key,
                _mm256_castps_si256(entered),
            )
        }
    }

    /// One layer of the network: lane `i` of each pair takes the larger key, lane `j` (the
    /// bits of `J`) the smaller; `partner` names each lane's pair.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[allow(unsafe_code)]
    #[inline(always)]
    unsafe fn layer<const J: i32>(v: __m256i, partner: [i32; WIDTH]) -> __m256i {
        // SAFETY: the caller promises AVX2.
        unsafe {
            let p = _mm256_permutevar8x32_epi32(v, bytemuck::cast(partner));
            _mm256_blend_epi32::<J>(_mm256_max_epi32(v, p), _mm256_min_epi32(v, p))
        }
    }

    /// Eight keys sorted largest first by [`NETWORK`](super::NETWORK).
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[allow(unsafe_code)]
    #[inline(always)]
    pub(crate) unsafe fn sort_descending(v: __m256i) -> __m256i {
        // SAFETY: the caller promises AVX2.
        unsafe {
            let v = layer::<0b1100_1100>(v, [2, 3, 0, 1, 6, 7, 4, 5]);
            let v = layer::<0b1111_0000>(v, [4, 5, 6, 7, 0, 1, 2, 3]);
            let v = layer::<0b1010_1010>(v, [1, 0, 3, 2, 5, 4, 7, 6]);
            let v = layer::<0b0011_0000>(v, [0, 1, 4, 5, 2, 3, 6, 7]);
            let v = layer::<0b0101_0000>(v, [0, 4, 2, 6, 1, 5, 3, 7]);
            layer::<0b0101_0100>(v, [0, 2, 1, 4, 3, 6, 5, 7])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The six layers of 19 comparators sort every input: by the 0-1 principle, checking the
    /// 256 inputs of zeros and ones is enough.
    #[test]
    fn the_network_sorts() {
        for bits in 0u32..256 {
            let mut v = [0i32; WIDTH];
            for (k, x) in v.iter_mut().enumerate() {
                *x = ((bits >> k) & 1) as i32;
            }
            for layer in NETWORK {
                for &(i, j) in layer {
                    let (hi, lo) = (v[i].max(v[j]), v[i].min(v[j]));
                    (v[i], v[j]) = (hi, lo);
                }
            }
            assert!(v.windows(2).all(|w| w[0] >= w[1]), "{bits:08b}: {v:?}");
        }
    }

    /// Keys order as the distances do (to within the three lane bits), negative, signed-zero
    /// and infinite distances included.
    #[test]
    fn keys_order_as_the_distances() {
        let xs = [
            f32::NEG_INFINITY,
            -1e30,
            -2.5,
            -1e-30,
            -0.0,
            0.0,
            1e-30,
            1.0,
            1.5,
            1e30,
            f32::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(
                order_key(w[0], 7) < order_key(w[1], 0) || w[0] == w[1],
                "{} {}",
                w[0],
                w[1]
            );
            assert!(order_key(w[0], 0) > NOT_ENTERED);
        }
    }

    /// The x86 sort gives the portable twin's lanes, key for key, on random distances and
    /// masks. It runs in a build for x86-64-v3 (as `.ci/run` runs it), whose binary runs
    /// only where the CPU has AVX2; elsewhere it shows as ignored (a test cannot ignore
    /// itself at run time).
    #[test]
    #[cfg_attr(
        not(all(
            target_arch = "x86_64",
            target_feature = "avx2",
            target_feature = "fma",
            target_feature = "popcnt",
            target_feature = "lzcnt",
            target_feature = "bmi1",
            target_feature = "bmi2"
        )),
        ignore = "needs a build for x86-64-v3: RUSTFLAGS=\"-C target-cpu=x86-64-v3\""
    )]
    fn x86_equals_portable_sort() {
        #[cfg(target_arch = "x86_64")]
        {
            assert!(
                crate::bvh::simd::Avx2::detect().is_some(),
                "built for x86-64-v3, so only MESHRAY_SIMD=portable turns AVX2 off"
            );
            use std::arch::x86_64::*;
            let mut rng = crate::test_support::Rng::new(5);
            for round in 0..20_000u32 {
                let t: [f32; WIDTH] = std::array::from_fn(|k| match (round + k as u32) % 9 {
                    0 => -0.0,
                    1 => f32::INFINITY,
                    2 => 1.0,
                    _ => rng.range(-4.0, 4.0),
                });
                let mask = round % 256;
                let want = sorted_lanes(mask, &t);
                let entered: [u32; WIDTH] =
                    std::array::from_fn(|k| if mask & (1 << k) != 0 { !0 } else { 0 });
                // SAFETY: the CPU has AVX2 (`detect`).
                #[allow(unsafe_code)]
                let got = unsafe { sorted_avx2(t, entered) };
                assert_eq!(want, got.map(|k| k as usize), "round {round}");
            }

            #[target_feature(enable = "avx2")]
            #[allow(unsafe_code)]
            unsafe fn sorted_avx2(t: [f32; WIDTH], entered: [u32; WIDTH]) -> [u32; WIDTH] {
                // SAFETY: AVX2 is enabled here, which the caller checked.
                unsafe {
                    let keys = x86::order_keys(bytemuck::cast(t), bytemuck::cast(entered));
                    let lanes = _mm256_and_si256(x86::sort_descending(keys), _mm256_set1_epi32(7));
                    bytemuck::cast(lanes)
                }
            }
        }
    }
}
