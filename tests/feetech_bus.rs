//! The Feetech bus driver (`FeetechSession` under the link thread, through
//! `SerialServo`, the node's servo output) against simulated STS3215 (and SCS0009)
//! servos on a pty: `tests/python/feetech_bus.py`, written from the
//! protocol notes alone and itself checked against the vendor SDK in
//! `tests/feetech_sdk.rs`.
//!
//! The simulator logs every goal position write it receives, so these tests
//! assert what the servos would have been told, not what we meant to send.
//! The port handed to the driver is a symlink to the pty, so a test can
//! "unplug" the bus (kill the simulator) and "plug in" another one.
//!
//! Needs `python3` (standard library only): without it the tests print
//! SKIP, unless the `CI` environment variable is set, then they fail.

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

mod common;

use arm_ik::model::Chain;
use arm_ik::servo::calibration::Calibration;
use arm_ik::servo::link::{LinkState, OnExit};
use arm_ik::servo::{SerialServo, ServoOutput};
use common::bus_sim::{
    angles_for, assert_slow_starts, check_through_noise, connected, csv, goals_reached, ids,
    stream_until,
};
use common::feetech::{STARTUP_SPEED, calibration, chain, config_text, start};
use common::{TempDir, have_python};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

const FAR_PRESENT: [i32; 5] = [1100, 3000, 1000, 2900, 1000];
const COMMAND: [i32; 5] = [3000, 1100, 3000, 1200, 3000];

#[test]
fn start_up_moves_slowly_from_where_the_servos_are_and_reports_their_positions() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("startup");
    let link = dir.path().join("bus");
    let sim = start(
        &link,
        &dir.path().join("log.jsonl"),
        &["--present", &csv(&FAR_PRESENT)],
    );
    let cal = calibration(false);
    let q = angles_for(&cal, &COMMAND);
    let mut servo = SerialServo::open(link.to_str().unwrap(), cal.clone()).unwrap();

    // Before any command: connected, the present positions as feedback in
    // radians, and nothing written to the goals.
    assert!(
        stream_until(&mut servo, None, 10.0, |s| connected(&s.status())),
        "never connected: {}",
        servo.status().describe()
    );
    assert_eq!(servo.feedback(), Some(cal.angles(&FAR_PRESENT)));

    let reached = |s: &SerialServo| {
        let ids = ids(s.calibration());
        ids.iter()
            .zip(COMMAND)
            .all(|(&id, c)| sim.goals(id).last() == Some(&c))
    };
    assert!(
        stream_until(&mut servo, Some(&q), 20.0, reached),
        "the command was not reached: {}",
        servo.status().describe()
    );
    // The simulated servos arrive (they move faster than the ramp), and
    // the feedback shows them there.
    let target = cal.angles(&COMMAND);
    assert!(
        stream_until(&mut servo, Some(&q), 5.0, |s| s.feedback()
            == Some(target.clone())),
        "feedback {:?}, expected {target:?}",
        servo.feedback()
    );
    let fin = servo.close();
    assert_eq!(fin.connects, 1, "{fin:?}");
    assert!(fin.servo_errors.is_empty(), "{:?}", fin.servo_errors);
    let missing = fin.detail("replies_missing").and_then(|v| v.count());
    assert_eq!(missing, Some(0), "{fin:?}");

    assert_slow_starts(&sim, &cal, &FAR_PRESENT, &COMMAND, STARTUP_SPEED);
    let events = sim.events();
    for id in ids(&cal) {
        // Torque came on only after the goal was set to where the servo was.
        let first_goal = events
            .iter()
            .position(|e| e["id"] == id && e.get("goal").is_some());
        let torque_on = events
            .iter()
            .position(|e| e["id"] == id && e["torque"] == 1);
        assert!(
            matches!((first_goal, torque_on), (Some(g), Some(t)) if g < t),
            "servo {id}: goal at line {first_goal:?}, torque on at {torque_on:?}"
        );
        // Closing leaves the torque on: the arm holds.
        assert!(
            !events.iter().any(|e| e["id"] == id && e["torque"] == 0),
            "servo {id} was switched off at close"
        );
    }
}

