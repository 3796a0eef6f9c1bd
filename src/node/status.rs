//! What the node reports about itself: target counters, errors, link state,
//! loop rate and solve times. Everything here has a fixed size, so a node
//! that runs for days at 1 kHz input uses the same memory as at start.

use super::cartesian::CartesianStatus;
use super::follow::Hold;
use super::gripper::GripperStatus;
use super::program::ProgramStatus;
use super::teleop::TeleopStatus;
use super::trajectory::TrajectoryStatus;
use crate::ik::{SolveStatus, SolverKind};
use serde::Serialize;

/// Why a command (a target, a joint command, a gripper command, ...) was
/// refused before anything moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    /// NaN or infinite position, orientation or stamp.
    NotFinite,
    /// A zero-length quaternion or another invalid field.
    Invalid,
    /// The stamp is further than `max_target_age` from the node clock.
    Stale,
    /// The frame is not the chain's base link.
    WrongFrame,
    /// The servos are relaxed: nothing moves until they are enabled.
    Relaxed,
    /// A joint name the node does not move (unknown, or a mimic joint).
    UnknownJoint,
    /// A gripper command, and the robot has no gripper.
    NoGripper,
    /// A named pose that the poses file does not have.
    UnknownPose,
    /// Every solution found puts the arm in collision (with itself, the
    /// floor or an obstacle); the reason names the pair.
    Collision,
    /// The arm follows a leader arm: nothing else may move it.
    Teleop,
    /// A streamed target a step along its path whose answer would swing
    /// the arm to another configuration (`node::stream`): the arm holds.
    Reconfiguration,
}

impl RejectReason {
    pub const ALL: [RejectReason; 11] = [
        RejectReason::NotFinite,
        RejectReason::Invalid,
        RejectReason::Stale,
        RejectReason::WrongFrame,
        RejectReason::Relaxed,
        RejectReason::UnknownJoint,
        RejectReason::NoGripper,
        RejectReason::UnknownPose,
        RejectReason::Collision,
        RejectReason::Teleop,
        RejectReason::Reconfiguration,
    ];

    pub fn name(self) -> &'static str {
        match self {
            RejectReason::NotFinite => "not_finite",
            RejectReason::Invalid => "invalid",
            RejectReason::Stale => "stale",
            RejectReason::WrongFrame => "wrong_frame",
            RejectReason::Relaxed => "relaxed",
            RejectReason::UnknownJoint => "unknown_joint",
            RejectReason::NoGripper => "no_gripper",
            RejectReason::UnknownPose => "unknown_pose",
            RejectReason::Collision => "collision",
            RejectReason::Teleop => "teleop",
            RejectReason::Reconfiguration => "reconfiguration",
        }
    }
}

/// Rejections per reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Rejections {
    pub not_finite: u64,
    pub invalid: u64,
    pub stale: u64,
    pub wrong_frame: u64,
    pub relaxed: u64,
    pub unknown_joint: u64,
    pub no_gripper: u64,
    pub unknown_pose: u64,
    pub collision: u64,
    pub teleop: u64,
    pub reconfiguration: u64,
}

impl Rejections {
    pub fn total(&self) -> u64 {
        self.not_finite
            + self.invalid
            + self.stale
            + self.wrong_frame
            + self.relaxed
            + self.unknown_joint
            + self.no_gripper
            + self.unknown_pose
            + self.collision
            + self.teleop
            + self.reconfiguration
    }

    pub fn count(&mut self, r: RejectReason) {
        match r {
            RejectReason::NotFinite => self.not_finite += 1,
            RejectReason::Invalid => self.invalid += 1,
            RejectReason::Stale => self.stale += 1,
            RejectReason::WrongFrame => self.wrong_frame += 1,
            RejectReason::Relaxed => self.relaxed += 1,
            RejectReason::UnknownJoint => self.unknown_joint += 1,
            RejectReason::NoGripper => self.no_gripper += 1,
            RejectReason::UnknownPose => self.unknown_pose += 1,
            RejectReason::Collision => self.collision += 1,
            RejectReason::Teleop => self.teleop += 1,
            RejectReason::Reconfiguration => self.reconfiguration += 1,
        }
    }
}

