//! `arm_ik teleop` on two simulated Dynamixel buses (`tests/python/
//! dynamixel_bus.py`, the Koch v1.1's six servos each at 1 Mbaud,
//! config/servos_koch.yaml on both sides): the leader is relaxed and never
//! written a goal, and the follower, gripper included, comes to the pose
//! the leader is held in and follows it when it moves. Needs `python3`
//! (SKIP without it, unless `CI` is set).
#![cfg(feature = "app")]

mod common;

use common::bus_sim::Sim;
use common::dynamixel::KOCH_BUS;
use common::{TempDir, have_python};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

fn start(dir: &Path, name: &str, present: &str) -> (Sim, String) {
    let link = dir.join(name);
    let mut args = KOCH_BUS.to_vec();
    args.extend(["--present", present]);
    let sim = Sim::start(
        "dynamixel_bus.py",
        &dir.join(format!("{name}.jsonl")),
        &args,
    );
    sim.plug(&link);
    (sim, link.to_str().unwrap().to_string())
}

fn present(sim: &mut Sim) -> Vec<f64> {
    let a = sim.control(json!({}));
    (1..=6)
        .map(|i| a["servos"][i.to_string()]["present"].as_f64().unwrap())
        .collect()
}

/// Polls until every servo of `sim` is within `tol` ticks of `want`.
fn reaches(sim: &mut Sim, want: &[f64], tol: f64, within: f64) -> Result<(), Vec<f64>> {
    let t0 = Instant::now();
    loop {
        let p = present(sim);
        if p.iter().zip(want).all(|(a, b)| (a - b).abs() <= tol) {
            return Ok(());
        }
        if t0.elapsed().as_secs_f64() > within {
            return Err(p);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_koch_follower_copies_a_koch_leader_gripper_included() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("teleop-dxl");
    let cfg = dir.path().join("servos.yaml");
    let text = common::project_config("servos_koch.yaml")
        .replace("startup_speed: 0.3", "startup_speed: 2.0")
        .replace("reply_timeout_ms: 100", "reply_timeout_ms: 300");
    std::fs::write(&cfg, text).unwrap();
    let cfg = cfg.to_str().unwrap();
    let (mut leader, leader_port) = start(dir.path(), "leader", "2300,1800,2300,2048,2048,2100");
    let (mut follower, follower_port) = start(dir.path(), "follower", "2048");
    let urdf = common::project_dir().join("tests/data/koch_follower_standin.urdf");
    let child = common::spawn_arm_ik(
        &[
            "teleop",
            "--urdf",
            urdf.to_str().unwrap(),
            "--base",
            "base_link",
            "--tip",
            "link_5",
            "--leader",
            cfg,
            "--leader-port",
            &leader_port,
            "--follower",
            cfg,
            "--follower-port",
            &follower_port,
            "--startup-speed",
            "1.0",
            "--duration",
            "8",
        ],
        &common::project_dir(),
    );
    let pose = [2300.0, 1800.0, 2300.0, 2048.0, 2048.0, 2100.0];
    if let Err(p) = reaches(&mut follower, &pose, 3.0, 6.0) {
        panic!("never reached the leader's pose: {p:?}");
    }
    leader.control(json!({"present": [3, 2500]}));
    leader.control(json!({"present": [6, 2200]}));
    let moved = [2300.0, 1800.0, 2500.0, 2048.0, 2048.0, 2200.0];
    if let Err(p) = reaches(&mut follower, &moved, 3.0, 3.0) {
        panic!("never followed the leader: {p:?}");
    }
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}{err}");
    assert!(err.contains("torque off"), "{err}");
    // Both buses' servos start at the factory return delay (the
    // simulator's default): set to 0 on each, and said once per arm.
    let set = "Dynamixel return delay time set to 0 (replies at once, as LeRobot sets it) on servo \
               id 1 from 250 (500 µs)";
    assert_eq!(
        err.matches(&format!("arm_ik teleop: {set}")).count(),
        1,
        "{err}"
    );
    assert_eq!(
        err.matches(&format!("arm_ik teleop: leader arm: {set}"))
            .count(),
        1,
        "{err}"
    );
    for id in 1..=6 {
        assert!(
            leader.goals(id).is_empty(),
            "goal written to leader id {id}"
        );
    }
}
