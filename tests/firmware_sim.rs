//! The host side of the servo link against the real firmware
//! (`firmware-bridge/firmware/firmware.ino`) running in simavr: what the
//! pins output is measured, so these tests check the whole chain from joint
//! angles to pulse widths, the firmware's watchdog, unplugging and
//! replugging the board, a board that never answers, and noise on the line.
//!
//! Each test runs its own simulated board (tests/common/firmware.rs). They
//! need the AVR toolchain and simavr: without them they print SKIP, unless
//! the environment variable `CI` is set, then they fail. The two tests of a
//! board that never answers need only a pty pair and always run.

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

mod common;

use arm_ik::model::Chain;
use arm_ik::servo::calibration::Calibration;
use arm_ik::servo::link::LinkState;
use arm_ik::servo::pwm_bridge;
use arm_ik::servo::{SerialServo, ServoOutput};
use common::drive::{drive, drive_command, drive_ok, point};
use common::firmware::{CHANNELS, Harness, TempDir};
use common::pulses::{assert_start_up_move, assert_widths, command_until, expected, sim_per_wall};
use common::{project_dir, project_urdf};
use serde_json::Value;
use serialport::SerialPort;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const PWM_EXAMPLE: &str = "config/servos_pwm.yaml";
const PWM_SIM: &str = "tests/data/servos_pwm_sim.yaml";

fn calibration(path: impl AsRef<Path>) -> Calibration {
    let chain = Chain::from_urdf_file(project_urdf("arm.urdf"), None, None).unwrap();
    Calibration::load(project_dir().join(path), &chain).unwrap()
}

/// The firmware's counters in drive's JSON summary (the bridge's details).
fn fw_counter(json: &Value, name: &str) -> u64 {
    json["details"][name]
        .as_u64()
        .unwrap_or_else(|| panic!("no details.{name} in {json}"))
}

#[test]
fn drive_outputs_the_calibrated_widths_of_config_servos_pwm() {
    let cal = calibration(PWM_EXAMPLE);
    // Inside every limit, then beyond the joint limits on every joint (the
    // example's ranges are narrower than its joint limits, so these end at
    // the servo ranges). A fresh board each: on one still pulsing, drive
    // would move there at the slow start-up speed.
    for angles in [[0.3, -0.4, 0.5, -0.2, 0.6], [2.0, -3.0, 2.5, 1.9, -1.6]] {
        let Some(mut fw) = Harness::start() else {
            return;
        };
        let want = expected(&cal, &angles);
        let json = drive_ok(PWM_EXAMPLE, fw.pty(), &angles, 1.0);
        let sent: Vec<i64> = serde_json::from_value(json["commands"].clone()).unwrap();
        for (j, c) in cal.joints.iter().zip(&sent) {
            assert_eq!(Some(*c as f64), want[usize::from(j.output)], "{json}");
        }
        // The example holds on its watchdog, so the pose stays after drive.
        let t = fw.sim_time();
        assert_widths(&mut fw, t - 0.2, t + 0.2, &want);
    }
}

#[test]
fn drive_clamps_at_the_joint_limits_and_at_the_servo_ranges() {
    let Some(mut fw) = Harness::start() else {
        return;
    };
    let cal = calibration(PWM_SIM);
    let angles = [3.0, 2.5, -2.8, -4.0, 1.2];
    let want = expected(&cal, &angles);
    // The pose really exercises both clamps: base_yaw and wrist_pitch stop
    // at their URDF limit inside the servo range, shoulder, elbow and
    // wrist_roll at the range.
    let at_limit = |k: usize, q: f64| {
        let j = &cal.joints[k];
        f64::from(j.command(q.clamp(j.lower, j.upper)).unwrap())
    };
    let j = &cal.joints;
    assert!(f64::from(j[0].max) > at_limit(0, 3.0));
    assert_eq!(want[3], Some((1500.0 + 500.0 * j[0].upper).round()));
    assert_eq!(want[1], Some((1600.0 + 450.0 * j[3].lower).round()));
    assert_eq!(want[0], Some(800.0));
    assert_eq!(want[2], Some(1000.0));
    assert_eq!(want[5], Some(900.0));
    assert_eq!(want[4], None, "channel 4 is left unconfigured");
    drive_ok(PWM_SIM, fw.pty(), &angles, 1.0);
    let t = fw.sim_time();
    assert_widths(&mut fw, t - 0.2, t + 0.1, &want);
    // And back inside every limit: nothing is left clamped.
    let angles = [0.4, -0.3, 0.2, 0.5, -0.1];
    let want = expected(&cal, &angles);
    drive_ok(PWM_SIM, fw.pty(), &angles, 1.0);
    let t = fw.sim_time();
    assert_widths(&mut fw, t - 0.2, t + 0.1, &want);
}

