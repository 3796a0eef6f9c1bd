//! What can be wrong with a servo file, and what is only worth a warning.

use crate::servo::joint::FieldError;
use crate::servo::link::LinkSettingError;
use crate::servo::protocol::BusError;
use std::fmt;
use thiserror::Error;

/// Why a calibration cannot be used with a chain. Found at start-up, so
/// the arm never moves on a wrong file.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum CalibrationError {
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error("kind: '{written}' is not a servo protocol; one of {}", .known.join(", "))]
    UnknownProtocol {
        written: String,
        known: Vec<&'static str>,
    },
    #[error("{}`{field}` is not a setting of {protocol} servos{}",
        .joint.as_ref().map(|j| format!("joint '{j}': ")).unwrap_or_default(),
        .owner.map(|o| format!(" (it is one of {o})")).unwrap_or_default())]
    FieldNotTaken {
        /// `None`: at file level.
        joint: Option<String>,
        field: String,
        protocol: &'static str,
        /// The protocol that does take it.
        owner: Option<&'static str>,
    },
    #[error("joint '{joint}': {error}")]
    Field { joint: String, error: FieldError },
    #[error("joint '{joint}' of the chain has no servo output in the calibration")]
    MissingJoint { joint: String },
    #[error("calibration names joint '{joint}', which is not a moving joint of the chain")]
    UnknownJoint { joint: String },
    #[error(
        "joint '{joint}' mimics '{leader}' in the URDF: it follows '{leader}' and has no servo of its own; give '{leader}' the servo"
    )]
    MimicJoint { joint: String, leader: String },
    #[error("joint '{joint}' appears twice in the calibration")]
    DuplicateJoint { joint: String },
    #[error("joints '{first}' and '{second}' are both on output {output}")]
    SharedOutput {
        output: u16,
        first: String,
        second: String,
    },
    #[error("joint '{joint}': output {output} is above the highest {what}, {max}")]
    OutputRange {
        joint: String,
        output: u16,
        what: &'static str,
        max: u16,
    },
    #[error("joint '{joint}': {field} is {value}, not a finite number")]
    NotFinite {
        joint: String,
        field: &'static str,
        value: f64,
    },
    #[error("joint '{joint}': direction must be 1 or -1, not {value}")]
    Direction { joint: String, value: f64 },
    #[error("joint '{joint}': {field} must be positive, not {value}")]
    NotPositive {
        joint: String,
        field: &'static str,
        value: f64,
    },
    #[error(transparent)]
    Link(#[from] LinkSettingError),
    #[error("joint '{joint}': scale is required for {hardware} servos (command units per radian)")]
    MissingScale { joint: String, hardware: String },
    #[error("joint '{joint}': park {value} is outside the joint's limits [{lower}, {upper}]")]
    ParkOutsideLimits {
        joint: String,
        value: f64,
        lower: f64,
        upper: f64,
    },
    #[error(
        "joint '{joint}' has no park pose while others have one: give park for every joint or for none"
    )]
    MissingPark { joint: String },
    #[error(
        "joint '{joint}': park is for servos that cannot report their position; {protocol} servos are read at start-up instead"
    )]
    ParkNotNeeded {
        joint: String,
        protocol: &'static str,
    },
    #[error(
        "joint '{joint}': range [{min}, {max}] is not inside what the servo can do, [{device_min}, {device_max}], or is empty"
    )]
    Range {
        joint: String,
        min: i32,
        max: i32,
        device_min: i32,
        device_max: i32,
    },
    #[error(transparent)]
    Bus(#[from] BusError),
}

/// Why one angle gave no command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum MapError {
    #[error("joint {index}: angle is NaN; no command")]
    NotANumber { index: usize },
    #[error("joint {index}: no angle given; no command")]
    Missing { index: usize },
}

/// Something in a servo file that still works but should be changed. The
/// library returns these to its caller, which shows them (the CLI on
/// stderr, `ik_node` in its log); it never prints them itself.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CalibrationWarning {
    /// `kind:` gives an old name of the protocol.
    DeprecatedKind {
        file: String,
        written: String,
        name: &'static str,
    },
    /// `link.torque_off_on_close` is the old spelling of `link.on_exit`.
    DeprecatedTorqueOffOnClose { file: String, on_exit: &'static str },
    /// An entry names a joint the robot does not have (a gripper servo
    /// with a URDF that models no gripper): its servo is not driven.
    NotInRobot {
        file: String,
        joint: String,
        output: u16,
        /// What an output is for the protocol ("servo id", "channel").
        what: &'static str,
    },
}

impl fmt::Display for CalibrationWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CalibrationWarning::DeprecatedKind {
                file,
                written,
                name,
            } => write!(
                f,
                "{file}: `kind: {written}` is deprecated; write `kind: {name}`, the same protocol under its one name"
            ),
            CalibrationWarning::DeprecatedTorqueOffOnClose { file, on_exit } => write!(
                f,
                "{file}: `link.torque_off_on_close` is deprecated; write `link.on_exit: {on_exit}`, which means the same"
            ),
            CalibrationWarning::NotInRobot {
                file,
                joint,
                output,
                what,
            } => write!(
                f,
                "{file}: joint '{joint}' is not a joint of this robot: its {what} {output} is not driven"
            ),
        }
    }
}