/// What happened to the targets that came in.
///
/// `received = accepted + rejected.total()`, and every accepted target is
/// either solved or superseded by a newer one before the next tick (only the
/// latest target matters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TargetCounters {
    pub received: u64,
    pub accepted: u64,
    pub rejected: Rejections,
    /// Accepted, but replaced by a newer target before it was solved.
    pub superseded: u64,
    pub solved: u64,
    /// Solved and sent to the motion: converged, or best effort within
    /// `max_best_effort_error`.
    pub reached: u64,
    /// Of `reached`, the best-effort ones.
    pub best_effort: u64,
    /// Solved but too far from the target: the arm holds.
    pub unreachable: u64,
}

/// The inputs other than targets (joint commands, gripper commands, relax
/// and enable, named poses): `received = accepted + refused.total()`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CommandCounters {
    pub received: u64,
    pub accepted: u64,
    pub refused: Rejections,
}

/// A duration distribution in fixed memory: a log-spaced histogram (20
/// bins per decade from 100 ns to 10 s, so quantiles are within 12 %), plus
/// exact count, mean and max.
#[derive(Debug, Clone)]
pub struct TimeStats {
    bins: [u64; TimeStats::BINS],
    count: u64,
    sum: f64,
    max: f64,
}

impl Default for TimeStats {
    fn default() -> Self {
        TimeStats {
            bins: [0; TimeStats::BINS],
            count: 0,
            sum: 0.0,
            max: 0.0,
        }
    }
}

impl TimeStats {
    const PER_DECADE: f64 = 20.0;
    const MIN: f64 = 1e-7;
    const BINS: usize = 160;

    /// Records one duration in seconds.
    pub fn record(&mut self, s: f64) {
        if !s.is_finite() || s < 0.0 {
            return;
        }
        let i = ((s / Self::MIN).log10() * Self::PER_DECADE).floor();
        let i = if i.is_finite() {
            i.clamp(0.0, (Self::BINS - 1) as f64)
        } else {
            0.0
        } as usize;
        self.bins[i] += 1;
        self.count += 1;
        self.sum += s;
        self.max = self.max.max(s);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum / self.count as f64
        }
    }

    pub fn max(&self) -> f64 {
        self.max
    }

    /// The `p` quantile (0..=1) in seconds: the upper edge of its bin,
    /// never above the observed maximum; 0 with no samples.
    pub fn quantile(&self, p: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((p.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &n) in self.bins.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let edge = Self::MIN * 10f64.powf((i + 1) as f64 / Self::PER_DECADE);
                return edge.min(self.max);
            }
        }
        self.max
    }

    /// Count, mean, p50, p99 and max, for reports.
    pub fn summary(&self) -> TimeSummary {
        TimeSummary {
            count: self.count,
            mean: self.mean(),
            p50: self.quantile(0.5),
            p99: self.quantile(0.99),
            max: self.max,
        }
    }
}

/// A [`TimeStats`] boiled down (seconds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TimeSummary {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

impl TimeSummary {
    /// The exact summary of a set of durations (s): for benchmarks, which
    /// keep every sample, where [`TimeStats`] trades 12 % quantile error
    /// for fixed memory in a node that runs for days. Quantiles are
    /// nearest-rank, like [`TimeStats::quantile`]; all zero when empty.
    pub fn of(samples: &[f64]) -> TimeSummary {
        if samples.is_empty() {
            return TimeSummary::default();
        }
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let at = |p: f64| sorted[((p * n as f64).ceil() as usize).clamp(1, n) - 1];
        TimeSummary {
            count: n as u64,
            mean: sorted.iter().sum::<f64>() / n as f64,
            p50: at(0.5),
            p99: at(0.99),
            max: sorted[n - 1],
        }
    }
}

/// Running mean and maximum of a value, in fixed memory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RunningStats {
    pub count: u64,
    pub mean: f64,
    pub max: f64,
}

impl RunningStats {
    pub fn record(&mut self, x: f64) {
        if !x.is_finite() {
            return;
        }
        self.count += 1;
        self.mean += (x - self.mean) / self.count as f64;
        self.max = self.max.max(x);
    }
}

