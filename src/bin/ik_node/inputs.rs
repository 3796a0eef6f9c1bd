//! Everything that comes into the node while it runs, as one stream of
//! [`Input`]s: each subscription (and service) is converted to the core's
//! [`Command`] where it is created, so the control loop has one arm for
//! all of them and a new topic adds one line here.

use arm_ik::node::Command;
use arm_ik::ros::convert;
use futures::stream::{BoxStream, SelectAll, StreamExt, select_all};
use r2r::QosProfile;
use r2r::geometry_msgs::msg::{PointStamped, PoseStamped, Twist, TwistStamped};
use r2r::visualization_msgs::msg::InteractiveMarkerFeedback;

/// One input, and where it came from (for the log).
pub struct Input {
    pub source: &'static str,
    pub command: Command,
}

/// The node's inputs, merged.
pub struct Inputs {
    stream: SelectAll<BoxStream<'static, Input>>,
}

/// A subscription to `topic` whose messages become commands.
fn subscribe<T>(
    node: &mut r2r::Node,
    topic: &'static str,
    to_command: fn(&T) -> Command,
) -> anyhow::Result<BoxStream<'static, Input>>
where
    T: r2r::WrappedTypesupport + Send + 'static,
{
    let sub = node.subscribe::<T>(topic, QosProfile::default())?;
    Ok(sub
        .map(move |m| Input {
            source: topic,
            command: to_command(&m),
        })
        .boxed())
}

impl Inputs {
    /// Subscribes to every input topic.
    pub fn subscribe(node: &mut r2r::Node) -> anyhow::Result<Inputs> {
        let streams = vec![
            subscribe::<PoseStamped>(node, "target_pose", |m| {
                Command::Target(convert::target_from_pose(m))
            })?,
            subscribe::<PointStamped>(node, "target_point", |m| {
                Command::Target(convert::target_from_point(m))
            })?,
            subscribe::<TwistStamped>(node, "~/target_twist", |m| {
                Command::Twist(convert::twist_from_stamped(m))
            })?,
            subscribe::<Twist>(node, "~/cmd_vel", |m| {
                Command::Twist(convert::twist_from_cmd_vel(m))
            })?,
            subscribe::<InteractiveMarkerFeedback>(node, "~/target_marker/feedback", |m| {
                Command::MarkerFeedback(convert::marker_feedback(m))
            })?,
        ];
        Ok(Inputs {
            stream: select_all(streams),
        })
    }

    /// The next input; `None` only when every subscription has closed.
    pub async fn next(&mut self) -> Option<Input> {
        self.stream.next().await
    }
}
