//! The robot the node drives: a URDF from `urdf_path`, from the
//! `robot_description` parameter, or (with neither) from the
//! `robot_description` topic that robot_state_publisher latches.

use arm_ik::model::{Chain, ModelError};
use arm_ik::node::{NodeParams, UrdfSource};
use futures::StreamExt;
use futures::stream::BoxStream;
use r2r::QosProfile;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use tokio::time::interval;

/// While waiting for `robot_description`, say so again this often.
const WAIT_LOG_PERIOD: Duration = Duration::from_secs(10);

/// Where the URDF will come from; for the topic, subscribed before the
/// node starts spinning, so a latched message is not missed.
pub enum Description {
    Ready(UrdfSource),
    Topic(BoxStream<'static, String>),
}

impl Description {
    pub fn subscribe(node: &mut r2r::Node, p: &NodeParams) -> anyhow::Result<Description> {
        Ok(match p.urdf_source() {
            // robot_state_publisher latches the description: only a
            // transient local subscription receives it after the fact.
            UrdfSource::Topic => Description::Topic(
                node.subscribe::<r2r::std_msgs::msg::String>(
                    "robot_description",
                    QosProfile::default().keep_last(1).transient_local(),
                )?
                .map(|m| m.data)
                .boxed(),
            ),
            source => Description::Ready(source),
        })
    }

    /// The chain the parameters ask for; `None` when `shutdown` came while
    /// waiting for the topic.
    pub async fn chain(
        self,
        p: &NodeParams,
        log: &str,
        shutdown: Pin<&mut impl Future<Output = anyhow::Result<&'static str>>>,
    ) -> anyhow::Result<Option<Chain>> {
        let xml = match self {
            Description::Ready(UrdfSource::File(path)) => {
                let chain = Chain::from_urdf_file(&path, p.base(), p.tip());
                return chain.map(Some).map_err(chain_error);
            }
            Description::Ready(UrdfSource::Xml(xml)) => xml,
            Description::Ready(UrdfSource::Topic) => unreachable!("subscribed for the topic"),
            Description::Topic(sub) => match wait_for_topic(sub, log, shutdown).await? {
                Some(xml) => xml,
                None => return Ok(None),
            },
        };
        // The model's errors name their source ("robot_description: ...").
        Chain::from_urdf_str(&xml, p.base(), p.tip())
            .map(Some)
            .map_err(chain_error)
    }
}

/// A chain that cannot be cut, said with the parameter that chooses the
/// link.
fn chain_error(e: ModelError) -> anyhow::Error {
    match &e {
        ModelError::AmbiguousTip { leaves, .. } => {
            let first = leaves.first().map_or("LINK", String::as_str);
            anyhow::anyhow!(
                "{e} with the tip_link parameter (e.g. -p tip_link:={first}, or tip_link:={first} to ros2 launch)"
            )
        }
        _ => e.into(),
    }
}

/// The first `robot_description` message, with a reminder in the log while
/// it does not come; `None` on SIGINT/SIGTERM.
async fn wait_for_topic(
    mut sub: BoxStream<'static, String>,
    log: &str,
    mut shutdown: Pin<&mut impl Future<Output = anyhow::Result<&'static str>>>,
) -> anyhow::Result<Option<String>> {
    r2r::log_info!(
        log,
        "no urdf_path or robot_description parameter: waiting for the robot_description topic"
    );
    let mut reminder = interval(WAIT_LOG_PERIOD);
    reminder.tick().await;
    loop {
        tokio::select! {
            m = sub.next() => match m {
                Some(xml) => return Ok(Some(xml)),
                None => anyhow::bail!("the robot_description subscription closed"),
            },
            _ = reminder.tick() => r2r::log_info!(log, "still waiting for robot_description"),
            s = shutdown.as_mut() => {
                r2r::log_info!(log, "{} while waiting for robot_description: exiting", s?);
                return Ok(None);
            }
        }
    }
}
