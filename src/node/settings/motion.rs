//! Motion settings: control rate and the limits of the arm's motion, with
//! their defaults taken from [`NodeConfig::default`].

use super::{NodeConfig, SettingError, non_negative, positive};
use crate::model::Chain;

/// How fast the loop runs and how the arm may move.
#[derive(Debug, Clone, PartialEq)]
pub struct MotionSettings {
    /// Control rate (Hz): one solve at most, one motion step and one joint
    /// state per tick.
    pub rate_hz: f64,
    /// Speed limit of every joint (rad/s or m/s), also the cap; `None`: each
    /// joint's URDF velocity under the node core's default cap.
    pub max_velocity: Option<f64>,
    /// Acceleration limit of every joint (rad/s^2 or m/s^2).
    pub max_acceleration: f64,
    /// A best-effort answer is followed only below this position error (m).
    pub max_best_effort_error: f64,
    /// Targets stamped further than this from the node clock are stale (s).
    pub max_target_age: f64,
}

impl Default for MotionSettings {
    fn default() -> Self {
        let c = NodeConfig::default();
        MotionSettings {
            rate_hz: c.rate_hz,
            max_velocity: None,
            max_acceleration: c.default_acceleration,
            max_best_effort_error: c.max_best_effort_error,
            max_target_age: c.max_target_age,
        }
    }
}

impl MotionSettings {
    /// The fastest control rate (Hz): a tick of 0.1 ms is already far
    /// shorter than a servo frame or a solve; above it a typo (`1e300`)
    /// would make a run of any length endless.
    pub const MAX_RATE_HZ: f64 = 10_000.0;

    /// A control rate above 0 and at most [`Self::MAX_RATE_HZ`].
    pub fn check_rate(rate_hz: f64) -> Result<f64, SettingError> {
        positive("rate_hz", rate_hz)?;
        if rate_hz > Self::MAX_RATE_HZ {
            let why = format!("must be at most {} Hz", Self::MAX_RATE_HZ);
            return Err(SettingError::new("rate_hz", super::shown(rate_hz), why));
        }
        Ok(rate_hz)
    }

    /// Checks every value.
    pub fn validate(&self) -> Result<(), SettingError> {
        MotionSettings::check_rate(self.rate_hz)?;
        if let Some(v) = self.max_velocity {
            positive("max_velocity", v).map_err(|e| SettingError {
                why: format!(
                    "{}; leave it unset (0 as a ROS parameter) for each joint's URDF velocity",
                    e.why
                ),
                ..e
            })?;
        }
        positive("max_acceleration", self.max_acceleration)?;
        non_negative("max_best_effort_error", self.max_best_effort_error)?;
        positive("max_target_age", self.max_target_age)?;
        Ok(())
    }

    /// The node core's settings on `chain`: one `max_velocity` limits every
    /// joint and the cap; without it the URDF speeds apply under the cap.
    pub fn node_config(&self, chain: &Chain) -> Result<NodeConfig, SettingError> {
        self.validate()?;
        let mut config = NodeConfig {
            rate_hz: self.rate_hz,
            default_acceleration: self.max_acceleration,
            max_best_effort_error: self.max_best_effort_error,
            max_target_age: self.max_target_age,
            ..NodeConfig::default()
        };
        if let Some(v) = self.max_velocity {
            config.max_velocity = vec![v; chain.dof()];
            config.velocity_cap = v;
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm() -> Chain {
        Chain::from_urdf_str(include_str!("../../../urdf/arm.urdf"), None, None).unwrap()
    }

    #[test]
    fn defaults_are_the_node_cores_own() {
        let c = MotionSettings::default().node_config(&arm()).unwrap();
        assert_eq!(c, NodeConfig::default());
    }

    #[test]
    fn one_max_velocity_limits_every_joint_and_the_cap() {
        let chain = arm();
        let s = MotionSettings {
            max_velocity: Some(0.5),
            rate_hz: 100.0,
            ..MotionSettings::default()
        };
        let c = s.node_config(&chain).unwrap();
        assert_eq!(c.max_velocity, vec![0.5; chain.dof()]);
        assert_eq!((c.velocity_cap, c.rate_hz), (0.5, 100.0));
        c.axis_limits(&chain).unwrap();
    }

    #[test]
    fn bad_values_are_refused_naming_the_setting() {
        let d = MotionSettings::default;
        for (s, name) in [
            (
                MotionSettings {
                    rate_hz: 0.0,
                    ..d()
                },
                "rate_hz",
            ),
            (
                MotionSettings {
                    rate_hz: -1.0,
                    ..d()
                },
                "rate_hz",
            ),
            (
                MotionSettings {
                    max_velocity: Some(-1.0),
                    ..d()
                },
                "max_velocity",
            ),
            (
                MotionSettings {
                    max_velocity: Some(0.0),
                    ..d()
                },
                "max_velocity",
            ),
            (
                MotionSettings {
                    max_acceleration: f64::NAN,
                    ..d()
                },
                "max_acceleration",
            ),
            (
                MotionSettings {
                    max_best_effort_error: -0.1,
                    ..d()
                },
                "max_best_effort_error",
            ),
            (
                MotionSettings {
                    max_target_age: f64::INFINITY,
                    ..d()
                },
                "max_target_age",
            ),
        ] {
            assert_eq!(s.validate().unwrap_err().name, name);
        }
        assert!(
            MotionSettings {
                max_best_effort_error: 0.0,
                ..d()
            }
            .validate()
            .is_ok()
        );
    }
}
