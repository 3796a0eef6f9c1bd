//! The ROS node's parameters as a plain struct, declared once.
//!
//! One table below gives every parameter's name, type, default, one-line
//! description, allowed values and whether it can change at run time. From
//! it come the [`NodeParams`] struct and its defaults, get/set by name with
//! a ROS-free [`ParamValue`], the schema ([`NodeParams::schema`], printed by
//! `arm_ik params`), the parameter file reader ([`NodeParams::from_ros_yaml`])
//! and, with the `ros2` feature, r2r's `RosParams` (`crate::ros::params`).
//! Fields are only the types ROS parameters have (bool, integer, double,
//! string, and a double array where the value is a vector), so "unset" is
//! an empty string or 0 and a list of names is one comma-separated string. What the values mean is decided by
//! [`NodeParams::settings`], through the same
//! [`NodeSettings`](crate::node::NodeSettings) as the CLI; which may change
//! while the node runs, and with which checks, by [`LiveParams`].

mod convert;
mod file;
pub mod leader;
mod live;
pub mod table;

pub use file::ParamFileError;
pub use leader::{LeaderParams, LeaderSettings};
pub use live::{LiveError, LiveParams};
pub use table::{ParamError, ParamInfo, ParamSpec, ParamTable, ParamType, ParamValue};

use super::settings::{
    BEND_KEYWORDS, GripperSettings, JogSettings, MotionSettings, SolverSettings, TwistFrame,
    bend_name,
};
use crate::ik::{OrientationMode, Redundancy, SolverKind};
use crate::servo::registry;
use std::path::{Path, PathBuf};
use table::declare_params;

fn solver() -> SolverSettings {
    SolverSettings::default()
}

fn motion() -> MotionSettings {
    MotionSettings::default()
}

fn jog() -> JogSettings {
    JogSettings::default()
}

fn collision() -> crate::collision::CollisionOptions {
    crate::collision::CollisionOptions::default()
}

fn teleop() -> crate::node::TeleopSettings {
    crate::node::TeleopSettings::default()
}

fn twist_frames() -> Vec<&'static str> {
    TwistFrame::NAMES.to_vec()
}

fn gripper() -> GripperSettings {
    GripperSettings::default()
}

fn solver_names() -> Vec<&'static str> {
    SolverKind::ALL.iter().map(|k| k.name()).collect()
}

fn redundancy_names() -> Vec<&'static str> {
    Redundancy::ALL.iter().map(|r| r.name()).collect()
}

fn orientation_names() -> Vec<&'static str> {
    OrientationMode::NAMES.to_vec()
}

fn bend_keywords() -> Vec<&'static str> {
    BEND_KEYWORDS.iter().map(|(name, _)| *name).collect()
}

fn protocol_names() -> Vec<&'static str> {
    registry::names()
}

