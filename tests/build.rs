// Tells the test suites (this crate's, and the command's: cli/build.rs includes this file)
// what this machine has, so a test that cannot run here is compiled as `#[ignore]` and
// counted as ignored in `cargo test`'s summary instead of passing without checking anything.
// The library has no build script: none of this runs in a user's build.
//
// - `shared_meshes`: the shared real meshes are present (`MESHRAY_MESHES`, else
//   `../shared/meshes` beside the repository, with a `manifest.tsv`). Also set under `CI=true`,
//   so there the tests run and fail loudly when the meshes are missing.
// - `x11_tools`: `Xvfb`, `xdotool` and `xwd` are on the `PATH` (the viewer's test).
// - `vulkan_driver`: a Vulkan driver's manifest is installed (lavapipe's comes with Debian's
//   `mesa-vulkan-drivers`) or named by `VK_ICD_FILENAMES` / `VK_DRIVER_FILES` (the GPU
//   crate's tests, and the command's `bench --gpu`). Also set under `CI=true`, where a
//   missing driver is a failure, not a skip.

use std::path::PathBuf;

pub fn main() {
    println!("cargo::rustc-check-cfg=cfg(shared_meshes)");
    println!("cargo::rustc-check-cfg=cfg(x11_tools)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=MESHRAY_MESHES");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rerun-if-env-changed=PATH");

    // The repository's root: the parent of this crate's directory (`tests/` or `cli/`).
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest_dir.join("..");
    let meshes = std::env::var_os("MESHRAY_MESHES")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/meshes"));
    let manifest = meshes.join("manifest.tsv");
    // Watch what can appear or vanish: the manifest, else the meshes' directory, else (the
    // default layout only) the `shared` directory beside the repository. Never a path that
    // does not exist (that reruns this script on every build) nor anything bigger (cargo
    // scans a watched directory whole). With MESHRAY_MESHES naming a directory that does not
    // exist yet, set it again (or touch build.rs) once the meshes are there.
    let shared = root.join("../shared");
    let default_layout = std::env::var_os("MESHRAY_MESHES").is_none();
    let watched = [manifest.as_path(), meshes.as_path()]
        .into_iter()
        .chain(default_layout.then_some(shared.as_path()))
        .find(|p| p.exists());
    if let Some(watched) = watched {
        println!("cargo::rerun-if-changed={}", watched.display());
    }
    let ci = std::env::var("CI").as_deref() == Ok("true");
    if manifest.is_file() || ci {
        println!("cargo::rustc-cfg=shared_meshes");
    }
    if ["Xvfb", "xdotool", "xwd"].iter().all(|tool| on_path(tool)) {
        println!("cargo::rustc-cfg=x11_tools");
    }
    println!("cargo::rustc-check-cfg=cfg(vulkan_driver)");
    if vulkan_driver() || ci {
        println!("cargo::rustc-cfg=vulkan_driver");
    }
}

/// Whether a Vulkan driver's manifest is installed, or named by the loader's variables
/// (which then replace the installed ones).
fn vulkan_driver() -> bool {
    println!("cargo::rerun-if-env-changed=VK_ICD_FILENAMES");
    println!("cargo::rerun-if-env-changed=VK_DRIVER_FILES");
    let vars: Vec<_> = ["VK_ICD_FILENAMES", "VK_DRIVER_FILES"]
        .iter()
        .filter_map(std::env::var_os)
        .collect();
    if !vars.is_empty() {
        return vars
            .iter()
            .any(|files| std::env::split_paths(files).any(|file| file.is_file()));
    }
    [
        "/usr/share/vulkan/icd.d",
        "/etc/vulkan/icd.d",
        "/usr/local/share/vulkan/icd.d",
    ]
    .iter()
    .map(std::path::Path::new)
    .filter(|dir| dir.is_dir())
    .any(|dir| {
        println!("cargo::rerun-if-changed={}", dir.display());
        std::fs::read_dir(dir).is_ok_and(|entries| {
            entries
                .flatten()
                .any(|e| e.path().extension().is_some_and(|x| x == "json"))
        })
    })
}

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()))
}
