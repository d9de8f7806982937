//! Triangle meshes: positions, triangles, and what a hit reports about them.
//!
//! Triangles are numbered `0..n` in the order they were given (for an OBJ file: objects in
//! order, faces in order, polygons fanned from their first corner); every hit names that
//! number, whatever order the BVH keeps them in.

pub use crate::format::Format;
use crate::{Aabb, Error, Result};
use nalgebra::{Point2, Point3, Vector3};

/// Marks "this triangle has no value of the attribute" in [`CornerAttribute::corners`].
pub(crate) const NO_INDEX: u32 = u32::MAX;

/// A per-corner attribute (normals or uvs) indexed like OBJ: values, and per triangle the
/// three indices of its corners' values, so shared values are stored once.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CornerAttribute<T> {
    pub values: Vec<T>,
    /// Per triangle; `[NO_INDEX; 3]` where the triangle has no value.
    pub corners: Vec<[u32; 3]>,
}

impl<T: Copy> CornerAttribute<T> {
    fn get(&self, triangle: usize) -> Option<[T; 3]> {
        let c = self.corners[triangle];
        (c[0] != NO_INDEX).then(|| c.map(|i| self.values[i as usize]))
    }
}

/// A triangle mesh.
///
/// ```
/// use meshray::Mesh;
/// use nalgebra::Point3;
///
/// let positions = vec![
///     Point3::new(0.0, 0.0, 0.0),
///     Point3::new(1.0, 0.0, 0.0),
///     Point3::new(0.0, 1.0, 0.0),
/// ];
/// let mesh = Mesh::from_buffers(positions, vec![[0, 1, 2]])?;
/// assert_eq!(mesh.triangle_count(), 1);
/// assert!(Mesh::from_buffers(Vec::<Point3<f32>>::new(), vec![[0, 1, 2]]).is_err());
/// # Ok::<(), meshray::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Mesh {
    positions: Vec<Point3<f32>>,
    triangles: Vec<[u32; 3]>,
    normals: Option<CornerAttribute<Vector3<f32>>>,
    uvs: Option<CornerAttribute<Point2<f32>>>,
    object_ids: PerTriangle,
    objects: Vec<String>,
    material_ids: PerTriangle,
    materials: Vec<String>,
    load_warnings: Vec<Error>,
}

/// One number per triangle (its object's, its material's), stored once while every triangle
/// has the same: a mesh from buffers or a file of one object and one material keeps 8 bytes
/// per triangle fewer, which a browser tab's wasm memory, that never shrinks, feels.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PerTriangle {
    /// Every triangle's.
    Same(u32),
    /// Triangle `i`'s at `i`.
    Each(Vec<u32>),
}

impl PerTriangle {
    /// `ids`, kept as one number when there is at least one and all are equal.
    pub fn new(ids: Vec<u32>) -> PerTriangle {
        match ids.first() {
            Some(&first) if ids.iter().all(|&i| i == first) => PerTriangle::Same(first),
            _ => PerTriangle::Each(ids),
        }
    }

    /// [`new`](PerTriangle::new), for a mesh of `triangles` triangles: one id each.
    fn of(ids: Vec<u32>, triangles: usize) -> Result<PerTriangle> {
        if ids.len() != triangles {
            return Err(out_of_range("triangle", ids.len() as i64, triangles));
        }
        Ok(PerTriangle::new(ids))
    }

    /// Triangle `i`'s number.
    pub fn get(&self, i: usize) -> u32 {
        match self {
            PerTriangle::Same(id) => *id,
            PerTriangle::Each(ids) => ids[i],
        }
    }

    /// The numbers stored: one for [`Same`](PerTriangle::Same), as the saved format writes it.
    pub fn stored(&self) -> &[u32] {
        match self {
            PerTriangle::Same(id) => std::slice::from_ref(id),
            PerTriangle::Each(ids) => ids,
        }
    }
}

/// Every part of a [`Mesh`] but its load warnings, for the loaders and the saved format,
/// which build and read them whole ([`Mesh::from_parts`], [`Mesh::parts`]).
pub(crate) struct MeshParts {
    pub positions: Vec<Point3<f32>>,
    pub triangles: Vec<[u32; 3]>,
    pub normals: Option<CornerAttribute<Vector3<f32>>>,
    pub uvs: Option<CornerAttribute<Point2<f32>>>,
    /// Per triangle, its object's number in `objects`.
    pub object_ids: PerTriangle,
    pub objects: Vec<String>,
    /// Per triangle, its material's number in `materials`, or [`NO_INDEX`].
    pub material_ids: PerTriangle,
    pub materials: Vec<String>,
}

