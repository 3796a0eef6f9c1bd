//! A board that resets when a program opens its port, as an Uno or a Nano
//! does (the USB adapter's DTR line is wired to RESET): the harness's
//! `--reset-on-open` resets the simulated MCU at each open and runs a boot
//! loader that eats what the host sends meanwhile. `arm_ik drive` and the
//! servo link must connect to it all the same, on the first open: a link
//! that gave up after one reply timeout and reopened the port would reset
//! the board again every attempt and never connect.
//!
//! Needs the AVR toolchain and simavr, as tests/firmware_sim.rs does.

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

mod common;

use arm_ik::model::Chain;
use arm_ik::servo::SerialServo;
use arm_ik::servo::calibration::Calibration;
use arm_ik::servo::link::LinkState;
use common::drive::drive_ok;
use common::firmware::Harness;
use common::pulses::{assert_widths, command_until, expected};
use common::{project_dir, project_urdf};
use std::time::Duration;

const PWM_EXAMPLE: &str = "config/servos_pwm.yaml";
const PWM_SIM: &str = "tests/data/servos_pwm_sim.yaml";

/// About as long as optiboot, the Uno's boot loader, waits for an upload
/// after a reset when nothing it understands arrives.
const BOOT: Duration = Duration::from_millis(1000);

fn calibration(path: &str) -> Calibration {
    let chain = Chain::from_urdf_file(project_urdf("arm.urdf"), None, None).unwrap();
    Calibration::load(project_dir().join(path), &chain).unwrap()
}

#[test]
fn drive_reaches_the_pose_on_a_board_that_resets_when_its_port_opens() {
    let Some(mut fw) = Harness::start_resetting_on_open(BOOT) else {
        return;
    };
    let cal = calibration(PWM_EXAMPLE);
    let angles = [0.3, -0.4, 0.5, -0.2, 0.6];
    // Connected on its first open (drive_ok checks one connection, no
    // frame lost, the start-up move done).
    let json = drive_ok(PWM_EXAMPLE, fw.pty(), &angles, 1.0);
    assert_eq!(fw.resets().len(), 1, "drive opened the port once: {json}");
    let t = fw.sim_time();
    assert_widths(&mut fw, t - 0.2, t + 0.2, &expected(&cal, &angles));
}

#[test]
fn the_link_reconnects_to_a_board_that_resets_on_each_open() {
    let Some(mut fw) = Harness::start_resetting_on_open(BOOT) else {
        return;
    };
    let cal = calibration(PWM_SIM);
    let angles = [0.2, 0.1, -0.3, 0.4, 0.0];
    let want = expected(&cal, &angles);
    let mut servo = SerialServo::open(fw.pty(), cal).unwrap();
    let limit = BOOT * 4 + Duration::from_secs(10);
    command_until(&mut servo, &angles, limit, "connected", |s| {
        s.connects == 1 && s.state == LinkState::Connected
    });
    let t = fw.sim_time();
    assert_widths(&mut fw, t + 0.5, t + 0.8, &want);
    // The reset button (or a brown-out as the servos start): the link
    // finds the board silent or restarted, reopens the port, which resets
    // it once more, and connects again.
    fw.press_reset();
    command_until(&mut servo, &angles, limit, "connected again", |s| {
        s.connects == 2 && s.state == LinkState::Connected
    });
    assert_eq!(fw.resets().len(), 3, "the link's two opens and the button");
    let t = fw.sim_time();
    assert_widths(&mut fw, t + 0.5, t + 0.8, &want);
    let fin = servo.close();
    assert_eq!(fin.connects, 2, "{fin:?}");
}
