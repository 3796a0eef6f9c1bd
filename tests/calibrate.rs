//! `arm_ik calibrate` driven like a person would: under tmux (send-keys,
//! capture-pane) on the full-screen wizard, and through plain prompts with
//! stdin piped, against the simulated Feetech and Dynamixel buses
//! (`tests/python/*_bus.py`, moved "by hand" through their control
//! channel). The servo file written must be what the simulated servos'
//! positions imply; Ctrl-C must leave the old file as it was and the
//! servos as `--on-stop` says. Waits are on what the screen shows, never
//! on sleeps. Needs `python3` and `tmux` (SKIP without them, unless `CI`
//! is set).
#![cfg(feature = "app")]

mod common;

use arm_ik::model::Chain;
use arm_ik::servo::calibration::CalibrationFile;
use common::bus_sim::Sim;
use common::{TempDir, have_python};
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Ticks per radian of a 4096-tick servo.
const SCALE: f64 = 4096.0 / std::f64::consts::TAU;

/// How long any one thing may take to show on a loaded machine.
const PATIENCE: Duration = Duration::from_secs(30);

fn have_tmux() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("CI").unwrap_or_default().is_empty(),
            "CI needs tmux"
        );
        eprintln!("SKIP: no tmux");
    }
    ok
}

/// The joints the wizard asks about for urdf/arm.urdf: the chain's, then
/// the gripper.
fn joint_names() -> Vec<String> {
    let chain = Chain::from_urdf_file(common::project_urdf("arm.urdf"), None, None).unwrap();
    let mut names: Vec<String> = chain.joints.iter().map(|j| j.name.clone()).collect();
    names.extend(
        chain
            .extras
            .iter()
            .filter(|x| x.actuated())
            .map(|x| x.name.clone()),
    );
    names
}

/// What a person shows for joint k: zero, a positive move, the stops.
struct Pose {
    zero: i32,
    positive: i32,
    stops: [i32; 2],
}

fn poses(n: usize) -> Vec<Pose> {
    (0..n)
        .map(|k| {
            let k = k as i32;
            let zero = 2000 + 37 * k;
            // Every other joint counts down with its angle.
            let sign = if k % 2 == 0 { 1 } else { -1 };
            Pose {
                zero,
                positive: zero + sign * (150 + k),
                stops: [zero - 900 - 11 * k, zero + 800 + 7 * k],
            }
        })
        .collect()
}

/// The file must hold what the poses imply: direction the sign of the
/// positive move, range the stops less 0.02 rad (13 ticks) each side.
fn assert_written(path: &Path, names: &[String], poses: &[Pose], ids: &[u16]) {
    let text = std::fs::read_to_string(path).unwrap();
    let file: CalibrationFile = serde_norway::from_str(&text).unwrap();
    let margin = (0.02 * SCALE).round() as i32;
    assert_eq!(file.joints.len(), names.len(), "{text}");
    for (k, (e, p)) in file.joints.iter().zip(poses).enumerate() {
        assert_eq!(e.joint, names[k], "{text}");
        assert_eq!(e.output, ids[k], "{text}");
        assert_eq!(e.zero, f64::from(p.zero), "{}: {text}", e.joint);
        let dir = (p.positive - p.zero).signum();
        assert_eq!(e.direction, f64::from(dir), "{}: {text}", e.joint);
        assert_eq!(
            e.range,
            [p.stops[0] + margin, p.stops[1] - margin],
            "{}: {text}",
            e.joint
        );
    }
}

/// The wizard in a tmux pane of its own.
struct Pane {
    name: String,
}

