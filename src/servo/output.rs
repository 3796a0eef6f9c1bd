//! Servo hardware behind the node's [`ServoOutput`]: joint angles through
//! the calibration into the link thread, present positions back.

use super::bridge::BridgeSession;
use super::calibration::{Calibration, OutputKind};
use super::link::{Link, LinkState, LinkStatus, Session};
use crate::node::ServoOutput;

/// Servos on a serial port: the firmware bridge or a Feetech bus, as the
/// calibration's `kind` says.
pub struct SerialServo {
    cal: Calibration,
    link: Link,
    commands: Vec<i32>,
    /// No command sent yet: a first set of angles with a NaN is held back
    /// whole rather than sending made-up values for the NaN joints.
    started: bool,
    text: String,
    ok: bool,
}

/// The protocol session for a calibration's kind.
pub fn session_for(cal: &Calibration) -> Box<dyn Session> {
    match cal.kind {
        OutputKind::Pwm => Box::new(BridgeSession::new(cal, &cal.link)),
        OutputKind::Feetech => Box::new(super::feetech_bus::FeetechSession::new(cal, &cal.link)),
    }
}

impl SerialServo {
    /// Starts the link on `port`; returns at once (connecting goes on in
    /// the background and shows in [`link`](ServoOutput::link)).
    pub fn open(port: &str, cal: Calibration) -> std::io::Result<SerialServo> {
        let link = Link::start(port, &cal, cal.link.clone(), session_for(&cal))?;
        Ok(SerialServo {
            commands: vec![0; cal.joints.len()],
            text: link.status().describe(),
            cal,
            link,
            started: false,
            ok: false,
        })
    }

    pub fn calibration(&self) -> &Calibration {
        &self.cal
    }

    /// The commands (servo units) the last [`command`](ServoOutput::command)
    /// asked for.
    pub fn commands(&self) -> Option<&[i32]> {
        self.started.then_some(&self.commands[..])
    }

    pub fn status(&self) -> LinkStatus {
        self.link.status()
    }

    /// Stops the link thread and returns its final state.
    pub fn close(self) -> LinkStatus {
        self.link.close()
    }
}

impl ServoOutput for SerialServo {
    fn command(&mut self, positions: &[f64], _t: f64) {
        let mut next = self.commands.clone();
        let ok = self.cal.commands(positions, &mut next).is_ok();
        if ok || self.started {
            self.commands = next;
            self.started = true;
            self.link.send(&self.commands);
        }
        let st = self.link.status();
        self.ok = st.state == LinkState::Connected;
        self.text = st.describe();
    }

    fn feedback(&self) -> Option<Vec<f64>> {
        self.link.present().map(|p| self.cal.angles(&p))
    }

    fn link(&self) -> &str {
        &self.text
    }

    fn measured(&self) -> bool {
        self.cal.kind == OutputKind::Feetech
    }

    fn link_ok(&self) -> bool {
        self.ok
    }
}
