//! Bag replay: recorded targets through the node core, on a clock taken
//! from the bag, with every tick checked.
//!
//! [`Replay`] owns a [`NodeCore`] built exactly as the live node's (same
//! solver, joint limits and motion limits). Each target message is handed
//! to [`NodeCore::on_target`] at its bag time; in between, the core ticks at
//! its own rate, as the live node's timer would. Every tick's joint state
//! is checked independently of the motion limiter that produced it
//! (finite differences of the commanded positions against the joint,
//! velocity and acceleration limits; NaN), and every target is followed to
//! its solve to see whether it was reached, unreachable, rejected or
//! superseded. All state is fixed-size except the failure lists, which are
//! capped, so a bag of any length replays in the same memory.

pub mod junit;
mod outcome;
pub mod plot;
pub mod topics;

pub use outcome::{CheckName, FailureKind, LimitKind};

use crate::bag::{BagMessage, TargetType};
use crate::node::status::Rejections;
use crate::node::{JointState, NodeCore, SolveOutcome};
use crate::servo::ServoOutput;
use serde::Serialize;
use topics::TargetTopics;

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
    /// at any tick (m). Infinite by default: while a target moves, the arm
    /// lags behind it by design (motion limits).
    pub max_tracking_error: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            max_unreachable: 0,
            max_rejected: 0,
            max_position_error: 1e-3,
            max_tracking_error: f64::INFINITY,
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
    pub solver: crate::ik::SolverKind,
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
    /// Over reached targets: the IK answer's error the arm then followed.
    pub max_position_error_m: f64,
    pub max_orientation_error_rad: f64,
    pub mean_tracking_error_m: f64,
    pub max_tracking_error_m: f64,
    /// Tip to the last reached target after the settle time.
    pub final_tracking_error_m: f64,
    pub simulated_s: f64,
    pub wall_s: f64,
    pub messages_per_s: f64,
    /// Why reading the bag stopped early, if it did.
    pub bag_error: Option<String>,
    pub thresholds: Thresholds,
    pub checks: Vec<Check>,
    pub passed: bool,
    /// Only failures, at most `max_listed`; the rest are counted.
    pub failures: Vec<MessageFailure>,
    pub failures_not_listed: u64,
    pub tick_failures: Vec<TickFailure>,
    pub tick_failures_not_listed: u64,
}

/// Replay settings besides the node's own.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Where targets are read, as `ik_node` subscribes.
    pub topics: TargetTopics,
    /// Ignore the orientation of PoseStamped targets (5-DOF arms, or bags
    /// recorded for position control).
    pub position_only: bool,
    /// After the last message, tick up to this long (s) for the arm to
    /// arrive.
    pub settle_s: f64,
    /// Cap on each failure list.
    pub max_listed: usize,
    pub thresholds: Thresholds,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            topics: TargetTopics::default(),
            position_only: false,
            settle_s: 10.0,
            max_listed: 1000,
            thresholds: Thresholds::default(),
        }
    }
}

/// The replay state machine; feed it messages in bag order, then
/// [`Replay::finish`].
pub struct Replay<S: ServoOutput> {
    core: NodeCore<S>,
    opts: ReplayOptions,
    dt: f64,
    /// Bag time (ns) of simulated time 0: the first target's log time.
    t0: Option<u64>,
    now: f64,
    next_tick: u64,
    /// The accepted target waiting for its solve: (index, log time).
    pending: Option<(u64, u64)>,
    prev_q: Vec<f64>,
    prev_v: Vec<f64>,
    report: Report,
    started: std::time::Instant,
}

/// Where a replay sends each tick's joint state and its bag time (ns).
pub trait TickSink {
    fn tick(&mut self, log_time_ns: u64, js: &JointState, tracking_error: f64);
}

impl TickSink for () {
    fn tick(&mut self, _: u64, _: &JointState, _: f64) {}
}

impl<S: ServoOutput> Replay<S> {
    pub fn new(core: NodeCore<S>, bag: &str, opts: ReplayOptions) -> Replay<S> {
        let q = core.motion().position().to_vec();
        let n = q.len();
        let report = Report {
            bag: bag.to_string(),
            pose_topic: opts.topics.topic(TargetType::Pose).into(),
            point_topic: opts.topics.topic(TargetType::Point).into(),
            solver: core.status().solver,
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
            max_position_error_m: 0.0,
            max_orientation_error_rad: 0.0,
            mean_tracking_error_m: 0.0,
            max_tracking_error_m: 0.0,
            final_tracking_error_m: 0.0,
            simulated_s: 0.0,
            wall_s: 0.0,
            messages_per_s: 0.0,
            bag_error: None,
            thresholds: opts.thresholds.clone(),
            checks: Vec::new(),
            passed: false,
            failures: Vec::new(),
            failures_not_listed: 0,
            tick_failures: Vec::new(),
            tick_failures_not_listed: 0,
        };
        Replay {
            dt: core.motion().period(),
            core,
            opts,
            t0: None,
            now: 0.0,
            next_tick: 0,
            pending: None,
            prev_q: q,
            prev_v: vec![0.0; n],
            report,
            started: std::time::Instant::now(),
        }
    }

