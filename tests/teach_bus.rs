//! Teaching the arm on a simulated Feetech bus (`tests/python/
//! feetech_bus.py`): `arm_ik teach` relaxes the servos (torque off, no
//! goal), and a name typed on stdin stores the pose the servos measure
//! into the poses file, keeping its comments; `arm_ik run` on the same bus
//! then brings the servos back to that pose by its name. A trajectory on
//! the bus: its point is reached at its time, and a point the speed limit
//! cannot meet in time is said and reached late, the goals written to the
//! servos held to the limit. Needs `python3` (SKIP without it, unless `CI`
//! is set).
#![cfg(feature = "app")]

mod common;

use common::bus_sim::Sim;
use common::{TempDir, have_python};
use serde_json::json;
use std::path::Path;

/// Ticks per radian of an STS3215 (4096 a turn).
const SCALE: f64 = 4096.0 / std::f64::consts::TAU;

/// The project's Feetech file with a reply timeout a busy machine cannot
/// trip, in `dir`.
fn config(dir: &Path) -> String {
    let cfg = dir.join("servos.yaml");
    let text = common::project_config("servos_feetech.yaml")
        .replace("reply_timeout_ms: 100", "reply_timeout_ms: 300");
    std::fs::write(&cfg, text).unwrap();
    cfg.to_str().unwrap().to_string()
}

/// (arrival time, goal) of every goal written to servo `id`.
fn timed_goals(sim: &Sim, id: u64) -> Vec<(f64, f64)> {
    sim.events()
        .iter()
        .filter(|e| e["id"] == id)
        .filter_map(|e| Some((e["t"].as_f64()?, e["goal"].as_f64()?)))
        .collect()
}

#[test]
fn a_pose_set_by_hand_is_stored_under_its_name() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("teach-bus");
    let cfg = config(dir.path());
    let poses = dir.path().join("poses.yaml");
    std::fs::copy(common::project_dir().join("config/poses_arm.yaml"), &poses).unwrap();
    let link = dir.path().join("bus");
    // Where the arm was posed by hand (ticks of ids 1..6).
    let mut sim = Sim::start(
        "feetech_bus.py",
        &dir.path().join("log.jsonl"),
        &[
            "--ids",
            "1,2,3,4,5,6",
            "--present",
            "2300,1800,2600,2048,2048,2400",
        ],
    );
    sim.plug(&link);
    let out = common::arm_ik_with_stdin(
        &[
            "teach",
            "--config",
            &cfg,
            "--port",
            link.to_str().unwrap(),
            "--poses",
            poses.to_str().unwrap(),
        ],
        "grasp\n",
        &common::project_dir(),
    );
    let said = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}{err}");
    assert!(err.contains("servos relaxed"), "{err}");
    assert!(said.contains("recorded pose 'grasp'"), "{said}");
    let written = std::fs::read_to_string(&poses).unwrap();
    assert!(
        written.contains("# Ready in front"),
        "comments lost: {written}"
    );
    let chain = common::feetech::chain();
    let stored = arm_ik::node::PoseFile::load(&poses)
        .unwrap()
        .check(&chain)
        .unwrap();
    let grasp = stored.get("grasp").unwrap();
    // zero 2048; the shoulder's direction is -1.
    let want = [
        252.0 / SCALE,
        248.0 / SCALE,
        552.0 / SCALE,
        0.0,
        0.0,
        352.0 / SCALE,
    ];
    for (axis, w) in want.iter().enumerate() {
        let got = grasp.iter().find(|(a, _)| *a == axis).map(|(_, q)| *q);
        assert!(
            got.is_some_and(|q| (q - w).abs() < 1e-3),
            "axis {axis}: {got:?}, want {w}"
        );
    }
    // Relaxed only: torque off, never a goal.
    for id in 1..=6 {
        assert!(sim.goals(id).is_empty(), "goal written to id {id}");
        assert!(
            sim.torques(id).iter().all(|&t| t == 0),
            "torque on for id {id}"
        );
    }

    // The arm moved elsewhere by hand; `arm_ik run` on the same bus brings
    // it back to the pose by its name (`~/go_to/grasp` in ROS): each
    // servo's last goal is the tick it stood at when recorded.
    for id in 1..=6 {
        sim.control(json!({"present": [id, 2048]}));
    }
    let out = common::arm_ik_with_stdin(
        &[
            "run",
            "--config",
            &cfg,
            "--port",
            link.to_str().unwrap(),
            "--poses",
            poses.to_str().unwrap(),
            "--realtime",
            "--stdin",
            "--duration",
            "3",
        ],
        r#"{"type":"pose","name":"grasp"}"#,
        &common::project_dir(),
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let recorded = [2300, 1800, 2600, 2048, 2048, 2400];
    for (id, want) in (1..=6).zip(recorded) {
        let last = sim.goals(id).last().copied();
        assert!(
            last.is_some_and(|g| (g - want).abs() <= 1),
            "servo {id}: last goal {last:?}, recorded at {want}: {said}"
        );
    }
}

