//! Posed meshes: morph targets, then linear blend skinning, the deformation glTF defines and
//! Bevy and three.js draw. A [`Rig`] holds what does not change from frame to frame (the
//! bind-pose positions, each vertex's joints and weights, the morph targets); a [`Pose`] is
//! one frame's joint matrices and morph weights. Posing computes where each vertex is drawn,
//! so a tree refit to those positions picks what is on screen
//! ([`Bvh::pose`](crate::Bvh::pose)).

use crate::mesh::Mesh;
use crate::{Error, Result};
use nalgebra::{Matrix4, Point3, Vector3};
use wide::f32x4;

/// How a mesh deforms: its bind-pose positions, each vertex's four joint influences (linear
/// blend skinning), and its morph targets. Make one from the mesh its tree was built over;
/// pose it every frame with [`Bvh::pose`](crate::Bvh::pose), or into a buffer of your own
/// with [`pose_into`](Rig::pose_into).
///
/// A posed vertex is, as glTF specifies and as Bevy's and three.js's shaders compute it,
///
/// ```text
/// morphed = bind + Σₘ weightₘ · deltaₘ
/// posed   = (Σₖ wₖ · joint_matrix[jₖ]) · morphed
/// ```
///
/// with the skin weights used as given (not renormalized: a vertex whose weights sum to 0
/// goes to the origin, as on the GPU) and only the morph step when the rig has no skin.
///
/// ```
/// use meshray::prelude::*;
/// use meshray::{Bvh, Mesh, QueryOptions, Ray};
/// use meshray::pose::{Pose, Rig};
/// use nalgebra::{Matrix4, Point3, Vector3};
///
/// // A unit square in z = 0 whose right edge follows joint 1.
/// let mesh = Mesh::from_buffers(
///     vec![[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]],
///     vec![[0, 1, 2], [0, 2, 3]],
/// )?;
/// let rig = Rig::new(&mesh).with_skin(
///     vec![[0, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]],
///     vec![[1.0, 0.0, 0.0, 0.0]; 4],
/// )?;
/// let mut bvh = Bvh::build(mesh);
/// // Joint 1 moves the right edge 1 to the right: the square becomes 2 wide.
/// let joints = [Matrix4::identity(), Matrix4::new_translation(&Vector3::x())];
/// bvh.pose(&rig, &Pose { joints: &joints, morph_weights: &[] })?;
/// let ray = Ray::new(Point3::new(1.5, 0.5, 1.0), -Vector3::z());
/// assert!(bvh.closest_hit(&ray, &QueryOptions::default()).is_some());
/// # Ok::<(), meshray::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Rig {
    bind: Vec<Point3<f32>>,
    /// Per vertex: four joint numbers and their weights; empty when the rig has no skin.
    joints: Vec<[u16; 4]>,
    weights: Vec<[f32; 4]>,
    /// One more than the largest joint number with a nonzero weight (0: no skin).
    joint_count: usize,
    /// Per morph target, one position delta per vertex.
    targets: Vec<Vec<Vector3<f32>>>,
}

/// One frame's pose of a [`Rig`].
#[derive(Clone, Copy, Debug, Default)]
pub struct Pose<'a> {
    /// Each joint's skinning matrix, bind-pose mesh space to posed mesh space: the joint's
    /// transform times its inverse bind matrix, both relative to the mesh (glTF: the mesh
    /// node's inverse world transform × the joint's world transform × its inverse bind
    /// matrix). Affine (last row 0 0 0 1). Empty for a rig without a skin.
    pub joints: &'a [Matrix4<f32>],
    /// Each morph target's weight, in the rig's order; empty for none (all zero).
    pub morph_weights: &'a [f32],
}

/// Vertices posed per task on rayon's threads.
const CHUNK: usize = 4096;

impl Rig {
    /// The rig of a mesh that does not move yet: its positions as the bind pose, no skin,
    /// no morph targets.
    pub fn new(mesh: &Mesh) -> Rig {
        Rig {
            bind: mesh.positions().to_vec(),
            joints: Vec::new(),
            weights: Vec::new(),
            joint_count: 0,
            targets: Vec::new(),
        }
    }

