//! Servo hardware behind [`ServoOutput`]: joint angles through the
//! calibration into the link thread, present positions back.

use super::{Effort, ServoOutput};
use crate::servo::calibration::Calibration;
use crate::servo::joint::FieldError;
use crate::servo::link::{Link, LinkState, LinkStatus, Pacing};
use std::time::Duration;
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
/// `kind` names. Its positions are the calibration's
/// [`slots`](Calibration::slots): the chain's joints, then the robot's
/// actuated extra joints (a gripper), each driven when the file gives it a
/// servo.
pub struct SerialServo {
    cal: Calibration,
    link: Link,
    /// The commands of the driven joints.
    commands: Vec<i32>,
    /// No command sent yet (since the start or an enable): a first set of
    /// positions with a NaN is held back whole rather than sending made-up
    /// values, unless the servos said where they are (then those joints
    /// hold there); a position left out (the gripper, by a caller that
    /// knows only the chain) holds where the servo is: on servos that
    /// report their positions the first command waits until they have,
    /// on others the joint goes to its rest.
    started: bool,
    /// The last finite position asked of each slot: what an undriven extra
    /// joint reports as its feedback.
    asked: Vec<f64>,
    relaxed: bool,
    text: String,
    ok: bool,
    /// Paced by the caller: how long each command waits for its frame.
    exchange: Option<Duration>,
    /// Lines from the link's set-up not yet taken.
    notes: std::collections::VecDeque<String>,
    /// The last command's frame read present positions (paced only).
    fresh: bool,
}

impl SerialServo {
    /// Starts the link on `port`; returns at once (connecting goes on in
    /// the background and shows in [`link`](ServoOutput::link)).
    pub fn open(port: &str, cal: Calibration) -> Result<SerialServo, OpenError> {
        SerialServo::start(port, cal, Pacing::Own)
    }

    /// Starts the link on `port` paced by the caller at `rate_hz` (which
    /// replaces `link.rate_hz`): each [`command`](ServoOutput::command)
    /// sends its frame at once (goals, then the read of present positions)
    /// and returns when the frame is done: as soon as the servos answered,
    /// at most twice the reply timeout and a period later; see
    /// [`fresh`](Self::fresh). What teleoperation's loop runs on: the
    /// leader read and the follower written in the same period.
    ///
    /// `fresh_reads`: each frame's read waits for its own replies (a
    /// leader, whose positions are the frame); otherwise it keeps what
    /// answers within a few milliseconds, as on the link's own clock (a
    /// follower, whose write is what the frame is for).
    pub fn open_paced(
        port: &str,
        mut cal: Calibration,
        rate_hz: f64,
        fresh_reads: bool,
    ) -> Result<SerialServo, OpenError> {
        cal.link.rate_hz = rate_hz;
        cal.link.paced = fresh_reads;
        // A frame's read waits up to the reply timeout for servos that
        // have been answering (half a period for a quiet one); waiting for
        // the link thread as long again, a busy machine delays a frame
        // rather than dropping one.
        let wait = 2 * cal.link.reply_timeout + Duration::from_secs_f64(1.0 / rate_hz);
        let mut s = SerialServo::start(port, cal, Pacing::Caller)?;
        s.exchange = Some(wait);
        Ok(s)
    }

    fn start(port: &str, cal: Calibration, pacing: Pacing) -> Result<SerialServo, OpenError> {
        let session =
            (cal.protocol.session)(&cal.joints, &cal.link).map_err(|error| OpenError::Session {
                protocol: cal.protocol.name,
                error,
            })?;
        let link = Link::start(port, &cal.joints, cal.link.clone(), session, pacing)?;
        Ok(SerialServo {
            commands: vec![0; cal.joints.len()],
            asked: cal.slots.iter().map(|s| s.rest).collect(),
            text: link.status().describe(),
            cal,
            link,
            started: false,
            relaxed: false,
            ok: false,
            exchange: None,
            fresh: false,
            notes: Default::default(),
        })
    }

