//! What the node can be told while it runs, from any front-end: ROS topics
//! and services, JSON lines on stdin (`arm_ik sim`), tests through the
//! in-memory transport. Every input becomes one [`Command`] and goes
//! through [`NodeCore::command`](super::NodeCore::command), so each front-end
//! only converts its messages and the decisions stay in the core.

use super::cartesian::CartesianPathMsg;
use super::jog::TwistMsg;
use super::marker::MarkerFeedback;
use super::msg::{JointCommandMsg, TargetMsg};
use super::status::RejectReason;
use super::teleop::LeaderMsg;
use super::trajectory::TrajectoryMsg;
use serde::{Deserialize, Serialize};

/// One input to the node core.
///
/// JSON form: an object with `"type"` naming the variant in snake_case and
/// the variant's fields beside it, e.g. `{"type":"target","position":[0.2,0,0.15]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Command {
    /// A tip target: a pose, or a position when it has no orientation.
    Target(TargetMsg),
    /// A velocity for the tip: jog (`target_twist`, `cmd_vel`).
    Twist(TwistMsg),
    /// What RViz says about the target marker: a drag.
    MarkerFeedback(MarkerFeedback),
    /// A move in joint space to these positions (any subset of the joints
    /// the node moves). Naming a joint of the arm replaces the target being
    /// followed, as a new target replaces a joint command.
    JointCommand(JointCommandMsg),
    /// The gripper joint's position (URDF units), clamped to its limits.
    Gripper { position: f64 },
    /// The gripper to its open position (`gripper_open`).
    OpenGripper,
    /// The gripper to its closed position (`gripper_closed`).
    CloseGripper,
    /// Every servo limp; commands that move the arm are refused until
    /// [`Command::Enable`].
    Relax,
    /// The servos hold again, from where they are, with no jump.
    Enable,
    /// A move in joint space to a named pose of the poses file.
    Pose { name: String },
    /// A frame of the leader arm (teleoperation): positions by the
    /// follower's joint names.
    Leader(LeaderMsg),
    /// A timed joint trajectory (`~/joint_trajectory`); replaces what is
    /// left of the one before.
    Trajectory(TrajectoryMsg),
    /// The tip's poses at given times, known whole: planned whole while
    /// the arm holds, then run as a joint trajectory.
    CartesianPath(CartesianPathMsg),
    /// Stores where the arm is (measured when the servos measure) as a
    /// named pose in the poses file; allowed while relaxed.
    RecordPose { name: String },
    /// Runs a program (a list of steps) the node was given.
    Program { name: String },
}

impl Command {
    /// True for the commands that move the arm (all but relax, enable and
    /// recording a pose).
    pub fn moves(&self) -> bool {
        !matches!(
            self,
            Command::Relax | Command::Enable | Command::RecordPose { .. }
        )
    }
}

impl Command {
    /// Every command's `"type"`, as its JSON line names it: what error
    /// messages list and the stdin table of docs/cli.md documents (a test keeps
    /// both equal to the variants serde reads).
    pub const TYPES: &'static [&'static str] = &[
        "target",
        "twist",
        "marker_feedback",
        "joint_command",
        "gripper",
        "open_gripper",
        "close_gripper",
        "relax",
        "enable",
        "pose",
        "leader",
        "trajectory",
        "cartesian_path",
        "record_pose",
        "program",
    ];
}

