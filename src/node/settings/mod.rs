//! The node's settings as typed values, decided once for every front-end.
//!
//! The CLI flags (`arm_ik sim`, `replay`, `solve`, ...), the ROS parameters
//! of `ik_node` ([`crate::node::NodeParams`]) and the parameter file that
//! `replay --config` reads all convert into these types, so a value is
//! defaulted, checked and turned into solver and motion options in one
//! place: [`SolverSettings`] (which solver, its options, per-joint locks
//! and clamps), [`MotionSettings`] (control rate and motion limits) and
//! [`JogSettings`] (how twists move the tip), held together by
//! [`NodeSettings`].
//!
//! A refused value is a [`SettingError`] naming the setting by its
//! canonical name, the ROS parameter's (`budget_ms`); each front-end shows
//! that name in its own spelling ([`SettingError::spelled`]: `--budget-ms`).

mod collision;
mod config;
mod gripper;
mod jog;
mod motion;
mod solver;
mod text;

pub use collision::{optional_path, parse_mesh_path, validate_collision};
pub use config::NodeConfig;
pub use gripper::{AUTO_GRIPPER, Gripper, GripperJoint, GripperSettings, parse_position};
pub use jog::{JogSettings, TwistFrame};
pub use motion::MotionSettings;
pub use solver::SolverSettings;
pub use text::{
    BEND_KEYWORDS, JointClamp, JointWeight, bend_name, parse_bend, parse_clamps, parse_locks,
    parse_orientation, parse_pitch, parse_redundancy, parse_solver, parse_tool_axis, parse_weights,
};

use crate::collision::CollisionOptions;
use crate::ik::{Common, SolverConfig};
use crate::model::Chain;
use std::fmt::Display;

/// A setting that was refused: which one (its canonical name, as the ROS
/// parameter spells it), the value given, and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{name} = {value}: {why}")]
pub struct SettingError {
    /// The canonical name, e.g. `budget_ms`.
    pub name: &'static str,
    /// The value as given, e.g. `0` or `'nope=0:1'`.
    pub value: String,
    pub why: String,
}

impl SettingError {
    pub fn new(name: &'static str, value: impl Display, why: impl Into<String>) -> SettingError {
        SettingError {
            name,
            value: value.to_string(),
            why: why.into(),
        }
    }

    /// The message with the setting spelled as the front-end spells it,
    /// e.g. `--budget-ms 0: must be a positive number` on the command line.
    pub fn spelled(&self, name: &str) -> String {
        format!("{name} {}: {}", self.value, self.why)
    }
}

/// The largest size of a number without a range of its own (a time, a
/// speed, a tolerance, a coordinate): far beyond any arm or any run, and
/// far from where arithmetic on it overflows (a rate of 1e300 Hz once made
/// a run endless, a budget of 1e300 ms could not become a duration). The
/// CLI's numeric flags have the same bound.
pub const MAX_MAGNITUDE: f64 = 1e6;

/// A number as an error shows it: `1e300`, not three hundred digits.
pub fn shown(x: f64) -> String {
    if x != 0.0 && x.is_finite() && !(1e-4..1e6).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// `x` when it is finite, above zero and at most [`MAX_MAGNITUDE`]: the
/// rule of every setting that is a rate, a time, a tolerance or a limit
/// (the CLI's numeric flags use it too, so a flag and a parameter refuse
/// the same values).
pub fn positive(name: &'static str, x: f64) -> Result<f64, SettingError> {
    if x.is_finite() && x > 0.0 && x <= MAX_MAGNITUDE {
        Ok(x)
    } else {
        let why = format!("must be a positive number, at most {MAX_MAGNITUDE:e}");
        Err(SettingError::new(name, shown(x), why))
    }
}

/// `x` when it is finite, not below zero and at most [`MAX_MAGNITUDE`].
pub fn non_negative(name: &'static str, x: f64) -> Result<f64, SettingError> {
    if (0.0..=MAX_MAGNITUDE).contains(&x) {
        Ok(x)
    } else {
        let why = format!("must be 0 or a positive number, at most {MAX_MAGNITUDE:e}");
        Err(SettingError::new(name, shown(x), why))
    }
}

/// Everything the node core is built from besides the robot and the servo
/// output: the solver, the motion, the jog and the gripper.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeSettings {
    pub solver: SolverSettings,
    pub motion: MotionSettings,
    pub jog: JogSettings,
    pub gripper: GripperSettings,
    /// The collision check: the workspace, the margin, the body's model.
    pub collision: CollisionOptions,
}

impl NodeSettings {
    /// Checks every value; the conversions below call it too.
    pub fn validate(&self) -> Result<(), SettingError> {
        self.solver.validate()?;
        self.motion.validate()?;
        self.jog.validate()?;
        self.gripper.validate()?;
        validate_collision(&self.collision)
    }

    /// The solver and its common options on `chain`; see
    /// [`SolverSettings::solver_config`].
    pub fn solver_config(&self, chain: &Chain) -> Result<(SolverConfig, Common), SettingError> {
        self.solver.solver_config(chain)
    }

    /// The node core's settings on `chain`: the motion's (see
    /// [`MotionSettings::node_config`]), the jog's and the gripper,
    /// checked against the robot.
    pub fn node_config(&self, chain: &Chain) -> Result<NodeConfig, SettingError> {
        self.jog.validate()?;
        self.gripper.resolve(chain)?;
        validate_collision(&self.collision)?;
        Ok(NodeConfig {
            jog: self.jog.clone(),
            gripper: self.gripper.clone(),
            collision: self.collision.clone(),
            target_orientation: self.solver.target_orientation,
            ..self.motion.node_config(chain)?
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_setting_and_the_value_in_either_spelling() {
        let e = positive("budget_ms", 0.0).unwrap_err();
        assert_eq!(
            e.to_string(),
            "budget_ms = 0: must be a positive number, at most 1e6"
        );
        assert_eq!(
            e.spelled("--budget-ms"),
            "--budget-ms 0: must be a positive number, at most 1e6"
        );
        assert!(positive("x", 1e300).is_err());
        assert!(non_negative("x", 2e6).is_err());
        assert!(positive("x", f64::NAN).is_err());
        assert!(positive("x", f64::INFINITY).is_err());
        assert_eq!(non_negative("x", 0.0), Ok(0.0));
        assert!(non_negative("x", -1e-9).is_err());
    }
}