/// [`MeshParts`], borrowed from a mesh ([`Mesh::parts`]).
#[cfg(feature = "serde")]
pub(crate) struct MeshPartsRef<'a> {
    pub positions: &'a [Point3<f32>],
    pub triangles: &'a [[u32; 3]],
    pub normals: Option<&'a CornerAttribute<Vector3<f32>>>,
    pub uvs: Option<&'a CornerAttribute<Point2<f32>>>,
    pub object_ids: &'a PerTriangle,
    pub objects: &'a [String],
    pub material_ids: &'a PerTriangle,
    pub materials: &'a [String],
}

/// What a triangle carries beside its corners ([`Mesh::attributes`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleAttributes {
    /// The normals given for its corners, if the file had them (not necessarily unit length).
    pub normals: Option<[Vector3<f32>; 3]>,
    /// The texture coordinates given for its corners, if any.
    pub uvs: Option<[Point2<f32>; 3]>,
    /// Its object, an index into [`Mesh::objects`].
    pub object: u32,
    /// Its material, an index into [`Mesh::materials`]; `None` when it has none.
    pub material: Option<u32>,
}

impl Mesh {
    /// The largest coordinate magnitude a mesh may have: 2^40 ≈ 1.1e12 (a millimetre grid the
    /// size of the Earth's orbit fits in it). Within it every query is exact as
    /// [the precision promise](crate#the-precision-promise) says: the f32 products of the
    /// triangle test (up to about 24·2^80·|d|) and the build's surface areas (up to
    /// 12·2^80 per triangle) stay far from f32's overflow at 2^128. Beyond it they overflow
    /// and a ray could silently miss, so loading, [`from_buffers`](Mesh::from_buffers) and
    /// [`Bvh::refit`](crate::Bvh::refit) refuse such a vertex with
    /// [`Error::CoordinateOutOfRange`].
    ///
    /// ```
    /// use meshray::{Error, Mesh};
    /// use nalgebra::Point3;
    ///
    /// let far = |s: f32| vec![Point3::new(0.0, 0.0, 0.0), Point3::new(s, 0.0, 0.0), Point3::new(0.0, s, 0.0)];
    /// assert!(Mesh::from_buffers(far(Mesh::MAX_COORDINATE), vec![[0, 1, 2]]).is_ok());
    /// let refused = Mesh::from_buffers(far(1e20), vec![[0, 1, 2]]);
    /// assert!(matches!(refused, Err(Error::CoordinateOutOfRange { vertex: 1, value: 1e20, .. })));
    /// ```
    pub const MAX_COORDINATE: f32 = 1_099_511_627_776.0;

    /// The smallest a mesh may be: its bounding box must be at least 2^-40 ≈ 9.1e-13 on its
    /// longest side. Smaller, the products of the triangle test fall into f32's subnormal
    /// range and lose digits (measured: a random soup scaled by 2^-55 or less no longer gives
    /// the same answers as the unscaled one, bit for bit; scaled by 2^-40 to 2^33 it does,
    /// `tests/properties.rs`). Refused with [`Error::MeshTooSmall`]. Within a mesh of normal
    /// size, a triangle whose edges are below about 2^-60 has the same trouble: its cross
    /// product underflows, and it behaves as degenerate (never hit) or imprecisely.
    ///
    /// ```
    /// use meshray::{Error, Mesh};
    /// use nalgebra::Point3;
    ///
    /// let tiny = |s: f32| vec![Point3::new(0.0, 0.0, 0.0), Point3::new(s, 0.0, 0.0), Point3::new(0.0, s, 0.0)];
    /// assert!(Mesh::from_buffers(tiny(Mesh::MIN_EXTENT), vec![[0, 1, 2]]).is_ok());
    /// assert!(matches!(Mesh::from_buffers(tiny(1e-20), vec![[0, 1, 2]]), Err(Error::MeshTooSmall { .. })));
    /// ```
    pub const MIN_EXTENT: f32 = 1.0 / 1_099_511_627_776.0;

