//! Any bytes as an STL file: load, build, validate, and compare queries with brute force.
#![no_main]
#[path = "../../fuzz_checks/mod.rs"]
mod fuzz_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_checks::stl_bytes(data));
