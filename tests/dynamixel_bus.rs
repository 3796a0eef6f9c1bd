//! The Dynamixel driver (`DynamixelSession` under the link thread, through
//! `SerialServo`, the node's servo output) against simulated X-series
//! servos on a pty: `tests/python/dynamixel_bus.py`, written from the
//! e-manual and itself checked against ROBOTIS' SDK in
//! `tests/dynamixel_sdk.rs`. The arm is the Koch v1.1 follower
//! (config/servos_koch.yaml on the stand-in of its URDF): XL430-W250 on
//! ids 1 and 2, XL330-M288 on 3..6, the gripper (id 6) in current-based
//! position mode.
//!
//! The simulator logs every goal and torque write it receives, so these
//! tests assert what the servos were told. Needs `python3` (standard
//! library only): without it they print SKIP, unless `CI` is set.
#![cfg(feature = "app")]

mod common;

use arm_ik::model::Chain;
use arm_ik::servo::calibration::Calibration;
use arm_ik::servo::link::{LinkState, OnExit};
use arm_ik::servo::{SerialServo, ServoOutput};
use common::bus_sim::{
    Sim, angles_for, assert_slow_starts, check_relax_and_enable, check_through_noise, connected,
    csv, goals_reached, ids, stream_until,
};
use common::dynamixel::KOCH_BUS;
use common::{TempDir, have_python};
use serde_json::{Value, json};
use std::path::Path;

const STARTUP_SPEED: f64 = 2.0;
/// Where the servos are at power-on, and the pose commanded (ticks).
const FAR_PRESENT: [i32; 6] = [1000, 2900, 1200, 2800, 3000, 2500];
const COMMAND: [i32; 6] = [3000, 1200, 2900, 1300, 1000, 2000];

fn koch() -> Chain {
    let urdf = common::project_dir().join("tests/data/koch_follower_standin.urdf");
    Chain::from_urdf_file(urdf, None, Some("link_5")).unwrap()
}

/// config/servos_koch.yaml with a faster start-up move and a reply timeout
/// a busy machine cannot trip; `on_exit` as given.
fn config_text(on_exit: OnExit) -> String {
    let text = common::project_config("servos_koch.yaml")
        .replace(
            "startup_speed: 0.3",
            &format!("startup_speed: {STARTUP_SPEED}"),
        )
        .replace("reply_timeout_ms: 100", "reply_timeout_ms: 300")
        .replace("on_exit: hold", &format!("on_exit: {}", on_exit.name()));
    assert!(text.contains("reply_timeout_ms: 300"));
    text
}

fn calibration(on_exit: OnExit) -> Calibration {
    Calibration::from_yaml(&config_text(on_exit), "koch", &koch()).unwrap()
}

/// The Koch bus with `extra` arguments, plugged in at `link`.
fn start(dir: &TempDir, name: &str, link: &Path, extra: &[&str]) -> Sim {
    let args = [KOCH_BUS, extra].concat();
    let sim = Sim::start(
        "dynamixel_bus.py",
        &dir.path().join(format!("{name}.jsonl")),
        &args,
    );
    sim.plug(link);
    sim
}

fn open(link: &Path, cal: Calibration) -> SerialServo {
    SerialServo::open(link.to_str().unwrap(), cal).unwrap()
}

/// Goal or torque writes in the simulator's log.
fn writes(sim: &Sim) -> Vec<Value> {
    sim.events()
        .into_iter()
        .filter(|e| e.get("goal").is_some() || e.get("torque").is_some())
        .collect()
}

