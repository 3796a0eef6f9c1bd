//! The servo YAML of an imported LeRobot calibration, laid out like the
//! hand-written files in `config/` (one flow mapping per joint) with
//! comments that say where every number came from.

use super::robots::{Bus, Robot};
use super::{Converted, MotorCalibration};
use std::fmt::Write;

/// LeRobot's bus speed for both protocols.
const BAUD: u32 = 1_000_000;

/// The YAML text for `motors` (all six, LeRobot's order) of `robot`,
/// imported from `source`.
pub(super) fn write(motors: &[Converted], source: &str, robot: Robot) -> String {
    let mut y = String::new();
    header(&mut y, motors, source, robot);
    let bus = robot.bus();
    let _ = writeln!(y, "kind: {}", bus.kind());
    if bus == Bus::Feetech {
        // One model for the whole bus, as the Feetech loader expects it.
        let _ = writeln!(y, "model: {}", motors[0].motor.model);
    }
    let _ = writeln!(y, "link:");
    let _ = writeln!(
        y,
        "  baud: {BAUD}  # LeRobot's bus speed: its motor setup programs every servo to it"
    );
    let _ = writeln!(y, "joints:");
    for m in motors {
        let Some(joint) = m.motor.joint else { continue };
        let c = &m.calibration;
        let model = match bus {
            Bus::Dynamixel => format!(" model: {},", m.motor.model),
            Bus::Feetech => String::new(),
        };
        let _ = writeln!(
            y,
            "  - {{ joint: {joint},{model} output: {}, direction: {}, zero: {}, \
             range: [{}, {}], speed_limit: {:.1} }}",
            c.id,
            m.direction,
            number(m.zero),
            c.range_min,
            c.range_max,
            m.motor.speed_limit
        );
    }
    y
}

fn header(y: &mut String, motors: &[Converted], source: &str, robot: Robot) {
    let source = source.replace(['\n', '\r'], " ");
    let lines = [
        format!(
            "Servo calibration of the {}, imported from the LeRobot calibration",
            robot.title()
        ),
        format!(
            "{source} by `arm_ik import-lerobot --robot {}`.",
            robot.name()
        ),
        format!("URDF: {}.", robot.urdf()),
        "Joint angle 0 is the middle of the range LeRobot recorded (where LeRobot's".into(),
        "degrees are 0); angles grow with the servo's count where direction is 1.".into(),
        "Positions are those the servos report with the homing offsets LeRobot".into(),
        "wrote into their EEPROM; leave those in place (after recalibrating with".into(),
        "LeRobot, import again).".into(),
        format!("Homing offsets: {}.", homing_offsets(motors)),
    ];
    for line in lines {
        let _ = writeln!(y, "# {line}");
    }
    if let Some(caveat) = robot.zero_caveat() {
        let _ = writeln!(y, "# Check: {caveat}.");
    }
    for m in motors.iter().filter(|m| m.motor.joint.is_none()) {
        let c: &MotorCalibration = &m.calibration;
        let _ = writeln!(
            y,
            "# {} (not a joint of the arm chain): id {}, {}, range [{}, {}], \
             drive_mode {}, middle {}.",
            m.motor.name,
            c.id,
            m.motor.model,
            c.range_min,
            c.range_max,
            c.drive_mode,
            number(m.zero)
        );
    }
}

fn homing_offsets(motors: &[Converted]) -> String {
    motors
        .iter()
        .map(|m| format!("{} {}", m.motor.name, m.calibration.homing_offset))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A tick count as YAML: whole numbers without a fraction.
fn number(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}
