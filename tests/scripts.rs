//! The scripts find what cargo built where cargo put it: many people set
//! `CARGO_TARGET_DIR` globally, and `scripts/test` then failed in
//! `scripts/check-packaging` ("FileNotFoundError: ... target/release/arm_ik")
//! because it ran the binary at the repository's `target/`.

mod common;

use std::path::Path;
use std::process::Command;

/// `scripts/target-dir` with `CARGO_TARGET_DIR` set to `dir`.
fn target_dir(dir: &str) -> String {
    let out = Command::new(common::project_dir().join("scripts/target-dir"))
        .env("CARGO_TARGET_DIR", dir)
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn target_dir_is_where_cargo_builds() {
    let elsewhere = std::env::temp_dir().join("arm_ik-elsewhere");
    assert_eq!(
        target_dir(elsewhere.to_str().unwrap()),
        elsewhere.to_str().unwrap()
    );
    // Relative to the repository, where the scripts run cargo.
    let relative = common::project_dir().join("build-out");
    assert_eq!(target_dir("build-out"), relative.to_str().unwrap());
}

/// No script names a build folder of its own: each asks
/// `scripts/target-dir` (or runs `cargo run`).
#[test]
fn no_script_hard_codes_the_target_folder() {
    let root = common::project_dir();
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("scripts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.extend(["firmware-bridge/build", "firmware-bridge/test-sim"].map(|f| root.join(f)));
    for f in files.iter().filter(|f| f.is_file()) {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            let code = line.split('#').next().unwrap_or_default();
            for bad in ["target/release", "target/debug", "CARGO_TARGET_DIR:-"] {
                assert!(
                    !code.contains(bad),
                    "{}:{}: {line} (use scripts/target-dir)",
                    f.strip_prefix(&root).unwrap_or(Path::new("?")).display(),
                    i + 1
                );
            }
        }
    }
}
