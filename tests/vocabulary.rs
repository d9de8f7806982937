//! One vocabulary across the fronts: the culling choice is named alike in Rust
//! (`Culling::None`, `Back`, `Front`), Python (`cull="none"`, `"back"`, `"front"`) and
//! JavaScript (`{ cull: "none" | "back" | "front" }`), each naming the faces culled. Checked
//! in the sources every front reads its options from, so that a rename in one fails here.

use meshray::Culling;
use std::path::Path;

/// The names, from the Rust enum: a new variant fails to compile until it is named here.
fn names() -> Vec<&'static str> {
    [Culling::None, Culling::Back, Culling::Front]
        .iter()
        .map(|c| match c {
            Culling::None => "none",
            Culling::Back => "back",
            Culling::Front => "front",
        })
        .collect()
}

fn read(path: &str) -> String {
    let at = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    std::fs::read_to_string(&at).unwrap_or_else(|e| panic!("{}: {e}", at.display()))
}

#[test]
fn rust_names_its_variants_as_the_fronts_do() {
    assert_eq!(format!("{:?}", Culling::Back).to_lowercase(), "back");
    assert_eq!(format!("{:?}", Culling::Front).to_lowercase(), "front");
    assert_eq!(format!("{:?}", Culling::None).to_lowercase(), "none");
}

#[test]
fn python_reads_cull_by_the_rust_names() {
    let convert = read("python/src/convert.rs");
    for (name, variant) in names().iter().zip(["None", "Back", "Front"]) {
        let arm = format!("\"{name}\" => Ok(Culling::{variant})");
        assert!(convert.contains(&arm), "python/src/convert.rs lacks {arm}");
    }
    let stubs = read("python/meshray/__init__.pyi");
    let literal = format!(
        "cull: Literal[{}] = \"none\"",
        names()
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let uses = stubs.matches("cull:").count();
    assert!(uses >= 6, "the stubs name cull {uses} times");
    assert_eq!(
        stubs.matches(literal.as_str()).count(),
        uses,
        "every cull in the stubs is {literal}"
    );
}

#[test]
fn javascript_reads_cull_by_the_rust_names() {
    let types = read("js/meshray.d.ts");
    let union = names()
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(" | ");
    assert!(
        types.contains(&format!("cull?: {union};")),
        "js/meshray.d.ts: cull?: {union}"
    );
    assert!(
        !types.contains("side?:"),
        "js/meshray.d.ts still has a side option"
    );
    let js = read("js/meshray.js");
    assert!(
        js.contains("const CULLS = { none: 0, back: 2, front: 4 };"),
        "js/meshray.js: the names map to the wasm flags"
    );
    // The wasm side's flags: 2 culls back faces (Culling::Back), 4 front ones.
    let wasm = read("js/src/lib.rs");
    assert!(
        wasm.contains("const CULL_BACK: u32 = 2;") && wasm.contains("const CULL_FRONT: u32 = 4;")
    );
    assert!(wasm.contains("Culling::Back") && wasm.contains("Culling::Front"));
}