    pub fn core(&self) -> &NodeCore<S> {
        &self.core
    }

    pub fn options(&self) -> &ReplayOptions {
        &self.opts
    }

    /// The report so far (final after [`Replay::finish`]).
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// The bag time (ns) of a simulated time (s).
    pub fn log_time(&self, t: f64) -> u64 {
        self.t0.unwrap_or(0) + (t * 1e9).round() as u64
    }

    fn fail(&mut self, index: u64, log_time_ns: u64, kind: FailureKind, detail: String) {
        if self.report.failures.len() < self.opts.max_listed {
            self.report.failures.push(MessageFailure {
                index,
                log_time_ns,
                kind,
                detail,
            });
        } else {
            self.report.failures_not_listed += 1;
        }
    }

    /// Takes one message from the bag; ticks the core up to its time first.
    pub fn feed(&mut self, msg: &BagMessage, sink: &mut impl TickSink) {
        let Some(expected) = self.opts.topics.target_type(&msg.topic) else {
            self.report.other_topic_messages += 1;
            return;
        };
        let index = self.report.messages;
        self.report.messages += 1;
        match expected {
            TargetType::Pose => self.report.pose_messages += 1,
            TargetType::Point => self.report.point_messages += 1,
        }
        let log = msg.log_time_ns;
        let t0 = *self.t0.get_or_insert(log);
        // The simulated clock never runs backwards, even if the bag does.
        let t = (log.saturating_sub(t0) as f64 / 1e9).max(self.now);
        self.run_until(t, sink);
        self.now = t;

        let tm = match (self.opts.topics).decode(msg, expected, t0, self.opts.position_only) {
            Ok(tm) => tm,
            Err((kind, detail)) => {
                match kind {
                    FailureKind::WrongType => self.report.wrong_type += 1,
                    _ => self.report.malformed += 1,
                }
                self.fail(index, log, kind, detail);
                return;
            }
        };
        match self.core.on_target(&tm, t) {
            Some(reason) => {
                self.report.rejected += 1;
                self.report.rejected_by_reason.count(reason);
                let why = self
                    .core
                    .status()
                    .last_rejection
                    .as_ref()
                    .map(|(_, w)| w.clone())
                    .unwrap_or_default();
                self.fail(
                    index,
                    log,
                    FailureKind::Rejected,
                    format!("{}: {why}", reason.name()),
                );
            }
            None => {
                if self.pending.replace((index, log)).is_some() {
                    self.report.superseded += 1;
                }
            }
        }
    }

    /// Ticks every period strictly before `t` (s). While the arm is at
    /// rest with nothing to do, idle ticks are skipped: they cannot change
    /// anything, and a bag with an hour's gap should not cost 180 000 ticks.
    fn run_until(&mut self, t: f64, sink: &mut impl TickSink) {
        loop {
            let tick_t = self.next_tick as f64 * self.dt;
            if tick_t >= t {
                break;
            }
            if self.pending.is_none() && self.core.motion().is_settled() && self.report.ticks > 0 {
                let last = ((t / self.dt).ceil() as u64).saturating_sub(1);
                if last > self.next_tick {
                    self.next_tick = last;
                    continue;
                }
            }
            self.tick(tick_t, sink);
        }
    }

    fn tick(&mut self, t: f64, sink: &mut impl TickSink) {
        let tick = self.core.tick(t);
        let js = &tick.joint_state;
        self.next_tick += 1;
        self.report.ticks += 1;
        self.check_tick(t, js);
        let tracking_error = self.core.status().tracking_error;
        sink.tick(self.log_time(t), js, tracking_error);
        if tracking_error > self.report.max_tracking_error_m {
            self.report.max_tracking_error_m = tracking_error;
        }
        // The pending target's fate is what its solve came to.
        if let (Some(outcome), Some((index, log))) = (tick.solve, self.pending.take()) {
            self.follow(index, log, outcome);
        }
    }

