//! Finds Embree 3 (sets `cfg(has_embree)` and links `embree3` when found), compiles the
//! tinybvh shim (sets `cfg(has_tinybvh)` when it compiles) and passes the peer crates'
//! locked versions to the program as `PEER_VERSION_<NAME>` variables.
//!
//! Embree is looked for with `pkg-config embree3`, then as `include/embree3/rtcore.h` plus
//! `libembree3.so` under `$EMBREE_DIR`, `/usr/local` and `/usr`. `MESHRAY_PEERS_NO_EMBREE=1`
//! skips it (to check the build without it).
//!
//! tinybvh is C++ in one header (`tiny_bvh.h`, 1.6.8, as the `tinybvh-rs` crate ships it: this
//! repository holds no copy). `cargo metadata` says where cargo unpacked that package (the
//! manifest names it for a platform that never matches, so it is downloaded, never built), and
//! the header is compiled from there with the `cc` crate, through our own C interface
//! (`tinybvh/shim.cpp`), with `-O3 -march=native -std=c++20`: its BVH8_CPU needs AVX2 and
//! FMA at compile time, which `-march=native` gives on a machine that has them, and the
//! comparison runs where it is built. `MESHRAY_PEERS_MARCH=x86-64-v3` (or any other `-march`
//! value) replaces `native`: valgrind 3.19 cannot decode AVX-512, so a build for callgrind
//! must not use it. Its compiler command line goes to the program as
//! `PEER_TINYBVH_FLAGS`. A failed compile (no C++ compiler) is a warning, not an error, as
//! for Embree; `MESHRAY_PEERS_NO_TINYBVH=1` skips it.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(has_embree)");
    println!("cargo::rustc-check-cfg=cfg(has_tinybvh)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=EMBREE_DIR");
    println!("cargo::rerun-if-env-changed=MESHRAY_PEERS_NO_EMBREE");
    println!("cargo::rerun-if-env-changed=MESHRAY_PEERS_NO_TINYBVH");
    println!("cargo::rerun-if-env-changed=MESHRAY_PEERS_MARCH");
    versions();
    if std::env::var_os("MESHRAY_PEERS_NO_TINYBVH").is_none() {
        tinybvh();
    }
    if std::env::var_os("MESHRAY_PEERS_NO_EMBREE").is_some() {
        return;
    }
    match find_embree() {
        Some(dirs) => {
            for dir in dirs {
                println!("cargo::rustc-link-search=native={}", dir.display());
            }
            println!("cargo::rustc-link-lib=embree3");
            println!("cargo::rustc-cfg=has_embree");
        }
        None => println!(
            "cargo::warning=Embree 3 not found (pkg-config embree3, or EMBREE_DIR, /usr/local, /usr): \
             the comparison runs without it"
        ),
    }
}

/// Compiles `tinybvh/shim.cpp` (which includes the header with its implementation) into a
/// static library and links it.
fn tinybvh() {
    println!("cargo::rerun-if-changed=tinybvh/shim.cpp");
    let header_dir = match tinybvh_header_dir() {
        Ok(dir) => dir,
        Err(why) => {
            println!(
                "cargo::warning=tinybvh's header not found ({why}): the comparison runs without it"
            );
            return;
        }
    };
    println!(
        "cargo::rerun-if-changed={}",
        header_dir.join("tiny_bvh.h").display()
    );
    let march = std::env::var("MESHRAY_PEERS_MARCH")
        .ok()
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| "native".into());
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .file("tinybvh/shim.cpp")
        .include(&header_dir)
        .std("c++20")
        // The release profile's opt-level would give -O3 too; fixed, so a debug build of
        // this crate still compares an optimized tinybvh.
        .opt_level(3)
        // After cc's own -march for the target (x86-64 on x86_64 Linux): the last one wins.
        .flag(format!("-march={march}"))
        // The header's own warnings are not ours to fix.
        .warnings(false);
    let command = build.try_get_compiler().map(|tool| {
        let mut words = vec![tool.path().display().to_string()];
        words.extend(tool.args().iter().map(|a| a.to_string_lossy().into_owned()));
        words.join(" ")
    });
    match build.try_compile("meshray_peers_tinybvh") {
        Ok(()) => {
            println!("cargo::rustc-cfg=has_tinybvh");
            println!(
                "cargo::rustc-env=PEER_TINYBVH_FLAGS={}",
                command.unwrap_or_else(|_| "unknown".into())
            );
        }
        Err(e) => println!(
            "cargo::warning=tinybvh shim did not compile ({e}): the comparison runs without it"
        ),
    }
}

