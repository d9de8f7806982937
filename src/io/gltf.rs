//! glTF 2.0 (`.gltf` and `.glb`) through the `gltf` crate (the `gltf` feature, on by default).
//!
//! `gltf` parses and validates the JSON; the buffers are read here, and every accessor is
//! bounds-checked against the bytes really present before it is read, so a file that lies
//! about its buffers is an error naming it, never a panic. A document becomes either one
//! flattened [`Mesh`] in world space ([`Mesh::load`]) or its meshes and the nodes that place
//! them ([`read_scene`]), from which `Scene::load` (in `scene`) builds one BVH per glTF mesh
//! and one instance per node.

mod indices;

use super::options::{inside, read_limited};
use super::{name_file, too_many_triangles};
use crate::{Error, LoadOptions, Mesh, Result};
use base64::Engine;
use gltf::accessor::{DataType, Dimensions};
use gltf::mesh::{Mode, Semantic};
use nalgebra::{Matrix3, Matrix4, Point2, Point3, Vector3};
use std::path::Path;

/// A parsed document with its buffers' bytes.
struct Document<'a> {
    path: &'a Path,
    document: gltf::Document,
    buffers: Vec<Vec<u8>>,
}

/// One use of a glTF mesh by a node: the node, its mesh and its world transform.
struct Placement {
    node: usize,
    /// The node's own name (`name` falls back on the mesh's).
    node_name: Option<String>,
    mesh: usize,
    name: String,
    world: Matrix4<f64>,
    /// Whether the world transform is singular (a zero scale): the mesh covers no area.
    singular: bool,
}

/// A glTF document's default scene as meshes and where they are placed: what
/// [`Scene::load`](crate::Scene::load) builds its trees and instances from.
pub(crate) struct Placed {
    /// Per glTF mesh: `None` when no node uses it or it has no triangles; else the mesh,
    /// or the error that leaves its instances out (too small to compute with alone).
    pub meshes: Vec<Option<Result<Mesh>>>,
    /// One per node with a mesh, in the document's depth-first order.
    pub instances: Vec<PlacedInstance>,
}

/// A node that places a mesh.
pub(crate) struct PlacedInstance {
    /// The glTF mesh's index.
    pub mesh: usize,
    /// The node's world transform.
    pub world: Matrix4<f32>,
    /// The node's name, else its mesh's, else `node N`.
    pub name: String,
    /// The warning to report when the transform is singular (a zero scale), which leaves
    /// the instance out; `None` when it can be placed.
    pub singular: Option<Error>,
}

/// Reads the glTF file at `path` as a scene of placed meshes.
pub(crate) fn read_scene(path: &Path, options: &LoadOptions) -> Result<Placed> {
    let bytes = read_limited(path, options.max_file_bytes)?;
    Document::parse(path, path.parent(), &bytes, options)?.placed(options)
}

/// [`Error::NodeTransform`] reasons.
const NON_FINITE: &str = "has a transform with an infinite or NaN entry \
                          (a number beyond the range of f32)";
const WORLD_NON_FINITE: &str = "has a world transform (its parents' times its own) with \
                                an entry beyond the range of f32";
const NOT_AFFINE: &str = "has a matrix whose last row is not 0 0 0 1: not an affine transform";
const SINGULAR_INSTANCE: &str = "has a singular transform (such as a zero scale), so its \
                                 mesh covers no area: it gets no instance";
const SINGULAR_TRIANGLES: &str = "has a singular transform (such as a zero scale), so its \
                                  mesh covers no area: its triangles are kept, degenerate, \
                                  and no ray hits them";

/// The triangles of one glTF mesh (all its triangle primitives) in its own space.
#[derive(Default)]
struct Part {
    positions: Vec<Point3<f32>>,
    triangles: Vec<[u32; 3]>,
    /// Per vertex, when every primitive has them.
    normals: Vec<Vector3<f32>>,
    uvs: Vec<Point2<f32>>,
    has_normals: bool,
    has_uvs: bool,
    materials: Vec<Option<u32>>,
}

