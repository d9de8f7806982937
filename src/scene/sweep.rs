//! A scene's sweeps: the top-level trees walked as a mesh's are (each instance's world box
//! grown by the moving shape's reach), and each instance reached swept in world space, its
//! triangles and boxes moved by its transform, so any affine placement (a non-uniform scale
//! or a shear, under which a sphere would not stay a sphere in the mesh's own space) is
//! answered exactly. An instance placed by a translation alone (its linear part exactly
//! the identity) is swept in its own space instead, the shape moved back by the
//! translation: the same sphere or capsule there, and the mesh's own walk (its vector slab
//! tests and prefilters), where the moved boxes take the generic one. Any other instance
//! is culled in its own space by a bound ([`own_bound`]: a sphere or capsule there that
//! holds the shape's preimage, rounding included), its kept triangles moved into the world
//! for the exact test; only a placement too ill-conditioned for the bound's error argument
//! takes the generic walk.

use super::walk::InstanceVisitor;
use super::{Instance, InstanceId, Scene, SceneOptions};
use crate::Aabb;
use crate::bvh::facade::{Placement, Reach, WIDTH, WideNode};
use crate::sweep::{Contact, Moving};
use nalgebra::{Matrix3, Matrix4, Point3, Vector3};

impl Scene {
    /// The first contact of `m` with a triangle of an instance `options` sees, at
    /// `τ ≤ limit`: the instance, the triangle and where; ties to the lowest instance, then
    /// triangle.
    pub(crate) fn first_contact(
        &self,
        m: &Moving,
        limit: f64,
        options: &SceneOptions<'_>,
    ) -> Option<(InstanceId, u32, Contact)> {
        let mut visitor = SweepInstance {
            bounds: &self.bounds,
            m,
            reach: Reach::of(m),
            limit,
            culling: options.query.culling,
            best: None,
        };
        self.walk_instances(options, &mut visitor);
        visitor.best
    }
}

/// The sweep's walk over the top level: nearest instance box first.
struct SweepInstance<'a> {
    /// The instances' world boxes.
    bounds: &'a [Aabb],
    m: &'a Moving,
    reach: Reach,
    /// The best contact's `τ` so far (the caller's limit at first).
    limit: f64,
    culling: crate::Culling,
    best: Option<(InstanceId, u32, Contact)>,
}

impl InstanceVisitor for SweepInstance<'_> {
    type Key = f64;
    const ORDERED: bool = true;

    // The instances' world boxes eight at once in `f32`, as a mesh's own walk tests its
    // boxes: padded, so no box the path reaches is skipped.
    fn node(&mut self, node: &WideNode) -> (u32, [f64; WIDTH]) {
        self.reach.node_entries(node, self.limit)
    }

    fn worth(&self, tau: f64) -> bool {
        tau <= self.limit
    }

    fn instance(&mut self, id: InstanceId, instance: &Instance) -> bool {
        let culling = self.culling;
        let linear = instance.to_world.fixed_view::<3, 3>(0, 0);
        let found = if linear == Matrix3::identity() {
            // A translation alone: the shape moved back into the mesh's space, the
            // contact moved out again.
            let shift: Vector3<f64> = instance.to_world.fixed_view::<3, 1>(0, 3).into();
            let own = Moving {
                start: self.m.start - shift,
                ..*self.m
            };
            instance
                .bvh
                .first_contact(&own, self.limit, culling, Placement::Own, None)
                .map(|(triangle, c)| {
                    let moved = Contact {
                        point: c.point + shift,
                        axis_point: c.axis_point + shift,
                        ..c
                    };
                    (triangle, moved)
                })
        } else {
            let world = &self.bounds[id as usize];
            let until = self
                .limit
                .min(self.reach.exit(self.m, world.min.into(), world.max.into()));
            let bound = own_bound(instance, self.m, until);
            let placement = Placement::Moved {
                to_world: &instance.to_world,
                mirrored: linear.determinant() < 0.0,
                bound: bound.as_ref(),
            };
            instance
                .bvh
                .first_contact(self.m, self.limit, culling, placement, None)
        };
        let Some((triangle, contact)) = found else {
            return false;
        };
        let better = match &self.best {
            None => true,
            Some((bid, bt, bc)) => (contact.tau, id, triangle) < (bc.tau, *bid, *bt),
        };
        if better {
            self.limit = contact.tau;
            self.best = Some((id, triangle, contact));
        }
        false
    }
}

/// What a placement lends [`own_bound`], computed once per placement (the instance's
/// `inverse_bound`): `stretch`, a bound of `‖A⁻¹‖₂`, and `error`, the relative error of a
/// product by the stored inverse `B` (both as argued there). `None` (no bound) for a
/// placement too ill-conditioned for the argument: `‖I − B·A‖∞ ≥ 10⁻⁶`.
#[derive(Clone, Copy, Debug)]
pub(super) struct InverseBound {
    stretch: f64,
    error: f64,
}

