//! File formats, and the choice of format by file extension.

#[cfg(feature = "gltf")]
pub(crate) mod gltf;
pub(crate) mod obj;
#[cfg(feature = "ply")]
pub(crate) mod ply;
pub(crate) mod progress;
#[cfg(feature = "stl")]
pub(crate) mod stl;

use crate::{Error, LoadOptions, Mesh, Result};
use obj::read_limited;
use progress::Progress;
use std::path::Path;

/// A mesh file format, for [`Mesh::load_as`]. Formats other than OBJ each have a cargo
/// feature (all on by default); a build without one has no variant for it.
///
/// ```
/// use meshray::{Format, LoadOptions, Mesh};
/// use std::path::Path;
///
/// // A file whose name does not tell its format: say which it is.
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj");
/// assert_eq!(Format::from_path(Path::new(path)), Some(Format::Obj));
/// let mesh = Mesh::load_as(path, Format::Obj, &LoadOptions::default())?;
/// assert_eq!(mesh.triangle_count(), 2090);
/// # Ok::<(), meshray::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// Wavefront OBJ (with MTL materials), through `tobj`.
    Obj,
    /// STL, binary or ASCII (told apart by content), through `stl_io` (feature `stl`).
    #[cfg(feature = "stl")]
    Stl,
    /// PLY, ASCII or binary, through `ply-rs-bw` (feature `ply`).
    #[cfg(feature = "ply")]
    Ply,
    /// glTF 2.0, `.gltf` (JSON with embedded or external buffers) or `.glb` (binary), through
    /// `gltf` (feature `gltf`).
    #[cfg(feature = "gltf")]
    Gltf,
}

impl Format {
    /// The format a file's extension names (`obj`, `stl`, `ply`, `gltf`, `glb`; any case), if
    /// this build reads it.
    ///
    /// ```
    /// use meshray::Format;
    /// use std::path::Path;
    ///
    /// assert_eq!(Format::from_path(Path::new("bunny.OBJ")), Some(Format::Obj));
    /// assert_eq!(Format::from_path(Path::new("bunny.txt")), None);
    /// ```
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "obj" => Some(Format::Obj),
            #[cfg(feature = "stl")]
            "stl" => Some(Format::Stl),
            #[cfg(feature = "ply")]
            "ply" => Some(Format::Ply),
            #[cfg(feature = "gltf")]
            "gltf" | "glb" => Some(Format::Gltf),
            _ => None,
        }
    }
}

impl Mesh {
    /// Loads a mesh, the format chosen by the file's extension ([`Format::from_path`]).
    ///
    /// ```
    /// let mesh = meshray::Mesh::load(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj"))?;
    /// assert_eq!(mesh.triangle_count(), 2090);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// ```
    /// use meshray::{Error, Mesh};
    ///
    /// let unknown = Mesh::load("notes.txt");
    /// assert!(matches!(unknown, Err(Error::Parse { .. })));
    /// ```
    ///
    /// # Errors
    /// As the format's loader; [`Error::Parse`] naming the file when the extension names no
    /// format this build reads (use [`load_as`](Mesh::load_as) to say which).
    pub fn load(path: impl AsRef<Path>) -> Result<Mesh> {
        let path = path.as_ref();
        Mesh::load_as(path, format_of(path)?, &LoadOptions::default())
    }

    /// Loads a mesh in the given format, whatever the file's name.
    ///
    /// ```
    /// use meshray::{Format, LoadOptions, Mesh};
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj");
    /// let mesh = Mesh::load_as(path, Format::Obj, &LoadOptions::default())?;
    /// assert_eq!(mesh.triangle_count(), 2090);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// As the format's loader: [`load_obj_with`](Mesh::load_obj_with) and those of the other
    /// formats.
    pub fn load_as(path: impl AsRef<Path>, format: Format, options: &LoadOptions) -> Result<Mesh> {
        let path = path.as_ref();
        let bytes = read_limited(path, options.max_file_bytes)?;
        parse_file(path, &bytes, format, options, &Progress::none())
    }