    /// A mesh from vertex positions and triangles of 0-based indices into them. All
    /// triangles belong to one object named `""` and have no material. Positions may be
    /// nalgebra's `Point3`, `[f32; 3]`, or any math crate's points that convert into `mint`'s
    /// (glam's `Vec3`...).
    ///
    /// ```
    /// use meshray::{Error, Mesh};
    /// use nalgebra::Point3;
    ///
    /// let square = vec![
    ///     Point3::new(0.0, 0.0, 0.0),
    ///     Point3::new(1.0, 0.0, 0.0),
    ///     Point3::new(1.0, 1.0, 0.0),
    ///     Point3::new(0.0, 1.0, 0.0),
    /// ];
    /// let mesh = Mesh::from_buffers(square.clone(), vec![[0, 1, 2], [0, 2, 3]])?;
    /// assert_eq!(mesh.triangle_count(), 2);
    /// assert_eq!(mesh.objects(), [""]);
    ///
    /// // Index 4 does not exist: an error, not a panic.
    /// let bad = Mesh::from_buffers(square, vec![[0, 1, 4]]);
    /// assert!(matches!(bad, Err(Error::IndexOutOfRange { index: 4, count: 4, .. })));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::IndexOutOfRange`] for an index `>= positions.len()`,
    /// [`Error::NonFiniteCoordinate`] for a NaN or infinite coordinate of a vertex a triangle
    /// uses, [`Error::CoordinateOutOfRange`] for one beyond ±[`MAX_COORDINATE`](Mesh::MAX_COORDINATE),
    /// [`Error::MeshTooSmall`] for a mesh under [`MIN_EXTENT`](Mesh::MIN_EXTENT) on every
    /// side, and [`Error::NoTriangles`] for an empty triangle list.
    pub fn from_buffers<P: Into<mint::Point3<f32>>>(
        positions: impl IntoIterator<Item = P>,
        triangles: Vec<[u32; 3]>,
    ) -> Result<Mesh> {
        Mesh::from_parts(MeshParts {
            positions: positions
                .into_iter()
                .map(|p| Point3::from(p.into()))
                .collect(),
            triangles,
            normals: None,
            uvs: None,
            object_ids: PerTriangle::Same(0),
            objects: vec![String::new()],
            material_ids: PerTriangle::Same(NO_INDEX),
            materials: Vec::new(),
        })
    }

    /// Adds per-corner normals: `values`, and for each triangle the indices of its three
    /// corners' normals in `values` (normals need not be unit length; hits normalize the
    /// interpolated one). Values may be nalgebra's `Vector3`, `[f32; 3]`, or any math
    /// crate's vectors that convert into `mint`'s.
    ///
    /// ```
    /// use meshray::Mesh;
    /// use nalgebra::{Point3, Vector3};
    ///
    /// let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// let mesh = Mesh::from_buffers(p, vec![[0, 1, 2]])?.with_corner_normals(vec![Vector3::z()], vec![[0, 0, 0]])?;
    /// assert_eq!(mesh.attributes(0).normals, Some([Vector3::z(); 3]));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::IndexOutOfRange`] when `corners` does not have one entry per triangle or an
    /// index is past `values`.
    pub fn with_corner_normals<V: Into<mint::Vector3<f32>>>(
        mut self,
        values: impl IntoIterator<Item = V>,
        corners: Vec<[u32; 3]>,
    ) -> Result<Mesh> {
        let values: Vec<Vector3<f32>> = values
            .into_iter()
            .map(|v| Vector3::from(v.into()))
            .collect();
        check_corners("normal", values.len(), &corners, self.triangles.len())?;
        self.normals = Some(CornerAttribute { values, corners });
        Ok(self)
    }

    /// Adds per-corner texture coordinates, indexed like
    /// [`with_corner_normals`](Mesh::with_corner_normals) (nalgebra's `Point2`, `[f32; 2]`,
    /// or anything that converts into `mint`'s points).
    ///
    /// ```
    /// use meshray::Mesh;
    /// use nalgebra::{Point2, Point3};
    ///
    /// let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// let uvs = vec![Point2::new(0.0, 0.0), Point2::new(1.0, 0.0), Point2::new(0.0, 1.0)];
    /// let mesh = Mesh::from_buffers(p, vec![[0, 1, 2]])?.with_corner_uvs(uvs.clone(), vec![[0, 1, 2]])?;
    /// assert_eq!(mesh.attributes(0).uvs, Some([uvs[0], uvs[1], uvs[2]]));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::IndexOutOfRange`] when `corners` does not have one entry per triangle or an
    /// index is past `values`.
    pub fn with_corner_uvs<P: Into<mint::Point2<f32>>>(
        mut self,
        values: impl IntoIterator<Item = P>,
        corners: Vec<[u32; 3]>,
    ) -> Result<Mesh> {
        let values: Vec<Point2<f32>> = values.into_iter().map(|p| Point2::from(p.into())).collect();
        check_corners(
            "texture coordinate",
            values.len(),
            &corners,
            self.triangles.len(),
        )?;
        self.uvs = Some(CornerAttribute { values, corners });
        Ok(self)
    }