impl InverseBound {
    pub(super) fn of(to_world: &Matrix4<f64>, to_object: &Matrix4<f64>) -> Option<InverseBound> {
        let a: Matrix3<f64> = to_world.fixed_view::<3, 3>(0, 0).into();
        let b: Matrix3<f64> = to_object.fixed_view::<3, 3>(0, 0).into();
        let abs_b = b.abs();
        // The greatest row sum of a matrix of magnitudes.
        let rows = |m: &Matrix3<f64>| (0..3).map(|i| m.row(i).sum()).fold(0.0, f64::max);
        let off =
            rows(&(Matrix3::identity() - b * a).abs()) + 1e-14 * (1.0 + rows(&(abs_b * a.abs())));
        if !(off < 1e-6) {
            return None;
        }
        let gram = b.transpose() * b;
        let gram_bound = rows(&gram.abs()) + 1e-14 * rows(&(abs_b.transpose() * abs_b));
        Some(InverseBound {
            stretch: gram_bound.sqrt() * (1.0 + 1e-12) / (1.0 - off),
            error: 4.0 * off + 1e-12,
        })
    }
}

/// A sphere or capsule in the mesh's own space that holds, at every `τ ≤ until`, the
/// preimage of `m` (given in the world) under `instance`'s placement: so the mesh's own
/// walk and prefilters, culling with it, keep every triangle `m` can touch by `until`.
/// `None` where the placement is too ill-conditioned for the argument below (the generic
/// walk then serves), or the bound would not be finite.
///
/// With the placement `x ↦ A·x + b` and `B` the stored inverse of `A`: a point `m` covers
/// at `τ` is `S + τ·D + s·E + r·w` (`S` the start, `D` the motion, `E` the axis, `s ∈
/// [0, 1]`, `|w| ≤ 1`), and its preimage `A⁻¹(S − b) + τ·A⁻¹D + s·A⁻¹E + r·A⁻¹w` lies within
/// `r·‖A⁻¹‖₂` of the capsule of start `A⁻¹(S − b)`, motion `A⁻¹D` and axis `A⁻¹E`. The bound
/// is that capsule as computed, `B` for `A⁻¹`, its radius grown by what both cost:
/// - `B` is not exactly `A⁻¹`: with `R = I − B·A`, `A⁻¹ = (I − R)⁻¹·B`, so
///   `|A⁻¹v − B·v|∞ ≤ ‖R‖∞/(1 − ‖R‖∞)·‖B·v‖∞`, and `‖A⁻¹‖₂ ≤ ‖B‖₂/(1 − ‖R‖∞)`; `‖R‖∞` is
///   computed, plus a bound of its own rounding, and must stay under 10⁻⁶;
/// - `‖B‖₂² ≤` the greatest row sum of `|BᵀB|` (Gershgorin's circles), again plus its
///   rounding;
/// - each product `B·v` in `f64` is within `3ε·|B|·|v|` of the exact one.
///
/// Each error is under `4‖R‖∞ + 10⁻¹²` of `‖|B|·|v|‖₁` for each `v` (`S`'s and `b`'s
/// magnitudes, `τ·D` up to `until`, `E`), and the radius grows by that much.
fn own_bound(instance: &Instance, m: &Moving, until: f64) -> Option<Moving> {
    let InverseBound { stretch, error } = instance.inverse_bound?;
    let b: Matrix3<f64> = instance.to_object.fixed_view::<3, 3>(0, 0).into();
    let shift: Vector3<f64> = instance.to_world.fixed_view::<3, 1>(0, 3).into();
    let abs_b = b.abs();
    let size = |v: Vector3<f64>| (abs_b * v.abs()).sum();
    let travel = if m.direction == Vector3::zeros() {
        0.0
    } else {
        until * size(m.direction)
    };
    let from = m.start.coords - shift;
    let slack = error
        * (size(m.start.coords.abs() + shift.abs()) + travel + size(m.axis) + m.radius * stretch);
    let bound = Moving {
        start: Point3::from(b * from),
        axis: b * m.axis,
        direction: b * m.direction,
        radius: m.radius * stretch + slack,
    };
    let finite = bound
        .start
        .iter()
        .chain(&bound.axis)
        .chain(&bound.direction)
        .all(|x| x.is_finite());
    (finite && bound.radius.is_finite()).then_some(bound)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::splitmix::SplitMix64;
    use crate::{Bvh, Mesh};
    use nalgebra::{Rotation3, Unit};
    use std::sync::Arc;

    /// A placement flattened onto a plane is refused the own-space bound (its sweeps take
    /// the generic walk): the matrix tests/sweeps.rs places a mesh with to reach that walk.
    #[test]
    fn an_ill_conditioned_placement_has_no_bound() {
        let flat = Matrix4::new(
            1.0, 0.0, 0.0, 0.0, //
            0.0, 1.0, 0.0, 0.0, //
            0.25, 0.25, 1e-8, 0.0, //
            0.0, 0.0, 0.0, 1.0,
        );
        let placed = Matrix4::new_translation(&Vector3::new(0.0, -9.0, 0.0)) * flat;
        let (to_world, to_object) = crate::transform::affine(&placed).unwrap();
        assert!(InverseBound::of(&to_world, &to_object).is_none());
        // A mild shear keeps its bound.
        let mut shear = Matrix4::identity();
        shear[(0, 1)] = 0.5;
        let (to_world, to_object) = crate::transform::affine(&shear).unwrap();
        assert!(InverseBound::of(&to_world, &to_object).is_some());
    }

    /// The own-space bound holds the moving shape's preimage: for random placements
    /// (rotations, uniform and non-uniform scales, mirrors, shears, far translations) and
    /// random spheres and capsules, points of the shape at random `τ` (its surface along
    /// random directions, and along the one the inverse stretches most), moved back by the
    /// inverse, lie within the bound's radius of its axis at the same `τ`.
    #[test]
    fn the_own_space_bound_holds_the_shapes_preimage() {
        let p = vec![
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(1.0, 0.0, 0.0),
            Point3::new(0.0, 1.0, 0.0),
        ];
        let bvh = Arc::new(Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]]).unwrap()));
        let mut rng = SplitMix64(42);
        let signed = |rng: &mut SplitMix64| rng.unit_f64() * 2.0 - 1.0;
        let v = |rng: &mut SplitMix64| Vector3::new(signed(rng), signed(rng), signed(rng));
        let (mut points, mut bounds) = (0, 0);
        for case in 0..2_000 {
            let axis = Unit::new_normalize(v(&mut rng));
            let turn = Rotation3::from_axis_angle(&axis, 3.0 * signed(&mut rng)).to_homogeneous();
            let scale = match case % 4 {
                0 => Vector3::repeat(1.0),
                1 => Vector3::repeat(0.01 + 10.0 * signed(&mut rng).abs()),
                2 => v(&mut rng).map(|x| 0.05 + 4.0 * x.abs()),
                _ => v(&mut rng).map(|x| if x < 0.0 { -1.0 } else { 2.0 }),
            };
            let mut shear = Matrix4::identity();
            if case % 3 == 0 {
                shear[(0, 1)] = signed(&mut rng);
                shear[(2, 0)] = signed(&mut rng);
            }
            let shift = v(&mut rng) * [1.0, 1e3, 1e5][case % 3];
            let place = Matrix4::new_translation(&shift)
                * turn
                * shear
                * Matrix4::new_nonuniform_scaling(&scale);
            let (instance, _) = Instance::new(bvh.clone(), &place.cast::<f32>()).unwrap();
            let m = Moving {
                start: Point3::from(shift + v(&mut rng) * 5.0),
                axis: if case % 2 == 0 {
                    Vector3::zeros()
                } else {
                    v(&mut rng)
                },
                direction: v(&mut rng) * 3.0,
                radius: signed(&mut rng).abs() * [0.01, 1.0][case % 2],
            };
            let until = 10.0 * signed(&mut rng).abs();
            let Some(bound) = own_bound(&instance, &m, until) else {
                continue;
            };
            bounds += 1;
            let inverse = instance.to_object.fixed_view::<3, 3>(0, 0).into_owned();
            // The direction the inverse stretches most: its largest singular value's.
            let svd = inverse.svd(false, true);
            let top = svd.singular_values.imax();
            let stretched: Vector3<f64> = svd.v_t.unwrap().row(top).transpose();
            for k in 0..20 {
                let tau = until * [0.0, 1.0, signed(&mut rng).abs()][k % 3];
                let s = [0.0, 1.0, signed(&mut rng).abs()][k % 3];
                let w = if k < 4 {
                    stretched * [1.0, -1.0][k % 2]
                } else {
                    v(&mut rng).normalize()
                };
                let world = m.start + m.direction * tau + m.axis * s + w * m.radius;
                let own = instance.to_object.transform_point(&world);
                // Its distance from the bound's axis at τ.
                let from = bound.start + bound.direction * tau;
                let along = if bound.axis == Vector3::zeros() {
                    0.0
                } else {
                    ((own - from).dot(&bound.axis) / bound.axis.norm_squared()).clamp(0.0, 1.0)
                };
                let distance = (own - (from + bound.axis * along)).norm();
                assert!(
                    distance <= bound.radius,
                    "case {case}: {distance} from the axis, bound {}",
                    bound.radius
                );
                points += 1;
            }
        }
        assert!(bounds > 1_900, "{bounds} bounds");
        assert!(points > 38_000);
    }
}
