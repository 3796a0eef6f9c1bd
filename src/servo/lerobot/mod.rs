//! Import of a LeRobot calibration: the JSON LeRobot writes after
//! `lerobot-calibrate` becomes arm_ik's servo YAML for the same arm.
//!
//! The file maps each motor name to LeRobot's `MotorCalibration` fields:
//! `id`, `drive_mode`, `homing_offset`, `range_min`, `range_max`
//! (integers). What they mean, from LeRobot's sources (`motors_bus.py`,
//! the Feetech and Dynamixel buses, the robots' `calibrate()`):
//!
//! - Calibration starts with the arm in the middle of its range; LeRobot
//!   writes `homing_offset` into each servo so that this pose reads half a
//!   turn (2047), then records each joint's extremes as `range_min`,
//!   `range_max` (full-turn joints get 0..4095). The offset lives in the
//!   servo's EEPROM: positions read from the servo already include it.
//! - LeRobot's "degrees" for a joint are `(present - mid) · 360 / 4095`,
//!   `mid = (range_min + range_max) / 2`. The SO-101 URDF (the "new
//!   calibration" one, whose documentation says each joint's zero is the
//!   middle of its range) is drawn in that convention, so joint angle 0 is
//!   `mid` ticks, and angles grow with the servo's count.
//! - `drive_mode` 1 flips LeRobot's normalised value in software on the
//!   Feetech bus; on the Dynamixel bus it is the servo's own reverse bit
//!   (register 10), so the positions the servo reports are already
//!   reversed.
//!
//! So each joint becomes: `output` = id, `zero` = mid, `range` =
//! [range_min, range_max], `direction` = -1 only for a Feetech motor with
//! drive mode 1. Pure: text in, text and warnings out.

mod robots;
mod yaml;

pub use robots::{Bus, Motor, Robot};

use serde::Deserialize;
use std::collections::BTreeMap;
use thiserror::Error;

/// One motor's entry, as LeRobot's `MotorCalibration` dataclass has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MotorCalibration {
    pub id: i64,
    pub drive_mode: i64,
    pub homing_offset: i64,
    pub range_min: i64,
    pub range_max: i64,
}

/// Why a file cannot be imported. Each names the file and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ImportError {
    #[error("{file}: not JSON ({message})")]
    NotJson { file: String, message: String },
    #[error(
        "{file}: not a LeRobot calibration: expected an object of motors \
         ({{\"shoulder_pan\": {{\"id\": 1, ...}}, ...}}), found {found}"
    )]
    NotAnObject { file: String, found: &'static str },
    #[error(
        "{file}: motor '{motor}' is not a LeRobot motor calibration \
         (id, drive_mode, homing_offset, range_min, range_max as integers): {message}"
    )]
    NotAMotorCalibration {
        file: String,
        motor: String,
        message: String,
    },
    #[error("{file}: motor '{motor}' is not a motor of the {robot} (its motors: {expected})")]
    UnknownMotor {
        file: String,
        motor: String,
        robot: &'static str,
        expected: String,
    },
    #[error("{file}: the {robot} motor '{motor}' is missing")]
    MissingMotor {
        file: String,
        motor: &'static str,
        robot: &'static str,
    },
    #[error("{file}: motor '{motor}': id {id} is not a servo id (0..=252)")]
    BadId {
        file: String,
        motor: &'static str,
        id: i64,
    },
    #[error("{file}: motors '{first}' and '{second}' both have id {id}")]
    DuplicateId {
        file: String,
        id: i64,
        first: &'static str,
        second: &'static str,
    },
    #[error("{file}: motor '{motor}': drive_mode {value} is neither 0 nor 1")]
    BadDriveMode {
        file: String,
        motor: &'static str,
        value: i64,
    },
    #[error("{file}: motor '{motor}': range [{min}, {max}] {problem}")]
    BadRange {
        file: String,
        motor: &'static str,
        min: i64,
        max: i64,
        problem: &'static str,
    },
}

/// One motor, checked and converted.
#[derive(Debug, Clone, PartialEq)]
pub struct Converted {
    pub motor: Motor,
    pub calibration: MotorCalibration,
    /// +1, or -1 for a Feetech motor in drive mode 1.
    pub direction: i8,
    /// The middle of the range: the tick of joint angle 0.
    pub zero: f64,
}

/// The servo YAML and what the user should know about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub yaml: String,
    pub warnings: Vec<String>,
}

/// Highest servo id of both protocols.
const MAX_ID: i64 = 252;
/// Positions of a single turn, as LeRobot's full-turn joints get them.
const TURN: (i64, i64) = (0, 4095);

/// Reads a LeRobot calibration (`text`, named `source` in errors) of
/// `robot` and writes the servo YAML of the robot's URDF.
pub fn import(text: &str, source: &str, robot: Robot) -> Result<Imported, ImportError> {
    let motors = parse(text, source, robot)?;
    let mut warnings = Vec::new();
    let converted = convert(&motors, source, robot, &mut warnings)?;
    if let Some(caveat) = robot.zero_caveat() {
        warnings.push(caveat.to_string());
    }
    Ok(Imported {
        yaml: yaml::write(&converted, source, robot),
        warnings,
    })
}