/// A command the core did not take, and exactly why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {why}", reason.name())]
pub struct Refused {
    pub reason: RejectReason,
    pub why: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`Command::TYPES`] is the list serde reads: the variants its
    /// unknown-variant error names, in the same order.
    #[test]
    fn the_list_of_types_is_every_variant() {
        let e = serde_json::from_str::<Command>(r#"{"type":"?"}"#)
            .unwrap_err()
            .to_string();
        let listed: Vec<&str> = e
            .split("expected one of ")
            .nth(1)
            .unwrap_or_else(|| panic!("{e}"))
            .split(", ")
            .map(|t| t.trim_matches(|c: char| c == '`' || !c.is_ascii() || c.is_whitespace()))
            .map(|t| t.split('`').next().unwrap_or(t))
            .collect();
        assert_eq!(listed, Command::TYPES, "{e}");
    }

    #[test]
    fn commands_read_from_json_with_their_type() {
        let c: Command =
            serde_json::from_str(r#"{"type":"target","position":[0.2,0.0,0.15]}"#).unwrap();
        assert_eq!(c, Command::Target(TargetMsg::position([0.2, 0.0, 0.15])));
        let e = serde_json::from_str::<Command>(r#"{"type":"targte","position":[0,0,0]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("targte"), "{e}");
    }

    #[test]
    fn every_command_has_a_json_line() {
        let lines = [
            (
                r#"{"type":"joint_command","name":["elbow"],"position":[0.5]}"#,
                Command::JointCommand(JointCommandMsg {
                    name: vec!["elbow".into()],
                    position: vec![0.5],
                }),
            ),
            (
                r#"{"type":"gripper","position":0.3}"#,
                Command::Gripper { position: 0.3 },
            ),
            (r#"{"type":"open_gripper"}"#, Command::OpenGripper),
            (r#"{"type":"close_gripper"}"#, Command::CloseGripper),
            (r#"{"type":"relax"}"#, Command::Relax),
            (r#"{"type":"enable"}"#, Command::Enable),
            (
                r#"{"type":"pose","name":"home"}"#,
                Command::Pose {
                    name: "home".into(),
                },
            ),
            (
                r#"{"type":"record_pose","name":"pick"}"#,
                Command::RecordPose {
                    name: "pick".into(),
                },
            ),
            (
                r#"{"type":"program","name":"pick_place"}"#,
                Command::Program {
                    name: "pick_place".into(),
                },
            ),
            (
                r#"{"type":"leader","name":["elbow"],"position":[0.5]}"#,
                Command::Leader(LeaderMsg {
                    name: vec!["elbow".into()],
                    position: vec![0.5],
                }),
            ),
            (
                r#"{"type":"trajectory","stamp":0.0,"joint_names":["elbow"],"points":[{"positions":[1.0],"time_from_start":1.5}]}"#,
                Command::Trajectory(TrajectoryMsg {
                    stamp: 0.0,
                    joint_names: vec!["elbow".into()],
                    points: vec![crate::node::trajectory::TrajectoryPoint {
                        positions: vec![1.0],
                        velocities: Vec::new(),
                        accelerations: Vec::new(),
                        time_from_start: 1.5,
                    }],
                }),
            ),
            (
                r#"{"type":"cartesian_path","stamp":0.0,"frame_id":"","points":[{"position":[0.2,0.0,0.1],"time_from_start":1.0}]}"#,
                Command::CartesianPath(CartesianPathMsg {
                    stamp: 0.0,
                    frame_id: String::new(),
                    points: vec![crate::node::cartesian::CartesianPoint {
                        position: [0.2, 0.0, 0.1],
                        orientation: None,
                        time_from_start: 1.0,
                    }],
                }),
            ),
        ];
        for (line, want) in lines {
            assert_eq!(
                serde_json::from_str::<Command>(line).unwrap(),
                want,
                "{line}"
            );
            assert_eq!(serde_json::to_string(&want).unwrap(), line);
        }
    }

    /// What a stdin front-end reads for a jog and a drag.
    #[test]
    fn twists_and_marker_feedback_read_from_json() {
        let c: Command =
            serde_json::from_str(r#"{"type":"twist","frame_id":"base_link","linear":[0.05,0,0]}"#)
                .unwrap();
        assert_eq!(
            c,
            Command::Twist(TwistMsg::new("base_link", [0.05, 0.0, 0.0], [0.0; 3]))
        );
        let c: Command = serde_json::from_str(
            r#"{"type":"marker_feedback","event":"pose_update","position":[0.2,0,0.1]}"#,
        )
        .unwrap();
        let Command::MarkerFeedback(fb) = c else {
            panic!("{c:?}");
        };
        assert_eq!(fb.event, super::super::marker::FeedbackEvent::PoseUpdate);
        assert_eq!(
            (fb.position, fb.orientation),
            ([0.2, 0.0, 0.1], [0.0, 0.0, 0.0, 1.0])
        );
        let e = serde_json::from_str::<Command>(r#"{"type":"twist","linaer":[1,0,0]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("linaer"), "{e}");
    }
}
