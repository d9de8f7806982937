//! STL, binary and ASCII, through `stl_io` (the `stl` feature, on by default).

use super::progress::{Progress, Reporting};
use super::{name_file, too_many_triangles};
use crate::{Error, LoadOptions, Mesh, Result};
use nalgebra::Point3;
use std::io::Cursor;
use std::path::Path;

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