/// Writes the test calibration with its watchdog in `mode`.
fn sim_config(dir: &Path, mode: &str) -> String {
    let text = std::fs::read_to_string(project_dir().join(PWM_SIM)).unwrap();
    assert!(text.contains("watchdog: hold"));
    let path = dir.join(format!("servos_{mode}.yaml"));
    std::fs::write(
        &path,
        text.replace("watchdog: hold", &format!("watchdog: {mode}")),
    )
    .unwrap();
    path.to_str().unwrap().to_string()
}

/// Hobby servos cannot say where they are; with a park pose in the
/// calibration the first pulses go to it and the link moves from there to
/// the commanded pose at the start-up speed: no jump at switch-on. A later
/// run finds the board still pulsing (watchdog: hold) and starts from
/// what it outputs, not from the park pose.
#[test]
fn drive_starts_from_the_park_pose_then_from_what_the_board_holds() {
    let Some(mut fw) = Harness::start() else {
        return;
    };
    let config = "tests/data/servos_pwm_parked.yaml";
    let cal = calibration(config);
    let park = cal.park_commands().expect("every joint parked");
    let a = [0.5, -0.45, 0.4, 0.5, -0.5];
    let pace = sim_per_wall(&mut fw, |fw| {
        drive_ok(config, fw.pty(), &a, 4.0);
    });
    let end = fw.sim_time();
    assert_start_up_move(&mut fw, &cal, (0.0, end), &park, &a, pace);
    assert_widths(&mut fw, end - 0.2, end + 0.1, &expected(&cal, &a));

    let mut held = vec![0; a.len()];
    cal.commands(&a, &mut held).unwrap();
    let b = [-0.3, 0.35, -0.2, -0.3, 0.3];
    let start = fw.sim_time();
    let pace = sim_per_wall(&mut fw, |fw| {
        drive_ok(config, fw.pty(), &b, 4.0);
    });
    let end = fw.sim_time();
    assert_start_up_move(&mut fw, &cal, (start, end), &held, &b, pace);
    assert_widths(&mut fw, end - 0.2, end + 0.1, &expected(&cal, &b));

    // Too short a hold for that slow move: drive says so.
    let (out, json) = drive(config, fw.pty(), &a, 0.3);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(json["ramping"], true, "{json}");
    assert!(stderr.contains("stopped short of the pose"), "{stderr}");
}

/// The board outputs `angles` as calibrated in `config`, from 200 ms
/// before now (simulated) to 100 ms after.
fn assert_pose_out(fw: &mut Harness, config: &str, angles: &[f64]) {
    let t = fw.sim_time();
    assert_widths(
        fw,
        t - 0.2,
        t + 0.1,
        &expected(&calibration(config), angles),
    );
}

/// A simulated board, and where the host's port goes in a folder of its
/// own: a symlink (`ttyBRIDGE`, not made yet) that [`point`] plugs a
/// board in behind. `None` when skipped.
fn board_and_link(tag: &str) -> Option<(Harness, TempDir, PathBuf)> {
    let fw = Harness::start()?;
    let dir = TempDir::new(tag);
    let link = dir.path().join("ttyBRIDGE");
    Some((fw, dir, link))
}

