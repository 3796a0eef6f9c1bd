//! A simulated servo bus on a pty (`tests/python/feetech_bus.py` or
//! `dynamixel_bus.py`) for the integration tests: the process, its
//! JSON-lines log of what the servos were told, and its control channel.
//!
//! The port a test hands the driver is a symlink to the pty
//! ([`Sim::plug`]), so a test can "unplug" the bus (kill the simulator)
//! and "plug in" another one.

use arm_ik::servo::calibration::Calibration;
use arm_ik::servo::link::{LinkState, LinkStatus};
use arm_ik::servo::{SerialServo, ServoOutput};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// One simulator process; killed when dropped.
pub struct Sim {
    pub child: Child,
    /// The simulator's JSON-lines log.
    pub log: PathBuf,
    /// The pty the servos listen on.
    pub pty: String,
    control: ChildStdin,
    answers: BufReader<ChildStdout>,
}

impl Sim {
    /// Starts `script` (a file of `tests/python/`) with `args`, logging to
    /// `log`.
    pub fn start(script: &str, log: &Path, args: &[&str]) -> Sim {
        let path = super::project_dir().join("tests/python").join(script);
        let mut child = Command::new("python3")
            .arg(path)
            .arg("--log")
            .arg(log)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {script}: {e}"));
        let control = child.stdin.take().unwrap();
        let mut answers = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        answers.read_line(&mut line).unwrap();
        let pty = line
            .strip_prefix("PTY ")
            .unwrap_or_else(|| panic!("{script} printed {line:?}, not PTY <path>"))
            .trim()
            .to_string();
        Sim {
            child,
            log: log.to_path_buf(),
            pty,
            control,
            answers,
        }
    }

    /// Points the symlink `link` at this bus (replacing what it pointed
    /// to): the port the driver opens.
    pub fn plug(&self, link: &Path) {
        let tmp = link.with_extension("new");
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(&self.pty, &tmp).unwrap();
        std::fs::rename(&tmp, link).unwrap();
    }

    /// Every line the simulator logged so far.
    pub fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The goal positions servo `id` received, in order.
    pub fn goals(&self, id: u64) -> Vec<i32> {
        self.events()
            .iter()
            .filter(|e| e["id"] == id && e.get("goal").is_some())
            .map(|e| e["goal"].as_i64().unwrap() as i32)
            .collect()
    }

    /// The torque enable values servo `id` was written, in order.
    pub fn torques(&self, id: u64) -> Vec<i64> {
        self.events()
            .iter()
            .filter(|e| e["id"] == id && e.get("goal").is_none())
            .filter_map(|e| e.get("torque")?.as_i64())
            .collect()
    }