/// What the solve of one target came to, as [`NodeCore::tick`] reports it
/// (and `last_solve` of the [`NodeStatus`] keeps).
///
/// [`NodeCore::tick`]: super::NodeCore::tick
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum SolveOutcome {
    /// Solved and sent to the motion: converged, or a best effort within
    /// `max_best_effort_error` (`best_effort` then says why it is not
    /// better).
    Reached {
        #[serde(serialize_with = "solve_status")]
        status: SolveStatus,
        position_error: f64,
        orientation_error: f64,
    },
    /// Solved, but the answer is too far from the target: the arm holds.
    Unreachable {
        #[serde(serialize_with = "solve_status")]
        status: SolveStatus,
        position_error: f64,
        orientation_error: f64,
    },
    /// The solver refused the target (a solver-specific limit the intake
    /// checks cannot know); nothing moved.
    Refused { why: String },
}

impl SolveOutcome {
    /// The solver's own verdict, when it answered.
    pub fn status(&self) -> Option<SolveStatus> {
        match self {
            SolveOutcome::Reached { status, .. } | SolveOutcome::Unreachable { status, .. } => {
                Some(*status)
            }
            SolveOutcome::Refused { .. } => None,
        }
    }
}

/// A [`SolveStatus`] by its name (`converged`, `best_effort`,
/// `failed`).
fn solve_status<Ser: serde::Serializer>(s: &SolveStatus, ser: Ser) -> Result<Ser::Ok, Ser::Error> {
    ser.serialize_str(s.name())
}

pub(crate) fn solver_name<Ser: serde::Serializer>(
    k: &SolverKind,
    ser: Ser,
) -> Result<Ser::Ok, Ser::Error> {
    ser.serialize_str(k.name())
}

fn last_solve<Ser: serde::Serializer>(
    s: &Option<SolveStatus>,
    ser: Ser,
) -> Result<Ser::Ok, Ser::Error> {
    match s {
        Some(s) => ser.serialize_some(s.name()),
        None => ser.serialize_none(),
    }
}

/// What moves the tip besides targets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SteerMode {
    /// Targets (or nothing) move the arm.
    #[default]
    Idle,
    /// Twists: the jog.
    Jog,
    /// The target marker, dragged or just let go.
    Drag,
}

/// The jog and the target marker: what they are doing, what came in, and
/// what held the tip back.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SteerStatus {
    pub mode: SteerMode,
    /// Twists taken in.
    pub twists: u64,
    /// Marker feedback messages taken in.
    pub marker_feedback: u64,
    /// Twists and feedback refused (the reason is `last_rejection`).
    pub refused: u64,
    /// What keeps the tip from the jog or drag target now, if anything.
    pub hold: Option<Hold>,
    /// Said once, when an arm with fewer than 6 joints is asked to turn
    /// the tip in a way it cannot.
    pub note: Option<String>,
}

/// The collision check: how close the arm is, to what, and what it
/// stopped. Distances are signed (m): negative is an overlap.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CollisionStatus {
    /// The smallest distance between any checked pair now.
    pub clearance: f64,
    /// That pair, e.g. `forearm vs floor`.
    pub closest: String,
    /// The smallest distance since start, and its pair.
    pub min_clearance: f64,
    pub min_closest: String,
    /// Ticks that ended with a pair overlapping (never expected: a bug,
    /// or an arm that started so).
    pub ticks_in_collision: u64,
    /// Motions stopped short of contact.
    pub stops: u64,
    /// The last one: which pair, how far apart.
    pub last_stop: Option<String>,
    /// Said when the arm started closer than the margin.
    pub start_in_collision: Option<String>,
    /// Pairs measured every tick.
    pub pairs: usize,
    /// Times the workspace file was re-read.
    pub workspace_loads: u64,
    /// Why the workspace file last failed to load, until one does.
    pub workspace_error: Option<String>,
}

impl CollisionStatus {
    pub fn new(pairs: usize) -> CollisionStatus {
        CollisionStatus {
            clearance: f64::INFINITY,
            closest: String::new(),
            min_clearance: f64::INFINITY,
            min_closest: String::new(),
            ticks_in_collision: 0,
            stops: 0,
            last_stop: None,
            start_in_collision: None,
            pairs,
            workspace_loads: 0,
            workspace_error: None,
        }
    }
}

/// Teaching the arm: teleoperation, trajectories, programs and recorded
/// poses.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TeachStatus {
    /// With a leader arm.
    pub teleop: Option<TeleopStatus>,
    pub trajectory: TrajectoryStatus,
    /// The latest Cartesian path.
    pub cartesian: CartesianStatus,
    /// The latest program run.
    pub program: Option<ProgramStatus>,
    /// What the last pose recording did.
    pub recorded: Option<String>,
}