#[test]
fn a_missing_servo_is_named_nothing_moves_and_the_link_keeps_trying() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("missing");
    let link = dir.path().join("bus");
    let sim = start(&link, &dir.path().join("log.jsonl"), &["--silent", "3"]);
    let cal = calibration(false);
    let q = angles_for(&cal, &COMMAND);
    let mut servo = SerialServo::open(link.to_str().unwrap(), cal).unwrap();
    // stream_until also checks that no command() call blocks.
    let retried = stream_until(&mut servo, Some(&q), 15.0, |s| s.status().attempts >= 3);
    let st = servo.close();
    assert!(retried, "the link did not keep retrying: {st:?}");
    assert_eq!(st.connects, 0);
    assert!(st.servo_errors.is_empty(), "{:?}", st.servo_errors);
    let error = st.last_error.clone().unwrap_or_default();
    assert!(
        error.contains("no reply from servo id 3"),
        "the error does not name servo 3: {error:?}"
    );
    assert!(
        sim.events().is_empty(),
        "something was written to the servos: {:?}",
        sim.events()
    );

    // The same through `arm_ik drive`: it fails, and its summary names
    // the servo.
    let config = dir.path().join("servos.yaml");
    std::fs::write(&config, config_text(false)).unwrap();
    let out = common::arm_ik(&[
        "drive",
        "--config",
        config.to_str().unwrap(),
        "--port",
        link.to_str().unwrap(),
        "--joints",
        "0,0,0,0,0",
        "--hold",
        "0.5",
        "--json",
    ]);
    assert!(!out.status.success(), "drive succeeded without servo 3");
    let summary: Value = serde_json::from_slice(&out.stdout).expect("drive --json prints JSON");
    assert_eq!(summary["connected"], false);
    assert!(
        summary["state"]
            .as_str()
            .unwrap()
            .contains("no reply from servo id 3"),
        "{summary}"
    );
    assert!(
        sim.events().is_empty(),
        "drive moved something: {:?}",
        sim.events()
    );
}

#[test]
fn a_servo_of_another_model_is_refused() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("model");
    let link = dir.path().join("bus");
    let sim = start(&link, &dir.path().join("log.jsonl"), &["--model", "4:1000"]);
    let mut servo = SerialServo::open(link.to_str().unwrap(), calibration(false)).unwrap();
    let q = vec![0.0; 5];
    let tried = stream_until(&mut servo, Some(&q), 10.0, |s| s.status().attempts >= 2);
    let st = servo.close();
    assert!(tried && st.connects == 0, "{st:?}");
    let error = st.last_error.unwrap_or_default();
    assert!(error.contains("servo id 4 is model 1000"), "{error}");
    assert!(sim.events().is_empty(), "{:?}", sim.events());
}

/// An arm may mix models of one family: an STS3250 on id 4 is refused by
/// the file that says every servo is an STS3215, and driven when its
/// joint's entry names it.
#[test]
fn a_joint_of_another_model_is_driven_when_its_entry_names_it() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("mixed");
    let link = dir.path().join("bus");
    let _sim = start(&link, &dir.path().join("log.jsonl"), &["--model", "4:2825"]);
    let q = vec![0.0; 5];
    let mut servo = SerialServo::open(link.to_str().unwrap(), calibration(false)).unwrap();
    let tried = stream_until(&mut servo, Some(&q), 10.0, |s| s.status().attempts >= 1);
    let st = servo.close();
    let error = st.last_error.unwrap_or_default();
    assert!(
        tried
            && error.contains("servo id 4 is sts3250 (model 2825), not the calibration's sts3215"),
        "{error}"
    );
    let text = config_text(false).replacen(
        "{ joint: wrist_pitch,",
        "{ joint: wrist_pitch, model: sts3250,",
        1,
    );
    let cal = Calibration::from_yaml(&text, "mixed", &chain()).unwrap();
    let mut servo = SerialServo::open(link.to_str().unwrap(), cal).unwrap();
    let connected = stream_until(&mut servo, Some(&q), 10.0, |s| {
        s.status().state == LinkState::Connected
    });
    let st = servo.close();
    assert!(connected && st.connects == 1, "{st:?}");
}

