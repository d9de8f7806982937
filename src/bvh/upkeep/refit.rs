//! Refitting: the vertices moved, the triangles did not; update the boxes, keep the tree.

use crate::bvh::Bvh;
use crate::bvh::leaf::{LANES, TrianglePacket, packets_box};
use crate::bvh::tree::{self, Leaves};
use crate::triangle::LeafTriangle;
use crate::{Aabb, Error, Mesh, Pose, Result, Rig};
use nalgebra::Point3;

/// The mesh tree's leaf entries as the tree upkeep sees them: a leaf lane names `count`
/// triangles from the packet `first`.
struct Packets<'a>(&'a [TrianglePacket]);

impl Leaves for Packets<'_> {
    fn leaf_box(&self, first: u32, count: u32) -> Aabb {
        packets_box(self.0, first, count)
    }
}

impl Bvh {
    /// Moves the mesh's vertices to `positions` (one per vertex of
    /// [`Mesh::positions`](crate::Mesh::positions), in its order, which is the source's: for an
    /// OBJ, its `v` lines) and refits the
    /// tree around them in O(n): the leaves' triangles are copied anew and every box is
    /// recomputed bottom-up, tight as after a build; the tree's shape stays. Queries then
    /// answer exactly for the new positions (the same guarantee as after a build).
    ///
    /// **When to rebuild instead.** A refit keeps the grouping the build chose for the old
    /// shape, so the tree gets worse as triangles move relative to each other: compare
    /// [`stats`](Bvh::stats)`().sah_cost` with its value after the last build, and rebuild
    /// when it has grown by more than about half (queries slow down in proportion). Rigid
    /// motion of the whole mesh does not degrade the tree at all (and is better expressed as
    /// a transform of the rays).
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh, QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let mut bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), -Vector3::z());
    /// let before = bvh.closest_hit(&ray, &QueryOptions::default()).unwrap().t;
    /// // Push everything 0.5 away from the viewer.
    /// let moved: Vec<_> = bvh.mesh().positions().iter().map(|p| p - Vector3::z() * 0.5).collect();
    /// bvh.refit(&moved)?;
    /// let after = bvh.closest_hit(&ray, &QueryOptions::default()).unwrap().t;
    /// assert!((after - before - 0.5).abs() < 1e-4);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::VertexCount`] when `positions` does not have one entry per vertex,
    /// [`Error::NonFiniteCoordinate`] for a NaN or infinite coordinate and
    /// [`Error::CoordinateOutOfRange`] for one beyond ±[`Mesh::MAX_COORDINATE`](crate::Mesh::MAX_COORDINATE)
    /// (vertices no triangle uses are not checked); the BVH is then unchanged.
    pub fn refit(&mut self, positions: &[Point3<f32>]) -> Result<()> {
        self.refill_checked(positions)?;
        self.mesh.positions_mut().copy_from_slice(positions);
        #[cfg(debug_assertions)]
        if let Err(e) = self.validate() {
            panic!("meshray refit an invalid BVH (a bug): {e}");
        }
        Ok(())
    }

    /// How far a posed tree's SAH cost may grow over its cost when built before
    /// [`pose`](Bvh::pose) rebuilds it: past half again, queries have slowed by about as
    /// much, and a rebuild pays for itself within a few hundred thousand rays.
    pub const REBUILD_GROWTH: f32 = 1.5;

    /// Poses the mesh with `rig` (built from this tree's mesh) and refits the tree to where
    /// its vertices are drawn, so queries pick the mesh as it is on screen: exactly, as
    /// after a build over the posed triangles. Then watches the tree's quality: when its SAH
    /// cost has grown past [`REBUILD_GROWTH`](Bvh::REBUILD_GROWTH) times its cost when built
    /// (limbs that moved apart leave boxes that overlap), rebuilds it for this pose with the
    /// same options.
    ///
    /// The posed positions go into a buffer the tree keeps from the previous pose and are
    /// swapped in, so a pose allocates nothing after the first (a rebuild does). The
    /// vertices are posed on all cores (with the `parallel` feature); the refit is O(n).
    ///
    /// ```
    /// use meshray::{Bvh, Mesh};
    /// use meshray::pose::{Pose, Rig};
    /// use nalgebra::{Matrix4, Vector3};
    ///
    /// let mesh = Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// // Every vertex follows joint 0.
    /// let n = mesh.positions().len();
    /// let rig = Rig::new(&mesh).with_skin(vec![[0; 4]; n], vec![[1.0, 0.0, 0.0, 0.0]; n])?;
    /// let mut bvh = Bvh::build(mesh);
    /// let lifted = [Matrix4::new_translation(&Vector3::y())];
    /// let update = bvh.pose(&rig, &Pose { joints: &lifted, morph_weights: &[] })?;
    /// assert!(!update.rebuilt && update.growth < 1.01); // moving it all leaves the tree as good
    /// assert_eq!(bvh.bounds().min.y, 1.0);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Rig::pose_into`] for a pose that does not fit the rig, and as
    /// [`refit`](Bvh::refit) for the posed positions: [`Error::VertexCount`] for a rig of
    /// another vertex count, a posed vertex a triangle uses that is NaN, infinite or out of
    /// range, a pose that collapses the mesh to a point; the BVH is then unchanged.
    pub fn pose(&mut self, rig: &Rig, pose: &Pose) -> Result<PoseUpdate> {
        let mut posed = std::mem::take(&mut self.spare_positions);
        posed.resize(rig.vertex_count(), Point3::origin());
        let moved = rig
            .pose_into(pose, &mut posed)
            .and_then(|()| self.refill_checked(&posed));
        if moved.is_ok() {
            // Swapped in, not copied: the old positions become the next pose's buffer.
            std::mem::swap(self.mesh.positions_mut(), &mut posed);
        }
        self.spare_positions = posed;
        moved?;
        let growth = (self.sah_cost() / f64::from(self.built_cost)) as f32;
        let rebuilt = growth > Bvh::REBUILD_GROWTH;
        if rebuilt {
            let spare = std::mem::take(&mut self.spare_positions);
            *self = Bvh::build_with(self.mesh.clone(), &self.options);
            self.spare_positions = spare;
        }
        #[cfg(debug_assertions)]
        if let Err(e) = self.validate() {
            panic!("meshray posed an invalid BVH (a bug): {e}");
        }
        Ok(PoseUpdate { growth, rebuilt })
    }

    /// Puts back the positions before the last successful [`pose`](Bvh::pose) (which keeps
    /// them as its spare buffer) and refits to them: queries answer as before that pose
    /// (after a rebuild, from the rebuilt tree's shape).
    pub(crate) fn unpose(&mut self) {
        std::mem::swap(self.mesh.positions_mut(), &mut self.spare_positions);
        self.refill_leaves_and_boxes();
    }

    /// Checks `positions` as new positions of the mesh's vertices ([`refit`](Bvh::refit)'s
    /// errors) and refills the leaves and boxes from them; the mesh keeps its own, which the
    /// caller replaces. The used vertices' extent is read off the refit root, and a refit
    /// that collapses the mesh to a point is undone (refilled from the mesh's positions).
    fn refill_checked(&mut self, positions: &[Point3<f32>]) -> Result<()> {
        self.mesh.check_new_positions(positions)?;
        self.refill_from(positions);
        let extent = self.bounds().extent().max();
        if !(extent >= Mesh::MIN_EXTENT) {
            self.refill_leaves_and_boxes();
            return Err(Error::MeshTooSmall { path: None, extent });
        }
        Ok(())
    }

    /// Copies every leaf triangle from the mesh and recomputes every box bottom-up, tight.
    /// Needs only the tree's shape to be sound: slots name triangles of the mesh (or
    /// `u32::MAX`), leaves name packets in range, and interior children come after their
    /// parent in range (loading checks this first; a build or refit keeps it).
    pub(in crate::bvh) fn refill_leaves_and_boxes(&mut self) {
        let positions = std::mem::take(self.mesh.positions_mut());
        self.refill_from(&positions);
        *self.mesh.positions_mut() = positions;
    }

    /// [`refill_leaves_and_boxes`](Bvh::refill_leaves_and_boxes) from `positions` (one per
    /// vertex of the mesh) instead of the mesh's own.
    fn refill_from(&mut self, positions: &[Point3<f32>]) {
        self.far_fields = Default::default();
        self.inside_grid = Default::default();
        self.normals = Default::default();
        let triangles = self.mesh.triangles();
        let fill = |(packet, slots): (&mut TrianglePacket, &[u32])| {
            for (lane, &t) in slots.iter().enumerate() {
                if t != u32::MAX {
                    let [a, b, c] = triangles[t as usize].map(|v| positions[v as usize]);
                    packet.set(lane, &LeafTriangle::new(&a, &b, &c));
                }
            }
        };
        // Packets side by side on rayon's threads (a posed mesh refits every frame).
        #[cfg(feature = "parallel")]
        {
            use rayon::prelude::*;
            self.leaf_packets
                .par_iter_mut()
                .zip(self.triangle_index.par_chunks(LANES))
                .with_min_len(1024)
                .for_each(fill);
        }
        #[cfg(not(feature = "parallel"))]
        self.leaf_packets
            .iter_mut()
            .zip(self.triangle_index.chunks(LANES))
            .for_each(fill);
        // Children always come after their parent in the array (`validate` checks it), so
        // the sweep from the back sees every child refit before its parent.
        let leaves = Packets(&self.leaf_packets);
        tree::refit_all(&mut self.nodes, &leaves);
    }
}

/// What [`Bvh::pose`] did to the tree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PoseUpdate {
    /// The refit tree's SAH cost over its cost when built: 1 is as good as the build, 1.5
    /// about a half slower per ray.
    pub growth: f32,
    /// Whether `growth` passed [`Bvh::REBUILD_GROWTH`], so the tree was rebuilt for this
    /// pose.
    pub rebuilt: bool,
}