    /// Names objects and assigns each triangle to one: `ids[i]` indexes `names`.
    ///
    /// ```
    /// use meshray::prelude::*;
    /// use meshray::{Bvh, Mesh, QueryOptions, Ray};
    /// use nalgebra::{Point3, Vector3};
    ///
    /// // Two triangles side by side, one object each.
    /// let p = vec![
    ///     Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0),
    ///     Point3::new(2.0, 0.0, 0.0), Point3::new(3.0, 0.0, 0.0), Point3::new(2.0, 1.0, 0.0),
    /// ];
    /// let mesh = Mesh::from_buffers(p, vec![[0, 1, 2], [3, 4, 5]])?
    ///     .with_objects(vec![0, 1], vec!["left".into(), "right".into()])?;
    /// let bvh = Bvh::build(mesh);
    /// let ray = Ray::new(Point3::new(2.2, 0.2, 1.0), -Vector3::z());
    /// let hit = bvh.closest_hit(&ray, &QueryOptions::default()).unwrap();
    /// assert_eq!(bvh.mesh().objects()[hit.object as usize], "right");
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::IndexOutOfRange`] when `ids` does not have one entry per triangle or an id is
    /// past `names`.
    pub fn with_objects(self, ids: Vec<u32>, names: Vec<String>) -> Result<Mesh> {
        let ids = PerTriangle::of(ids, self.triangles.len())?;
        self.with_object_ids(ids, names)
    }

    /// [`with_objects`](Mesh::with_objects) with the ids as stored.
    pub(crate) fn with_object_ids(mut self, ids: PerTriangle, names: Vec<String>) -> Result<Mesh> {
        check_ids("object", &ids, false, names.len(), self.triangles.len())?;
        self.object_ids = ids;
        self.objects = names;
        Ok(self)
    }

    /// Names materials and assigns them to triangles: `ids[i]` indexes `names`, `None` for
    /// no material.
    ///
    /// ```
    /// use meshray::Mesh;
    /// use nalgebra::Point3;
    ///
    /// let p = vec![Point3::new(0.0, 0.0, 0.0), Point3::new(1.0, 0.0, 0.0), Point3::new(0.0, 1.0, 0.0)];
    /// let mesh = Mesh::from_buffers(p, vec![[0, 1, 2], [0, 2, 1]])?
    ///     .with_materials(vec![Some(0), None], vec!["paint".into()])?;
    /// assert_eq!(mesh.attributes(0).material, Some(0));
    /// assert_eq!(mesh.attributes(1).material, None);
    /// assert_eq!(mesh.materials(), ["paint"]);
    /// // Material 1 does not exist.
    /// assert!(mesh.clone().with_materials(vec![Some(1), None], vec!["paint".into()]).is_err());
    /// assert!(mesh.clone().with_materials(vec![Some(u32::MAX), None], vec!["paint".into()]).is_err());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::IndexOutOfRange`] when `ids` does not have one entry per triangle or an id is
    /// past `names` (`Some(u32::MAX)` always is: the mesh keeps that value for "none").
    pub fn with_materials(self, ids: Vec<Option<u32>>, names: Vec<String>) -> Result<Mesh> {
        if ids.contains(&Some(NO_INDEX)) {
            return Err(Error::IndexOutOfRange {
                path: None,
                line: None,
                what: "material",
                index: NO_INDEX.into(),
                count: names.len(),
            });
        }
        let ids: Vec<u32> = ids.into_iter().map(|m| m.unwrap_or(NO_INDEX)).collect();
        let ids = PerTriangle::of(ids, self.triangles.len())?;
        self.with_material_ids(ids, names)
    }

    /// [`with_materials`](Mesh::with_materials) with the ids as stored ([`NO_INDEX`] for
    /// none).
    pub(crate) fn with_material_ids(
        mut self,
        ids: PerTriangle,
        names: Vec<String>,
    ) -> Result<Mesh> {
        check_ids("material", &ids, true, names.len(), self.triangles.len())?;
        self.material_ids = ids;
        self.materials = names;
        Ok(self)
    }

    /// A mesh from every part, as a loader or the saved format has them, checked as
    /// [`from_buffers`](Mesh::from_buffers) checks its buffers. The attributes' and ids'
    /// lengths are the caller's to get right (one entry per triangle), as
    /// [`diagnostics::validate`](crate::diagnostics::validate) checks them after a load.
    pub(crate) fn from_parts(parts: MeshParts) -> Result<Mesh> {
        let mesh = Mesh {
            positions: parts.positions,
            triangles: parts.triangles,
            normals: parts.normals,
            uvs: parts.uvs,
            object_ids: parts.object_ids,
            objects: parts.objects,
            material_ids: parts.material_ids,
            materials: parts.materials,
            load_warnings: Vec::new(),
        };
        mesh.check()?;
        Ok(mesh)
    }