/// A board that answers only a while after its port opens (an Arduino's
/// boot loader after the reset on open, a slow USB adapter, a lagging
/// simulator): drive's hold starts at the connection, so the whole hold
/// streams to a connected board and the pose is out at the end. Counted
/// from opening the port, the hold was over before the first reply.
#[test]
fn drive_counts_the_hold_from_a_late_connection() {
    let Some((mut fw, _dir, link)) = board_and_link("late") else {
        return;
    };
    // Until the board answers, the port is a pty whose peer never does.
    let (_host_end, silent) = serialport::TTYPort::pair().expect("a pty pair");
    point(&link, &silent.name().expect("the pty's name"));
    let late = Duration::from_millis(1500);
    let answers = std::thread::spawn({
        let (link, board) = (link.clone(), fw.pty().to_string());
        move || {
            std::thread::sleep(late);
            point(&link, &board);
        }
    });
    let angles = [0.4, -0.3, 0.2, 0.5, -0.1];
    let start = Instant::now();
    let json = drive_ok(PWM_SIM, link.to_str().unwrap(), &angles, 1.0);
    let took = start.elapsed();
    answers.join().unwrap();
    let connect = json["connect_seconds"].as_f64().expect("connect_seconds");
    assert!(connect >= late.as_secs_f64(), "{json}");
    assert!(json["seconds"].as_f64().unwrap() >= 1.0, "{json}");
    assert!(took >= late + Duration::from_secs(1), "drive took {took:?}");
    assert_pose_out(&mut fw, PWM_SIM, &angles);
}

/// The board stalls as the hold ends (a loaded host, a USB adapter
/// holding replies back) and its replies come later than the reply
/// timeout: the link is silent at that moment, but the board answers
/// again and drive, waiting a moment for a good frame, reports it
/// connected. One late reply at the end made drive fail before.
#[test]
fn drive_ending_in_a_stall_waits_for_the_board_to_answer_again() {
    use std::io::{BufRead, BufReader};
    let Some(mut fw) = Harness::start() else {
        return;
    };
    let angles = [0.2, 0.3, -0.4, 0.5, -0.6];
    let mut child = drive_command(PWM_SIM, fw.pty(), &angles, 1.0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run arm_ik drive");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut stderr = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        stderr += &line;
        stderr.push('\n');
        if line.contains(": connected") {
            break;
        }
    }
    // Silent from 300 ms on (the reply timeout), past the end of the hold.
    fw.stall(Duration::from_millis(1500));
    stderr.extend(lines.map(|l| l.unwrap() + "\n"));
    let out = child.wait_with_output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(stderr.contains("silent, no reply"), "{stderr}");
    assert!(out.status.success(), "drive failed: {stderr}");
    assert_eq!(json["connected"], true, "{json}\n{stderr}");
    assert_eq!(json["connects"], 1, "{json}");
    assert_pose_out(&mut fw, PWM_SIM, &angles);
}

/// drive for 1 s, then nothing: returns the JSON summary and the simulated
/// time (s) of the last frame the firmware got (the final status request,
/// from the uptime in its reply).
fn drive_then_stop(fw: &mut Harness, config: &str, angles: &[f64]) -> (Value, f64) {
    let json = drive_ok(config, fw.pty(), angles, 1.0);
    let last_frame = fw_counter(&json, "uptime_ms") as f64 / 1000.0;
    let t = fw.sim_time();
    assert!(
        last_frame <= t + 0.05 && last_frame > t - 1.0,
        "uptime {last_frame} s vs simulated time {t} s"
    );
    (json, last_frame)
}

#[test]
fn watchdog_hold_keeps_the_pulses_after_drive_stops_sending() {
    let Some(mut fw) = Harness::start() else {
        return;
    };
    let config = sim_config(fw.dir(), "hold");
    let angles = [0.2, 0.3, -0.4, 0.5, -0.6];
    let want = expected(&calibration(&config), &angles);
    let (json, last) = drive_then_stop(&mut fw, &config, &angles);
    // Well past the 300 ms watchdog: the same pulses go on.
    assert_widths(&mut fw, last + 0.5, last + 1.2, &want);
    let st = fw.status();
    assert_eq!(
        u64::from(st.watchdog_trips),
        fw_counter(&json, "watchdog_trips") + 1,
        "one trip after drive stopped: {st:?}"
    );
    assert!(!st.watchdog_relax, "{st:?}");
    let widths: Vec<Option<f64>> = st
        .width_us
        .iter()
        .map(|&w| (w != 0).then_some(f64::from(w)))
        .collect();
    assert_eq!(widths, want, "the firmware still outputs the pose");
}

