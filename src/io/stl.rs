//! STL, binary and ASCII, through `stl_io` (the `stl` feature, on by default), and the
//! choice of format by file extension.

use super::obj::read_limited;
use crate::{Error, LoadOptions, Mesh, Result};
use nalgebra::Point3;
use std::io::Cursor;
use std::path::Path;

/// A mesh file format, for [`Mesh::load_as`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// Wavefront OBJ (with MTL materials), through `tobj`.
    Obj,
    /// STL, binary or ASCII (told apart by content), through `stl_io`.
    Stl,
}

impl Format {
    /// The format a file's extension names (`obj`, `stl`, any case), if any.
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "obj" => Some(Format::Obj),
            "stl" => Some(Format::Stl),
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
    /// # Errors
    /// As the format's loader; [`Error::Parse`] naming the file when the extension names no
    /// format this build reads (use [`load_as`](Mesh::load_as) to say which).
    pub fn load(path: impl AsRef<Path>) -> Result<Mesh> {
        let path = path.as_ref();
        let format = Format::from_path(path).ok_or_else(|| Error::Parse {
            path: path.into(),
            line: None,
            message: "unknown mesh format: the extension is not .obj or .stl (use Mesh::load_as)"
                .into(),
        })?;
        Mesh::load_as(path, format, &LoadOptions::default())
    }

    /// Loads a mesh in the given format, whatever the file's name.
    ///
    /// # Errors
    /// As [`load_obj_with`](Mesh::load_obj_with) or [`load_stl_with`](Mesh::load_stl_with).
    pub fn load_as(path: impl AsRef<Path>, format: Format, options: &LoadOptions) -> Result<Mesh> {
        match format {
            Format::Obj => Mesh::load_obj_with(path, options),
            Format::Stl => Mesh::load_stl_with(path, options),
        }
    }

    /// Loads an STL file, binary or ASCII. Every facet becomes a triangle, in file order, with
    /// its own three corners (STL stores no sharing; neighbours' shared corners are the same
    /// floats, so the watertight test still sees them as shared). One object named `""`, no
    /// materials; the facet normals are ignored (hits compute theirs).
    ///
    /// # Errors
    /// [`Error::Io`] for a missing or unreadable file, [`Error::Parse`] naming the file (and
    /// the facet) for malformed or truncated data, [`Error::NonFiniteCoordinate`],
    /// [`Error::NoTriangles`], and [`Error::LimitExceeded`] past the [`LoadOptions`] limits.
    pub fn load_stl_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Mesh> {
        let path = path.as_ref();
        let bytes = read_limited(path, options.max_file_bytes)?;
        parse_stl(path, &bytes, options)
    }

    /// [`load_stl_with`](Mesh::load_stl_with) with the default [`LoadOptions`].
    ///
    /// # Errors
    /// As [`load_stl_with`](Mesh::load_stl_with).
    pub fn load_stl(path: impl AsRef<Path>) -> Result<Mesh> {
        Mesh::load_stl_with(path, &LoadOptions::default())
    }

    /// Parses STL bytes held in memory; errors name the file `<memory>`.
    ///
    /// # Errors
    /// As [`load_stl_with`](Mesh::load_stl_with), except [`Error::Io`].
    pub fn parse_stl(bytes: &[u8], options: &LoadOptions) -> Result<Mesh> {
        parse_stl(Path::new("<memory>"), bytes, options)
    }
}

fn parse_stl(path: &Path, bytes: &[u8], options: &LoadOptions) -> Result<Mesh> {
    let parse = |message: String| Error::Parse {
        path: path.into(),
        line: None,
        message,
    };
    let mut reader = Cursor::new(bytes);
    let facets =
        stl_io::create_stl_reader(&mut reader).map_err(|e| parse(format!("not STL: {e}")))?;
    let (mut positions, mut triangles) = (Vec::new(), Vec::new());
    for (i, facet) in facets.enumerate() {
        let facet = facet.map_err(|e| parse(format!("facet {}: {e}", i + 1)))?;
        if i >= options.max_triangles {
            return Err(Error::LimitExceeded {
                path: path.into(),
                line: None,
                what: "triangles",
                limit: options.max_triangles as u64,
            });
        }
        let base = positions.len() as u32;
        positions.extend(facet.vertices.map(|v| Point3::from(v.0)));
        triangles.push([base, base + 1, base + 2]);
    }
    Mesh::from_buffers(positions, triangles).map_err(|e| match e {
        Error::NoTriangles { .. } => Error::NoTriangles {
            path: Some(path.into()),
        },
        Error::NonFiniteCoordinate { vertex, .. } => Error::NonFiniteCoordinate {
            path: Some(path.into()),
            line: None,
            vertex,
        },
        other => other,
    })
}