#[test]
fn start_up_moves_slowly_from_measured_positions_with_torque_on_only_after_goal_is_present() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("dxl-startup");
    let link = dir.path().join("bus");
    let sim = start(&dir, "log", &link, &["--present", &csv(&FAR_PRESENT)]);
    let cal = calibration(OnExit::Hold);
    let q = angles_for(&cal, &COMMAND);
    let mut servo = open(&link, cal.clone());
    assert!(
        stream_until(&mut servo, None, 10.0, |s| connected(&s.status())),
        "never connected: {}",
        servo.status().describe()
    );
    assert_eq!(servo.feedback(), Some(cal.angles(&FAR_PRESENT)));
    let target = cal.angles(&COMMAND);
    assert!(
        stream_until(&mut servo, Some(&q), 20.0, |s| s.feedback()
            == Some(target.clone())),
        "feedback {:?}: {}",
        servo.feedback(),
        servo.status().describe()
    );
    let fin = servo.close();
    assert_eq!(fin.connects, 1, "{fin:?}");
    assert!(fin.servo_errors.is_empty(), "{:?}", fin.servo_errors);
    let missing = fin.detail("replies_missing").and_then(|v| v.count());
    assert_eq!(missing, Some(0), "{fin:?}");
    assert_slow_starts(&sim, &cal, &FAR_PRESENT, &COMMAND, STARTUP_SPEED);
    let events = sim.events();
    for (k, id) in ids(&cal).into_iter().enumerate() {
        let mine: Vec<&Value> = events.iter().filter(|e| e["id"] == id).collect();
        let goal = mine.iter().position(|e| e.get("goal").is_some());
        let torque = mine
            .iter()
            .position(|e| e["torque"] == 1 && e.get("goal").is_none());
        assert!(
            matches!((goal, torque), (Some(g), Some(t)) if g < t),
            "servo {id}: goal at {goal:?}, torque on at {torque:?}"
        );
        let first = mine[goal.unwrap()];
        assert_eq!(first["torque"], 0, "servo {id}: goal set with torque on");
        assert_eq!(
            sim.goals(id)[0],
            FAR_PRESENT[k],
            "servo {id}: goal = present"
        );
        assert!(
            !sim.torques(id).contains(&0),
            "servo {id}: on_exit hold switched it off"
        );
    }
}

/// Opens the link on a bus started with `extra` until a connection was
/// tried; checks it never connected and nothing was written; the error.
fn refusal(name: &str, extra: &[&str]) -> String {
    let dir = TempDir::new(name);
    let link = dir.path().join("bus");
    let sim = start(&dir, name, &link, extra);
    let cal = calibration(OnExit::Hold);
    let q = vec![0.0; cal.slots.len()];
    let mut servo = open(&link, cal);
    let tried = stream_until(&mut servo, Some(&q), 10.0, |s| s.status().attempts >= 1);
    let st = servo.close();
    assert!(tried && st.connects == 0, "{st:?}");
    assert_eq!(writes(&sim), Vec::<Value>::new(), "something was written");
    st.last_error.unwrap_or_default()
}

#[test]
fn a_missing_silent_or_wrong_model_servo_is_named_and_nothing_moves() {
    if !have_python() {
        return;
    }
    let e = refusal("dxl-missing", &["--ids", "1,2,3,5,6"]);
    assert!(e.contains("no reply from servo id 4"), "{e}");
    let e = refusal("dxl-silent", &["--silent", "2"]);
    assert!(e.contains("no reply from servo id 2"), "{e}");
    let e = refusal("dxl-model", &["--model", "2:xm430-w350"]);
    assert!(
        e.contains(
            "servo id 2 is xm430-w350 (model 1020), not the calibration's xl430-w250 (model 1060)"
        ),
        "{e}"
    );
    let e = refusal("dxl-latched", &["--hw-error", "5:32"]);
    assert!(
        e.contains("servo id 5 has a hardware error latched (overload)") && e.contains("rebooted"),
        "{e}"
    );
}

#[test]
fn a_servo_in_the_wrong_operating_mode_is_refused_with_the_fix() {
    if !have_python() {
        return;
    }
    let e = refusal("dxl-velocity", &["--mode", "4:1"]);
    assert!(e.contains("servo id 4 is in velocity mode"), "{e}");
    assert!(e.contains("register 11) to 3 (position)"), "{e}");
    assert!(e.contains("the torque must be off"), "{e}");
    // The gripper is told a goal current: position mode would ignore it.
    let e = refusal("dxl-gripper-mode", &["--mode", "6:3"]);
    assert!(
        e.contains("servo id 6 is in position mode, which ignores goal_current_ma")
            && e.contains("5 (current-based position)")
            && e.contains("the torque must be off"),
        "{e}"
    );
}