#[test]
fn a_servo_going_silent_is_named_while_the_others_keep_their_goals() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("silent");
    let link = dir.path().join("bus");
    // Servo 3 answers until it has received 25 goal writes, then goes quiet.
    let sim = start(
        &link,
        &dir.path().join("log.jsonl"),
        &[
            "--present",
            &csv(&COMMAND),
            "--silent",
            "3",
            "--silent-after-goals",
            "25",
        ],
    );
    let cal = calibration(false);
    let q = angles_for(&cal, &COMMAND);
    let mut servo = SerialServo::open(link.to_str().unwrap(), cal).unwrap();
    let named = |s: &SerialServo| {
        let st = s.status();
        matches!(st.state, LinkState::Silent { .. })
            && st.describe().contains("servo id 3: no reply")
    };
    assert!(
        stream_until(&mut servo, Some(&q), 20.0, named),
        "servo 3's silence was not reported: {}",
        servo.status().describe()
    );
    assert!(!servo.link_ok());
    let silent_at = sim
        .events()
        .iter()
        .find(|e| e["event"] == "silent")
        .map(|e| e["t"].as_f64().unwrap())
        .expect("the simulator logged servo 3 going silent");
    // Keep streaming a while: the others keep getting goals.
    stream_until(&mut servo, Some(&q), 1.0, |_| false);
    let st = servo.close();
    assert_eq!(
        st.servo_errors
            .iter()
            .filter(|e| e.contains("no reply"))
            .count(),
        1,
        "only servo 3 is missing: {:?}",
        st.servo_errors
    );
    // Its feedback replies are counted missing (over a second of them).
    let missing = st.detail("replies_missing").and_then(|v| v.count());
    assert!(missing.is_some_and(|n| n >= 25), "{st:?}");
    let after = |id: u64| {
        sim.events()
            .iter()
            .filter(|e| e["id"] == id && e.get("goal").is_some())
            .filter(|e| e["t"].as_f64().unwrap() > silent_at)
            .count()
    };
    for id in [1, 2, 4, 5] {
        assert!(
            after(id) >= 10,
            "servo {id}: {} goals after the silence",
            after(id)
        );
    }
}

#[test]
fn unplug_and_replug_reconnects_and_ramps_from_the_new_positions() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("replug");
    let link = dir.path().join("bus");
    let mut first = start(
        &link,
        &dir.path().join("first.jsonl"),
        &["--present", &csv(&COMMAND)],
    );
    let cal = calibration(false);
    let q = angles_for(&cal, &COMMAND);
    let mut servo = SerialServo::open(link.to_str().unwrap(), cal.clone()).unwrap();
    assert!(
        stream_until(&mut servo, Some(&q), 10.0, |s| connected(&s.status())
            && s.status().output.as_deref() == Some(&COMMAND[..])),
        "{}",
        servo.status().describe()
    );
    // Unplugged: the link notices and keeps trying.
    first.kill();
    assert!(
        stream_until(&mut servo, Some(&q), 10.0, |s| matches!(
            s.status().state,
            LinkState::Disconnected { .. }
        )),
        "{}",
        servo.status().describe()
    );
    // Plugged in again, the arm having sagged meanwhile.
    let sagged = [2000, 2000, 2000, 2000, 2000];
    let second = start(
        &link,
        &dir.path().join("second.jsonl"),
        &["--present", &csv(&sagged)],
    );
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
fn garbage_and_bad_checksums_on_the_bus_are_skipped() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("garbage");
    let link = dir.path().join("bus");
    // Before every reply: random bytes, then a status packet with a bad
    // checksum claiming position 0, then a stray FF.
    let sim = start(
        &link,
        &dir.path().join("log.jsonl"),
        &["--present", &csv(&FAR_PRESENT), "--garbage"],
    );
    let cal = calibration(false);
    let servo = SerialServo::open(link.to_str().unwrap(), cal.clone()).unwrap();
    check_through_noise(&sim, servo, &FAR_PRESENT, &COMMAND, STARTUP_SPEED);
}

