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
use arm_ik::node::{JointLayout, MotionSettings};
use arm_ik::ros::convert;
use arm_ik::run::{LeaderSource, map_joints, moved_joints, open_leader};
use r2r::sensor_msgs::msg::JointState;
use r2r::{QosProfile, RosParams};
use spin::{Spinner, ros_now, shutdown_signal, stamp};
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::{MissedTickBehavior, interval};

const NODE_NAME: &str = "leader_node";
/// The default namespace: the leader's `joint_states` beside the
/// follower's.
const NAMESPACE: &str = "leader";

/// Everything `leader_node` can be told (read at start).
#[derive(RosParams, Debug, Clone)]
struct LeaderParams {
    /// The leader's servo file (calibration as for ik_node's servo_config); its servos must report their position (bus servos, not PWM).
    leader_config: String,
    /// Serial port of the leader arm.
    leader_port: String,
    /// The leader's URDF file.
    urdf_path: String,
    /// First link of the leader's chain; empty: the URDF's root link.
    base_link: String,
    /// Last link of the leader's chain; empty: found as ik_node finds it.
    tip_link: String,
    /// The follower's URDF when it is not the leader's make (joints then matched by role, or by joint_map); empty: the leader's.
    follower_urdf_path: String,
    /// Leader joints mapped by hand to follower joints, comma-separated LEADER=FOLLOWER; empty: by name, else by role.
    joint_map: String,
    /// Reads of the leader per second (Hz).
    rate_hz: f64,
    /// Where each reading goes as a frame: the follower's ~/joint_command (run the follower with follow_leader).
    follower_command_topic: String,
}

impl Default for LeaderParams {
    fn default() -> Self {
        LeaderParams {
            leader_config: String::new(),
            leader_port: String::new(),
            urdf_path: String::new(),
            base_link: String::new(),
            tip_link: String::new(),
            follower_urdf_path: String::new(),
            joint_map: String::new(),
            rate_hz: MotionSettings::default().rate_hz,
            follower_command_topic: "/ik_node/joint_command".into(),
        }
    }
}

fn non_empty(s: &str) -> Option<&str> {
    let s = s.trim();
    (!s.is_empty()).then_some(s)
}

fn main() -> ExitCode {
    spin::main_on_one_thread(NODE_NAME, run())
}

/// The leader's chain and what it leads on the follower, opened.
struct Leader {
    source: LeaderSource,
    layout: JointLayout,
}

fn open(p: &LeaderParams, log: &str) -> anyhow::Result<Leader> {
    let need = |name: &str, v: &str| {
        non_empty(v)
            .map(str::to_owned)
            .with_context(|| format!("parameter {name} is needed"))
    };
    let urdf = need("urdf_path", &p.urdf_path)?;
    let chain = Chain::from_urdf_file(&urdf, non_empty(&p.base_link), non_empty(&p.tip_link))
        .with_context(|| format!("urdf_path {urdf}"))?;
    let follower = match non_empty(&p.follower_urdf_path) {
        Some(f) => Chain::from_urdf_file(f, None, None)
            .with_context(|| format!("follower_urdf_path {f}"))?,
        None => chain.clone(),
    };
    let rate_hz = MotionSettings::check_rate(p.rate_hz).context("invalid parameter")?;
    let config = need("leader_config", &p.leader_config)?;
    let port = need("leader_port", &p.leader_port)?;
    let layout = JointLayout::new(&chain);
    let map = map_joints(
        &chain,
        &moved_joints(&JointLayout::new(&follower)),
        std::slice::from_ref(&p.joint_map),
    )
    .context("joint_map")?;
    let servos = open_leader(Path::new(&config), &port, &chain, rate_hz)
        .context("leader_config / leader_port")?;
    r2r::log_info!(log, "{}", map.describe(&moved_joints(&layout)));
    r2r::log_info!(
        log,
        "leader arm on {port}: torque off, move it by hand; {rate_hz} readings/s to {}",
        p.follower_command_topic
    );
    Ok(Leader {
        source: LeaderSource::new(servos, &map),
        layout,
    })
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
    let mut leader = open(&p, &log)?;
    let qos = QosProfile::default;
    let states = node.create_publisher::<JointState>("joint_states", qos())?;
    let frames = node.create_publisher::<JointState>(&p.follower_command_topic, qos())?;
    let clock = node.get_ros_clock();
    let _spinner = Spinner::start(node)?;

    let mut ticks = interval(Duration::from_secs_f64(1.0 / p.rate_hz));
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
