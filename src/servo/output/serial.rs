//! Servo hardware behind [`ServoOutput`]: joint angles through the
//! calibration into the link thread, present positions back.

use super::ServoOutput;
use crate::servo::calibration::Calibration;
use crate::servo::joint::FieldError;
use crate::servo::link::{Link, LinkState, LinkStatus};
use thiserror::Error;

/// Why the link to the servos could not be started.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The calibration's protocol settings do not make a session (only a
    /// calibration not built by [`Calibration::check`] can have this).
    #[error("{protocol} session: {error}")]
    Session {
        protocol: &'static str,
        error: FieldError,
    },
    /// The link thread could not be started.
    #[error("cannot start the link thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// Servos on a serial port, driven by the protocol the calibration's
/// `kind` names.
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

impl SerialServo {
    /// Starts the link on `port`; returns at once (connecting goes on in
    /// the background and shows in [`link`](ServoOutput::link)).
    pub fn open(port: &str, cal: Calibration) -> Result<SerialServo, OpenError> {
        let session =
            (cal.protocol.session)(&cal.joints, &cal.link).map_err(|error| OpenError::Session {
                protocol: cal.protocol.name,
                error,
            })?;
        let link = Link::start(port, &cal.joints, cal.link.clone(), session)?;
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
        self.cal.protocol.measures_positions
    }

    fn link_ok(&self) -> bool {
        self.ok
    }
}
