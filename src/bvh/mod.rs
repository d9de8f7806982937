//! The bounding volume hierarchy over a mesh's triangles, in four folders, each using only
//! those before it (`tests/layers.rs` checks): `layout` (the wide nodes and the leaves),
//! `build` (the builders, which fill them), `query` (the walks, which read them) and
//! `upkeep` (refit, validation, statistics, saving). `par`, the data-parallel steps, serves
//! them all, and `lazy` what the queries make on first use.
//!
//! The builders make a binary tree: one flat array of 32-byte [`Node`]s, the root first and
//! the two children of a node side by side. The queries walk that tree collapsed into 8-wide
//! nodes ([`wide`]), which test eight boxes at a time and list, for each octant of ray
//! directions, their children farthest first ([`ray_node`]). Triangles are copied into leaf
//! order, corner by corner, in packets of four that one SIMD pass tests
//! ([`TrianglePacket`]), each packet a leaf lane of its own, with a `u32` map back to the
//! mesh's triangle number that is read only when a hit is reported.

mod build;
mod layout;
mod lazy;
mod par;
mod query;
mod upkeep;

// The folders' modules by their short names, for the tree's own modules only; the layers
// above reach the tree's insides through `facade` alone (the compiler holds them to it).
pub(crate) mod facade;
pub(in crate::bvh) use build::tree;
pub(in crate::bvh) use build::{collapse, lbvh, reinsert};
pub(in crate::bvh) use layout::{leaf, ray_node, wide};
pub(in crate::bvh) use query::kernel;
pub(in crate::bvh) use query::{inside, nearest, packet, ray_hits, ray_query, walk, winding};
#[cfg(feature = "serde")]
pub use upkeep::persist::SavedBvh;
use upkeep::stats;

pub use nearest::ClosestPoint;
pub use ray_hits::{CompactHit, Hit, QueryCost};
pub use ray_query::RayQuery;
pub use stats::{MeasuredCost, Stats};
pub use upkeep::raw::RawTree;
pub use upkeep::refit::PoseUpdate;

use crate::{Aabb, Mesh};
use leaf::TrianglePacket;
use nalgebra::{Point3, Unit, Vector3};
use wide::WideNode;

/// The largest `max_leaf_size` the builder accepts.
pub(crate) const MAX_LEAF_SIZE: usize = 1 << 16;

/// Which builder makes the tree: build time against the speed of the rays cast into it,
/// as Embree's `RTC_BUILD_QUALITY_LOW`, `MEDIUM` and `HIGH`. Their measured costs are in
/// docs/benchmarks.md, "Build quality".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BuildQuality {
    /// A linear BVH (Morton codes and a radix sort, no surface-area costs): for geometry
    /// rebuilt every frame. Several times faster to build, slower to cast rays into.
    Fast,
    /// The binned SAH builder, what the benchmarks use.
    #[default]
    Default,
    /// The binned SAH builder, then reinsertion of the subtrees that fit badly where they
    /// landed (Bittner et al. 2013): for static scenes, slower to build, faster to cast into.
    High,
}

