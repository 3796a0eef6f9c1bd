//! An in-memory transport: what the tests (and anything else without ROS)
//! use in place of topics. Commands queue up until the next tick, joint
//! states and target-marker updates queue up until drained; every queue is
//! bounded and drops its oldest entry when full, so a flood of targets or
//! a reader that never drains cannot grow memory.

use super::command::Command;
use super::core::NodeCore;
use super::marker::MarkerUpdate;
use super::msg::{JointState, TargetMsg};
use crate::servo::{ServoOutput, VirtualServo};
use std::collections::VecDeque;

/// A node core with queues standing in for topics.
pub struct MemoryNode<S: ServoOutput = VirtualServo> {
    core: NodeCore<S>,
    inbox: VecDeque<Command>,
    outbox: VecDeque<JointState>,
    markers: VecDeque<MarkerUpdate>,
    capacity: usize,
    /// Commands dropped because the inbox was full (the newest are kept).
    pub dropped_targets: u64,
    /// Joint states dropped because nobody drained them.
    pub dropped_states: u64,
}

impl<S: ServoOutput> MemoryNode<S> {
    /// Default queue length: 20 s of joint states at 50 Hz.
    pub const CAPACITY: usize = 1000;

    pub fn new(core: NodeCore<S>) -> MemoryNode<S> {
        MemoryNode {
            core,
            inbox: VecDeque::new(),
            outbox: VecDeque::new(),
            markers: VecDeque::new(),
            capacity: Self::CAPACITY,
            dropped_targets: 0,
            dropped_states: 0,
        }
    }

    /// "Publishes" a target; it is taken in at the next tick.
    pub fn push_target(&mut self, msg: TargetMsg) {
        self.push_command(Command::Target(msg));
    }

    /// Sends any command; it is taken in at the next tick.
    pub fn push_command(&mut self, cmd: Command) {
        if self.inbox.len() >= self.capacity {
            self.inbox.pop_front();
            self.dropped_targets += 1;
        }
        self.inbox.push_back(cmd);
    }

    /// Delivers the queued commands at `now`, runs one tick and queues its
    /// joint state and target-marker update.
    pub fn tick(&mut self, now: f64) {
        while let Some(cmd) = self.inbox.pop_front() {
            // A refusal is counted in the core's status.
            let _ = self.core.command(&cmd, now);
            self.publish_marker();
        }
        let js = self.core.tick(now).joint_state;
        if self.outbox.len() >= self.capacity {
            self.outbox.pop_front();
            self.dropped_states += 1;
        }
        self.outbox.push_back(js);
        self.publish_marker();
    }

    /// Queues the target marker's update, if the core has one (as
    /// `ik_node` does after each input and each tick).
    fn publish_marker(&mut self) {
        if let Some(u) = self.core.marker_update() {
            if self.markers.len() >= self.capacity {
                self.markers.pop_front();
            }
            self.markers.push_back(u);
        }
    }

    /// Takes every target-marker update (`~/target_marker/update`) since
    /// the last drain, oldest first.
    pub fn drain_marker_updates(&mut self) -> Vec<MarkerUpdate> {
        self.markers.drain(..).collect()
    }

    /// Takes every joint state published since the last drain, oldest first.
    pub fn drain_joint_states(&mut self) -> Vec<JointState> {
        self.outbox.drain(..).collect()
    }

    pub fn core(&self) -> &NodeCore<S> {
        &self.core
    }

    pub fn core_mut(&mut self) -> &mut NodeCore<S> {
        &mut self.core
    }
}
