//! Field-by-field conversions between r2r messages and the node core's
//! types. Nothing here decides anything: levels, messages, key/values and
//! which target to show come from [`crate::node`].
//!
//! Messages are built with struct literals, never `Default::default()`:
//! under r2r's `doc-only` feature (how these tests run without ROS)
//! `Default` calls the C type support and panics. The one exception is
//! `Marker`, whose field set differs between ROS distributions (Iron added
//! texture and mesh-file fields Humble lacks), so a literal would only
//! compile on one of them: [`markers`] fills a template the caller makes
//! with `Marker::default()` on a real ROS install.

pub mod collision;
pub mod interactive;
pub mod trajectory;
pub mod twist;

pub use collision::collision_markers;
pub use interactive::{marker_feedback, marker_snapshot, marker_update};
pub use trajectory::{cartesian_path, joint_trajectory, record_pose};
pub use twist::{twist_from_cmd_vel, twist_from_stamped};

use crate::ik::Target;
use crate::model::Transform;
use crate::node::{
    Command, Health, JointCommandMsg, JointState, LeaderMsg, Level, Refused, TargetMsg,
};
use nalgebra::UnitQuaternion;
use r2r::builtin_interfaces::msg::{Duration as RosDuration, Time};
use r2r::diagnostic_msgs::msg::{DiagnosticArray, DiagnosticStatus, KeyValue};
use r2r::geometry_msgs::msg::{Point, PointStamped, Pose, PoseStamped, Quaternion, Vector3};
use r2r::sensor_msgs::msg::JointState as RosJointState;
use r2r::std_msgs::msg::{ColorRGBA, Float64, Header};
use r2r::visualization_msgs::msg::{Marker, MarkerArray};

/// `diagnostic_msgs/DiagnosticStatus` levels (message constants, fixed by
/// the message definition; spelled out because r2r's bindgen types for
/// them differ between doc-only and real builds).
pub mod level {
    pub const OK: u8 = 0;
    pub const WARN: u8 = 1;
    pub const ERROR: u8 = 2;
}

/// `visualization_msgs/Marker` constants used here (see [`level`] for why
/// they are spelled out).
pub mod marker {
    pub const ARROW: i32 = 0;
    pub const SPHERE: i32 = 2;
    pub const ADD: i32 = 0;
    pub const DELETE: i32 = 2;
}

/// The diagnostic status name, as `rqt_robot_monitor` shows it.
pub const DIAGNOSTIC_NAME: &str = "arm_ik: ik_node";
/// Marker namespace in RViz.
pub const MARKER_NS: &str = "arm_ik";
/// Marker ids: one slot per marker so each update replaces the last.
pub const TARGET_MARKER_ID: i32 = 0;
pub const TIP_MARKER_ID: i32 = 1;

/// ROS time as seconds on the node clock (the unit the core uses).
pub fn secs(t: &Time) -> f64 {
    t.sec as f64 + t.nanosec as f64 * 1e-9
}

/// Seconds back to ROS time; non-finite or negative (before the epoch)
/// values give 0, ROS's "no time".
pub fn time(s: f64) -> Time {
    if !(s.is_finite() && s > 0.0) {
        return Time { sec: 0, nanosec: 0 };
    }
    let d = std::time::Duration::from_secs_f64(s);
    Time {
        sec: d.as_secs().min(i32::MAX as u64) as i32,
        nanosec: d.subsec_nanos(),
    }
}

/// A full pose target. The orientation is passed on as is: a zero
/// quaternion (an unset one) is the core's to reject, counted and reported.
pub fn target_from_pose(m: &PoseStamped) -> TargetMsg {
    let p = &m.pose.position;
    let q = &m.pose.orientation;
    TargetMsg {
        stamp: secs(&m.header.stamp),
        frame_id: m.header.frame_id.clone(),
        position: [p.x, p.y, p.z],
        orientation: Some([q.x, q.y, q.z, q.w]),
    }
}

