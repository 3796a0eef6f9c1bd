//! Operating the arm on Feetech bus servos (`FeetechSession` through
//! `SerialServo`) against the simulated bus `tests/python/feetech_bus.py`:
//! relaxing writes torque off to every servo and nothing else while the
//! servos are moved by hand, enabling resumes from where they were moved
//! (goal = present, torque on, then the slow move), and each servo's load
//! and overload flag are reported as the joint's effort; connecting sets
//! each servo's return delay to 0 where it is not. Needs `python3`
//! (SKIP without it, unless `CI` is set).
#![cfg(feature = "app")]

mod common;

use arm_ik::servo::{SerialServo, ServoOutput};
use common::bus_sim::{angles_for, check_relax_and_enable, connected, csv, stream_until};
use common::feetech::{STARTUP_SPEED, calibration, start};
use common::{TempDir, have_python};

const COMMAND: [i32; 5] = [3000, 1100, 3000, 1200, 3000];

#[test]
fn relax_switches_every_servo_off_and_enable_resumes_from_where_they_are() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("ft-relax");
    let link = dir.path().join("bus");
    let log = dir.path().join("log.jsonl");
    let mut sim = start(&link, &log, &["--present", &csv(&COMMAND)]);
    let cal = calibration(false);
    let q = angles_for(&cal, &COMMAND);
    let mut servo = SerialServo::open(link.to_str().unwrap(), cal.clone()).unwrap();
    let holding = |s: &SerialServo| connected(&s.status()) && !s.status().ramping;
    assert!(stream_until(&mut servo, Some(&q), 10.0, holding));

    check_relax_and_enable(&mut sim, servo, &COMMAND, (2, 2500), STARTUP_SPEED);
}

/// The shoulder (id 2, direction -1) closes on something at 1500 on its
/// way down to 1100: its load reads 90 % toward lower positions, which is
/// toward a larger joint angle, and after a second of pushing the servo
/// raises its overload flag, in the effort and the link status. The
/// others, holding, report a small load and no overload.
#[test]
fn load_is_reported_per_joint_and_an_obstacle_raises_the_overload_flag() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("ft-load");
    let link = dir.path().join("bus");
    let log = dir.path().join("log.jsonl");
    let mut present = COMMAND;
    present[1] = 2000;
    let args = ["--present", &csv(&present), "--obstacle", "2:1500"];
    let _sim = start(&link, &log, &args);
    let cal = calibration(false);
    let q = angles_for(&cal, &COMMAND);
    let mut servo = SerialServo::open(link.to_str().unwrap(), cal).unwrap();
    let pushing = |s: &SerialServo| {
        s.effort()
            .is_some_and(|e| e[1].load.is_some_and(|l| (l - 0.9).abs() < 1e-9))
    };
    assert!(
        stream_until(&mut servo, Some(&q), 10.0, pushing),
        "{:?}",
        servo.effort()
    );
    let overloaded = |s: &SerialServo| {
        s.effort().is_some_and(|e| e[1].overload) && s.link().contains("servo id 2: overload")
    };
    assert!(
        stream_until(&mut servo, Some(&q), 10.0, overloaded),
        "{:?}: {}",
        servo.effort(),
        servo.link()
    );
    let effort = servo.effort().unwrap();
    // Axes past the servos (the URDF's gripper, without a servo in this
    // file) report nothing.
    for e in &effort[COMMAND.len()..] {
        assert_eq!(e.load, None, "{effort:?}");
    }
    for (k, e) in effort
        .iter()
        .enumerate()
        .take(COMMAND.len())
        .filter(|&(k, _)| k != 1)
    {
        assert!(!e.overload, "joint {k}: {effort:?}");
        assert!(
            e.load.is_some_and(|l| l.abs() <= 0.1),
            "joint {k}: {effort:?}"
        );
    }
    let st = servo.close();
    assert!(
        st.servo_errors.iter().any(|e| e == "servo id 2: overload"),
        "{st:?}"
    );
}

/// Return delay time at the factory 250 (500 µs before every reply, six
/// times in a SYNC READ) is set to 0 when the session starts, as LeRobot's
/// `configure_motors` does, with the EEPROM unlocked for the write (so it
/// is kept at power-off) and locked again; said once, naming the servos;
/// a servo already at 0 is not written.
#[test]
fn the_return_delay_is_set_to_0_where_it_is_not_and_said_once() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("ft-delay");
    let link = dir.path().join("bus");
    let log = dir.path().join("log.jsonl");
    let mut sim = start(
        &link,
        &log,
        &[
            "--delay", "1:250", "--delay", "3:250", "--delay", "4:20", "--delay", "5:250",
        ],
    );
    let mut servo = SerialServo::open(link.to_str().unwrap(), calibration(false)).unwrap();
    assert!(
        stream_until(&mut servo, None, 10.0, |s| connected(&s.status())),
        "never connected: {}",
        servo.status().describe()
    );
    let notice = servo.take_notice().unwrap_or_default();
    assert_eq!(
        notice,
        "Feetech return delay time set to 0 (replies at once, as LeRobot sets it) on servo \
         id 1 from 250 (500 µs), id 3 from 250 (500 µs), id 4 from 20 (40 µs), \
         id 5 from 250 (500 µs)"
    );
    let _ = stream_until(&mut servo, None, 0.3, |_| false);
    assert_eq!(servo.take_notice(), None, "said twice");
    servo.close();
    let written: Vec<(u64, i64, i64, i64)> = sim
        .events()
        .iter()
        .filter(|e| e["event"] == "delay")
        .map(|e| {
            let n = |k: &str| e[k].as_i64().unwrap();
            (e["id"].as_u64().unwrap(), n("old"), n("new"), n("lock"))
        })
        .collect();
    assert_eq!(
        written,
        [
            (1, 250, 0, 0),
            (3, 250, 0, 0),
            (4, 20, 0, 0),
            (5, 250, 0, 0)
        ],
        "servo 2 (already 0) must not be written; the others unlocked for it"
    );
    let servos = &sim.control(serde_json::json!({"dump": true}))["servos"];
    for id in 1..=5 {
        let s = &servos[id.to_string()];
        assert_eq!(
            (s["delay"].as_i64(), s["lock"].as_i64()),
            (Some(0), Some(1)),
            "servo {id}"
        );
    }
}
