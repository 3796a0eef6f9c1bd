//! Operating the arm through the real firmware in simavr: relaxing stops
//! the pulses, enabling brings them back without a jump, and the gripper's
//! channel outputs what its calibration says. The harness logs when each
//! frame from the host reached the firmware, so "within one frame" is
//! judged against the RELAX frame's own arrival in simulated time.
//!
//! Like tests/firmware_sim.rs these need the AVR toolchain and simavr
//! (SKIP without them, unless `CI` is set).
#![cfg(feature = "app")]

mod common;

use arm_ik::model::Chain;
use arm_ik::servo::calibration::Calibration;
use arm_ik::servo::link::{LinkState, OnExit};
use arm_ik::servo::pwm_bridge::cmd;
use arm_ik::servo::{SerialServo, ServoOutput};
use common::firmware::{CHANNELS, Harness};
use common::pulses::{assert_start_up_move, assert_widths, command_until, expected, sim_per_wall};
use common::{project_dir, project_urdf};
use std::path::Path;
use std::time::{Duration, Instant};

/// One period of the servo pulses, and of the link's frames (50 Hz).
const FRAME_S: f64 = 0.02;

fn calibration(path: impl AsRef<Path>, chain: &Chain) -> Calibration {
    Calibration::load(project_dir().join(path), chain).unwrap()
}

/// The commands of `angles`.
fn commands(cal: &Calibration, angles: &[f64]) -> Vec<i32> {
    let mut c = vec![0; cal.joints.len()];
    cal.commands(&cal.complete(angles), &mut c).unwrap();
    c
}

/// Streams `angles` until the link outputs exactly their commands and has
/// finished any slow move.
fn stream_to(servo: &mut SerialServo, cal: &Calibration, angles: &[f64], what: &str) {
    let want = commands(cal, angles);
    command_until(servo, angles, Duration::from_secs(15), what, |s| {
        s.state == LinkState::Connected
            && !s.ramping
            && !s.relaxed
            && s.output.as_deref() == Some(&want[..])
    });
}

/// Every configured channel was pulsing up to `at` (when the RELAX frame
/// arrived) and gives at most the pulse in progress after it, none a frame
/// later; unconfigured channels stay silent.
fn assert_stopped_within_one_frame(fw: &mut Harness, cal: &Calibration, at: f64) {
    fw.wait_until(at + 0.5);
    let configured: Vec<usize> = cal.joints.iter().map(|j| usize::from(j.output)).collect();
    for ch in 0..CHANNELS {
        let before = fw.pulses(ch, at - 2.0 * FRAME_S, at);
        let after = fw.pulses(ch, at, at + FRAME_S);
        let later = fw.pulses(ch, at + FRAME_S, at + 0.5);
        if configured.contains(&ch) {
            assert!(!before.is_empty(), "channel {ch}: not pulsing before RELAX");
        }
        assert!(after.len() <= 1, "channel {ch}: {after:?} after RELAX");
        assert!(
            later.is_empty(),
            "channel {ch}: still pulsing a frame after RELAX at {at} s: {later:?}"
        );
    }
}

