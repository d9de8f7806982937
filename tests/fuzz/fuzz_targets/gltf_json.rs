//! glTF documents, their JSON's numbers and indices mutated (or any document as is): load as
//! a mesh and as a scene, then build, validate, and compare queries with brute force.
#![no_main]
#[path = "../../fuzz_checks/mod.rs"]
mod fuzz_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_checks::gltf_json::gltf_json(data));