#[test]
fn extended_position_mode_and_bus_noise_are_fine() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("dxl-noise");
    let link = dir.path().join("bus");
    let present = csv(&FAR_PRESENT);
    let extra = ["--present", &present, "--mode", "1:4", "--noise"];
    let sim = start(&dir, "log", &link, &extra);
    let cal = calibration(OnExit::Hold);
    let servo = open(&link, cal.clone());
    check_through_noise(&sim, servo, &FAR_PRESENT, &COMMAND, STARTUP_SPEED);
}

#[test]
fn unplug_and_replug_reconnects_and_ramps_from_the_new_positions() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("dxl-replug");
    let link = dir.path().join("bus");
    let mut first = start(&dir, "first", &link, &["--present", &csv(&COMMAND)]);
    let cal = calibration(OnExit::Hold);
    let q = angles_for(&cal, &COMMAND);
    let mut servo = open(&link, cal.clone());
    assert!(
        stream_until(&mut servo, Some(&q), 10.0, |s| connected(&s.status())
            && s.status().output.as_deref() == Some(&COMMAND[..])),
        "{}",
        servo.status().describe()
    );
    first.kill();
    assert!(
        stream_until(&mut servo, Some(&q), 10.0, |s| matches!(
            s.status().state,
            LinkState::Disconnected { .. }
        )),
        "{}",
        servo.status().describe()
    );
    let sagged = [2000, 2000, 2000, 2000, 2000, 2400];
    let second = start(&dir, "second", &link, &["--present", &csv(&sagged)]);
    let reached = |_: &SerialServo| goals_reached(&second, &cal, &COMMAND);
    assert!(
        stream_until(&mut servo, Some(&q), 20.0, reached),
        "{}",
        servo.status().describe()
    );
    let st = servo.close();
    assert_eq!(st.connects, 2, "{st:?}");
    assert_slow_starts(&second, &cal, &sagged, &COMMAND, STARTUP_SPEED);
}

#[test]
fn a_hardware_error_is_named_and_on_exit_relax_switches_every_servo_off() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("dxl-flags");
    let link = dir.path().join("bus");
    let mut sim = start(&dir, "log", &link, &["--present", &csv(&COMMAND)]);
    let cal = calibration(OnExit::Relax);
    let q = angles_for(&cal, &COMMAND);
    let mut servo = open(&link, cal.clone());
    assert!(stream_until(&mut servo, Some(&q), 10.0, |s| connected(
        &s.status()
    )));
    sim.control(json!({"hw_error": [3, 32]}));
    let named = stream_until(&mut servo, Some(&q), 10.0, |s| {
        s.link().contains("servo id 3: overload")
    });
    assert!(named, "{}", servo.status().describe());
    let effort = servo.effort().unwrap();
    assert!(effort[2].overload, "{effort:?}");
    assert!(!effort[0].overload, "{effort:?}");
    let st = servo.close();
    assert_eq!(st.servo_errors, ["servo id 3: overload"]);
    assert!(st.relaxed, "{st:?}");
    for id in ids(&cal) {
        assert_eq!(sim.torques(id).last(), Some(&0), "servo {id} left on");
    }
}

#[test]
fn relax_switches_every_servo_off_and_enable_resumes_from_where_they_are() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("dxl-relax");
    let link = dir.path().join("bus");
    let mut sim = start(&dir, "log", &link, &["--present", &csv(&COMMAND)]);
    let cal = calibration(OnExit::Hold);
    let q = angles_for(&cal, &COMMAND);
    let mut servo = open(&link, cal.clone());
    let holding = |s: &SerialServo| connected(&s.status()) && !s.status().ramping;
    assert!(stream_until(&mut servo, Some(&q), 10.0, holding));
    check_relax_and_enable(&mut sim, servo, &COMMAND, (1, 1800), STARTUP_SPEED);
}

