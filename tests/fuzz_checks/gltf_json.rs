//! Target `gltf_json`: valid glTF documents whose JSON the fuzzer's bytes mutate (numbers and
//! indices set out of range, negative or huge; array entries duplicated or dropped; counts,
//! offsets, strides, component types, element types, byte lengths and modes changed; keys
//! added and removed), loaded as a mesh ([`Mesh::parse_gltf`]) and as a scene
//! ([`Scene::load_with`]). Each load is an error or a mesh whose BVH validates and
//! answers as the brute force does; never a panic.
//!
//! An input that starts with `{` or `glTF` is a document itself (the corpus keeps the
//! malformed documents of the regression tests that way); any other input drives the
//! mutator.

use super::{Bytes, aimed_rays};
use gltf::json::Value;
use gltf::json::{deserialize, serialize};
use meshray::prelude::*;
use meshray::{Bvh, Error, LoadOptions, Mesh, Ray, Scene, SceneOptions};
use nalgebra::Point3;
use std::collections::BTreeSet;

/// The target: a document (as is, or a seed mutated by `data`) loaded both ways and checked.
pub fn gltf_json(data: &[u8]) {
    let document = if data.starts_with(b"{") || data.starts_with(b"glTF") {
        data.to_vec()
    } else {
        mutated(&mut Bytes::new(data))
    };
    check_document(&document, data);
}

/// The loads' limits: small, so each input stays quick.
fn options() -> LoadOptions<'static> {
    LoadOptions {
        max_triangles: 2_000,
        max_file_bytes: 1 << 20,
        ..Default::default()
    }
}

/// Loads `document` as a mesh and as a scene; `data` aims the rays.
fn check_document(document: &[u8], data: &[u8]) {
    let mesh = Mesh::from_bytes(
        document,
        &LoadOptions {
            format: Some(meshray::mesh::Format::Gltf),
            ..options()
        },
    );
    let scene = load_scene(document);
    if let Ok(mesh) = &mesh {
        assert!(mesh.triangle_count() > 0 && mesh.triangle_count() <= 2_000);
        check_scene_agrees(mesh, &scene);
        let bvh = Bvh::build(mesh.clone());
        meshray::diagnostics::validate(&bvh).expect("a valid BVH");
        aimed_rays(&bvh, data);
    }
    if let Ok(loaded) = &scene {
        check_scene(loaded, data);
    }
    let warnings = mesh.iter().flat_map(|m| m.load_warnings());
    let scene_warnings = scene.iter().flat_map(|s| s.load_warnings());
    let errors = mesh.as_ref().err().into_iter().chain(scene.as_ref().err());
    for error in errors.chain(warnings).chain(scene_warnings) {
        let shown = error.to_string();
        // The document's own text, which messages quote, may hold anything.
        let unquoted: String = shown.split('"').step_by(2).collect();
        assert!(!unquoted.contains("Some("), "Rust debug text in {shown}");
    }
}

