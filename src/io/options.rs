//! How a mesh file is loaded: the options every format takes, and the reads they share
//! (a file read within a size limit; a referenced file kept inside the model's directory).

#[cfg(doc)]
use crate::Mesh;
use crate::{Error, Format, Result};
use std::io::Read;
use std::path::Path;

/// How to load a mesh ([`Mesh::load_with`], [`Mesh::from_bytes`]): which format, what a file
/// from anyone may cost, and whom to tell how far the parser has got.
///
/// The defaults choose the format by extension (or, for bytes, by content), accept any
/// reasonable model and refuse what could exhaust memory or read files the model has no
/// business reading.
///
/// ```
/// use meshray::{LoadOptions, Mesh};
/// use meshray::mesh::Format;
///
/// let path = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/scene.obj");
/// let strict = LoadOptions { max_file_bytes: 1 << 20, max_triangles: 10_000, ..Default::default() };
/// let mesh = Mesh::load_with(path, &strict)?;
/// assert_eq!(mesh.triangle_count(), 2090);
///
/// // A progress bar's view of the load: (bytes parsed, file size), every MiB and at the end.
/// let last = std::sync::Mutex::new((0, 0));
/// let report = |done, total| *last.lock().unwrap() = (done, total);
/// let options = LoadOptions { format: Some(Format::Obj), progress: Some(&report), ..Default::default() };
/// let mesh = Mesh::load_with(path, &options)?;
/// let size = std::fs::metadata(path).unwrap().len();
/// assert_eq!((*last.lock().unwrap(), mesh.triangle_count()), ((size, size), 2090));
/// # Ok::<(), meshray::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct LoadOptions<'a> {
    /// The format to read: `None` (the default) chooses by the file's extension
    /// (`obj`, `stl`, `ply`, `gltf`, `glb`, in any case), or for [`Mesh::from_bytes`] by the
    /// content.
    pub format: Option<Format>,
    /// The largest file read (mesh, material library or glTF buffer), in bytes (default
    /// 2 GiB). A file is never read past this, whatever its size claims to be.
    pub max_file_bytes: u64,
    /// The most triangles a file may give, after fanning polygons (default 100 million,
    /// about 7 GB of mesh and BVH). Checked while reading, before the triangles are stored.
    pub max_triangles: usize,
    /// Load material libraries only from the OBJ's own directory or below it (default
    /// `true`): a `mtllib` with an absolute path, a `..` component, or a link leading out is
    /// not read, and is reported in [`Mesh::load_warnings`]. The same rule confines a glTF
    /// file's external buffers to its directory (there, a buffer outside is an error: the
    /// geometry is in it).
    pub confine_materials: bool,
    /// Told `(done, total)`: how many of the file's `total` bytes the parser has consumed,
    /// every MiB or so and once at the end with `done == total` (default none). For progress
    /// bars on files of hundreds of megabytes; the library itself prints nothing. (glTF
    /// reports only its end: its JSON is small and its buffers are read whole.) The same
    /// parameter as [`BuildOptions::progress`](crate::BuildOptions::progress), so one
    /// progress bar can follow a load and then a build.
    pub progress: Option<&'a (dyn Fn(u64, u64) + Sync)>,
}

impl Default for LoadOptions<'_> {
    fn default() -> Self {
        LoadOptions {
            format: None,
            max_file_bytes: 2 << 30,
            max_triangles: 100_000_000,
            confine_materials: true,
            progress: None,
        }
    }
}

impl std::fmt::Debug for LoadOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadOptions")
            .field("format", &self.format)
            .field("max_file_bytes", &self.max_file_bytes)
            .field("max_triangles", &self.max_triangles)
            .field("confine_materials", &self.confine_materials)
            .field("progress", &self.progress.map(|_| "a function"))
            .finish()
    }
}

/// Reads at most `limit` bytes of a file; more is an error.
pub(crate) fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let io = |source| Error::Io {
        path: path.into(),
        source: std::sync::Arc::new(source),
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(Error::LimitExceeded {
            path: path.into(),
            line: None,
            what: "bytes",
            limit,
        });
    }
    Ok(bytes)
}

/// Whether `mtl` (as written in the OBJ) stays inside `dir`, lexically and after links.
pub(crate) fn inside(dir: &Path, mtl: &Path) -> bool {
    use std::path::Component;
    if mtl
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return false;
    }
    match (dir.join(mtl).canonicalize(), dir.canonicalize()) {
        (Ok(file), Ok(dir)) => file.starts_with(dir),
        // A file that does not exist cannot lead anywhere; reading it reports the problem.
        _ => true,
    }
}