    /// Every part, borrowed (for the saved format, which copies each into its record once).
    #[cfg(feature = "serde")]
    pub(crate) fn parts(&self) -> MeshPartsRef<'_> {
        MeshPartsRef {
            positions: &self.positions,
            triangles: &self.triangles,
            normals: self.normals.as_ref(),
            uvs: self.uvs.as_ref(),
            object_ids: &self.object_ids,
            objects: &self.objects,
            material_ids: &self.material_ids,
            materials: &self.materials,
        }
    }

    /// This mesh with the warnings of its load ([`load_warnings`](Mesh::load_warnings)).
    pub(crate) fn with_load_warnings(self, load_warnings: Vec<Error>) -> Mesh {
        Mesh {
            load_warnings,
            ..self
        }
    }

    /// Checks new positions for [`Bvh::refit`](crate::Bvh::refit): one per vertex, and every
    /// vertex a triangle uses finite and within [`MAX_COORDINATE`](Mesh::MAX_COORDINATE)
    /// (the first bad one in the triangles' order is reported). One pass over the vertices
    /// when all of them pass; the triangles are walked only to name a bad used vertex. The
    /// used vertices' extent is the caller's to check.
    pub(crate) fn check_new_positions(&self, positions: &[Point3<f32>]) -> Result<()> {
        let expected = self.positions.len();
        if positions.len() != expected {
            return Err(Error::VertexCount {
                expected,
                found: positions.len(),
            });
        }
        check_used_in_range(positions, &self.triangles)
    }

    /// The vertex positions, for the tree's upkeep (which checks what it writes).
    pub(crate) fn positions_mut(&mut self) -> &mut Vec<Point3<f32>> {
        &mut self.positions
    }

    /// Checks what every mesh promises: triangles exist, indices are in range, the
    /// coordinates of every vertex a triangle uses are finite and within
    /// [`MAX_COORDINATE`](Mesh::MAX_COORDINATE). Errors carry no path; loaders add theirs.
    pub(crate) fn check(&self) -> Result<()> {
        if self.triangles.is_empty() {
            return Err(Error::NoTriangles { path: None });
        }
        if self.triangles.len() >= NO_INDEX as usize {
            return Err(Error::IndexOutOfRange {
                path: None,
                line: None,
                what: "triangle",
                index: self.triangles.len() as i64,
                count: NO_INDEX as usize - 1,
            });
        }
        let count = self.positions.len();
        if let Some(&index) = self
            .triangles
            .iter()
            .flatten()
            .find(|&&i| i as usize >= count)
        {
            return Err(Error::IndexOutOfRange {
                path: None,
                line: None,
                what: "vertex",
                index: index.into(),
                count,
            });
        }
        check_coordinates(&self.positions, &self.triangles)
    }

    /// Number of triangles.
    ///
    /// ```
    /// # let mesh = meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// assert_eq!(mesh.triangle_count(), 2090);
    /// assert_eq!(mesh.triangle_count(), mesh.triangles().len());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn triangle_count(&self) -> usize {
        self.triangles.len()
    }

    /// The vertex positions, in the order and number the source gave them, so an array of
    /// the source's vertices is an array of these (what [`Bvh::refit`](crate::Bvh::refit)
    /// takes):
    ///
    /// - OBJ: every `v` line, in file order, unused ones included (`w` divided out):
    ///   `positions()[i]` is the file's vertex `i + 1`;
    /// - PLY: the `vertex` element, in file order;
    /// - STL: three per facet, in facet order (STL shares no vertices);
    /// - glTF: for each node that has a mesh, in a depth-first walk of
    ///   the scene, the `POSITION` values of each triangle primitive in order, moved to world
    ///   space;
    /// - [`from_buffers`](Mesh::from_buffers): the buffer as given.
    ///
    /// Only vertices a triangle uses are checked (finite, within
    /// [`MAX_COORDINATE`](Mesh::MAX_COORDINATE)); an unused one is kept as read.
    ///
    /// ```
    /// use meshray::{LoadOptions, Mesh};
    /// use nalgebra::Point3;
    ///
    /// // The file's vertices, all of them, in its order: faces index them as written.
    /// let obj = b"v 1 0 0\nv 0 1 0\nv 0 0 1\nv 5 5 5\nf 3 1 2\n";
    /// let mesh = Mesh::from_bytes(obj, &LoadOptions { format: Some(meshray::mesh::Format::Obj), ..Default::default() })?;
    /// assert_eq!(mesh.positions().len(), 4);
    /// assert_eq!(mesh.positions()[2], Point3::new(0.0, 0.0, 1.0));
    /// assert_eq!(mesh.triangles(), [[2, 0, 1]]);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// ```
    /// # let mesh = meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// // The ground is the plane y = 0; nothing in the scene goes below it.
    /// assert!(mesh.positions().iter().all(|p| p.y >= 0.0));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn positions(&self) -> &[Point3<f32>] {
        &self.positions
    }

    /// Triangles as indices into [`positions`](Mesh::positions).
    ///
    /// ```
    /// # let mesh = meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// let count = mesh.positions().len();
    /// assert!(mesh.triangles().iter().flatten().all(|&v| (v as usize) < count));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn triangles(&self) -> &[[u32; 3]] {
        &self.triangles
    }

    /// The corners `A, B, C` of triangle `i`.
    ///
    /// ```
    /// # let mesh = meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// let [a, b, c] = mesh.triangle(0);
    /// let [ia, ib, ic] = mesh.triangles()[0];
    /// assert_eq!([a, b, c], [ia, ib, ic].map(|v| mesh.positions()[v as usize]));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Panics
    /// When `i >= triangle_count()`.
    pub fn triangle(&self, i: usize) -> [Point3<f32>; 3] {
        self.triangles[i].map(|v| self.positions[v as usize])
    }

    /// What triangle `i` carries beside its corners: the normals and texture coordinates given
    /// for its corners (OBJ `vn`, `vt`) if the file had them, its object (an index into
    /// [`objects`](Mesh::objects)) and its material (an index into
    /// [`materials`](Mesh::materials), `None` when it has none). A hit reports the same,
    /// interpolated at the hit point ([`Hit`](crate::Hit)).
    ///
    /// ```
    /// use meshray::prelude::*;
    /// # let mesh = meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// let first = mesh.attributes(0);
    /// assert_eq!(mesh.objects()[first.object as usize], "ground");
    /// assert_eq!(mesh.materials()[first.material.unwrap() as usize], "ground_grey");
    /// // The ground is written without normals (`f v`), the sphere with them (`f v/vt/vn`).
    /// assert_eq!((first.normals, first.uvs), (None, None));
    /// let sphere = (0..mesh.triangle_count()).find(|&i| mesh.attributes(i).object == 1).unwrap();
    /// let normals = mesh.attributes(sphere).normals.unwrap();
    /// assert!(normals.iter().all(|n| (n.norm() - 1.0).abs() < 1e-5));
    /// let uv = mesh.attributes(sphere).uvs.unwrap()[0];
    /// assert!((0.0..=1.0).contains(&uv.x) && (0.0..=1.0).contains(&uv.y));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Panics
    /// When `i >= triangle_count()`.
    pub fn attributes(&self, i: usize) -> TriangleAttributes {
        TriangleAttributes {
            normals: self.corner_normals(i),
            uvs: self.corner_uvs(i),
            object: self.object_id(i),
            material: self.material_id(i),
        }
    }

    /// The normals given for triangle `i`'s corners, if any.
    pub(crate) fn corner_normals(&self, i: usize) -> Option<[Vector3<f32>; 3]> {
        self.normals.as_ref()?.get(i)
    }

    /// The texture coordinates given for triangle `i`'s corners, if any.
    pub(crate) fn corner_uvs(&self, i: usize) -> Option<[Point2<f32>; 3]> {
        self.uvs.as_ref()?.get(i)
    }

    /// Triangle `i`'s object.
    pub(crate) fn object_id(&self, i: usize) -> u32 {
        self.object_ids.get(i)
    }

    /// Object names, in order of first appearance; objects with the same name share an id.
    ///
    /// ```
    /// # let mesh = meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// assert_eq!(mesh.objects(), ["ground", "sphere", "box", "torus", "cone"]);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn objects(&self) -> &[String] {
        &self.objects
    }

    /// Triangle `i`'s material, if any.
    pub(crate) fn material_id(&self, i: usize) -> Option<u32> {
        let m = self.material_ids.get(i);
        (m != NO_INDEX).then_some(m)
    }

    /// Material names, in the order of the material libraries.
    ///
    /// ```
    /// # let mesh = meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// assert_eq!(mesh.materials(), ["ground_grey", "sphere_red", "box_green", "torus_blue", "cone_gold"]);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn materials(&self) -> &[String] {
        &self.materials
    }

    /// Problems met while loading that did not cost geometry, such as a material library that
    /// is missing or malformed ([`Error::Material`]). Empty for a clean load.
    ///
    /// ```
    /// use meshray::{Error, LoadOptions, Mesh};
    ///
    /// // From memory, `mtllib` is not followed: the geometry loads, with a warning.
    /// let obj = b"mtllib paint.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
    /// let mesh = Mesh::from_bytes(obj, &LoadOptions { format: Some(meshray::mesh::Format::Obj), ..Default::default() })?;
    /// assert_eq!(mesh.triangle_count(), 1);
    /// assert!(matches!(mesh.load_warnings(), [Error::Material { .. }]));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn load_warnings(&self) -> &[Error] {
        &self.load_warnings
    }

    /// The box around all vertices that triangles use.
    ///
    /// ```
    /// # let mesh = meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// let bounds = mesh.bounds();
    /// assert_eq!((bounds.min.y, bounds.max.y), (0.0, 2.0)); // the ground to the sphere's top
    /// assert_eq!((bounds.min.x, bounds.max.x), (-4.0, 4.0));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    pub fn bounds(&self) -> Aabb {
        used_bounds(&self.positions, &self.triangles)
    }
}