#[test]
fn a_trajectory_on_the_bus_reaches_its_point_in_time_and_a_late_one_within_the_limits() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("trajectory-bus");
    let cfg = config(dir.path());
    let link = dir.path().join("bus");
    let sim = Sim::start(
        "feetech_bus.py",
        &dir.path().join("log.jsonl"),
        &["--ids", "1,2,3,4,5,6", "--present", "2048"],
    );
    sim.plug(&link);
    // Shoulder and elbow: 0.4, 0.8 rad at 1 s, then 1.1 rad more of the
    // elbow in 0.2 s, 5.5 rad/s against its limit of 2.
    let line = r#"{"type":"trajectory","joint_names":["shoulder","elbow"],"points":[{"positions":[0.4,0.8],"time_from_start":1.0},{"positions":[0.0,1.9],"time_from_start":1.2}]}"#;
    let run = |json: bool| {
        let mut args = vec!["run", "--config", &cfg, "--port", link.to_str().unwrap()];
        args.extend(["--realtime", "--stdin", "--duration", "3"]);
        if json {
            args.push("--json");
        }
        let out = common::arm_ik_with_stdin(&args, line, &common::project_dir());
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(0), "{said}");
        said
    };
    // The node's joint states (node time, the commands the servos are
    // sent): point 1 at its time, within a tick's motion.
    let said = run(true);
    let states: Vec<serde_json::Value> = said
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "joint_state")
        .collect();
    let q = |s: &serde_json::Value, axis: usize| s["position"][axis].as_f64().unwrap();
    let k0 = states
        .iter()
        .position(|s| q(s, 2) != 0.0)
        .expect("the elbow never moved");
    let t0 = states[k0 - 1]["stamp"].as_f64().unwrap();
    let at_1 = states
        .iter()
        .min_by(|a, b| {
            let d = |s: &serde_json::Value| (s["stamp"].as_f64().unwrap() - t0 - 1.0).abs();
            d(a).total_cmp(&d(b))
        })
        .unwrap();
    assert!(
        (q(at_1, 1) - 0.4).abs() < 0.02 && (q(at_1, 2) - 0.8).abs() < 0.02,
        "at 1 s: {at_1}"
    );
    // On the bus (servo ticks: zero 2048, the shoulder, id 2, reversed):
    // the servos were sent point 1, and point 2 in the end. The link
    // writes the latest command at its own pace, so on a busy machine the
    // write of point 1's tick may carry the next tick's command: within
    // a tick's motion or two (the elbow 0.016 rad a tick before point 1,
    // 0.04 after it).
    let shoulder = timed_goals(&sim, 2);
    let elbow = timed_goals(&sim, 3);
    let nearest_elbow = |t: f64| {
        elbow
            .iter()
            .min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs()))
            .map(|e| (e.1 - 2048.0) / SCALE)
            .expect("no goal written to the elbow")
    };
    let (s1, e1) = shoulder
        .iter()
        .map(|&(t, g)| ((2048.0 - g) / SCALE, nearest_elbow(t)))
        .min_by(|a, b| {
            let off = |p: &(f64, f64)| (p.0 - 0.4).abs() + (p.1 - 0.8).abs();
            off(a).total_cmp(&off(b))
        })
        .expect("no goal written to the shoulder");
    assert!(
        (s1 - 0.4).abs() < 0.02 && (e1 - 0.8).abs() < 0.04,
        "point 1 never written to the servos: nearest were {s1:.3}, {e1:.3} rad"
    );
    let last = elbow.last().unwrap().1;
    assert!(
        ((last - 2048.0) / SCALE - 1.9).abs() < 2.0 / SCALE,
        "elbow ended at {last}"
    );
    // No faster than the limit (2 rad/s), over any 10 writes (200 ms of
    // the link's own clock, which a busy machine may stretch or squeeze
    // by a node tick or two: a 50 % margin): ignoring it the elbow would
    // move at 5.5 rad/s.
    let top = elbow
        .windows(11)
        .map(|w| (w[10].1 - w[0].1).abs() / SCALE / (w[10].0 - w[0].0))
        .fold(0.0, f64::max);
    assert!(top <= 2.0 * 1.5, "the elbow's goal moved at {top:.2} rad/s");
    assert!(
        top >= 2.0 * 0.7,
        "the elbow's goal moved at only {top:.2} rad/s"
    );
    // And the run says the late point (the same line again, from where
    // the elbow ended: 1.1 rad in the 0.2 s to point 2 once more).
    let said = run(false);
    assert!(
        said.contains("point 2 of 2 (due at 1.20 s) cannot be met in time: joint 'elbow' is held to its speed limit"),
        "{said}"
    );
}