#[test]
fn current_is_reported_and_the_gripper_grips_at_its_goal_current() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("dxl-current");
    let link = dir.path().join("bus");
    // Something in the gripper's way at 2300 (it closes toward 2000) and in
    // joint_1's way at 2500 (it turns toward 3000).
    let extra = ["--present", "2400,1200,2900,1300,1000,2500"];
    let extra = [
        &extra[..],
        &["--obstacle", "6:2300", "--obstacle", "1:2500"],
    ]
    .concat();
    let mut sim = start(&dir, "log", &link, &extra);
    let cal = calibration(OnExit::Hold);
    let q = angles_for(&cal, &COMMAND);
    let mut servo = open(&link, cal.clone());
    let dump = sim.control(json!({"dump": true}));
    let limit = dump["servos"]["6"]["current_limit"].as_f64().unwrap();
    // The gripper pushes at its goal current (300 mA of its limit), toward
    // its command: a negative joint angle, so a negative load.
    let gripping = |s: &SerialServo| {
        s.effort()
            .is_some_and(|e| e[5].load.is_some_and(|l| (l + 300.0 / limit).abs() < 1e-6))
    };
    assert!(
        stream_until(&mut servo, Some(&q), 20.0, gripping),
        "{:?}",
        servo.effort()
    );
    let dump = sim.control(json!({"dump": true}));
    assert_eq!(dump["servos"]["6"]["goal_current"], 300);
    assert_eq!(
        dump["servos"]["6"]["torque"], 1,
        "no overload at its goal current"
    );
    // joint_1, in position mode, pushes at full current and latches an
    // overload after a second of it: the effort and the status say so
    // (the status once the servo's hardware error register was read).
    let overloaded = |s: &SerialServo| {
        s.effort().is_some_and(|e| e[0].overload) && s.link().contains("servo id 1: overload")
    };
    assert!(
        stream_until(&mut servo, Some(&q), 10.0, overloaded),
        "{:?}",
        servo.effort()
    );
    let effort = servo.effort().unwrap();
    assert!(!effort[5].overload, "{effort:?}");
    let st = servo.close();
    assert!(
        st.servo_errors
            .contains(&"servo id 1: overload".to_string()),
        "{st:?}"
    );
}

#[test]
fn every_baud_rate_from_the_factory_57600_to_4_mbaud_connects() {
    if !have_python() {
        return;
    }
    for baud in [57_600, 115_200, 1_000_000, 2_000_000, 3_000_000, 4_000_000] {
        let dir = TempDir::new("dxl-baud");
        let link = dir.path().join("bus");
        let rate = baud.to_string();
        let _sim = start(&dir, "log", &link, &["--baud", &rate]);
        let text = config_text(OnExit::Hold).replace("baud: 1000000", &format!("baud: {baud}"));
        let cal = Calibration::from_yaml(&text, "koch", &koch()).unwrap();
        let mut servo = open(&link, cal);
        let up = stream_until(&mut servo, None, 10.0, |s| {
            connected(&s.status()) && s.feedback().is_some()
        });
        let st = servo.close();
        assert!(up, "{baud} baud: {st:?}");
    }
    // At another rate than the servos' they hear garbage: none answers.
    let dir = TempDir::new("dxl-baud");
    let link = dir.path().join("bus");
    let _sim = start(&dir, "log", &link, &["--baud", "57600"]);
    let mut servo = open(&link, calibration(OnExit::Hold));
    let tried = stream_until(&mut servo, None, 10.0, |s| s.status().attempts >= 1);
    let st = servo.close();
    assert!(tried && st.connects == 0, "{st:?}");
    let e = st.last_error.unwrap_or_default();
    assert!(e.contains("no reply from servo id 1"), "{e}");
}

