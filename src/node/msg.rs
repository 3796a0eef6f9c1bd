//! The messages the node core exchanges: plain Rust mirrors of
//! `geometry_msgs/PoseStamped` (in) and `sensor_msgs/JointState` (in as a
//! joint command, out as the joint state), so the
//! ROS adapter only converts fields and the CLI and tests need no ROS.

use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A tip target in a named frame.
///
/// JSON form (the `sim --stdin` lines): `{"position":[x,y,z],
/// "orientation":[x,y,z,w], "frame_id":"base_link", "stamp":0}` where only
/// `position` is required; unknown fields are an error so a typo is not
/// silently ignored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetMsg {
    /// When the target was valid, in seconds on the node's clock; 0 means
    /// "now" (a target without a time, e.g. typed by hand).
    #[serde(default)]
    pub stamp: f64,
    /// The frame `position` and `orientation` are in; empty means the
    /// chain's base link.
    #[serde(default)]
    pub frame_id: String,
    /// Metres.
    pub position: [f64; 3],
    /// Quaternion `x, y, z, w`; `None` for a position-only target.
    #[serde(default)]
    pub orientation: Option<[f64; 4]>,
}

impl TargetMsg {
    /// A position-only target in the base frame, stamped "now".
    pub fn position(p: [f64; 3]) -> TargetMsg {
        TargetMsg {
            stamp: 0.0,
            frame_id: String::new(),
            position: p,
            orientation: None,
        }
    }
}

/// Joint positions by name, any subset of the joints the node moves (the
/// arm's and the gripper), as `sensor_msgs/JointState` carries them:
/// `{"name":["elbow","gripper"],"position":[0.5,0.3]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointCommandMsg {
    pub name: Vec<String>,
    /// URDF units (rad or m), one per name.
    pub position: Vec<f64>,
}

/// The commanded joint state of one tick.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JointState {
    /// The tick's time on the node clock (s).
    pub stamp: f64,
    /// Every moving joint of the robot: the chain's in order, the actuated
    /// joints off it (a gripper), then those that mimic another (shared,
    /// not copied every tick).
    #[serde(serialize_with = "names")]
    pub name: Arc<[String]>,
    pub position: Vec<f64>,
    pub velocity: Vec<f64>,
}

/// `Arc<[String]>` as a JSON list (serde's `rc` feature is not worth a
/// feature flag for one field).
fn names<Ser: serde::Serializer>(n: &Arc<[String]>, s: Ser) -> Result<Ser::Ok, Ser::Error> {
    s.collect_seq(n.iter())
}