/// A position-only target: the solver leaves the orientation free.
pub fn target_from_point(m: &PointStamped) -> TargetMsg {
    let p = &m.point;
    TargetMsg {
        stamp: secs(&m.header.stamp),
        frame_id: m.header.frame_id.clone(),
        position: [p.x, p.y, p.z],
        orientation: None,
    }
}

/// The tick's joint state. `stamp` is the ROS time when it was computed:
/// robot_state_publisher publishes no TF for a zero stamp.
pub fn joint_state(js: &JointState, stamp: Time) -> RosJointState {
    RosJointState {
        header: Header {
            stamp,
            frame_id: String::new(),
        },
        name: js.name.to_vec(),
        position: js.position.clone(),
        velocity: js.velocity.clone(),
        effort: Vec::new(),
    }
}

pub fn diagnostic_level(l: Level) -> u8 {
    match l {
        Level::Ok => level::OK,
        Level::Warn => level::WARN,
        Level::Error => level::ERROR,
    }
}

/// One `DiagnosticStatus` for the node, in an array as `/diagnostics`
/// carries it. `hardware_id` names what the node drives (the servo link).
pub fn diagnostics(
    health: &Health,
    values: Vec<(String, String)>,
    hardware_id: &str,
    stamp: Time,
) -> DiagnosticArray {
    DiagnosticArray {
        header: Header {
            stamp,
            frame_id: String::new(),
        },
        status: vec![DiagnosticStatus {
            level: diagnostic_level(health.level),
            name: DIAGNOSTIC_NAME.to_string(),
            message: health.message.clone(),
            hardware_id: hardware_id.to_string(),
            values: values
                .into_iter()
                .map(|(key, value)| KeyValue { key, value })
                .collect(),
        }],
    }
}

fn pose(t: &Transform) -> Pose {
    pose_msg(
        &t.translation.vector,
        &UnitQuaternion::from_rotation_matrix(&t.rotation),
    )
}

/// A `geometry_msgs/Pose` from a position and an orientation.
fn pose_msg(p: &nalgebra::Vector3<f64>, q: &UnitQuaternion<f64>) -> Pose {
    Pose {
        position: Point {
            x: p.x,
            y: p.y,
            z: p.z,
        },
        orientation: Quaternion {
            x: q.i,
            y: q.j,
            z: q.k,
            w: q.w,
        },
    }
}

fn color(r: f32, g: f32, b: f32, a: f32) -> ColorRGBA {
    ColorRGBA { r, g, b, a }
}

/// What RViz shows, in the chain's base frame: a sphere at the latest
/// solved target (green while the arm goes there, red while it holds
/// because the target is unreachable; deleted when there is none) and an
/// arrow along the x axis of the commanded tip pose.
///
/// `template` is any `Marker` (e.g. `Marker::default()`) whose fields this
/// function does not set keep their value; see the module docs for why.
pub fn markers(
    template: &Marker,
    base_link: &str,
    stamp: Time,
    target: Option<&Target>,
    holding: bool,
    tip: &Transform,
) -> MarkerArray {
    let header = Header {
        stamp,
        frame_id: base_link.to_string(),
    };
    let forever = RosDuration { sec: 0, nanosec: 0 };

    let mut t = template.clone();
    t.header = header.clone();
    t.ns = MARKER_NS.to_string();
    t.id = TARGET_MARKER_ID;
    t.type_ = marker::SPHERE;
    t.lifetime = forever.clone();
    t.frame_locked = false;
    t.scale = Vector3 {
        x: 0.02,
        y: 0.02,
        z: 0.02,
    };
    match target {
        Some(target) => {
            t.action = marker::ADD;
            let q = (target.orientation.shown()).unwrap_or_else(UnitQuaternion::identity);
            t.pose = pose_msg(&target.position, &q);
            t.color = if holding {
                color(0.9, 0.1, 0.1, 0.8)
            } else {
                color(0.1, 0.8, 0.2, 0.8)
            };
        }
        None => {
            t.action = marker::DELETE;
            t.pose = pose(&Transform::identity());
            t.color = color(0.0, 0.0, 0.0, 0.0);
        }
    }

    let mut a = template.clone();
    a.header = header;
    a.ns = MARKER_NS.to_string();
    a.id = TIP_MARKER_ID;
    a.type_ = marker::ARROW;
    a.action = marker::ADD;
    a.lifetime = forever;
    a.frame_locked = false;
    a.pose = pose(tip);
    // Arrow: length, shaft diameter, head diameter.
    a.scale = Vector3 {
        x: 0.05,
        y: 0.006,
        z: 0.01,
    };
    a.color = color(0.2, 0.4, 1.0, 0.9);

    MarkerArray {
        markers: vec![t, a],
    }
}