/// How the builder trades tree quality against build time, and whom it tells how far it
/// has got.
///
/// ```
/// use meshray::BuildOptions;
/// use meshray::tree::BuildQuality;
///
/// let options = BuildOptions { bins: 32, ..Default::default() };
/// assert_eq!((options.max_leaf_size, options.quality), (4, BuildQuality::Default));
/// let per_frame = BuildOptions { quality: BuildQuality::Fast, ..Default::default() };
/// # let _ = per_frame;
/// ```
#[derive(Clone, Copy)]
pub struct BuildOptions<'a> {
    /// Which builder runs; the options below are the SAH builder's (`Fast` makes leaves of
    /// up to two packets of four, and uses only the costs, for the wide nodes).
    pub quality: BuildQuality,
    /// Bins per axis for the SAH sweep (clamped to 2..=256). More bins find better planes
    /// and cost build time.
    pub bins: usize,
    /// The most triangles a leaf of the binary tree may hold; the SAH decides below this
    /// (clamped to 1..=65536). The tree the queries walk holds one packet of four
    /// triangles per leaf lane, so a larger leaf becomes several lanes (or a node of its
    /// own). 4 by default: one packet, which the ray walk tests inside its loop; leaves of
    /// 8 cast closest hits slower on nearly every mesh and ray set measured
    /// (docs/benchmarks.md has the figures).
    pub max_leaf_size: usize,
    /// The SAH's cost of visiting a node, relative to [`intersection_cost`](Self::intersection_cost).
    pub traversal_cost: f32,
    /// The SAH's cost of testing one packet of four triangles (the leaves test four at
    /// once, so the SAH counts a leaf of 1 to 4 triangles alike).
    pub intersection_cost: f32,
    /// Told `(done, total)`: how many of the mesh's `total` triangles have reached their
    /// leaves, from whichever build thread placed them, every 65,536 triangles or so and
    /// once at the end with `done == total` (default none). The same parameter as
    /// [`LoadOptions::progress`](crate::LoadOptions::progress), so one progress bar can
    /// follow a load and then a build; the library itself prints nothing. Not kept with
    /// the tree ([`Bvh::options`] has none) and not compared by `==`.
    ///
    /// ```
    /// use meshray::{BuildOptions, Bvh, Mesh};
    /// use std::sync::atomic::{AtomicU64, Ordering};
    ///
    /// let mesh = Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// let last = AtomicU64::new(0);
    /// let report = |done: u64, total: u64| {
    ///     last.fetch_max(done, Ordering::Relaxed);
    ///     assert!(done <= total);
    /// };
    /// let bvh = Bvh::build_with(mesh, &BuildOptions { progress: Some(&report), ..Default::default() });
    /// assert_eq!(last.into_inner(), bvh.mesh().triangle_count() as u64);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub progress: Option<&'a (dyn Fn(u64, u64) + Sync)>,
}

impl Default for BuildOptions<'_> {
    fn default() -> Self {
        BuildOptions {
            quality: BuildQuality::Default,
            bins: 16,
            max_leaf_size: 4,
            traversal_cost: 1.0,
            intersection_cost: 1.0,
            progress: None,
        }
    }
}

impl BuildOptions<'_> {
    /// The options without the progress report: what a tree keeps.
    fn kept(&self) -> BuildOptions<'static> {
        BuildOptions {
            quality: self.quality,
            bins: self.bins,
            max_leaf_size: self.max_leaf_size,
            traversal_cost: self.traversal_cost,
            intersection_cost: self.intersection_cost,
            progress: None,
        }
    }
}

/// Every option but the progress report, which is no part of the tree's shape.
impl<'b> PartialEq<BuildOptions<'b>> for BuildOptions<'_> {
    fn eq(&self, other: &BuildOptions<'b>) -> bool {
        (
            self.quality,
            self.bins,
            self.max_leaf_size,
            self.traversal_cost,
            self.intersection_cost,
        ) == (
            other.quality,
            other.bins,
            other.max_leaf_size,
            other.traversal_cost,
            other.intersection_cost,
        )
    }
}

impl std::fmt::Debug for BuildOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuildOptions")
            .field("quality", &self.quality)
            .field("bins", &self.bins)
            .field("max_leaf_size", &self.max_leaf_size)
            .field("traversal_cost", &self.traversal_cost)
            .field("intersection_cost", &self.intersection_cost)
            .field("progress", &self.progress.map(|_| "a function"))
            .finish()
    }
}

/// A node: a box, and either two children (at `first` and `first + 1`, `count == 0`) or a
/// leaf's `count` triangles starting at `first` in leaf order. 32 bytes, aligned so a node
/// never straddles a cache line.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(32))]
pub(crate) struct Node {
    pub min: [f32; 3],
    pub first: u32,
    pub max: [f32; 3],
    pub count: u32,
}

const _: () = assert!(std::mem::size_of::<Node>() == 32);

impl Node {
    const EMPTY: Node = Node {
        min: [0.0; 3],
        first: 0,
        max: [0.0; 3],
        count: 0,
    };

    fn leaf(bounds: &Aabb, first: u32, count: u32) -> Node {
        Node {
            min: bounds.min.coords.into(),
            first,
            max: bounds.max.coords.into(),
            count,
        }
    }