/// A scene loaded from `document`, written to a file in a directory of this thread's own
/// (the scene loader reads files only), removed afterwards.
fn load_scene(document: &[u8]) -> meshray::Result<Scene> {
    let thread =
        format!("{:?}", std::thread::current().id()).replace(|c: char| !c.is_ascii_digit(), "");
    // Cargo's scratch directory under `cargo test` (a host path, which also works under
    // WASI, where `temp_dir` and the process id are unsupported), the system's otherwise.
    let root = option_env!("CARGO_TARGET_TMPDIR").map_or_else(std::env::temp_dir, Into::into);
    #[cfg(not(target_os = "wasi"))]
    let thread = format!("{}-{thread}", std::process::id());
    let dir = root.join(format!("meshray-fuzz-gltf-{thread}"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("document.gltf");
    std::fs::write(&path, document).unwrap();
    let scene = Scene::load_with(&path, &options());
    std::fs::remove_dir_all(&dir).unwrap();
    scene
}

/// A document that loads as a mesh loads as a scene too (the scene stores each glTF mesh
/// once, so it is never over the triangle limit when the mesh is not): one instance per node
/// that places triangles, but those whose transform is singular, which both report.
fn check_scene_agrees(mesh: &Mesh, scene: &meshray::Result<Scene>) {
    let placing: BTreeSet<u32> = (0..mesh.triangle_count())
        .map(|t| mesh.attributes(t).object)
        .collect();
    match scene {
        Ok(loaded) => {
            assert_eq!(loaded.len() + loaded.load_warnings().len(), placing.len());
            // Singular nodes are reported by both; a glTF mesh too small to compute with on
            // its own (while the flattened mesh is not) by the scene only.
            let singular = loaded
                .load_warnings()
                .iter()
                .filter(|w| matches!(w, Error::NodeTransform { .. }))
                .count();
            assert_eq!(singular, mesh.load_warnings().len());
        }
        Err(Error::NodeTransform { .. } | Error::MeshTooSmall { .. }) => {}
        Err(e) => panic!("the mesh loads, the scene does not: {e}"),
    }
}

/// Every instance's BVH validates and answers as the brute force does; the scene's queries
/// agree with each other.
fn check_scene(loaded: &Scene, data: &[u8]) {
    let scene = loaded;
    assert!(!scene.is_empty());
    for id in 0..scene.len() as u32 {
        let instance = scene.instance(id).expect("an instance");
        let bvh = instance.bvh;
        meshray::diagnostics::validate(bvh).expect("a valid BVH");
        aimed_rays(bvh, data);
        // A ray from outside the instance's world box through its centre.
        let bounds = instance.bounds;
        let target = Point3::from((bounds.min.coords + bounds.max.coords) / 2.0);
        let origin = target + bounds.extent() + nalgebra::Vector3::new(1.0, 2.0, 3.0);
        let ray = Ray::new(origin, target - origin);
        let options = SceneOptions::default();
        let all = scene.all_hits(&ray, &options);
        let closest = scene.closest_hit(&ray, &options);
        assert_eq!(closest.is_some(), !all.is_empty(), "{ray:?}");
        assert_eq!(scene.any_hit(&ray, &options).is_some(), !all.is_empty());
        if let Some(closest) = closest {
            assert!((closest.instance as usize) < scene.len());
            let first = all.iter().map(|h| h.hit.t).fold(f32::INFINITY, f32::min);
            assert_eq!(closest.hit.t, first, "{ray:?}");
        }
    }
}

// ---------------------------------------------------------------- seeds

/// The seeds' one buffer: four corners of a unit square (positions), their normals, their
/// texture coordinates, and two triangles' indices (u16).
fn seed_buffer() -> Vec<u8> {
    let corners = [
        [0.0f32, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [1.0, 1.0, 0.0],
    ];
    let mut bin: Vec<u8> = corners
        .iter()
        .flatten()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    bin.extend(
        [[0.0f32, 0.0, 1.0]; 4]
            .iter()
            .flatten()
            .flat_map(|x| x.to_le_bytes()),
    );
    bin.extend(
        corners
            .iter()
            .flat_map(|c| [c[0], c[1]])
            .flat_map(|x| x.to_le_bytes()),
    );
    bin.extend([0u16, 1, 2, 2, 1, 3].iter().flat_map(|i| i.to_le_bytes()));
    bin
}

/// The views and accessors of [`seed_buffer`]: 0 positions, 1 normals, 2 texture
/// coordinates, 3 indices.
const SEED_ARRAYS: &str = r#""bufferViews":[
    {"buffer":0,"byteOffset":0,"byteLength":48,"byteStride":12},
    {"buffer":0,"byteOffset":48,"byteLength":48},
    {"buffer":0,"byteOffset":96,"byteLength":32},
    {"buffer":0,"byteOffset":128,"byteLength":12}],
  "accessors":[
    {"bufferView":0,"componentType":5126,"count":4,"type":"VEC3","min":[0,0,0],"max":[1,1,0]},
    {"bufferView":1,"componentType":5126,"count":4,"type":"VEC3"},
    {"bufferView":2,"componentType":5126,"count":4,"type":"VEC2"},
    {"bufferView":3,"componentType":5123,"count":6,"type":"SCALAR"}]"#;

/// The seeds' scenes, nodes, meshes and materials: one triangle (the first three of the four
/// corners, not indexed);
/// the indexed square; two nodes, a parent and its child, placing it; the square with normals,
/// texture coordinates and a material, placed twice; and the indexed square as GLB.
const SEEDS: [&str; 5] = [
    r#""scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
       "meshes":[{"primitives":[{"attributes":{"POSITION":0},"mode":4}]}]"#,
    r#""scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0,"translation":[1,2,3]}],
       "meshes":[{"primitives":[{"attributes":{"POSITION":0},"indices":3}]}]"#,
    r#""scenes":[{"nodes":[0]}],
       "nodes":[{"name":"parent","children":[1],"scale":[2,2,2]},
                {"name":"child","mesh":0,"rotation":[0,0.7071068,0,0.7071068]}],
       "meshes":[{"primitives":[{"attributes":{"POSITION":0},"indices":3,"mode":5}]}]"#,
    r#""scene":0,"scenes":[{"nodes":[0,1]}],
       "nodes":[{"mesh":0},{"mesh":0,"matrix":[1,0,0,0, 0,1,0,0, 0,0,-1,0, 4,0,0,1]}],
       "materials":[{"name":"paint"}],
       "meshes":[{"name":"square","primitives":[{"attributes":{"POSITION":0,"NORMAL":1,
         "TEXCOORD_0":2},"indices":3,"material":0}]}]"#,
    r#""scene":0,"scenes":[{"nodes":[0]}],"nodes":[{"mesh":0}],
       "meshes":[{"primitives":[{"attributes":{"POSITION":0},"indices":3}]}]"#,
];

/// Seed `k`'s JSON; `uri` the buffer's (none: the GLB's binary chunk).
fn seed(k: usize, uri: Option<&str>) -> Value {
    let uri = uri.map_or(String::new(), |u| format!(r#","uri":"{u}""#));
    let text = format!(
        r#"{{"asset":{{"version":"2.0"}},{},{SEED_ARRAYS},"buffers":[{{"byteLength":140{uri}}}]}}"#,
        SEEDS[k]
    );
    deserialize::from_str(&text).expect("a seed is JSON")
}

/// A base64 `data:` URI of `bytes`.
fn data_uri(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::from("data:application/octet-stream;base64,");
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            let digit = DIGITS[(n >> (18 - 6 * i)) as usize & 63] as char;
            out.push(if i <= chunk.len() { digit } else { '=' });
        }
    }
    out
}

/// A GLB of `json` and the binary chunk `bin`, each padded to four bytes.
fn glb(json: &[u8], bin: &[u8]) -> Vec<u8> {
    let pad = |bytes: &[u8], with: u8| {
        let mut v = bytes.to_vec();
        v.resize(bytes.len().div_ceil(4) * 4, with);
        v
    };
    let (json, bin) = (pad(json, b' '), pad(bin, 0));
    let total = (12 + 8 + json.len() + 8 + bin.len()) as u32;
    let mut out = b"glTF".to_vec();
    out.extend(2u32.to_le_bytes());
    out.extend(total.to_le_bytes());
    out.extend((json.len() as u32).to_le_bytes());
    out.extend(b"JSON");
    out.extend(json);
    out.extend((bin.len() as u32).to_le_bytes());
    out.extend(b"BIN\0");
    out.extend(bin);
    out
}

/// The documents every mutation starts from, unmutated: each must load (a test of the
/// seeds themselves).
pub fn seeds() -> Vec<Vec<u8>> {
    (0..SEEDS.len())
        .map(|k| document(k, &mut Bytes::new(&[])))
        .collect()
}

/// A seed document, its JSON mutated by `bytes` (none, when they are used up: then every
/// byte reads zero, which asks for no mutation).
fn document(k: usize, bytes: &mut Bytes) -> Vec<u8> {
    let bin = seed_buffer();
    let is_glb = k == SEEDS.len() - 1;
    let uri = data_uri(&bin);
    let mut json = seed(k, (!is_glb).then_some(uri.as_str()));
    for _ in 0..bytes.u8() % 5 {
        mutate_somewhere(&mut json, bytes);
    }
    let text = serialize::to_vec(&json).expect("JSON values serialize");
    if !is_glb {
        return text;
    }
    let mut glb = glb(&text, &bin);
    // Sometimes the container too: a header or chunk length, the version, a chunk type.
    if bytes.u8() % 4 == 3 {
        let field = [8, 4, 12, 16, 20 + text.len().div_ceil(4) * 4][bytes.u8() as usize % 5];
        let value = number_u32(bytes);
        if let Some(slot) = glb.get_mut(field..field + 4) {
            slot.copy_from_slice(&value.to_le_bytes());
        }
    }
    glb
}

/// The seed the first byte chooses, mutated by the rest.
pub fn mutated(bytes: &mut Bytes) -> Vec<u8> {
    let k = bytes.u8() as usize % SEEDS.len();
    document(k, bytes)
}

// ---------------------------------------------------------------- the mutator

/// Every place in `value` as a JSON pointer (`/meshes/0/primitives/0/indices`).
fn places(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                places(item, format!("{at}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                let key = key.replace('~', "~0").replace('/', "~1");
                places(item, format!("{at}/{key}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// One mutation of one place in the document, both chosen by `bytes`.
fn mutate_somewhere(json: &mut Value, bytes: &mut Bytes) {
    let mut all = Vec::new();
    places(json, String::new(), &mut all);
    let choice = u16::from_le_bytes([bytes.u8(), bytes.u8()]) as usize % all.len();
    let place = json.pointer_mut(&all[choice]).expect("a place found above");
    if bytes.u8().is_multiple_of(16) {
        // Now and then, a value of another type.
        *place = [
            Value::Null,
            Value::from("x"),
            Value::Array(vec![]),
            Value::from(true),
        ][bytes.u8() as usize % 4]
            .clone();
        return;
    }
    match place {
        Value::Array(items) => mutate_array(items, bytes),
        Value::Object(_) => mutate_object(place, bytes),
        Value::String(text) => *text = string(text, bytes),
        _ => *place = number(place.as_i64(), bytes),
    }
}

/// Integers at the edges: small indices, type boundaries, and past them.
const EDGES: [i64; 24] = [
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    8,
    9,
    12,
    16,
    36,
    48,
    255,
    256,
    65_535,
    65_536,
    2_147_483_647,
    2_147_483_648,
    4_294_967_295,
    4_294_967_296,
    -1,
    -2_147_483_648,
];

/// A number for a place that holds `old` (when an integer): an edge, a small step from it, a
/// component type, a mode, a float at the edge of `f32` (or past it), or a huge one.
fn number(old: Option<i64>, bytes: &mut Bytes) -> Value {
    match bytes.u8() % 7 {
        0 | 1 => Value::from(EDGES[bytes.u8() as usize % EDGES.len()]),
        2 => Value::from(old.unwrap_or(0).saturating_add(bytes.u8() as i8 as i64 % 5)),
        3 => Value::from([5120, 5121, 5122, 5123, 5124, 5125, 5126, 5127][bytes.u8() as usize % 8]),
        4 => Value::from(bytes.u8() as i64 % 8),
        5 => Value::from(
            [1e39, -1e39, 3.4e38, 1e-45, 0.5, -0.0, 1e30, 1e20][bytes.u8() as usize % 8],
        ),
        _ => Value::from(u64::MAX - bytes.u8() as u64),
    }
}

/// A `u32` for a GLB header field: an edge, or one of the bytes.
fn number_u32(bytes: &mut Bytes) -> u32 {
    match number(None, bytes).as_i64() {
        Some(n) => n as u32,
        None => bytes.u8() as u32,
    }
}

/// A string for a place that holds `old`: an element type, an attribute or path name, a
/// buffer URI, or `old` cut short (a data URI that ends early).
fn string(old: &str, bytes: &mut Bytes) -> String {
    const WORDS: [&str; 16] = [
        "SCALAR",
        "VEC2",
        "VEC3",
        "VEC4",
        "MAT2",
        "MAT3",
        "MAT4",
        "POSITION",
        "translation",
        "scale",
        "",
        "missing.bin",
        "../outside.bin",
        "data:application/octet-stream;base64,",
        "data:;base64,AAAA",
        "data:text/plain,abc",
    ];
    match bytes.u8() % 3 {
        0 => {
            let keep = old.len() * bytes.u8() as usize / 256;
            old.chars().take(keep).collect()
        }
        _ => WORDS[bytes.u8() as usize % WORDS.len()].into(),
    }
}

/// Duplicates, drops, swaps or adds entries, or empties the array.
fn mutate_array(items: &mut Vec<Value>, bytes: &mut Bytes) {
    let (kind, i, j) = (bytes.u8() % 6, bytes.u8() as usize, bytes.u8() as usize);
    if items.is_empty() || kind == 5 {
        items.push(number(None, bytes));
        return;
    }
    let (i, j) = (i % items.len(), j % items.len());
    match kind {
        0 => items.insert(i, items[i].clone()),
        1 => drop(items.remove(i)),
        2 => items.swap(i, j),
        3 => items.clear(),
        _ => items.push(items[i].clone()),
    }
}

/// Removes a key of the object `object`, or adds (or replaces) one with a value of its kind.
fn mutate_object(object: &mut Value, bytes: &mut Bytes) {
    let Value::Object(map) = object else {
        return;
    };
    if bytes.u8().is_multiple_of(3) && !map.is_empty() {
        let key = map.keys().nth(bytes.u8() as usize % map.len()).cloned();
        map.remove(&key.expect("a key"));
        return;
    }
    let key = KEYS[bytes.u8() as usize % KEYS.len()];
    map.insert(key.into(), value_for(key, bytes));
}

/// Keys a glTF object may hold, at any level.
const KEYS: [&str; 43] = [
    "bufferView",
    "byteOffset",
    "byteStride",
    "byteLength",
    "count",
    "componentType",
    "type",
    "indices",
    "material",
    "mode",
    "mesh",
    "children",
    "skin",
    "camera",
    "scene",
    "nodes",
    "sampler",
    "source",
    "normalized",
    "matrix",
    "scale",
    "translation",
    "rotation",
    "sparse",
    "targets",
    "NORMAL",
    "TEXCOORD_0",
    "POSITION",
    "uri",
    "extensionsRequired",
    "scenes",
    "skins",
    "cameras",
    "textures",
    "images",
    "samplers",
    "animations",
    "materials",
    "joints",
    "skeleton",
    "inverseBindMatrices",
    "min",
    "max",
];

/// A value of the kind `key` holds, its numbers from `bytes`.
fn value_for(key: &str, bytes: &mut Bytes) -> Value {
    let mut n = || number(None, bytes).to_string();
    let text = match key {
        "children" | "nodes" | "joints" => format!("[{}, {}]", n(), n()),
        "matrix" => format!("[{},0,0,0, 0,1,0,0, 0,0,1,0, {},0,{},1]", n(), n(), n()),
        "scale" | "translation" | "min" | "max" => format!("[{}, 1, {}]", n(), n()),
        "rotation" => format!("[0, {}, 0, {}]", n(), n()),
        "sparse" => format!(
            r#"{{"count":{},"indices":{{"bufferView":{},"componentType":5125}},"values":{{"bufferView":{}}}}}"#,
            n(),
            n(),
            n()
        ),
        "targets" => format!(r#"[{{"POSITION":{}}}]"#, n()),
        "type" => r#""VEC3""#.into(),
        "uri" => r#""missing.bin""#.into(),
        "normalized" => "true".into(),
        "extensionsRequired" => r#"["KHR_draco_mesh_compression"]"#.into(),
        "scenes" => format!(r#"[{{"nodes":[{}]}}]"#, n()),
        "skins" => format!(r#"[{{"joints":[{}],"skeleton":{}}}]"#, n(), n()),
        "cameras" => r#"[{"type":"perspective","perspective":{"yfov":1,"znear":0.1}}]"#.into(),
        "textures" => format!(r#"[{{"sampler":{},"source":{}}}]"#, n(), n()),
        "images" => format!(
            r#"[{{"uri":"a.png"}},{{"bufferView":{},"mimeType":"image/png"}}]"#,
            n()
        ),
        "samplers" => "[{}]".into(),
        "animations" => format!(
            r#"[{{"channels":[{{"sampler":{},"target":{{"node":{},"path":"scale"}}}}],"samplers":[{{"input":{},"output":{}}}]}}]"#,
            n(),
            n(),
            n(),
            n()
        ),
        "materials" => format!(
            r#"[{{"name":"m"}},{{"pbrMetallicRoughness":{{"baseColorTexture":{{"index":{}}}}},"normalTexture":{{"index":{}}}}}]"#,
            n(),
            n()
        ),
        _ => n(),
    };
    deserialize::from_str(&text).expect("a value written above is JSON")
}
