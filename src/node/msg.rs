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

/// At most `max` bytes of `s` for a message a person reads, cut in the
/// middle with the number of bytes left out: input echoed in an error (a
/// frame name, a malformed line) may be megabytes long.
pub fn clip(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if s.len() <= max {
        return s.into();
    }
    let floor = |mut i: usize| {
        while !s.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let head = floor(max * 2 / 3);
    let tail = floor(s.len() - max / 3).max(head);
    format!(
        "{}[... {} bytes cut ...]{}",
        &s[..head],
        tail - head,
        &s[tail..]
    )
    .into()
}

/// Stamps older than this (s) did not come from a live sender: a recorded
/// bag played on the wall clock.
const RECORDED_AGE: f64 = 60.0;

/// Why a target stamped `stamp` is stale on a node whose clock reads `now`
/// (both s): older or newer and by how much, and for the two mistakes
/// behind most stale targets, a bag's recorded stamps and a simulated
/// clock nobody publishes, what to run instead.
pub fn stale_why(stamp: f64, now: f64, limit: f64) -> String {
    let age = now - stamp;
    let (by, side) = if age >= 0.0 {
        (age, "older than")
    } else {
        (-age, "newer than")
    };
    let mut why = format!(
        "stamp {stamp:.3} s is {by:.3} s {side} the node clock {now:.3} s (limit {limit} s)"
    );
    if age > RECORDED_AGE {
        why.push_str(
            "; stamps this old come from a recording: play the bag with \
             `ros2 bag play --clock` and run the node with use_sim_time:=true",
        );
    } else if now.abs() < limit && -age > RECORDED_AGE {
        why.push_str(
            "; the node clock is at 0: with use_sim_time:=true something must \
             publish /clock (`ros2 bag play --clock`)",
        );
    }
    why
}

#[cfg(test)]
mod tests {
    use super::{clip, stale_why};

    #[test]
    fn long_values_are_cut_in_the_middle_and_say_how_much() {
        assert_eq!(clip("base_link", 64), "base_link");
        let long = format!("start{}end", "x".repeat(50_000_000));
        let c = clip(&long, 90);
        assert!(c.len() < 150, "{c}");
        assert!(c.starts_with("start") && c.ends_with("end"), "{c}");
        assert!(c.contains("bytes cut"), "{c}");
        // Never inside a character.
        let wide = "é".repeat(100);
        assert!(clip(&wide, 11).contains("bytes cut"));
    }

    #[test]
    fn a_stale_stamp_says_older_or_newer_by_how_much_and_what_to_run() {
        let w = stale_why(3.0, 0.0, 0.5);
        assert!(
            w.contains("3.000 s newer than the node clock 0.000 s"),
            "{w}"
        );
        assert!(!w.contains("-3.000"), "{w}");
        let w = stale_why(10.0, 12.5, 0.5);
        assert!(w.contains("2.500 s older than"), "{w}");
        assert!(!w.contains("ros2 bag play"), "{w}");
        // A bag recorded yesterday played on today's clock.
        let w = stale_why(1.7e9, 1.7e9 + 86_400.0, 0.5);
        assert!(w.contains("86400.000 s older"), "{w}");
        assert!(
            w.contains("ros2 bag play --clock") && w.contains("use_sim_time:=true"),
            "{w}"
        );
        // use_sim_time with nothing on /clock: the node clock stays at 0.
        let w = stale_why(1.7e9, 0.0, 0.5);
        assert!(w.contains("publish /clock"), "{w}");
    }
}
