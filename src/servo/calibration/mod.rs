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
mod tests;

pub use error::{CalibrationError, CalibrationWarning, MapError};
pub use file::{CalibrationFile, JointEntry};

pub use super::joint::JointMap;

use super::joint::park_commands;
use super::link::LinkSettings;
use super::protocol::Protocol;
use crate::model::Chain;
use std::path::Path;

/// A calibration checked against a chain: one [`JointMap`] per moving
/// joint, in chain order.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibration {
    pub protocol: &'static Protocol,
    pub link: LinkSettings,
    pub joints: Vec<JointMap>,
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
    /// has exactly one entry, no entry for anything else, no output used
    /// twice, every number finite and sensible, every range inside what
    /// the joint's servo can do, and the servos fit on one bus.
    pub fn check(file: &CalibrationFile, chain: &Chain) -> Result<Calibration, CalibrationError> {
        check::check(file, chain, "calibration")
    }

    /// The park pose (joint angles, chain order), when the file gives one.
    pub fn park_pose(&self) -> Option<Vec<f64>> {
        self.joints.iter().map(|j| j.park).collect()
    }

    /// The commands of the park pose (chain order), when the file gives one.
    pub fn park_commands(&self) -> Option<Vec<i32>> {
        park_commands(&self.joints)
    }

    /// Commands for `angles` (chain order) written into `last`, which holds
    /// the previous commands: a NaN angle leaves its joint's command as it
    /// was, so one bad value never moves a servo, and is reported. Extra
    /// angles or commands beyond the chain are ignored.
    pub fn commands(&self, angles: &[f64], last: &mut [i32]) -> Result<(), MapError> {
        let mut first_nan = None;
        for (index, ((map, &a), c)) in self.joints.iter().zip(angles).zip(last).enumerate() {
            match map.command(a) {
                Some(v) => *c = v,
                None => {
                    first_nan.get_or_insert(index);
                }
            }
        }
        match first_nan {
            Some(index) => Err(MapError::NotANumber { index }),
            None => Ok(()),
        }
    }

    /// Joint angles for commands (chain order), e.g. present positions.
    pub fn angles(&self, commands: &[i32]) -> Vec<f64> {
        self.joints
            .iter()
            .zip(commands)
            .map(|(m, &c)| m.angle(c))
            .collect()
    }
}
