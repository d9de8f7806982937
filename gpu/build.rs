//! The GPU tests' view of this machine, so a test that cannot run here is compiled as
//! `#[ignore]` and counted as ignored instead of passing without checking anything:
//! `shared_meshes` as for the library's tests (../tests/build.rs), and `vulkan_driver` when a
//! Vulkan driver's manifest is installed (lavapipe's comes with Debian's
//! `mesa-vulkan-drivers`) or named by `VK_ICD_FILENAMES` / `VK_DRIVER_FILES`. Both are also
//! set under `CI=true`, where a missing driver or mesh is a failure, not a skip. The crate's
//! own code has no build-time configuration: none of this reaches a user's build.

mod suite {
    include!("../tests/build.rs");
}

use std::path::Path;

fn main() {
    suite::main();
    println!("cargo::rustc-check-cfg=cfg(vulkan_driver)");
    println!("cargo::rerun-if-env-changed=VK_ICD_FILENAMES");
    println!("cargo::rerun-if-env-changed=VK_DRIVER_FILES");
    // A driver named by the loader's variables replaces the installed ones.
    let vars: Vec<_> = ["VK_ICD_FILENAMES", "VK_DRIVER_FILES"]
        .iter()
        .filter_map(std::env::var_os)
        .collect();
    let driver = if vars.is_empty() {
        [
            "/usr/share/vulkan/icd.d",
            "/etc/vulkan/icd.d",
            "/usr/local/share/vulkan/icd.d",
        ]
        .iter()
        .map(Path::new)
        .filter(|dir| dir.is_dir())
        .any(|dir| {
            println!("cargo::rerun-if-changed={}", dir.display());
            std::fs::read_dir(dir).is_ok_and(|entries| {
                entries
                    .flatten()
                    .any(|e| e.path().extension().is_some_and(|x| x == "json"))
            })
        })
    } else {
        vars.iter()
            .any(|files| std::env::split_paths(files).any(|file| file.is_file()))
    };
    let ci = std::env::var("CI").as_deref() == Ok("true");
    if driver || ci {
        println!("cargo::rustc-cfg=vulkan_driver");
    }
}
