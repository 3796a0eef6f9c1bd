//! The target marker: a 6-DOF interactive marker at the tip that RViz's
//! InteractiveMarkers display lets the user drag, without ROS.
//!
//! This is the server side of the interactive_markers protocol, as the
//! ROS 2 `interactive_markers` server speaks it on a namespace (`ik_node`
//! uses `~/target_marker`):
//!
//! * `<ns>/update` carries [`MarkerUpdate`]s (type UPDATE), each with a
//!   `seq_num` one higher than the last: the whole marker when it is
//!   created, then its pose whenever it moves. Nothing else: ROS 2 servers
//!   send no KEEP_ALIVE (Humble's client ignores one with a warning), and a
//!   ROS 2 client that sees a gap in the sequence resets, erasing every
//!   marker, a dragged one included, which ends the drag.
//! * `<ns>/get_interactive_markers` answers a [`MarkerSnapshot`]: the
//!   current `seq_num` and the full marker; RViz asks on connecting and
//!   drops the updates the snapshot already holds.
//! * `<ns>/feedback` brings [`MarkerFeedback`]: the pose while dragging
//!   (`PoseUpdate`), and `MouseDown` / `MouseUp` around a drag. Each
//!   `PoseUpdate` is echoed as a pose update, as the ROS 2 server does
//!   (its `processFeedback` sets the pose and applies the change), so every
//!   client, a second RViz too, shows the marker where it is held.
//!
//! The marker sits at the commanded tip and follows it whatever moves the
//! arm (targets, jog), except while it is dragged: then it stays where the
//! user holds it, and after the release it waits where it was let go
//! until the arm has got there as far as it can, then shows where the tip
//! really is (on a 5-joint arm the orientation the arm could reach).
//!
//! The marker is stamped zero (RViz then keeps it locked to the base
//! frame and sends feedback in that frame) and its controls carry no
//! shapes: the client draws the standard arrows and rings itself
//! (`autoComplete`), so no `visualization_msgs/Marker` is needed.

use super::msg::TargetMsg;
use super::status::RejectReason;
use crate::model::Transform;
use nalgebra::UnitQuaternion;
use serde::{Deserialize, Serialize};
use std::f64::consts::FRAC_1_SQRT_2;

/// The marker's name (RViz shows it; feedback names it).
pub const MARKER_NAME: &str = "tip_target";
/// Feedback from another client within this long of the last one is
/// refused while a drag is on (s), as the ROS server does: two RViz
/// windows must not fight over the arm.
pub const CLIENT_LOCK: f64 = 1.0;
/// The marker follows the tip in steps no smaller than these (m, rad),
/// so a still arm sends nothing.
const MOVE_EPS: f64 = 1e-4;
const TURN_EPS: f64 = 1e-3;

/// `InteractiveMarkerFeedback.event_type`, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedbackEvent {
    KeepAlive,
    PoseUpdate,
    MenuSelect,
    ButtonClick,
    MouseDown,
    MouseUp,
}

/// What a client says about the marker (`InteractiveMarkerFeedback`).
///
/// JSON form (a `{"type":"marker_feedback",...}` command line):
/// `{"event":"pose_update","marker_name":"tip_target","position":[x,y,z],
/// "orientation":[x,y,z,w],"frame_id":"base_link","client_id":""}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkerFeedback {
    pub event: FeedbackEvent,
    #[serde(default = "default_marker_name")]
    pub marker_name: String,
    /// The frame of the pose: the marker's, the base link (or empty).
    #[serde(default)]
    pub frame_id: String,
    #[serde(default)]
    pub position: [f64; 3],
    /// `x, y, z, w`.
    #[serde(default = "identity")]
    pub orientation: [f64; 4],
    /// Which RViz sent it.
    #[serde(default)]
    pub client_id: String,
}

fn default_marker_name() -> String {
    MARKER_NAME.to_string()
}

