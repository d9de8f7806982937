//! File formats, and the choice of format by file extension.

#[cfg(feature = "gltf")]
pub(crate) mod gltf;
pub(crate) mod obj;
pub(crate) mod options;
#[cfg(feature = "ply")]
pub(crate) mod ply;
pub(crate) mod progress;
#[cfg(feature = "stl")]
pub(crate) mod stl;

use crate::{Error, Format, LoadOptions, Mesh, Result};
use options::read_limited;
use progress::Progress;
use std::path::Path;

impl Mesh {
    /// Loads a mesh, the format chosen by the file's extension (in any case): OBJ,
    /// STL, PLY or glTF, with the default [`LoadOptions`].
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
    /// A file whose extension lies is refused by its real format, not with the error the
    /// named format's parser stumbles on:
    ///
    /// ```
    /// use meshray::{Error, Mesh};
    /// use meshray::mesh::Format;
    ///
    /// let path = std::env::temp_dir().join(format!("meshray-doc-{}.stl", std::process::id()));
    /// std::fs::write(&path, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n").unwrap();
    /// let error = Mesh::load(&path).unwrap_err();
    /// # std::fs::remove_file(&path).unwrap();
    /// assert!(matches!(error, Error::WrongFormat { expected: Format::Stl, found: Format::Obj, .. }));
    /// assert!(error.to_string().contains("is an OBJ file, not STL"), "{error}");
    /// ```
    ///
    /// # Errors
    /// As [`load_with`](Mesh::load_with).
    pub fn load(path: impl AsRef<Path>) -> Result<Mesh> {
        Mesh::load_with(path, &LoadOptions::default())
    }