/// The box around the vertices the triangles use (indices in range).
pub(crate) fn used_bounds(positions: &[Point3<f32>], triangles: &[[u32; 3]]) -> Aabb {
    Aabb::from_points(triangles.iter().flatten().map(|&v| &positions[v as usize]))
}

fn out_of_range(what: &'static str, index: i64, count: usize) -> Error {
    Error::IndexOutOfRange {
        path: None,
        line: None,
        what,
        index,
        count,
    }
}

/// Whether a coordinate is one every query handles exactly: finite and within
/// ±[`Mesh::MAX_COORDINATE`].
fn coordinate_in_range(c: f32) -> bool {
    c.abs() <= Mesh::MAX_COORDINATE
}

/// The first vertex, in the order the triangles use them, with a coordinate outside what the
/// queries handle exactly: [`Error::NonFiniteCoordinate`] for a NaN or infinity,
/// [`Error::CoordinateOutOfRange`] beyond ±[`Mesh::MAX_COORDINATE`]; then
/// [`Error::MeshTooSmall`] for a mesh whose box is under [`Mesh::MIN_EXTENT`] on every side.
/// Vertices no triangle uses are never read, so they are not checked. The indices must be in
/// range.
pub(crate) fn check_coordinates(positions: &[Point3<f32>], triangles: &[[u32; 3]]) -> Result<()> {
    check_used_in_range(positions, triangles)?;
    let extent = used_bounds(positions, triangles).extent().max();
    if !(extent >= Mesh::MIN_EXTENT) && !triangles.is_empty() {
        return Err(Error::MeshTooSmall { path: None, extent });
    }
    Ok(())
}

