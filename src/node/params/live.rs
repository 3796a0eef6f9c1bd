//! The parameters while the node runs: what `ros2 param set` may change.
//!
//! At start every parameter takes its value (the command line, a parameter
//! file). Once the node has read them, only the parameters marked `live`
//! in the table change, and a new value is checked exactly as at start
//! (every setting, and once the robot is known, the checks on it the node
//! core makes, the solver built): a refused value leaves the old one in
//! place and says why. The node then hands the new settings to
//! [`NodeCore::retune`](crate::node::NodeCore::retune), which applies them
//! at its next tick.

use super::NodeParams;
use super::table::{ParamError, ParamValue};
use crate::model::Chain;
use crate::node::core::check_settings;
use crate::node::settings::{NodeSettings, SettingError};
use thiserror::Error;

/// A new value that was refused; the old one stays.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum LiveError {
    /// Unknown, or of the wrong type.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// Not a live parameter.
    #[error(
        "{name} cannot change while the node runs (it is read once, at start): restart the node with the new value"
    )]
    Fixed { name: &'static str },
    /// A value the settings refuse.
    #[error(transparent)]
    Setting(#[from] SettingError),
    /// A value that does not fit the robot (a solver that does not apply
    /// to the chain, a joint it does not have).
    #[error("{name}: {why}")]
    Robot { name: &'static str, why: String },
}

impl LiveError {
    /// The parameter's name.
    pub fn name(&self) -> &str {
        match self {
            LiveError::Param(e) => e.name(),
            LiveError::Fixed { name } | LiveError::Robot { name, .. } => name,
            LiveError::Setting(e) => e.name,
        }
    }
}

/// When a value is set.
#[derive(Debug, Clone)]
enum Phase {
    /// Values given at start: any parameter, of the right type.
    Starting,
    /// Read by the node; the robot is not known yet.
    Read,
    /// Running on this robot.
    Running(Box<Chain>),
}

/// The node's parameters behind a parameter server.
#[derive(Debug, Clone)]
pub struct LiveParams {
    params: NodeParams,
    phase: Phase,
}

impl LiveParams {
    pub fn new(params: NodeParams) -> LiveParams {
        LiveParams {
            params,
            phase: Phase::Starting,
        }
    }

    pub fn params(&self) -> &NodeParams {
        &self.params
    }

    /// The node has read its parameters: from now on only live ones
    /// change.
    pub fn read(&mut self) {
        if matches!(self.phase, Phase::Starting) {
            self.phase = Phase::Read;
        }
    }

    /// The node runs on `chain`: new values are checked on it too.
    pub fn run_on(&mut self, chain: Chain) {
        self.phase = Phase::Running(Box::new(chain));
    }

    /// The settings the parameters give now.
    pub fn settings(&self) -> Result<NodeSettings, SettingError> {
        self.params.settings()
    }

    /// Sets `name` to `value` if the node can take it now; otherwise
    /// nothing changes and the error says why. Setting a fixed parameter
    /// to the value it has is not a change, and is accepted.
    pub fn set(&mut self, name: &str, value: ParamValue) -> Result<(), LiveError> {
        let mut next = self.params.clone();
        next.set(name, value)?;
        let chain = match &self.phase {
            Phase::Starting => {
                self.params = next;
                return Ok(());
            }
            Phase::Read => None,
            Phase::Running(chain) => Some(chain),
        };
        let spec = NodeParams::spec(name).ok_or_else(|| ParamError::Unknown {
            name: name.to_owned(),
        })?;
        if next.get(name)? == self.params.get(name)? {
            return Ok(());
        }
        if !spec.live {
            return Err(LiveError::Fixed { name: spec.name });
        }
        let settings = next.settings()?;
        if let Some(chain) = chain {
            check_settings(chain, &settings).map_err(|e| LiveError::Robot {
                name: spec.name,
                why: e.to_string(),
            })?;
        }
        self.params = next;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm() -> Chain {
        Chain::from_urdf_str(include_str!("../../../urdf/arm.urdf"), None, None).unwrap()
    }

    fn running() -> LiveParams {
        let mut p = LiveParams::new(NodeParams::default());
        p.set("rate_hz", ParamValue::Double(100.0)).unwrap();
        p.read();
        p.run_on(arm());
        p
    }

    #[test]
    fn at_start_anything_goes_then_only_live_parameters_change() {
        let mut p = running();
        assert_eq!(p.params().rate_hz, 100.0);
        p.set("budget_ms", ParamValue::Double(2.0)).unwrap();
        p.set("gripper_open", ParamValue::String("0.9".into()))
            .unwrap();
        assert_eq!(p.settings().unwrap().gripper.open, Some(0.9));
        let e = p.set("rate_hz", ParamValue::Double(50.0)).unwrap_err();
        assert_eq!(e, LiveError::Fixed { name: "rate_hz" });
        assert!(e.to_string().contains("restart"), "{e}");
        // The same value again is no change.
        p.set("rate_hz", ParamValue::Double(100.0)).unwrap();
        assert_eq!(p.params().rate_hz, 100.0);
    }

    #[test]
    fn a_bad_value_is_refused_with_the_reason_and_the_old_value_stays() {
        let mut p = running();
        let before = p.params().clone();
        let e = p.set("budget_ms", ParamValue::Double(-1.0)).unwrap_err();
        assert_eq!(e.name(), "budget_ms");
        assert!(e.to_string().contains("positive"), "{e}");
        let e = p.set("budget_ms", ParamValue::Integer(2)).unwrap_err();
        assert!(e.to_string().contains("2.0"), "{e}");
        // Checked on the robot: the arm has no joint 'knee', and its
        // gripper opens at most 1.2 rad.
        let e = p
            .set("lock", ParamValue::String("knee".into()))
            .unwrap_err();
        assert_eq!(e.name(), "lock");
        assert!(e.to_string().contains("knee"), "{e}");
        let e = p
            .set("gripper_open", ParamValue::String("2".into()))
            .unwrap_err();
        assert!(e.to_string().contains("1.2"), "{e}");
        let e = p.set("nope", ParamValue::Bool(true)).unwrap_err();
        assert_eq!(e.name(), "nope");
        assert_eq!(p.params(), &before);
        // Before the robot is known, what needs none is checked.
        let mut p = LiveParams::new(NodeParams::default());
        p.read();
        p.set("lock", ParamValue::String("knee".into())).unwrap();
        assert!(p.set("greediness", ParamValue::Double(0.0)).is_err());
    }
}