fn identity() -> [f64; 4] {
    [0.0, 0.0, 0.0, 1.0]
}

impl MarkerFeedback {
    /// A drag event from one client at a pose in the base frame.
    pub fn new(event: FeedbackEvent, position: [f64; 3], orientation: [f64; 4]) -> MarkerFeedback {
        MarkerFeedback {
            event,
            marker_name: default_marker_name(),
            frame_id: String::new(),
            position,
            orientation,
            client_id: String::new(),
        }
    }

    /// The feedback's pose as a target (stamped "now": RViz stamps
    /// frame-locked feedback with the time of its latest transform, not
    /// with when the mouse moved).
    pub fn target(&self) -> TargetMsg {
        TargetMsg {
            stamp: 0.0,
            frame_id: self.frame_id.clone(),
            position: self.position,
            orientation: Some(self.orientation),
        }
    }
}

/// `InteractiveMarkerControl.interaction_mode` values used here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interaction {
    MoveAxis,
    RotateAxis,
}

/// `InteractiveMarkerControl.orientation_mode` values used here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Orientation {
    /// Turns with the marker (the tool's axes).
    Inherit,
    /// Stays with the frame (the base's axes).
    Fixed,
}

/// One handle of the marker.
#[derive(Debug, Clone, PartialEq)]
pub struct Control {
    pub name: &'static str,
    /// The control's axis is the x axis of this rotation (`x, y, z, w`).
    pub orientation: [f64; 4],
    pub orientation_mode: Orientation,
    pub interaction: Interaction,
}

/// The whole marker (`InteractiveMarker`), as the update and the service
/// carry it.
#[derive(Debug, Clone, PartialEq)]
pub struct InteractiveMarker {
    pub name: &'static str,
    pub description: &'static str,
    pub frame_id: String,
    pub position: [f64; 3],
    pub orientation: [f64; 4],
    /// Size of the handles (m).
    pub scale: f32,
    pub controls: Vec<Control>,
}

/// A pose-only change (`InteractiveMarkerPose`).
#[derive(Debug, Clone, PartialEq)]
pub struct MarkerPose {
    pub name: &'static str,
    pub frame_id: String,
    pub position: [f64; 3],
    pub orientation: [f64; 4],
}

/// One message on `<ns>/update` (`InteractiveMarkerUpdate` of type
/// UPDATE: the only type a ROS 2 server sends).
#[derive(Debug, Clone, PartialEq)]
pub struct MarkerUpdate {
    pub seq_num: u64,
    /// Markers created or replaced (the first update).
    pub markers: Vec<InteractiveMarker>,
    pub poses: Vec<MarkerPose>,
}

/// The answer to `<ns>/get_interactive_markers`.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkerSnapshot {
    pub sequence_number: u64,
    pub markers: Vec<InteractiveMarker>,
}

/// What a feedback asks of the arm.
#[derive(Debug, Clone, PartialEq)]
pub enum Drag {
    /// Nothing (keep-alive, menu, the press itself).
    None,
    /// Follow this pose: the marker is being dragged.
    Move(TargetMsg),
    /// Go to this pose: the marker was let go there.
    Release(TargetMsg),
}

/// Where the marker is shown.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shown {
    /// At the commanded tip.
    Tip,
    /// Held by a client (dragging, or released and not yet reached).
    Held,
}

/// The server's state: the marker, the sequence number, the drag.
#[derive(Debug, Clone)]
pub struct TargetMarker {
    frame_id: String,
    scale: f32,
    seq_num: u64,
    /// The marker's pose (`None` until the first update creates it at the
    /// tip).
    pose: Option<([f64; 3], [f64; 4])>,
    /// The client has the whole marker (the first update was made).
    created: bool,
    shown: Shown,
    dragging: bool,
    /// A held pose not yet echoed to the clients.
    echo: bool,
    client: Option<(String, f64)>,
}

