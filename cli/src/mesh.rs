//! Loading the mesh a command works on: the repository's asset scene when none is named, the
//! load warnings printed, errors as the library words them.

use crate::Failure;
use meshray::{LoadOptions, Mesh};
use std::path::{Path, PathBuf};

/// The mesh every command uses when given none: the repository's `assets/scene.obj` (2,090
/// triangles in five named objects), found where the crate was built from.
pub fn default_mesh() -> PathBuf {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).parent();
    repository.map_or_else(
        || PathBuf::from("assets/scene.obj"),
        |root| root.join("assets/scene.obj"),
    )
}

/// Loads `path` (any format [`Mesh::load`] reads), printing each of the mesh's load
/// warnings (a material library that did not load...) on stderr as `warning: ...`.
///
/// # Errors
/// The library's error, as its sentence.
pub fn load(path: &Path) -> Result<Mesh, Failure> {
    loaded(Mesh::load(path)?)
}

/// [`load`], telling `progress(done, total)` how many of the file's bytes are parsed.
///
/// # Errors
/// As [`load`].
pub fn load_with_progress(
    path: &Path,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Mesh, Failure> {
    loaded(Mesh::load_with(
        path,
        &LoadOptions {
            progress: Some(progress),
            ..Default::default()
        },
    )?)
}

/// A loaded mesh, its warnings printed.
fn loaded(mesh: Mesh) -> Result<Mesh, Failure> {
    print_warnings(&mesh);
    Ok(mesh)
}

/// Prints a loaded mesh's warnings on stderr, one line each.
pub fn print_warnings(mesh: &Mesh) {
    for warning in mesh.load_warnings() {
        eprintln!("warning: {warning}");
    }
}
