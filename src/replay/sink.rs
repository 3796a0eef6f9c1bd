//! Where a replay sends what it sees besides its report: each tick's joint
//! state and each target message, to an output bag (what a recording of
//! the live node would hold: `/joint_states` and the targets) and to the
//! plot.

use super::plot::PlotRecorder;
use crate::bag::Endian;
use crate::bag::output::{Existing, Inputs};
use crate::bag::{BagError, BagMessage, BagWriter, Storage, TopicId};
use crate::bag::{Header, JOINT_STATE, JointStateMsg, TargetType};
use crate::node::JointState;
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

/// The replay as a rosbag2 MCAP bag, written under a temporary name
/// until [`OutputBag::finish`]. The first write error stops the writing
/// and is returned by `finish`, so a failing disk does not stop the
/// replay's checks.
pub struct OutputBag {
    writer: BagWriter,
    joints: TopicId,
    /// The pose and point target topics, added when first seen.
    targets: [Option<TopicId>; 2],
    error: Option<BagError>,
}

impl OutputBag {
    /// A new bag at `path` (a folder, or one file when it ends in .mcap),
    /// never one of `inputs`.
    pub fn create(path: &Path, existing: Existing, inputs: &Inputs) -> Result<OutputBag, BagError> {
        let mut writer = BagWriter::create_with(path, Storage::Mcap, existing, inputs)?;
        let joints = writer.add_topic("/joint_states", JOINT_STATE)?;
        Ok(OutputBag {
            writer,
            joints,
            targets: [None, None],
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

    fn keep(&mut self, written: Result<(), BagError>) {
        if let Err(e) = written {
            self.error = Some(e);
        }
    }
}

impl TickSink for OutputBag {
    fn tick(&mut self, log_time_ns: u64, js: &JointState, _: f64) {
        if self.error.is_some() {
            return;
        }
        let msg = JointStateMsg {
            header: Header {
                stamp_ns: log_time_ns as i64,
                frame_id: String::new(),
            },
            name: js.name.to_vec(),
            position: js.position.clone(),
            velocity: js.velocity.clone(),
            effort: Vec::new(),
        };
        let written = self
            .writer
            .write(self.joints, log_time_ns, &msg.encode(Endian::Little));
        self.keep(written);
    }

    fn target(&mut self, msg: &BagMessage, kind: TargetType) {
        if self.error.is_some() {
            return;
        }
        let slot = &mut self.targets[kind as usize];
        let id = match *slot {
            Some(id) => Ok(id),
            None => self.writer.add_topic(&msg.topic, kind.name()),
        };
        let written = id.and_then(|id| {
            *slot = Some(id);
            self.writer.write(id, msg.log_time_ns, &msg.data)
        });
        self.keep(written);
    }
}

/// Every output a replay may have, each optional.
#[derive(Default)]
pub struct Outputs {
    pub bag: Option<OutputBag>,
    pub plot: Option<PlotRecorder>,
}

impl TickSink for Outputs {
    fn tick(&mut self, log_time_ns: u64, js: &JointState, tracking_error: f64) {
        if let Some(p) = &mut self.plot {
            p.tick(log_time_ns, js, tracking_error);
        }
        if let Some(b) = &mut self.bag {
            b.tick(log_time_ns, js, tracking_error);
        }
    }

    fn target(&mut self, msg: &BagMessage, kind: TargetType) {
        if let Some(b) = &mut self.bag {
            b.target(msg, kind);
        }
    }
}
