//! The commands, one module each, and the dispatch from the command line to them.
//!
//! Every command has a `USAGE` text (what `meshray COMMAND --help` prints, and docs/command.md
//! repeats) and a `run` that takes the words after its name.

pub mod bench;
pub mod pick;
pub mod render;
pub mod scaling;
pub mod scene;
pub mod select;
pub mod slice;
pub mod sweep;

use crate::Failure;
use crate::args::wants_help;
use std::process::ExitCode;

/// A command: its name, one line about it, its usage, and what runs it.
pub struct Command {
    /// The word that names it: `meshray NAME`.
    pub name: &'static str,
    /// What it does, in one line.
    pub summary: &'static str,
    /// Its usage and options, printed by `--help`.
    pub usage: &'static str,
    /// Runs it on the words after its name.
    pub run: fn(Vec<String>) -> Result<(), Failure>,
}

/// Every command, in the order `meshray --help` lists them.
pub const COMMANDS: [Command; 8] = [
    Command {
        name: "pick",
        summary: "the triangle under a pixel, or hit by a ray of your own",
        usage: pick::USAGE,
        run: pick::run,
    },
    Command {
        name: "sweep",
        summary: "a sphere or capsule moved through the mesh until it touches",
        usage: sweep::USAGE,
        run: sweep::run,
    },
    Command {
        name: "render",
        summary: "a PNG ray-cast by the library: shaded by normal or depth, or a cost heatmap",
        usage: render::USAGE,
        run: render::run,
    },
    Command {
        name: "select",
        summary: "box select: the triangles under a rectangle, all and only the visible ones",
        usage: select::USAGE,
        run: select::run,
    },
    Command {
        name: "slice",
        summary: "a plane through a mesh, coloured by signed distance: where inside is",
        usage: slice::USAGE,
        run: slice::run,
    },
    Command {
        name: "scene",
        summary: "picking in a scene of instanced meshes placed with transforms",
        usage: scene::USAGE,
        run: scene::run,
    },
    Command {
        name: "scaling",
        summary: "build and query speed as the mesh is subdivided 4x per level",
        usage: scaling::USAGE,
        run: scaling::run,
    },
    Command {
        name: "bench",
        summary: "ray throughput and build time, on standard or given ray sets",
        usage: bench::USAGE,
        run: bench::run,
    },
];

/// `meshray --help`: the commands and how to get each one's usage.
pub fn overview() -> String {
    let mut out = String::from(
        "meshray: exact ray casting against triangle meshes, from the command line\n\n\
         usage: meshray COMMAND [ARGS]...\n       meshray COMMAND --help\n\ncommands:\n",
    );
    for command in &COMMANDS {
        out += &format!("  {:<8} {}\n", command.name, command.summary);
    }
    out += "\nMESH is any file meshray reads: OBJ, STL, PLY, glTF or GLB. Without one, the \
            commands use the\nrepository's assets/scene.obj.\n";
    out
}

/// Runs the command line `words` (without the program's name): the command it names with
/// the rest, or the overview for `--help`. Prints any failure as `meshray COMMAND: ...`.
pub fn run(mut words: Vec<String>) -> ExitCode {
    let first = if words.is_empty() {
        None
    } else {
        Some(words.remove(0))
    };
    let name = match first.as_deref() {
        None => {
            eprint!("{}", overview());
            return ExitCode::from(2);
        }
        Some("-h" | "--help" | "help") => {
            crate::say_raw!("{}", overview());
            return ExitCode::SUCCESS;
        }
        Some("-V" | "--version") => {
            crate::say!("meshray {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        Some(name) => name,
    };
    let Some(command) = COMMANDS.iter().find(|c| c.name == name) else {
        let names: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        eprintln!(
            "meshray: there is no command \"{name}\"; the commands are {} (see meshray --help)",
            names.join(", ")
        );
        return ExitCode::from(2);
    };
    if wants_help(&words) {
        crate::say_raw!("{}", command.usage);
        return ExitCode::SUCCESS;
    }
    match (command.run)(words) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("meshray {}: {failure}", command.name);
            ExitCode::from(failure.exit_code())
        }
    }
}
