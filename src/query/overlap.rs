//! Which triangles intersect: of two meshes (or scenes) placed against each other, or of one
//! with itself. For CSG, collision checks, "where do these two parts clash", and the folds
//! and overlapping parts of scans and game models.

use super::RayCast;
use crate::Result;
use crate::bvh::Bvh;
use crate::scene::{Scene, SceneOptions};
use nalgebra::Matrix4;

/// Which triangles of two geometries, or of one, intersect; for a mesh ([`Bvh`]) and a
/// [`Scene`] alike. Pairs are decided exactly: the two trees are walked together on all
/// cores, and each pair of triangles whose boxes overlap is decided by orientation signs in
/// exact arithmetic (Shewchuk's adaptive predicates). Triangles are closed, so touching at a
/// point or along an edge counts, coplanar ones count where they overlap or touch, and a
/// triangle of zero area meets nothing. Moved corners are moved in `f64`, and the answer is
/// exact for the moved corners (for the identity, for the corners as given).
///
/// In a scene a triangle is named by its instance and its number in that instance's mesh
/// ([`SceneTriangle`](super::SceneTriangle)); each pair of instances is decided in the first
/// instance's mesh space (the second's corners moved there), and only the instances the
/// options see take part (their mask and filter; a mesh's options change nothing).
pub trait Overlap: RayCast {
    /// Every pair `(i, j)` of a triangle `i` of this geometry and a triangle `j` of `other`
    /// placed by `transform` (into this geometry's space; any affine map: nalgebra's
    /// `Matrix4`, glam's `Mat4`...) that intersect, sorted.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh, QueryOptions};
    /// use nalgebra::{Matrix4, Vector3};
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// let all = QueryOptions::default();
    /// // The scene against itself raised by 1.5: the raised ground cuts the sphere, the box
    /// // and the cone; the raised torus and box meet the sphere...
    /// let raised = Matrix4::new_translation(&Vector3::new(0.0, 1.5, 0.0));
    /// let pairs = bvh.intersecting_triangles(&bvh, raised, &all)?;
    /// assert!(!pairs.is_empty());
    /// let object = |i: u32| bvh.mesh().objects()[bvh.mesh().attributes(i as usize).object as usize].as_str();
    /// assert!(pairs.iter().any(|&(i, j)| object(i) == "sphere" && object(j) == "ground"));
    /// // Far apart: none.
    /// let away = Matrix4::new_translation(&Vector3::new(100.0, 0.0, 0.0));
    /// assert!(bvh.intersecting_triangles(&bvh, away, &all)?.is_empty());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidTransform`](crate::Error::InvalidTransform) for a transform that is
    /// not finite, not affine or singular.
    fn intersecting_triangles(
        &self,
        other: &Self,
        transform: impl Into<mint::ColumnMatrix4<f32>>,
        options: &Self::Options<'_>,
    ) -> Result<Vec<(Self::Triangle, Self::Triangle)>>;