/// `~/gripper`: the gripper joint's position in its URDF units.
pub fn gripper_command(m: &Float64) -> Command {
    Command::Gripper { position: m.data }
}

/// `~/joint_command`: positions by joint name. Velocities and efforts are
/// not commands here (the node's limiter sets the speed) and are ignored;
/// a name without a position is the core's to refuse, naming it.
pub fn joint_command(m: &RosJointState) -> Command {
    Command::JointCommand(JointCommandMsg {
        name: m.name.clone(),
        position: m.position.clone(),
    })
}

/// `~/joint_command` of a node that follows a leader arm
/// (`follow_leader`): the leader's positions by joint name, one frame of
/// the teleoperation (the core checks the names and limits).
pub fn leader_frame(m: &RosJointState) -> Command {
    Command::Leader(LeaderMsg {
        name: m.name.clone(),
        position: m.position.clone(),
    })
}

/// The leader arm's `JointState` (`/leader/joint_states`, and the
/// follower's `~/joint_command`): positions by name, stamped, no
/// velocities (the hand that moves it is not measured).
pub fn leader_state(name: &[String], position: &[f64], stamp: Time) -> RosJointState {
    RosJointState {
        header: Header {
            stamp,
            frame_id: String::new(),
        },
        name: name.to_vec(),
        position: position.to_vec(),
        velocity: Vec::new(),
        effort: Vec::new(),
    }
}

/// The fields of a `std_srvs/srv/Trigger` response, for a service whose
/// request became a command: whether the core took it, and what it did or
/// why it refused (`relaxed: ...`). Plain data, so it is tested where
/// std_srvs is not built; the service builds the message from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriggerReply {
    pub success: bool,
    pub message: String,
}

