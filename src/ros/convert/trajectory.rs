//! `~/joint_trajectory` (`trajectory_msgs/JointTrajectory`, the topic
//! interface of ros2_control's joint_trajectory_controller),
//! `~/cartesian_path` (`trajectory_msgs/MultiDOFJointTrajectory`, the
//! tip's poses at their times) and `~/record_pose` (`std_msgs/String`, the
//! pose's name). Field by field: the checks (unknown joints, limits,
//! times, frames) are the core's.

use super::secs;
use crate::node::{CartesianPathMsg, CartesianPoint, Command, TrajectoryMsg, TrajectoryPoint};
use r2r::builtin_interfaces::msg::Duration as RosDuration;
use r2r::std_msgs::msg::String as RosString;
use r2r::trajectory_msgs::msg::{JointTrajectory, MultiDOFJointTrajectory};

/// A duration in seconds (`time_from_start`).
fn duration_secs(d: &RosDuration) -> f64 {
    d.sec as f64 + d.nanosec as f64 * 1e-9
}

/// A joint trajectory: a zero header stamp means "start now", as for the
/// controller; efforts are not commands here and are ignored.
pub fn joint_trajectory(m: &JointTrajectory) -> Command {
    Command::Trajectory(TrajectoryMsg {
        stamp: secs(&m.header.stamp),
        joint_names: m.joint_names.clone(),
        points: m
            .points
            .iter()
            .map(|p| TrajectoryPoint {
                positions: p.positions.clone(),
                velocities: p.velocities.clone(),
                accelerations: p.accelerations.clone(),
                time_from_start: duration_secs(&p.time_from_start),
            })
            .collect(),
    })
}

/// A Cartesian path: each point's first transform is where the tip is
/// due (in the header's frame; the chain's base link or empty) at its
/// `time_from_start`; a zero header stamp means "as soon as planned".
/// `joint_names` (MoveIt's virtual joint) and velocities are not used. A
/// point without a transform has no position: NaN, which the core
/// refuses, naming the point.
pub fn cartesian_path(m: &MultiDOFJointTrajectory) -> Command {
    Command::CartesianPath(CartesianPathMsg {
        stamp: secs(&m.header.stamp),
        frame_id: m.header.frame_id.clone(),
        points: m
            .points
            .iter()
            .map(|p| {
                let (position, orientation) = match p.transforms.first() {
                    Some(t) => (
                        [t.translation.x, t.translation.y, t.translation.z],
                        Some([t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w]),
                    ),
                    None => ([f64::NAN; 3], None),
                };
                CartesianPoint {
                    position,
                    orientation,
                    time_from_start: duration_secs(&p.time_from_start),
                }
            })
            .collect(),
    })
}

/// A pose to record where the arm is, under the name the message holds.
pub fn record_pose(m: &RosString) -> Command {
    Command::RecordPose {
        name: m.data.trim().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use r2r::builtin_interfaces::msg::Time;
    use r2r::std_msgs::msg::Header;
    use r2r::trajectory_msgs::msg::JointTrajectoryPoint;

    fn point(q: f64, v: Vec<f64>, sec: i32, nanosec: u32) -> JointTrajectoryPoint {
        JointTrajectoryPoint {
            positions: vec![q, -q],
            velocities: v,
            accelerations: Vec::new(),
            effort: Vec::new(),
            time_from_start: RosDuration { sec, nanosec },
        }
    }

    #[test]
    fn a_joint_trajectory_keeps_names_points_and_times() {
        let m = JointTrajectory {
            header: Header {
                stamp: Time { sec: 0, nanosec: 0 },
                frame_id: String::new(),
            },
            joint_names: vec!["shoulder".into(), "elbow".into()],
            points: vec![
                point(0.5, Vec::new(), 1, 500_000_000),
                point(0.7, vec![0.0, 0.1], 3, 0),
            ],
        };
        let Command::Trajectory(t) = joint_trajectory(&m) else {
            panic!("not a trajectory");
        };
        assert_eq!(t.stamp, 0.0, "a zero stamp: start now");
        assert_eq!(t.joint_names, ["shoulder", "elbow"]);
        assert_eq!(t.points.len(), 2);
        assert_eq!(t.points[0].positions, [0.5, -0.5]);
        assert_eq!(t.points[0].time_from_start, 1.5);
        assert!(t.points[0].velocities.is_empty());
        assert_eq!(t.points[1].velocities, [0.0, 0.1]);
        assert_eq!(t.points[1].time_from_start, 3.0);
    }

    #[test]
    fn a_multi_dof_trajectory_is_the_tips_path() {
        use r2r::geometry_msgs::msg::{Quaternion, Transform, Twist, Vector3};
        use r2r::trajectory_msgs::msg::MultiDOFJointTrajectoryPoint;
        let pose = |x: f64| Transform {
            translation: Vector3 { x, y: 0.0, z: 0.1 },
            rotation: Quaternion {
                x: 0.0,
                y: 0.0,
                z: 0.0,
                w: 1.0,
            },
        };
        let point = |transforms: Vec<Transform>, sec: i32| MultiDOFJointTrajectoryPoint {
            transforms,
            velocities: Vec::<Twist>::new(),
            accelerations: Vec::<Twist>::new(),
            time_from_start: RosDuration { sec, nanosec: 0 },
        };
        let m = MultiDOFJointTrajectory {
            header: Header {
                stamp: Time { sec: 0, nanosec: 0 },
                frame_id: "base_link".into(),
            },
            joint_names: vec!["tool".into()],
            points: vec![point(vec![pose(0.2)], 1), point(Vec::new(), 2)],
        };
        let Command::CartesianPath(c) = cartesian_path(&m) else {
            panic!("not a path");
        };
        assert_eq!((c.stamp, c.frame_id.as_str()), (0.0, "base_link"));
        assert_eq!(c.points[0].position, [0.2, 0.0, 0.1]);
        assert_eq!(c.points[0].orientation, Some([0.0, 0.0, 0.0, 1.0]));
        assert_eq!(c.points[0].time_from_start, 1.0);
        assert!(c.points[1].position.iter().all(|x| x.is_nan()));
    }

    #[test]
    fn a_string_names_the_pose_to_record() {
        let m = RosString {
            data: " grasp\n".into(),
        };
        assert_eq!(
            record_pose(&m),
            Command::RecordPose {
                name: "grasp".into()
            }
        );
    }
}
