//! A leader arm: its servos opened relaxed (torque off, moved by hand) and
//! read once per frame, for `arm_ik teleop` (read in the run loop itself,
//! right before the tick that writes the follower) and for the ROS
//! `leader_node` (which publishes each reading).
//!
//! In the run loop its link is paced by the loop
//! ([`SerialServo::open_paced`]), so the positions the leader reports in a
//! tick are the ones the follower is written in that tick: no clock of the
//! leader's own to wait for, and no reading replaced before the follower
//! got it.

use super::input::Input;
use crate::model::Chain;
use crate::node::teleop::names::{NameMap, NameMapError, match_names, parse_map};
use crate::node::{Command, JointLayout, LeaderMsg};
use crate::servo::calibration::{Calibration, CalibrationError};
use crate::servo::output::OpenError;
use crate::servo::{SerialServo, ServoOutput};
use std::path::Path;

/// Consecutive reads without a frame after which the leader is said to be
/// silent (a single missed read is normal on a busy bus).
const SILENT_AFTER: u64 = 10;

/// A leader arm that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LeaderError {
    /// The servo file does not load for the leader's robot.
    #[error("{path}: {source}")]
    Config {
        path: String,
        #[source]
        source: CalibrationError,
    },
    /// Its servos cannot be read back (hobby servos behind the PWM bridge).
    #[error(
        "{path}: {protocol} servos cannot report their position, so they cannot lead; a leader arm needs bus servos (Feetech, Dynamixel)"
    )]
    CannotReport {
        path: String,
        protocol: &'static str,
    },
    /// The port's link did not start.
    #[error("cannot start the link on {port}: {error}")]
    Link { port: String, error: OpenError },
}

/// Opens the leader arm of servo file `config` (for `chain`) on `port`,
/// its link paced at `rate_hz` by whoever reads it, and relaxes it: a
/// leader is moved by hand. Refused when its protocol cannot report
/// positions.
pub fn open_leader(
    config: &Path,
    port: &str,
    chain: &Chain,
    rate_hz: f64,
) -> Result<SerialServo, LeaderError> {
    let path = config.display().to_string();
    let cal = Calibration::load(config, chain).map_err(|source| LeaderError::Config {
        path: path.clone(),
        source,
    })?;
    if !cal.protocol.measures_positions {
        return Err(LeaderError::CannotReport {
            path,
            protocol: cal.protocol.name,
        });
    }
    let mut leader =
        SerialServo::open_paced(port, cal, rate_hz, true).map_err(|error| LeaderError::Link {
            port: port.to_owned(),
            error,
        })?;
    leader.relax();
    Ok(leader)
}

/// The joints each side moves (a mimic joint follows its own leader).
pub fn moved_joints(layout: &JointLayout) -> Vec<String> {
    layout.names()[..layout.axes()].to_vec()
}

/// Which follower joint each joint of `leader` drives: the same name, the
/// same role, or `map` (`LEADER=FOLLOWER` items, each possibly a
/// comma-separated list).
pub fn map_joints(
    leader: &Chain,
    follower: &[String],
    map: &[String],
) -> Result<NameMap, NameMapError> {
    let explicit = map
        .iter()
        .map(|m| parse_map(m))
        .collect::<Result<Vec<_>, _>>()?
        .concat();
    match_names(
        &moved_joints(&JointLayout::new(leader)),
        follower,
        &explicit,
    )
}

/// The leader's servos (relaxed) and which follower joints they lead.
pub struct LeaderSource {
    leader: SerialServo,
    /// (leader axis, follower joint name) of each joint it leads.
    axes: Vec<usize>,
    names: Vec<String>,
    /// Reads that gave a frame, and reads that did not (link down, servos
    /// silent, a read not answered within the period).
    pub frames: u64,
    pub missed: u64,
    /// Reads without a frame since the last one.
    missed_run: u64,
    notice: Option<String>,
}

impl LeaderSource {
    /// `leader` (from [`open_leader`]); `map`: which follower joint each
    /// leader axis leads.
    pub fn new(leader: SerialServo, map: &NameMap) -> LeaderSource {
        let (axes, names) = map.pairs.iter().map(|(i, f, _)| (*i, f.clone())).unzip();
        LeaderSource {
            leader,
            axes,
            names,
            frames: 0,
            missed: 0,
            missed_run: 0,
            notice: None,
        }
    }

    /// The leader's link as the status says it.
    pub fn link(&self) -> &str {
        self.leader.link()
    }

    /// Reads the leader now (one exchange on its bus): every axis of the
    /// leader's robot (URDF units), when the read came back whole and
    /// fresh.
    pub fn read(&mut self, now: f64) -> Option<Vec<f64>> {
        // Relaxed, this writes nothing: the frame is only the read.
        self.leader.command(&[], now);
        let q = self
            .leader
            .feedback()
            .filter(|q| self.leader.fresh() && self.leader.link_ok() && self.leads_from(q));
        match q {
            Some(_) => {
                if self.missed_run >= SILENT_AFTER {
                    self.notice = Some(format!(
                        "leader arm: reading again after {} reads without a frame",
                        self.missed_run
                    ));
                }
                self.frames += 1;
                self.missed_run = 0;
            }
            None => {
                self.missed += 1;
                self.missed_run += 1;
                if self.missed_run == SILENT_AFTER {
                    self.notice = Some(format!(
                        "leader arm silent: {SILENT_AFTER} reads without a frame on {} (the follower holds once its timeout passes)",
                        self.leader.link()
                    ));
                }
            }
        }
        q
    }

    fn leads_from(&self, q: &[f64]) -> bool {
        self.axes.iter().all(|&i| i < q.len())
    }

    /// The frame the follower takes from a reading of [`Self::read`]: the
    /// led joints by the follower's names.
    pub fn frame(&self, q: &[f64]) -> LeaderMsg {
        LeaderMsg {
            name: self.names.clone(),
            position: self.axes.iter().map(|&i| q[i]).collect(),
        }
    }

    /// What changed about the leader's link since last asked: what
    /// connecting set up on its servos, it went silent, or it reads again.
    pub fn take_notice(&mut self) -> Option<String> {
        self.take_link_notice().or_else(|| self.notice.take())
    }

    /// What connecting set up on the leader's servos, once (see
    /// [`ServoOutput::take_notice`]).
    pub fn take_link_notice(&mut self) -> Option<String> {
        self.leader
            .take_notice()
            .map(|n| format!("leader arm: {n}"))
    }

    /// Reads the leader now and hands `take` its pose as a `leader` frame
    /// when the read came back whole.
    pub(super) fn poll(&mut self, now: f64, take: &mut impl FnMut(Input)) {
        if let Some(q) = self.read(now) {
            take(Input::Command(Command::Leader(self.frame(&q))));
        }
    }
}