/// The directory of `tiny_bvh.h` inside the `tinybvh-rs` package that cargo unpacked
/// (`ffi/tinybvh/` beside its manifest), found with `cargo metadata`, which also downloads
/// it when it is not there yet.
fn tinybvh_header_dir() -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest =
        Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").ok_or("no CARGO_MANIFEST_DIR")?)
            .join("Cargo.toml");
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(&manifest)
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let package = metadata["packages"]
        .as_array()
        .and_then(|packages| packages.iter().find(|p| p["name"] == "tinybvh-rs"))
        .ok_or("cargo metadata lists no tinybvh-rs package")?;
    let path = package["manifest_path"]
        .as_str()
        .ok_or("tinybvh-rs has no manifest_path")?;
    let dir = Path::new(path)
        .parent()
        .ok_or("tinybvh-rs's manifest has no directory")?
        .join("ffi/tinybvh");
    if dir.join("tiny_bvh.h").is_file() {
        Ok(dir)
    } else {
        Err(format!("{} has no tiny_bvh.h", dir.display()))
    }
}

/// The directories to add to the link search (empty for the system's own), or `None`.
fn find_embree() -> Option<Vec<PathBuf>> {
    if let Ok(out) = Command::new("pkg-config")
        .args(["--libs-only-L", "embree3"])
        .output()
        && out.status.success()
    {
        let text = String::from_utf8_lossy(&out.stdout);
        return Some(
            text.split_whitespace()
                .filter_map(|flag| flag.strip_prefix("-L"))
                .map(PathBuf::from)
                .collect(),
        );
    }
    let mut prefixes: Vec<PathBuf> = std::env::var_os("EMBREE_DIR")
        .map(PathBuf::from)
        .into_iter()
        .collect();
    prefixes.extend([PathBuf::from("/usr/local"), PathBuf::from("/usr")]);
    for prefix in prefixes {
        if !prefix.join("include/embree3/rtcore.h").is_file() {
            continue;
        }
        if let Some(lib) = library_dir(&prefix) {
            let system = lib.starts_with("/usr/lib");
            return Some(if system { Vec::new() } else { vec![lib] });
        }
    }
    None
}

/// `prefix/lib`, `prefix/lib64` or a multiarch `prefix/lib/<triple>` holding libembree3.so.
fn library_dir(prefix: &Path) -> Option<PathBuf> {
    let lib = prefix.join("lib");
    let mut candidates = vec![lib.clone(), prefix.join("lib64")];
    if let Ok(entries) = std::fs::read_dir(&lib) {
        candidates.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
    }
    candidates
        .into_iter()
        .find(|dir| dir.join("libembree3.so").exists())
}

/// Reads the workspace's Cargo.lock for the versions the program reports.
fn versions() {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock");
    println!("cargo::rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    for name in ["meshray", "parry3d", "bvh", "obvhs"] {
        let mut version = "unknown".to_string();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line.trim() == format!("name = \"{name}\"") {
                if let Some(v) = lines
                    .next()
                    .and_then(|l| l.trim().strip_prefix("version = \""))
                {
                    version = v.trim_end_matches('"').to_string();
                }
                break;
            }
        }
        println!(
            "cargo::rustc-env=PEER_VERSION_{}={version}",
            name.to_uppercase()
        );
    }
}
