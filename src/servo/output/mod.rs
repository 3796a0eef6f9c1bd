//! Where the commanded joints go: the servo output interface, the virtual
//! servos used when no hardware is configured, the servos on a serial
//! port, and the one-of-them output a node is built with.

mod serial;
mod virtual_servo;

pub use serial::{OpenError, SerialServo};
pub use virtual_servo::VirtualServo;

pub use crate::servo::joint::Effort;

/// A set of position servos, one per actuated joint: the chain's joints in
/// order, then the robot's actuated joints off the chain (a gripper: the
/// [`Chain::extras`](crate::model::Chain::extras) that mimic no other joint),
/// in URDF order. An output with no servo for an extra joint ignores its
/// value.
///
/// Deliberately small so that every driver fits behind it: the node sends
/// a position per tick and may read positions back. `command` returns
/// nothing because the control loop must keep running through a dropped
/// packet; a driver reports trouble through [`link`].
///
/// [`link`]: ServoOutput::link
pub trait ServoOutput {
    /// Sends the joint positions for time `t` (s, node clock).
    fn command(&mut self, positions: &[f64], t: f64);
    /// The measured positions, when the servos report them.
    fn feedback(&self) -> Option<Vec<f64>>;
    /// A short description of the link for the status ("virtual",
    /// "connected", "timeout on id 3", ...).
    fn link(&self) -> &str {
        "unknown"
    }
    /// True when [`feedback`](ServoOutput::feedback) is measured by the
    /// hardware (bus servos): the node then starts from it once it is
    /// known and publishes it as the joint state, so RViz shows where the
    /// arm is, not where it was told to be.
    fn measured(&self) -> bool {
        false
    }
    /// False while the hardware is unreachable or silent: the node's
    /// health is an error then, with [`link`](ServoOutput::link) as the
    /// reason.
    fn link_ok(&self) -> bool {
        true
    }
    /// Lets the servos go limp: no holding torque (bus servos) or no pulses
    /// (hobby servos); commands are not sent until [`enable`]. Default: an
    /// output that cannot go limp ignores it.
    ///
    /// [`enable`]: ServoOutput::enable
    fn relax(&mut self) {}
    /// Makes limp servos hold again, resuming from where they are
    /// (measured positions; for hobby servos the last command or the park
    /// pose) at the start-up speed, never with a jump.
    fn enable(&mut self) {}
    /// True between [`relax`](ServoOutput::relax) and
    /// [`enable`](ServoOutput::enable).
    fn relaxed(&self) -> bool {
        false
    }
    /// How hard each servo pushes, per actuated joint (the order of
    /// `command`), where the hardware measures it: what lets the node stop
    /// a gripper that closed on an object from cooking its servo. `None`
    /// when the output measures nothing (virtual and hobby servos).
    fn effort(&self) -> Option<Vec<Effort>> {
        None
    }
    /// A line about what connecting changed on the hardware (a register
    /// set up on the servos), to say once; `None` when there is nothing
    /// (more) to say.
    fn take_notice(&mut self) -> Option<String> {
        None
    }
}

/// One of the outputs a node can drive: virtual servos (simulation) or
/// servo hardware on a serial port. An enum rather than a trait object:
/// the node core stays generic over plain types and the tick loop has no
/// dynamic dispatch.
pub enum Output {
    Virtual(VirtualServo),
    Serial(Box<SerialServo>),
}

impl Output {
    /// Where the arm rests when it is switched on, when the servos cannot
    /// report it but their calibration says (a park pose).
    pub fn park_pose(&self) -> Option<Vec<f64>> {
        match self {
            Output::Virtual(_) => None,
            Output::Serial(s) => s.calibration().park_pose(),
        }
    }
}

impl ServoOutput for Output {
    fn command(&mut self, positions: &[f64], t: f64) {
        match self {
            Output::Virtual(s) => s.command(positions, t),
            Output::Serial(s) => s.command(positions, t),
        }
    }

    fn feedback(&self) -> Option<Vec<f64>> {
        match self {
            Output::Virtual(s) => s.feedback(),
            Output::Serial(s) => s.feedback(),
        }
    }

    fn link(&self) -> &str {
        match self {
            Output::Virtual(s) => s.link(),
            Output::Serial(s) => s.link(),
        }
    }

    fn measured(&self) -> bool {
        match self {
            Output::Virtual(s) => s.measured(),
            Output::Serial(s) => s.measured(),
        }
    }

    fn link_ok(&self) -> bool {
        match self {
            Output::Virtual(s) => s.link_ok(),
            Output::Serial(s) => s.link_ok(),
        }
    }

    fn relax(&mut self) {
        match self {
            Output::Virtual(s) => s.relax(),
            Output::Serial(s) => s.relax(),
        }
    }

    fn enable(&mut self) {
        match self {
            Output::Virtual(s) => s.enable(),
            Output::Serial(s) => s.enable(),
        }
    }

    fn relaxed(&self) -> bool {
        match self {
            Output::Virtual(s) => s.relaxed(),
            Output::Serial(s) => s.relaxed(),
        }
    }

    fn effort(&self) -> Option<Vec<Effort>> {
        match self {
            Output::Virtual(s) => s.effort(),
            Output::Serial(s) => s.effort(),
        }
    }

    fn take_notice(&mut self) -> Option<String> {
        match self {
            Output::Virtual(s) => s.take_notice(),
            Output::Serial(s) => s.take_notice(),
        }
    }
}
