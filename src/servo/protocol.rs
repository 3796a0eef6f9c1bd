//! What a servo protocol tells the generic parts (calibration, link,
//! output) about itself.
//!
//! A protocol is one module folder (`pwm_bridge/`, `feetech/`,
//! `dynamixel/`) that owns
//! its wire format and its link session and describes itself with one
//! [`Protocol`] value; [`registry`](super::registry) lists them. Nothing
//! outside a protocol's module matches on which protocol it is: the
//! generic code only reads these descriptions.

use super::joint::{Device, FieldError, Fields, JointMap};
use super::link::{LinkDefaults, LinkSettings, Session, SessionError};
use serialport::SerialPort;
use std::fmt;
use std::time::Duration;
use thiserror::Error;

/// What one protocol is, for the generic code: its names, what a servo
/// file for it may say, its link defaults, and how to talk to it.
pub struct Protocol {
    /// Its one name: the servo file's `kind:` and the node's `protocol`
    /// parameter.
    pub name: &'static str,
    /// Older spellings of `kind:`, still read with a deprecation warning.
    pub aliases: &'static [&'static str],
    /// What it drives, for help texts ("hobby PWM servos through the
    /// Arduino firmware bridge").
    pub summary: &'static str,
    /// What a joint's `output` number is ("channel", "servo id").
    pub output_name: &'static str,
    /// Highest `output` number.
    pub max_output: u16,
    /// Its own fields, allowed at file level and per joint (e.g. `model`).
    pub fields: &'static [&'static str],
    pub link: LinkDefaults,
    /// Whether the servos report their positions: then they are read at
    /// start-up (no park pose) and the node publishes them as the joint
    /// state.
    pub measures_positions: bool,
    /// The servo of one joint from its fields (the file's, overridden by
    /// the joint's).
    pub device: fn(&Fields) -> Result<Device, FieldError>,
    /// Checks that need every joint at once, and the link (servos that
    /// cannot share a bus, a baud rate a servo cannot do), after each
    /// joint passed on its own.
    pub check_bus: fn(&[JointMap], &LinkSettings) -> Result<(), BusError>,
    /// The link session for checked joints (chain order).
    pub session: SessionFactory,
    /// Finds the servos on a bus (`arm_ik calibrate`); `None` for hardware
    /// that cannot be asked who is there (hobby servos).
    pub scan: Option<Scanner>,
}

/// How to find a protocol's servos on a bus.
#[derive(Debug, Clone, Copy)]
pub struct Scanner {
    pub find: Scan,
    /// The speeds such servos usually talk at (factory settings, the
    /// robots' usual ones), tried in this order after the configured one.
    pub bauds: &'static [u32],
}

/// Asks every servo on the bus to answer (on a port already open at the
/// baud to try) and returns who did, in id order; waits `window` for the
/// answers to a broadcast. Moves nothing.
pub type Scan = fn(&mut dyn SerialPort, Duration) -> Result<Vec<FoundServo>, SessionError>;

/// One servo that answered a [`Scan`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundServo {
    pub id: u8,
    /// The model number it reports.
    pub number: u16,
    /// Its model by the name a servo file's `model:` takes, when known.
    pub model: Option<&'static str>,
}

/// Makes a protocol's link session for checked joints (chain order) and
/// link settings; fails only on fields the calibration would refuse.
pub type SessionFactory = fn(&[JointMap], &LinkSettings) -> Result<Box<dyn Session>, FieldError>;

/// Servos that are each fine but cannot work together on one bus.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("joint '{joint}': {why}")]
pub struct BusError {
    pub joint: String,
    pub why: String,
}

impl Protocol {
    /// For protocols whose servos need no check across joints.
    pub fn no_bus_check(_: &[JointMap], _: &LinkSettings) -> Result<(), BusError> {
        Ok(())
    }
}

impl fmt::Debug for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// Two protocols are the same when their names are: each is one static
/// value.
impl PartialEq for Protocol {
    fn eq(&self, other: &Protocol) -> bool {
        self.name == other.name
    }
}

impl Eq for Protocol {}