impl TargetMarker {
    /// A marker in `frame_id` (the base link) with handles `scale` metres
    /// across; it appears with the first [`TargetMarker::update`].
    pub fn new(frame_id: &str, scale: f64) -> TargetMarker {
        TargetMarker {
            frame_id: frame_id.to_string(),
            scale: scale as f32,
            seq_num: 0,
            pose: None,
            created: false,
            shown: Shown::Tip,
            dragging: false,
            echo: false,
            client: None,
        }
    }

    /// Takes in one feedback received at `now`; refuses feedback for
    /// another marker, or from a second client while one drags.
    pub fn feedback(
        &mut self,
        fb: &MarkerFeedback,
        now: f64,
    ) -> Result<Drag, (RejectReason, String)> {
        if fb.marker_name != MARKER_NAME {
            return Err((
                RejectReason::Invalid,
                format!(
                    "feedback for marker '{}'; this server has '{MARKER_NAME}'",
                    fb.marker_name
                ),
            ));
        }
        if let Some((client, at)) = &self.client
            && *client != fb.client_id
            && self.dragging
            && now - at < CLIENT_LOCK
        {
            return Err((
                RejectReason::Invalid,
                format!(
                    "client '{}' drags the marker; '{}' must wait",
                    client, fb.client_id
                ),
            ));
        }
        self.client = Some((fb.client_id.clone(), now));
        Ok(match fb.event {
            FeedbackEvent::MouseDown => {
                self.dragging = true;
                Drag::None
            }
            FeedbackEvent::PoseUpdate => {
                self.dragging = true;
                self.hold(fb);
                self.echo = true;
                Drag::Move(fb.target())
            }
            FeedbackEvent::MouseUp => {
                self.dragging = false;
                self.hold(fb);
                Drag::Release(fb.target())
            }
            FeedbackEvent::KeepAlive | FeedbackEvent::MenuSelect | FeedbackEvent::ButtonClick => {
                Drag::None
            }
        })
    }

    /// Shows the marker where the client holds it.
    fn hold(&mut self, fb: &MarkerFeedback) {
        self.shown = Shown::Held;
        self.pose = Some((fb.position, fb.orientation));
    }

    /// True while a client holds the marker (its pose is the client's, not
    /// the tip's).
    pub fn is_held(&self) -> bool {
        self.shown == Shown::Held
    }

    /// Lets the marker follow the tip again: the arm got where it was let
    /// go, or something else moves it now.
    pub fn follow_tip(&mut self) {
        if !self.dragging {
            self.shown = Shown::Tip;
        }
    }

    /// The update to publish now, if any: the marker itself the first
    /// time (at `tip`, the commanded tip pose), then its pose when it
    /// moved: with the tip, or where a client dragged it (the echo of a
    /// `PoseUpdate`). The front-end asks after every tick and after every
    /// feedback, so each pose update is echoed once, as the ROS 2 server's
    /// `applyChanges` does.
    pub fn update(&mut self, tip: &Transform) -> Option<MarkerUpdate> {
        match self.shown {
            Shown::Tip => {
                let (p, q) = pose_of(tip);
                if self.created && !self.moved(&p, &q) {
                    return None;
                }
                self.pose = Some((p, q));
            }
            Shown::Held if self.created && self.echo => {}
            Shown::Held if self.created => return None,
            // Feedback before the client had the marker: create it where
            // it is held.
            Shown::Held => {}
        }
        self.echo = false;
        self.seq_num += 1;
        let first = !self.created;
        self.created = true;
        Some(MarkerUpdate {
            seq_num: self.seq_num,
            markers: if first {
                vec![self.marker()]
            } else {
                Vec::new()
            },
            poses: if first {
                Vec::new()
            } else {
                vec![self.marker_pose()]
            },
        })
    }

