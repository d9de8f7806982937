//! The order of a node's entered children where no order made ahead fits the node
//! ([`SORT`](crate::bvh::wide::SORT)): eight integer keys sorted largest first by a sorting
//! network, with no branch on how many were entered. Each lane's key is its distance's bits
//! made monotonic as an integer, the low three bits replaced by the lane number (so keys are
//! distinct and the lane is read back from the sorted key), and [`NOT_ENTERED`] for a lane
//! the ray does not enter. The network has 19 comparators in six layers (Knuth, *The Art of
//! Computer Programming* vol. 3, §5.3.4); the x86 walk runs each layer as one permutation, a
//! maximum, a minimum and a blend (`x86::sort`), the portable twin pair by pair
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
}