#[test]
fn watchdog_relax_stops_the_pulses_300_ms_after_drive_stops_sending() {
    let Some(mut fw) = Harness::start() else {
        return;
    };
    let config = sim_config(fw.dir(), "relax");
    let angles = [0.2, 0.3, -0.4, 0.5, -0.6];
    let want = expected(&calibration(&config), &angles);
    let (json, last) = drive_then_stop(&mut fw, &config, &angles);
    // drive sends nothing at exit that stops the pulses (no relax, no
    // estop): they go on until the firmware's watchdog trips 300 ms after
    // the last frame (a pulse ends at most 20 ms + its width after that),
    // and they stop cleanly: no cut-short pulse (a twitch) on the way.
    assert_widths(&mut fw, last - 0.3, last + 1.0, &want);
    for (ch, w) in want.iter().enumerate() {
        let end = fw.last_pulse(ch);
        match w {
            None => assert_eq!(end, None, "channel {ch} is not configured"),
            Some(_) => {
                let end = end.unwrap();
                assert!(
                    end > last + 0.26 && end < last + 0.33,
                    "channel {ch}: last pulse at {end} s, the last frame at {last} s"
                );
            }
        }
    }
    let st = fw.status();
    assert_eq!(
        u64::from(st.watchdog_trips),
        fw_counter(&json, "watchdog_trips") + 1,
        "one trip after drive stopped: {st:?}"
    );
    assert!(st.watchdog_relax, "{st:?}");
    assert_eq!(st.width_us, [0; CHANNELS], "relaxed: no outputs");
}

/// A call that takes this long was waiting on the port (the reply timeout
/// is 300 ms); command() only swaps a slot.
const BLOCKED: Duration = Duration::from_millis(250);

#[test]
fn unplug_and_replug_reconnects_and_resumes_the_current_pose() {
    let Some((mut a, _dir, link)) = board_and_link("replug") else {
        return;
    };
    point(&link, a.pty());
    let cal = calibration(PWM_SIM);
    let first = [0.3, -0.2, 0.4, -0.5, 0.1];
    let second = [-0.4, 0.5, -0.3, 0.2, -0.6];
    let mut want_cmd = vec![0; cal.joints.len()];
    cal.commands(&first, &mut want_cmd).unwrap();
    let mut servo = SerialServo::open(link.to_str().unwrap(), cal.clone()).unwrap();
    command_until(
        &mut servo,
        &first,
        Duration::from_secs(10),
        "streaming",
        |s| s.state == LinkState::Connected && s.output.as_deref() == Some(&want_cmd[..]),
    );
    assert!(servo.link_ok(), "{}", servo.link());
    let t = a.sim_time();
    assert_widths(&mut a, t + 0.1, t + 0.4, &expected(&cal, &first));

    // Unplugged: the board stops and its device node goes away.
    a.kill();
    std::fs::remove_file(&link).unwrap();
    let first_error = std::cell::RefCell::new(String::new());
    let slowest = command_until(
        &mut servo,
        &second,
        Duration::from_secs(10),
        "disconnected",
        |s| match &s.state {
            LinkState::Disconnected { error, .. } if !error.is_empty() => {
                *first_error.borrow_mut() = error.clone();
                true
            }
            _ => false,
        },
    );
    eprintln!("after the board went away: {}", first_error.borrow());
    // Keep commanding for a while (the link retries in the background).
    let start = Instant::now();
    let slowest = slowest.max(command_until(
        &mut servo,
        &second,
        Duration::from_secs(10),
        "retrying",
        |_| start.elapsed() > Duration::from_secs(1),
    ));
    assert!(slowest < BLOCKED, "command() took {slowest:?}");
    assert!(!servo.link_ok());
    assert!(servo.link().contains("disconnected"), "{}", servo.link());
    eprintln!("unplugged: {}", servo.link());
    let st = servo.status();
    assert_eq!(st.connects, 1);
    assert!(st.attempts >= 1, "{st:?}");

    // Plugged in again: another board (fresh firmware) behind the same path.
    let Some(mut b) = Harness::start() else {
        return;
    };
    point(&link, b.pty());
    cal.commands(&second, &mut want_cmd).unwrap();
    let slowest = command_until(
        &mut servo,
        &second,
        Duration::from_secs(15),
        "reconnected at the current pose",
        |s| {
            s.connects == 2
                && s.state == LinkState::Connected
                && s.output.as_deref() == Some(&want_cmd[..])
        },
    );
    assert!(slowest < BLOCKED, "command() took {slowest:?}");
    let t = b.sim_time();
    assert_widths(&mut b, t + 0.1, t + 0.4, &expected(&cal, &second));
    let fin = servo.close();
    assert_eq!(fin.connects, 2);
    assert_eq!(fin.frames_lost, Some(0), "{fin:?}");
}

