//! What a replay found: the counts, the tracking error split at the end of
//! the start-up move, the failures, and the pass/fail checks made from
//! them, as JSON (`--report`, `--json`) and as the table `replay` prints.

use super::clock::ClockSource;
use super::outcome::{CheckName, FailureKind, LimitKind};
use crate::ik::SolverKind;
use crate::node::status::CollisionStatus;
use crate::node::status::{Rejections, RunningStats};
use serde::Serialize;
use std::io::Write;

/// Pass/fail limits of a replay.
#[derive(Debug, Clone, Serialize)]
pub struct Thresholds {
    /// Targets the solver could not reach that are still a pass.
    pub max_unreachable: u64,
    /// Rejected, malformed or wrongly typed targets that are still a pass.
    pub max_rejected: u64,
    /// Largest IK position error of a reached target, and of the arm's tip
    /// to the last reached target once it has settled (m).
    pub max_position_error: f64,
    /// Largest distance of the commanded tip to the target being followed
    /// once the arm has caught up with it (m). `None`: unchecked, since
    /// while a target moves the arm lags behind it by design (motion
    /// limits). The start-up move is never checked: it starts wherever
    /// the arm happens to be.
    pub max_tracking_error: Option<f64>,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            max_unreachable: 0,
            max_rejected: 0,
            max_position_error: 1e-3,
            max_tracking_error: None,
        }
    }
}

/// A target that failed a check.
#[derive(Debug, Clone, Serialize)]
pub struct MessageFailure {
    /// 0-based index among the messages on the target topic.
    pub index: u64,
    pub log_time_ns: u64,
    pub kind: FailureKind,
    pub detail: String,
}

/// A tick whose joint state broke a limit.
#[derive(Debug, Clone, Serialize)]
pub struct TickFailure {
    pub tick: u64,
    pub time_s: f64,
    pub kind: LimitKind,
    pub joint: String,
    pub value: f64,
    pub limit: f64,
}

/// One pass/fail line of the summary.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub name: CheckName,
    pub passed: bool,
    pub detail: String,
}

/// What a replay found. Counts are over the messages on the two target
/// topics.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub bag: String,
    pub pose_topic: String,
    pub point_topic: String,
    #[serde(serialize_with = "crate::node::status::solver_name")]
    pub solver: SolverKind,
    pub messages: u64,
    pub pose_messages: u64,
    pub point_messages: u64,
    pub reached: u64,
    pub best_effort: u64,
    pub unreachable: u64,
    /// Refused by the node core (NaN, bad quaternion, stale, wrong frame).
    pub rejected: u64,
    pub rejected_by_reason: Rejections,
    /// Could not be decoded.
    pub malformed: u64,
    /// Not the type `ik_node` takes on that topic.
    pub wrong_type: u64,
    /// Replaced by a newer target before the next tick (not a failure).
    pub superseded: u64,
    pub other_topic_messages: u64,
    pub ticks: u64,
    pub limit_violations: u64,
    pub velocity_violations: u64,
    pub acceleration_violations: u64,
    pub non_finite: u64,
    /// Targets refused because every solution found collides.
    pub collision_refused: u64,
    /// The node's collision check at the end (none when it is off): the
    /// smallest distance since start and its pair, the ticks in collision.
    pub collision: Option<CollisionStatus>,
    /// Over reached targets: the IK answer's error the arm then followed
    /// (`None` when no target was reached).
    pub max_position_error_m: Option<f64>,
    pub max_orientation_error_rad: Option<f64>,
    /// Over every tick with a target, the start-up move included.
    pub mean_tracking_error_m: f64,
    pub max_tracking_error_m: f64,
    /// Simulated time (s) at which the arm caught up with its target,
    /// ending the start-up move; `None` when it never did.
    pub caught_up_s: Option<f64>,
    /// The tip's distance to its target while it moved there from where
    /// it started.
    pub start_up_tracking_error_m: RunningStats,
    /// The tip's distance to its target once it had caught up: how well
    /// the arm follows (`None` when it never caught up).
    pub steady_tracking_error_m: Option<RunningStats>,
    /// Tip to the last reached target after the settle time.
    pub final_tracking_error_m: f64,
    pub simulated_s: f64,
    pub wall_s: f64,
    pub messages_per_s: f64,
    /// Why reading the bag stopped early, if it did.
    pub bag_error: Option<String>,
    /// Asked to stop (a signal) before the end of the bag: the checks are
    /// of what was replayed, and the replay fails.
    pub stopped: bool,
    /// The clock the node ran on (see [`super::clock`]).
    pub clock: ClockSource,
    /// What the receive clock made of the stamps, when they sit a
    /// constant offset from it (and the option that fits such a bag).
    pub clock_note: Option<String>,
    pub thresholds: Thresholds,
    pub checks: Vec<Check>,
    pub passed: bool,
    /// Only failures, at most `max_listed`; the rest are counted.
    pub failures: Vec<MessageFailure>,
    pub failures_not_listed: u64,
    pub tick_failures: Vec<TickFailure>,
    pub tick_failures_not_listed: u64,
}