#[test]
fn servo_error_flags_are_reported_and_on_exit_relax_is_honoured() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("flags");
    let link = dir.path().join("bus");
    // Servo 2 reports overload (bit 5) and overheat (bit 2).
    let sim = start(&link, &dir.path().join("log.jsonl"), &["--flags", "2:36"]);
    let cal = calibration(true);
    assert_eq!(cal.link.on_exit, OnExit::Relax);
    let mut servo = SerialServo::open(link.to_str().unwrap(), cal.clone()).unwrap();
    let q = vec![0.0; 5];
    let reported = stream_until(&mut servo, Some(&q), 10.0, |s| {
        s.link().contains("servo id 2: overheat, overload")
    });
    let st = servo.close();
    assert!(reported, "{st:?}");
    assert_eq!(st.servo_errors, ["servo id 2: overheat, overload"]);
    // The simulator may still be reading the last packet: give it time.
    let off = |id: u64| {
        let events = sim.events();
        let last = events
            .iter()
            .rev()
            .find(|e| e["id"] == id && e.get("torque").is_some());
        last.is_some_and(|e| e["torque"] == 0)
    };
    let end = Instant::now() + Duration::from_secs(5);
    while !ids(&cal).into_iter().all(off) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    for id in ids(&cal) {
        assert!(off(id), "servo {id} was left on: {:?}", sim.events());
    }
}

/// config/servos_so101.yaml against the SO-101 of the shared robots, so the
/// file cannot drift from the arm it describes: it loads for the chain
/// base_link -> gripper_frame_link, ids 1..5 in chain order with zero at
/// 2048, the gripper (id 6) with the middle of its range at 2048, and every
/// joint's whole URDF range maps inside its servo range (no reachable angle
/// is cut off by the range clamp).
#[test]
fn so101_calibration_fits_the_shared_urdf() {
    let Some(urdf) = common::shared_urdf("so101.urdf") else {
        return;
    };
    let chain =
        Chain::from_urdf_file(&urdf, Some("base_link"), Some("gripper_frame_link")).unwrap();
    let cal = Calibration::load(
        common::project_dir().join("config/servos_so101.yaml"),
        &chain,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = cal.joints.iter().map(|j| j.joint.as_str()).collect();
    assert_eq!(
        names,
        [
            "shoulder_pan",
            "shoulder_lift",
            "elbow_flex",
            "wrist_flex",
            "wrist_roll",
            "gripper"
        ]
    );
    assert_eq!(ids(&cal), [1, 2, 3, 4, 5, 6]);
    assert!(cal.warnings.is_empty(), "{:?}", cal.warnings);
    assert_eq!(
        cal.link.on_exit,
        OnExit::Hold,
        "the arm must hold when closed"
    );
    for j in &cal.joints {
        if j.joint == "gripper" {
            let middle = j.command((j.lower + j.upper) / 2.0).unwrap();
            assert!((middle - 2048).abs() <= 1, "gripper middle at {middle}");
        } else {
            assert_eq!(j.zero, 2048.0, "{}", j.joint);
        }
        for limit in [j.lower, j.upper] {
            let raw = j.zero + j.direction * j.scale * limit;
            assert!(
                raw >= f64::from(j.min) && raw <= f64::from(j.max),
                "{}: URDF limit {limit} is {raw:.1} ticks, outside [{}, {}]",
                j.joint,
                j.min,
                j.max
            );
        }
        // And the range holds nothing the URDF forbids beyond rounding.
        let ends = [j.command(j.lower).unwrap(), j.command(j.upper).unwrap()];
        assert!(
            (ends.iter().min().unwrap() - j.min).abs() <= 1
                && (ends.iter().max().unwrap() - j.max).abs() <= 1,
            "{}: range [{}, {}] vs limits at {ends:?}",
            j.joint,
            j.min,
            j.max
        );
    }
}

/// SCS0009 servos for the project arm: big-endian, 0..1023, and a scale
/// the file must give (their 1024 units cover less than a turn).
const SCS_CONFIG: &str = "\
kind: feetech
model: scs0009
link: { rate_hz: 50.0, reply_timeout_ms: 300, startup_speed: 2.0 }
joints:
  - { joint: base_yaw,    output: 1, direction: 1,  zero: 512, scale: 195.6, range: [100, 924], speed_limit: 3.0 }
  - { joint: shoulder,    output: 2, direction: -1, zero: 512, scale: 195.6, range: [100, 924], speed_limit: 3.0 }
  - { joint: elbow,       output: 3, direction: 1,  zero: 512, scale: 195.6, range: [100, 924], speed_limit: 3.0 }
  - { joint: wrist_pitch, output: 4, direction: 1,  zero: 512, scale: 195.6, range: [100, 924], speed_limit: 3.0 }
  - { joint: wrist_roll,  output: 5, direction: 1,  zero: 512, scale: 195.6, range: [100, 924], speed_limit: 3.0 }
";
const SCS_PRESENT: [i32; 5] = [250, 780, 300, 760, 260];
const SCS_COMMAND: [i32; 5] = [760, 260, 750, 280, 770];

/// SCS servos have no SYNC READ (the simulator ignores it, as the SCS
/// protocol does): the driver speaks their byte order, reads each servo in
/// turn, and makes the same slow start-up move from where they are.
#[test]
fn scs_servos_start_slowly_and_report_their_positions_without_sync_read() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("scs");
    let link = dir.path().join("bus");
    let sim = start(
        &link,
        &dir.path().join("log.jsonl"),
        &["--scs", "--present", &csv(&SCS_PRESENT)],
    );
    let cal = Calibration::from_yaml(SCS_CONFIG, "SCS_CONFIG", &chain()).unwrap();
    let q = angles_for(&cal, &SCS_COMMAND);
    let mut servo = SerialServo::open(link.to_str().unwrap(), cal.clone()).unwrap();
    assert!(
        stream_until(&mut servo, None, 10.0, |s| connected(&s.status())),
        "never connected: {}",
        servo.status().describe()
    );
    assert_eq!(servo.feedback(), Some(cal.angles(&SCS_PRESENT)));
    // Arrived, and the feedback (one READ per servo) shows every servo
    // there, none of them reported silent on the way.
    let target = cal.angles(&SCS_COMMAND);
    let mut complaints = vec![];
    let arrived = stream_until(&mut servo, Some(&q), 20.0, |s| {
        complaints.extend(s.status().servo_errors);
        s.feedback() == Some(target.clone())
    });
    let fin = servo.close();
    assert!(arrived, "feedback {:?}: {fin:?}", fin.present);
    assert!(complaints.is_empty(), "{complaints:?}");
    assert_eq!(fin.connects, 1, "{fin:?}");
    assert_slow_starts(&sim, &cal, &SCS_PRESENT, &SCS_COMMAND, 2.0);
}