#[test]
fn a_firmware_that_never_answers_is_reported_and_command_never_blocks() {
    // Only a pty: runs without the AVR toolchain too.
    let (_host_end, board_end) = serialport::TTYPort::pair().expect("a pty pair");
    let port = board_end.name().expect("the pty's name");
    let cal = calibration(PWM_SIM);
    let reply_timeout = cal.link.reply_timeout;
    let mut servo = SerialServo::open(&port, cal).unwrap();
    let start = Instant::now();
    let slowest = command_until(
        &mut servo,
        &[0.1, 0.2, 0.3, 0.4, 0.5],
        // The first request is repeated through a board's boot.
        pwm_bridge::BOOT_WAIT + reply_timeout * 10,
        "reported as not answering",
        |s| match &s.state {
            LinkState::Disconnected { error, .. } => error.contains("no reply from the firmware"),
            LinkState::Silent { .. } => true,
            _ => false,
        },
    );
    let took = start.elapsed();
    assert!(slowest < BLOCKED, "command() took {slowest:?}");
    assert!(!servo.link_ok());
    assert!(servo.link().contains("no reply"), "{}", servo.link());
    let fin = servo.close();
    assert_eq!(fin.connects, 0, "{fin:?}");
    assert_eq!(fin.frames_sent, 0, "{fin:?}");
    eprintln!("reported after {took:?}");
}

#[test]
fn drive_on_a_firmware_that_never_answers_fails_with_the_reason() {
    let (_host_end, board_end) = serialport::TTYPort::pair().expect("a pty pair");
    let port = board_end.name().expect("the pty's name");
    let start = Instant::now();
    let (out, json) = drive(PWM_SIM, &port, &[0.1, 0.2, 0.3, 0.4, 0.5], 1.0);
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "drive succeeded: {json}");
    assert!(
        stderr.contains("not reachable") && stderr.contains("no reply from the firmware"),
        "{stderr}"
    );
    assert_eq!(json["connected"], false, "{json}");
    assert!(took < Duration::from_secs(20), "drive took {took:?}");
}

#[test]
fn garbage_on_the_line_is_counted_and_the_stream_goes_on() {
    let Some(mut fw) = Harness::start() else {
        return;
    };
    let cal = calibration(PWM_SIM);
    let before = drive_ok(PWM_SIM, fw.pty(), &[0.0; 5], 0.5);
    // Line noise (no start byte in it), then a frame whose CRC got hit:
    // targets that must not be applied.
    let noise = b"\x00\xff\x13noise on the line\x7f\x80\x5a".to_vec();
    assert!(!noise.contains(&pwm_bridge::START[0]));
    let mut bad = pwm_bridge::set_targets(9, &[2400; CHANNELS]);
    let n = bad.len();
    bad[n - 1] ^= 0x55;
    let mut bytes = noise.clone();
    bytes.extend(&bad);
    fw.write_raw(&bytes);
    let angles = [0.5, -0.5, 0.5, -0.5, 0.5];
    let after = drive_ok(PWM_SIM, fw.pty(), &angles, 1.0);
    assert_eq!(
        fw_counter(&after, "garbage"),
        fw_counter(&before, "garbage") + noise.len() as u64,
        "{before}\n{after}"
    );
    assert_eq!(
        fw_counter(&after, "bad_crc"),
        fw_counter(&before, "bad_crc") + 1
    );
    // The frames after the noise all arrived (drive_ok: none lost) and
    // the pose is out.
    let t = fw.sim_time();
    assert_widths(&mut fw, t - 0.2, t + 0.1, &expected(&cal, &angles));
}