    /// Loads a mesh with the given [`LoadOptions`]: the format (by the file's extension when
    /// `options.format` is `None`), limits, and a progress report.
    ///
    /// What each format gives: OBJ through `tobj`, its objects (`o`, `g`) and materials (its
    /// `mtllib`, read from the OBJ's directory; a missing or broken one is reported in
    /// [`Mesh::load_warnings`], the geometry kept), normals and uvs, polygons fanned from
    /// their first corner; STL (binary and ASCII, the `stl` feature) its facets in order; PLY
    /// (ASCII and binary, the `ply` feature) its `vertex` x y z and `face` lists; glTF 2.0
    /// (`.gltf` with embedded or external buffers, `.glb`; the `gltf` feature) every triangle
    /// primitive placed by the default scene's nodes, one object per node, materials by
    /// name, normals and uvs. [`Mesh::positions`] says how vertices are numbered in each.
    ///
    /// ```
    /// use meshray::{Error, LoadOptions, Mesh};
    /// use meshray::mesh::Format;
    ///
    /// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj");
    /// let mesh = Mesh::load_with(path, &LoadOptions { format: Some(Format::Obj), ..Default::default() })?;
    /// assert_eq!(mesh.triangle_count(), 2090);
    /// let small = LoadOptions { max_triangles: 100, ..Default::default() };
    /// assert!(matches!(Mesh::load_with(path, &small), Err(Error::LimitExceeded { .. })));
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be read (of kind
    /// [`IsADirectory`](std::io::ErrorKind::IsADirectory) for a directory); [`Error::Parse`]
    /// naming the file (and the line, where the format has lines) for what is not valid in
    /// its format, also an extension that names no format this build reads (set
    /// [`LoadOptions::format`]); [`Error::WrongFormat`] when the file fails to load in the
    /// format asked for and its content is plainly another's; [`Error::IndexOutOfRange`] for
    /// a face naming a vertex that does not exist; [`Error::NonFiniteCoordinate`],
    /// [`Error::CoordinateOutOfRange`] and [`Error::MeshTooSmall`] for coordinates outside
    /// what the queries handle exactly; [`Error::NoTriangles`]; [`Error::LimitExceeded`];
    /// for glTF, [`Error::ReferencedFile`] and [`Error::NodeTransform`].
    pub fn load_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Mesh> {
        let path = path.as_ref();
        not_a_directory(path)?;
        let format = match options.format {
            Some(format) => format,
            None => format_of(path)?,
        };
        let bytes = read_limited(path, options.max_file_bytes)?;
        parse(path, path.parent(), &bytes, format, options)
    }

    /// Parses a mesh from bytes in memory, in `options.format`, or when that is `None` in the
    /// format the content plainly shows (a GLB's magic, a JSON object for glTF, `ply`, an STL
    /// header or `solid`, an OBJ keyword on the first line). Errors name the file
    /// `<memory>`. An OBJ from memory reads no material libraries (a `mtllib` is reported in
    /// [`Mesh::load_warnings`]), and a glTF from memory needs its buffers embedded.
    ///
    /// ```
    /// use meshray::{Error, LoadOptions, Mesh};
    /// use meshray::mesh::Format;
    ///
    /// let obj = b"v 0 0 0\nv 1 0 0\nv 0 1 0\nv nan 0 0\nf 1 2 3\nf 1 2 4\n";
    /// match Mesh::from_bytes(obj, &LoadOptions::default()) {
    ///     Err(Error::NonFiniteCoordinate { line, vertex, .. }) => assert_eq!((line, vertex), (Some(4), 3)),
    ///     other => panic!("expected a NaN error, got {other:?}"),
    /// }
    /// let stl = b"solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n";
    /// let mesh = Mesh::from_bytes(stl, &LoadOptions { format: Some(Format::Stl), ..Default::default() })?;
    /// assert_eq!(mesh.triangle_count(), 1);
    /// assert!(Mesh::from_bytes(b"\x00\x01 what is this", &LoadOptions::default()).is_err());
    /// # Ok::<(), meshray::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`load_with`](Mesh::load_with), and [`Error::Parse`] when the format is not given
    /// and the content shows none.
    pub fn from_bytes(bytes: &[u8], options: &LoadOptions) -> Result<Mesh> {
        let path = Path::new("<memory>");
        let format = options
            .format
            .or_else(|| sniff(bytes))
            .ok_or_else(|| Error::Parse {
                path: path.into(),
                line: None,
                message: "the bytes show no format this build reads (set LoadOptions::format)"
                    .into(),
            })?;
        parse(path, None, bytes, format, options)
    }
}

/// The format `path`'s extension names, or an error saying how to name one.
fn format_of(path: &Path) -> Result<Format> {
    Format::from_path(path).ok_or_else(|| Error::Parse {
        path: path.into(),
        line: None,
        message: "unknown mesh format: the extension names no format this build reads \
                  (set LoadOptions::format)"
            .into(),
    })
}

/// An [`Error::Io`] of kind `IsADirectory` when `path` is a directory: reading one fails
/// with a system message that differs between platforms, or not at all before the
/// extension is looked at.
fn not_a_directory(path: &Path) -> Result<()> {
    if path.is_dir() {
        return Err(Error::Io {
            path: path.into(),
            source: std::sync::Arc::new(std::io::Error::new(
                std::io::ErrorKind::IsADirectory,
                "is a directory, not a mesh file",
            )),
        });
    }
    Ok(())
}

/// Parses the bytes of file `path` in `format`, reading what it refers to (material
/// libraries, glTF buffers) from `dir`, or nothing without one. When that fails and the
/// content is plainly another format (see [`sniff`]), the error says so instead: the named
/// format's parser would report whatever it stumbled on first ("failed to fill whole
/// buffer", "no triangles"). A file that loads is never second-guessed.
fn parse(
    path: &Path,
    dir: Option<&Path>,
    bytes: &[u8],
    format: Format,
    options: &LoadOptions,
) -> Result<Mesh> {
    if bytes.len() as u64 > options.max_file_bytes {
        return Err(Error::LimitExceeded {
            path: path.into(),
            line: None,
            what: "bytes",
            limit: options.max_file_bytes,
        });
    }
    let progress = match options.progress {
        Some(report) => Progress::new(report, bytes.len() as u64),
        None => Progress::none(),
    };
    let parsed = match format {
        Format::Obj => obj::parse(path, dir, bytes, options, &progress),
        #[cfg(feature = "stl")]
        Format::Stl => stl::parse_stl(path, bytes, options, &progress),
        #[cfg(feature = "ply")]
        Format::Ply => ply::parse_ply(path, bytes, options, &progress),
        #[cfg(feature = "gltf")]
        Format::Gltf => gltf::parse(path, dir, bytes, options),
    };
    let mesh = parsed.map_err(|error| wrong_format(error, path, bytes, format))?;
    progress.finish();
    Ok(mesh)
}

/// `error`, or [`Error::WrongFormat`] when the content is plainly another format than the
/// one that failed to read it.
fn wrong_format(error: Error, path: &Path, bytes: &[u8], format: Format) -> Error {
    match (&error, sniff(bytes)) {
        // Reading and limits have nothing to do with the format.
        (Error::Io { .. } | Error::LimitExceeded { .. }, _) => error,
        (_, Some(found)) if found != format => Error::WrongFormat {
            path: path.into(),
            expected: format,
            found,
        },
        _ => error,
    }
}

/// The format a file's content shows unmistakably, if it shows one this build reads: the
/// `glTF` magic of a GLB, or a JSON object (a `.gltf`); `ply` on the first line; a binary
/// STL (its size is 84 bytes plus 50 per facet the header counts) or an ASCII one (it starts
/// with `solid`); an OBJ keyword (`v`, `f`, `o`, `mtllib`...) starting the first line that is
/// neither blank nor a comment.
fn sniff(bytes: &[u8]) -> Option<Format> {
    #[cfg(feature = "gltf")]
    if bytes.starts_with(b"glTF") {
        return Some(Format::Gltf);
    }
    #[cfg(feature = "ply")]
    if bytes.starts_with(b"ply\n") || bytes.starts_with(b"ply\r\n") {
        return Some(Format::Ply);
    }
    #[cfg(feature = "stl")]
    if let Some(count) = bytes.get(80..84) {
        let count = u32::from_le_bytes([count[0], count[1], count[2], count[3]]);
        if 84 + 50 * u64::from(count) == bytes.len() as u64 {
            return Some(Format::Stl);
        }
    }
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = &text[text.iter().take_while(|b| b.is_ascii_whitespace()).count()..];
    #[cfg(feature = "stl")]
    if text.starts_with(b"solid") && text.get(5).is_none_or(u8::is_ascii_whitespace) {
        return Some(Format::Stl);
    }
    #[cfg(feature = "gltf")]
    if text.starts_with(b"{") {
        return Some(Format::Gltf);
    }
    let first_line = text
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .find(|line| !line.is_empty() && !line.starts_with(b"#"))?;
    let keyword = first_line.split(u8::is_ascii_whitespace).next()?;
    const OBJ: [&[u8]; 12] = [
        b"v", b"vt", b"vn", b"vp", b"f", b"l", b"p", b"o", b"g", b"s", b"mtllib", b"usemtl",
    ];
    OBJ.contains(&keyword).then_some(Format::Obj)
}

/// Puts the file's name into the errors of [`Mesh::from_buffers`] and its companions, which
/// know nothing of files.
pub(crate) fn name_file(mut error: Error, path: &Path) -> Error {
    if let Error::NoTriangles { path: named }
    | Error::NonFiniteCoordinate { path: named, .. }
    | Error::CoordinateOutOfRange { path: named, .. }
    | Error::MeshTooSmall { path: named, .. }
    | Error::IndexOutOfRange { path: named, .. } = &mut error
    {
        *named = Some(path.into());
    }
    error
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