    /// Paced by the caller: the last command's frame was done and read
    /// the servos' present positions, so [`feedback`](ServoOutput::feedback)
    /// is what they measured in it. Always false on the link's own clock.
    pub fn fresh(&self) -> bool {
        self.fresh
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

    /// Stops the link thread (after what `link.on_exit` says: hold or
    /// relax) and returns its final state.
    pub fn close(self) -> LinkStatus {
        self.link.close()
    }

    /// Before the first command: the servos' present positions (clamped
    /// into each joint's range) as the commands of the joints that are
    /// not given, when the servos report them; true when they did.
    fn hold_where_they_are(&self, commands: &mut [i32]) -> bool {
        let Some(present) = self.link.present() else {
            return false;
        };
        for ((c, p), j) in commands.iter_mut().zip(present).zip(&self.cal.joints) {
            *c = p.clamp(j.min, j.max);
        }
        true
    }
}

impl ServoOutput for SerialServo {
    fn command(&mut self, positions: &[f64], _t: f64) {
        if !self.relaxed {
            let mut next = self.commands.clone();
            let held = !self.started && self.hold_where_they_are(&mut next);
            let wait = !self.started
                && !held
                && positions.len() < self.cal.slots.len()
                && self.cal.protocol.measures_positions;
            let completed;
            let positions = if self.started || held {
                positions
            } else {
                completed = self.cal.complete(positions);
                &completed
            };
            let ok = self.cal.commands(positions, &mut next).is_ok();
            if !wait && (ok || held || self.started) {
                self.commands = next;
                self.started = true;
                self.link.send(&self.commands);
            }
            for (a, &p) in self.asked.iter_mut().zip(positions) {
                if p.is_finite() {
                    *a = p;
                }
            }
        }
        if let Some(timeout) = self.exchange {
            self.fresh = self.link.exchange(timeout);
        }
        let st = self.link.status();
        self.ok = st.state == LinkState::Connected;
        self.text = st.describe();
    }

    /// The measured positions in the output's order; an extra joint
    /// without a servo reports the position it was last asked for.
    fn feedback(&self) -> Option<Vec<f64>> {
        let mut angles = self.cal.angles(&self.link.present()?);
        for ((a, slot), asked) in angles.iter_mut().zip(&self.cal.slots).zip(&self.asked) {
            if slot.servo.is_none() {
                *a = *asked;
            }
        }
        Some(angles)
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

    /// Relaxes through the link (torque off, or pulses stopped) at its
    /// next period; commands are dropped until [`enable`](Self::enable).
    fn relax(&mut self) {
        self.relaxed = true;
        self.link.relax();
    }

    /// Holds again from where the servos are; the next command starts a
    /// new slow move (a first command with a missing value holds that
    /// joint where it is, as at the start).
    fn enable(&mut self) {
        if self.relaxed {
            self.relaxed = false;
            self.started = false;
            self.link.enable();
        }
    }

    fn relaxed(&self) -> bool {
        self.relaxed
    }

    /// Each servo's load (or current) and overload flag, in the output's
    /// order and in joint terms (signed toward increasing joint angle); a
    /// joint without a servo reports nothing.
    fn effort(&self) -> Option<Vec<Effort>> {
        let effort = self.link.effort()?;
        Some(
            self.cal
                .slots
                .iter()
                .map(|s| match s.servo {
                    Some(k) => {
                        let e = effort.get(k).copied().unwrap_or_default();
                        Effort {
                            load: e.load.map(|l| l * self.cal.joints[k].direction),
                            ..e
                        }
                    }
                    None => Effort::default(),
                })
                .collect(),
        )
    }

    /// What the session changed on the servos when it set them up (e.g.
    /// the return delay), once each, as the link thread reports it.
    fn take_notice(&mut self) -> Option<String> {
        self.notes.extend(self.link.take_notes());
        self.notes.pop_front()
    }
}
