//! The Dynamixel link session (`servo::dynamixel::session`, not yet
//! registered as a protocol, so driven here through the `Session` trait
//! itself) against the simulated bus (`tests/python/dynamixel_bus.py`):
//! what the servos were told, from the simulator's log.
//!
//! Needs `python3`: without it the tests print SKIP, unless `CI` is set.

mod dynamixel_sim;

use arm_ik::servo::calibration::OutputKind;
use arm_ik::servo::dynamixel::DynamixelModel;
use arm_ik::servo::dynamixel::session::DynamixelSession;
use arm_ik::servo::link::{LinkFile, LinkSettings, LinkStatus, Session, SessionError, StartPose};
use dynamixel_sim::{Bus, have_python};
use serde_json::Value;
use std::time::{Duration, Instant};

use DynamixelModel::{Xl330M288, Xl430W250};

fn settings(torque_off_on_close: bool) -> LinkSettings {
    let file = LinkFile {
        reply_timeout_ms: Some(300),
        torque_off_on_close: Some(torque_off_on_close),
        ..LinkFile::default()
    };
    file.resolve(OutputKind::Feetech).unwrap()
}

/// Koch-like: ids 1, 2 are XL430-W250, 3..=5 XL330-M288.
fn koch(settings: &LinkSettings) -> DynamixelSession {
    let models = vec![Xl430W250, Xl430W250, Xl330M288, Xl330M288, Xl330M288];
    DynamixelSession::new(vec![1, 2, 3, 4, 5], models, settings)
}

const KOCH_BUS: [&str; 8] = [
    "--ids",
    "1,2,3,4,5",
    "--present",
    "1000,3000,1500,2500,2048",
    "--model",
    "1:xl430-w250",
    "--model",
    "2:xl430-w250",
];

fn events_of(bus: &Bus, id: u64) -> Vec<Value> {
    bus.events().into_iter().filter(|e| e["id"] == id).collect()
}

#[test]
fn opening_reads_positions_and_sets_goal_before_torque() {
    if !have_python() {
        return;
    }
    let mut bus = Bus::start(&KOCH_BUS);
    let mut s = koch(&settings(false));
    let pose = s.open(bus.port.as_mut()).expect("opens");
    assert_eq!(
        pose,
        StartPose::Measured(vec![1000, 3000, 1500, 2500, 2048])
    );
    for (id, at) in [(1, 1000), (2, 3000), (3, 1500), (4, 2500), (5, 2048)] {
        let ev = events_of(&bus, id);
        let goal = ev.iter().position(|e| e.get("goal").is_some()).unwrap();
        let torque = ev.iter().position(|e| e["torque"] == 1).unwrap();
        assert!(
            goal < torque,
            "servo {id}: torque on before its goal: {ev:?}"
        );
        assert_eq!(ev[goal]["goal"], at, "servo {id}: goal = present");
        assert_eq!(
            ev[goal]["torque"], 0,
            "servo {id}: goal written with torque off"
        );
    }

    // Frames: one SYNC WRITE of goals, present positions read back.
    let goals = [1100, 2900, 1600, 2400, 2000];
    let end = Instant::now() + Duration::from_secs(2);
    let mut present = None;
    while Instant::now() < end {
        let out = s
            .tick(bus.port.as_mut(), Some(&goals), Instant::now())
            .unwrap();
        assert_eq!(out.frames_sent, 1);
        present = out.present.or(present);
        if present.as_deref() == Some(&goals[..]) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        present.as_deref(),
        Some(&goals[..]),
        "the servos reached the goals"
    );
    let via: Vec<Value> = events_of(&bus, 3)
        .iter()
        .filter_map(|e| e.get("via").cloned())
        .collect();
    assert_eq!(via.last().unwrap(), "sync_write");
    let mut status = LinkStatus::default();
    s.report(&mut status);
    assert_eq!(status.servo_errors, Vec::<String>::new());
}

/// Opens a session on a bus started with `args` and returns the refusal,
/// checking that no servo received a goal or torque.
fn refusal(args: &[&str], s: &mut DynamixelSession) -> String {
    let mut bus = Bus::start(args);
    let err = s.open(bus.port.as_mut()).expect_err("must refuse");
    let writes: Vec<Value> = bus
        .events()
        .into_iter()
        .filter(|e| e.get("goal").is_some() || e["torque"] == 1)
        .collect();
    assert_eq!(writes, Vec::<Value>::new(), "something was written: {err}");
    err.to_string()
}