impl Pane {
    fn start(dir: &Path, args: &[&str]) -> Pane {
        let name = format!(
            "arm_ik_cal_{}_{}",
            std::process::id(),
            dir.file_name().unwrap().to_string_lossy()
        );
        let mut cmd = format!("'{}'", env!("CARGO_BIN_EXE_arm_ik"));
        for a in args {
            cmd.push_str(&format!(" '{a}'"));
        }
        // The exit code stays on the pane until the test ends.
        let shell = format!("{cmd} 2>{}/stderr; echo EXIT=$?; sleep 600", dir.display());
        let ok = Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                &name,
                "-x",
                "120",
                "-y",
                "40",
                "sh",
                "-c",
                &shell,
            ])
            .current_dir(common::project_dir())
            .status()
            .unwrap();
        assert!(ok.success());
        Pane { name }
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen shows every one of `texts`.
    fn wait_for(&self, texts: &[&str]) -> String {
        let end = Instant::now() + PATIENCE;
        loop {
            let s = self.screen();
            if texts.iter().all(|t| s.contains(t)) {
                return s;
            }
            assert!(
                Instant::now() < end,
                "waited for {texts:?}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    /// Waits until the row of joint `name` shows `units`.
    fn wait_row(&self, name: &str, units: i32) {
        let end = Instant::now() + PATIENCE;
        let cell = format!(" {units} ");
        loop {
            let s = self.screen();
            // The table is at the top: the first line naming the joint.
            let row = s.lines().find(|l| l.split_whitespace().any(|w| w == name));
            if row.is_some_and(|r| r.contains(&cell)) {
                return;
            }
            assert!(
                Instant::now() < end,
                "waited for {name} at {units}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.name];
        args.extend(keys);
        assert!(Command::new("tmux").args(&args).status().unwrap().success());
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.name])
            .status();
    }
}

/// Moves servo `id` "by hand" and waits for the wizard to show it on
/// the row of joint `name`.
fn move_by_hand(sim: &mut Sim, pane: &Pane, name: &str, id: u16, ticks: i32) {
    sim.control(json!({"present": [id, ticks]}));
    pane.wait_row(name, ticks);
}

fn feetech_sim(dir: &Path) -> (Sim, std::path::PathBuf) {
    let link = dir.join("bus");
    let sim = Sim::start(
        "feetech_bus.py",
        &dir.join("log.jsonl"),
        &["--ids", "1,2,3,4,5,6", "--present", "2048"],
    );
    sim.plug(&link);
    (sim, link)
}

#[test]
fn the_wizard_on_a_feetech_bus_writes_what_the_servos_showed() {
    if !have_python() || !have_tmux() {
        return;
    }
    let dir = TempDir::new("calibrate-tui");
    let (mut sim, link) = feetech_sim(dir.path());
    let out = dir.path().join("servos.yaml");
    let pane = Pane::start(
        dir.path(),
        &[
            "calibrate",
            "--kind",
            "feetech",
            "--port",
            link.to_str().unwrap(),
            "--config",
            out.to_str().unwrap(),
        ],
    );
    let names = joint_names();
    let poses = poses(names.len());
    pane.wait_for(&["Put the arm in the zero pose", "points up"]);
    for (k, p) in poses.iter().enumerate() {
        move_by_hand(&mut sim, &pane, &names[k], k as u16 + 1, p.zero);
    }
    pane.keys(&["Enter"]);
    for (k, p) in poses.iter().enumerate() {
        let id = k as u16 + 1;
        let name = &names[k];
        pane.wait_for(&[&format!("Move {name} a little in its positive direction")]);
        move_by_hand(&mut sim, &pane, name, id, p.positive);
        pane.keys(&["Enter"]);
        pane.wait_for(&[&format!("Move {name} to one of its stops")]);
        move_by_hand(&mut sim, &pane, name, id, p.stops[0]);
        pane.keys(&["Enter"]);
        pane.wait_for(&[&format!("Move {name} to its other stop")]);
        move_by_hand(&mut sim, &pane, name, id, p.stops[1]);
        pane.keys(&["Enter"]);
    }
    pane.wait_for(&["Write ", "(new)"]);
    assert!(!out.exists(), "nothing written before the person says so");
    pane.keys(&["y"]);
    pane.wait_for(&["Check: move each joint"]);
    pane.keys(&["n"]);
    let s = pane.wait_for(&["EXIT="]);
    assert!(
        s.contains("EXIT=0"),
        "{s}\n{}",
        std::fs::read_to_string(dir.path().join("stderr")).unwrap_or_default()
    );
    assert!(s.contains(&format!("wrote {}", out.display())), "{s}");
    assert_written(&out, &names, &poses, &[1, 2, 3, 4, 5, 6]);
    // Never moved: every goal the servos got was where they were (the
    // torque switched on harmlessly), and at the end they hold where the
    // arm was left (the default --on-stop hold).
    for e in sim.events().iter().filter(|e| e.get("goal").is_some()) {
        assert_eq!(e["goal"], e["present"], "{e}");
    }
    for id in 1..=6u64 {
        assert_eq!(
            sim.torques(id).last(),
            Some(&1),
            "servo {id}: {:?}",
            sim.torques(id)
        );
    }
}

#[test]
fn ctrl_c_leaves_the_old_file_untouched_and_the_servos_relaxed_when_asked() {
    if !have_python() || !have_tmux() {
        return;
    }
    let dir = TempDir::new("calibrate-stop");
    let (mut sim, link) = feetech_sim(dir.path());
    let out = dir.path().join("servos.yaml");
    let old = common::project_config("servos_feetech.yaml");
    std::fs::write(&out, &old).unwrap();
    let pane = Pane::start(
        dir.path(),
        &[
            "calibrate",
            "--on-stop",
            "relax",
            "--port",
            link.to_str().unwrap(),
            "--config",
            out.to_str().unwrap(),
        ],
    );
    pane.wait_for(&["Put the arm in the zero pose"]);
    move_by_hand(&mut sim, &pane, "base_yaw", 1, 2222);
    pane.keys(&["Enter"]);
    pane.wait_for(&["in its positive direction"]);
    pane.keys(&["C-c"]);
    let s = pane.wait_for(&["EXIT="]);
    assert!(s.contains("EXIT=130"), "{s}");
    let err = std::fs::read_to_string(dir.path().join("stderr")).unwrap();
    assert!(
        err.contains("stopped by SIGINT; the servo file was not changed"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), old);
    for id in 1..=6u64 {
        assert_eq!(
            sim.torques(id).last(),
            Some(&0),
            "servo {id}: {:?}",
            sim.torques(id)
        );
    }
}

/// The plain prompts, stdin and stdout piped, on a Dynamixel bus the
/// wizard first looks for at the factory 57600 baud and finds at 1 Mbaud.
#[test]
fn plain_prompts_on_a_dynamixel_bus_keep_the_old_files_link_and_comments() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("calibrate-plain");
    let link = dir.path().join("bus");
    let mut sim = Sim::start(
        "dynamixel_bus.py",
        &dir.path().join("log.jsonl"),
        &["--ids", "1,2,3,4,5,6"],
    );
    sim.plug(&link);
    let names = joint_names();
    let out = dir.path().join("servos.yaml");
    let old = format!(
        "# my arm\nkind: dynamixel\nmodel: xl330-m288\nlink:\n  baud: 57600   # factory\n  rate_hz: 40.0  # kept\n  startup_speed: 1.0\njoints:\n{}",
        names
            .iter()
            .enumerate()
            .map(|(k, n)| format!("  # joint {k}\n  - {{ joint: {n}, output: {}, direction: 1, zero: 2048, range: [1000, 3000], speed_limit: 2.5 }}\n", k + 1))
            .collect::<String>()
    );
    std::fs::write(&out, &old).unwrap();
    let mut child = common::spawn_arm_ik(
        &[
            "calibrate",
            "--port",
            link.to_str().unwrap(),
            "--config",
            out.to_str().unwrap(),
        ],
        &common::project_dir(),
    );
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut until = |text: &str| -> String {
        let mut seen = String::new();
        for line in lines.by_ref() {
            let line = line.unwrap();
            seen.push_str(&line);
            seen.push('\n');
            if line.contains(text) {
                return seen;
            }
        }
        panic!("no '{text}' in:\n{seen}");
    };
    let poses = poses(names.len());
    let first = until("Put the arm in the zero pose");
    assert!(first.contains("points up"), "{first}");
    for (k, p) in poses.iter().enumerate() {
        sim.control(json!({"present": [k + 1, p.zero]}));
    }
    // The prompt is printed once; the positions are those read after
    // Enter comes.
    let mut answer = |stdin: &mut std::process::ChildStdin, id: usize, ticks: i32| {
        sim.control(json!({"present": [id, ticks]}));
        writeln!(stdin).unwrap();
    };
    answer(&mut stdin, 1, poses[0].zero);
    for (k, p) in poses.iter().enumerate() {
        until(&format!("Move {} a little", names[k]));
        answer(&mut stdin, k + 1, p.positive);
        until("to one of its stops");
        answer(&mut stdin, k + 1, p.stops[0]);
        until("to its other stop");
        answer(&mut stdin, k + 1, p.stops[1]);
    }
    let summary = until("Write ");
    assert!(
        summary.contains("(was zero 2048, direction 1, range [1000, 3000])"),
        "{summary}"
    );
    writeln!(stdin, "y").unwrap();
    until("Check: move each joint");
    writeln!(stdin, "y").unwrap();
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{err}");
    assert_written(&out, &names, &poses, &[1, 2, 3, 4, 5, 6]);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("# my arm\nkind: dynamixel\nmodel: xl330-m288\nlink:\n  baud: 1000000 # factory\n  rate_hz: 40.0  # kept\n  startup_speed: 1.0\n"), "{text}");
    assert!(text.contains("  # joint 3\n  - { joint: "), "{text}");
    assert!(text.contains("speed_limit: 2.5"), "{text}");
    // The check move: each servo went to +0.2 rad (130 ticks its own way)
    // before -0.2 rad, with the new numbers.
    let step = (0.2 * SCALE).round() as i32;
    for (k, p) in poses.iter().enumerate() {
        let dir = (p.positive - p.zero).signum();
        let goals = sim.goals(k as u64 + 1);
        // From the zero pose on (the move there passes other values).
        let at_zero = goals
            .iter()
            .position(|&x| x == p.zero)
            .unwrap_or_else(|| panic!("servo {} never at zero: {goals:?}", k + 1));
        let goals = &goals[at_zero..];
        let first = |g: i32| goals.iter().position(|&x| x == g);
        let (plus, minus) = (first(p.zero + dir * step), first(p.zero - dir * step));
        assert!(
            plus.is_some() && minus.is_some() && plus < minus,
            "servo {}: {goals:?}",
            k + 1
        );
    }
}

