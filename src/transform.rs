//! Affine transforms, as instances and glTF nodes use them: the check that a matrix is one
//! meshray can place a mesh with (finite, affine, invertible), its inverse, and the box
//! around a moved box.

use crate::{Error, Result};
use nalgebra::{Matrix3, Matrix4};

/// Checks a transform: finite, affine (last row 0 0 0 1), invertible.
pub(crate) fn affine(transform: &Matrix4<f32>) -> Result<(Matrix4<f64>, Matrix4<f64>)> {
    let m = transform.cast::<f64>();
    let bad = |reason| Err(Error::InvalidTransform { reason });
    if !m.iter().all(|x| x.is_finite()) {
        return bad("a NaN or infinite entry");
    }
    if m.row(3) != nalgebra::RowVector4::new(0.0, 0.0, 0.0, 1.0) {
        return bad("not affine: the last row must be 0 0 0 1");
    }
    let linear: Matrix3<f64> = m.fixed_view::<3, 3>(0, 0).into_owned();
    let det = linear.determinant();
    let Some(inverse) = linear
        .try_inverse()
        .filter(|i| det != 0.0 && det.is_finite() && i.iter().all(|x| x.is_finite()))
    else {
        return bad("singular");
    };
    // The inverse of an affine map: the linear part inverted, the translation undone.
    let shift = -(inverse * m.fixed_view::<3, 1>(0, 3));
    let mut to_object = inverse.to_homogeneous();
    to_object.fixed_view_mut::<3, 1>(0, 3).copy_from(&shift);
    Ok((m, to_object))
}

/// The box around a box moved by the affine `m` (its eight corners' box, from the centre and
/// half extent as Arvo (1990) bounds a transformed box), in f32 rounded outwards (a few ulps),
/// so it holds every moved point of the original.
pub(crate) fn moved_box(m: &Matrix4<f64>, min: [f32; 3], max: [f32; 3]) -> ([f32; 3], [f32; 3]) {
    let (lo, hi) = (min.map(f64::from), max.map(f64::from));
    let centre = [0, 1, 2].map(|a| 0.5 * (lo[a] + hi[a]));
    let half = [0, 1, 2].map(|a| 0.5 * (hi[a] - lo[a]));
    let (mut out_lo, mut out_hi) = ([0.0f32; 3], [0.0f32; 3]);
    for r in 0..3 {
        let (mut c, mut h, mut scale) = (m[(r, 3)], 0.0, m[(r, 3)].abs());
        for k in 0..3 {
            c += m[(r, k)] * centre[k];
            h += m[(r, k)].abs() * half[k];
            scale += (m[(r, k)] * centre[k]).abs();
        }
        // Rounding in f64 is a few ulps of the terms' sizes (`scale + h`), however they
        // cancel; the f32 cast rounds by at most 2^-24 of the result.
        let pad = |x: f64| x.abs() * 1e-6 + (scale + h) * 1e-12 + 1e-30;
        out_lo[r] = ((c - h) - pad(c - h)) as f32;
        out_hi[r] = ((c + h) + pad(c + h)) as f32;
    }
    (out_lo, out_hi)
}