    fn interior(bounds: &Aabb, first_child: u32) -> Node {
        Node {
            min: bounds.min.coords.into(),
            first: first_child,
            max: bounds.max.coords.into(),
            count: 0,
        }
    }

    pub fn is_leaf(&self) -> bool {
        self.count > 0
    }

    pub fn bounds(&self) -> Aabb {
        Aabb::new(Point3::from(self.min), Point3::from(self.max))
    }
}

/// A mesh with its BVH: build it once, then cast rays.
///
/// `Send` and `Sync`: share one across threads (or instances of a [`Scene`](crate::Scene),
/// through an `Arc`). With the `serde` feature (default) it is `Serialize` and
/// `Deserialize`, validated on load (`docs/guide.md`, "Building").
///
/// ```
/// use meshray::prelude::*;
/// use meshray::{Bvh, Mesh, QueryOptions, Ray};
/// use nalgebra::{Point3, Vector3};
///
/// let mesh = Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
/// let bvh = Bvh::build(mesh);
/// let ray = Ray::new(Point3::new(0.0, 1.0, 10.0), Vector3::new(0.0, 0.0, -1.0));
/// let hit = bvh.closest_hit(&ray, &QueryOptions::default()).expect("the sphere is there");
/// let mesh = bvh.mesh();
/// assert_eq!(mesh.objects()[hit.object as usize], "sphere");
/// assert!((hit.t - 9.0).abs() < 1e-2);
/// # Ok::<(), meshray::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Bvh {
    mesh: Mesh,
    /// The 8-wide tree, root first, each leaf lane one packet.
    nodes: Vec<WideNode>,
    /// Its deepest leaf lane's depth (the root's lanes at 1): whether the single-ray
    /// walk's fixed stack holds it ([`kernel::DEPTH_LIMIT`]).
    depth: usize,
    /// The leaves' triangles in packets of four; a leaf owns whole packets, its last one
    /// padded with empty lanes.
    leaf_packets: Vec<TrianglePacket>,
    /// Slot (`packet · 4 + lane`) → the mesh's triangle number; `u32::MAX` for an empty lane.
    triangle_index: Vec<u32>,
    options: BuildOptions<'static>,
    /// The winding-number queries' far-field terms, computed on their first call and
    /// dropped by a refit.
    far_fields: std::sync::OnceLock<winding::FarFields>,
    /// `contains`' lattice of known winding numbers, made on its first call and dropped by
    /// a refit.
    inside_grid: lazy::Lazy<inside::InsideGrid>,
    /// Each triangle's unit geometric normal, by triangle number: made by the first
    /// [`RayCast::hit_normal`](crate::query::RayCast::hit_normal) and dropped by a refit.
    normals: lazy::Lazy<Box<[Unit<Vector3<f32>>]>>,
    /// The SAH cost when the tree was built (or loaded): what a refit tree's is compared
    /// with ([`Bvh::pose`]).
    built_cost: f32,
    /// The positions before the last [`Bvh::pose`], whose buffer the next pose writes into
    /// (empty until the first).
    spare_positions: Vec<nalgebra::Point3<f32>>,
}