/// The range half of [`check_coordinates`]: one pass over the vertices when all of them are
/// in range (vectorized), and the triangles walked only to name the first bad vertex they
/// use (a bad vertex no triangle uses is no error).
fn check_used_in_range(positions: &[Point3<f32>], triangles: &[[u32; 3]]) -> Result<()> {
    let in_range = |p: &Point3<f32>| p.iter().all(|&c| coordinate_in_range(c));
    // `fold` with `&`, not `all`: no early exit, so the pass vectorizes.
    if positions.iter().fold(true, |ok, p| ok & in_range(p)) {
        return Ok(());
    }
    match triangles
        .iter()
        .flatten()
        .find(|&&v| !in_range(&positions[v as usize]))
    {
        Some(&vertex) => Err(coordinate_error(
            &positions[vertex as usize],
            vertex as usize,
        )),
        None => Ok(()),
    }
}

/// The error for vertex `vertex` at `p`, which failed [`coordinate_in_range`].
fn coordinate_error(p: &Point3<f32>, vertex: usize) -> Error {
    match p.iter().find(|c| !c.is_finite()) {
        Some(_) => Error::NonFiniteCoordinate {
            path: None,
            line: None,
            vertex,
        },
        None => Error::CoordinateOutOfRange {
            path: None,
            line: None,
            vertex,
            value: p
                .iter()
                .copied()
                .fold(0.0, |m, c| if c.abs() > m.abs() { c } else { m }),
        },
    }
}

/// One entry per triangle, each index below `count` (`NO_INDEX` rows mean "none").
fn check_corners(
    what: &'static str,
    count: usize,
    corners: &[[u32; 3]],
    triangles: usize,
) -> Result<()> {
    if corners.len() != triangles {
        return Err(out_of_range("triangle", corners.len() as i64, triangles));
    }
    for c in corners {
        if *c == [NO_INDEX; 3] {
            continue;
        }
        if let Some(&i) = c.iter().find(|&&i| i as usize >= count) {
            return Err(out_of_range(what, i.into(), count));
        }
    }
    Ok(())
}

