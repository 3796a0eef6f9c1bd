//! A leader arm as the source of a teleoperation run: read in the run loop
//! itself, one exchange per tick, right before the tick that writes the
//! follower. Its link is paced by the loop ([`SerialServo::open_paced`]),
//! so the positions the leader reports in a tick are the ones the follower
//! is written in that tick: no clock of the leader's own to wait for, and
//! no reading replaced before the follower got it.

use super::input::Input;
use crate::node::{Command, LeaderMsg};
use crate::servo::{SerialServo, ServoOutput};

/// The leader's servos (relaxed, paced by the loop).
pub struct LeaderSource {
    leader: SerialServo,
    /// (leader axis, follower joint name) of each joint it leads.
    axes: Vec<usize>,
    names: Vec<String>,
    /// Ticks whose read gave a frame, and ticks whose read did not (link
    /// down, servos silent, a read not answered within the period).
    pub frames: u64,
    pub missed: u64,
}

impl LeaderSource {
    /// `leader` paced by the loop; `led`: (leader axis, follower joint
    /// name) of each joint it leads.
    pub fn new(leader: SerialServo, led: Vec<(usize, String)>) -> LeaderSource {
        let (axes, names) = led.into_iter().unzip();
        LeaderSource {
            leader,
            axes,
            names,
            frames: 0,
            missed: 0,
        }
    }

    /// The leader's link as the status says it.
    pub fn link(&self) -> &str {
        self.leader.link()
    }

    /// Reads the leader now (one exchange on its bus) and hands `take` its
    /// pose as a `leader` frame when the read came back whole.
    pub(super) fn poll(&mut self, now: f64, take: &mut impl FnMut(Input)) {
        // Relaxed, this writes nothing: the frame is only the read.
        self.leader.command(&[], now);
        let reading = self
            .leader
            .feedback()
            .filter(|_| self.leader.fresh() && self.leader.link_ok())
            .and_then(|q| {
                self.axes
                    .iter()
                    .map(|&i| q.get(i).copied())
                    .collect::<Option<Vec<f64>>>()
            });
        match reading {
            Some(position) => {
                self.frames += 1;
                take(Input::Command(Command::Leader(LeaderMsg {
                    name: self.names.clone(),
                    position,
                })));
            }
            None => self.missed += 1,
        }
    }
}
