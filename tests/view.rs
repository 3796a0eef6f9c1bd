//! The arm seen without ROS: the MCAP bags `arm_ik` writes (`sim
//! --record`, `replay --output`) and its live `--view` carry
//! `/robot_description`, `/tf_static`, `/tf`, the joint states, the
//! targets and their markers, so Foxglove, or `ros2 bag play` into RViz,
//! shows the arm moving with no other node.
//!
//! Read back by independent Python: `rosbags` (CDR and schemas against its
//! ROS 2 Jazzy type store, forward kinematics with numpy from the URDF)
//! and a plain `websockets` client speaking the Foxglove protocol. Needs
//! `.venv` (`scripts/python-env`); SKIP without it, except under CI.

#![cfg(feature = "app")]

mod common;

use common::{TempDir, arm_ik, project_dir, project_urdf, signal, spawn_arm_ik, venv_python};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Command;

fn py(python: &Path, script: &str, args: &[&str]) -> Value {
    let o = Command::new(python)
        .arg(project_dir().join("tests/python").join(script))
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{script} {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn run(args: &[&str]) {
    let o = arm_ik(args);
    assert!(
        o.status.success(),
        "arm_ik {args:?}: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The checks of `check_view_bag.py` on one bag of the project arm.
fn assert_shows_the_arm(python: &Path, bag: &Path) {
    let urdf = project_urdf("arm.urdf");
    let v = py(
        python,
        "check_view_bag.py",
        &[
            bag.to_str().unwrap(),
            urdf.to_str().unwrap(),
            "base_link",
            "tool",
        ],
    );
    assert_eq!(
        v["failures"],
        serde_json::json!([]),
        "{}: {v}",
        bag.display()
    );
    let n = v["joint_states"].as_u64().unwrap();
    assert!(n > 50, "{v}");
    assert_eq!(v["tf"].as_u64(), Some(n), "a /tf per joint state: {v}");
    // urdf/arm.urdf's one fixed joint: hand -> tool.
    assert_eq!(v["tf_static"].as_u64(), Some(1), "{v}");
    assert!(v["targets"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["markers"], v["targets"], "a marker per target: {v}");
    let err = v["max_tip_error_m"].as_f64().unwrap();
    assert!(err <= 1e-6, "the /tf chain puts the tip {err} m off FK");
}

#[test]
fn recorded_bags_show_the_arm_as_robot_state_publisher_would() {
    let Some(python) = venv_python("rosbags") else {
        return;
    };
    let dir = TempDir::new("view-bags");
    let p = |n: &str| dir.path().join(n).to_str().unwrap().to_string();
    // sim --record, a bare MCAP file.
    run(&["sim", "--duration", "2", "--record", &p("sim.mcap")]);
    assert_shows_the_arm(&python, &dir.path().join("sim.mcap"));
    // replay --output, a bag folder, of a scenario's targets.
    run(&[
        "make-bag",
        "tests/data/scenario.yaml",
        "--output",
        &p("targets.mcap"),
    ]);
    run(&["replay", &p("targets.mcap"), "--output", &p("replayed")]);
    assert_shows_the_arm(&python, &dir.path().join("replayed"));
}

/// Runs `arm_ik ARGS` (which serve `--view`), reads the printed `ws://`
/// URL and listens with `view_client.py` for `seconds`: what it received.
/// The command must still be running then, and it is stopped with Ctrl-C,
/// which it must take as a user's stop (exit 130). Its `--duration` (or
/// bag) only bounds a hung run: a run that had to end by itself had to
/// outlast the client's Python start-up (rosbags' type store), which a
/// loaded machine can stretch past any fixed duration, and the client then
/// saw too little.
fn watch_live(args: &[&str], cwd: &Path, seconds: &str) -> Value {
    let python = venv_python("websockets").expect("checked by the caller");
    let mut child = spawn_arm_ik(args, cwd);
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    let url = loop {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "no URL printed");
        if let Some(at) = line.find("ws://") {
            break line[at..].trim().to_string();
        }
    };
    assert!(url.starts_with("ws://127.0.0.1:"), "{url}");
    let v = py(&python, "view_client.py", &[&url, seconds]);
    assert!(
        child.try_wait().unwrap().is_none(),
        "arm_ik {args:?} ended before the client was done"
    );
    signal(&child, "INT");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "arm_ik {args:?}: {status}");
    v
}

/// What a viewer of the project arm received: its URDF, every message
/// decoded, and the base's first moving frame on /tf.
fn assert_shows_the_project_arm(v: &Value) {
    let urdf = std::fs::read_to_string(project_urdf("arm.urdf")).unwrap();
    assert_eq!(v["description"].as_str(), Some(urdf.as_str()));
    assert_eq!(v["undecodable"], 0, "{v}");
    assert!(
        (v["tf_frames"].as_array().unwrap())
            .contains(&serde_json::json!(["base_link", "turntable"])),
        "{v}"
    );
}

#[test]
fn a_websocket_client_receives_the_arm_live_at_the_loop_rate() {
    if venv_python("websockets").is_none() {
        return;
    }
    let dir = TempDir::new("view-live");
    // Port 0: a free one, which the printed URL names. The client joins
    // after the description was sent: it comes again, latched.
    let v = watch_live(
        &["sim", "--view", "127.0.0.1:0", "--duration", "120"],
        dir.path(),
        "1.5",
    );
    assert_shows_the_project_arm(&v);
    assert_eq!(
        v["tf_static_frames"],
        serde_json::json!([["hand", "tool"]]),
        "{v}"
    );
    let topics = &v["topics"];
    for (topic, schema) in [
        ("/tf", "tf2_msgs/msg/TFMessage"),
        ("/joint_states", "sensor_msgs/msg/JointState"),
        ("/target_point", "geometry_msgs/msg/PointStamped"),
        ("/target_marker", "visualization_msgs/msg/Marker"),
    ] {
        let t = &topics[topic];
        assert_eq!(t["schema"], schema, "{topic}: {v}");
        assert_eq!(t["encoding"], "cdr", "{topic}: {v}");
        // The node's 50 Hz loop (log times), and messages all along
        // the 1.5 s (about 75; fewer on a loaded machine).
        let rate = t["rate_hz"].as_f64().unwrap();
        assert!((45.0..=55.0).contains(&rate), "{topic} at {rate} Hz: {v}");
        assert!(t["count"].as_u64().unwrap() >= 30, "{topic}: {v}");
    }
}

/// `teleop --view`: a follower driven by a leader arm (two simulated
/// Feetech buses) is served live as `sim`'s arm is: the description, its
/// transforms and joint states at the loop's rate.
#[test]
fn teleop_view_serves_the_follower_live() {
    if venv_python("websockets").is_none() {
        return;
    }
    let dir = TempDir::new("view-teleop");
    let cfg = dir.path().join("servos.yaml");
    let text = common::project_config("servos_feetech.yaml")
        .replace("reply_timeout_ms: 100", "reply_timeout_ms: 300");
    std::fs::write(&cfg, text).unwrap();
    let mut ports = Vec::new();
    let mut sims = Vec::new();
    for name in ["leader", "follower"] {
        let link = dir.path().join(name);
        let log = dir.path().join(format!("{name}.jsonl"));
        let sim = common::bus_sim::Sim::start(
            "feetech_bus.py",
            &log,
            &["--ids", "1,2,3,4,5,6", "--present", "2048"],
        );
        sim.plug(&link);
        ports.push(link.to_str().unwrap().to_string());
        sims.push(sim);
    }
    let cfg = cfg.to_str().unwrap();
    let v = watch_live(
        &[
            "teleop",
            "--leader",
            cfg,
            "--leader-port",
            &ports[0],
            "--follower",
            cfg,
            "--follower-port",
            &ports[1],
            "--view",
            "127.0.0.1:0",
            "--duration",
            "120",
        ],
        &project_dir(),
        "1.5",
    );
    assert_shows_the_project_arm(&v);
    for (topic, schema) in [
        ("/tf", "tf2_msgs/msg/TFMessage"),
        ("/joint_states", "sensor_msgs/msg/JointState"),
    ] {
        let t = &v["topics"][topic];
        assert_eq!(t["schema"], schema, "{topic}: {v}");
        // The loop's 50 Hz, fewer on a loaded machine.
        assert!(t["count"].as_u64().unwrap() >= 20, "{topic}: {v}");
    }
    drop(sims);
}

/// `replay --view`: a bag's targets and the arm solving them, served at
/// the bag's own pace: a 60 s scenario is still being replayed once the
/// client has listened (a replay at full speed ends in a moment), and the
/// client's 1.5 s hold messages of every topic all along.
#[test]
fn replay_view_serves_the_bag_at_its_recorded_pace() {
    if venv_python("websockets").is_none() {
        return;
    }
    let dir = TempDir::new("view-replay");
    let scenario = dir.path().join("scenario.yaml");
    std::fs::write(
        &scenario,
        "frame_id: base_link\nrate_hz: 50\nwaypoints:\n  - {time: 0.0, position: [0.20, -0.05, 0.15]}\n  - {time: 60.0, position: [0.20, 0.05, 0.15]}\n",
    )
    .unwrap();
    let bag = dir.path().join("targets.mcap");
    let (scenario, bag) = (scenario.to_str().unwrap(), bag.to_str().unwrap());
    run(&["make-bag", scenario, "--output", bag]);
    let v = watch_live(&["replay", bag, "--view", "127.0.0.1:0"], dir.path(), "1.5");
    assert_eq!(v["undecodable"], 0, "{v}");
    let urdf = std::fs::read_to_string(project_urdf("arm.urdf")).unwrap();
    assert_eq!(v["description"].as_str(), Some(urdf.as_str()));
    for topic in ["/tf", "/joint_states", "/target_point", "/target_marker"] {
        let t = &v["topics"][topic];
        assert!(t["count"].as_u64().unwrap_or(0) >= 20, "{topic}: {v}");
    }
}
