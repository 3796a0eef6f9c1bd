//! The node's servo output as the parameters choose it: virtual servos
//! (simulation, the default) or servo hardware on a serial port.

use super::virtual_servo::{ServoOutput, VirtualServo};
use crate::servo::SerialServo;

/// One of the outputs the node can drive. An enum rather than a trait
/// object: the node core stays generic over plain types and the tick loop
/// has no dynamic dispatch.
pub enum NodeOutput {
    Virtual(VirtualServo),
    Serial(Box<SerialServo>),
}

impl NodeOutput {
    /// Where the arm rests when it is switched on, when the servos cannot
    /// report it but their calibration says (a park pose).
    pub fn park_pose(&self) -> Option<Vec<f64>> {
        match self {
            NodeOutput::Virtual(_) => None,
            NodeOutput::Serial(s) => s.calibration().park_pose(),
        }
    }
}

impl ServoOutput for NodeOutput {
    fn command(&mut self, positions: &[f64], t: f64) {
        match self {
            NodeOutput::Virtual(s) => s.command(positions, t),
            NodeOutput::Serial(s) => s.command(positions, t),
        }
    }

    fn feedback(&self) -> Option<Vec<f64>> {
        match self {
            NodeOutput::Virtual(s) => s.feedback(),
            NodeOutput::Serial(s) => s.feedback(),
        }
    }

    fn link(&self) -> &str {
        match self {
            NodeOutput::Virtual(s) => s.link(),
            NodeOutput::Serial(s) => s.link(),
        }
    }

    fn measured(&self) -> bool {
        match self {
            NodeOutput::Virtual(s) => s.measured(),
            NodeOutput::Serial(s) => s.measured(),
        }
    }

    fn link_ok(&self) -> bool {
        match self {
            NodeOutput::Virtual(s) => s.link_ok(),
            NodeOutput::Serial(s) => s.link_ok(),
        }
    }
}