    /// Counts a solved target by its outcome, failing it where it fails.
    fn follow(&mut self, index: u64, log: u64, outcome: SolveOutcome) {
        match outcome {
            SolveOutcome::Refused { why } => {
                self.report.rejected += 1;
                self.fail(
                    index,
                    log,
                    FailureKind::Rejected,
                    format!("the solver refused it: {why}"),
                );
            }
            SolveOutcome::Unreachable { position_error, .. } => {
                self.report.unreachable += 1;
                let detail = format!("best answer is {position_error:.4} m off; the arm holds");
                self.fail(index, log, FailureKind::Unreachable, detail);
            }
            SolveOutcome::Reached {
                status,
                position_error,
                orientation_error,
            } => {
                let r = &mut self.report;
                r.reached += 1;
                if !status.is_converged() {
                    r.best_effort += 1;
                }
                r.max_position_error_m = r.max_position_error_m.max(position_error);
                r.max_orientation_error_rad = r.max_orientation_error_rad.max(orientation_error);
                let limit = self.opts.thresholds.max_position_error;
                if position_error > limit {
                    let detail = format!("solved {position_error:.6} m off (limit {limit} m)");
                    self.fail(index, log, FailureKind::PositionError, detail);
                }
            }
        }
    }

    fn tick_fail(
        &mut self,
        tick: u64,
        t: f64,
        kind: LimitKind,
        joint: usize,
        value: f64,
        limit: f64,
    ) {
        if self.report.tick_failures.len() < self.opts.max_listed {
            let joint = self.core.joint_names()[joint].clone();
            self.report.tick_failures.push(TickFailure {
                tick,
                time_s: t,
                kind,
                joint,
                value,
                limit,
            });
        } else {
            self.report.tick_failures_not_listed += 1;
        }
    }

    /// The limits, checked on what was commanded (finite differences of
    /// positions), not on what the limiter says its velocity is.
    fn check_tick(&mut self, t: f64, js: &JointState) {
        let tick = self.report.ticks - 1;
        let dt = self.dt;
        // The joints the node moves; the mimic joints after them follow.
        for i in 0..self.prev_q.len().min(js.position.len()) {
            let l = self.core.motion().limits()[i];
            let q = js.position[i];
            if !q.is_finite() || !js.velocity[i].is_finite() {
                self.report.non_finite += 1;
                self.tick_fail(tick, t, LimitKind::NotFinite, i, q, 0.0);
                continue;
            }
            if q < l.lower - 1e-9 || q > l.upper + 1e-9 {
                self.report.limit_violations += 1;
                let limit = if q < l.lower { l.lower } else { l.upper };
                self.tick_fail(tick, t, LimitKind::JointLimit, i, q, limit);
            }
            let v = (q - self.prev_q[i]) / dt;
            if v.abs() > l.velocity * (1.0 + 1e-6) + 1e-9 {
                self.report.velocity_violations += 1;
                self.tick_fail(tick, t, LimitKind::Velocity, i, v, l.velocity);
            }
            let a = (v - self.prev_v[i]) / dt;
            if a.abs() > l.acceleration * (1.0 + 1e-6) + 1e-6 {
                self.report.acceleration_violations += 1;
                self.tick_fail(tick, t, LimitKind::Acceleration, i, a, l.acceleration);
            }
            self.prev_q[i] = q;
            self.prev_v[i] = v;
        }
    }

    /// Records that reading the bag failed part-way.
    pub fn bag_error(&mut self, e: impl std::fmt::Display) {
        self.report.bag_error = Some(e.to_string());
    }

