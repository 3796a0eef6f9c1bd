//! Where a replay sends what it sees besides its report: each tick's joint
//! state and each target message, to an output bag (what a recording of
//! the live node and robot_state_publisher would hold) and to the plot.

use super::plot::PlotRecorder;
use crate::bag::output::{Existing, Inputs};
use crate::bag::{BagError, BagMessage, BagWriter, RobotTopics, Storage, Topic, TopicId};
use crate::bag::{Header, JointStateMsg, StampedTarget, TargetType};
use crate::node::JointState;
use std::collections::HashMap;
use std::path::Path;

/// Takes a replay's ticks and target messages as they happen.
pub trait TickSink {
    /// A tick's joint state at bag time `log_time_ns`, with the tip's
    /// distance to its target (m).
    fn tick(&mut self, log_time_ns: u64, js: &JointState, tracking_error: f64);

    /// A message on a target topic, of the type `ik_node` takes there.
    fn target(&mut self, _msg: &BagMessage, _kind: TargetType) {}
}

impl TickSink for () {
    fn tick(&mut self, _: u64, _: &JointState, _: f64) {}
}

impl TickSink for PlotRecorder {
    fn tick(&mut self, _: u64, js: &JointState, tracking_error: f64) {
        self.record(js.stamp, js, tracking_error);
    }
}

/// The replay (or a run) as a rosbag2 MCAP bag that shows the arm on its
/// own: the joint states and targets, and with them `/robot_description`,
/// `/tf_static`, `/tf` and the target markers ([`RobotTopics`]). Written
/// under a temporary name until [`OutputBag::finish`]. The first write
/// error stops the writing and is returned by `finish`, so a failing disk
/// does not stop the replay's checks.
pub struct OutputBag {
    writer: BagWriter,
    robot: RobotTopics,
    /// The topics added so far, by name.
    ids: HashMap<String, TopicId>,
    /// The latched topics are written before the first message.
    started: bool,
    error: Option<BagError>,
}

impl OutputBag {
    /// A new bag at `path` (a folder, or one file when it ends in .mcap),
    /// never one of `inputs`, for the robot of `robot`.
    pub fn create(
        path: &Path,
        existing: Existing,
        inputs: &Inputs,
        robot: RobotTopics,
    ) -> Result<OutputBag, BagError> {
        let writer = BagWriter::create_with(path, Storage::Mcap, existing, inputs)?;
        Ok(OutputBag {
            writer,
            robot,
            ids: HashMap::new(),
            started: false,
            error: None,
        })
    }

    /// Completes the bag, or returns the first error writing it.
    pub fn finish(self) -> Result<(), BagError> {
        match self.error {
            Some(e) => Err(e),
            None => self.writer.finish(),
        }
    }

    /// Writes `data` on `topic` (added on first use) at `log_time_ns`,
    /// after the latched topics when it is the first message.
    fn put(&mut self, log_time_ns: u64, topic: &str, kind: Topic, data: &[u8]) {
        if self.error.is_some() {
            return;
        }
        if !self.started {
            self.started = true;
            for m in self.robot.latched(log_time_ns as i64) {
                self.put(log_time_ns, m.topic.name(), m.topic, &m.data);
            }
        }
        let id = match self.ids.get(topic) {
            Some(&id) => Ok(id),
            None => (self.writer)
                .add_topic_with_qos(topic, kind.type_name(), kind.qos())
                .inspect(|&id| {
                    self.ids.insert(topic.to_string(), id);
                }),
        };
        if let Err(e) = id.and_then(|id| self.writer.write(id, log_time_ns, data)) {
            self.error = Some(e);
        }
    }

    /// A joint state stamped `log_time_ns`, and its `/tf`.
    pub fn joint_state(&mut self, log_time_ns: u64, js: &JointState) {
        let msg = joint_state_msg(log_time_ns, js);
        for m in self.robot.joint_state(&msg) {
            self.put(log_time_ns, m.topic.name(), m.topic, &m.data);
        }
    }

    /// A target as given to the node, on `topic` (its bytes as they
    /// came, `data`), and its marker.
    pub fn target(&mut self, log_time_ns: u64, topic: &str, t: &StampedTarget, data: &[u8]) {
        self.put(log_time_ns, topic, Topic::Target(t.kind()), data);
        let m = self.robot.marker(t);
        self.put(log_time_ns, m.topic.name(), m.topic, &m.data);
    }
}

impl TickSink for OutputBag {
    fn tick(&mut self, log_time_ns: u64, js: &JointState, _: f64) {
        self.joint_state(log_time_ns, js);
    }

    fn target(&mut self, msg: &BagMessage, kind: TargetType) {
        match StampedTarget::decode(kind, &msg.data) {
            Ok(t) => OutputBag::target(self, msg.log_time_ns, &msg.topic, &t, &msg.data),
            // Kept as it came (a replay of it fails it), without a marker.
            Err(_) => self.put(msg.log_time_ns, &msg.topic, Topic::Target(kind), &msg.data),
        }
    }
}

/// Every output a replay may have, each optional.
#[derive(Default)]
pub struct Outputs {
    pub bag: Option<OutputBag>,
    pub plot: Option<PlotRecorder>,
    /// A live view (`--view`), which the front-end provides.
    pub view: Option<Box<dyn TickSink>>,
}

impl TickSink for Outputs {
    fn tick(&mut self, log_time_ns: u64, js: &JointState, tracking_error: f64) {
        if let Some(p) = &mut self.plot {
            p.tick(log_time_ns, js, tracking_error);
        }
        if let Some(b) = &mut self.bag {
            b.tick(log_time_ns, js, tracking_error);
        }
        if let Some(v) = &mut self.view {
            v.tick(log_time_ns, js, tracking_error);
        }
    }

    fn target(&mut self, msg: &BagMessage, kind: TargetType) {
        if let Some(b) = &mut self.bag {
            TickSink::target(b, msg, kind);
        }
        if let Some(v) = &mut self.view {
            v.target(msg, kind);
        }
    }
}

/// The `sensor_msgs/JointState` of a tick's joint state stamped `stamp_ns`,
/// as the bags and the live view carry it.
pub fn joint_state_msg(stamp_ns: u64, js: &JointState) -> JointStateMsg {
    JointStateMsg {
        header: Header {
            stamp_ns: stamp_ns as i64,
            frame_id: String::new(),
        },
        name: js.name.to_vec(),
        position: js.position.clone(),
        velocity: js.velocity.clone(),
        effort: Vec::new(),
    }
}
