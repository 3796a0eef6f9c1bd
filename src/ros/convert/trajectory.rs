//! `~/joint_trajectory` (`trajectory_msgs/JointTrajectory`, the topic
//! interface of ros2_control's joint_trajectory_controller) and
//! `~/record_pose` (`std_msgs/String`, the pose's name). Field by field:
//! the checks (unknown joints, limits, times) are the core's.

use super::secs;
use crate::node::{Command, TrajectoryMsg, TrajectoryPoint};
use r2r::builtin_interfaces::msg::Duration as RosDuration;
use r2r::std_msgs::msg::String as RosString;
use r2r::trajectory_msgs::msg::JointTrajectory;

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
