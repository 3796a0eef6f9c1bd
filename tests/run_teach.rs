//! `arm_ik run` teaching the arm without ROS: a program file run to its
//! end (exit 0) or to the step that fails (exit 2, naming it), trajectory
//! lines on stdin (a late point said), and `record_pose` lines writing
//! into `--poses` for a later run to replay.
#![cfg(feature = "app")]

mod common;

use serde_json::Value;
use std::process::Output;

fn with_stdin(args: &[&str], input: &str) -> Output {
    common::arm_ik_with_stdin(args, input, &common::project_dir())
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The joint states of a `--json` run (the summary line left out).
fn states(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "joint_state")
        .collect()
}

fn position(state: &Value, axis: usize) -> f64 {
    state["position"][axis].as_f64().unwrap()
}

#[test]
fn a_program_file_runs_to_its_end() {
    let out = with_stdin(
        &[
            "run",
            "--program",
            "config/programs/pick_place.yaml",
            "--poses",
            "config/poses_arm.yaml",
            "--json",
        ],
        "",
    );
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // It ends at home (config/poses_arm.yaml), the gripper left open.
    let last = states(&out).pop().unwrap();
    for (axis, want) in [0.0, 0.3, 1.0, 0.8, 0.0].iter().enumerate() {
        assert!((position(&last, axis) - want).abs() < 1e-6, "{last}");
    }
    let out = with_stdin(
        &[
            "run",
            "--program",
            "config/programs/pick_place.yaml",
            "--poses",
            "config/poses_arm.yaml",
        ],
        "",
    );
    let (said, _) = text(&out);
    assert!(
        said.contains("program 'pick_place': done, 9 steps"),
        "{said}"
    );
}

#[test]
fn a_failing_program_names_its_step_and_exits_2() {
    let dir = common::TempDir::new("run-program");
    let file = dir.path().join("reach_far.yaml");
    std::fs::write(
        &file,
        "- gripper: open\n- target: {position: [0.9, 0.0, 0.1]}\n- gripper: close\n",
    )
    .unwrap();
    let out = with_stdin(&["run", "--program", file.to_str().unwrap()], "");
    let (said, err) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}{err}");
    assert!(err.contains("program 'reach_far': step 2 of 3"), "{err}");
    // A program naming a joint the robot lacks is refused before anything moves.
    std::fs::write(&file, "- joints: {elbw: 0.3}\n").unwrap();
    let out = with_stdin(&["run", "--program", file.to_str().unwrap()], "");
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("step 1") && err.contains("elbw"), "{err}");
}

#[test]
fn trajectory_lines_are_followed_and_a_late_point_is_said() {
    let line = r#"{"type":"trajectory","joint_names":["shoulder","elbow"],"points":[{"positions":[0.4,0.8],"time_from_start":1.0},{"positions":[0.0,1.9],"time_from_start":1.2}]}"#;
    let out = with_stdin(&["run", "--stdin", "--json"], line);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out).1);
    let js = states(&out);
    // The line is taken at the first tick (0 s); point 1 at 1 s.
    let at_1 = js
        .iter()
        .find(|s| (s["stamp"].as_f64().unwrap() - 1.0).abs() < 0.01)
        .unwrap();
    assert!(
        (position(at_1, 1) - 0.4).abs() < 0.02 && (position(at_1, 2) - 0.8).abs() < 0.02,
        "{at_1}"
    );
    let last = js.last().unwrap();
    assert!(
        (position(last, 1) - 0.0).abs() < 1e-9 && (position(last, 2) - 1.9).abs() < 1e-9,
        "{last}"
    );
    let out = with_stdin(&["run", "--stdin"], line);
    let (said, _) = text(&out);
    assert!(
        said.contains("point 2 of 2 (due at 1.20 s) cannot be met in time: joint 'elbow' is held to its speed limit"),
        "{said}"
    );
    // A point outside the limits is refused, naming it.
    let bad = r#"{"type":"trajectory","joint_names":["elbow"],"points":[{"positions":[3.0],"time_from_start":1.0}]}"#;
    let out = with_stdin(&["run", "--stdin"], bad);
    let (said, _) = text(&out);
    assert!(
        said.contains("1 refused")
            && said.contains("point 1: joint 'elbow' at 3 is outside its limits"),
        "{said}"
    );
}

#[test]
fn a_pose_recorded_on_stdin_is_written_to_the_poses_file_and_replayed() {
    let dir = common::TempDir::new("run-record");
    let file = dir.path().join("poses.yaml");
    std::fs::copy(common::project_dir().join("config/poses_arm.yaml"), &file).unwrap();
    let poses = file.to_str().unwrap();
    // Without --realtime a line is one tick's input: the joint command is
    // repeated for 3 s of ticks so the arm gets there before it is relaxed.
    let go = r#"{"type":"joint_command","name":["base_yaw","elbow"],"position":[0.5,1.3]}"#;
    let mut lines = vec![go; 150];
    lines.push(r#"{"type":"relax"}"#);
    lines.push(r#"{"type":"record_pose","name":"over_there"}"#);
    let lines = lines.join("\n");
    let out = with_stdin(
        &["run", "--stdin", "--poses", poses, "--duration", "4"],
        &lines,
    );
    let (said, err) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(said.contains("recorded pose 'over_there' in"), "{said}");
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(
        written.contains("# Ready in front") && written.contains("over_there:"),
        "{written}"
    );
    let out = with_stdin(
        &["run", "--stdin", "--poses", poses, "--json"],
        r#"{"type":"pose","name":"over_there"}"#,
    );
    let last = states(&out).pop().unwrap();
    assert!(
        (position(&last, 0) - 0.5).abs() < 1e-6 && (position(&last, 2) - 1.3).abs() < 1e-6,
        "{last}"
    );
}