impl Report {
    /// An empty report of a replay of `bag`.
    pub fn new(
        bag: &str,
        (pose_topic, point_topic): (&str, &str),
        solver: SolverKind,
        thresholds: Thresholds,
    ) -> Report {
        Report {
            bag: bag.to_string(),
            pose_topic: pose_topic.into(),
            point_topic: point_topic.into(),
            solver,
            messages: 0,
            pose_messages: 0,
            point_messages: 0,
            reached: 0,
            best_effort: 0,
            unreachable: 0,
            rejected: 0,
            rejected_by_reason: Rejections::default(),
            malformed: 0,
            wrong_type: 0,
            superseded: 0,
            other_topic_messages: 0,
            ticks: 0,
            limit_violations: 0,
            velocity_violations: 0,
            acceleration_violations: 0,
            non_finite: 0,
            collision_refused: 0,
            collision: None,
            max_position_error_m: None,
            max_orientation_error_rad: None,
            mean_tracking_error_m: 0.0,
            max_tracking_error_m: 0.0,
            caught_up_s: None,
            start_up_tracking_error_m: RunningStats::default(),
            steady_tracking_error_m: None,
            final_tracking_error_m: 0.0,
            simulated_s: 0.0,
            wall_s: 0.0,
            messages_per_s: 0.0,
            bag_error: None,
            stopped: false,
            clock: ClockSource::Receive,
            clock_note: None,
            thresholds,
            checks: Vec::new(),
            passed: false,
            failures: Vec::new(),
            failures_not_listed: 0,
            tick_failures: Vec::new(),
            tick_failures_not_listed: 0,
        }
    }

    /// Fills in `checks` and `passed` from the counts.
    pub fn evaluate(&mut self) {
        let th = &self.thresholds;
        let bad_input = self.rejected + self.malformed + self.wrong_type;
        let check = |name, passed, detail| Check {
            name,
            passed,
            detail,
        };
        let checks = vec![
            check(
                CheckName::BagRead,
                self.bag_error.is_none() && !self.stopped,
                match (&self.bag_error, self.stopped) {
                    (Some(e), _) => e.clone(),
                    (None, true) => format!(
                        "stopped before the end, after {} target messages",
                        self.messages
                    ),
                    (None, false) => "read to the end".into(),
                },
            ),
            check(
                CheckName::Targets,
                self.messages > 0,
                format!(
                    "{} messages on {}, {} on {}",
                    self.pose_messages, self.pose_topic, self.point_messages, self.point_topic
                ),
            ),
            check(
                CheckName::Reachable,
                self.unreachable <= th.max_unreachable,
                format!(
                    "{} unreachable (max {})",
                    self.unreachable, th.max_unreachable
                ),
            ),
            check(
                CheckName::ValidInput,
                bad_input <= th.max_rejected,
                format!(
                    "{} rejected, {} malformed, {} wrong type (max {} together)",
                    self.rejected, self.malformed, self.wrong_type, th.max_rejected
                ),
            ),
            self.position_check(),
            self.tracking_check(),
            check(
                CheckName::JointLimits,
                self.limit_violations == 0,
                format!(
                    "{} violations in {} ticks",
                    self.limit_violations, self.ticks
                ),
            ),
            check(
                CheckName::VelocityLimits,
                self.velocity_violations == 0,
                format!("{} violations", self.velocity_violations),
            ),
            check(
                CheckName::AccelerationLimits,
                self.acceleration_violations == 0,
                format!("{} violations", self.acceleration_violations),
            ),
            check(
                CheckName::Finite,
                self.non_finite == 0,
                format!("{} NaN or infinite joint values", self.non_finite),
            ),
            self.collision_check(),
        ];
        self.passed = checks.iter().all(|c| c.passed);
        self.checks = checks;
    }

