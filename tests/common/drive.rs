//! `arm_ik drive` on a port, as the firmware-in-simulation tests run it.

use super::project_dir;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Joint values as `--joints` takes them.
pub fn joints_arg(angles: &[f64]) -> String {
    angles
        .iter()
        .map(|q| q.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// The command line of `arm_ik drive --json` of `angles` on `port`.
pub fn drive_command(config: &str, port: &str, angles: &[f64], hold: f64) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_arm_ik"));
    c.current_dir(project_dir())
        .args(["drive", "--config", config, "--port", port, "--json"])
        .args(["--joints", &joints_arg(angles), "--hold", &hold.to_string()]);
    c
}

/// `arm_ik drive --json` on `port`; returns the process output and its
/// JSON summary (Null when it printed none).
pub fn drive(config: &str, port: &str, angles: &[f64], hold: f64) -> (std::process::Output, Value) {
    let out = drive_command(config, port, angles, hold)
        .output()
        .expect("run arm_ik drive");
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out, json)
}

/// Runs `drive` and checks it streamed to a connected firmware without
/// losing frames and finished the start-up move; returns the JSON summary.
pub fn drive_ok(config: &str, port: &str, angles: &[f64], hold: f64) -> Value {
    let (out, json) = drive(config, port, angles, hold);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "drive failed: {stderr}");
    assert_eq!(json["connected"], true, "{json}\n{stderr}");
    assert_eq!(json["connects"], 1, "{json}");
    assert_eq!(json["frames_lost"], 0, "{json}");
    assert_eq!(json["ramping"], false, "{json}\n{stderr}");
    assert!(json["frames_sent"].as_u64().unwrap() > 0, "{json}");
    json
}

/// Repoints (or creates) the symlink `link` to `target` in one step: a
/// board plugged in (again) behind the same path.
pub fn point(link: &Path, target: &str) {
    let tmp = link.with_extension("new");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp).unwrap();
    std::fs::rename(&tmp, link).unwrap();
}
