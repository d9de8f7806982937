//! The `meshray` command: meshray's picking, sweeps, pictures, selection, scenes and benchmarks from
//! the command line, on any mesh the library reads.
//!
//! ```text
//! meshray pick [MESH] ...      the triangle under a pixel, or hit by a ray of your own
//! meshray sweep [MESH] ...     a sphere or capsule moved until it touches
//! meshray render [MESH] ...    a PNG ray-cast by the library (normal, depth, cost heatmap)
//! meshray select [MESH] ...    box select: every triangle under a rectangle, and the visible
//! meshray scene [MESH]... ...  picking in a scene of placed, instanced meshes
//! meshray scaling [MESH] ...   build and query speed as the mesh is subdivided
//! meshray bench [MESH] ...     ray throughput on standard or given ray sets
//! ```
//!
//! `meshray COMMAND --help` prints a command's usage. Install with
//! `cargo install --path cli`, or run from the repository with
//! `cargo run --release -p meshray-cli -- COMMAND ...`.
//!
//! The binary is a thin dispatcher ([`commands::run`]); each command is a module of
//! [`commands`], and the pieces they share are modules here: the viewer
//! (`examples/viewer`) uses the [`camera`], [`args`] and [`mesh`] modules too, and the peer
//! comparison (`benches/peers`) the [`rays`] files.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod args;
pub mod camera;
pub mod commands;
pub mod failure;
pub mod json;
pub mod memory;
pub mod mesh;
pub mod output;
pub mod picture;
pub mod progress;
pub mod rays;
pub mod subdivide;

pub use failure::Failure;
