//! A saved tree, damaged as the bytes say: loading refuses it or gives a tree that answers as brute force does.
#![no_main]
#[path = "../../fuzz_checks/mod.rs"]
mod fuzz_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_checks::saved_tree(data));