    /// Adds linear blend skinning: each vertex's four joint numbers (glTF's `JOINTS_0`,
    /// three.js's `skinIndex`, Bevy's `ATTRIBUTE_JOINT_INDEX`) and their weights
    /// (`WEIGHTS_0`, `skinWeight`, `ATTRIBUTE_JOINT_WEIGHT`). A joint with weight 0 is never
    /// read.
    ///
    /// # Errors
    /// [`Error::VertexCount`] when either list has not one entry per vertex;
    /// [`Error::InvalidPose`] for a NaN or infinite weight.
    pub fn with_skin(mut self, joints: Vec<[u16; 4]>, weights: Vec<[f32; 4]>) -> Result<Rig> {
        for found in [joints.len(), weights.len()] {
            self.check_count(found)?;
        }
        if let Some(vertex) = weights
            .iter()
            .position(|w| !w.iter().all(|x| x.is_finite()))
        {
            return Err(invalid(format!(
                "a NaN or infinite skin weight at vertex {vertex}"
            )));
        }
        self.joint_count = joints
            .iter()
            .zip(&weights)
            .flat_map(|(j, w)| (0..4).filter(|&k| w[k] != 0.0).map(|k| j[k] as usize + 1))
            .max()
            .unwrap_or(0);
        self.joints = joints;
        self.weights = weights;
        Ok(self)
    }

    /// Adds morph targets (blend shapes): per target, one position delta per vertex (glTF's
    /// morph target `POSITION`, three.js's `morphAttributes.position` with
    /// `morphTargetsRelative`).
    ///
    /// # Errors
    /// [`Error::VertexCount`] when a target has not one delta per vertex;
    /// [`Error::InvalidPose`] for a NaN or infinite delta.
    pub fn with_morph_targets(mut self, targets: Vec<Vec<Vector3<f32>>>) -> Result<Rig> {
        for (t, deltas) in targets.iter().enumerate() {
            self.check_count(deltas.len())?;
            if let Some(vertex) = deltas.iter().position(|d| !d.iter().all(|x| x.is_finite())) {
                return Err(invalid(format!(
                    "a NaN or infinite delta in morph target {t} at vertex {vertex}"
                )));
            }
        }
        self.targets = targets;
        Ok(self)
    }

    /// The number of vertices the rig poses (the mesh's).
    pub fn vertex_count(&self) -> usize {
        self.bind.len()
    }