/// The node's state as a user or a diagnostics topic sees it.
#[derive(Debug, Clone, Serialize)]
pub struct NodeStatus {
    /// The solver (`jacobian`, `analytic`, ...).
    #[serde(serialize_with = "solver_name")]
    pub solver: SolverKind,
    /// The servo link ("virtual" for simulated servos).
    pub link: String,
    /// False while the servo hardware is not connected or not answering.
    pub link_ok: bool,
    pub targets: TargetCounters,
    /// The other commands.
    pub commands: CommandCounters,
    /// True between relax and enable: the servos are limp and commands
    /// that move the arm are refused.
    pub relaxed: bool,
    /// The gripper, when the robot has one.
    pub gripper: Option<GripperStatus>,
    /// The last rejection and what exactly was wrong.
    pub last_rejection: Option<(RejectReason, String)>,
    /// Errors of the last solve (m, rad).
    pub last_position_error: f64,
    pub last_orientation_error: f64,
    /// Status of the last solve (`converged`, `best_effort`, `failed`).
    #[serde(serialize_with = "last_solve")]
    pub last_solve: Option<SolveStatus>,
    /// True while the latest target was unreachable and the arm holds.
    pub holding: bool,
    /// Distance from the commanded tip to the latest reached target (m).
    pub tracking_error: f64,
    /// Tracking error over every tick that had a target.
    pub tracking: RunningStats,
    /// Largest difference between servo feedback and command this tick
    /// (rad or m); 0 without feedback.
    pub servo_lag: f64,
    pub ticks: u64,
    /// Measured on the node clock passed to `tick`.
    pub loop_rate_hz: f64,
    /// The jog and the target marker.
    pub steering: SteerStatus,
    /// The collision check, when it is on.
    pub collision: Option<CollisionStatus>,
    /// Teleoperation, trajectories, programs, recorded poses.
    pub teach: TeachStatus,
    /// Wall time of the solves.
    #[serde(skip)]
    pub solve_time: TimeStats,
    /// Wall time of whole ticks (solve, motion, servo command).
    #[serde(skip)]
    pub tick_time: TimeStats,
}

impl NodeStatus {
    pub(crate) fn new(solver: SolverKind) -> NodeStatus {
        NodeStatus {
            solver,
            link: String::new(),
            link_ok: true,
            targets: TargetCounters::default(),
            commands: CommandCounters::default(),
            relaxed: false,
            gripper: None,
            last_rejection: None,
            last_position_error: 0.0,
            last_orientation_error: 0.0,
            last_solve: None,
            holding: false,
            tracking_error: 0.0,
            tracking: RunningStats::default(),
            servo_lag: 0.0,
            ticks: 0,
            loop_rate_hz: 0.0,
            steering: SteerStatus::default(),
            collision: None,
            teach: TeachStatus::default(),
            solve_time: TimeStats::default(),
            tick_time: TimeStats::default(),
        }
    }

    /// The status as JSON, with the time distributions summarised.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert(
                "solve_time".into(),
                serde_json::json!(self.solve_time.summary()),
            );
            o.insert(
                "tick_time".into(),
                serde_json::json!(self.tick_time.summary()),
            );
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_close_and_memory_is_fixed() {
        let mut t = TimeStats::default();
        for i in 1..=1000 {
            t.record(i as f64 * 1e-6);
        }
        let p50 = t.quantile(0.5);
        assert!((p50 / 500e-6 - 1.0).abs() < 0.13, "{p50}");
        assert!(t.quantile(0.99) <= t.max());
        assert!((t.mean() - 500.5e-6).abs() < 1e-12);
    }

    #[test]
    fn exact_summary_uses_nearest_rank() {
        let samples: Vec<f64> = (1..=1000).rev().map(|i| i as f64).collect();
        let s = TimeSummary::of(&samples);
        assert_eq!((s.count, s.p50, s.p99, s.max), (1000, 500.0, 990.0, 1000.0));
        assert_eq!(s.mean, 500.5);
        assert_eq!(TimeSummary::of(&[]), TimeSummary::default());
        assert_eq!(TimeSummary::of(&[3.0]).p99, 3.0);
    }
}