    /// Where the geometry intersects itself: every pair `(i, j)`, `i < j`, of its triangles
    /// that share a point, sorted, decided as
    /// [`intersecting_triangles`](Overlap::intersecting_triangles) decides them, but for
    /// neighbours: two triangles of one mesh with a corner at the same position (bit for
    /// bit; shared vertices, seams) are left out, since they touch there by construction,
    /// even where they fold onto each other elsewhere. A closed, clean mesh has none; a
    /// scan's folds, a game model's overlapping parts, a CAD export's slivers show. In a
    /// scene: each instance's own, and every pair of triangles of two instances that meet
    /// (instances that overlap or touch).
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh, QueryOptions, Scene, SceneOptions};
    /// use nalgebra::{Matrix4, Point3, Vector3};
    /// use std::sync::Arc;
    ///
    /// // Two squares of two triangles each, crossing at right angles.
    /// let p = [
    ///     [0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [2.0, 2.0, 0.0], [0.0, 2.0, 0.0],
    ///     [1.0, 1.0, -1.0], [1.0, 1.0, 1.0], [1.0, 3.0, 1.0], [1.0, 3.0, -1.0],
    /// ].map(Point3::from);
    /// let bvh = Bvh::build(Mesh::from_buffers(p.to_vec(), vec![[0, 1, 2], [0, 2, 3], [4, 5, 6], [4, 6, 7]])?);
    /// let pairs = bvh.self_intersections(&QueryOptions::default());
    /// assert!(pairs.iter().all(|&(i, j)| i < 2 && j >= 2)); // only across the squares
    /// assert!(!pairs.is_empty());
    ///
    /// // Which instances of a scene overlap: two copies side by side, a third far away
    /// // (each copy still meets itself).
    /// let bvh = Arc::new(bvh);
    /// let mut scene = Scene::new();
    /// let at = |x: f32| Matrix4::new_translation(&Vector3::new(x, 0.0, 0.0));
    /// let a = scene.add(bvh.clone(), at(0.0))?;
    /// let b = scene.add(bvh.clone(), at(1.5))?;
    /// scene.add(bvh, at(10.0))?;
    /// let pairs = scene.self_intersections(&SceneOptions::default());
    /// let mut overlapping: Vec<_> = pairs
    ///     .iter()
    ///     .map(|(s, t)| (s.instance, t.instance))
    ///     .filter(|(i, j)| i != j)
    ///     .collect();
    /// overlapping.sort();
    /// overlapping.dedup();
    /// assert_eq!(overlapping, [(a, b)]);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    fn self_intersections(
        &self,
        options: &Self::Options<'_>,
    ) -> Vec<(Self::Triangle, Self::Triangle)>;

    /// Whether any triangle of this geometry meets one of `other` placed by `transform`:
    /// [`intersecting_triangles`](Overlap::intersecting_triangles) is not empty, decided the
    /// same way, but the walk stops at the first intersecting pair (a clash check, a
    /// placement test in an editor).
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh, QueryOptions};
    /// use nalgebra::{Matrix4, Vector3};
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// let all = QueryOptions::default();
    /// let step = |y: f32| Matrix4::new_translation(&Vector3::new(0.0, y, 0.0));
    /// assert!(bvh.intersects(&bvh, step(1.5), &all)?);
    /// assert!(!bvh.intersects(&bvh, step(100.0), &all)?);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`intersecting_triangles`](Overlap::intersecting_triangles).
    fn intersects(
        &self,
        other: &Self,
        transform: impl Into<mint::ColumnMatrix4<f32>>,
        options: &Self::Options<'_>,
    ) -> Result<bool>;
}

/// `transform` checked and made `f64`: `None` for the identity.
fn placement(transform: impl Into<mint::ColumnMatrix4<f32>>) -> Result<Option<Matrix4<f64>>> {
    let m = Matrix4::from(transform.into());
    let (to_self, _) = crate::transform::affine(&m)?;
    Ok((to_self != Matrix4::identity()).then_some(to_self))
}

impl Overlap for Bvh {
    fn intersecting_triangles(
        &self,
        other: &Bvh,
        transform: impl Into<mint::ColumnMatrix4<f32>>,
        _: &crate::QueryOptions,
    ) -> Result<Vec<(u32, u32)>> {
        let moved = placement(transform)?;
        Ok(self.meeting_pairs(other, moved.as_ref(), false, false))
    }

    fn self_intersections(&self, _: &crate::QueryOptions) -> Vec<(u32, u32)> {
        self.meeting_pairs(self, None, true, false)
    }

    fn intersects(
        &self,
        other: &Bvh,
        transform: impl Into<mint::ColumnMatrix4<f32>>,
        _: &crate::QueryOptions,
    ) -> Result<bool> {
        let moved = placement(transform)?;
        Ok(!self
            .meeting_pairs(other, moved.as_ref(), false, true)
            .is_empty())
    }
}

impl Overlap for Scene {
    fn intersecting_triangles(
        &self,
        other: &Scene,
        transform: impl Into<mint::ColumnMatrix4<f32>>,
        options: &SceneOptions<'_>,
    ) -> Result<Vec<(Self::Triangle, Self::Triangle)>> {
        let moved = placement(transform)?;
        Ok(self.meeting_pairs(other, moved.as_ref(), options, false, false))
    }

    fn self_intersections(
        &self,
        options: &SceneOptions<'_>,
    ) -> Vec<(Self::Triangle, Self::Triangle)> {
        self.meeting_pairs(self, None, options, true, false)
    }

    fn intersects(
        &self,
        other: &Scene,
        transform: impl Into<mint::ColumnMatrix4<f32>>,
        options: &SceneOptions<'_>,
    ) -> Result<bool> {
        let moved = placement(transform)?;
        let found = self.meeting_pairs(other, moved.as_ref(), options, false, true);
        Ok(!found.is_empty())
    }
}
