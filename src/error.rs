//! The crate's one error type.

use crate::Format;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// Everything that can go wrong while loading a mesh or building a structure.
///
/// Queries never fail: a ray that cannot hit gives `None`. Variants that come from a file
/// name it, and the 1-based line where the loader could tell.
///
/// ```
/// use meshray::{Error, LoadOptions, Mesh};
///
/// // Face index 3 on line 2 names a vertex that does not exist.
/// let obj = b"v 0 0 0\nf 1 2 3\n";
/// let error = Mesh::from_bytes(obj, &LoadOptions { format: Some(meshray::mesh::Format::Obj), ..Default::default() }).unwrap_err();
/// assert!(matches!(error, Error::IndexOutOfRange { line: Some(2), what: "vertex", .. }));
/// let message = error.to_string();
/// assert!(message.starts_with("<memory>:2: "), "{message}");
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be opened or read (missing, a directory, no permission...).
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said (shared, so the error is `Clone`: `std::io::Error`
        /// is not).
        source: Arc<std::io::Error>,
    },
    /// The file is not valid in its format (OBJ, MTL, STL, PLY or glTF): an unreadable
    /// number, a face with fewer than three vertices, bytes that are not UTF-8, a truncated
    /// file... Also an extension that names no format this build reads
    /// ([`Mesh::load`](crate::Mesh::load)).
    Parse {
        /// The file.
        path: PathBuf,
        /// The offending line, 1-based, where known.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// A face refers to a vertex (or normal, or texture coordinate) that does not exist, or a
    /// buffer given to [`Mesh::from_buffers`](crate::Mesh::from_buffers) or its `with_*`
    /// companions indexes past its data or has the wrong length.
    IndexOutOfRange {
        /// The file, when the mesh came from one.
        path: Option<PathBuf>,
        /// The offending line, 1-based, where known.
        line: Option<usize>,
        /// What the index refers to: `"vertex"`, `"normal"`, `"texture coordinate"`,
        /// `"object"` or `"material"`; `"triangle"` when a per-triangle list has the wrong
        /// length (then `index` is its length and `count` the number of triangles) or a mesh
        /// has `u32::MAX` triangles or more.
        what: &'static str,
        /// The index as written (OBJ: 1-based or negative) or as given (buffers: 0-based).
        index: i64,
        /// How many elements there were.
        count: usize,
    },
    /// A vertex coordinate is NaN or infinite.
    NonFiniteCoordinate {
        /// The file, when the mesh came from one.
        path: Option<PathBuf>,
        /// The offending line, 1-based, where known.
        line: Option<usize>,
        /// The vertex, 0-based, in the order of the file or buffer.
        vertex: usize,
    },
    /// A vertex coordinate is finite but beyond ±[`Mesh::MAX_COORDINATE`](crate::Mesh::MAX_COORDINATE)
    /// (2^40 ≈ 1.1e12), where f32 products in the queries could overflow and a ray silently
    /// miss.
    CoordinateOutOfRange {
        /// The file, when the mesh came from one.
        path: Option<PathBuf>,
        /// The offending line, 1-based, where known.
        line: Option<usize>,
        /// The vertex, 0-based, in the order of the file or buffer.
        vertex: usize,
        /// Its coordinate of largest magnitude.
        value: f32,
    },
    /// The mesh's bounding box is under [`Mesh::MIN_EXTENT`](crate::Mesh::MIN_EXTENT)
    /// (2^-40 ≈ 9.1e-13) on every side, where f32 products underflow.
    MeshTooSmall {
        /// The file, when the mesh came from one.
        path: Option<PathBuf>,
        /// The longest side of its bounding box.
        extent: f32,
    },
    /// The mesh has no triangles.
    NoTriangles {
        /// The file, when the mesh came from one.
        path: Option<PathBuf>,
    },
    /// A material library could not be loaded. The geometry was kept: this error is reported
    /// beside a loaded mesh (see [`Mesh::load_warnings`](crate::Mesh::load_warnings)).
    Material {
        /// The material file.
        path: PathBuf,
        /// The offending line, 1-based, where known.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// A file is larger than a [`LoadOptions`](crate::LoadOptions) limit allows.
    LimitExceeded {
        /// The file.
        path: PathBuf,
        /// The line where the limit was passed, where known.
        line: Option<usize>,
        /// What was counted: `"bytes"` or `"triangles"`.
        what: &'static str,
        /// The limit.
        limit: u64,
    },
    /// Camera matrices that cannot turn a pixel into a ray (singular or not finite).
    InvalidCamera {
        /// What is wrong.
        reason: &'static str,
    },
    /// A sweep's shape is no shape: a negative, NaN or infinite radius, or a capsule axis
    /// that is not finite (see [`Sweep`](crate::query::Sweep)).
    InvalidShape {
        /// What is wrong.
        reason: String,
    },
    /// A BVH broke one of its invariants (see [`diagnostics::validate`](crate::diagnostics::validate)).
    InvalidBvh {
        /// Which invariant, and where.
        reason: String,
    },
    /// New vertex positions for [`Bvh::refit`](crate::Bvh::refit) are not one per vertex of
    /// the mesh: refitting keeps the topology, so the count must stay.
    VertexCount {
        /// The mesh's vertex count.
        expected: usize,
        /// How many positions were given.
        found: usize,
    },
    /// A scene instance's transform cannot be used (see [`Scene::add`](crate::Scene::add)).
    InvalidTransform {
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A skin, morph targets or a pose that cannot deform the mesh (see
    /// [`Rig`](crate::Rig)): a NaN or infinite weight or delta, a joint matrix that is not
    /// finite and affine, fewer joint matrices than the skin names, or morph weights that are
    /// not one per target.
    InvalidPose {
        /// What is wrong.
        reason: String,
    },
    /// No instance has this id in the scene.
    UnknownInstance {
        /// The id asked for.
        id: u32,
        /// How many instances the scene holds.
        count: usize,
    },
    /// A file that a document refers to (a glTF document's external buffer) could not be
    /// read: missing, a directory, no permission...
    ReferencedFile {
        /// The document that refers to the file.
        document: PathBuf,
        /// What the document calls it: `buffer N` for the N-th buffer (0-based).
        what: String,
        /// The file, where the document says it is.
        path: PathBuf,
        /// What the operating system said (shared, so the error is `Clone`: `std::io::Error`
        /// is not).
        source: Arc<std::io::Error>,
    },
    /// A glTF node's transform cannot place its mesh. A NaN or infinite transform (also a
    /// world transform beyond the range of `f32`) or a matrix that is not affine is an error;
    /// a singular one (a zero scale, used to hide things) is reported beside the loaded
    /// mesh or scene ([`Mesh::load_warnings`](crate::Mesh::load_warnings), and
    /// [`Scene::load_warnings`](crate::Scene::load_warnings)).
    NodeTransform {
        /// The glTF file.
        path: PathBuf,
        /// The node's index in the document.
        node: usize,
        /// The node's name, when it has one.
        name: Option<String>,
        /// What is wrong, and what became of the node: a phrase that follows the node's name.
        reason: &'static str,
    },
    /// The file failed to load in the format its extension names (or the one asked for), and
    /// its content is plainly another format: an OBJ named `.stl`, an ASCII STL named `.obj`...
    /// (see [`Mesh::load`](crate::Mesh::load)).
    WrongFormat {
        /// The file.
        path: PathBuf,
        /// The format it was read as.
        expected: Format,
        /// The format its content shows.
        found: Format,
    },
}

/// `Result` with this crate's [`Error`].
///
/// ```
/// use meshray::{Bvh, Mesh};
///
/// fn triangles_in(path: &str) -> meshray::Result<usize> {
///     Ok(Bvh::build(Mesh::load(path)?).mesh().triangle_count())
/// }
/// assert_eq!(triangles_in(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?, 2090);
/// assert!(matches!(triangles_in("no/such/file.obj"), Err(meshray::Error::Io { .. })));
/// # Ok::<(), meshray::Error>(())
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

fn at(path: &Option<PathBuf>, line: &Option<usize>) -> String {
    match (path, line) {
        (Some(p), Some(l)) => format!("{}:{l}: ", p.display()),
        (Some(p), None) => format!("{}: ", p.display()),
        (None, Some(l)) => format!("line {l}: "),
        (None, None) => String::new(),
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Parse {
                path,
                line,
                message,
            } => {
                write!(f, "{}{message}", at(&Some(path.clone()), line))
            }
            Error::IndexOutOfRange {
                path,
                line,
                what,
                index,
                count,
            } => write!(
                f,
                "{}{what} index {index} is out of range ({count} defined)",
                at(path, line)
            ),
            Error::NonFiniteCoordinate { path, line, vertex } => write!(
                f,
                "{}vertex {vertex} has a NaN or infinite coordinate",
                at(path, line)
            ),
            Error::CoordinateOutOfRange {
                path,
                line,
                vertex,
                value,
            } => write!(
                f,
                "{}vertex {vertex} has the coordinate {value:e}, beyond ±2^40 (about 1.1e12), the \
                 range in which meshray's f32 queries are exact; scale the model down or move it \
                 nearer the origin",
                at(path, line)
            ),
            Error::MeshTooSmall { path, extent } => write!(
                f,
                "{}the mesh spans only {extent:e} (the longest side of its box), under 2^-40 \
                 (about 9.1e-13), where meshray's f32 queries lose exactness; scale it up",
                at(path, &None)
            ),
            Error::NoTriangles { path } => {
                write!(f, "{}the mesh has no triangles", at(path, &None))
            }
            Error::Material {
                path,
                line,
                message,
            } => write!(
                f,
                "{}material library not loaded: {message}",
                at(&Some(path.clone()), line)
            ),
            Error::LimitExceeded {
                path,
                line,
                what,
                limit,
            } => write!(
                f,
                "{}more than {limit} {what} (see LoadOptions)",
                at(&Some(path.clone()), line)
            ),
            Error::InvalidCamera { reason } => write!(f, "invalid camera: {reason}"),
            Error::InvalidShape { reason } => write!(f, "invalid shape: {reason}"),
            Error::InvalidBvh { reason } => write!(f, "invalid BVH: {reason}"),
            Error::VertexCount { expected, found } => write!(
                f,
                "{found} vertex positions for a mesh of {expected} vertices (refit keeps the topology)"
            ),
            Error::InvalidTransform { reason } => write!(f, "invalid instance transform: {reason}"),
            Error::InvalidPose { reason } => write!(f, "invalid pose: {reason}"),
            Error::UnknownInstance { id, count } => {
                write!(f, "no instance {id} in a scene of {count} instances")
            }
            Error::ReferencedFile {
                document,
                what,
                path,
                source,
            } => write!(
                f,
                "{}: {what} cannot be read from {}: {source}",
                document.display(),
                path.display()
            ),
            Error::NodeTransform {
                path,
                node,
                name,
                reason,
            } => {
                write!(f, "{}: node {node}", path.display())?;
                if let Some(name) = name {
                    write!(f, " \"{name}\"")?;
                }
                write!(f, " {reason}")
            }
            Error::WrongFormat {
                path,
                expected,
                found,
            } => {
                let (article, extension) = match found {
                    Format::Obj => ("an", ".obj"),
                    #[cfg(feature = "stl")]
                    Format::Stl => ("an", ".stl"),
                    #[cfg(feature = "ply")]
                    Format::Ply => ("a", ".ply"),
                    #[cfg(feature = "gltf")]
                    Format::Gltf => ("a", ".gltf or .glb"),
                };
                write!(
                    f,
                    "{}: this is {article} {found} file, not {expected}: rename it to {extension} \
                     or load it with LoadOptions::format set to Format::{found:?}",
                    path.display()
                )
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } | Error::ReferencedFile { source, .. } => Some(&**source),
            _ => None,
        }
    }
}
