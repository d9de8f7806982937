//! What the examples share: reading the command line, `--help` included.

/// The arguments after the program's name; for `--help` or `-h` anywhere, prints `usage`
/// and exits (every example answers `--help` with its usage, rather than taking it for a
/// file name).
pub fn args(usage: &str) -> Vec<String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{usage}");
        std::process::exit(0);
    }
    args
}

/// The mesh an example reads: its first argument, else the repository's scene.
#[allow(dead_code)] // plane2d reads no mesh
pub fn mesh_path(usage: &str) -> String {
    args(usage)
        .into_iter()
        .next()
        .unwrap_or_else(|| "assets/scene.obj".into())
}
