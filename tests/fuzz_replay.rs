//! The fuzz targets' checks under `cargo test`: every input kept in `tests/fuzz/corpus`
//! (seeds and what the fuzzer found worth keeping), then random inputs.
mod common;
mod fuzz_checks;

use std::path::Path;

fn replay(target: &str, check: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "{} fails", path.display());
        n += 1;
    }
    n
}

/// The corpus of `target` (at least `min` inputs), then `cases` random inputs.
fn corpus_and_random(target: &str, check: fn(&[u8]), min: usize, cases: usize, seed: u64) {
    let n = replay(target, check);
    assert!(n >= min, "the {target} corpus should not be empty ({n})");
    random(check, cases, seed);
}

fn random(check: fn(&[u8]), cases: usize, seed: u64) {
    let mut rng = common::Rng::new(seed);
    for _ in 0..cases {
        let len = rng.below(400);
        let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "input {data:?} fails");
    }
}

#[test]
fn obj_bytes_corpus() {
    let n = replay("obj_bytes", fuzz_checks::obj_bytes);
    assert!(n > 10, "the corpus should not be empty ({n})");
}

#[test]
fn soup_corpus_and_random_inputs() {
    corpus_and_random("soup", fuzz_checks::soup, 11, 20_000, 99);
}

#[test]
fn obj_text_made_of_obj_words() {
    // random bytes rarely make OBJ; random lines of OBJ words do
    let words = [
        "v", "vt", "vn", "f", "l", "o", "g", "usemtl", "mtllib", "#", "1", "-1", "2/2", "3//1",
        "0", "0.5", "nan", "1e39", "-", "\r", "/", "4/1/1",
    ];
    let mut rng = common::Rng::new(5);
    for _ in 0..20_000 {
        let mut text = String::new();
        for _ in 0..rng.below(30) {
            for _ in 0..1 + rng.below(5) {
                text.push_str(words[rng.below(words.len())]);
                text.push(' ');
            }
            text.push('\n');
        }
        let outcome = std::panic::catch_unwind(|| fuzz_checks::obj_bytes(text.as_bytes()));
        assert!(outcome.is_ok(), "input {text:?} fails");
    }
}

#[cfg(feature = "gltf")]
#[test]
fn gltf_json_seeds_load() {
    use meshray::{LoadOptions, Mesh};
    for (k, document) in fuzz_checks::gltf_json::seeds().iter().enumerate() {
        let mesh = Mesh::from_bytes(
            document,
            &LoadOptions {
                format: Some(meshray::mesh::Format::Gltf),
                ..Default::default()
            },
        );
        assert!(mesh.is_ok_and(|m| m.load_warnings().is_empty()), "seed {k}");
        fuzz_checks::gltf_json::gltf_json(document);
    }
}

#[cfg(feature = "gltf")]
#[test]
fn gltf_json_corpus_and_random_inputs() {
    corpus_and_random(
        "gltf_json",
        fuzz_checks::gltf_json::gltf_json,
        11,
        5_000,
        11,
    );
}

#[cfg(feature = "ply")]
#[test]
fn ply_bytes_corpus_and_random_inputs() {
    corpus_and_random("ply_bytes", fuzz_checks::ply_bytes, 5, 5_000, 21);
}

#[cfg(feature = "stl")]
#[test]
fn stl_bytes_corpus_and_random_inputs() {
    corpus_and_random("stl_bytes", fuzz_checks::stl_bytes, 5, 5_000, 22);
}

#[cfg(feature = "serde")]
#[test]
fn saved_tree_corpus_and_random_inputs() {
    corpus_and_random("saved_tree", fuzz_checks::saved_tree, 5, 5_000, 23);
}
