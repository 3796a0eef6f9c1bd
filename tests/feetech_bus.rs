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
use arm_ik::servo::link::{LinkState, LinkStatus};
use arm_ik::servo::{SerialServo, ServoOutput};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A scratch folder per test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("arm_ik_feetech_{name}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// True when python3 runs; otherwise SKIP, or fail under CI.
fn have_python() -> bool {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "CI is set but python3 does not run: the Feetech bus tests need it"
        );
        println!("SKIP: python3 not found (the simulated Feetech bus needs it)");
    }
    ok
}

/// One simulator process; killed when dropped.
struct Sim {
    child: Child,
    log: PathBuf,
}

impl Sim {
    /// Starts `feetech_bus.py` with `args`, logging to `log`, and points
    /// the symlink `link` at its pty (replacing what it pointed to).
    fn start(link: &Path, log: &Path, args: &[&str]) -> Sim {
        let script = common::project_dir().join("tests/python/feetech_bus.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg("--log")
            .arg(log)
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start feetech_bus.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let pty = line
            .strip_prefix("PTY ")
            .unwrap_or_else(|| panic!("feetech_bus.py printed {line:?}, not PTY <path>"))
            .trim()
            .to_string();
        let tmp = link.with_extension("new");
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(&pty, &tmp).unwrap();
        std::fs::rename(&tmp, link).unwrap();
        Sim {
            child,
            log: log.to_path_buf(),
        }
    }

    /// Every line the simulator logged so far.
    fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The goal positions servo `id` received, in order.
    fn goals(&self, id: u64) -> Vec<i32> {
        self.events()
            .iter()
            .filter(|e| e["id"] == id && e.get("goal").is_some())
            .map(|e| e["goal"].as_i64().unwrap() as i32)
            .collect()
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.kill();
    }
}

fn chain() -> Chain {
    Chain::from_urdf_file(common::project_urdf("arm.urdf"), None, None).unwrap()
}

const STARTUP_SPEED: f64 = 2.0;

/// The project's Feetech calibration (config/servos_feetech.yaml) with a
/// faster start-up move (so the tests take seconds) and a reply timeout
/// that a busy machine's scheduling cannot trip; `torque_off` sets
/// `link.torque_off_on_close`.
fn config_text(torque_off: bool) -> String {
    let text =
        std::fs::read_to_string(common::project_dir().join("config/servos_feetech.yaml")).unwrap();
    let edited = text
        .replace(
            "startup_speed: 0.3",
            &format!("startup_speed: {STARTUP_SPEED}"),
        )
        .replace("reply_timeout_ms: 100", "reply_timeout_ms: 300")
        .replace(
            "torque_off_on_close: false",
            &format!("torque_off_on_close: {torque_off}"),
        );
    assert!(edited.contains("startup_speed: 2") && edited.contains("reply_timeout_ms: 300"));
    assert!(edited.contains(&format!("torque_off_on_close: {torque_off}")));
    edited
}

fn calibration(torque_off: bool) -> Calibration {
    Calibration::from_yaml(&config_text(torque_off), "test config", &chain()).unwrap()
}

/// Servo ids in chain order.
fn ids(cal: &Calibration) -> Vec<u64> {
    cal.joints.iter().map(|j| u64::from(j.output)).collect()
}

/// Joint angles whose commands are exactly `ticks`.
fn angles_for(cal: &Calibration, ticks: &[i32]) -> Vec<f64> {
    let q = cal.angles(ticks);
    let mut back = vec![0; ticks.len()];
    cal.commands(&q, &mut back).unwrap();
    assert_eq!(back, ticks, "the test pose must map exactly");
    q
}

fn csv(v: &[i32]) -> String {
    v.iter().map(i32::to_string).collect::<Vec<_>>().join(",")
}

/// Streams `q` (like the node: every 20 ms) until `done` or `secs` pass;
/// true when `done`. Every `command` call must return promptly: the link
/// never makes the caller wait on the port.
fn stream_until(
    servo: &mut SerialServo,
    q: Option<&[f64]>,
    secs: f64,
    mut done: impl FnMut(&SerialServo) -> bool,
) -> bool {
    let end = Instant::now() + Duration::from_secs_f64(secs);
    while Instant::now() < end {
        if let Some(q) = q {
            let t = Instant::now();
            servo.command(q, 0.0);
            assert!(
                t.elapsed() < Duration::from_secs(1),
                "command() blocked for {:?}",
                t.elapsed()
            );
        }
        if done(servo) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn connected(s: &LinkStatus) -> bool {
    s.state == LinkState::Connected
}

/// Checks the start-up move of every servo of `cal` as `sim` received it:
/// each starts exactly where the servo was (`from`), steps no faster than
/// `speed` (rad/s; one tick of rounding allowed), stays inside the joint's
/// range and ends at the command (`to`).
fn assert_slow_starts(sim: &Sim, cal: &Calibration, from: &[i32], to: &[i32], speed: f64) {
    for (k, (j, id)) in cal.joints.iter().zip(ids(cal)).enumerate() {
        let goals = sim.goals(id);
        let per_tick = speed * j.scale / cal.link.rate_hz;
        assert!(!goals.is_empty(), "servo {id} received no goal");
        assert_eq!(
            goals[0], from[k],
            "servo {id}: first goal is not where it was"
        );
        for w in goals.windows(2) {
            assert!(
                f64::from((w[1] - w[0]).abs()) <= per_tick + 1.0,
                "servo {id}: goal stepped {} -> {} (limit {per_tick:.1} per frame): {goals:?}",
                w[0],
                w[1]
            );
        }
        for &g in &goals {
            assert!(
                (j.min..=j.max).contains(&g),
                "servo {id}: goal {g} outside [{}, {}]",
                j.min,
                j.max
            );
        }
        assert_eq!(
            *goals.last().unwrap(),
            to[k],
            "servo {id} did not reach the command"
        );
    }
}

const FAR_PRESENT: [i32; 5] = [1100, 3000, 1000, 2900, 1000];
const COMMAND: [i32; 5] = [3000, 1100, 3000, 1200, 3000];

#[test]
fn start_up_moves_slowly_from_where_the_servos_are_and_reports_their_positions() {
    if !have_python() {
        return;
    }
    let dir = Scratch::new("startup");
    let link = dir.path("bus");
    let sim = Sim::start(
        &link,
        &dir.path("log.jsonl"),
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
    let dir = Scratch::new("missing");
    let link = dir.path("bus");
    let sim = Sim::start(&link, &dir.path("log.jsonl"), &["--silent", "3"]);
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
    let config = dir.path("servos.yaml");
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
    let dir = Scratch::new("model");
    let link = dir.path("bus");
    let sim = Sim::start(&link, &dir.path("log.jsonl"), &["--model", "4:1000"]);
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
    let dir = Scratch::new("mixed");
    let link = dir.path("bus");
    let _sim = Sim::start(&link, &dir.path("log.jsonl"), &["--model", "4:2825"]);
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
    let dir = Scratch::new("silent");
    let link = dir.path("bus");
    // Servo 3 answers until it has received 25 goal writes, then goes quiet.
    let sim = Sim::start(
        &link,
        &dir.path("log.jsonl"),
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
    let dir = Scratch::new("replug");
    let link = dir.path("bus");
    let mut first = Sim::start(
        &link,
        &dir.path("first.jsonl"),
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
    let second = Sim::start(
        &link,
        &dir.path("second.jsonl"),
        &["--present", &csv(&sagged)],
    );
    let reached = |_: &SerialServo| {
        ids(&cal)
            .iter()
            .zip(COMMAND)
            .all(|(&id, c)| second.goals(id).last() == Some(&c))
    };
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
    let dir = Scratch::new("garbage");
    let link = dir.path("bus");
    // Before every reply: random bytes, then a status packet with a bad
    // checksum claiming position 0, then a stray FF.
    let sim = Sim::start(
        &link,
        &dir.path("log.jsonl"),
        &["--present", &csv(&FAR_PRESENT), "--garbage"],
    );
    let cal = calibration(false);
    let q = angles_for(&cal, &COMMAND);
    let mut servo = SerialServo::open(link.to_str().unwrap(), cal.clone()).unwrap();
    let mut seen_zero = false;
    let target = cal.angles(&COMMAND);
    let arrived = stream_until(&mut servo, Some(&q), 20.0, |s| {
        seen_zero |= s.status().present.is_some_and(|p| p.contains(&0));
        s.feedback() == Some(target.clone())
    });
    let st = servo.close();
    assert!(arrived, "{st:?}");
    assert!(!seen_zero, "a corrupt packet's position was taken");
    assert_eq!(st.connects, 1, "{st:?}");
    assert!(st.reply_garbage > 0, "no garbage was counted: {st:?}");
    assert_slow_starts(&sim, &cal, &FAR_PRESENT, &COMMAND, STARTUP_SPEED);
}

#[test]
fn servo_error_flags_are_reported_and_torque_off_on_close_is_honoured() {
    if !have_python() {
        return;
    }
    let dir = Scratch::new("flags");
    let link = dir.path("bus");
    // Servo 2 reports overload (bit 5) and overheat (bit 2).
    let sim = Sim::start(&link, &dir.path("log.jsonl"), &["--flags", "2:36"]);
    let cal = calibration(true);
    assert!(cal.link.torque_off_on_close);
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
/// 2048, and every joint's whole URDF range maps inside its servo range
/// (no reachable angle is cut off by the range clamp).
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
            "wrist_roll"
        ]
    );
    assert_eq!(ids(&cal), [1, 2, 3, 4, 5]);
    assert!(
        !cal.link.torque_off_on_close,
        "the arm must hold when closed"
    );
    for j in &cal.joints {
        assert_eq!(j.zero, 2048.0, "{}", j.joint);
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
    let dir = Scratch::new("scs");
    let link = dir.path("bus");
    let sim = Sim::start(
        &link,
        &dir.path("log.jsonl"),
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
    let dir = Scratch::new("family");
    let link = dir.path("bus");
    let scs_bus = Sim::start(&link, &dir.path("scs.jsonl"), &["--scs"]);
    let error = refused(&link, calibration(false));
    assert!(
        error.contains("servo id 1 is scs0009 (model 1284), not the calibration's sts3215"),
        "{error}"
    );
    assert!(scs_bus.events().is_empty(), "{:?}", scs_bus.events());
    drop(scs_bus);

    let sts_bus = Sim::start(&link, &dir.path("sts.jsonl"), &[]);
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