#[test]
fn a_missing_silent_or_wrong_servo_is_named_and_nothing_moves() {
    if !have_python() {
        return;
    }
    let set = settings(false);
    let missing = refusal(
        &[
            "--ids",
            "1,2,3,5",
            "--model",
            "1:xl430-w250",
            "--model",
            "2:xl430-w250",
        ],
        &mut koch(&set),
    );
    assert!(missing.contains("no reply from servo id 4"), "{missing}");
    let silent = [&KOCH_BUS[..], &["--silent", "2"]].concat();
    let e = refusal(&silent, &mut koch(&set));
    assert!(e.contains("no reply from servo id 2"), "{e}");
    let wrong = ["--ids", "1,2,3,4,5", "--model", "1:xl430-w250"];
    let e = refusal(&wrong, &mut koch(&set));
    assert!(
        e.contains(
            "servo id 2 is xl330-m288 (model 1200), not the calibration's xl430-w250 (model 1060)"
        ),
        "{e}"
    );
    let velocity = [&KOCH_BUS[..], &["--mode", "4:1"]].concat();
    let e = refusal(&velocity, &mut koch(&set));
    assert!(e.contains("servo id 4 is in velocity mode"), "{e}");
    assert!(e.contains("torque off"), "says how to fix it: {e}");
}

#[test]
fn extended_position_mode_and_noise_are_fine() {
    if !have_python() {
        return;
    }
    let args = [
        &KOCH_BUS[..],
        &["--mode", "1:4", "--mode", "3:5", "--noise"],
    ]
    .concat();
    let mut bus = Bus::start(&args);
    let mut s = koch(&settings(false));
    assert!(s.open(bus.port.as_mut()).is_ok());
    let mut got = 0;
    for _ in 0..20 {
        let out = s
            .tick(
                bus.port.as_mut(),
                Some(&[1000, 3000, 1500, 2500, 2048]),
                Instant::now(),
            )
            .unwrap();
        got += usize::from(out.present.is_some());
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(got >= 15, "present positions in {got} of 20 ticks");
    let mut status = LinkStatus::default();
    s.report(&mut status);
    assert!(status.reply_garbage > 0, "the noise was seen and skipped");
}

#[test]
fn a_hardware_error_is_named_and_torque_off_on_close_is_honoured() {
    if !have_python() {
        return;
    }
    let mut bus = Bus::start(&KOCH_BUS);
    let mut s = koch(&settings(true));
    s.open(bus.port.as_mut()).unwrap();
    bus.control(serde_json::json!({"hw_error": [3, 32]}));
    let end = Instant::now() + Duration::from_secs(2);
    let mut status = LinkStatus::default();
    while Instant::now() < end {
        s.tick(bus.port.as_mut(), None, Instant::now()).unwrap();
        s.report(&mut status);
        if status.servo_errors == ["servo id 3: overload"] {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(status.servo_errors, ["servo id 3: overload"]);
    s.close(bus.port.as_mut());
    std::thread::sleep(Duration::from_millis(200));
    for id in 1..=5 {
        let last = events_of(&bus, id)
            .into_iter()
            .rfind(|e| e.get("torque").is_some());
        assert_eq!(last.unwrap()["torque"], 0, "servo {id} still on");
    }
}

#[test]
fn a_session_error_is_an_io_error_when_the_bus_goes_away() {
    if !have_python() {
        return;
    }
    let mut bus = Bus::start(&KOCH_BUS);
    let mut s = koch(&settings(false));
    s.open(bus.port.as_mut()).unwrap();
    let _ = bus.child.kill();
    let _ = bus.child.wait();
    let mut err = None;
    for _ in 0..50 {
        if let Err(e) = s.tick(
            bus.port.as_mut(),
            Some(&[1000, 3000, 1500, 2500, 2048]),
            Instant::now(),
        ) {
            err = Some(e);
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    match err {
        Some(SessionError::Io(_)) => {}
        other => {
            // A pty whose master closed may still accept writes; then the
            // servos are merely silent, which the link reports as such.
            assert!(other.is_none(), "{other:?}");
            let quiet = s.last_reply().unwrap().elapsed();
            assert!(quiet >= Duration::from_millis(400), "{quiet:?}");
        }
    }
}
