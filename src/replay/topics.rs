//! Where a replay reads targets: exactly as `ik_node` subscribes, a
//! `PoseStamped` topic (`target_pose`) and a `PointStamped` topic
//! (`target_point`), each with its own type. DDS matches a topic with one
//! type only, so a bag with points on the pose topic would deliver nothing
//! to the live node; replay counts such messages as `wrong_type`.

use super::outcome::FailureKind;
use crate::bag::{BagMessage, StampedTarget, TargetType, TopicInfo};
use crate::node::TargetMsg;

/// The two target topics, remappable as the node's are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetTopics {
    pose: String,
    point: String,
}

impl Default for TargetTopics {
    /// `ik_node`'s, in the root namespace.
    fn default() -> Self {
        TargetTopics {
            pose: TargetType::Pose.topic().into(),
            point: TargetType::Point.topic().into(),
        }
    }
}

impl TargetTopics {
    /// The topics must differ: one topic cannot carry both types.
    pub fn new(pose: &str, point: &str) -> Result<TargetTopics, String> {
        if pose == point {
            return Err(format!(
                "the pose and point topics are both {pose}; a topic carries one type"
            ));
        }
        Ok(TargetTopics {
            pose: pose.into(),
            point: point.into(),
        })
    }

    /// The type `ik_node` takes on `topic`, if it is a target topic.
    pub fn target_type(&self, topic: &str) -> Option<TargetType> {
        if topic == self.pose {
            Some(TargetType::Pose)
        } else if topic == self.point {
            Some(TargetType::Point)
        } else {
            None
        }
    }

    /// The topic of a target type.
    pub fn topic(&self, kind: TargetType) -> &str {
        match kind {
            TargetType::Pose => &self.pose,
            TargetType::Point => &self.point,
        }
    }

    /// Why `type_name` is wrong on `topic`, and where it would belong.
    pub fn wrong_type(&self, topic: &str, type_name: &str, expected: TargetType) -> String {
        let mut s = format!(
            "type '{type_name}' on {topic}, where ik_node takes {}",
            expected.name()
        );
        let other = expected.other();
        if TargetType::from_name(type_name) == Some(other) {
            s.push_str(&format!(
                " ({} targets go on {})",
                other.short_name(),
                self.topic(other)
            ));
        }
        s
    }

    /// A message on the target topic of type `expected` as the node takes
    /// it: the target, its header stamp on a clock that reads 0 at bag
    /// time `t0_ns` (so a bag's stamps age as it replays, whenever it was
    /// recorded; a zero stamp stays "now"), or why it is not one.
    /// What of a pose's orientation counts is the node's
    /// `target_orientation`, as on the live node.
    pub fn decode(
        &self,
        msg: &BagMessage,
        expected: TargetType,
        t0_ns: u64,
    ) -> Result<TargetMsg, (FailureKind, String)> {
        let target = self.decode_stamped(msg, expected)?;
        Ok(to_target(target, t0_ns as i64))
    }

    /// The message as it is on the wire (see [`TargetTopics::decode`]).
    pub fn decode_stamped(
        &self,
        msg: &BagMessage,
        expected: TargetType,
    ) -> Result<StampedTarget, (FailureKind, String)> {
        if TargetType::from_name(&msg.type_name) != Some(expected) {
            let why = self.wrong_type(&msg.topic, &msg.type_name, expected);
            return Err((FailureKind::WrongType, why));
        }
        StampedTarget::decode(expected, &msg.data)
            .map_err(|e| (FailureKind::Malformed, e.to_string()))
    }

    /// An error when a bag that lists its topics has neither target topic,
    /// naming the topics it has.
    pub fn check_declared(&self, declared: &[TopicInfo]) -> Result<(), String> {
        if declared.iter().any(|t| self.target_type(&t.name).is_some()) {
            return Ok(());
        }
        Err(format!(
            "no target topic in the bag (looked for {}); its topics: {}",
            self,
            list(
                declared
                    .iter()
                    .map(|t| (t.name.as_str(), t.type_name.as_str()))
            )
        ))
    }
}

/// A target as the node takes it, its stamp on a clock that reads 0 at
/// `t0_ns` (a zero stamp stays "now").
pub fn to_target(target: StampedTarget, t0_ns: i64) -> TargetMsg {
    let stamp = if target.header.stamp_ns == 0 {
        0.0
    } else {
        (target.header.stamp_ns - t0_ns) as f64 / 1e9
    };
    TargetMsg {
        stamp,
        frame_id: target.header.frame_id,
        position: target.position,
        orientation: target.orientation,
    }
}

impl std::fmt::Display for TargetTopics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}) and {} ({})",
            self.pose,
            TargetType::Pose.short_name(),
            self.point,
            TargetType::Point.short_name()
        )
    }
}

/// `name (type), ...`, or `none`.
pub fn list<'a>(topics: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let v: Vec<String> = topics.map(|(n, t)| format!("{n} ({t})")).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_topic_has_its_type_and_a_wrong_one_says_where_it_belongs() {
        let t = TargetTopics::default();
        assert_eq!(t.target_type("/target_pose"), Some(TargetType::Pose));
        assert_eq!(t.target_type("/target_point"), Some(TargetType::Point));
        assert_eq!(t.target_type("/other"), None);
        let why = t.wrong_type(
            "/target_pose",
            "geometry_msgs/msg/PointStamped",
            TargetType::Pose,
        );
        assert!(
            why.contains("PointStamped targets go on /target_point"),
            "{why}"
        );
        assert!(TargetTopics::new("/a", "/a").is_err());
        let declared = [TopicInfo {
            name: "/goal".into(),
            type_name: "geometry_msgs/msg/PoseStamped".into(),
            message_count: None,
        }];
        let e = t.check_declared(&declared).unwrap_err();
        assert!(e.contains("/goal (geometry_msgs/msg/PoseStamped)"), "{e}");
        let remapped = TargetTopics::new("/goal", "/target_point").unwrap();
        assert!(remapped.check_declared(&declared).is_ok());
    }
}
