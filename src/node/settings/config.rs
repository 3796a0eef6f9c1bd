//! The node core's own settings ([`NodeConfig`]): per joint where the arm
//! needs it, checked against the chain into the motion limiter's limits.
//! Below the core, so the core and the settings it is built from share one
//! set of checks.

use super::{GripperSettings, JogSettings, SettingError, non_negative, positive};
use crate::collision::CollisionOptions;
use crate::ik::{Clock, OrientationMode};
use crate::model::Chain;
use crate::node::motion::AxisLimits;

/// The node core's settings, per joint where the arm needs it; the
/// front-ends build it from [`MotionSettings`](super::MotionSettings).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeConfig {
    /// Control rate (Hz): one motion step, joint state and servo command per
    /// tick.
    pub rate_hz: f64,
    /// Per-joint speed limits; empty: the URDF `velocity` of each joint.
    /// Either way capped at `velocity_cap`.
    pub max_velocity: Vec<f64>,
    /// Upper bound on every joint speed (rad/s or m/s): URDF speeds are the
    /// servo's no-load figures, too fast for a loaded arm, and a joint
    /// without one must still be limited.
    pub velocity_cap: f64,
    /// Per-joint acceleration limits; empty: `default_acceleration` for all.
    pub max_acceleration: Vec<f64>,
    /// (rad/s^2 or m/s^2) URDF has no acceleration limits.
    pub default_acceleration: f64,
    /// A best-effort answer is followed only when its position error is
    /// below this (m); otherwise the arm holds and the target counts as
    /// unreachable.
    pub max_best_effort_error: f64,
    /// Targets stamped further than this from the node clock are stale (s).
    pub max_target_age: f64,
    /// Start pose when the servos give no feedback; `None`: mid-range. One
    /// value per chain joint, optionally followed by the actuated joints
    /// off the chain (a gripper; each at its rest position otherwise).
    pub initial: Option<Vec<f64>>,
    /// Slow the early joints so all arrive together.
    pub synchronise: bool,
    /// How twists move the tip.
    pub jog: JogSettings,
    /// Which joint is the gripper, and its positions.
    pub gripper: GripperSettings,
    /// The collision check.
    pub collision: CollisionOptions,
    /// What a pose target's orientation asks (the solver setting
    /// `target_orientation`): applied to every target as it comes in.
    pub target_orientation: OrientationMode,
    /// The clock a solve's time budget is counted on. Not a setting: the
    /// loop's choice ([`NodeCore::set_budget_clock`](crate::node::NodeCore::set_budget_clock)).
    /// Wall time for a node on real time (its budget is the control
    /// loop's deadline); the thread's CPU time for a loop on simulated
    /// time (`sim`, `replay`), whose verdicts then do not depend on what
    /// else the machine runs.
    pub budget_clock: Clock,
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            rate_hz: 50.0,
            max_velocity: Vec::new(),
            velocity_cap: 2.0,
            max_acceleration: Vec::new(),
            default_acceleration: 8.0,
            max_best_effort_error: 0.01,
            max_target_age: 0.5,
            initial: None,
            synchronise: true,
            jog: JogSettings::default(),
            gripper: GripperSettings::default(),
            collision: CollisionOptions::default(),
            target_orientation: OrientationMode::Full,
            budget_clock: Clock::Wall,
        }
    }
}

impl NodeConfig {
    /// The per-joint limits for the motion limiter, checked: the chain's
    /// joints, then the actuated joints off the chain (a gripper) at their
    /// URDF speed under `velocity_cap` and `default_acceleration`.
    pub fn axis_limits(&self, chain: &Chain) -> Result<Vec<AxisLimits>, SettingError> {
        let n = chain.dof();
        let actuated = chain.extras.iter().filter(|e| e.actuated()).count();
        super::MotionSettings::check_rate(self.rate_hz)?;
        positive("velocity_cap", self.velocity_cap)?;
        positive("default_acceleration", self.default_acceleration)?;
        positive("max_target_age", self.max_target_age)?;
        non_negative("max_best_effort_error", self.max_best_effort_error)?;
        self.jog.validate()?;
        for (name, v) in [
            ("max_velocity", &self.max_velocity),
            ("max_acceleration", &self.max_acceleration),
        ] {
            if !v.is_empty() && v.len() != n {
                let why = format!("{} values for {n} joints", v.len());
                return Err(SettingError::new(name, format!("{v:?}"), why));
            }
            for &x in v {
                positive(name, x)?;
            }
        }
        if let Some(q) = &self.initial
            && (!(n..=n + actuated).contains(&q.len()) || q.iter().any(|x| !x.is_finite()))
        {
            let why = format!("needs {n} finite values (and up to {actuated} more off the chain)");
            return Err(SettingError::new("initial", format!("{q:?}"), why));
        }
        let chain_axes = chain.joints.iter().enumerate().map(|(i, j)| {
            let v = self
                .max_velocity
                .get(i)
                .copied()
                .unwrap_or(urdf_speed(j.max_velocity));
            AxisLimits {
                lower: j.limits.lower,
                upper: j.limits.upper,
                velocity: v.min(self.velocity_cap),
                acceleration: self
                    .max_acceleration
                    .get(i)
                    .copied()
                    .unwrap_or(self.default_acceleration),
            }
        });
        let extras = chain
            .extras
            .iter()
            .filter(|e| e.actuated())
            .map(|e| AxisLimits {
                lower: e.limits.lower,
                upper: e.limits.upper,
                velocity: urdf_speed(e.max_velocity).min(self.velocity_cap),
                acceleration: self.default_acceleration,
            });
        Ok(chain_axes.chain(extras).collect())
    }
}

/// A URDF speed limit, infinite where the URDF gives none (0 or missing).
fn urdf_speed(v: f64) -> f64 {
    if v.is_finite() && v > 0.0 {
        v
    } else {
        f64::INFINITY
    }
}