    /// True when the tip pose `(p, q)` is away from the shown one.
    fn moved(&self, p: &[f64; 3], q: &[f64; 4]) -> bool {
        let Some((p0, q0)) = &self.pose else {
            return true;
        };
        let dist = (0..3).map(|i| (p[i] - p0[i]).powi(2)).sum::<f64>().sqrt();
        let dot = (0..4).map(|i| q[i] * q0[i]).sum::<f64>().abs().min(1.0);
        dist > MOVE_EPS || 2.0 * dot.acos() > TURN_EPS
    }

    /// What `get_interactive_markers` answers now.
    pub fn snapshot(&self) -> MarkerSnapshot {
        MarkerSnapshot {
            sequence_number: self.seq_num,
            markers: self.created.then(|| self.marker()).into_iter().collect(),
        }
    }

    fn marker_pose(&self) -> MarkerPose {
        let (position, orientation) = self.pose.unwrap_or(([0.0; 3], identity()));
        MarkerPose {
            name: MARKER_NAME,
            frame_id: self.frame_id.clone(),
            position,
            orientation,
        }
    }

    /// The marker at its current pose: three arrows along the base axes
    /// (position), three rings about the tool's axes (orientation; on a
    /// 5-joint arm, turning about the tool's z axis is the wrist roll).
    pub fn marker(&self) -> InteractiveMarker {
        let p = self.marker_pose();
        let s = FRAC_1_SQRT_2;
        // The control axis is the x axis of its orientation: x itself, x
        // turned onto y (+90 degrees about z), x turned onto z (-90
        // degrees about y).
        let axes = [
            ("x", [s, 0.0, 0.0, s]),
            ("y", [0.0, 0.0, s, s]),
            ("z", [0.0, -s, 0.0, s]),
        ];
        let mut controls = Vec::with_capacity(6);
        for (axis, orientation) in axes {
            controls.push(Control {
                name: move_name(axis),
                orientation,
                orientation_mode: Orientation::Fixed,
                interaction: Interaction::MoveAxis,
            });
            controls.push(Control {
                name: rotate_name(axis),
                orientation,
                orientation_mode: Orientation::Inherit,
                interaction: Interaction::RotateAxis,
            });
        }
        InteractiveMarker {
            name: MARKER_NAME,
            description: "arm_ik: drag the tip",
            frame_id: p.frame_id,
            position: p.position,
            orientation: p.orientation,
            scale: self.scale,
            controls,
        }
    }
}

fn move_name(axis: &str) -> &'static str {
    match axis {
        "x" => "move_x",
        "y" => "move_y",
        _ => "move_z",
    }
}

fn rotate_name(axis: &str) -> &'static str {
    match axis {
        "x" => "rotate_x",
        "y" => "rotate_y",
        _ => "rotate_z",
    }
}