    /// Sends a control-channel command; the simulator's answer.
    pub fn control(&mut self, cmd: Value) -> Value {
        writeln!(self.control, "{cmd}").unwrap();
        let mut line = String::new();
        self.answers.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?}: {e}"))
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Servo ids in chain order.
pub fn ids(cal: &Calibration) -> Vec<u64> {
    cal.joints.iter().map(|j| u64::from(j.output)).collect()
}

/// Joint angles whose commands are exactly `ticks`.
pub fn angles_for(cal: &Calibration, ticks: &[i32]) -> Vec<f64> {
    let q = cal.angles(ticks);
    let mut back = vec![0; ticks.len()];
    cal.commands(&q, &mut back).unwrap();
    assert_eq!(back, ticks, "the test pose must map exactly");
    q
}

pub fn csv(v: &[i32]) -> String {
    v.iter().map(i32::to_string).collect::<Vec<_>>().join(",")
}

/// Streams `q` (like the node: every 20 ms) until `done` or `secs` pass;
/// true when `done`. Every `command` call must return promptly: the link
/// never makes the caller wait on the port.
pub fn stream_until(
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

pub fn connected(s: &LinkStatus) -> bool {
    s.state == LinkState::Connected
}

/// Checks the start-up move of every servo of `cal` as `sim` received it:
/// each starts exactly where the servo was (`from`), steps no faster than
/// `speed` (rad/s; one tick of rounding allowed), stays inside the joint's
/// range and ends at the command (`to`).
pub fn assert_slow_starts(sim: &Sim, cal: &Calibration, from: &[i32], to: &[i32], speed: f64) {
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

/// Every servo's last goal is its command.
pub fn goals_reached(sim: &Sim, cal: &Calibration, command: &[i32]) -> bool {
    ids(cal)
        .iter()
        .zip(command)
        .all(|(&id, c)| sim.goals(id).last() == Some(c))
}

/// Relax and enable on a bus whose servos hold `command` through `servo`
/// (connected, its start-up move done), streaming `command` all along:
/// relax writes torque off to every servo; servo `k`, moved by hand to
/// `to`, shows in the feedback, and no goal is written while limp; enable
/// sets its goal to `to` before its torque goes on again, then brings it
/// back no faster than `speed` (rad/s). Closes the link.
pub fn check_relax_and_enable(
    sim: &mut Sim,
    mut servo: SerialServo,
    command: &[i32],
    (k, to): (usize, i32),
    speed: f64,
) {
    let cal = servo.calibration().clone();
    let q = angles_for(&cal, command);
    let id = ids(&cal)[k];
    servo.relax();
    assert!(servo.relaxed());
    let limp = |s: &SerialServo| s.status().relaxed;
    assert!(stream_until(&mut servo, Some(&q), 5.0, limp));
    for id in ids(&cal) {
        assert_eq!(sim.torques(id).last(), Some(&0), "servo {id} still on");
    }
    // Limp: moved by hand, the feedback follows, and nothing is written.
    let goal_counts =
        |sim: &Sim| -> Vec<usize> { ids(&cal).iter().map(|&i| sim.goals(i).len()).collect() };
    let before = goal_counts(sim);
    sim.control(serde_json::json!({ "present": [id, to] }));
    let mut moved = command.to_vec();
    moved[k] = to;
    let by_hand = cal.angles(&moved);
    assert!(
        stream_until(&mut servo, Some(&q), 5.0, |s| s.feedback()
            == Some(by_hand.clone())),
        "{:?}",
        servo.feedback()
    );
    let after = goal_counts(sim);
    assert_eq!(before, after, "goals written while relaxed");

    // Enabled: goal = where it was moved, torque on, then slowly back.
    servo.enable();
    assert!(!servo.relaxed());
    let back = |_: &SerialServo| {
        let goals = sim.goals(id);
        goals.len() > after[k] && goals.last() == Some(&command[k])
    };
    assert!(stream_until(&mut servo, Some(&q), 10.0, back));
    servo.close();
    let goals = sim.goals(id);
    let resumed = &goals[after[k]..];
    assert_eq!(resumed[0], to, "enable set goal = present first");
    let per_tick = speed * cal.joints[k].scale / cal.link.rate_hz;
    for w in resumed.windows(2) {
        assert!(
            f64::from((w[1] - w[0]).abs()) <= per_tick + 1.0,
            "jump {} -> {}: {resumed:?}",
            w[0],
            w[1]
        );
    }
    assert_eq!(sim.torques(id), [1, 0, 1], "on, relaxed, on again");
    // The goal came before the torque, on enabling as on starting.
    let mine: Vec<Value> = sim.events().into_iter().filter(|e| e["id"] == id).collect();
    let torque_on = |e: &Value| e["torque"] == 1 && e.get("goal").is_none();
    let on_again = mine.iter().rposition(torque_on).expect("torque on again");
    let goal = mine[..on_again].iter().rfind(|e| e.get("goal").is_some());
    assert_eq!(goal.map(|e| e["goal"].clone()), Some(to.into()), "{mine:?}");
}

/// Streams `command` through `servo` on a noisy bus until the feedback
/// shows it: no corrupt packet's position (0 here) is ever taken, the
/// garbage is counted, the link never drops, and the start-up move from
/// `from` is slow (see [`assert_slow_starts`]). Closes the link.
pub fn check_through_noise(
    sim: &Sim,
    mut servo: SerialServo,
    from: &[i32],
    command: &[i32],
    speed: f64,
) {
    let cal = servo.calibration().clone();
    let q = angles_for(&cal, command);
    let target = cal.angles(command);
    let mut seen_zero = false;
    let arrived = stream_until(&mut servo, Some(&q), 20.0, |s| {
        seen_zero |= s.status().present.is_some_and(|p| p.contains(&0));
        s.feedback() == Some(target.clone())
    });
    let st = servo.close();
    assert!(arrived, "{st:?}");
    assert!(!seen_zero, "a corrupt packet's position was taken");
    assert_eq!(st.connects, 1, "{st:?}");
    assert!(st.reply_garbage > 0, "no garbage was counted: {st:?}");
    assert_slow_starts(sim, &cal, from, command, speed);
}