    /// Writes each vertex's posed position into `out`, one per vertex, on all cores (with
    /// the `parallel` feature). Allocates nothing.
    ///
    /// ```
    /// use meshray::Mesh;
    /// use meshray::pose::{Pose, Rig};
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let mesh = Mesh::from_buffers(vec![[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], vec![[0, 1, 2]])?;
    /// // One morph target lifts the first corner by 2.
    /// let rig = Rig::new(&mesh).with_morph_targets(vec![vec![Vector3::z() * 2.0, Vector3::zeros(), Vector3::zeros()]])?;
    /// let mut posed = vec![Point3::origin(); rig.vertex_count()];
    /// rig.pose_into(&Pose { joints: &[], morph_weights: &[0.25] }, &mut posed)?;
    /// assert_eq!(posed[0], Point3::new(0.0, 0.0, 0.5));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::VertexCount`] when `out` has not one entry per vertex; [`Error::InvalidPose`]
    /// when the pose does not fit the rig: fewer joint matrices than the skin names (or any
    /// for a rig without a skin), a NaN, infinite or non-affine joint matrix, or morph
    /// weights not one per target (or none) or not finite. `out` is then unchanged.
    pub fn pose_into(&self, pose: &Pose, out: &mut [Point3<f32>]) -> Result<()> {
        self.check_count(out.len())?;
        self.check(pose)?;
        let job = |(chunk, out): (usize, &mut [Point3<f32>])| {
            for (k, out) in out.iter_mut().enumerate() {
                *out = self.vertex(chunk * CHUNK + k, pose);
            }
        };
        #[cfg(feature = "parallel")]
        if out.len() > CHUNK {
            use rayon::prelude::*;
            out.par_chunks_mut(CHUNK).enumerate().for_each(job);
            return Ok(());
        }
        out.chunks_mut(CHUNK).enumerate().for_each(job);
        Ok(())
    }

    /// Where vertex `v` is drawn in `pose` (checked).
    #[inline]
    fn vertex(&self, v: usize, pose: &Pose) -> Point3<f32> {
        let mut p = self.bind[v];
        for (deltas, &weight) in self.targets.iter().zip(pose.morph_weights) {
            if weight != 0.0 {
                p += deltas[v] * weight;
            }
        }
        if self.joint_count == 0 {
            return p;
        }
        // The blended matrix, a column per 4-wide register (nalgebra stores columns
        // contiguously): four multiply-adds per influence, four for the point.
        let column =
            |m: &[f32], c: usize| f32x4::new([m[4 * c], m[4 * c + 1], m[4 * c + 2], m[4 * c + 3]]);
        let mut blend = [f32x4::ZERO; 4];
        for (&joint, &w) in self.joints[v].iter().zip(&self.weights[v]) {
            if w != 0.0 {
                let m = pose.joints[usize::from(joint)].as_slice();
                let w = f32x4::splat(w);
                for (c, b) in blend.iter_mut().enumerate() {
                    *b += w * column(m, c);
                }
            }
        }
        let [x, y, z, _] = (blend[0] * f32x4::splat(p.x)
            + blend[1] * f32x4::splat(p.y)
            + blend[2] * f32x4::splat(p.z)
            + blend[3])
            .to_array();
        Point3::new(x, y, z)
    }

    /// Refuses a pose that does not fit the rig (see [`pose_into`](Rig::pose_into)).
    pub(crate) fn check(&self, pose: &Pose) -> Result<()> {
        if self.joints.is_empty() && !pose.joints.is_empty() {
            return Err(invalid(format!(
                "{} joint matrices for a rig without a skin",
                pose.joints.len()
            )));
        }
        if pose.joints.len() < self.joint_count {
            return Err(invalid(format!(
                "{} joint matrices, but the skin names joint {}",
                pose.joints.len(),
                self.joint_count - 1
            )));
        }
        for (j, m) in pose.joints.iter().enumerate() {
            if !m.iter().all(|x| x.is_finite()) {
                return Err(invalid(format!(
                    "joint matrix {j} has a NaN or infinite entry"
                )));
            }
            if m.row(3) != nalgebra::RowVector4::new(0.0, 0.0, 0.0, 1.0) {
                return Err(invalid(format!(
                    "joint matrix {j} is not affine: its last row must be 0 0 0 1"
                )));
            }
        }
        let weights = pose.morph_weights;
        if !weights.is_empty() && weights.len() != self.targets.len() {
            return Err(invalid(format!(
                "{} morph weights for {} morph targets",
                weights.len(),
                self.targets.len()
            )));
        }
        if let Some(t) = weights.iter().position(|w| !w.is_finite()) {
            return Err(invalid(format!("morph weight {t} is NaN or infinite")));
        }
        Ok(())
    }

    /// Refuses a per-vertex list of the wrong length.
    fn check_count(&self, found: usize) -> Result<()> {
        if found != self.bind.len() {
            return Err(Error::VertexCount {
                expected: self.bind.len(),
                found,
            });
        }
        Ok(())
    }
}

fn invalid(reason: String) -> Error {
    Error::InvalidPose { reason }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::Rng;

    /// Posing equals the formula evaluated in `f64` (to f32 rounding), with several
    /// influences, zero weights naming joints out of range, and morph targets.
    #[test]
    fn posing_equals_the_formula_in_f64() {
        let mut rng = Rng::new(3);
        let n = 10_000;
        let positions: Vec<[f32; 3]> = (0..n)
            .map(|_| [0, 1, 2].map(|_| rng.range(-2.0, 2.0)))
            .collect();
        let triangles = (0..n as u32 - 2).map(|i| [i, i + 1, i + 2]).collect();
        let mesh = Mesh::from_buffers(positions, triangles).unwrap();
        let joints: Vec<[u16; 4]> = (0..n)
            .map(|_| [0; 4].map(|_: u16| rng.below(5) as u16))
            .collect();
        let weights: Vec<[f32; 4]> = (0..n)
            .map(|k| {
                let mut w = [0; 4].map(|_: u8| rng.range(0.0, 1.0));
                if k % 3 == 0 {
                    w[3] = 0.0;
                }
                w
            })
            .collect();
        let mut joints_out = joints.clone();
        for (j, w) in joints_out.iter_mut().zip(&weights) {
            if w[3] == 0.0 {
                j[3] = 999; // never read
            }
        }
        let targets: Vec<Vec<Vector3<f32>>> = (0..2)
            .map(|_| {
                (0..n)
                    .map(|_| Vector3::new(rng.range(-0.1, 0.1), rng.range(-0.1, 0.1), 0.0))
                    .collect()
            })
            .collect();
        let rig = Rig::new(&mesh)
            .with_skin(joints_out, weights.clone())
            .unwrap()
            .with_morph_targets(targets.clone())
            .unwrap();
        let matrices: Vec<Matrix4<f32>> = (0..5)
            .map(|j| {
                let axis = Vector3::new(1.0, j as f32, 0.5).normalize();
                Matrix4::new_translation(&Vector3::new(j as f32, 0.5, -1.0))
                    * Matrix4::from_scaled_axis(axis * (0.3 * j as f32))
                    * Matrix4::new_scaling(1.0 + 0.1 * j as f32)
            })
            .collect();
        let morph = [0.7, -0.4];
        let mut posed = vec![Point3::origin(); n];
        rig.pose_into(
            &Pose {
                joints: &matrices,
                morph_weights: &morph,
            },
            &mut posed,
        )
        .unwrap();
        for v in 0..n {
            let mut p = mesh.positions()[v].coords.cast::<f64>();
            for (t, &m) in targets.iter().zip(&morph) {
                p += t[v].cast::<f64>() * f64::from(m);
            }
            let mut blend = Matrix4::<f64>::zeros();
            for k in 0..4 {
                if weights[v][k] != 0.0 {
                    blend +=
                        matrices[joints[v][k] as usize].cast::<f64>() * f64::from(weights[v][k]);
                }
            }
            // Not `transform_point`, which divides by the last coordinate (here the sum
            // of the weights): skinning blends affine maps and keeps w = 1.
            let want = Point3::from((blend * p.push(1.0)).xyz());
            let got = posed[v].cast::<f64>();
            assert!(
                (got - want).norm() <= 1e-5 * (1.0 + want.coords.norm()),
                "{v}: {got} vs {want}"
            );
        }
    }

    /// Poses that do not fit are refused, and leave the output as it was.
    #[test]
    fn poses_that_do_not_fit_are_refused() {
        let mesh = Mesh::from_buffers(
            vec![[0.0f32, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            vec![[0, 1, 2]],
        )
        .unwrap();
        let skinned = Rig::new(&mesh)
            .with_skin(
                vec![[0, 0, 0, 0], [2, 0, 0, 0], [1, 0, 0, 0]],
                vec![[1.0, 0.0, 0.0, 0.0]; 3],
            )
            .unwrap();
        let plain = Rig::new(&mesh)
            .with_morph_targets(vec![vec![Vector3::zeros(); 3]])
            .unwrap();
        let id = Matrix4::identity();
        let mut projective = id;
        projective[(3, 0)] = 0.5;
        let mut nan = id;
        nan[(0, 1)] = f32::NAN;
        let mut out = vec![Point3::new(7.0, 7.0, 7.0); 3];
        let cases: [(&Rig, Pose, &str); 7] = [
            (
                &skinned,
                Pose {
                    joints: &[id, id],
                    morph_weights: &[],
                },
                "names joint 2",
            ),
            (
                &skinned,
                Pose {
                    joints: &[id, id, projective],
                    morph_weights: &[],
                },
                "not affine",
            ),
            (
                &skinned,
                Pose {
                    joints: &[id, nan, id],
                    morph_weights: &[],
                },
                "NaN",
            ),
            (
                &plain,
                Pose {
                    joints: &[id],
                    morph_weights: &[],
                },
                "without a skin",
            ),
            (
                &plain,
                Pose {
                    joints: &[],
                    morph_weights: &[1.0, 2.0],
                },
                "2 morph weights for 1",
            ),
            (
                &plain,
                Pose {
                    joints: &[],
                    morph_weights: &[f32::INFINITY],
                },
                "infinite",
            ),
            (
                &skinned,
                Pose {
                    joints: &[],
                    morph_weights: &[],
                },
                "0 joint matrices",
            ),
        ];
        for (rig, pose, says) in cases {
            let e = rig.pose_into(&pose, &mut out).unwrap_err();
            assert!(
                matches!(e, Error::InvalidPose { .. }) && e.to_string().contains(says),
                "{e}"
            );
            assert!(out.iter().all(|p| *p == Point3::new(7.0, 7.0, 7.0)));
        }
        let mut short = vec![Point3::origin(); 2];
        assert!(matches!(
            plain.pose_into(&Pose::default(), &mut short),
            Err(Error::VertexCount {
                expected: 3,
                found: 2
            })
        ));
        assert!(matches!(
            Rig::new(&mesh).with_skin(vec![[0; 4]; 2], vec![[1.0, 0.0, 0.0, 0.0]; 3]),
            Err(Error::VertexCount {
                expected: 3,
                found: 2
            })
        ));
        assert!(matches!(
            Rig::new(&mesh).with_skin(vec![[0; 4]; 3], vec![[f32::NAN, 0.0, 0.0, 0.0]; 3]),
            Err(Error::InvalidPose { .. })
        ));
        assert!(matches!(
            Rig::new(&mesh).with_morph_targets(vec![vec![Vector3::x() * f32::NAN; 3]]),
            Err(Error::InvalidPose { .. })
        ));
    }
}