/// Loads the glTF document `bytes` of file `path` as one mesh; external buffers are read
/// from `dir`, or not at all without one.
pub(crate) fn parse(
    path: &Path,
    dir: Option<&Path>,
    bytes: &[u8],
    options: &LoadOptions,
) -> Result<Mesh> {
    Document::parse(path, dir, bytes, options)?.flatten(options)
}

/// The error for more vertices than a mesh can number (or than the triangle limit allows
/// for: three per triangle).
fn too_many_vertices(path: &Path) -> Error {
    parse_error(
        path,
        "more vertices than a mesh can hold (2^32, or three per allowed triangle)".into(),
    )
}

fn parse_error(path: &Path, message: String) -> Error {
    Error::Parse {
        path: path.into(),
        line: None,
        message,
    }
}

/// `message` with every double-quoted span longer than 60 characters cut to its first 40
/// and its length: serde's messages quote the offending JSON string whole, which in a broken
/// document can be megabytes.
fn shorten_quotes(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(512));
    let mut rest = message;
    while let Some(open) = rest.find('"') {
        out.push_str(&rest[..=open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('"') else {
            rest = after;
            break;
        };
        let quoted = &after[..close];
        let length = quoted.chars().count();
        if length > 60 {
            out.extend(quoted.chars().take(40));
            out.push_str(&format!("…\" ({length} characters)"));
        } else {
            out.push_str(quoted);
            out.push('"');
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// The document's JSON (from a `.gltf`, or from a GLB's JSON chunk) and the GLB's binary
/// chunk, every index checked before `gltf` follows any (see [`indices`]), then validated by
/// `gltf`; a required extension meshray does not read is refused first.
fn parse_json(path: &Path, bytes: &[u8]) -> Result<(gltf::Document, Option<Vec<u8>>)> {
    let invalid = |e: gltf::Error| {
        let why = match e {
            // gltf says "invalid glTF: a: Invalid value; b: Missing data;".
            gltf::Error::Validation(problems) => problems
                .iter()
                .map(|(at, what)| format!("{at}: {}", what.to_string().to_lowercase()))
                .collect::<Vec<_>>()
                .join("; "),
            other => shorten_quotes(&other.to_string()),
        };
        parse_error(path, format!("not valid glTF 2.0: {why}"))
    };
    // gltf's GLB reader subtracts the header's 12 bytes from the length the header declares,
    // which overflows for a shorter one: refuse that first.
    if bytes.starts_with(b"glTF")
        && let Some(&[a, b, c, d]) = bytes.get(8..12)
        && u32::from_le_bytes([a, b, c, d]) < 12
    {
        return Err(parse_error(
            path,
            "not valid glTF 2.0: the GLB header declares a length shorter than itself".into(),
        ));
    }
    let gltf::Gltf { document, blob } =
        gltf::Gltf::from_slice_without_validation(bytes).map_err(invalid)?;
    let json = document.into_json();
    if let Some(extension) = json.extensions_required.first() {
        return Err(parse_error(
            path,
            format!("requires the extension {extension}, which meshray does not read"),
        ));
    }
    indices::check(&json).map_err(|message| parse_error(path, message))?;
    let document = gltf::Document::from_json(json).map_err(invalid)?;
    Ok((document, blob))
}

/// Names the document in the error for an external buffer file it refers to.
fn name_document(error: Error, document: &Path, buffer: usize) -> Error {
    match error {
        Error::Io { path, source } => Error::ReferencedFile {
            document: document.into(),
            what: format!("buffer {buffer}"),
            path,
            source,
        },
        other => other,
    }
}

impl<'a> Document<'a> {
    /// Parses and validates the document and reads its buffers. `dir` is where external
    /// buffers are looked for (`None`: the document came from memory).
    fn parse(
        path: &'a Path,
        dir: Option<&Path>,
        bytes: &[u8],
        options: &LoadOptions,
    ) -> Result<Document<'a>> {
        let (document, mut blob) = parse_json(path, bytes)?;
        let mut buffers = Vec::new();
        for buffer in document.buffers() {
            let data = match buffer.source() {
                gltf::buffer::Source::Bin => blob.take().ok_or_else(|| {
                    parse_error(path, "a buffer refers to a missing GLB binary chunk".into())
                })?,
                gltf::buffer::Source::Uri(uri) => read_uri(path, dir, uri, options)
                    .map_err(|e| name_document(e, path, buffer.index()))?,
            };
            if data.len() < buffer.length() {
                return Err(parse_error(
                    path,
                    format!(
                        "buffer {} holds {} bytes, the document says {}",
                        buffer.index(),
                        data.len(),
                        buffer.length()
                    ),
                ));
            }
            buffers.push(data);
        }
        Ok(Document {
            path,
            document,
            buffers,
        })
    }

    /// The nodes that place meshes, with their world transforms, depth first.
    fn placements(&self) -> Result<Vec<Placement>> {
        let doc = &self.document;
        let roots: Vec<gltf::Node> = match doc.default_scene().or_else(|| doc.scenes().next()) {
            Some(scene) => scene.nodes().collect(),
            None => {
                let mut is_child = vec![false; doc.nodes().len()];
                for node in doc.nodes() {
                    for child in node.children() {
                        is_child[child.index()] = true;
                    }
                }
                doc.nodes().filter(|n| !is_child[n.index()]).collect()
            }
        };
        let mut visited = vec![false; doc.nodes().len()];
        let mut placements = Vec::new();
        // An explicit stack: a deep hierarchy cannot overflow the call stack.
        let mut stack: Vec<(gltf::Node, Matrix4<f64>)> = roots
            .into_iter()
            .rev()
            .map(|n| (n, Matrix4::identity()))
            .collect();
        while let Some((node, parent)) = stack.pop() {
            if std::mem::replace(&mut visited[node.index()], true) {
                return Err(parse_error(
                    self.path,
                    format!(
                        "node {} is reached twice: the node hierarchy must be a tree",
                        node.index()
                    ),
                ));
            }
            let world = parent * self.local_transform(&node)?;
            if world
                .iter()
                .any(|x| !x.is_finite() || x.abs() > f64::from(f32::MAX))
            {
                return Err(self.node_error(node.index(), node.name(), WORLD_NON_FINITE));
            }
            if let Some(mesh) = node.mesh() {
                let name = node
                    .name()
                    .or(mesh.name())
                    .map_or_else(|| format!("node {}", node.index()), str::to_owned);
                placements.push(Placement {
                    node: node.index(),
                    node_name: node.name().map(str::to_owned),
                    mesh: mesh.index(),
                    name,
                    world,
                    singular: crate::transform::affine(&world.cast::<f32>()).is_err(),
                });
            }
            let children: Vec<gltf::Node> = node.children().collect();
            stack.extend(children.into_iter().rev().map(|c| (c, world)));
        }
        Ok(placements)
    }

    /// A node's own transform, refused when it has an entry that is not finite or a matrix
    /// that is not affine.
    fn local_transform(&self, node: &gltf::Node) -> Result<Matrix4<f64>> {
        let transform = node.transform();
        let given: Vec<f32> = match transform.clone() {
            gltf::scene::Transform::Matrix { matrix } => matrix.concat(),
            gltf::scene::Transform::Decomposed {
                translation,
                rotation,
                scale,
            } => [&translation[..], &rotation, &scale].concat(),
        };
        // The matrix gltf makes of a translation, rotation and scale can overflow too.
        let matrix = Matrix4::from(transform.matrix());
        if !given.iter().chain(matrix.iter()).all(|x| x.is_finite()) {
            return Err(self.node_error(node.index(), node.name(), NON_FINITE));
        }
        if matrix.row(3) != nalgebra::RowVector4::new(0.0, 0.0, 0.0, 1.0) {
            return Err(self.node_error(node.index(), node.name(), NOT_AFFINE));
        }
        Ok(matrix.cast::<f64>())
    }

    /// The error (or warning) for node `node` named `name` whose transform cannot place it.
    fn node_error(&self, node: usize, name: Option<&str>, reason: &'static str) -> Error {
        Error::NodeTransform {
            path: self.path.into(),
            node,
            name: name.map(str::to_owned),
            reason,
        }
    }

    /// The triangles of mesh `index` in its own space; the triangle count is checked against
    /// `budget` before anything is stored.
    fn part(&self, index: usize, budget: usize, options: &LoadOptions) -> Result<Part> {
        let mesh = self
            .document
            .meshes()
            .nth(index)
            .expect("a node's mesh index was validated by gltf");
        let mut part = Part {
            has_normals: true,
            has_uvs: true,
            ..Part::default()
        };
        for primitive in mesh.primitives() {
            if !matches!(
                primitive.mode(),
                Mode::Triangles | Mode::TriangleStrip | Mode::TriangleFan
            ) {
                continue;
            }
            let what = |name: &str| format!("mesh {index} primitive {}: {name}", primitive.index());
            let positions = primitive
                .get(&Semantic::Positions)
                .ok_or_else(|| parse_error(self.path, what("no POSITION")))?;
            if positions.data_type() != DataType::F32 || positions.dimensions() != Dimensions::Vec3
            {
                return Err(parse_error(
                    self.path,
                    what("POSITION is not float VEC3 (quantized positions are not read)"),
                ));
            }
            // Positions first: reading them checks the accessor against the bytes present,
            // so no count the JSON claims is trusted before that.
            let xyz = self.read_floats(&positions, 3, &what("POSITION"))?;
            let count = xyz.len() / 3;
            let base = part.positions.len();
            if base + count > u32::MAX as usize {
                return Err(too_many_vertices(self.path));
            }
            let corners: Vec<u32> = match primitive.indices() {
                Some(indices) => self.read_indices(&indices, &what("indices"))?,
                None => (0..count as u32).collect(),
            };
            if let Some(&index) = corners.iter().find(|&&i| i as usize >= count) {
                return Err(Error::IndexOutOfRange {
                    path: Some(self.path.into()),
                    line: None,
                    what: "vertex",
                    index: index.into(),
                    count,
                });
            }
            let triangles = assemble(primitive.mode(), &corners);
            if part.triangles.len() + triangles.len() > budget {
                return Err(too_many_triangles(self.path, options));
            }
            part.positions
                .extend(xyz.chunks_exact(3).map(|p| Point3::new(p[0], p[1], p[2])));
            let base = base as u32;
            part.triangles
                .extend(triangles.iter().map(|t| t.map(|i| base + i)));
            let material = primitive.material().index().map(|m| m as u32);
            part.materials
                .extend(std::iter::repeat_n(material, triangles.len()));

            match primitive.get(&Semantic::Normals) {
                Some(n) if part.has_normals && n.count() == count => {
                    let n = self.read_floats(&n, 3, &what("NORMAL"))?;
                    part.normals
                        .extend(n.chunks_exact(3).map(|v| Vector3::new(v[0], v[1], v[2])));
                }
                _ => part.has_normals = false,
            }
            match primitive.get(&Semantic::TexCoords(0)) {
                Some(uv) if part.has_uvs && uv.count() == count => {
                    let uv = self.read_floats(&uv, 2, &what("TEXCOORD_0"))?;
                    part.uvs
                        .extend(uv.chunks_exact(2).map(|v| Point2::new(v[0], v[1])));
                }
                _ => part.has_uvs = false,
            }
        }
        Ok(part)
    }

    /// The bytes of an accessor's elements, checked to lie inside its view and buffer:
    /// `(bytes, stride, element size)`.
    fn accessor_bytes(
        &self,
        accessor: &gltf::Accessor,
        what: &str,
    ) -> Result<(&[u8], usize, usize)> {
        let bad = |why: &str| parse_error(self.path, format!("{what}: {why}"));
        if accessor.sparse().is_some() {
            return Err(bad("sparse accessors are not read"));
        }
        let size = accessor.size();
        let Some(view) = accessor.view() else {
            return Err(bad("the accessor has no buffer view"));
        };
        let stride = view.stride().unwrap_or(size);
        if stride < size {
            return Err(bad("the buffer view's stride is smaller than an element"));
        }
        let count = accessor.count();
        let buffer = &self.buffers[view.buffer().index()];
        let view_end = view.offset().checked_add(view.length());
        let Some(view_bytes) = view_end.and_then(|end| buffer.get(view.offset()..end)) else {
            return Err(bad("the buffer view runs past its buffer"));
        };
        if count == 0 {
            return Ok((&[], stride, size));
        }
        let end = (count - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(size))
            .and_then(|x| x.checked_add(accessor.offset()));
        match end.and_then(|end| view_bytes.get(accessor.offset()..end)) {
            Some(bytes) => Ok((bytes, stride, size)),
            None => Err(bad("the accessor runs past its buffer view")),
        }
    }

    /// Reads a float accessor of `n` components (normalized unsigned integers are scaled to
    /// 0..1, as for texture coordinates), flattened.
    fn read_floats(&self, accessor: &gltf::Accessor, n: usize, what: &str) -> Result<Vec<f32>> {
        let dims = match accessor.dimensions() {
            Dimensions::Vec2 => 2,
            Dimensions::Vec3 => 3,
            _ => 0,
        };
        let (component, scale) = match accessor.data_type() {
            DataType::F32 => (4, 1.0),
            DataType::U8 if accessor.normalized() => (1, 1.0 / 255.0),
            DataType::U16 if accessor.normalized() => (2, 1.0 / 65535.0),
            _ => (0, 0.0),
        };
        if dims != n || component == 0 {
            return Err(parse_error(
                self.path,
                format!("{what}: unsupported component type or element type"),
            ));
        }
        let (bytes, stride, size) = self.accessor_bytes(accessor, what)?;
        let mut out = Vec::with_capacity(accessor.count() * n);
        for start in (0..bytes.len()).step_by(stride) {
            let element = &bytes[start..start + size];
            out.extend(element.chunks_exact(component).map(|c| match component {
                4 => f32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                2 => f32::from(u16::from_le_bytes([c[0], c[1]])) * scale,
                _ => f32::from(c[0]) * scale,
            }));
        }
        Ok(out)
    }

    /// Reads an index accessor (unsigned byte, short or int scalars).
    fn read_indices(&self, accessor: &gltf::Accessor, what: &str) -> Result<Vec<u32>> {
        let component = match accessor.data_type() {
            DataType::U8 => 1,
            DataType::U16 => 2,
            DataType::U32 => 4,
            _ => 0,
        };
        if accessor.dimensions() != Dimensions::Scalar || component == 0 {
            return Err(parse_error(
                self.path,
                format!("{what}: indices must be unsigned integer scalars"),
            ));
        }
        let (bytes, stride, _) = self.accessor_bytes(accessor, what)?;
        Ok((0..bytes.len())
            .step_by(stride)
            .map(|s| match component {
                4 => u32::from_le_bytes([bytes[s], bytes[s + 1], bytes[s + 2], bytes[s + 3]]),
                2 => u16::from_le_bytes([bytes[s], bytes[s + 1]]).into(),
                _ => bytes[s].into(),
            })
            .collect())
    }

    /// Every placement's triangles in world space, as one mesh.
    fn flatten(&self, options: &LoadOptions) -> Result<Mesh> {
        let placements = self.placements()?;
        let mut parts: Vec<Option<Part>> =
            (0..self.document.meshes().len()).map(|_| None).collect();
        let mut total = 0usize;
        for placement in &placements {
            if parts[placement.mesh].is_none() {
                let part = self.part(placement.mesh, options.max_triangles, options)?;
                parts[placement.mesh] = Some(part);
            }
            total += parts[placement.mesh]
                .as_ref()
                .map_or(0, |p| p.triangles.len());
            if total > options.max_triangles {
                return Err(too_many_triangles(self.path, options));
            }
        }
        let has_normals = placements
            .iter()
            .all(|p| parts[p.mesh].as_ref().is_some_and(|m| m.has_normals));
        let has_uvs = placements
            .iter()
            .all(|p| parts[p.mesh].as_ref().is_some_and(|m| m.has_uvs));
        // Placements copy their mesh's vertices: bound the total before allocating it.
        let vertices: usize = placements
            .iter()
            .map(|p| parts[p.mesh].as_ref().map_or(0, |m| m.positions.len()))
            .sum();
        if vertices > u32::MAX as usize || vertices / 3 > options.max_triangles {
            return Err(too_many_vertices(self.path));
        }
        let mut world = Part {
            has_normals,
            has_uvs,
            ..Part::default()
        };
        let mut object_ids = Vec::new();
        let mut warnings = Vec::new();
        for (object, placement) in placements.iter().enumerate() {
            let part = parts[placement.mesh].as_ref().expect("read above");
            if placement.singular && !part.triangles.is_empty() {
                let name = placement.node_name.as_deref();
                warnings.push(self.node_error(placement.node, name, SINGULAR_TRIANGLES));
            }
            let base = world.positions.len() as u32;
            let linear = placement.world.fixed_view::<3, 3>(0, 0);
            let mirrored = linear.determinant() < 0.0;
            world.positions.extend(part.positions.iter().map(|p| {
                placement
                    .world
                    .transform_point(&p.cast::<f64>())
                    .cast::<f32>()
            }));
            world
                .triangles
                .extend(part.triangles.iter().map(|&[a, b, c]| {
                    let t = if mirrored { [a, c, b] } else { [a, b, c] };
                    t.map(|i| base + i)
                }));
            if has_normals {
                let normal_matrix: Matrix3<f64> = linear
                    .try_inverse()
                    .map_or_else(Matrix3::zeros, |m| m.transpose());
                world.normals.extend(
                    part.normals
                        .iter()
                        .map(|n| (normal_matrix * n.cast::<f64>()).cast::<f32>()),
                );
            }
            if has_uvs {
                world.uvs.extend_from_slice(&part.uvs);
            }
            object_ids.extend(std::iter::repeat_n(object as u32, part.triangles.len()));
            world.materials.extend_from_slice(&part.materials);
        }
        let names = placements.iter().map(|p| p.name.clone()).collect();
        let mesh = self
            .mesh_of(world)?
            .with_objects(object_ids, names)
            .map_err(|e| name_file(e, self.path))?;
        Ok(mesh.with_load_warnings(warnings))
    }

    /// The default scene as meshes and their placements, for
    /// [`Scene::load`](crate::Scene::load) (in `scene`, the layer above) to build one tree per
    /// mesh and one instance per placement: the meshes placements use, read in placement
    /// order within the triangle budget.
    fn placed(&self, options: &LoadOptions) -> Result<Placed> {
        let placements = self.placements()?;
        let mut meshes: Vec<Option<Option<Result<Mesh>>>> =
            (0..self.document.meshes().len()).map(|_| None).collect();
        let mut total = 0usize;
        let mut instances = Vec::new();
        for placement in &placements {
            if meshes[placement.mesh].is_none() {
                let budget = options.max_triangles.saturating_sub(total);
                let part = self.part(placement.mesh, budget, options)?;
                total += part.triangles.len();
                let mesh = if part.triangles.is_empty() {
                    None
                } else {
                    match self.mesh_of(part) {
                        Ok(mesh) => Some(Ok(mesh)),
                        // Too small to compute with on its own (all of it degenerate, say),
                        // though it may sit in a flattened mesh of normal size: its
                        // instances are left out and reported.
                        Err(e @ Error::MeshTooSmall { .. }) => Some(Err(e)),
                        Err(e) => return Err(e),
                    }
                };
                meshes[placement.mesh] = Some(mesh);
            }
            let name = placement.node_name.as_deref();
            instances.push(PlacedInstance {
                mesh: placement.mesh,
                world: placement.world.cast::<f32>(),
                name: placement.name.clone(),
                singular: placement
                    .singular
                    .then(|| self.node_error(placement.node, name, SINGULAR_INSTANCE)),
            });
        }
        Ok(Placed {
            meshes: meshes.into_iter().map(Option::flatten).collect(),
            instances,
        })
    }

    /// A part as a mesh, with its materials and, when the part has them, its normals and
    /// texture coordinates (per vertex, so indexed like the positions).
    fn mesh_of(&self, part: Part) -> Result<Mesh> {
        let corners = part.triangles.clone();
        let mut mesh = Mesh::from_buffers(part.positions, part.triangles)
            .and_then(|m| m.with_materials(part.materials, self.material_names()));
        if part.has_normals {
            mesh = mesh.and_then(|m| m.with_corner_normals(part.normals, corners.clone()));
        }
        if part.has_uvs {
            mesh = mesh.and_then(|m| m.with_corner_uvs(part.uvs, corners));
        }
        mesh.map_err(|e| name_file(e, self.path))
    }

    fn material_names(&self) -> Vec<String> {
        self.document
            .materials()
            .enumerate()
            .map(|(i, m)| {
                m.name()
                    .map_or_else(|| format!("material {i}"), str::to_owned)
            })
            .collect()
    }
}

/// Triangles from a primitive's corner list: in threes, as a strip (every other triangle
/// turned so all keep the strip's winding) or as a fan around the first corner.
fn assemble(mode: Mode, corners: &[u32]) -> Vec<[u32; 3]> {
    match mode {
        Mode::TriangleStrip => corners
            .windows(3)
            .enumerate()
            .map(|(i, w)| {
                if i % 2 == 0 {
                    [w[0], w[1], w[2]]
                } else {
                    [w[1], w[0], w[2]]
                }
            })
            .collect(),
        Mode::TriangleFan => match corners.split_first() {
            Some((&first, rest)) => rest.windows(2).map(|w| [first, w[0], w[1]]).collect(),
            None => Vec::new(),
        },
        _ => corners
            .chunks_exact(3)
            .map(|t| [t[0], t[1], t[2]])
            .collect(),
    }
}

/// A buffer's bytes from its URI: a base64 `data:` URI, or a file relative to the document.
fn read_uri(path: &Path, dir: Option<&Path>, uri: &str, options: &LoadOptions) -> Result<Vec<u8>> {
    if let Some(data) = uri.strip_prefix("data:") {
        let Some((_, payload)) = data.split_once(";base64,") else {
            return Err(parse_error(path, "a data URI that is not base64".into()));
        };
        return base64::engine::general_purpose::STANDARD
            .decode(payload)
            .map_err(|e| parse_error(path, format!("a buffer's base64 data: {e}")));
    }
    let Some(dir) = dir else {
        return Err(parse_error(
            path,
            format!("external buffer {uri} cannot be read: the document came from memory"),
        ));
    };
    let relative = Path::new(&percent_decode(uri)).to_path_buf();
    if uri.contains("://") || (options.confine_materials && !inside(dir, &relative)) {
        return Err(parse_error(
            path,
            format!(
                "buffer {uri} is outside the document's directory, not read \
                 (see LoadOptions::confine_materials)"
            ),
        ));
    }
    read_limited(&dir.join(relative), options.max_file_bytes)
}

/// Decodes `%XX` escapes in a relative URI (a space is `%20`); other bytes pass through.
fn percent_decode(uri: &str) -> String {
    let bytes = uri.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::shorten_quotes;

    #[test]
    fn long_quoted_json_is_cut_in_messages() {
        let long = "S".repeat(5000);
        let message = format!("invalid type: string \"{long}\", expected struct Sampler at line 2");
        let short = shorten_quotes(&message);
        assert_eq!(
            short,
            format!(
                "invalid type: string \"{}…\" (5000 characters), expected struct Sampler at line 2",
                "S".repeat(40)
            )
        );
        // Short quotes, text without quotes and an unclosed quote stay as they are.
        for kept in [
            "unknown field \"nodes\", expected one of \"a\"",
            "no quotes",
            "one \" quote",
        ] {
            assert_eq!(shorten_quotes(kept), kept);
        }
    }
}