/// A list setting as one ROS string parameter.
fn comma_list<T: ToString>(items: &[T]) -> String {
    items.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

declare_params! {
    /// Everything `ik_node` can be told. Defaults are those of the
    /// settings ([`NodeSettings::default`](crate::node::NodeSettings::default)),
    /// as `arm_ik sim` runs.
    ///
    /// Doubles must be given as doubles (`-p rate_hz:=50.0`, not `50`): ROS
    /// parameters are typed and the node refuses an integer for a double.
    pub struct NodeParams for "ik_node" {
        /// URDF file to load; empty: use robot_description (parameter, else topic).
        urdf_path: String = String::new(), live: false;
        /// URDF XML text; used when urdf_path is empty; empty too: wait for the robot_description topic.
        robot_description: String = String::new(), live: false;
        /// First link of the chain; empty: the URDF's root link.
        base_link: String = String::new(), live: false;
        /// Last link of the chain; empty: the only leaf below the base, or the one leaf the others (a gripper's jaws) hang below.
        tip_link: String = String::new(), live: false;
        /// IK solver (see docs/solvers.md).
        solver: String = solver().solver.name().to_owned(), live: true, allowed: solver_names;
        /// A target counts as reached within this distance (m).
        position_tolerance: f64 = solver().position_tolerance, live: true;
        /// A target counts as reached within this angle (rad).
        orientation_tolerance: f64 = solver().orientation_tolerance, live: true;
        /// Wall-clock budget of one jacobian solve (ms).
        budget_ms: f64 = solver().budget_ms, live: true;
        /// Iteration cap (jacobian per attempt, ccd and fabrik per solve); 0: the solver's own.
        max_iterations: i64 = solver().max_iterations.map_or(0, i64::from), live: true;
        /// CCD: fraction of each joint's ideal turn applied per step, in (0, 1].
        greediness: f64 = solver().greediness, live: true;
        /// CCD: raise the greediness to 1 by the last iteration.
        incremental: bool = solver().incremental, live: true;
        /// CCD, FABRIK: start every solve from the rest pose instead of the current joints.
        reset: bool = solver().reset, live: true;
        /// Analytic solver: elbow bend, one of these keywords or a pole point "x,y,z" (m, base frame).
        bend: String = bend_name(&solver().bend), live: true, allowed: bend_keywords;
        /// Analytic solver: approach pitch (rad) of position-only targets; empty: the solver chooses.
        pitch: String = solver().pitch.map_or_else(String::new, |p| p.to_string()), live: true;
        /// Joints held where they are, comma-separated (e.g. "wrist_roll,elbow"); empty: none.
        lock: String = comma_list(&solver().lock), live: true;
        /// Narrower joint ranges, comma-separated JOINT=MIN:MAX (e.g. "shoulder=-0.5:1.0"); empty: none.
        clamp: String = comma_list(&solver().clamp), live: true;
        /// Jacobian solver: return the in-limit solution nearest the current joints found within the budget, not the first.
        closest: bool = solver().closest, live: true;
        /// With closest: joint weights of that distance, comma-separated JOINT=W (others weigh 1; 0 leaves a joint out); empty: all 1.
        closest_weight: String = comma_list(&solver().closest_weight), live: true;
        /// Jacobian solver: what a redundant arm's self-motion (more joints than the target constrains) is steered toward on every solve: limits (away from the joint limits), posture (toward the middle of the limits), manipulability (away from singular poses), off.
        redundancy: String = solver().redundancy.name().to_owned(), live: true, allowed: redundancy_names;
        /// Jacobian solver: gain of that steering in [0, 1]; 0: none.
        null_space_gain: f64 = solver().null_space_gain, live: true;
        /// Jacobian solver with the collision check on: also steer a redundant arm's self-motion away from the closest pair once it comes within this much of collision_margin (m), and Cartesian paths are planned to keep out of it where they can; 0: never.
        clearance_band: f64 = solver().clearance_band, live: true;
        /// What a pose target's orientation asks: full (the whole rotation), axis (only where the tool axis, tool_axis, points, a 5D target: the roll about it is free; jacobian, ccd and fabrik solvers) or ignore (the position only).
        target_orientation: String = solver().target_orientation.name().to_owned(), live: true, allowed: orientation_names;
        /// With target_orientation axis: the tool axis [x, y, z] in the tip frame (any non-zero length) that must point where the pose's same axis points, the roll about it free; [0.0, 0.0, 1.0] is the tip's +z, [1.0, 0.0, 0.0] a gripper along +x.
        tool_axis: Vec<f64> = OrientationMode::DEFAULT_TOOL_AXIS.to_vec(), live: true;
        /// Control rate (Hz): one solve at most, one motion step and one joint_states message per tick.
        rate_hz: f64 = motion().rate_hz, live: false;
        /// Speed limit of every joint (rad/s or m/s); 0: each joint's URDF velocity, capped at 2.
        max_velocity: f64 = motion().max_velocity.unwrap_or(0.0), live: true;
        /// Acceleration limit of every joint (rad/s^2 or m/s^2).
        max_acceleration: f64 = motion().max_acceleration, live: true;
        /// Follow a best-effort IK answer only when its position error is below this (m).
        max_best_effort_error: f64 = motion().max_best_effort_error, live: true;
        /// Targets stamped further than this from the node clock are rejected as stale (s).
        max_target_age: f64 = motion().max_target_age, live: true;
        /// Jog: top speed of the tip (m/s); faster twists are scaled down to it.
        jog_linear_speed: f64 = jog().linear_speed, live: true;
        /// Jog: top turning speed of the tip (rad/s).
        jog_angular_speed: f64 = jog().angular_speed, live: true;
        /// Jog: how fast the tip's speed may change (m/s^2).
        jog_linear_acceleration: f64 = jog().linear_acceleration, live: true;
        /// Jog: how fast the tip's turning speed may change (rad/s^2).
        jog_angular_acceleration: f64 = jog().angular_acceleration, live: true;
        /// Jog: a twist holds this long (s); then the tip slows to a stop.
        jog_timeout: f64 = jog().timeout, live: true;
        /// Jog: the frame of cmd_vel twists (and of target_twist with an empty frame_id).
        cmd_vel_frame: String = jog().cmd_vel_frame.name().to_owned(), live: true, allowed: twist_frames;
        /// Servo calibration and link file (YAML, e.g. config/servos_pwm.yaml); needed when sim is false.
        servo_config: String = String::new(), live: false;
        /// Drive virtual servos instead of hardware.
        sim: bool = true, live: false;
        /// Serial port of the servo bus or bridge (hardware output only).
        port: String = "/dev/ttyUSB0".into(), live: false;
        /// Servo protocol on the port; must match servo_config's kind (hardware output only).
        protocol: String = "pwm_bridge".into(), live: false, allowed: protocol_names;
        /// The gripper joint: auto (the only actuated joint off the chain, if exactly one), a joint name, or empty for none.
        gripper_joint: String = gripper().joint.name().to_owned(), live: false;
        /// Gripper position of open_gripper (URDF units); empty: the end of its range farther from zero.
        gripper_open: String = String::new(), live: true;
        /// Gripper position of close_gripper (URDF units); empty: the end of its range nearer zero.
        gripper_closed: String = String::new(), live: true;
        /// Servo load (fraction of its maximum) above which a gripper short of its command stalls: it holds where it is.
        gripper_stall_load: f64 = gripper().stall_load, live: true;
        /// Named joint poses (YAML: home, rest, ...) for the home and go_to services; empty: none.
        poses_file: String = String::new(), live: false;
        /// Check every motion for collisions of the arm with itself, the floor and the workspace's obstacles.
        collision_check: bool = collision().check, live: true;
        /// Workspace file (YAML: floor_z, obstacles), re-read when it changes; empty: the floor at the base link's lowest point.
        workspace_file: String = String::new(), live: true;
        /// Clearance every motion keeps from the floor, the obstacles and the arm itself (m).
        collision_margin: f64 = collision().margin, live: true;
        /// SRDF whose disable_collisions say which link pairs are not checked; empty: a matrix sampled as MoveIt's Setup Assistant does (cached).
        srdf_path: String = String::new(), live: false;
        /// Folders package:// meshes are looked for in (as DIR/PACKAGE/...), separated by ':'; AMENT_PREFIX_PATH's shares come first.
        mesh_path: String = String::new(), live: false;
        /// Radius of the capsule around a link without collision geometry, or whose mesh is missing (m).
        collision_capsule_radius: f64 = collision().capsule_radius, live: false;
        /// Program files (YAML lists of steps), comma-separated: one Trigger service each, ~/program/ followed by the file's stem; empty: none.
        programs: String = String::new(), live: false;
        /// ~/joint_command carries a leader arm's frames (leader_node): the arm first comes to the leader's pose at leader_startup_speed, then follows within its limits, and holds when the frames stop for leader_timeout.
        follow_leader: bool = false, live: false;
        /// With follow_leader: a leader silent for longer than this (s) makes the arm hold.
        leader_timeout: f64 = teleop().timeout, live: false;
        /// With follow_leader: joint speed of the approach to the leader's pose (rad/s or m/s).
        leader_startup_speed: f64 = teleop().startup_speed, live: false;
    }
}

/// Where the robot model comes from, in order of precedence.
#[derive(Debug, Clone, PartialEq)]
pub enum UrdfSource {
    /// `urdf_path`.
    File(PathBuf),
    /// The `robot_description` parameter.
    Xml(String),
    /// Neither parameter: the `robot_description` topic, as
    /// robot_state_publisher publishes it.
    Topic,
}

/// `""` as "not given".
fn non_empty(s: &str) -> Option<&str> {
    let s = s.trim();
    (!s.is_empty()).then_some(s)
}

impl NodeParams {
    /// Where to read the URDF: a path wins over XML text, and with neither
    /// the node waits for the topic (so a launch file that starts
    /// robot_state_publisher needs no extra parameter).
    pub fn urdf_source(&self) -> UrdfSource {
        if let Some(p) = non_empty(&self.urdf_path) {
            UrdfSource::File(PathBuf::from(p))
        } else if non_empty(&self.robot_description).is_some() {
            UrdfSource::Xml(self.robot_description.clone())
        } else {
            UrdfSource::Topic
        }
    }

    pub fn base(&self) -> Option<&str> {
        non_empty(&self.base_link)
    }

    pub fn tip(&self) -> Option<&str> {
        non_empty(&self.tip_link)
    }

    /// The poses file, when one is given.
    pub fn poses(&self) -> Option<&str> {
        non_empty(&self.poses_file)
    }

    /// The program files, in the order given.
    pub fn program_files(&self) -> Vec<&str> {
        self.programs.split(',').filter_map(non_empty).collect()
    }

    /// The programs' names (their files' stems), for one service each
    /// before the robot is known; the files are read and checked against
    /// it by `run::build_node`.
    pub fn program_names(&self) -> Vec<String> {
        self.program_files()
            .iter()
            .filter_map(|f| Path::new(f).file_stem())
            .map(|s| s.to_string_lossy().into_owned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ik::{Common, SolverConfig};
    use crate::model::Chain;
    use crate::node::settings::NodeSettings;

    const ARM: &str = include_str!("../../urdf/arm.urdf");

    fn arm() -> Chain {
        Chain::from_urdf_str(ARM, None, None).unwrap()
    }

    #[test]
    fn defaults_build_the_same_node_as_sim() {
        let p = NodeParams::default();
        assert_eq!(p.urdf_source(), UrdfSource::Topic);
        let s = p.settings().unwrap();
        assert_eq!(s, NodeSettings::default());
        let (solver, common) = s.solver_config(&arm()).unwrap();
        assert_eq!(solver, SolverConfig::default_for(SolverKind::Jacobian));
        assert_eq!(common, Common::default());
    }

    #[test]
    fn urdf_path_wins_over_xml_and_blank_means_unset() {
        let mut p = NodeParams {
            robot_description: "<robot/>".into(),
            urdf_path: "  ".into(),
            base_link: " ".into(),
            ..NodeParams::default()
        };
        assert_eq!(p.urdf_source(), UrdfSource::Xml("<robot/>".into()));
        assert_eq!(p.base(), None);
        p.urdf_path = "/x/arm.urdf".into();
        assert_eq!(p.urdf_source(), UrdfSource::File("/x/arm.urdf".into()));
    }

    #[test]
    fn every_parameter_is_declared_once_and_gets_and_sets_by_name() {
        let names: Vec<_> = NodeParams::SPECS.iter().map(|s| s.name).collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        let mut p = NodeParams::default();
        for spec in NodeParams::SPECS {
            assert!(!spec.description().is_empty() && !spec.description().starts_with(' '));
            let v = p.get(spec.name).unwrap();
            assert_eq!(v.kind(), spec.kind, "{}", spec.name);
            p.set(spec.name, v).unwrap();
        }
        assert_eq!(p, NodeParams::default());
        p.set("budget_ms", ParamValue::Double(2.0)).unwrap();
        assert_eq!(p.budget_ms, 2.0);
        let e = p.set("budget_ms", ParamValue::Integer(2)).unwrap_err();
        assert_eq!(e.name(), "budget_ms");
        let e = p.set("budget", ParamValue::Double(2.0)).unwrap_err();
        assert!(matches!(e, ParamError::Unknown { .. }), "{e}");
        assert!(p.get("budget").is_err());
    }

    #[test]
    fn the_schema_lists_defaults_closed_sets_and_what_is_live() {
        let schema = NodeParams::schema();
        let row = |name: &str| schema.iter().find(|r| r.name == name).unwrap();
        assert_eq!(
            row("solver").allowed,
            ["jacobian", "analytic", "ccd", "fabrik", "geo"]
        );
        assert_eq!(row("solver").default, ParamValue::String("jacobian".into()));
        assert_eq!(row("bend").allowed, ["closest", "positive", "negative"]);
        assert_eq!(row("budget_ms").default, ParamValue::Double(5.0));
        assert_eq!(row("max_iterations").default, ParamValue::Integer(0));
        assert!(row("pitch").allowed.is_empty());
        for fixed in [
            "urdf_path",
            "robot_description",
            "base_link",
            "tip_link",
            "servo_config",
        ] {
            assert!(!row(fixed).live, "{fixed}");
        }
        for fixed in ["port", "protocol", "sim"] {
            assert!(!row(fixed).live, "{fixed}");
        }
        for live in [
            "solver",
            "budget_ms",
            "position_tolerance",
            "greediness",
            "lock",
            "clamp",
        ] {
            assert!(row(live).live, "{live}");
        }
        for live in ["max_velocity", "max_acceleration"] {
            assert!(row(live).live, "{live}");
        }
        // The listed protocols are the ones the servo layer knows.
        for protocol in row("protocol").allowed.clone() {
            assert!(registry::find(protocol).is_some(), "{protocol}");
        }
    }
}
