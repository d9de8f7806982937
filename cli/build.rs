//! The test suite's view of this machine, as for the library: see ../build.rs.
include!("../tests/build.rs");
