//! `arm_ik teleop` on two simulated Feetech buses (`tests/python/
//! feetech_bus.py`, leader and follower on two ptys, 6 STS3215 each, at
//! 1 Mbaud, every servo at the factory return delay, which teleop sets to
//! 0): the leader is relaxed and never written a goal, the follower comes
//! to the leader's pose, a fast yank of the leader the moment the
//! follower gets there is followed at the follower's speed limit, no
//! faster, the gripper follows, and a silent leader makes the follower
//! hold and say so; every frame read from the leader is written to the
//! follower (one loop per frame); a PWM leader is refused. Needs `python3`
//! (SKIP without it, unless `CI` is set).
#![cfg(feature = "app")]

mod common;

use common::bus_sim::Sim;
use common::{TempDir, have_python};
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// Ticks per radian of an STS3215 (4096 a turn).
const SCALE: f64 = 4096.0 / std::f64::consts::TAU;
/// The node's default speed cap (rad/s): the elbow is held to it.
const SPEED: f64 = 2.0;
/// teleop's loop rate (the node's default `--rate`, Hz): one follower goal
/// write per frame.
const RATE: f64 = 50.0;

/// The project's Feetech file, arm and gripper (ids 1..6), with a faster
/// link start-up move and a reply timeout a busy machine cannot trip.
fn config(dir: &Path) -> String {
    let text = common::project_config("servos_feetech.yaml")
        .replace("startup_speed: 0.3", "startup_speed: 2.0")
        .replace("reply_timeout_ms: 100", "reply_timeout_ms: 300");
    assert!(text.contains("startup_speed: 2.0") && text.contains("reply_timeout_ms: 300"));
    let path = dir.join("servos.yaml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn start(dir: &Path, name: &str, present: &str) -> (Sim, String) {
    start_with(dir, name, present, &[])
}

/// A bus of six servos (ids 1..6) at `present`, each at the factory
/// return delay (250: 500 us), as new servos come.
fn start_with(dir: &Path, name: &str, present: &str, more: &[&str]) -> (Sim, String) {
    let link = dir.join(name);
    let log = dir.join(format!("{name}.jsonl"));
    let factory: Vec<String> = (1..=6).map(|i| format!("{i}:250")).collect();
    let mut args = vec!["--ids", "1,2,3,4,5,6", "--present", present];
    for delay in &factory {
        args.extend(["--delay", delay.as_str()]);
    }
    args.extend(more);
    let sim = Sim::start("feetech_bus.py", &log, &args);
    sim.plug(&link);
    (sim, link.to_str().unwrap().to_string())
}

/// The present position of every servo (ids 1..6).
fn present(sim: &mut Sim) -> Vec<f64> {
    let a = sim.control(json!({}));
    (1..=6)
        .map(|i| a["servos"][i.to_string()]["present"].as_f64().unwrap())
        .collect()
}

/// Polls the follower until `done` or `within`; the (time, positions)
/// samples.
fn watch(
    sim: &mut Sim,
    within: f64,
    done: impl Fn(&[f64]) -> bool,
) -> (bool, Vec<(f64, Vec<f64>)>) {
    let t0 = Instant::now();
    let mut seen = Vec::new();
    while t0.elapsed().as_secs_f64() < within {
        let p = present(sim);
        let ok = done(&p);
        seen.push((t0.elapsed().as_secs_f64(), p));
        if ok {
            return (true, seen);
        }
        // Not more often: the simulator answers these queries and its bus
        // in one thread, and teleop's loop waits for the bus each frame, so
        // polling every 20 ms halved the loop's rate (the follower then
        // moved at half its speed limit: slower, never faster).
        std::thread::sleep(Duration::from_millis(60));
    }
    (false, seen)
}

fn near(p: &[f64], want: &[f64], tol: f64) -> bool {
    p.iter().zip(want).all(|(a, b)| (a - b).abs() <= tol)
}

/// The (goal, present) of every goal write to each servo (ids 1..6).
fn writes(sim: &Sim) -> Vec<Vec<(f64, f64)>> {
    let events = sim.events();
    (1..=6)
        .map(|id| {
            events
                .iter()
                .filter(|e| e["id"] == id)
                .filter_map(|e| Some((e["goal"].as_f64()?, e["present"].as_f64()?)))
                .collect()
        })
        .collect()
}

/// Watches the follower's goal writes (every 2 ms: the log, not the
/// simulator, is read) until every servo's latest goal is at `pose` (a
/// tick of rounding), and returns how many writes each servo had then.
fn arrival(sim: &Sim, pose: &[f64], within: Duration) -> Vec<usize> {
    let t0 = Instant::now();
    loop {
        let w = writes(sim);
        let latest: Vec<f64> = w
            .iter()
            .map(|s| s.last().map_or(f64::NAN, |g| g.0))
            .collect();
        if near(&latest, pose, 1.0) {
            return w.iter().map(Vec::len).collect();
        }
        assert!(
            t0.elapsed() < within,
            "never reached the leader: goals {latest:?}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn the_follower_copies_a_leader_moved_by_hand_within_its_limits() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("teleop-bus");
    let cfg = config(dir.path());
    let pose = [2300.0, 1800.0, 2600.0, 2048.0, 2048.0, 2400.0];
    let (mut leader, leader_port) = start(dir.path(), "leader", "2300,1800,2600,2048,2048,2400");
    let (mut follower, follower_port) = start(dir.path(), "follower", "2048");
    let mut child = common::spawn_arm_ik(
        &[
            "teleop",
            "--leader",
            &cfg,
            "--leader-port",
            &leader_port,
            "--follower",
            &cfg,
            "--follower-port",
            &follower_port,
            "--startup-speed",
            "1.0",
            "--duration",
            "16",
        ],
        &common::project_dir(),
    );
    // The follower comes to the leader's pose, and the moment its goals
    // get there the leader is yanked: the elbow 700 ticks (1.07 rad) at
    // once, the gripper too. (A yank in the tick after the approach's last
    // step used to be approached at the start-up speed, 1 rad/s here,
    // instead of followed at the speed limit.)
    let at = arrival(&follower, &pose, Duration::from_secs(6));
    leader.control(json!({"present": [3, 3300]}));
    leader.control(json!({"present": [6, 2700]}));
    let yanked = [2300.0, 1800.0, 3300.0, 2048.0, 2048.0, 2700.0];
    let (ok, seen) = watch(&mut follower, 4.0, |p| near(p, &yanked, 3.0));
    assert!(ok, "never followed the yank: {:?}", seen.last());
    // The servos were at the leader's pose when the next goal came (a
    // tick of rounding each way).
    let w = writes(&follower);
    let there: Vec<f64> = w.iter().zip(&at).map(|(s, &k)| s[k].1).collect();
    assert!(near(&there, &pose, 2.0), "at {there:?}, not {pose:?}");
    let before = at[2] - 1;
    // No faster than the speed limit, and about as fast: teleop writes one
    // goal per frame of its clock (RATE), so the elbow's goal may move at
    // most SPEED / RATE from one write to the next (plus a tick of
    // rounding) however late the machine ran a frame; ignoring the limit
    // it would jump the 700 ticks at once. At the limit, a step is that
    // size.
    let goals = follower.goals(3);
    let steps = goals[before..].windows(2).map(|w| (w[1] - w[0]).abs());
    let top = f64::from(steps.max().unwrap_or(0));
    let step = SPEED / RATE * SCALE;
    assert!(
        top <= step + 1.0,
        "a goal step of {top} ticks (limit {step:.1})"
    );
    assert!(
        top >= step * 0.9,
        "goal steps of only {top} ticks (limit {step:.1})"
    );

    // Relax and enable typed on stdin while the leader drives: the
    // follower goes limp, then holds again and comes back to the leader
    // slowly.
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, r#"{{"type":"relax"}}"#).unwrap();
    let torque = |sim: &mut Sim, on: i64| {
        let a = sim.control(json!({}));
        (1..=6).all(|i| a["servos"][i.to_string()]["torque"] == on)
    };
    let t0 = Instant::now();
    while !torque(&mut follower, 0) {
        assert!(
            t0.elapsed() < Duration::from_secs(3),
            "relax did not reach the follower"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    writeln!(stdin, r#"{{"type":"enable"}}"#).unwrap();
    let t0 = Instant::now();
    while !torque(&mut follower, 1) {
        assert!(
            t0.elapsed() < Duration::from_secs(3),
            "enable did not reach the follower"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (ok, seen) = watch(&mut follower, 4.0, |p| near(p, &yanked, 3.0));
    assert!(ok, "not back with the leader: {:?}", seen.last());

    // The leader falls silent: the follower holds where it is.
    for id in 1..=6 {
        leader.control(json!({"silent": id}));
    }
    leader.control(json!({"present": [3, 2000]}));
    std::thread::sleep(Duration::from_millis(1500));
    let held = present(&mut follower);
    assert!(
        near(&held, &yanked, 3.0),
        "moved without a leader: {held:?}"
    );

    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}{err}");
    assert!(err.contains("torque off"), "{err}");
    // Both arms' servos were set to reply at once, each arm said so once.
    let set = "Feetech return delay time set to 0";
    assert_eq!(err.matches(set).count(), 2, "{err}");
    assert_eq!(
        err.matches(&format!("leader arm: {set}")).count(),
        1,
        "{err}"
    );
    assert!(said.contains("2 approaches, 1 silences"), "{said}");
    // The leader was only ever relaxed: torque off, no goal.
    for id in 1..=6 {
        assert!(
            leader.goals(id).is_empty(),
            "goal written to leader id {id}"
        );
        assert!(
            leader.torques(id).iter().all(|&t| t == 0),
            "torque on for leader id {id}"
        );
    }
}

/// (time, value) of the log entries of servo 1 that have `key`.
fn logged(sim: &Sim, key: &str) -> Vec<(f64, i64)> {
    sim.events()
        .iter()
        .filter(|e| e["id"] == 1)
        .filter_map(|e| Some((e["t"].as_f64()?, e.get(key)?.as_i64()?)))
        .collect()
}

#[test]
fn every_frame_read_from_the_leader_is_written_to_the_follower() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("teleop-frames");
    let cfg = config(dir.path());
    // A hand moves the leader's base one tick at every read, back and
    // forth over 100 ticks: every frame teleop reads is a value of its
    // own, and at 50 Hz its turns stay within the follower's limits.
    let pose = "1800,2048,2048,2048,2048,2048";
    let (leader, leader_port) = start_with(dir.path(), "leader", pose, &["--hand", "1:1800:1900"]);
    let (follower, follower_port) = start(dir.path(), "follower", pose);
    let child = common::spawn_arm_ik(
        &[
            "teleop",
            "--leader",
            &cfg,
            "--leader-port",
            &leader_port,
            "--follower",
            &cfg,
            "--follower-port",
            &follower_port,
            // Counted from the start, the links' connecting included
            // (both sims scanned while a sibling test runs its own): 8 s
            // leave at least 100 frames after a connect as slow as 4 s.
            "--duration",
            "8",
        ],
        &common::project_dir(),
    );
    let out = child.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    let reads = logged(&leader, "read");
    let written = logged(&follower, "goal");
    assert!(!reads.is_empty(), "the leader was never read");
    // After the links are up and the approach is done, until shortly
    // before the end: each value read is written to the follower (within
    // 0.5 s, as late as a busy machine may make it), a turn included.
    let (from, to) = (reads[0].0 + 1.5, reads[reads.len() - 1].0 - 0.5);
    let timed: Vec<_> = reads.iter().filter(|r| (from..to).contains(&r.0)).collect();
    assert!(timed.len() >= 100, "{} frames read: {said}", timed.len());
    let lost: Vec<_> = timed
        .iter()
        .filter(|(t, v)| {
            !written
                .iter()
                .any(|(tw, w)| w == v && (*t..t + 0.5).contains(tw))
        })
        .collect();
    assert!(
        lost.is_empty(),
        "{} of {} frames never written: {lost:?}",
        lost.len(),
        timed.len()
    );
}

#[test]
fn a_leader_that_cannot_report_its_position_is_refused() {
    let out = common::arm_ik(&[
        "teleop",
        "--leader",
        "config/servos_pwm.yaml",
        "--leader-port",
        "/dev/null",
        "--follower",
        "config/servos_feetech.yaml",
        "--follower-port",
        "/dev/null",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot report their position"), "{err}");
}
