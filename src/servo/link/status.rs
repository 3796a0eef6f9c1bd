//! The state of a link, as the caller, logs and diagnostics see it.

use crate::servo::joint::Effort;
use serde::Serialize;

/// Where the link is.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum LinkState {
    /// Opening the port and setting the hardware up.
    #[default]
    Connecting,
    /// Frames going out, replies coming back.
    Connected,
    /// Frames going out, but no reply for `for_ms`.
    Silent { for_ms: u64 },
    /// The port could not be opened or failed; retrying.
    Disconnected { error: String, retry_in_ms: u64 },
    /// [`Link::close`](super::Link::close) was called.
    Closed,
}

/// A snapshot of the link for status reports and tests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkStatus {
    pub port: String,
    pub state: LinkState,
    /// Successful connections so far (more than 1: it reconnected).
    pub connects: u32,
    /// Failed attempts since the last successful connection.
    pub attempts: u32,
    /// Command frames written since the link started.
    pub frames_sent: u64,
    /// The last error, kept after recovering from it.
    pub last_error: Option<String>,
    /// The start-up move from the servos' positions is under way.
    pub ramping: bool,
    /// No commands from the caller for the command timeout: nothing is
    /// written until they come again.
    pub paused: bool,
    /// The servos are limp (relaxed by the caller): nothing but reads is
    /// written until they are enabled.
    pub relaxed: bool,
    /// The commands of the last frame (servo units).
    pub output: Option<Vec<i32>>,
    /// Present positions of the servos (servo units), when they report them.
    pub present: Option<Vec<i32>>,
    /// How many times the servos reported their positions: a caller that
    /// wants a position read after some moment waits for this to grow.
    pub readings: u64,
    /// How hard each servo pushes (signed toward increasing servo command),
    /// when they report it.
    pub effort: Option<Vec<Effort>>,
    /// What the protocol reports beyond the fields here, by name: the
    /// firmware bridge's counters from its last status reply, for
    /// example. For logs, diagnostics and `arm_ik drive --json`.
    pub details: Vec<Detail>,
    /// Problems of individual bus servos, one line each naming the servo
    /// ("servo id 3: no reply for 250 ms", "servo id 2: overload"); empty
    /// when all is well.
    pub servo_errors: Vec<String>,
    /// Reply bytes that were not valid frames or packets.
    pub reply_garbage: u64,
    /// Frames the hardware did not receive, when it can tell (the firmware
    /// bridge counts valid frames; known after
    /// [`Link::close`](super::Link::close)).
    pub frames_lost: Option<u64>,
}

impl LinkStatus {
    /// The protocol detail called `key`, when the session reports it.
    pub fn detail(&self, key: &str) -> Option<&DetailValue> {
        self.details.iter().find(|d| d.key == key).map(|d| &d.value)
    }

    /// One line for logs and diagnostics.
    pub fn describe(&self) -> String {
        let line = self.describe_state();
        if self.servo_errors.is_empty() || matches!(self.state, LinkState::Closed) {
            line
        } else {
            format!("{line}; {}", self.servo_errors.join("; "))
        }
    }

    fn describe_state(&self) -> String {
        match &self.state {
            LinkState::Connecting => format!("connecting to {}", self.port),
            LinkState::Connected if self.relaxed => {
                format!("{}: connected, relaxed (servos limp)", self.port)
            }
            LinkState::Connected if self.paused => format!(
                "{}: connected, paused: no new commands (the firmware watchdog takes over)",
                self.port
            ),
            LinkState::Connected if self.ramping => {
                format!(
                    "{}: connected, moving slowly to the first command",
                    self.port
                )
            }
            LinkState::Connected => format!("{}: connected", self.port),
            LinkState::Silent { for_ms } => {
                format!("{}: silent, no reply for {for_ms} ms", self.port)
            }
            LinkState::Disconnected { error, retry_in_ms } => format!(
                "{}: disconnected ({error}); retrying in {retry_in_ms} ms",
                self.port
            ),
            LinkState::Closed => format!("{}: closed", self.port),
        }
    }
}

/// One named value a protocol reports about its link.
#[derive(Debug, Clone, PartialEq)]
pub struct Detail {
    pub key: &'static str,
    pub value: DetailValue,
}

/// The value of a [`Detail`]; serialises as the bare value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum DetailValue {
    Flag(bool),
    Count(u64),
    Counts(Vec<u64>),
    Text(String),
}

impl DetailValue {
    /// The value as a count, when it is one.
    pub fn count(&self) -> Option<u64> {
        match self {
            DetailValue::Count(n) => Some(*n),
            _ => None,
        }
    }
}

impl Detail {
    pub fn count(key: &'static str, value: impl Into<u64>) -> Detail {
        Detail {
            key,
            value: DetailValue::Count(value.into()),
        }
    }

    pub fn flag(key: &'static str, value: bool) -> Detail {
        Detail {
            key,
            value: DetailValue::Flag(value),
        }
    }
}