/// Ids for `triangles` triangles, each below `count` (or [`NO_INDEX`] where `none` is
/// allowed).
fn check_ids(
    what: &'static str,
    ids: &PerTriangle,
    none: bool,
    count: usize,
    triangles: usize,
) -> Result<()> {
    if let PerTriangle::Each(ids) = ids
        && ids.len() != triangles
    {
        return Err(out_of_range("triangle", ids.len() as i64, triangles));
    }
    let stored = ids.stored();
    match stored
        .iter()
        .find(|&&i| !(none && i == NO_INDEX) && i as usize >= count)
    {
        Some(&i) => Err(out_of_range(what, i.into(), count)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tri() -> Mesh {
        let p = vec![
            Point3::new(0.0, 0.0, 0.0),
            Point3::new(1.0, 0.0, 0.0),
            Point3::new(0.0, 1.0, 0.0),
        ];
        Mesh::from_buffers(p, vec![[0, 1, 2], [2, 1, 0]]).unwrap()
    }

    #[test]
    fn buffers_are_checked() {
        let p = vec![Point3::new(0.0, 0.0, 0.0); 3];
        assert!(matches!(
            Mesh::from_buffers(p.clone(), vec![]),
            Err(Error::NoTriangles { .. })
        ));
        assert!(matches!(
            Mesh::from_buffers(p.clone(), vec![[0, 1, 3]]),
            Err(Error::IndexOutOfRange {
                index: 3,
                count: 3,
                ..
            })
        ));
        let mut bad = p;
        bad[1].y = f32::NAN;
        assert!(matches!(
            Mesh::from_buffers(bad, vec![[0, 1, 2]]),
            Err(Error::NonFiniteCoordinate { vertex: 1, .. })
        ));
    }

    #[test]
    fn attributes_from_buffers() {
        let m = tri()
            .with_corner_normals(
                vec![Vector3::z(), -Vector3::z()],
                vec![[0, 0, 0], [1, 1, 1]],
            )
            .unwrap()
            .with_corner_uvs(vec![Point2::new(0.5, 0.5)], vec![[0, 0, 0], [NO_INDEX; 3]])
            .unwrap()
            .with_objects(vec![0, 1], vec!["a".into(), "b".into()])
            .unwrap()
            .with_materials(vec![None, Some(0)], vec!["m".into()])
            .unwrap();
        assert_eq!(m.corner_normals(1), Some([-Vector3::z(); 3]));
        assert_eq!(m.corner_uvs(0), Some([Point2::new(0.5, 0.5); 3]));
        assert_eq!(m.corner_uvs(1), None);
        assert_eq!((m.object_id(1), m.objects()[1].as_str()), (1, "b"));
        assert_eq!((m.material_id(0), m.material_id(1)), (None, Some(0)));
    }

    #[test]
    fn attribute_errors() {
        assert!(
            tri()
                .with_corner_normals(vec![Vector3::z()], vec![[0, 0, 0]])
                .is_err()
        ); // one row short
        assert!(
            tri()
                .with_corner_normals(vec![Vector3::z()], vec![[0, 0, 0], [0, 1, 0]])
                .is_err()
        );
        assert!(
            tri()
                .with_corner_uvs(Vec::<[f32; 2]>::new(), vec![[0, 0, 0], [0, 0, 0]])
                .is_err()
        );
        assert!(
            tri()
                .with_objects(vec![0, 2], vec!["a".into(), "b".into()])
                .is_err()
        );
        assert!(
            tri()
                .with_materials(vec![Some(1), None], vec!["m".into()])
                .is_err()
        );
    }

    #[test]
    fn ids_are_stored_once_while_all_the_same() {
        assert_eq!(tri().object_ids, PerTriangle::Same(0));
        assert_eq!(tri().material_ids, PerTriangle::Same(NO_INDEX));
        let names = || vec!["a".to_string(), "b".to_string()];
        let m = tri().with_objects(vec![1, 1], names()).unwrap();
        assert_eq!(m.object_ids, PerTriangle::Same(1));
        assert_eq!((m.object_id(0), m.object_id(1)), (1, 1));
        let m = tri().with_objects(vec![1, 0], names()).unwrap();
        assert_eq!(m.object_ids, PerTriangle::Each(vec![1, 0]));
        assert_eq!((m.object_id(0), m.object_id(1)), (1, 0));
        // An object id must name an object; u32::MAX stands for "none" for materials only.
        assert!(tri().with_objects(vec![u32::MAX, 0], names()).is_err());
        assert!(tri().with_objects(vec![u32::MAX; 2], names()).is_err());
        assert!(tri().with_objects(vec![0], names()).is_err());
        assert!(tri().with_objects(vec![0; 3], names()).is_err());
        let m = tri().with_materials(vec![None, None], names()).unwrap();
        assert_eq!((m.material_id(0), m.material_id(1)), (None, None));
    }
}