/// The reply to a Trigger service that asked for `done` (e.g. "moving to
/// pose 'home'").
pub fn trigger_reply(taken: &Result<(), Refused>, done: &str) -> TriggerReply {
    match taken {
        Ok(()) => TriggerReply {
            success: true,
            message: done.to_owned(),
        },
        Err(r) => TriggerReply {
            success: false,
            message: format!("refused, {r}"),
        },
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::node::report::key_values;
    use crate::node::{HealthMonitor, NodeStatus};
    use nalgebra::{Translation3, Vector3 as V3};
    use std::sync::Arc;

    fn header(sec: i32, nanosec: u32, frame: &str) -> Header {
        Header {
            stamp: Time { sec, nanosec },
            frame_id: frame.to_string(),
        }
    }

    /// A blank Marker by struct literal: the doc-only bindings' field set
    /// (Iron and later). On a Humble install this test module would need
    /// `Marker::default()` instead, which works there.
    pub(crate) fn blank_marker() -> Marker {
        use r2r::sensor_msgs::msg::CompressedImage;
        use r2r::visualization_msgs::msg::MeshFile;
        Marker {
            header: header(0, 0, ""),
            ns: String::new(),
            id: 0,
            type_: 0,
            action: 0,
            pose: pose(&Transform::identity()),
            scale: Vector3 {
                x: 0.0,
                y: 0.0,
                z: 0.0,
            },
            color: color(0.0, 0.0, 0.0, 0.0),
            lifetime: RosDuration { sec: 0, nanosec: 0 },
            frame_locked: false,
            points: Vec::new(),
            colors: Vec::new(),
            texture_resource: String::new(),
            texture: CompressedImage {
                header: header(0, 0, ""),
                format: String::new(),
                data: Vec::new(),
            },
            uv_coordinates: Vec::new(),
            text: String::new(),
            mesh_resource: String::new(),
            mesh_file: MeshFile {
                filename: String::new(),
                data: Vec::new(),
            },
            mesh_use_embedded_materials: false,
        }
    }

    #[test]
    fn time_round_trips_and_zero_stays_zero() {
        let t = Time {
            sec: 1_700_000_000,
            nanosec: 250_000_000,
        };
        let s = secs(&t);
        assert_eq!(s, 1_700_000_000.25);
        let back = time(s);
        assert_eq!(back.sec, t.sec);
        assert!(back.nanosec.abs_diff(t.nanosec) < 1_000);
        assert_eq!(secs(&time(0.0)), 0.0);
        assert_eq!(secs(&time(f64::NAN)), 0.0);
        assert_eq!(secs(&time(-3.0)), 0.0);
    }

    #[test]
    fn pose_stamped_becomes_a_pose_target() {
        let m = PoseStamped {
            header: header(12, 500_000_000, "base_link"),
            pose: Pose {
                position: Point {
                    x: 0.2,
                    y: -0.05,
                    z: 0.15,
                },
                orientation: Quaternion {
                    x: 0.0,
                    y: 0.6,
                    z: 0.0,
                    w: 0.8,
                },
            },
        };
        let t = target_from_pose(&m);
        assert_eq!(t.stamp, 12.5);
        assert_eq!(t.frame_id, "base_link");
        assert_eq!(t.position, [0.2, -0.05, 0.15]);
        assert_eq!(t.orientation, Some([0.0, 0.6, 0.0, 0.8]));
    }

    #[test]
    fn point_stamped_becomes_a_position_target() {
        let m = PointStamped {
            header: header(0, 0, ""),
            point: Point {
                x: 0.1,
                y: 0.0,
                z: 0.3,
            },
        };
        assert_eq!(target_from_point(&m), TargetMsg::position([0.1, 0.0, 0.3]));
    }

    #[test]
    fn joint_state_keeps_order_and_the_given_stamp() {
        let js = JointState {
            stamp: 3.0,
            name: Arc::from(vec!["a".to_string(), "b".to_string()]),
            position: vec![0.1, -0.2],
            velocity: vec![0.0, 0.5],
        };
        let stamp = Time {
            sec: 1_700_000_000,
            nanosec: 7,
        };
        let m = joint_state(&js, stamp.clone());
        assert_eq!(m.header.stamp, stamp);
        assert_eq!(m.name, vec!["a", "b"]);
        assert_eq!(m.position, vec![0.1, -0.2]);
        assert_eq!(m.velocity, vec![0.0, 0.5]);
        assert!(m.effort.is_empty());
    }

    #[test]
    fn diagnostics_carry_level_message_and_values() {
        let status = NodeStatus::new(crate::ik::SolverKind::Ccd);
        let health = HealthMonitor::new().check(&status, 50.0);
        let values = key_values(&status);
        let n = values.len();
        let m = diagnostics(&health, values, "virtual", time(5.0));
        assert_eq!(m.header.stamp.sec, 5);
        assert_eq!(m.status.len(), 1);
        let s = &m.status[0];
        assert_eq!(s.level, level::OK);
        assert_eq!(s.name, "arm_ik: ik_node");
        assert_eq!(s.message, "waiting for a target");
        assert_eq!(s.hardware_id, "virtual");
        assert_eq!(s.values.len(), n);
        assert!(
            s.values
                .iter()
                .any(|kv| kv.key == "solver" && kv.value == "ccd")
        );
        assert_eq!(diagnostic_level(Level::Warn), level::WARN);
        assert_eq!(diagnostic_level(Level::Error), level::ERROR);
    }

    #[test]
    fn markers_show_target_and_tip_in_the_base_frame() {
        let tip = Transform::from_parts(
            Translation3::new(0.2, 0.0, 0.1),
            nalgebra::Rotation3::from_axis_angle(&V3::z_axis(), std::f64::consts::FRAC_PI_2),
        );
        let target = Target::position(V3::new(0.21, 0.01, 0.1));
        let m = markers(
            &blank_marker(),
            "base_link",
            time(2.0),
            Some(&target),
            false,
            &tip,
        );
        assert_eq!(m.markers.len(), 2);
        let (t, a) = (&m.markers[0], &m.markers[1]);
        for x in [t, a] {
            assert_eq!(x.header.frame_id, "base_link");
            assert_eq!(x.header.stamp.sec, 2);
            assert_eq!(x.ns, "arm_ik");
            assert_eq!(x.action, marker::ADD);
        }
        assert_eq!((t.id, t.type_), (TARGET_MARKER_ID, marker::SPHERE));
        assert_eq!(t.pose.position.x, 0.21);
        assert_eq!(t.pose.orientation.w, 1.0);
        assert!(t.color.g > t.color.r, "green while reaching");
        assert_eq!((a.id, a.type_), (TIP_MARKER_ID, marker::ARROW));
        assert_eq!(a.pose.position.x, 0.2);
        assert_eq!(a.pose.position.z, 0.1);
        // 90 degrees about z: (0, 0, sin 45, cos 45).
        assert!((a.pose.orientation.z - 0.5f64.sqrt()).abs() < 1e-12);
        assert!((a.pose.orientation.w - 0.5f64.sqrt()).abs() < 1e-12);

        let m = markers(
            &blank_marker(),
            "base_link",
            time(2.0),
            Some(&target),
            true,
            &tip,
        );
        assert!(
            m.markers[0].color.r > m.markers[0].color.g,
            "red while holding"
        );
        let m = markers(&blank_marker(), "base_link", time(2.0), None, false, &tip);
        assert_eq!(m.markers[0].action, marker::DELETE);
        assert_eq!(m.markers[1].action, marker::ADD);
    }

    #[test]
    fn float64_becomes_a_gripper_command() {
        let m = Float64 { data: 0.4 };
        assert_eq!(gripper_command(&m), Command::Gripper { position: 0.4 });
    }

    #[test]
    fn a_joint_state_becomes_a_joint_command_by_name() {
        let m = RosJointState {
            header: header(1, 0, ""),
            name: vec!["elbow".into(), "gripper".into()],
            position: vec![0.5, 0.3],
            velocity: vec![9.0, 9.0],
            effort: Vec::new(),
        };
        assert_eq!(
            joint_command(&m),
            Command::JointCommand(JointCommandMsg {
                name: vec!["elbow".into(), "gripper".into()],
                position: vec![0.5, 0.3],
            })
        );
    }

    #[test]
    fn a_leader_state_is_a_leader_frame_for_a_follower() {
        let names = ["elbow".to_string(), "gripper".to_string()];
        let m = leader_state(&names, &[0.5, 0.3], time(2.5));
        assert_eq!(m.header.stamp.sec, 2);
        assert!(m.velocity.is_empty() && m.effort.is_empty());
        assert_eq!(
            leader_frame(&m),
            Command::Leader(LeaderMsg {
                name: names.to_vec(),
                position: vec![0.5, 0.3],
            })
        );
    }

    #[test]
    fn trigger_replies_say_what_was_done_or_why_not() {
        let ok = trigger_reply(&Ok(()), "relaxed");
        assert_eq!((ok.success, ok.message.as_str()), (true, "relaxed"));
        let refused = Refused {
            reason: crate::node::RejectReason::Relaxed,
            why: "the servos are relaxed: enable them first".into(),
        };
        let no = trigger_reply(&Err(refused), "moving to pose 'home'");
        assert!(!no.success);
        assert_eq!(
            no.message,
            "refused, relaxed: the servos are relaxed: enable them first"
        );
    }
}
