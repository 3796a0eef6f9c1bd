//! The QoS a topic is offered with, as rosbag2 stores it (the
//! `offered_qos_profiles` of `metadata.yaml` and of each MCAP channel), so
//! `ros2 bag play` republishes a latched topic latched: RViz, started after
//! the play, still gets `/robot_description` and `/tf_static`.

/// How a topic is published.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Qos {
    /// Reliable, volatile: what a late subscriber missed is gone (joint
    /// states, `/tf`, targets).
    Volatile,
    /// Reliable, transient local, depth 1: a late subscriber gets the last
    /// message, as robot_state_publisher offers `/robot_description` and
    /// `/tf_static`.
    Latched,
}

impl Qos {
    /// The YAML list rosbag2 writes (the integer form of Humble, which
    /// every later rosbag2 and `rosbags` read): history keep-last (1),
    /// reliability reliable (1), durability transient local (1) or
    /// volatile (2), liveliness automatic (1), durations infinite.
    pub fn rosbag2_yaml(self) -> String {
        let (depth, durability) = match self {
            Qos::Volatile => (10, 2),
            Qos::Latched => (1, 1),
        };
        let infinite = "\n    sec: 9223372036\n    nsec: 854775807";
        format!(
            "- history: 1\n  depth: {depth}\n  reliability: 1\n  durability: {durability}\n  \
             deadline:{infinite}\n  lifespan:{infinite}\n  liveliness: 1\n  \
             liveliness_lease_duration:{infinite}\n  avoid_ros_namespace_conventions: false"
        )
    }
}