/// The file's motors, each checked to be a `MotorCalibration` and a
/// motor of `robot`.
fn parse(
    text: &str,
    source: &str,
    robot: Robot,
) -> Result<BTreeMap<String, MotorCalibration>, ImportError> {
    let src = || source.to_string();
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| ImportError::NotJson {
            file: src(),
            message: e.to_string(),
        })?;
    let serde_json::Value::Object(map) = value else {
        let found = match value {
            serde_json::Value::Array(_) => "an array",
            serde_json::Value::String(_) => "a string",
            serde_json::Value::Number(_) => "a number",
            serde_json::Value::Bool(_) => "a boolean",
            _ => "null",
        };
        return Err(ImportError::NotAnObject { file: src(), found });
    };
    let known = robot.motors();
    map.into_iter()
        .map(|(name, v)| {
            if !known.iter().any(|m| m.name == name) {
                return Err(ImportError::UnknownMotor {
                    file: src(),
                    motor: name,
                    robot: robot.title(),
                    expected: known.map(|m| m.name).join(", "),
                });
            }
            let c = MotorCalibration::deserialize(&v).map_err(|e| {
                ImportError::NotAMotorCalibration {
                    file: src(),
                    motor: name.clone(),
                    message: e.to_string(),
                }
            })?;
            Ok((name, c))
        })
        .collect()
}

/// Checks every motor of `robot` against the file and converts it.
fn convert(
    file: &BTreeMap<String, MotorCalibration>,
    source: &str,
    robot: Robot,
    warnings: &mut Vec<String>,
) -> Result<Vec<Converted>, ImportError> {
    let src = || source.to_string();
    let mut out: Vec<Converted> = Vec::new();
    for motor in robot.motors() {
        let c = *file
            .get(motor.name)
            .ok_or_else(|| ImportError::MissingMotor {
                file: src(),
                motor: motor.name,
                robot: robot.title(),
            })?;
        if !(0..=MAX_ID).contains(&c.id) {
            return Err(ImportError::BadId {
                file: src(),
                motor: motor.name,
                id: c.id,
            });
        }
        if let Some(other) = out.iter().find(|o| o.calibration.id == c.id) {
            return Err(ImportError::DuplicateId {
                file: src(),
                id: c.id,
                first: other.motor.name,
                second: motor.name,
            });
        }
        if c.id != i64::from(motor.id) {
            warnings.push(format!(
                "motor '{}' has id {} (LeRobot's {} default is {}): using {}",
                motor.name,
                c.id,
                robot.title(),
                motor.id,
                c.id
            ));
        }
        let direction = check_drive_mode(&c, motor, robot, source, warnings)?;
        check_range(&c, motor, robot, source, warnings)?;
        out.push(Converted {
            motor,
            calibration: c,
            direction,
            zero: (c.range_min + c.range_max) as f64 / 2.0,
        });
    }
    Ok(out)
}

fn check_drive_mode(
    c: &MotorCalibration,
    motor: Motor,
    robot: Robot,
    source: &str,
    warnings: &mut Vec<String>,
) -> Result<i8, ImportError> {
    match (c.drive_mode, robot.bus()) {
        (0, _) => Ok(1),
        (1, Bus::Feetech) => Ok(-1),
        (1, Bus::Dynamixel) => {
            warnings.push(format!(
                "motor '{}': drive_mode 1 is the servo's own reverse bit (register 10); \
                 keep it set: the servo already reports reversed positions, so direction stays 1",
                motor.name
            ));
            Ok(1)
        }
        (value, _) => Err(ImportError::BadDriveMode {
            file: source.to_string(),
            motor: motor.name,
            value,
        }),
    }
}

fn check_range(
    c: &MotorCalibration,
    motor: Motor,
    robot: Robot,
    source: &str,
    warnings: &mut Vec<String>,
) -> Result<(), ImportError> {
    let bad = |problem| ImportError::BadRange {
        file: source.to_string(),
        motor: motor.name,
        min: c.range_min,
        max: c.range_max,
        problem,
    };
    if c.range_min >= c.range_max {
        return Err(bad("is empty (range_min must be below range_max)"));
    }
    let in_turn = c.range_min >= TURN.0 && c.range_max <= TURN.1;
    match robot.bus() {
        Bus::Feetech if !in_turn => Err(bad("is outside the STS3215's positions 0..=4095")),
        Bus::Dynamixel if !in_turn => {
            warnings.push(format!(
                "motor '{}': range [{}, {}] leaves one turn (0..=4095): the servo must stay \
                 in extended position mode, as LeRobot configures it",
                motor.name, c.range_min, c.range_max
            ));
            Ok(())
        }
        _ => Ok(()),
    }
}
