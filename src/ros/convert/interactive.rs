//! The target marker's interactive-marker protocol messages
//! (`visualization_msgs`): the server state lives in
//! [`crate::node::marker`]; this only converts it.
//!
//! The controls carry no `Marker`s (RViz draws the standard arrows and
//! rings for empty controls), so nothing here depends on the Marker
//! field set that differs between ROS distributions.

use crate::node::marker::{self as core, Interaction, Orientation};
use crate::node::{FeedbackEvent, MarkerFeedback, MarkerSnapshot, MarkerUpdate};
use r2r::builtin_interfaces::msg::Time;
use r2r::geometry_msgs::msg::{Point, Pose, Quaternion};
use r2r::std_msgs::msg::Header;
use r2r::visualization_msgs::msg::{
    InteractiveMarker, InteractiveMarkerControl, InteractiveMarkerFeedback, InteractiveMarkerPose,
    InteractiveMarkerUpdate,
};
use r2r::visualization_msgs::srv::GetInteractiveMarkers;

/// Message constants (fixed by the message definitions; spelled out as
/// `convert::level` explains).
pub mod im {
    /// `InteractiveMarkerUpdate.type` (the other, KEEP_ALIVE = 0, is not
    /// sent by ROS 2 servers).
    pub const UPDATE: u8 = 1;
    /// `InteractiveMarkerControl.orientation_mode`.
    pub const INHERIT: u8 = 0;
    pub const FIXED: u8 = 1;
    /// `InteractiveMarkerControl.interaction_mode`.
    pub const MOVE_AXIS: u8 = 3;
    pub const ROTATE_AXIS: u8 = 5;
    /// `InteractiveMarkerFeedback.event_type`.
    pub const FB_KEEP_ALIVE: u8 = 0;
    pub const POSE_UPDATE: u8 = 1;
    pub const MENU_SELECT: u8 = 2;
    pub const BUTTON_CLICK: u8 = 3;
    pub const MOUSE_DOWN: u8 = 4;
    pub const MOUSE_UP: u8 = 5;
}

/// Stamped zero: RViz keeps a zero-stamped marker locked to its frame.
fn header(frame_id: &str) -> Header {
    Header {
        stamp: Time { sec: 0, nanosec: 0 },
        frame_id: frame_id.to_string(),
    }
}

fn pose(p: &[f64; 3], q: &[f64; 4]) -> Pose {
    Pose {
        position: Point {
            x: p[0],
            y: p[1],
            z: p[2],
        },
        orientation: Quaternion {
            x: q[0],
            y: q[1],
            z: q[2],
            w: q[3],
        },
    }
}

fn control(c: &core::Control) -> InteractiveMarkerControl {
    let [x, y, z, w] = c.orientation;
    InteractiveMarkerControl {
        name: c.name.to_string(),
        orientation: Quaternion { x, y, z, w },
        orientation_mode: match c.orientation_mode {
            Orientation::Inherit => im::INHERIT,
            Orientation::Fixed => im::FIXED,
        },
        interaction_mode: match c.interaction {
            Interaction::MoveAxis => im::MOVE_AXIS,
            Interaction::RotateAxis => im::ROTATE_AXIS,
        },
        always_visible: false,
        markers: Vec::new(),
        independent_marker_orientation: false,
        description: String::new(),
    }
}

/// The whole marker.
pub fn interactive_marker(m: &core::InteractiveMarker) -> InteractiveMarker {
    InteractiveMarker {
        header: header(&m.frame_id),
        pose: pose(&m.position, &m.orientation),
        name: m.name.to_string(),
        description: m.description.to_string(),
        scale: m.scale,
        menu_entries: Vec::new(),
        controls: m.controls.iter().map(control).collect(),
    }
}

fn marker_pose(p: &core::MarkerPose) -> InteractiveMarkerPose {
    InteractiveMarkerPose {
        header: header(&p.frame_id),
        pose: pose(&p.position, &p.orientation),
        name: p.name.to_string(),
    }
}

/// One message for `<ns>/update`. `server_id` stays empty, as ROS 2's
/// servers leave it (its client reads nothing from it).
pub fn marker_update(u: &MarkerUpdate) -> InteractiveMarkerUpdate {
    InteractiveMarkerUpdate {
        server_id: String::new(),
        seq_num: u.seq_num,
        type_: im::UPDATE,
        markers: u.markers.iter().map(interactive_marker).collect(),
        poses: u.poses.iter().map(marker_pose).collect(),
        erases: Vec::new(),
    }
}

/// The answer to `<ns>/get_interactive_markers`.
pub fn marker_snapshot(s: &MarkerSnapshot) -> GetInteractiveMarkers::Response {
    GetInteractiveMarkers::Response {
        sequence_number: s.sequence_number,
        markers: s.markers.iter().map(interactive_marker).collect(),
    }
}

