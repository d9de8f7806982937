//! The mesh file formats meshray reads: their names, and the choice of one by a file's
//! extension. (The readers are in `io`; the names sit below them, where errors can name a
//! format too.)

use std::path::Path;

/// A mesh file format, for [`LoadOptions::format`](crate::LoadOptions::format). Formats other than OBJ each have a cargo
/// feature (all on by default); a build without one has no variant for it.
///
/// ```
/// use meshray::{LoadOptions, Mesh};
/// use meshray::mesh::Format;
///
/// // Say which format a file is in, whatever its name.
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj");
/// let mesh = Mesh::load_with(path, &LoadOptions { format: Some(Format::Obj), ..Default::default() })?;
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

impl std::fmt::Display for Format {
    /// The format's usual name: `OBJ`, `STL`, `PLY` or `glTF`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Format::Obj => "OBJ",
            #[cfg(feature = "stl")]
            Format::Stl => "STL",
            #[cfg(feature = "ply")]
            Format::Ply => "PLY",
            #[cfg(feature = "gltf")]
            Format::Gltf => "glTF",
        })
    }
}

impl Format {
    /// The format a file's extension names (`obj`, `stl`, `ply`, `gltf`, `glb`; any case), if
    /// this build reads it.
    pub(crate) fn from_path(path: &Path) -> Option<Format> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_name_formats_whatever_their_case() {
        assert_eq!(Format::from_path(Path::new("bunny.OBJ")), Some(Format::Obj));
        assert_eq!(Format::from_path(Path::new("bunny.txt")), None);
        assert_eq!(Format::from_path(Path::new("bunny")), None);
    }
}