    /// Loads a mesh as [`load_as`](Mesh::load_as) does (the format chosen by extension when
    /// `format` is `None`), telling `progress(done, total)` how many of the file's `total`
    /// bytes the parser has consumed: every MiB or so, and once at the end with
    /// `done == total`. For progress bars on files of hundreds of megabytes; the library
    /// itself prints nothing. (The file is read into memory first: from the page cache
    /// that takes a small part of the time. glTF reports only its end: its JSON is small and
    /// its buffers are read whole.)
    ///
    /// ```
    /// use meshray::{LoadOptions, Mesh};
    /// use std::cell::Cell;
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj");
    /// let last = Cell::new((0, 0));
    /// let mesh = Mesh::load_with_progress(path, None, &LoadOptions::default(), &|done, total| {
    ///     assert!(done <= total);
    ///     last.set((done, total));
    /// })?;
    /// let size = std::fs::metadata(path).unwrap().len();
    /// assert_eq!(last.get(), (size, size));
    /// assert_eq!(mesh.triangle_count(), 2090);
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`load`](Mesh::load) and [`load_as`](Mesh::load_as).
    pub fn load_with_progress(
        path: impl AsRef<Path>,
        format: Option<Format>,
        options: &LoadOptions,
        progress: &dyn Fn(u64, u64),
    ) -> Result<Mesh> {
        let path = path.as_ref();
        let format = match format {
            Some(format) => format,
            None => format_of(path)?,
        };
        let bytes = read_limited(path, options.max_file_bytes)?;
        let progress = Progress::new(progress, bytes.len() as u64);
        let mesh = parse_file(path, &bytes, format, options, &progress)?;
        progress.finish();
        Ok(mesh)
    }
}

/// The format `path`'s extension names, or an error saying how to name one.
fn format_of(path: &Path) -> Result<Format> {
    Format::from_path(path).ok_or_else(|| Error::Parse {
        path: path.into(),
        line: None,
        message: "unknown mesh format: the extension names no format this build reads \
                  (use Mesh::load_as)"
            .into(),
    })
}

/// Parses the bytes of file `path` in `format`.
fn parse_file(
    path: &Path,
    bytes: &[u8],
    format: Format,
    options: &LoadOptions,
    progress: &Progress,
) -> Result<Mesh> {
    match format {
        Format::Obj => obj::load_obj_bytes(path, bytes, options, progress),
        #[cfg(feature = "stl")]
        Format::Stl => stl::parse_stl(path, bytes, options, progress),
        #[cfg(feature = "ply")]
        Format::Ply => ply::parse_ply(path, bytes, options, progress),
        #[cfg(feature = "gltf")]
        Format::Gltf => gltf::load_gltf_bytes(path, bytes, options),
    }
}

/// Puts the file's name into the errors of [`Mesh::from_buffers`] and its companions, which
/// know nothing of files.
pub(crate) fn name_file(error: Error, path: &Path) -> Error {
    match error {
        Error::NoTriangles { .. } => Error::NoTriangles {
            path: Some(path.into()),
        },
        Error::MeshTooSmall { extent, .. } => Error::MeshTooSmall {
            path: Some(path.into()),
            extent,
        },
        Error::NonFiniteCoordinate { line, vertex, .. } => Error::NonFiniteCoordinate {
            path: Some(path.into()),
            line,
            vertex,
        },
        Error::CoordinateOutOfRange {
            line,
            vertex,
            value,
            ..
        } => Error::CoordinateOutOfRange {
            path: Some(path.into()),
            line,
            vertex,
            value,
        },
        Error::IndexOutOfRange {
            line,
            what,
            index,
            count,
            ..
        } => Error::IndexOutOfRange {
            path: Some(path.into()),
            line,
            what,
            index,
            count,
        },
        other => other,
    }
}

/// The error for too many triangles in `path`.
#[cfg(any(feature = "stl", feature = "ply", feature = "gltf"))]
pub(crate) fn too_many_triangles(path: &Path, options: &LoadOptions) -> Error {
    Error::LimitExceeded {
        path: path.into(),
        line: None,
        what: "triangles",
        limit: options.max_triangles as u64,
    }
}