impl Bvh {
    /// Builds the BVH with the default [`BuildOptions`]. The BVH owns the mesh; get it back
    /// with [`mesh`](Bvh::mesh) or [`into_mesh`](Bvh::into_mesh).
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh, QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let mesh = Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// let bvh = Bvh::build(mesh);
    /// assert_eq!(bvh.mesh().triangle_count(), 2090);
    /// // Straight down onto the ground (the plane y = 0) from 5 above it.
    /// let ray = Ray::new(Point3::new(0.3, 5.0, 3.1), -Vector3::y());
    /// assert_eq!(bvh.closest_hit(&ray, &QueryOptions::default()).unwrap().t, 5.0);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn build(mesh: Mesh) -> Bvh {
        Bvh::build_with(mesh, &BuildOptions::default())
    }

    /// Builds the BVH with the given options.
    ///
    /// ```
    /// use meshray::{BuildOptions, Bvh, Mesh};
    ///
    /// # let mesh = Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// let options = BuildOptions { max_leaf_size: 4, ..Default::default() };
    /// let bvh = Bvh::build_with(mesh, &options);
    /// assert!(bvh.stats().max_leaf_size <= 4);
    /// assert_eq!(bvh.options(), &options);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn build_with(mesh: Mesh, options: &BuildOptions) -> Bvh {
        let total = mesh.triangle_count() as u64;
        let done = std::sync::atomic::AtomicU64::new(0);
        let report = |placed: usize| {
            if let Some(progress) = options.progress {
                let placed = placed as u64;
                let so_far = done.fetch_add(placed, std::sync::atomic::Ordering::Relaxed) + placed;
                progress(so_far, total);
            }
        };
        // The fast builder hands over the corners in leaf order; the others' leaves read
        // theirs from the mesh, so that no copy sits beside the packets at the build's peak,
        // which a browser tab's memory keeps.
        let (binary, order, sorted) = match options.quality {
            BuildQuality::Fast => {
                // Two packets, whatever `max_leaf_size` asks: its splits at Morton bits leave
                // leaves part-full, and smaller ones built slower trees no faster to cast into
                // and over 60 bytes per triangle (the layout spreads a leaf over lanes).
                let (binary, order, sorted) = lbvh::build(&mesh, 2 * leaf::LANES, &report);
                (binary, order, Some(sorted))
            }
            BuildQuality::Default | BuildQuality::High => {
                let (binary, order) = build::build_triangles(&mesh, options, &report);
                let binary = if options.quality == BuildQuality::High {
                    reinsert::optimize(binary)
                } else {
                    binary
                };
                (binary, order, None)
            }
        };
        let mut collapsed =
            collapse::collapse(&binary, options.traversal_cost, options.intersection_cost);
        drop(binary);
        let (leaf_packets, triangle_index) = match &sorted {
            Some(sorted) => leaf::pack(&mut collapsed, &order, |slot| sorted[slot]),
            None => leaf::pack(&mut collapsed, &order, |slot| {
                mesh.triangle(order[slot] as usize)
            }),
        };
        drop((order, sorted));
        let (nodes, depth) = ray_node::ray_tree(collapsed, leaf::LANES as u32, &|first, count| {
            leaf::packets_box(&leaf_packets, first, count)
        });
        let mut bvh = Bvh {
            mesh,
            nodes,
            depth,
            leaf_packets,
            triangle_index,
            options: options.kept(),
            far_fields: Default::default(),
            inside_grid: Default::default(),
            normals: Default::default(),
            built_cost: 0.0,
            spare_positions: Vec::new(),
        };
        bvh.built_cost = bvh.sah_cost() as f32;
        #[cfg(debug_assertions)]
        if let Err(e) = bvh.validate() {
            panic!("meshray built an invalid BVH (a bug): {e}");
        }
        bvh
    }

    /// The mesh the BVH was built over.
    ///
    /// ```
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// assert_eq!(bvh.mesh().objects()[1], "sphere");
    /// assert_eq!(bvh.mesh().bounds(), bvh.bounds());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn mesh(&self) -> &Mesh {
        &self.mesh
    }

    /// Gives the mesh back.
    ///
    /// ```
    /// use meshray::{Bvh, Mesh};
    /// use nalgebra::Point3;
    ///
    /// let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// let bvh = Bvh::build(Mesh::from_buffers(p, vec![[0, 1, 2]])?);
    /// let mesh = bvh.into_mesh(); // the tree is dropped, the mesh kept
    /// assert_eq!(mesh.triangle_count(), 1);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn into_mesh(self) -> Mesh {
        self.mesh
    }

    /// The options it was built with.
    ///
    /// ```
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// assert_eq!(bvh.options(), &meshray::BuildOptions::default());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn options(&self) -> &BuildOptions<'static> {
        &self.options
    }

    /// The box around the whole mesh.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// # let bvh = meshray::Bvh::build(meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?);
    /// let bounds = bvh.bounds();
    /// assert_eq!((bounds.min.y, bounds.max.y), (0.0, 2.0));
    /// assert!(bounds.contains(&bvh.mesh().bounds()));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn bounds(&self) -> Aabb {
        self.nodes[0].bounds()
    }
}
