//! The viewer's command line, which needs no window: `--help` prints its usage
//! (docs/command.md's too) and exits 0; a mistake is a sentence and exit code 2, before any
//! window opens. (The window itself is tested by `tests/viewer.rs`, in the meshray-tests crate, under
//! Xvfb.)

use std::process::{Command, Output};

fn viewer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_meshray-viewer"))
        .args(args)
        // No display: a viewer that got past its arguments would fail to open a window.
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap()
}

#[test]
fn help_prints_the_usage_the_docs_give() {
    let output = viewer(&["--help"]);
    assert!(output.status.success());
    let usage = String::from_utf8(output.stdout).unwrap();
    assert!(usage.starts_with("usage: meshray-viewer [MESH]"), "{usage}");
    for flag in ["--size", "--eye", "--target"] {
        assert!(usage.contains(flag), "{usage}");
    }
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/command.md"
    ))
    .unwrap();
    assert!(
        readme.contains(&usage),
        "docs/command.md gives the viewer's usage"
    );
    assert!(viewer(&["-h", "--eye"]).status.success());
}

#[test]
fn mistakes_are_sentences_before_any_window() {
    for (args, expected) in [
        (&["--eye", "1", "2"][..], "--eye needs 3 numbers"),
        (
            &["--size", "big"][..],
            "--size takes WIDTHxHEIGHT, 16 to 8192 each, not \"big\"",
        ),
        (&["--frobnicate"][..], "unknown option --frobnicate"),
    ] {
        let output = viewer(args);
        let message = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
        assert!(message.contains(expected), "{args:?}: {message}");
    }
    // A directory is named as one before any window is opened.
    let output = viewer(&[env!("CARGO_MANIFEST_DIR")]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is a directory"));
}