    /// Ticks through the last target and up to `settle_s` for the arm to
    /// arrive, then evaluates the checks.
    pub fn finish(mut self, sink: &mut impl TickSink) -> Report {
        let end = self.now + self.opts.settle_s.max(0.0);
        // Deliver the last target, then settle.
        self.run_until(self.now + self.dt * 1.5, sink);
        while self.next_tick as f64 * self.dt <= end && !self.core.motion().is_settled() {
            let t = self.next_tick as f64 * self.dt;
            self.tick(t, sink);
        }
        let st = self.core.status();
        self.report.final_tracking_error_m = st.tracking_error;
        self.report.mean_tracking_error_m = st.tracking.mean;
        self.report.simulated_s = self.next_tick.saturating_sub(1) as f64 * self.dt;
        self.report.wall_s = self.started.elapsed().as_secs_f64();
        self.report.messages_per_s = self.report.messages as f64 / self.report.wall_s.max(1e-9);
        let r = &mut self.report;
        let th = &r.thresholds;
        let bad_input = r.rejected + r.malformed + r.wrong_type;
        let checks = vec![
            Check {
                name: CheckName::BagRead,
                passed: r.bag_error.is_none(),
                detail: r
                    .bag_error
                    .clone()
                    .unwrap_or_else(|| "read to the end".into()),
            },
            Check {
                name: CheckName::Targets,
                passed: r.messages > 0,
                detail: format!(
                    "{} messages on {}, {} on {}",
                    r.pose_messages, r.pose_topic, r.point_messages, r.point_topic
                ),
            },
            Check {
                name: CheckName::Reachable,
                passed: r.unreachable <= th.max_unreachable,
                detail: format!("{} unreachable (max {})", r.unreachable, th.max_unreachable),
            },
            Check {
                name: CheckName::ValidInput,
                passed: bad_input <= th.max_rejected,
                detail: format!(
                    "{} rejected, {} malformed, {} wrong type (max {} together)",
                    r.rejected, r.malformed, r.wrong_type, th.max_rejected
                ),
            },
            Check {
                name: CheckName::PositionError,
                passed: r.max_position_error_m <= th.max_position_error
                    && r.final_tracking_error_m <= th.max_position_error,
                detail: format!(
                    "max IK error {:.2e} m, final tip error {:.2e} m (max {:.1e} m)",
                    r.max_position_error_m, r.final_tracking_error_m, th.max_position_error
                ),
            },
            Check {
                name: CheckName::TrackingError,
                passed: r.max_tracking_error_m <= th.max_tracking_error,
                detail: format!(
                    "max {:.4} m, mean {:.4} m (max {} m)",
                    r.max_tracking_error_m, r.mean_tracking_error_m, th.max_tracking_error
                ),
            },
            Check {
                name: CheckName::JointLimits,
                passed: r.limit_violations == 0,
                detail: format!("{} violations in {} ticks", r.limit_violations, r.ticks),
            },
            Check {
                name: CheckName::VelocityLimits,
                passed: r.velocity_violations == 0,
                detail: format!("{} violations", r.velocity_violations),
            },
            Check {
                name: CheckName::AccelerationLimits,
                passed: r.acceleration_violations == 0,
                detail: format!("{} violations", r.acceleration_violations),
            },
            Check {
                name: CheckName::Finite,
                passed: r.non_finite == 0,
                detail: format!("{} NaN or infinite joint values", r.non_finite),
            },
        ];
        r.passed = checks.iter().all(|c| c.passed);
        r.checks = checks;
        self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ik::{Common, JacobianOptions, SolverConfig};
    use crate::model::Chain;
    use crate::node::NodeConfig;
    use std::sync::Arc;

    fn replay() -> Replay<crate::servo::VirtualServo> {
        let urdf = include_str!("../../urdf/arm.urdf");
        let chain = Chain::from_urdf_str(urdf, None, None).unwrap();
        let core = NodeCore::with_virtual_servos(
            &chain,
            SolverConfig::Jacobian(JacobianOptions::default()),
            Common::default(),
            NodeConfig::default(),
        )
        .unwrap();
        Replay::new(core, "test", ReplayOptions::default())
    }

    /// The tick checks can fail: a jump, a position past its limit and a
    /// NaN are each caught (the limiter never produces them, so they are
    /// fed in directly).
    #[test]
    fn tick_checks_catch_jumps_limit_breaks_and_nan() {
        let mut r = replay();
        let q0 = r.core.motion().position().to_vec();
        let upper = r.core.motion().limits()[1].upper;
        let names = r.core.joint_names().clone();
        let js = |q: Vec<f64>| JointState {
            stamp: 0.0,
            name: names.clone(),
            velocity: vec![0.0; q.len()],
            position: q,
        };
        let mut jump = q0.clone();
        jump[0] += 0.5; // 25 rad/s at 50 Hz
        let a = js(jump);
        r.report.ticks = 1;
        r.check_tick(0.0, &a);
        assert_eq!(r.report.velocity_violations, 1);
        assert_eq!(r.report.acceleration_violations, 1);
        let mut past = r.prev_q.clone();
        past[1] = upper + 0.01;
        let mut b = js(past);
        b.position[2] = f64::NAN;
        b.name = Arc::clone(&names);
        r.report.ticks = 2;
        r.check_tick(0.02, &b);
        assert_eq!(r.report.limit_violations, 1);
        assert_eq!(r.report.non_finite, 1);
        assert_eq!(r.report.tick_failures[0].joint, "base_yaw");
        let report = r.finish(&mut ());
        assert!(!report.passed);
    }
}
