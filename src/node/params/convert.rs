//! What the parameters mean: [`NodeParams`] to [`NodeSettings`], the same
//! settings (and checks) the CLI flags convert into.

use super::NodeParams;
use crate::collision::CollisionOptions;
use crate::node::TeleopSettings;
use crate::node::settings::{
    GripperJoint, GripperSettings, JogSettings, MotionSettings, NodeSettings, SettingError,
    SolverSettings, TwistFrame, optional_path, parse_bend, parse_clamps, parse_locks,
    parse_mesh_path, parse_orientation, parse_pitch, parse_position, parse_redundancy,
    parse_solver, parse_tool_axis, parse_weights,
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
                redundancy: parse_redundancy(&self.redundancy)?,
                null_space_gain: self.null_space_gain,
                clearance_band: self.clearance_band,
                target_orientation: parse_orientation(&self.target_orientation)?
                    .with_tool(parse_tool_axis(&self.tool_axis)?),
            },
            motion: MotionSettings {
                rate_hz: self.rate_hz,
                max_velocity: (self.max_velocity != 0.0).then_some(self.max_velocity),
                max_acceleration: self.max_acceleration,
                max_best_effort_error: self.max_best_effort_error,
                max_target_age: self.max_target_age,
            },
            jog: JogSettings {
                linear_speed: self.jog_linear_speed,
                angular_speed: self.jog_angular_speed,
                linear_acceleration: self.jog_linear_acceleration,
                angular_acceleration: self.jog_angular_acceleration,
                timeout: self.jog_timeout,
                cmd_vel_frame: TwistFrame::parse("cmd_vel_frame", &self.cmd_vel_frame)?,
            },
            gripper: GripperSettings {
                joint: GripperJoint::parse(&self.gripper_joint),
                open: parse_position("gripper_open", &self.gripper_open)?,
                closed: parse_position("gripper_closed", &self.gripper_closed)?,
                stall_load: self.gripper_stall_load,
            },
            collision: CollisionOptions {
                check: self.collision_check,
                workspace: optional_path(&self.workspace_file),
                srdf: optional_path(&self.srdf_path),
                mesh_path: parse_mesh_path(&self.mesh_path),
                margin: self.collision_margin,
                capsule_radius: self.collision_capsule_radius,
            },
        };
        settings.validate()?;
        Ok(settings)
    }

    /// How the arm follows a leader arm (`follow_leader`), checked; none
    /// when it does not.
    pub fn teleop(&self) -> Result<Option<TeleopSettings>, SettingError> {
        if !self.follow_leader {
            return Ok(None);
        }
        let positive = |name: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(v)
            } else {
                Err(SettingError::new(name, v, "must be a positive number"))
            }
        };
        Ok(Some(TeleopSettings {
            startup_speed: positive("leader_startup_speed", self.leader_startup_speed)?,
            timeout: positive("leader_timeout", self.leader_timeout)?,
        }))
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
        let axis = NodeParams {
            target_orientation: " axis".into(),
            ..NodeParams::default()
        };
        let node = axis.settings().unwrap().node_config(&arm()).unwrap();
        assert_eq!(node.target_orientation, crate::ik::OrientationMode::axis());
        let modes = s.solver_config(&arm()).unwrap().1.modes;
        assert_eq!(modes[4], JointMode::Lock);
    }

    #[test]
    fn bad_values_name_the_parameter() {
        let d = NodeParams::default;
        /// Makes one value bad.
        type Spoil = fn(&mut NodeParams);
        let cases: [(&str, Spoil); 26] = [
            ("solver", |p| p.solver = "newton".into()),
            ("target_orientation", |p| {
                p.target_orientation = "roll".into()
            }),
            ("tool_axis", |p| p.tool_axis = vec![0.0, 0.0, 0.0]),
            ("tool_axis", |p| p.tool_axis = vec![f64::NAN, 0.0, 1.0]),
            ("tool_axis", |p| p.tool_axis = vec![f64::INFINITY, 0.0, 0.0]),
            ("tool_axis", |p| p.tool_axis = vec![1.0, 0.0]),
            ("max_iterations", |p| p.max_iterations = -1),
            ("max_iterations", |p| p.max_iterations = 1 << 40),
            ("budget_ms", |p| p.budget_ms = 0.0),
            ("position_tolerance", |p| p.position_tolerance = f64::NAN),
            ("orientation_tolerance", |p| p.orientation_tolerance = -1.0),
            ("greediness", |p| p.greediness = 0.0),
            ("bend", |p| p.bend = "1,2".into()),
            ("pitch", |p| p.pitch = "up".into()),
            ("lock", |p| p.lock = "a,,b".into()),
            ("clamp", |p| p.clamp = "elbow=1".into()),
            ("rate_hz", |p| p.rate_hz = 0.0),
            ("max_velocity", |p| p.max_velocity = -1.0),
            ("max_acceleration", |p| p.max_acceleration = 0.0),
            ("max_best_effort_error", |p| p.max_best_effort_error = -1.0),
            ("max_target_age", |p| p.max_target_age = f64::INFINITY),
            ("jog_linear_speed", |p| p.jog_linear_speed = 0.0),
            ("jog_timeout", |p| p.jog_timeout = -0.2),
            ("cmd_vel_frame", |p| p.cmd_vel_frame = "world".into()),
            ("gripper_open", |p| p.gripper_open = "wide".into()),
            ("gripper_stall_load", |p| p.gripper_stall_load = 1.5),
        ];
        for (name, spoil) in cases {
            let mut p = d();
            spoil(&mut p);
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

    /// `tool_axis` names the tool axis of `target_orientation: axis`: the
    /// tip's +z unless set, +x when set to [1, 0, 0] (any length), and no
    /// tool axis for the other modes, whatever it is.
    #[test]
    fn the_tool_axis_parameter_makes_the_axis_mode_point_that_axis() {
        use crate::ik::OrientationMode;
        use nalgebra::Vector3;
        let mode = |p: NodeParams| p.settings().unwrap().solver.target_orientation;
        assert_eq!(NodeParams::default().tool_axis, [0.0, 0.0, 1.0]);
        let axis = NodeParams {
            target_orientation: "axis".into(),
            ..NodeParams::default()
        };
        assert_eq!(
            mode(axis.clone()),
            OrientationMode::Axis {
                tool: Vector3::z_axis()
            }
        );
        let x = NodeParams {
            tool_axis: vec![2.0, 0.0, 0.0],
            ..axis.clone()
        };
        assert_eq!(
            mode(x.clone()),
            OrientationMode::Axis {
                tool: Vector3::x_axis()
            }
        );
        let node = x.settings().unwrap().node_config(&arm()).unwrap();
        assert_eq!(node.target_orientation.tool(), Some(Vector3::x_axis()));
        let full = NodeParams {
            tool_axis: vec![1.0, 0.0, 0.0],
            ..NodeParams::default()
        };
        assert_eq!(mode(full), OrientationMode::Full);
        // Refused whatever the mode, naming the parameter and the value.
        let e = NodeParams {
            tool_axis: vec![0.0, 0.0, 0.0],
            ..NodeParams::default()
        }
        .settings()
        .unwrap_err();
        assert_eq!(e.name, "tool_axis");
        assert!(
            e.to_string().starts_with("tool_axis = [0.0, 0.0, 0.0]: ") && e.why.contains("zero"),
            "{e}"
        );
        let e = NodeParams {
            tool_axis: vec![1.0, 0.0, 0.0, 1.0],
            ..axis
        }
        .settings()
        .unwrap_err();
        assert!(e.name == "tool_axis" && e.why.contains("needs 3"), "{e}");
    }

    #[test]
    fn follow_leader_gives_the_teleoperation_and_refuses_a_bad_timeout() {
        let mut p = NodeParams::default();
        assert_eq!(p.teleop().unwrap(), None);
        p.follow_leader = true;
        assert_eq!(p.teleop().unwrap(), Some(TeleopSettings::default()));
        p.leader_timeout = 0.2;
        p.leader_startup_speed = 0.5;
        let t = p.teleop().unwrap().unwrap();
        assert_eq!((t.timeout, t.startup_speed), (0.2, 0.5));
        p.leader_timeout = 0.0;
        let e = p.teleop().unwrap_err().to_string();
        assert!(
            e.contains("leader_timeout") && e.contains("positive"),
            "{e}"
        );
    }
}
