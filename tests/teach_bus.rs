//! `arm_ik teach` on a simulated Feetech bus (`tests/python/
//! feetech_bus.py`): the servos are relaxed (torque off, no goal), and a
//! name typed on stdin stores the pose the servos measure into the poses
//! file, keeping its comments. Needs `python3` (SKIP without it, unless
//! `CI` is set).
#![cfg(feature = "app")]

mod common;

use common::bus_sim::Sim;
use common::{TempDir, have_python};

/// Ticks per radian of an STS3215 (4096 a turn).
const SCALE: f64 = 4096.0 / std::f64::consts::TAU;

#[test]
fn a_pose_set_by_hand_is_stored_under_its_name() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("teach-bus");
    let cfg = dir.path().join("servos.yaml");
    let text = common::project_config("servos_feetech.yaml")
        .replace("reply_timeout_ms: 100", "reply_timeout_ms: 300");
    std::fs::write(&cfg, text).unwrap();
    let poses = dir.path().join("poses.yaml");
    std::fs::copy(common::project_dir().join("config/poses_arm.yaml"), &poses).unwrap();
    let link = dir.path().join("bus");
    // Where the arm was posed by hand (ticks of ids 1..6).
    let sim = Sim::start(
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
            cfg.to_str().unwrap(),
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
}