/// Relaxed: every configured channel was pulsing up to the RELAX frame
/// and gives at most the pulse in progress after it (none starting a
/// frame later); unconfigured channels stay silent. Nothing is written
/// while relaxed although the caller keeps commanding another pose. Then
/// enabled: the pulses come back where they stopped (no park pose in this
/// calibration) and move to the new pose at the start-up speed.
#[test]
fn relax_stops_every_channel_within_one_frame_and_enable_resumes_without_a_jump() {
    let Some(mut fw) = Harness::start() else {
        return;
    };
    let chain = Chain::from_urdf_file(project_urdf("arm.urdf"), None, None).unwrap();
    // A slower start-up move than the file's, so that a jump would stand
    // out from its steps.
    let text = std::fs::read_to_string(project_dir().join("tests/data/servos_pwm_sim.yaml"))
        .unwrap()
        .replace("startup_speed: 6.0", "startup_speed: 1.0");
    assert!(text.contains("startup_speed: 1.0"));
    let cal = Calibration::from_yaml(&text, "servos_pwm_sim.yaml", &chain).unwrap();
    let a = [0.3, -0.2, 0.4, -0.5, 0.1];
    let b = [-0.3, 0.35, -0.2, 0.3, 0.3];
    let mut servo = SerialServo::open(fw.pty(), cal.clone()).unwrap();
    stream_to(&mut servo, &cal, &a, "streaming a");
    let t = fw.sim_time();
    assert_widths(&mut fw, t + 0.1, t + 0.3, &expected(&cal, &a));

    servo.relax();
    assert!(servo.relaxed());
    command_until(&mut servo, &b, Duration::from_secs(10), "relaxed", |s| {
        s.relaxed
    });
    let relax = fw.received(cmd::RELAX);
    assert_eq!(relax.len(), 1, "one RELAX frame: {relax:?}");
    let at = relax[0];
    // Commanding b while relaxed for a while writes no targets.
    let end = Instant::now() + Duration::from_millis(500);
    while Instant::now() < end {
        servo.command(&b, 0.0);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_stopped_within_one_frame(&mut fw, &cal, at);
    let targets = fw.received(cmd::SET_TARGETS);
    assert!(
        targets.iter().all(|&t| t < at),
        "targets written while relaxed: {:?}",
        targets.iter().filter(|&&t| t >= at).collect::<Vec<_>>()
    );

    // Simulated time before enabling: read after, a test thread running
    // late (a loaded machine) would start the window inside the move.
    let start = fw.sim_time();
    servo.enable();
    assert!(!servo.relaxed());
    let pace = sim_per_wall(&mut fw, |_| {
        stream_to(&mut servo, &cal, &b, "enabled, moving to b");
    });
    let end = fw.sim_time() + 0.2;
    let from = commands(&cal, &a);
    assert_start_up_move(&mut fw, &cal, (start, end), &from, &b, pace);
    assert_widths(&mut fw, end, end + 0.2, &expected(&cal, &b));
    servo.close();
}

/// config/servos_pwm.yaml drives the project arm's gripper jaw on channel
/// 5: the output's last position is the jaw's, and its pulses match the
/// calibration, closed and open; a caller that gives the chain's joints
/// only leaves it at rest (closed).
#[test]
fn the_gripper_channel_pulses_as_its_calibration_says() {
    let Some(mut fw) = Harness::start() else {
        return;
    };
    let chain = common::arm_with_gripper();
    let cal = calibration("config/servos_pwm.yaml", &chain);
    assert_eq!(cal.undriven().count(), 0, "the gripper is driven");
    let jaw = cal.joints.iter().find(|j| j.joint == "gripper").unwrap();
    assert_eq!(jaw.output, 5);
    let mut servo = SerialServo::open(fw.pty(), cal.clone()).unwrap();
    let arm = [0.2, -0.3, 0.4, -0.2, 0.1];
    for (jaw_angle, width) in [(None, 1100.0), (Some(0.8), 1100.0 + 0.8 * 636.62)] {
        let mut q = arm.to_vec();
        q.extend(jaw_angle);
        stream_to(&mut servo, &cal, &q, "streaming");
        let t = fw.sim_time();
        let want = expected(&cal, &q);
        assert_eq!(want[5], Some(f64::round(width)), "{want:?}");
        assert_widths(&mut fw, t + 0.1, t + 0.4, &want);
    }
    servo.close();
}

/// `link.on_exit: relax`: closing the link (as the node does on SIGINT or
/// SIGTERM) sends RELAX, and the pulses stop within one frame of it.
#[test]
fn on_exit_relax_stops_the_pulses_when_the_link_closes() {
    close_relaxing(Duration::ZERO);
}

/// The same with the board stalled as the link closes (a loaded host, a
/// slow USB adapter): the RELAX is acknowledged well after the reply
/// timeout, and the link still waits for it and reports the servos limp,
/// not holding (nor a second RELAX).
#[test]
fn on_exit_relax_waits_for_a_board_that_answers_late() {
    close_relaxing(Duration::from_millis(600));
}

/// Streams a pose with `link.on_exit: relax`, then closes the link, the
/// board stalled for `stall` from just before; checks the link relaxed
/// the servos with one RELAX and the pulses stopped within a frame of it.
fn close_relaxing(stall: Duration) {
    let Some(mut fw) = Harness::start() else {
        return;
    };
    let chain = Chain::from_urdf_file(project_urdf("arm.urdf"), None, None).unwrap();
    let text = std::fs::read_to_string(project_dir().join("tests/data/servos_pwm_sim.yaml"))
        .unwrap()
        .replace(
            "command_timeout_ms: 500",
            "command_timeout_ms: 500\n  on_exit: relax",
        );
    let cal = Calibration::from_yaml(&text, "servos_pwm_sim.yaml", &chain).unwrap();
    assert_eq!(cal.link.on_exit, OnExit::Relax);
    let a = [0.3, -0.2, 0.4, -0.5, 0.1];
    let mut servo = SerialServo::open(fw.pty(), cal.clone()).unwrap();
    stream_to(&mut servo, &cal, &a, "streaming a");
    // A while at the pose, so that every channel is pulsing.
    let end = Instant::now() + Duration::from_millis(300);
    while Instant::now() < end {
        servo.command(&a, 0.0);
        std::thread::sleep(Duration::from_millis(20));
    }
    let st = std::thread::scope(|s| {
        if !stall.is_zero() {
            let fw = &fw;
            s.spawn(move || fw.stall(stall));
            std::thread::sleep(Duration::from_millis(50));
        }
        servo.close()
    });
    assert!(st.relaxed, "{st:?}");
    let relax = fw.received(cmd::RELAX);
    assert_eq!(relax.len(), 1, "one RELAX frame: {relax:?}");
    assert_stopped_within_one_frame(&mut fw, &cal, relax[0]);
}
