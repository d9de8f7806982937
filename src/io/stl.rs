//! STL, binary and ASCII, through `stl_io` (the `stl` feature, on by default).

use super::Format;
use super::progress::{Progress, Reporting};
use super::{name_file, too_many_triangles};
use crate::{Error, LoadOptions, Mesh, Result};
use nalgebra::Point3;
use std::io::Cursor;
use std::path::Path;

impl Mesh {
    /// Loads an STL file, binary or ASCII. Every facet becomes a triangle, in file order, with
    /// its own three corners (STL stores no sharing; neighbours' shared corners are the same
    /// floats, so the watertight test still sees them as shared). One object named `""`, no
    /// materials; the facet normals are ignored (hits compute theirs).
    ///
    /// ```
    /// use meshray::{Error, LoadOptions, Mesh};
    ///
    /// # let dir = std::env::temp_dir().join(format!("meshray-doc-facets.stl-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let path = dir.join("facets.stl");
    /// # std::fs::write(&path, "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n").unwrap();
    /// // `path`: a one-facet ASCII STL file.
    /// let mesh = Mesh::load_stl_with(&path, &LoadOptions::default())?;
    /// assert_eq!((mesh.triangle_count(), mesh.positions().len()), (1, 3));
    /// let none = LoadOptions { max_triangles: 0, ..Default::default() };
    /// assert!(matches!(Mesh::load_stl_with(&path, &none), Err(Error::LimitExceeded { .. })));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Io`] for a missing or unreadable file, [`Error::Parse`] naming the file (and
    /// the facet) for malformed or truncated data, [`Error::NonFiniteCoordinate`],
    /// [`Error::NoTriangles`], and [`Error::LimitExceeded`] past the [`LoadOptions`] limits.
    pub fn load_stl_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Mesh> {
        Mesh::load_as(path, Format::Stl, options)
    }

    /// [`load_stl_with`](Mesh::load_stl_with) with the default [`LoadOptions`].
    ///
    /// ```
    /// use meshray::{Error, Mesh};
    ///
    /// # let dir = std::env::temp_dir().join(format!("meshray-doc-one.stl-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// # let path = dir.join("one.stl");
    /// # std::fs::write(&path, "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n").unwrap();
    /// assert_eq!(Mesh::load_stl(&path)?.triangle_count(), 1);
    /// let missing = Mesh::load_stl(dir.join("missing.stl"));
    /// assert!(matches!(missing, Err(Error::Io { .. })));
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`load_stl_with`](Mesh::load_stl_with).
    pub fn load_stl(path: impl AsRef<Path>) -> Result<Mesh> {
        Mesh::load_stl_with(path, &LoadOptions::default())
    }

    /// Parses STL bytes held in memory; errors name the file `<memory>`.
    ///
    /// ```
    /// use meshray::{Error, LoadOptions, Mesh};
    ///
    /// let stl = b"solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n";
    /// let mesh = Mesh::parse_stl(stl, &LoadOptions::default())?;
    /// assert_eq!(mesh.triangle(0)[1], nalgebra::Point3::new(1.0, 0.0, 0.0));
    /// // Cut short: an error, never a panic.
    /// let cut = Mesh::parse_stl(&stl[..40], &LoadOptions::default());
    /// assert!(matches!(cut, Err(Error::Parse { .. })));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`load_stl_with`](Mesh::load_stl_with), except [`Error::Io`].
    pub fn parse_stl(bytes: &[u8], options: &LoadOptions) -> Result<Mesh> {
        parse_stl(Path::new("<memory>"), bytes, options, &Progress::none())
    }
}

pub(crate) fn parse_stl(
    path: &Path,
    bytes: &[u8],
    options: &LoadOptions,
    progress: &Progress,
) -> Result<Mesh> {
    let parse = |message: String| Error::Parse {
        path: path.into(),
        line: None,
        message,
    };
    let mut reader = Reporting::new(Cursor::new(bytes), progress);
    let facets =
        stl_io::create_stl_reader(&mut reader).map_err(|e| parse(format!("not STL: {e}")))?;
    let (mut positions, mut triangles) = (Vec::new(), Vec::new());
    for (i, facet) in facets.enumerate() {
        let facet = facet.map_err(|e| parse(format!("facet {}: {e}", i + 1)))?;
        if i >= options.max_triangles {
            return Err(too_many_triangles(path, options));
        }
        // Each facet brings its own three corners; the last must still fit a u32.
        let Ok(base) = u32::try_from(positions.len() + 2).map(|last| last - 2) else {
            return Err(too_many_triangles(path, options));
        };
        positions.extend(facet.vertices.map(|v| Point3::from(v.0)));
        triangles.push([base, base + 1, base + 2]);
    }
    Mesh::from_buffers(positions, triangles).map_err(|e| name_file(e, path))
}