/// `arm_ik calibrate | head` with the reader gone: the wizard ends quietly
/// with 141 (as every command does, tests/interrupt.rs), nothing written.
#[test]
fn a_closed_stdout_ends_the_plain_wizard_quietly() {
    if !have_python() {
        return;
    }
    let dir = TempDir::new("calibrate-pipe");
    let (_sim, link) = feetech_sim(dir.path());
    let out = dir.path().join("servos.yaml");
    let mut child = common::spawn_arm_ik(
        &[
            "calibrate",
            "--kind",
            "feetech",
            "--port",
            link.to_str().unwrap(),
            "--config",
            out.to_str().unwrap(),
        ],
        &common::project_dir(),
    );
    drop(child.stdout.take());
    let result = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(141), "{stderr}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("error"),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// Hobby servos on the firmware bridge in simavr: each joint's pulse
/// stepped with the keys to its zero, a positive move and its stops; the
/// file holds those pulses, and the firmware really pulses what the keys
/// set.
#[test]
fn the_wizard_steps_hobby_servos_on_the_firmware_bridge() {
    if !have_tmux() {
        return;
    }
    let Some(mut fw) = common::firmware::Harness::start() else {
        return;
    };
    let dir = TempDir::new("calibrate-pwm");
    let out = dir.path().join("servos.yaml");
    let pane = Pane::start(
        dir.path(),
        &[
            "calibrate",
            "--kind",
            "pwm_bridge",
            "--port",
            fw.pty(),
            "--config",
            out.to_str().unwrap(),
        ],
    );
    let names = joint_names();
    // From the middle of the bridge's pulse range, 1500 µs: per joint,
    // (key, presses) to its zero, a positive move and each stop.
    let press = |key: &str, n: usize| pane.keys(&vec![key; n]);
    let mut expect = Vec::new();
    for (k, name) in names.iter().enumerate() {
        pane.wait_for(&[&format!(
            "Step {name} with the keys until it is at its zero pose"
        )]);
        press("Right", 3 + k);
        let zero = 1500 + 10 * (3 + k as i32);
        pane.wait_row(name, zero);
        pane.keys(&["Enter"]);
        if k == 0 {
            // The firmware pulses what the keys set (±5 µs).
            let end = Instant::now() + PATIENCE;
            loop {
                let now = fw.sim_time();
                if fw.medians(now - 0.1, now)[0].is_some_and(|w| (w - f64::from(zero)).abs() <= 5.0)
                {
                    break;
                }
                assert!(Instant::now() < end, "channel 0 never pulsed {zero} µs");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        pane.wait_for(&[&format!("Move {name} a little in its positive direction")]);
        let sign = if k % 2 == 0 { 1 } else { -1 };
        press(if sign > 0 { "Right" } else { "Left" }, 6);
        pane.wait_row(name, zero + sign * 60);
        pane.keys(&["Enter"]);
        pane.wait_for(&[&format!("Move {name} to one of its stops")]);
        press("PageDown", 6);
        let a = zero + sign * 60 - 600;
        pane.wait_row(name, a);
        pane.keys(&["Enter"]);
        pane.wait_for(&[&format!("Move {name} to its other stop")]);
        press("PageUp", 11);
        let b = a + 1100;
        pane.wait_row(name, b);
        pane.keys(&["Enter"]);
        expect.push(Pose {
            zero,
            positive: zero + sign * 60,
            stops: [a, b],
        });
    }
    pane.wait_for(&["Write "]);
    pane.keys(&["y"]);
    pane.wait_for(&["Check: move each joint"]);
    pane.keys(&["n"]);
    let s = pane.wait_for(&["EXIT="]);
    assert!(
        s.contains("EXIT=0"),
        "{s}\n{}",
        std::fs::read_to_string(dir.path().join("stderr")).unwrap_or_default()
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let file: CalibrationFile = serde_norway::from_str(&text).unwrap();
    // 0.02 rad at 636.62 µs/rad: 13 µs inside each stop.
    for (k, (e, p)) in file.joints.iter().zip(&expect).enumerate() {
        assert_eq!(
            (e.joint.as_str(), e.output),
            (names[k].as_str(), k as u16),
            "{text}"
        );
        assert_eq!(e.scale, Some(636.62), "{text}");
        assert_eq!(e.zero, f64::from(p.zero), "{text}");
        assert_eq!(
            e.direction,
            f64::from((p.positive - p.zero).signum()),
            "{text}"
        );
        assert_eq!(e.range, [p.stops[0] + 13, p.stops[1] - 13], "{text}");
    }
}
