//! Selection queries: every triangle overlapping a box, a sphere or a frustum.

use crate::bvh::Bvh;
use crate::bvh::leaf::LANES;
use crate::bvh::walk::{Visitor, walk};
use crate::bvh::wide::{WIDTH, WideNode};
use crate::region::{Region, Selector};
use crate::transform::moved_box;
use nalgebra::{Matrix4, Point3};

impl Bvh {
    /// Every triangle overlapping the region (touching counts), by number, ascending: what
    /// [`Region::overlaps_triangle`] over every triangle gives, hidden triangles included.
    /// Empty for a region that holds nothing (an empty box, a NaN). For only the triangles a
    /// camera sees, [`visible_triangles`](crate::picking::visible_triangles).
    ///
    /// ```
    /// use meshray::{Bvh, Mesh};
    /// use meshray::geometry::Aabb;
    /// use meshray::selection::Region;
    /// use nalgebra::Point3;
    ///
    /// let bvh = Bvh::build(Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// let mesh = bvh.mesh();
    /// let everything = bvh.triangles_in(&Region::Box(mesh.bounds()));
    /// assert_eq!(everything.len(), mesh.triangle_count());
    ///
    /// // The sphere of the scene (object 1) lies within 1 of its centre (0, 1, 0).
    /// let shell = bvh.triangles_in(&Region::Sphere { centre: Point3::new(0.0, 1.0, 0.0), radius: 1.0 });
    /// let sphere = (0..mesh.triangle_count() as u32).filter(|&t| mesh.attributes(t as usize).object == 1);
    /// assert!(sphere.into_iter().all(|t| shell.binary_search(&t).is_ok()));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn triangles_in(&self, region: &Region) -> Vec<u32> {
        region
            .selector()
            .map_or_else(Vec::new, |selector| self.select(&selector, None))
    }

    /// The triangles overlapping `region`, ascending, the mesh moved by `to_world` first
    /// (`None`: as it is): its boxes are moved by their corners (rounded outwards, so
    /// culling stays conservative) and its triangles in `f64`.
    pub(crate) fn select(
        &self,
        region: &Selector<'_>,
        to_world: Option<&Matrix4<f64>>,
    ) -> Vec<u32> {
        let mut visitor = SelectVisitor {
            bvh: self,
            region,
            to_world,
            out: Vec::new(),
        };
        walk(&self.nodes, &mut visitor);
        let mut out = visitor.out;
        out.sort_unstable();
        out
    }
}

/// A selection: enter every box that may hold part of the region, in any order; keep the
/// leaf triangles that overlap it.
struct SelectVisitor<'a> {
    bvh: &'a Bvh,
    region: &'a Selector<'a>,
    to_world: Option<&'a Matrix4<f64>>,
    out: Vec<u32>,
}

impl Visitor for SelectVisitor<'_> {
    type Key = ();
    const ORDERED: bool = false;

    fn node(&mut self, _: u32, node: &WideNode) -> (u32, [(); WIDTH]) {
        let entered = node.lanes().filter(|&k| {
            let (mut min, mut max) = node.lane_corners(k);
            if let Some(m) = self.to_world {
                (min, max) = moved_box(m, min, max);
            }
            self.region.may_hold(min, max)
        });
        (entered.fold(0, |mask, k| mask | 1 << k), [(); WIDTH])
    }

    fn worth(&self, _: ()) -> bool {
        true
    }

    fn leaf(&mut self, first: u32, count: u32, _: ()) -> bool {
        let place = |q: [f32; 3]| {
            let q = Point3::from(q).cast::<f64>();
            self.to_world.map_or(q, |m| m.transform_point(&q))
        };
        let first = first as usize * LANES;
        for slot in first..first + count as usize {
            let tri = self.bvh.leaf_packets[slot / LANES].get(slot % LANES);
            if self.region.overlaps(&[tri.a, tri.b, tri.c].map(place)) {
                self.out.push(self.bvh.triangle_index[slot]);
            }
        }
        false
    }
}