/// A calibration for STS3215 servos on a bus of SCS0009 ones (or the other
/// way round) would drive them in the wrong units and byte order: refused,
/// naming the model found.
#[test]
fn servos_of_the_other_family_are_named_and_refused() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("family");
    let link = dir.path().join("bus");
    let scs_bus = start(&link, &dir.path().join("scs.jsonl"), &["--scs"]);
    let error = refused(&link, calibration(false));
    assert!(
        error.contains("servo id 1 is scs0009 (model 1284), not the calibration's sts3215"),
        "{error}"
    );
    assert!(scs_bus.events().is_empty(), "{:?}", scs_bus.events());
    drop(scs_bus);

    let sts_bus = start(&link, &dir.path().join("sts.jsonl"), &[]);
    let cal = Calibration::from_yaml(SCS_CONFIG, "SCS_CONFIG", &chain()).unwrap();
    let error = refused(&link, cal);
    assert!(
        error.contains("servo id 1 is sts3215 (model 777), not the calibration's scs0009"),
        "{error}"
    );
    assert!(sts_bus.events().is_empty(), "{:?}", sts_bus.events());
}

/// Opens the link on `link` with `cal` until a connection was tried;
/// checks it never connected and returns why.
fn refused(link: &Path, cal: Calibration) -> String {
    let q = vec![0.0; cal.joints.len()];
    let mut servo = SerialServo::open(link.to_str().unwrap(), cal).unwrap();
    let tried = stream_until(&mut servo, Some(&q), 10.0, |s| s.status().attempts >= 1);
    let st = servo.close();
    assert!(tried && st.connects == 0, "{st:?}");
    st.last_error.unwrap_or_default()
}
