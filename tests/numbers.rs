//! Numbers on the command line and in the files the commands read: every
//! one has a range, and a value outside it (or one that would overflow
//! the arithmetic behind it) is a clear error, never an empty output or a
//! run without end. Each flag's parser is held to this by the unit test
//! `cli::values::every_flag`, over clap's own list of flags; these are the
//! cases users met, end to end.

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

mod common;

use common::{TempDir, arm_ik};
use std::process::Output;
use std::time::{Duration, Instant};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The command fails with `code` at once, saying `says` and no number of
/// more than 20 digits.
fn refused(args: &[&str], code: i32, says: &str) {
    let start = Instant::now();
    let out = arm_ik(args);
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {e}");
    assert!(e.contains(says), "{args:?}: expected '{says}' in: {e}");
    assert!(
        !e.split(|c: char| !c.is_ascii_digit()).any(|d| d.len() > 20),
        "{args:?}: {e}"
    );
    assert!(start.elapsed() < Duration::from_secs(30), "{args:?}");
}

/// Every non-finite numeric flag is a usage error, 64, whatever parses it:
/// the lists (`--seed`, `--joints`) and the gripper positions included,
/// which exited 1 while `--position nan` exited 64.
#[test]
fn a_non_finite_number_is_a_usage_error_on_every_flag() {
    let arm = ["--urdf", "urdf/arm.urdf"];
    let solve = [&["solve"][..], &arm, &["--position", "0.2,0,0.2"]].concat();
    refused(
        &[&solve[..], &["--seed", "nan,0,0,0,0"]].concat(),
        64,
        "'nan' is not finite",
    );
    refused(&[&solve[..], &["--pitch", "nan"]].concat(), 64, "--pitch");
    refused(
        &["solve", "--urdf", "urdf/arm.urdf", "--position", "nan,0,0"],
        64,
        "--position",
    );
    let drive = ["drive", "--config", "config/servos_pwm.yaml", "--joints"];
    refused(&[&drive[..], &["nan,0,0,0,0"]].concat(), 64, "--joints");
    refused(&["sim", "--gripper-open", "nan"], 64, "--gripper-open");
    refused(&["sim", "--gripper-closed", "inf"], 64, "--gripper-closed");
    refused(
        &[
            "drive",
            "--config",
            "config/servos_pwm.yaml",
            "--joints",
            "0,0,0,0,0",
            "--hold",
            "nan",
        ],
        64,
        "--hold",
    );
    refused(
        &["fk", "--urdf", "urdf/arm.urdf", "--joints", "0,0,-inf,0,0"],
        64,
        "--joints",
    );
}

/// Numbers too large to mean anything are refused at once with the range,
/// not run until killed (`sim --rate 1e300`), spun on (`drive --hold
/// 1e9`) or printed as 300 digits (`solve --budget-ms 1e300`).
#[test]
fn numbers_out_of_range_are_refused_with_the_range() {
    refused(&["sim", "--rate", "1e300"], 64, "at most 1e6");
    refused(&["sim", "--rate", "50000"], 64, "at most 10000 Hz");
    refused(&["sim", "--duration", "1e300"], 64, "at most 1e6");
    let solve = [
        "solve",
        "--urdf",
        "urdf/arm.urdf",
        "--position",
        "0.2,0,0.2",
    ];
    refused(
        &[&solve[..], &["--budget-ms", "1e300"]].concat(),
        64,
        "--budget-ms",
    );
    refused(
        &[
            "solve",
            "--urdf",
            "urdf/arm.urdf",
            "--position",
            "1e300,0,0",
        ],
        64,
        "at most 1e6",
    );
    let drive = [
        "drive",
        "--config",
        "config/servos_pwm.yaml",
        "--joints",
        "0,0,0,0,0",
    ];
    refused(&[&drive[..], &["--hold", "1e9"]].concat(), 64, "--hold");
    // Within range, virtual servos simulate only until they have arrived.
    let start = Instant::now();
    let out = arm_ik(&[&drive[..], &["--hold", "100000"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(start.elapsed() < Duration::from_secs(10));
}

/// A waypoint at `time: 1e19` overflowed the message count into an empty
/// bag and exit 0; now the scenario is refused with why and what to change.
#[test]
fn a_scenario_past_what_a_ros_stamp_holds_is_refused() {
    let dir = TempDir::new("numbers-scenario");
    for time in ["1e16", "1e19", "1e20", "1e300"] {
        let file = dir.path().join("s.yaml");
        std::fs::write(
            &file,
            format!("rate_hz: 1000\nwaypoints:\n  - {{time: 0, position: [0.2, 0, 0.15]}}\n  - {{time: {time}, position: [0.2, 0.1, 0.15]}}\n"),
        )
        .unwrap();
        let bag = dir.path().join("bag");
        let args = [
            "make-bag",
            file.to_str().unwrap(),
            "--output",
            bag.to_str().unwrap(),
        ];
        refused(&args, 1, "2038-01-19");
        refused(&[&args[..], &["--force"]].concat(), 1, "lower the times");
        assert!(!bag.exists(), "{time}: a bag was written");
    }
}

/// A URDF whose joint offsets are 1e308 is refused by the loader, naming
/// the joint, instead of giving "position error inf m".
#[test]
fn a_urdf_with_joint_offsets_of_no_robot_is_refused() {
    let dir = TempDir::new("numbers-urdf");
    let arm = std::fs::read_to_string(common::project_urdf("arm.urdf")).unwrap();
    // The turntable's joint, base_yaw, placed far beyond any robot.
    let at = arm.find("<joint name=\"base_yaw\"").unwrap();
    let origin = at + arm[at..].find("<origin xyz=\"0 0 0.045\"").unwrap();
    let mut big = arm.clone();
    big.replace_range(origin..origin + 24, "<origin xyz=\"1e308 0 1e308\"");
    let file = dir.path().join("big.urdf");
    std::fs::write(&file, big).unwrap();
    for cmd in [
        vec!["check", file.to_str().unwrap()],
        vec!["sim", "--urdf", file.to_str().unwrap(), "--duration", "1"],
    ] {
        refused(&cmd, 1, "origin xyz \"1e308 0 1e308\"");
    }
}
