//! Per-joint servo calibration: which servo drives which joint, and how a
//! joint angle becomes a servo command (PWM pulse in µs, or bus-servo
//! position ticks).
//!
//! The file is YAML (`config/servos_pwm.yaml`, `config/servos_feetech.yaml`;
//! JSON, being YAML, is read too). Its `kind:` names the protocol (found in
//! the [`registry`](super::registry)), which decides what `output` means, the command range the
//! hardware can do, the default scale and which extra settings (`model:`)
//! the file and each joint may give. Besides the joints it carries the
//! link settings of the hardware ([`LinkSettings`]), so one file describes
//! one physical arm. Nothing here depends on which protocol it is.
//!
//! Mapping, in this order: angle → clamp to the joint limits → `zero +
//! direction · scale · angle` → clamp to the command range → round to an
//! integer. A NaN angle is rejected with [`MapError::NotANumber`] (the
//! driver then keeps the joint's last command, see
//! [`Calibration::commands`]); ±∞ and huge angles clamp like any other
//! out-of-range angle. Whatever the input, a command outside the range the
//! file declares can never be produced.

mod check;
mod error;
mod file;
#[cfg(test)]
mod gripper_tests;
pub mod measure;
#[cfg(test)]
mod tests;
pub mod write;

pub use error::{CalibrationError, CalibrationWarning, MapError};
pub use file::{CalibrationFile, JointEntry};

pub use super::joint::JointMap;

/// One of the output's positions.
#[derive(Debug, Clone, PartialEq)]
pub struct Slot {
    /// The joint's name in the URDF.
    pub joint: String,
    /// Its servo: an index into [`Calibration::joints`]; `None` for an
    /// extra joint the file gives no servo (not driven).
    pub servo: Option<usize>,
    /// Where it rests until commanded (0, or the middle of its range).
    pub rest: f64,
    /// An extra joint (a gripper), not one of the chain's.
    pub extra: bool,
}

use super::joint::park_commands;
use super::link::LinkSettings;
use super::protocol::Protocol;
use crate::model::Chain;
use std::path::Path;

/// A calibration checked against a chain: one [`JointMap`] per driven
/// joint, and where each is among the output's positions.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub protocol: &'static Protocol,
    pub link: LinkSettings,
    /// The driven joints, in the output's order: the chain's joints, then
    /// the actuated extra joints the file gives a servo.
    pub joints: Vec<JointMap>,
    /// The output's positions ([`ServoOutput`](crate::servo::ServoOutput)'s
    /// order: the chain's joints, then every actuated extra joint of the
    /// robot), each with its servo.
    pub slots: Vec<Slot>,
    /// What still works but should be changed in the file, for the caller
    /// to show.
    pub warnings: Vec<CalibrationWarning>,
}

impl Calibration {
    /// Reads and checks a calibration file.
    pub fn load(path: impl AsRef<Path>, chain: &Chain) -> Result<Calibration, CalibrationError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| CalibrationError::Read {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Self::from_yaml(&text, &path.display().to_string(), chain)
    }

    /// Parses and checks a calibration (YAML or JSON); `source` names it
    /// in errors and warnings.
    pub fn from_yaml(
        text: &str,
        source: &str,
        chain: &Chain,
    ) -> Result<Calibration, CalibrationError> {
        let file: CalibrationFile =
            serde_norway::from_str(text).map_err(|e| CalibrationError::Parse {
                path: source.to_string(),
                message: e.to_string(),
            })?;
        check::check(&file, chain, source)
    }

    /// Checks a parsed file against `chain`: a known protocol, every joint
    /// of the chain has exactly one entry (an actuated extra joint, a
    /// gripper, may have one), no output used twice, every number finite
    /// and sensible, every range inside what the joint's servo can do, and
    /// the servos fit on one bus. An entry for a joint the robot does not
    /// have is a warning (its servo is not driven) when the chain is
    /// complete, else the error that names it (likely the missing joint,
    /// misspelt).
    pub fn check(file: &CalibrationFile, chain: &Chain) -> Result<Calibration, CalibrationError> {
        check::check(file, chain, "calibration")
    }

    /// The actuated extra joints of the robot the file gives no servo:
    /// their positions are accepted and not driven.
    pub fn undriven(&self) -> impl Iterator<Item = &str> {
        self.slots
            .iter()
            .filter(|s| s.servo.is_none())
            .map(|s| s.joint.as_str())
    }

    /// The park pose of the chain's joints (chain order), when the file
    /// gives one.
    pub fn park_pose(&self) -> Option<Vec<f64>> {
        self.slots
            .iter()
            .filter(|s| !s.extra)
            .map(|s| s.servo.and_then(|k| self.joints[k].park))
            .collect()
    }

    /// The commands of the park pose (the driven joints), when the file
    /// gives one.
    pub fn park_commands(&self) -> Option<Vec<i32>> {
        park_commands(&self.joints)
    }

    /// `given` positions (the chain's joints first, see
    /// [`slots`](Self::slots)) followed by where each slot not given rests:
    /// a caller that knows only the chain leaves the gripper at rest.
    pub fn complete(&self, given: &[f64]) -> Vec<f64> {
        let rest = self.slots.iter().skip(given.len()).map(|s| s.rest);
        given.iter().copied().chain(rest).collect()
    }

    /// Commands for `positions` (the output's positions, see
    /// [`slots`](Self::slots)) written into `last`, which holds the
    /// previous commands of the driven joints: a NaN or missing position
    /// leaves its joint's command as it was, so one bad value never moves
    /// a servo, and is reported (the first NaN, else the first missing
    /// one). Positions beyond the slots, and those of joints without a
    /// servo, are ignored.
    pub fn commands(&self, positions: &[f64], last: &mut [i32]) -> Result<(), MapError> {
        let mut first = None;
        for (index, slot) in self.slots.iter().enumerate() {
            let Some(k) = slot.servo else { continue };
            let result = match positions.get(index) {
                None => Err(MapError::Missing { index }),
                Some(&a) => self.joints[k]
                    .command(a)
                    .ok_or(MapError::NotANumber { index }),
            };
            match (result, last.get_mut(k)) {
                (Ok(v), Some(c)) => *c = v,
                (Err(e @ MapError::NotANumber { .. }), _)
                    if !matches!(first, Some(MapError::NotANumber { .. })) =>
                {
                    first = Some(e);
                }
                (Err(e), _) => {
                    first.get_or_insert(e);
                }
                (Ok(_), None) => {}
            }
        }
        first.map_or(Ok(()), Err)
    }

    /// The output's positions for commands of the driven joints (e.g.
    /// present positions); a joint without a servo is at rest.
    pub fn angles(&self, commands: &[i32]) -> Vec<f64> {
        self.slots
            .iter()
            .map(
                |s| match s.servo.and_then(|k| Some((k, *commands.get(k)?))) {
                    Some((k, c)) => self.joints[k].angle(c),
                    None => s.rest,
                },
            )
            .collect()
    }
}