/// A transform as a position and an `x, y, z, w` quaternion.
pub fn pose_of(t: &Transform) -> ([f64; 3], [f64; 4]) {
    let q = UnitQuaternion::from_rotation_matrix(&t.rotation);
    let v = t.translation.vector;
    ([v.x, v.y, v.z], [q.i, q.j, q.k, q.w])
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Translation3, UnitQuaternion as Q, Vector3};

    fn at(x: f64) -> Transform {
        Transform::from_parts(Translation3::new(x, 0.0, 0.2), Q::identity().into())
    }

    #[test]
    fn the_first_update_creates_the_marker_then_poses_follow_the_tip() {
        let mut m = TargetMarker::new("base_link", 0.1);
        assert_eq!(m.snapshot().sequence_number, 0);
        assert!(m.snapshot().markers.is_empty());
        let u = m.update(&at(0.2)).unwrap();
        assert_eq!(u.seq_num, 1);
        assert_eq!(u.markers.len(), 1);
        let im = &u.markers[0];
        assert_eq!((im.name, im.frame_id.as_str()), (MARKER_NAME, "base_link"));
        assert_eq!(im.position, [0.2, 0.0, 0.2]);
        assert_eq!(im.controls.len(), 6);
        // A still arm sends nothing, a moving one its pose.
        assert!(m.update(&at(0.2)).is_none());
        let u = m.update(&at(0.201)).unwrap();
        assert_eq!((u.seq_num, u.markers.len(), u.poses.len()), (2, 0, 1));
        assert_eq!(u.poses[0].position[0], 0.201);
        let snap = m.snapshot();
        assert_eq!(snap.sequence_number, 2);
        assert_eq!(snap.markers[0].position[0], 0.201);
    }

    #[test]
    fn a_drag_holds_the_marker_until_released_and_reached() {
        let mut m = TargetMarker::new("base_link", 0.1);
        m.update(&at(0.2));
        let q = [0.0, 0.0, 0.0, 1.0];
        assert_eq!(
            m.feedback(
                &MarkerFeedback::new(FeedbackEvent::MouseDown, [0.2, 0.0, 0.2], q),
                0.1
            ),
            Ok(Drag::None)
        );
        let d = m.feedback(
            &MarkerFeedback::new(FeedbackEvent::PoseUpdate, [0.25, 0.0, 0.2], q),
            0.2,
        );
        assert!(matches!(d, Ok(Drag::Move(t)) if t.position == [0.25, 0.0, 0.2]));
        // The held pose is echoed once, the next sequence number.
        let echo = m.update(&at(0.21)).unwrap();
        assert_eq!((echo.seq_num, echo.markers.len()), (2, 0));
        assert_eq!(echo.poses[0].position, [0.25, 0.0, 0.2]);
        // The tip moving does not move a held marker.
        assert!(m.update(&at(0.22)).is_none());
        m.follow_tip();
        assert!(m.is_held(), "still dragged");
        let d = m.feedback(
            &MarkerFeedback::new(FeedbackEvent::MouseUp, [0.26, 0.0, 0.2], q),
            0.3,
        );
        assert!(matches!(d, Ok(Drag::Release(t)) if t.position == [0.26, 0.0, 0.2]));
        assert_eq!(m.snapshot().markers[0].position, [0.26, 0.0, 0.2]);
        // The release is not echoed (RViz sent its pose as a PoseUpdate
        // just before).
        assert!(m.update(&at(0.23)).is_none());
        m.follow_tip();
        let u = m.update(&at(0.259)).unwrap();
        assert_eq!((u.seq_num, u.poses[0].position[0]), (3, 0.259));
    }

    #[test]
    fn feedback_for_another_marker_or_client_is_refused() {
        let mut m = TargetMarker::new("base_link", 0.1);
        let mut fb = MarkerFeedback::new(FeedbackEvent::PoseUpdate, [0.2, 0.0, 0.2], identity());
        fb.marker_name = "other".into();
        let (reason, why) = m.feedback(&fb, 0.0).unwrap_err();
        assert_eq!(reason, RejectReason::Invalid);
        assert!(why.contains("'other'"), "{why}");
        fb.marker_name = MARKER_NAME.into();
        fb.client_id = "rviz_a".into();
        m.feedback(&fb, 0.0).unwrap();
        fb.client_id = "rviz_b".into();
        assert!(m.feedback(&fb, 0.5).is_err());
        assert!(m.feedback(&fb, 1.6).is_ok(), "the lock times out");
    }

    #[test]
    fn controls_point_along_the_three_axes() {
        let m = TargetMarker::new("base_link", 0.1);
        let im = m.marker();
        for (c, axis) in
            im.controls
                .iter()
                .step_by(2)
                .zip([Vector3::x(), Vector3::y(), Vector3::z()])
        {
            let [x, y, z, w] = c.orientation;
            let r = Q::from_quaternion(nalgebra::Quaternion::new(w, x, y, z));
            assert!((r * Vector3::x() - axis).norm() < 1e-12, "{}", c.name);
        }
        let names: Vec<_> = im.controls.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            [
                "move_x", "rotate_x", "move_y", "rotate_y", "move_z", "rotate_z"
            ]
        );
    }
}