/// A servo that stops answering mid-stream is the one named, also when
/// the feedback comes by FAST SYNC READ (whose one packet a silent servo
/// cuts short for all): the others keep reporting where they are and
/// getting their goals.
#[test]
fn a_servo_going_silent_is_named_while_the_others_keep_reporting() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("dxl-silent");
    let link = dir.path().join("bus");
    let present = csv(&COMMAND);
    // Slow servos (100 ticks/s), so one pushed away stays away a while.
    let extra = [
        "--present",
        &present,
        "--silent",
        "4",
        "--silent-after-goals",
        "25",
        "--speed",
        "100",
    ];
    let mut sim = start(&dir, "log", &link, &extra);
    let cal = calibration(OnExit::Hold);
    let q = angles_for(&cal, &COMMAND);
    let mut servo = open(&link, cal.clone());
    let named = |s: &SerialServo| s.link().contains("servo id 4: no reply");
    assert!(
        stream_until(&mut servo, Some(&q), 20.0, named),
        "{}",
        servo.status().describe()
    );
    // Servo 2 is pushed away (it creeps back to its goal, 1200): its
    // feedback still comes.
    sim.control(json!({"present": [2, 1500]}));
    let moved = |s: &SerialServo| s.status().present.is_some_and(|p| p[1] > 1400);
    assert!(
        stream_until(&mut servo, Some(&q), 5.0, moved),
        "{}",
        servo.status().describe()
    );
    let st = servo.close();
    let quiet: Vec<&String> = st
        .servo_errors
        .iter()
        .filter(|e| e.contains("no reply"))
        .collect();
    assert_eq!(quiet.len(), 1, "only servo 4 is missing: {quiet:?}");
}

/// Return Delay Time at the factory 250 (500 µs before every reply) is set
/// to 0 when the session starts, as LeRobot's `configure_motors` does, and
/// said once naming the servos; a servo already at 0 is not written (the
/// EEPROM is not rewritten at every start), nor one whose torque is on
/// (its EEPROM is locked, and switching it off would let the arm drop):
/// that one is named as left alone.
#[test]
fn the_return_delay_is_set_to_0_where_it_is_not_and_said_once() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("dxl-delay");
    let link = dir.path().join("bus");
    let mut sim = start(&dir, "log", &link, &["--delay", "3:0"]);
    // Servo 5 was left holding by an earlier run.
    sim.control(json!({"write": [5, 64, 1, 1]}));
    let mut servo = open(&link, calibration(OnExit::Hold));
    assert!(
        stream_until(&mut servo, None, 10.0, |s| connected(&s.status())),
        "never connected: {}",
        servo.status().describe()
    );
    let notices: Vec<String> = std::iter::from_fn(|| servo.take_notice()).collect();
    assert_eq!(notices.len(), 2, "{notices:?}");
    assert!(
        notices[0].starts_with("Dynamixel return delay time set to 0")
            && notices[0].contains("servo id 1 from 250 (500 µs), id 2 from 250 (500 µs), id 4")
            && !notices[0].contains("id 3 ")
            && !notices[0].contains("id 5 "),
        "{notices:?}"
    );
    assert!(
        notices[1].contains("left as it is on servo id 5 (250)"),
        "{notices:?}"
    );
    // Said once: nothing more after more frames.
    let _ = stream_until(&mut servo, None, 0.3, |_| false);
    assert_eq!(servo.take_notice(), None);
    servo.close();
    let written: Vec<(u64, i64, i64)> = sim
        .events()
        .iter()
        .filter(|e| e["event"] == "delay")
        .map(|e| {
            let n = |k: &str| e[k].as_i64().unwrap();
            (e["id"].as_u64().unwrap(), n("old"), n("new"))
        })
        .collect();
    assert_eq!(
        written,
        [(1, 250, 0), (2, 250, 0), (4, 250, 0), (6, 250, 0)],
        "servo 3 (already 0) and 5 (torque on) must not be written"
    );
    let servos = &sim.control(json!({"dump": true}))["servos"];
    // (The dump reads registers signed.)
    let delays: Vec<u8> = (1..=6)
        .map(|id| servos[id.to_string()]["delay"].as_i64().unwrap() as u8)
        .collect();
    assert_eq!(delays, [0, 0, 0, 0, 250, 0]);
}