    /// Collisions are never expected: a target refused as in collision or
    /// a tick that ended in collision fails (the smallest distance and its
    /// pair are said either way).
    fn collision_check(&self) -> Check {
        let Some(c) = &self.collision else {
            return Check {
                name: CheckName::Collision,
                passed: true,
                detail: "the collision check is off".into(),
            };
        };
        let closest = if c.min_clearance.is_finite() {
            format!(
                "; closest {:.1} mm ({})",
                c.min_clearance * 1e3,
                c.min_closest
            )
        } else {
            String::new()
        };
        Check {
            name: CheckName::Collision,
            passed: self.collision_refused == 0 && c.ticks_in_collision == 0,
            detail: format!(
                "{} targets refused as in collision, {} ticks in collision{closest}",
                self.collision_refused, c.ticks_in_collision
            ),
        }
    }

    /// The IK answers' error and where the arm settled; a replay that
    /// reached nothing has no error to show, and fails.
    fn position_check(&self) -> Check {
        let limit = self.thresholds.max_position_error;
        let (passed, detail) = match self.max_position_error_m {
            None => (false, "no target was reached".to_string()),
            Some(ik) => (
                ik <= limit && self.final_tracking_error_m <= limit,
                format!(
                    "max IK error {ik:.2e} m, final tip error {:.2e} m (max {limit:.1e} m)",
                    self.final_tracking_error_m
                ),
            ),
        };
        Check {
            name: CheckName::PositionError,
            passed,
            detail,
        }
    }

    /// The steady-state tracking error against its limit, with the
    /// start-up move shown apart.
    fn tracking_check(&self) -> Check {
        let limit = self.thresholds.max_tracking_error;
        let start_up = match self.caught_up_s {
            Some(t) => format!(
                "start-up move {t:.2} s, max {:.4} m",
                self.start_up_tracking_error_m.max
            ),
            None => "the arm never caught up with its target".to_string(),
        };
        let steady = self
            .steady_tracking_error_m
            .map(|s| format!("steady state max {:.4} m, mean {:.4} m; ", s.max, s.mean));
        let (passed, limit_text) = match (limit, self.steady_tracking_error_m) {
            (None, _) => (true, "unchecked".to_string()),
            (Some(l), Some(s)) => (s.max <= l, format!("max {l} m")),
            (Some(l), None) => (false, format!("max {l} m")),
        };
        Check {
            name: CheckName::TrackingError,
            passed,
            detail: format!("{}{start_up} ({limit_text})", steady.unwrap_or_default()),
        }
    }

    /// The table `arm_ik replay` prints: counts, one line per check, the
    /// first failures.
    pub fn write_table(&self, out: &mut impl Write) -> std::io::Result<()> {
        writeln!(
            out,
            "arm_ik replay: {}: {} targets ({} on {}, {} on {}), {:.1} s simulated in {:.3} s wall ({:.0} messages/s, {} solver)",
            self.bag,
            self.messages,
            self.pose_messages,
            self.pose_topic,
            self.point_messages,
            self.point_topic,
            self.simulated_s,
            self.wall_s,
            self.messages_per_s,
            self.solver
        )?;
        writeln!(
            out,
            "targets: {} reached ({} best effort), {} unreachable, {} rejected, {} malformed, {} wrong type, {} superseded",
            self.reached,
            self.best_effort,
            self.unreachable,
            self.rejected,
            self.malformed,
            self.wrong_type,
            self.superseded
        )?;
        if self.clock != ClockSource::Receive {
            writeln!(out, "clock: {}", self.clock.name())?;
        }
        if let Some(note) = &self.clock_note {
            writeln!(out, "note: {note}")?;
        }
        writeln!(out, "{:<20} {:<6} detail", "check", "result")?;
        for c in &self.checks {
            let result = if c.passed { "pass" } else { "FAIL" };
            writeln!(out, "{:<20} {result:<6} {}", c.name, c.detail)?;
        }
        for f in self.failures.iter().take(10) {
            writeln!(
                out,
                "  message {} ({} ns): {}: {}",
                f.index, f.log_time_ns, f.kind, f.detail
            )?;
        }
        for f in self.tick_failures.iter().take(10) {
            writeln!(
                out,
                "  tick {} ({:.3} s): {} {} = {} (limit {})",
                f.tick, f.time_s, f.joint, f.kind, f.value, f.limit
            )?;
        }
        let more = self.failures.len().saturating_sub(10) as u64 + self.failures_not_listed;
        if more > 0 {
            writeln!(out, "  ... {more} more failing messages (see --report)")?;
        }
        writeln!(out, "result: {}", if self.passed { "PASS" } else { "FAIL" })
    }
}