/// The node as `ik_node` builds it from its parameters with `sim: false`:
/// a target in, the arm reaches it, and the pulses on the board are the
/// calibration's mapping of the last joint state.
#[test]
fn the_node_with_sim_false_drives_the_firmware_to_the_target() {
    use arm_ik::node::{MemoryNode, NodeParams, TargetMsg};
    let Some(mut fw) = Harness::start() else {
        return;
    };
    let chain = Chain::from_urdf_file(project_urdf("arm.urdf"), None, None).unwrap();
    let params = NodeParams {
        sim: false,
        servo_config: project_dir()
            .join("config/servos_pwm.yaml")
            .display()
            .to_string(),
        port: fw.pty().to_string(),
        ..NodeParams::default()
    };
    let mut node = MemoryNode::new(arm_ik::run::build_node(&params, &chain).unwrap().core);
    let goal = [0.3, 0.4, -0.8, 0.3, 0.2];
    let p = chain.fk(&goal).translation.vector;
    node.push_target(TargetMsg::position([p.x, p.y, p.z]));
    // Real time: the link streams at its own rate beside the node's ticks,
    // until the tip is there and the link's output is its commands (a few
    // seconds; the deadline is for a loaded machine).
    let cal = calibration("config/servos_pwm.yaml");
    let tip = |js: &arm_ik::node::JointState| chain.fk(&js.position).translation.vector;
    let js = common::tick_until(&mut node, Duration::from_secs(20), |node, js| {
        let mut commands = vec![0; cal.joints.len()];
        cal.commands(&cal.complete(&js.position), &mut commands)
            .unwrap();
        (tip(js) - p).norm() < 1e-3 && common::link_status(node).output == Some(commands)
    })
    .expect("no joint state");
    let reached = tip(&js);
    assert!((reached - p).norm() < 1e-3, "tip {reached} for target {p}");
    // The board was found once and never lost (a reconnection counts
    // again); a snapshot of the link's state could catch a stall.
    let link = common::link_status(&node);
    assert_eq!(link.connects, 1, "{link:?}");
    let want = expected(&cal, &js.position);
    let now = fw.sim_time();
    assert_widths(&mut fw, now, now + 0.3, &want);
}

/// The host-side watchdog: a caller that stops commanding (a hung node)
/// makes the link stop writing, so the firmware's own watchdog (relax, in
/// this configuration) stops the pulses, although the port stays open.
#[test]
fn a_caller_that_stops_commanding_lets_the_firmware_watchdog_relax() {
    let Some(mut fw) = Harness::start() else {
        return;
    };
    let config = sim_config(fw.dir(), "relax");
    let cal = calibration(&config);
    let angles = [0.2, 0.3, -0.4, 0.5, -0.6];
    let mut servo = SerialServo::open(fw.pty(), cal.clone()).unwrap();
    command_until(
        &mut servo,
        &angles,
        Duration::from_secs(10),
        "connected",
        |s| s.state == LinkState::Connected,
    );
    let t0 = fw.sim_time();
    assert_widths(&mut fw, t0 + 0.2, t0 + 0.6, &expected(&cal, &angles));
    // No more commands; the link stays open. It pauses after its command
    // timeout (0.5 s of wall time) and the board relaxes 0.5 s of its own
    // time after the last frame: both waited for, not assumed done after a
    // fixed pause that a loaded machine can outlast.
    let quiet = fw.sim_time();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !servo.status().paused {
        assert!(
            Instant::now() < deadline,
            "not paused: {:?}",
            servo.status()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // The last frame went out before the pause showed (simulated time
    // `paused`); from 0.8 s after it nothing may pulse.
    let paused = fw.sim_time();
    let later = (paused + 1.2).max(quiet + 1.4);
    for ch in 0..CHANNELS {
        assert!(
            fw.pulses(ch, later - 0.4, later).is_empty(),
            "channel {ch} still pulsing 0.8 s after the link paused"
        );
    }
    // Commands again: streaming resumes.
    command_until(
        &mut servo,
        &angles,
        Duration::from_secs(10),
        "resumed",
        |s| !s.paused && s.state == LinkState::Connected,
    );
    let t1 = fw.sim_time();
    for k in 0..30 {
        servo.command(&angles, f64::from(k) * 0.02);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_widths(&mut fw, t1 + 0.2, t1 + 0.5, &expected(&cal, &angles));
    let st = servo.close();
    let trips = st.detail("watchdog_trips").and_then(|v| v.count());
    assert!(trips.is_some_and(|n| n >= 1), "{st:?}");
}
