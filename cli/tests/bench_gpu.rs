//! `meshray bench --gpu`: with the GPU crate built in (`--features gpu`), each set is cast on
//! the GPU too and its answers compared with the CPU's (on lavapipe in CI); without it, the
//! flag is refused with how to build it.

use std::process::{Command, Output};

fn meshray(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_meshray"))
        .args(args)
        .output()
        .unwrap()
}

fn scene() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/scene.obj").to_string()
}

#[cfg(not(feature = "gpu"))]
#[test]
fn without_the_gpu_feature_the_flag_says_how_to_build_it() {
    let out = meshray(&["bench", &scene(), "--gpu"]);
    assert_eq!(out.status.code(), Some(2));
    let message = String::from_utf8_lossy(&out.stderr);
    assert!(message.contains("--features gpu"), "{message}");
}

/// The three standard sets (small), closest and any hits, text and JSON: a GPU line beside
/// each set's, and no answer differing from the CPU's.
#[cfg(feature = "gpu")]
#[test]
#[cfg_attr(
    not(vulkan_driver),
    ignore = "no Vulkan driver here (Debian: mesa-vulkan-drivers)"
)]
fn the_gpu_lines_sit_beside_the_cpus_and_agree() {
    let small = [
        "--width", "48", "--random", "3000", "--passes", "1", "--gpu",
    ];
    let run = |extra: &[&str]| {
        let mut args = vec!["bench", "--threads", "2"];
        let scene = scene();
        args.push(&scene);
        args.extend(small);
        args.extend(extra);
        let out = meshray(&args);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    for extra in [&[][..], &["--any"], &["--batch"]] {
        let text = run(extra);
        assert!(text.contains("GPU: "), "{text}");
        let gpu_lines: Vec<_> = text.lines().filter(|l| l.contains(" GPU ")).collect();
        assert_eq!(gpu_lines.len(), 3, "{text}");
        for line in gpu_lines {
            assert!(
                line.ends_with("; 0 differ from the CPU's"),
                "{extra:?}: {line}"
            );
        }
    }
    let json = run(&["--json"]);
    let gpu: Vec<_> = json
        .lines()
        .filter(|l| l.contains("\"device\":\"gpu\""))
        .collect();
    assert_eq!(gpu.len(), 3, "{json}");
    assert!(gpu.iter().all(|l| l.contains("\"differ\":0")), "{json}");
    assert!(gpu[0].contains("\"set\":\"primary\"") && gpu[0].contains("\"rays\":2304"));
}

#[cfg(feature = "gpu")]
#[test]
fn the_gpu_takes_the_watertight_test_only() {
    for extra in ["--cramer", "--details"] {
        let out = meshray(&["bench", &scene(), "--gpu", extra]);
        assert_eq!(out.status.code(), Some(2), "{extra}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--gpu casts with the watertight"));
    }
}
