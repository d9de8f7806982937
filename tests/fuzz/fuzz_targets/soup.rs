//! Any triangle soup and rays (any floats): BVH answers equal brute force.
#![no_main]
#[path = "../../fuzz_checks/mod.rs"]
mod fuzz_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_checks::soup(data));
