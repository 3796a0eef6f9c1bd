//! Operating the arm on Feetech bus servos (`FeetechSession` through
//! `SerialServo`) against the simulated bus `tests/python/feetech_bus.py`:
//! relaxing writes torque off to every servo and nothing else while the
//! servos are moved by hand, enabling resumes from where they were moved
//! (goal = present, torque on, then the slow move), and each servo's load
//! and overload flag are reported as the joint's effort. Needs `python3`
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
