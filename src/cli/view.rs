//! `--view [ADDR]`: the arm live in Foxglove (or Lichtblick) over the
//! Foxglove WebSocket protocol, served by the Foxglove SDK's `foxglove`
//! crate. The topics and bytes are those of the recorded bags
//! ([`RobotTopics`]): `ros2msg` schemas with `cdr` messages, which
//! Foxglove decodes natively (the 3D panel takes `/tf`, `/tf_static`, the
//! URDF on `/robot_description` and the markers as they are), so the live
//! view and a bag opened later show the same thing and one encoder, the
//! one the bag tests check, serves both.
//!
//! ROS latches `/robot_description` and `/tf_static` (transient local);
//! the protocol has no such QoS, so each is sent again to every client
//! that subscribes to it later.

use super::values;
use arm_ik::bag::Topic;
use arm_ik::bag::{BagMessage, Outgoing, RobotTopics, StampedTarget, TargetType};
use arm_ik::node::JointState;
use arm_ik::replay::{TickSink, joint_state_msg};
use foxglove::websocket::{ChannelView, Client, ServerListener};
use foxglove::{ChannelBuilder, Context, PartialMetadata, RawChannel, Schema};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Where `--view` serves when no address is given: this machine only.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8765";

/// `--view [ADDR]`.
#[derive(Debug, clap::Args)]
pub struct ViewArgs {
    /// Serve the arm live to Foxglove over its WebSocket protocol at ADDR
    /// (default 127.0.0.1:8765; port 0 picks a free one): the URDF on
    /// /robot_description, /tf, /tf_static, /joint_states, the targets and
    /// their marker. Runs at wall-clock speed. The URL to open is printed.
    #[arg(long, value_name = "ADDR", num_args = 0..=1,
          default_missing_value = DEFAULT_ADDR, value_parser = values::socket_addr)]
    pub view: Option<SocketAddr>,
}

/// A latched channel and its last message.
type LastMessage = (Arc<RawChannel>, Vec<u8>);

/// The latched messages, resent to a client that subscribes late.
#[derive(Default)]
struct Latched {
    by_channel: Mutex<HashMap<u64, LastMessage>>,
}

impl ServerListener for Latched {
    fn on_subscribe(&self, client: Client, channel: ChannelView) {
        let latched = self.by_channel.lock().expect("not poisoned");
        if let Some((ch, data)) = latched.get(&u64::from(channel.id())) {
            ch.log_to_sink(data, client.sink_id());
        }
    }
}

/// A running server and its channels.
pub struct View {
    robot: RobotTopics,
    channels: HashMap<Topic, Arc<RawChannel>>,
    latched: Arc<Latched>,
    /// Wall time of the first message and its stamp (ns), to pace a
    /// replay at its recorded speed.
    paced: Option<(Instant, u64)>,
    pace: bool,
    server: Option<foxglove::WebSocketServerHandle>,
    _context: Arc<Context>,
}

impl View {
    /// Starts serving at `addr` and prints where to connect. `pace`: hold
    /// each tick until its time comes (a replay, which would otherwise run
    /// as fast as it computes).
    pub fn start(addr: SocketAddr, robot: RobotTopics, pace: bool) -> anyhow::Result<View> {
        let context = Context::new();
        let latched = Arc::new(Latched::default());
        let mut channels = HashMap::new();
        for topic in Topic::ALL {
            let text = arm_ik::bag::ros2msg_definition(topic.type_name())
                .expect("every robot topic has a schema");
            let ch = ChannelBuilder::new(topic.name())
                .context(&context)
                .message_encoding("cdr")
                .schema(Schema::new(topic.type_name(), "ros2msg", text.into_bytes()))
                .build_raw()
                .map_err(|e| anyhow::anyhow!("--view: channel {}: {e}", topic.name()))?;
            channels.insert(topic, ch);
        }
        let server = foxglove::WebSocketServer::new()
            .name("arm_ik")
            .context(&context)
            .bind(addr.ip().to_string(), addr.port())
            .listener(latched.clone())
            .start_blocking()
            .map_err(|e| anyhow::anyhow!("--view {addr}: cannot serve: {e}"))?;
        let ws = format!("ws://{}:{}", addr.ip(), server.port());
        errln!("arm_ik: serving the arm to Foxglove at {ws}");
        errln!("arm_ik: open {}", server.app_url());
        let mut view = View {
            robot,
            channels,
            latched,
            paced: None,
            pace,
            server: Some(server),
            _context: context,
        };
        view.send_latched(now_ns());
        Ok(view)
    }

    fn send_latched(&mut self, stamp_ns: u64) {
        for m in self.robot.latched(stamp_ns as i64) {
            let ch = &self.channels[&m.topic];
            let mut latched = self.latched.by_channel.lock().expect("not poisoned");
            latched.insert(u64::from(ch.id()), (ch.clone(), m.data.clone()));
            drop(latched);
            self.send(stamp_ns, &m);
        }
    }

    fn send(&self, log_time_ns: u64, m: &Outgoing) {
        let meta = PartialMetadata {
            log_time: Some(log_time_ns),
        };
        self.channels[&m.topic].log_with_meta(&m.data, meta);
    }

    /// Waits until `stamp_ns` is due on the wall clock, when pacing.
    fn wait_for(&mut self, stamp_ns: u64) {
        if !self.pace {
            return;
        }
        let (wall, first) = *self.paced.get_or_insert((Instant::now(), stamp_ns));
        let due = wall + Duration::from_nanos(stamp_ns.saturating_sub(first));
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }

    /// A joint state stamped `stamp_ns` (ns since the epoch), and its /tf.
    pub fn joint_state(&mut self, stamp_ns: u64, js: &JointState) {
        self.wait_for(stamp_ns);
        let msg = joint_state_msg(stamp_ns, js);
        for m in self.robot.joint_state(&msg) {
            self.send(stamp_ns, &m);
        }
    }

    /// A target and its marker.
    pub fn target(&mut self, stamp_ns: u64, t: &StampedTarget) {
        let target = self.robot.target(t);
        let marker = self.robot.marker(t);
        self.send(stamp_ns, &target);
        self.send(stamp_ns, &marker);
    }

    /// Stops serving, closing the clients' connections.
    pub fn stop(&mut self) {
        if let Some(server) = self.server.take() {
            server.stop().wait_blocking();
        }
    }
}

impl Drop for View {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A replay's ticks, paced, on their recorded times.
impl TickSink for View {
    fn tick(&mut self, log_time_ns: u64, js: &JointState, _: f64) {
        self.joint_state(log_time_ns, js);
    }

    fn target(&mut self, msg: &BagMessage, kind: TargetType) {
        if let Ok(t) = StampedTarget::decode(kind, &msg.data) {
            View::target(self, msg.log_time_ns, &t);
        }
    }
}

/// Now, in ns since the Unix epoch.
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
