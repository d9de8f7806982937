//! The library's layers, checked: each module of `src/` uses only its own layer and those
//! below it, bottom to top: geometry primitives → mesh and file formats → tree and its
//! queries → scene → picking (camera, screen selection). A `crate::` path in code (comments
//! and doc comments aside) names a module, or an item the crate root re-exports, whose
//! module is read off `src/lib.rs`'s `pub use` and `pub(crate) use` lines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layers, bottom first; a module may use modules of its own layer or lower ones.
const LAYERS: [(&str, &[&str]); 5] = [
    (
        "geometry primitives",
        &[
            "error",
            "format",
            "aabb",
            "ray",
            "triangle",
            "watertight",
            "plane2d",
            "closest_point",
            "region",
            "transform",
            "splitmix",
            "winding",
            "boundary",
            "sweep",
            "tri_tri",
        ],
    ),
    ("mesh and file formats", &["mesh", "io", "pose"]),
    ("tree and queries", &["bvh", "diagnostics"]),
    (
        "scene and the query surface over a mesh and a scene",
        &["scene", "query"],
    ),
    ("picking", &["camera", "picking"]),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../src")
}

/// Code without comments: `//` to the end of the line (doc comments included) dropped.
fn code(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            // `"//"` inside a string literal is rare in this crate; a URL in a string would
            // only drop the rest of its own line.
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first segments of every path after `crate::` (`crate::a::b` → `a`; `crate::{a, b::c}`
/// → `a`, `b`).
fn crate_paths(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // A group: split at commas of depth 0.
            let (mut depth, mut start) = (0, 0);
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        found.push(first_segment(&group[start..k]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        found.push(first_segment(&group[start..k]));
                        start = k + 1;
                    }
                    _ => {}
                }
            }
        } else {
            found.push(first_segment(rest));
        }
    }
    found.retain(|s| !s.is_empty() && s != "self");
    found
}

fn first_segment(path: &str) -> String {
    path.trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// What `src/lib.rs` re-exports: item name → the module it comes from.
fn reexports() -> BTreeMap<String, String> {
    let lib = code(&std::fs::read_to_string(src().join("lib.rs")).unwrap());
    let mut map = BTreeMap::new();
    for statement in lib.split(';') {
        let Some((at, len)) = ["pub use ", "pub(crate) use "]
            .iter()
            .find_map(|prefix| statement.find(prefix).map(|at| (at, prefix.len())))
        else {
            continue;
        };
        let path = statement[at + len..].trim();
        // The public modules' re-exports (`pub mod geometry { pub use crate::aabb::Aabb; }`)
        // name their module in full; the root's own lines are what the crate's paths use.
        if path.starts_with("crate::") {
            continue;
        }
        let module = first_segment(path);
        let items = match (path.find('{'), path.rfind('}')) {
            (Some(open), Some(close)) => path[open + 1..close].to_string(),
            _ => path.rsplit("::").next().unwrap().to_string(),
        };
        for item in items.split(',') {
            let name = item.trim().rsplit("::").next().unwrap().trim().to_string();
            if !name.is_empty() {
                map.insert(name, module.clone());
            }
        }
    }
    map
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_uses_only_its_layer_and_those_below() {
    let items = reexports();
    assert!(
        items.contains_key("Bvh") && items.contains_key("Mesh"),
        "{items:?}"
    );
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut violations = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(src()).unwrap();
        let module = first_segment(&relative.to_string_lossy().replace(".rs", ""));
        if module == "lib" || module == "test_support" {
            continue;
        }
        let own = layer_of(&module).unwrap_or_else(|| panic!("{module}: add it to LAYERS"));
        for used in crate_paths(&code(&std::fs::read_to_string(file).unwrap())) {
            let target = if layer_of(&used).is_some() || used == "test_support" {
                used.clone()
            } else {
                items
                    .get(&used)
                    .unwrap_or_else(|| {
                        panic!(
                            "{}: crate::{used} is no module or re-export",
                            relative.display()
                        )
                    })
                    .clone()
            };
            if target == "test_support" {
                continue;
            }
            let theirs = layer_of(&target).unwrap();
            if theirs > own {
                violations.push(format!(
                    "{} ({}) uses crate::{used} from `{target}` ({})",
                    relative.display(),
                    LAYERS[own].0,
                    LAYERS[theirs].0
                ));
            }
        }
    }
    violations.sort();
    violations.dedup();
    assert!(
        violations.is_empty(),
        "{} uses of a higher layer:\n{}",
        violations.len(),
        violations.join("\n")
    );
}

/// The folders of `src/bvh`, bottom first: each uses only its own folder and those before
/// it (and the files of `bvh/` itself, shared by all). The compiler holds the layers above
/// the tree to its facade (`bvh/facade.rs`; the folders' modules are visible in `bvh` only);
/// the order among the folders, which Rust's visibility cannot say, is checked here.
const BVH_FOLDERS: [&str; 4] = ["layout", "build", "query", "upkeep"];

/// The paths after `crate::bvh::` in `code`: the tree's module each names (`crate::bvh::wide::X`
/// → `wide`; `crate::bvh::{a, b}` → `a`, `b`).
fn bvh_paths(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::bvh::") {
        rest = &rest[at + "crate::bvh::".len()..];
        match rest.strip_prefix('{') {
            Some(group) => {
                let end = group.find('}').unwrap_or(group.len());
                found.extend(group[..end].split(',').map(first_segment));
            }
            None => found.push(first_segment(rest)),
        }
    }
    found.retain(|s| !s.is_empty());
    found
}

#[test]
fn the_tree_folders_use_only_the_folders_before_them() {
    let bvh = src().join("bvh");
    // Each module of a folder, by name (the name `crate::bvh::` gives it).
    let mut folder_of = BTreeMap::new();
    for (rank, folder) in BVH_FOLDERS.iter().enumerate() {
        for entry in std::fs::read_dir(bvh.join(folder)).unwrap() {
            let name = entry
                .unwrap()
                .file_name()
                .to_string_lossy()
                .replace(".rs", "");
            if name != "mod" {
                folder_of.insert(name, rank);
            }
        }
    }
    assert!(folder_of.contains_key("wide") && folder_of.contains_key("ray_hits"));
    let mut violations = Vec::new();
    for (rank, folder) in BVH_FOLDERS.iter().enumerate() {
        let mut files = Vec::new();
        rust_files(&bvh.join(folder), &mut files);
        for file in files {
            for used in bvh_paths(&code(&std::fs::read_to_string(&file).unwrap())) {
                // Folder names and the items of `bvh/mod.rs` (`Bvh`, `Node`...) are not checked:
                // a module is named by its own name.
                if let Some(&theirs) = folder_of.get(&used)
                    && theirs > rank
                {
                    violations.push(format!(
                        "bvh/{folder}/{} uses crate::bvh::{used} from bvh/{}",
                        file.file_name().unwrap().to_string_lossy(),
                        BVH_FOLDERS[theirs]
                    ));
                }
            }
        }
    }
    violations.sort();
    violations.dedup();
    assert!(
        violations.is_empty(),
        "{} uses of a later folder:\n{}",
        violations.len(),
        violations.join("\n")
    );
}

#[test]
fn the_scanner_reads_groups_and_paths() {
    let text = "use crate::{a::b, C, d::{e, f}};\nlet x = crate::g::h(); // crate::ignored";
    assert_eq!(crate_paths(&code(text)), ["a", "C", "d", "g"]);
    let tree = "use crate::bvh::wide::W;\nuse crate::bvh::{leaf::L, Bvh};";
    assert_eq!(bvh_paths(tree), ["wide", "leaf", "Bvh"]);
}
