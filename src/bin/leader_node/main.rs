//! `leader_node`: a leader arm moved by hand, published for a follower
//! `ik_node` (feature `ros2`), the ROS side of `arm_ik teleop`.
//!
//! It opens the leader's servos relaxed (torque off; a servo file whose
//! servos cannot report their position is refused, as `arm_ik teleop`
//! refuses it), reads them `rate_hz` times a second and publishes each
//! reading twice: as the leader's own `joint_states` (in the `leader`
//! namespace by default, so a second robot_state_publisher shows the
//! leader in RViz beside the follower) and as a frame on the follower's
//! `~/joint_command` (`follower_command_topic`), joints matched to the
//! follower's by name, role or `joint_map`. The follower, run with
//! `follow_leader`, makes every safety decision (the approach at the
//! start-up speed, the limits, the hold when the frames stop).
//!
//! Wiring only: opening, reading and name matching are `arm_ik::run`'s
//! (the same as `arm_ik teleop`'s), conversions `arm_ik::ros::convert`'s.

// The same spinning, clock and signals as ik_node (which also creates
// services while it spins: `Spinner::with_node`, unused here).
#[path = "../ik_node/spin.rs"]
#[allow(dead_code)]
mod spin;

use anyhow::Context as _;
use arm_ik::model::Chain;
use arm_ik::node::{JointLayout, LeaderParams, LeaderSettings};
use arm_ik::ros::convert;
use arm_ik::run::{LeaderSource, map_joints, moved_joints, open_leader};
use r2r::QosProfile;
use r2r::sensor_msgs::msg::JointState;
use spin::{Spinner, ros_now, shutdown_signal, stamp};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::{MissedTickBehavior, interval};

const NODE_NAME: &str = "leader_node";
/// The default namespace: the leader's `joint_states` beside the
/// follower's.
const NAMESPACE: &str = "leader";

fn main() -> ExitCode {
    spin::main_on_one_thread(NODE_NAME, run())
}

/// The leader's chain and what it leads on the follower, opened.
struct Leader {
    source: LeaderSource,
    layout: JointLayout,
}

/// Opens what the parameters name (checked first by the library, each
/// error naming its parameter).
fn open(p: &LeaderParams, log: &str) -> anyhow::Result<(Leader, LeaderSettings)> {
    let s = p.settings().context("invalid parameter")?;
    let chain = Chain::from_urdf_file(&s.urdf, s.base.as_deref(), s.tip.as_deref())
        .with_context(|| format!("urdf_path {}", s.urdf.display()))?;
    let follower = match &s.follower_urdf {
        Some(f) => Chain::from_urdf_file(f, None, None)
            .with_context(|| format!("follower_urdf_path {}", f.display()))?,
        None => chain.clone(),
    };
    let layout = JointLayout::new(&chain);
    let map = map_joints(
        &chain,
        &moved_joints(&JointLayout::new(&follower)),
        &s.map_items(),
    )
    .context("joint_map")?;
    let servos = open_leader(&s.config, &s.port, &chain, s.rate_hz)
        .context("leader_config / leader_port")?;
    r2r::log_info!(log, "{}", map.describe(&moved_joints(&layout)));
    r2r::log_info!(
        log,
        "leader arm on {}: torque off, move it by hand; {} readings/s to {}",
        s.port,
        s.rate_hz,
        s.follower_command_topic
    );
    let leader = Leader {
        source: LeaderSource::new(servos, &map),
        layout,
    };
    Ok((leader, s))
}

async fn run() -> anyhow::Result<()> {
    let shutdown = shutdown_signal()?;
    tokio::pin!(shutdown);
    let ctx = r2r::Context::create().context("cannot initialise ROS (rcl)")?;
    let mut node =
        r2r::Node::create(ctx, NODE_NAME, NAMESPACE).context("cannot create the node")?;
    let log = node.logger().to_string();
    let params = Arc::new(Mutex::new(LeaderParams::default()));
    let (handler, _events) = node
        .make_derived_parameter_handler(params.clone())
        .context("parameters")?;
    tokio::spawn(handler);
    let p = params
        .lock()
        .map_err(|_| anyhow::anyhow!("parameters: lock poisoned"))?
        .clone();
    let (mut leader, s) = open(&p, &log)?;
    let qos = QosProfile::default;
    let states = node.create_publisher::<JointState>("joint_states", qos())?;
    let frames = node.create_publisher::<JointState>(&s.follower_command_topic, qos())?;
    let clock = node.get_ros_clock();
    let _spinner = Spinner::start(node)?;

    let mut ticks = interval(Duration::from_secs_f64(1.0 / s.rate_hz));
    ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let stop = loop {
        tokio::select! {
            biased;
            s = shutdown.as_mut() => break s?,
            _ = ticks.tick() => {
                let now = ros_now(&clock);
                let axes = leader.layout.axes();
                if let Some(q) = leader.source.read(now.as_secs_f64()).filter(|q| q.len() >= axes) {
                    let (position, _) = leader.layout.publish(&q[..axes], &vec![0.0; axes]);
                    let own = convert::leader_state(leader.layout.names(), &position, stamp(now));
                    let frame = leader.source.frame(&q);
                    let led = convert::leader_state(&frame.name, &frame.position, stamp(now));
                    for (what, r) in [("joint_states", states.publish(&own)), ("frame", frames.publish(&led))] {
                        if let Err(e) = r {
                            r2r::log_warn!(&log, "{what} not published: {e}");
                        }
                    }
                }
                if let Some(notice) = leader.source.take_notice() {
                    r2r::log_warn!(&log, "{notice}");
                }
            }
        }
    };
    r2r::log_info!(
        &log,
        "{stop}: shutting down; {} readings published, {} reads without a frame",
        leader.source.frames,
        leader.source.missed
    );
    Ok(())
}