/// Feedback from `<ns>/feedback`; an event type the protocol does not
/// define becomes a keep-alive, which moves nothing.
pub fn marker_feedback(m: &InteractiveMarkerFeedback) -> MarkerFeedback {
    let p = &m.pose.position;
    let q = &m.pose.orientation;
    MarkerFeedback {
        event: match m.event_type {
            im::POSE_UPDATE => FeedbackEvent::PoseUpdate,
            im::MENU_SELECT => FeedbackEvent::MenuSelect,
            im::BUTTON_CLICK => FeedbackEvent::ButtonClick,
            im::MOUSE_DOWN => FeedbackEvent::MouseDown,
            im::MOUSE_UP => FeedbackEvent::MouseUp,
            _ => FeedbackEvent::KeepAlive,
        },
        marker_name: m.marker_name.clone(),
        frame_id: m.header.frame_id.clone(),
        position: [p.x, p.y, p.z],
        orientation: [q.x, q.y, q.z, q.w],
        client_id: m.client_id.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Transform;
    use crate::node::marker::{MARKER_NAME, TargetMarker};
    use nalgebra::Translation3;

    fn tip_at(x: f64) -> Transform {
        Transform::from_parts(
            Translation3::new(x, 0.0, 0.2),
            nalgebra::Rotation3::identity(),
        )
    }

    #[test]
    fn the_first_update_carries_the_marker_with_six_controls() {
        let mut server = TargetMarker::new("base_link", 0.1);
        let u = marker_update(&server.update(&tip_at(0.2)).unwrap());
        assert_eq!((u.seq_num, u.type_), (1, im::UPDATE));
        assert_eq!(u.server_id, "");
        assert!(u.poses.is_empty() && u.erases.is_empty());
        let m = &u.markers[0];
        assert_eq!(
            (m.name.as_str(), m.header.frame_id.as_str()),
            (MARKER_NAME, "base_link")
        );
        assert_eq!((m.header.stamp.sec, m.header.stamp.nanosec), (0, 0));
        assert_eq!((m.pose.position.x, m.pose.orientation.w), (0.2, 1.0));
        assert_eq!(m.scale, 0.1);
        let modes: Vec<_> = m
            .controls
            .iter()
            .map(|c| (c.name.as_str(), c.interaction_mode, c.orientation_mode))
            .collect();
        assert_eq!(
            modes,
            [
                ("move_x", im::MOVE_AXIS, im::FIXED),
                ("rotate_x", im::ROTATE_AXIS, im::INHERIT),
                ("move_y", im::MOVE_AXIS, im::FIXED),
                ("rotate_y", im::ROTATE_AXIS, im::INHERIT),
                ("move_z", im::MOVE_AXIS, im::FIXED),
                ("rotate_z", im::ROTATE_AXIS, im::INHERIT),
            ]
        );
        // y's control axis: x turned +90 degrees about z.
        let q = &m.controls[2].orientation;
        assert!((q.z - q.w).abs() < 1e-12 && q.x == 0.0 && q.y == 0.0);
    }

    #[test]
    fn poses_and_the_service_answer() {
        let mut server = TargetMarker::new("base_link", 0.1);
        server.update(&tip_at(0.2));
        let u = marker_update(&server.update(&tip_at(0.25)).unwrap());
        assert_eq!((u.seq_num, u.type_, u.markers.len()), (2, im::UPDATE, 0));
        let p = &u.poses[0];
        assert_eq!((p.name.as_str(), p.pose.position.x), (MARKER_NAME, 0.25));
        assert_eq!((p.header.stamp.sec, p.header.stamp.nanosec), (0, 0));
        // Nothing moved: nothing sent (no keep-alive).
        assert!(server.update(&tip_at(0.25)).is_none());
        let r = marker_snapshot(&server.snapshot());
        assert_eq!(r.sequence_number, 2);
        assert_eq!(r.markers.len(), 1);
        assert_eq!(r.markers[0].pose.position.x, 0.25);
    }

    #[test]
    fn feedback_events_map_by_number() {
        let fb = |event_type| InteractiveMarkerFeedback {
            header: header("base_link"),
            client_id: "/rviz2/InteractiveMarkers".into(),
            marker_name: MARKER_NAME.into(),
            control_name: "move_x".into(),
            event_type,
            pose: pose(&[0.21, -0.01, 0.18], &[0.0, 0.0, 0.0, 1.0]),
            menu_entry_id: 0,
            mouse_point: Point {
                x: 0.0,
                y: 0.0,
                z: 0.0,
            },
            mouse_point_valid: false,
        };
        let f = marker_feedback(&fb(im::POSE_UPDATE));
        assert_eq!(f.event, FeedbackEvent::PoseUpdate);
        assert_eq!(f.position, [0.21, -0.01, 0.18]);
        assert_eq!(f.orientation, [0.0, 0.0, 0.0, 1.0]);
        assert_eq!(
            (f.frame_id.as_str(), f.marker_name.as_str()),
            ("base_link", MARKER_NAME)
        );
        assert_eq!(f.client_id, "/rviz2/InteractiveMarkers");
        for (n, e) in [
            (im::FB_KEEP_ALIVE, FeedbackEvent::KeepAlive),
            (im::MENU_SELECT, FeedbackEvent::MenuSelect),
            (im::BUTTON_CLICK, FeedbackEvent::ButtonClick),
            (im::MOUSE_DOWN, FeedbackEvent::MouseDown),
            (im::MOUSE_UP, FeedbackEvent::MouseUp),
            (77, FeedbackEvent::KeepAlive),
        ] {
            assert_eq!(marker_feedback(&fb(n)).event, e, "event_type {n}");
        }
    }
}
