//! The GPU tests' view of this machine, so a test that cannot run here is compiled as
//! `#[ignore]` and counted as ignored instead of passing without checking anything:
//! `shared_meshes` and `vulkan_driver` as for the library's and the command's tests
//! (../tests/build.rs), both also set under `CI=true`, where a missing driver or mesh is a
//! failure, not a skip. The crate's own code has no build-time configuration: none of this
//! reaches a user's build.

include!("../tests/build.rs");
