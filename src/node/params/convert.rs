//! What the parameters mean: [`NodeParams`] to [`NodeSettings`], the same
//! settings (and checks) the CLI flags convert into.

use super::NodeParams;
use crate::node::settings::{
    GripperJoint, GripperSettings, MotionSettings, NodeSettings, SettingError, SolverSettings,
    parse_bend, parse_clamps, parse_locks, parse_pitch, parse_position, parse_solver,
    parse_weights,
};

impl NodeParams {
    /// The solver and motion settings these parameters give, checked: the
    /// one path from parameters to the node core, shared by `ik_node` and
    /// `replay --config`. Errors name the parameter.
    pub fn settings(&self) -> Result<NodeSettings, SettingError> {
        let max_iterations = match self.max_iterations {
            0 => None,
            m => Some(u32::try_from(m).ok().filter(|&m| m > 0).ok_or_else(|| {
                SettingError::new(
                    "max_iterations",
                    m,
                    "must be 0 (the solver's own) or a positive count",
                )
            })?),
        };
        let settings = NodeSettings {
            solver: SolverSettings {
                solver: parse_solver(&self.solver)?,
                position_tolerance: self.position_tolerance,
                orientation_tolerance: self.orientation_tolerance,
                budget_ms: self.budget_ms,
                max_iterations,
                greediness: self.greediness,
                incremental: self.incremental,
                reset: self.reset,
                bend: parse_bend(&self.bend)?,
                pitch: parse_pitch(&self.pitch)?,
                lock: parse_locks(&self.lock)?,
                clamp: parse_clamps(&self.clamp)?,
                closest: self.closest,
                closest_weight: parse_weights(&self.closest_weight)?,
            },
            motion: MotionSettings {
                rate_hz: self.rate_hz,
                max_velocity: (self.max_velocity != 0.0).then_some(self.max_velocity),
                max_acceleration: self.max_acceleration,
                max_best_effort_error: self.max_best_effort_error,
                max_target_age: self.max_target_age,
            },
            gripper: GripperSettings {
                joint: GripperJoint::parse(&self.gripper_joint),
                open: parse_position("gripper_open", &self.gripper_open)?,
                closed: parse_position("gripper_closed", &self.gripper_closed)?,
                stall_load: self.gripper_stall_load,
            },
        };
        settings.validate()?;
        Ok(settings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ik::{Bend, JointMode, SolverKind};
    use crate::model::Chain;
    use crate::node::settings::JointClamp;

    fn arm() -> Chain {
        Chain::from_urdf_str(include_str!("../../../urdf/arm.urdf"), None, None).unwrap()
    }

    #[test]
    fn parameters_map_onto_the_settings() {
        let p = NodeParams {
            solver: "ccd".into(),
            max_iterations: 7,
            greediness: 0.5,
            incremental: true,
            reset: true,
            bend: "0.1, 0, 0.3".into(),
            pitch: "-0.5".into(),
            lock: "wrist_roll".into(),
            clamp: "shoulder=-0.5:1.0, elbow=0:1".into(),
            max_velocity: 0.5,
            ..NodeParams::default()
        };
        let s = p.settings().unwrap();
        assert_eq!(s.solver.solver, SolverKind::Ccd);
        assert_eq!(s.solver.max_iterations, Some(7));
        assert_eq!(
            (s.solver.greediness, s.solver.incremental, s.solver.reset),
            (0.5, true, true)
        );
        assert_eq!(
            s.solver.bend,
            Bend::Pole(nalgebra::Vector3::new(0.1, 0.0, 0.3))
        );
        assert_eq!(s.solver.pitch, Some(-0.5));
        assert_eq!(s.solver.lock, ["wrist_roll"]);
        assert_eq!(
            s.solver.clamp[1],
            JointClamp {
                joint: "elbow".into(),
                min: 0.0,
                max: 1.0
            }
        );
        assert_eq!(s.motion.max_velocity, Some(0.5));
        let modes = s.solver_config(&arm()).unwrap().1.modes;
        assert_eq!(modes[4], JointMode::Lock);
    }

    #[test]
    fn bad_values_name_the_parameter() {
        let d = NodeParams::default;
        let cases = [
            (
                NodeParams {
                    solver: "newton".into(),
                    ..d()
                },
                "solver",
            ),
            (
                NodeParams {
                    max_iterations: -1,
                    ..d()
                },
                "max_iterations",
            ),
            (
                NodeParams {
                    max_iterations: 1 << 40,
                    ..d()
                },
                "max_iterations",
            ),
            (
                NodeParams {
                    budget_ms: 0.0,
                    ..d()
                },
                "budget_ms",
            ),
            (
                NodeParams {
                    position_tolerance: f64::NAN,
                    ..d()
                },
                "position_tolerance",
            ),
            (
                NodeParams {
                    orientation_tolerance: -1.0,
                    ..d()
                },
                "orientation_tolerance",
            ),
            (
                NodeParams {
                    greediness: 0.0,
                    ..d()
                },
                "greediness",
            ),
            (
                NodeParams {
                    bend: "1,2".into(),
                    ..d()
                },
                "bend",
            ),
            (
                NodeParams {
                    pitch: "up".into(),
                    ..d()
                },
                "pitch",
            ),
            (
                NodeParams {
                    lock: "a,,b".into(),
                    ..d()
                },
                "lock",
            ),
            (
                NodeParams {
                    clamp: "elbow=1".into(),
                    ..d()
                },
                "clamp",
            ),
            (
                NodeParams {
                    rate_hz: 0.0,
                    ..d()
                },
                "rate_hz",
            ),
            (
                NodeParams {
                    max_velocity: -1.0,
                    ..d()
                },
                "max_velocity",
            ),
            (
                NodeParams {
                    max_acceleration: 0.0,
                    ..d()
                },
                "max_acceleration",
            ),
            (
                NodeParams {
                    max_best_effort_error: -1.0,
                    ..d()
                },
                "max_best_effort_error",
            ),
            (
                NodeParams {
                    max_target_age: f64::INFINITY,
                    ..d()
                },
                "max_target_age",
            ),
            (
                NodeParams {
                    gripper_open: "wide".into(),
                    ..d()
                },
                "gripper_open",
            ),
            (
                NodeParams {
                    gripper_stall_load: 1.5,
                    ..d()
                },
                "gripper_stall_load",
            ),
        ];
        for (p, name) in cases {
            let e = p.settings().unwrap_err();
            assert_eq!(e.name, name, "{e}");
        }
        // Joint names are checked against the chain.
        let p = NodeParams {
            clamp: "nope=0:1".into(),
            ..d()
        };
        let e = p.settings().unwrap().solver_config(&arm()).unwrap_err();
        assert_eq!(e.name, "clamp");
        assert!(e.to_string().contains("nope"), "{e}");
    }
}
