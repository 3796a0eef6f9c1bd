//! Operating the arm on Feetech bus servos (`FeetechSession` through
//! `SerialServo`) against the simulated bus `tests/python/feetech_bus.py`:
//! relaxing writes torque off to every servo and nothing else while the
//! servos are moved by hand, enabling resumes from where they were moved
//! (goal = present, torque on, then the slow move), and each servo's load
//! and overload flag are reported as the joint's effort. Needs `python3`
//! (SKIP without it, unless `CI` is set).

mod common;

use arm_ik::servo::{SerialServo, ServoOutput};
use common::bus_sim::{angles_for, connected, csv, ids, stream_until};
use common::feetech::{STARTUP_SPEED, calibration, start};
use common::{TempDir, have_python};
use serde_json::json;

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

    servo.relax();
    assert!(servo.relaxed());
    assert!(stream_until(&mut servo, Some(&q), 5.0, |s| s
        .status()
        .relaxed));
    for id in ids(&cal) {
        assert_eq!(sim.torques(id).last(), Some(&0), "servo {id} still on");
    }
    // Limp: moved by hand, the feedback follows, and nothing is written.
    let goals_before: Vec<usize> = ids(&cal).iter().map(|&id| sim.goals(id).len()).collect();
    sim.control(json!({"present": [3, 2500]}));
    let mut moved = COMMAND;
    moved[2] = 2500;
    let by_hand = cal.angles(&moved);
    assert!(
        stream_until(&mut servo, Some(&q), 5.0, |s| s.feedback()
            == Some(by_hand.clone())),
        "{:?}",
        servo.feedback()
    );
    let goals_after: Vec<usize> = ids(&cal).iter().map(|&id| sim.goals(id).len()).collect();
    assert_eq!(goals_before, goals_after, "goals written while relaxed");

    // Enabled: goal = where it was moved, torque on, then slowly back.
    servo.enable();
    assert!(!servo.relaxed());
    let back = |_: &SerialServo| {
        let goals = sim.goals(3);
        goals.len() > goals_after[2] && goals.last() == Some(&COMMAND[2])
    };
    assert!(stream_until(&mut servo, Some(&q), 10.0, back));
    servo.close();
    let goals = sim.goals(3);
    let resumed = &goals[goals_after[2]..];
    assert_eq!(resumed[0], 2500, "enable set goal = present first");
    let per_tick = STARTUP_SPEED * cal.joints[2].scale / cal.link.rate_hz;
    for w in resumed.windows(2) {
        assert!(
            f64::from((w[1] - w[0]).abs()) <= per_tick + 1.0,
            "jump {} -> {}: {resumed:?}",
            w[0],
            w[1]
        );
    }
    assert_eq!(sim.torques(3), [1, 0, 1], "on, relaxed, on again");
    // The goal came before the torque, on enabling as on starting.
    let events = sim.events();
    let mine: Vec<_> = events.iter().filter(|e| e["id"] == 3).collect();
    let on_again = mine
        .iter()
        .rposition(|e| e["torque"] == 1)
        .expect("torque on again");
    assert_eq!(mine[on_again - 1]["goal"], 2500, "{mine:?}");
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
    for (k, e) in effort.iter().enumerate().filter(|&(k, _)| k != 1) {
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
