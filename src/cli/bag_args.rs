//! The flags that say where a bag's targets are, shared by `replay` and
//! `run --bag`, so both read a bag as `ik_node` subscribes.

use arm_ik::replay::topics::TargetTopics;

#[derive(Debug, clap::Args)]
pub struct TopicArgs {
    /// Topic of the PoseStamped targets, as ik_node's target_pose remapped.
    #[arg(long, value_name = "TOPIC", default_value = "/target_pose")]
    pub pose_topic: String,
    /// Topic of the PointStamped (position-only) targets, as ik_node's
    /// target_point remapped.
    #[arg(long, value_name = "TOPIC", default_value = "/target_point")]
    pub point_topic: String,
}

impl TopicArgs {
    pub fn topics(&self) -> anyhow::Result<TargetTopics> {
        TargetTopics::new(&self.pose_topic, &self.point_topic)
            .map_err(|e| anyhow::anyhow!("--pose-topic, --point-topic: {e}"))
    }
}
