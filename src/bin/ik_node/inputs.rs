//! Everything that comes into the node while it runs, as one stream of
//! [`Input`]s: each subscription (and service) is converted to the core's
//! [`Command`] where it is created, so the control loop has one arm for
//! all of them and a new topic adds one line here.

use arm_ik::node::{Command, Refused};
use arm_ik::ros::convert;
use futures::stream::{BoxStream, SelectAll, StreamExt, select_all};
use r2r::QosProfile;
use r2r::geometry_msgs::msg::{PointStamped, PoseStamped, Twist, TwistStamped};
use r2r::sensor_msgs::msg::JointState;
use r2r::std_msgs::msg::{Float64, String as RosString};
use r2r::trajectory_msgs::msg::{JointTrajectory, MultiDOFJointTrajectory};
use r2r::visualization_msgs::msg::InteractiveMarkerFeedback;

/// Sends a service's reply, given what the core made of its command.
pub type Reply = Box<dyn FnOnce(&Result<(), Refused>) -> anyhow::Result<()> + Send>;

/// One input, where it came from (for the log), and for a service the
/// reply to send once the core has taken or refused it.
pub struct Input {
    pub source: &'static str,
    pub command: Command,
    pub reply: Option<Reply>,
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
            reply: None,
        })
        .boxed())
}

impl Inputs {
    /// Subscribes to every input topic. With `follow_leader`,
    /// `~/joint_command` carries a leader arm's frames (teleoperation)
    /// rather than joint goals.
    pub fn subscribe(node: &mut r2r::Node, follow_leader: bool) -> anyhow::Result<Inputs> {
        let joint_command = if follow_leader {
            convert::leader_frame
        } else {
            convert::joint_command
        };
        let streams = vec![
            subscribe::<PoseStamped>(node, "target_pose", |m| {
                Command::Target(convert::target_from_pose(m))
            })?,
            subscribe::<PointStamped>(node, "target_point", |m| {
                Command::Target(convert::target_from_point(m))
            })?,
            subscribe::<Float64>(node, "~/gripper", convert::gripper_command)?,
            subscribe::<JointState>(node, "~/joint_command", joint_command)?,
            subscribe::<JointTrajectory>(node, "~/joint_trajectory", convert::joint_trajectory)?,
            subscribe::<MultiDOFJointTrajectory>(
                node,
                "~/cartesian_path",
                convert::cartesian_path,
            )?,
            subscribe::<RosString>(node, "~/record_pose", convert::record_pose)?,
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

    /// Adds the std_srvs services (see `services`), with one `~/go_to/<name>`
    /// per pose in `poses` and one `~/program/<name>` per program; returns
    /// false when this build has none.
    #[cfg(std_srvs)]
    pub fn serve(
        &mut self,
        node: &mut r2r::Node,
        poses: &[String],
        programs: &[String],
    ) -> anyhow::Result<bool> {
        for service in super::services::create(node, poses, programs)? {
            self.stream.push(service);
        }
        Ok(true)
    }

    /// This build has no std_srvs (see `build.rs`): no services.
    #[cfg(not(std_srvs))]
    pub fn serve(
        &mut self,
        _node: &mut r2r::Node,
        _poses: &[String],
        _programs: &[String],
    ) -> anyhow::Result<bool> {
        Ok(false)
    }

    /// One more input stream: a service created while the node runs.
    pub fn add(&mut self, stream: BoxStream<'static, Input>) {
        self.stream.push(stream);
    }

    /// `~/go_to/<name>` for a pose recorded while the node runs (see
    /// `services`).
    #[cfg(std_srvs)]
    pub fn go_to(
        node: &mut r2r::Node,
        name: &str,
    ) -> anyhow::Result<Option<BoxStream<'static, Input>>> {
        super::services::go_to(node, name).map(Some)
    }

    /// This build has no std_srvs: no `~/go_to/<name>`.
    #[cfg(not(std_srvs))]
    pub fn go_to(
        _node: &mut r2r::Node,
        _name: &str,
    ) -> anyhow::Result<Option<BoxStream<'static, Input>>> {
        Ok(None)
    }

    /// The next input; `None` only when every subscription has closed.
    pub async fn next(&mut self) -> Option<Input> {
        self.stream.next().await
    }
}
