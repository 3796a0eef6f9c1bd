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

pub mod clock;
pub mod junit;
mod limits;
mod outcome;
pub mod plot;
mod report;
pub mod sink;
pub mod topics;
mod tracking;

pub use outcome::{CheckName, FailureKind, LimitKind};
pub use report::{Check, MessageFailure, Report, Thresholds, TickFailure};
pub use sink::{OutputBag, Outputs, TickSink, joint_state_msg};
pub use tracking::CatchUp;

use crate::bag::TargetType;
use crate::bag::{BagMessage, BagReader};
use crate::bench::cpu_time;
use crate::ik::BudgetClock;
use crate::node::{NodeCore, SolveOutcome};
use crate::servo::ServoOutput;
use clock::{BagClock, ClockSource};
use limits::LimitCheck;
use std::ops::ControlFlow;
use topics::TargetTopics;

/// Replay settings besides the node's own.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Where targets are read, as `ik_node` subscribes.
    pub topics: TargetTopics,
    /// After the last message, tick up to this long (s) for the arm to
    /// arrive.
    pub settle_s: f64,
    /// Cap on each failure list.
    pub max_listed: usize,
    pub thresholds: Thresholds,
    /// The clock the node runs on, and (for a recorded `/clock`) the first
    /// one's offset from its receive time (ns; see [`clock`]).
    pub clock: ClockSource,
    pub clock_offset_ns: i64,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        ReplayOptions {
            topics: TargetTopics::default(),
            settle_s: 10.0,
            max_listed: 1000,
            thresholds: Thresholds::default(),
            clock: ClockSource::Receive,
            clock_offset_ns: 0,
        }
    }
}

/// The replay state machine; feed it messages in bag order (or hand it the
/// bag, [`Replay::read`]), then [`Replay::finish`].
pub struct Replay<S: ServoOutput> {
    core: NodeCore<S>,
    opts: ReplayOptions,
    dt: f64,
    /// Node clock (ns) at simulated time 0: the first target's time on
    /// the chosen clock, and its receive (log) time.
    t0: Option<(i64, u64)>,
    clock: BagClock,
    now: f64,
    next_tick: u64,
    /// The accepted target waiting for its solve: (index, log time).
    pending: Option<(u64, u64)>,
    limits: LimitCheck,
    catch_up: CatchUp,
    report: Report,
    started: std::time::Instant,
}

impl<S: ServoOutput> Replay<S> {
    /// Replays into `core`. A bag's time is not the machine's: each solve's
    /// budget is counted on the thread's CPU time, so a replay's verdict
    /// (a CI job's) does not depend on what else the machine runs.
    pub fn new(mut core: NodeCore<S>, bag: &str, opts: ReplayOptions) -> Replay<S> {
        core.set_budget_clock(cpu_time::clock(BudgetClock::Cpu));
        let topics = (
            opts.topics.topic(TargetType::Pose),
            opts.topics.topic(TargetType::Point),
        );
        let report = Report::new(bag, topics, core.status().solver, opts.thresholds.clone());
        let dt = core.motion().period();
        Replay {
            dt,
            limits: LimitCheck::new(dt, core.motion().position(), opts.max_listed),
            catch_up: CatchUp::new(opts.thresholds.max_position_error),
            clock: BagClock::new(opts.clock, opts.clock_offset_ns),
            core,
            opts,
            t0: None,
            now: 0.0,
            next_tick: 0,
            pending: None,
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

    /// The bag time (ns, on the receive clock) of a simulated time (s).
    pub fn log_time(&self, t: f64) -> u64 {
        self.t0.map_or(0, |(_, log)| log) + (t * 1e9).round() as u64
    }

    /// Feeds every message of `bag`, calling `each` with the count so far
    /// (for progress); `each` returning `Break` stops the replay there (a
    /// signal), which the report says ([`Report::stopped`]). A read error
    /// ends the bag: what came before it is replayed and the error
    /// recorded in the report.
    pub fn read(
        &mut self,
        bag: &mut BagReader,
        sink: &mut impl TickSink,
        mut each: impl FnMut(u64, &BagReader) -> ControlFlow<()>,
    ) {
        let mut n = 0u64;
        while let Some(item) = bag.next() {
            match item {
                Ok(msg) => self.feed(&msg, sink),
                Err(e) => {
                    self.bag_error(&e);
                    break;
                }
            }
            n += 1;
            if each(n, bag).is_break() {
                self.report.stopped = true;
                break;
            }
        }
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
        let clock = self.clock.observe(msg);
        let Some(expected) = self.opts.topics.target_type(&msg.topic).filter(|_| !clock) else {
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
        let stamped = self.opts.topics.decode_stamped(msg, expected);
        let stamp = stamped.as_ref().map_or(0, |s| s.header.stamp_ns);
        let node = self.clock.node_ns(log, stamp);
        let (t0, _) = *self.t0.get_or_insert((node, log));
        // The simulated clock never runs backwards, even if the bag does.
        let t = ((node - t0) as f64 / 1e9).max(self.now);
        self.run_until(t, sink);
        self.now = t;
        if TargetType::from_name(&msg.type_name) == Some(expected) {
            sink.target(msg, expected);
        }
        match stamped.map(|s| topics::to_target(s, t0)) {
            Ok(tm) => self.take(index, log, &tm, t),
            Err((kind, detail)) => {
                match kind {
                    FailureKind::WrongType => self.report.wrong_type += 1,
                    _ => self.report.malformed += 1,
                }
                self.fail(index, log, kind, detail);
            }
        }
    }

    /// Hands a decoded target to the core at simulated time `t`.
    fn take(&mut self, index: u64, log: u64, tm: &crate::node::TargetMsg, t: f64) {
        match self.core.on_target(tm, t) {
            Some(reason) => {
                self.report.rejected += 1;
                self.report.rejected_by_reason.count(reason);
                let why = (self.core.status().last_rejection.as_ref())
                    .map(|(_, w)| w.clone())
                    .unwrap_or_default();
                let detail = format!("{}: {why}", reason.name());
                self.fail(index, log, FailureKind::Rejected, detail);
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
        let refused = self.core.status().targets.rejected.collision;
        let tick = self.core.tick(t);
        let in_collision = self.core.status().targets.rejected.collision > refused;
        let js = &tick.joint_state;
        self.next_tick += 1;
        self.report.ticks += 1;
        let limits = self.core.motion().limits();
        (self.limits).check((self.report.ticks - 1, t), js, limits, &mut self.report);
        let st = self.core.status();
        let tracking_error = st.tracking_error;
        sink.tick(self.log_time(t), js, tracking_error);
        self.report.max_tracking_error_m = self.report.max_tracking_error_m.max(tracking_error);
        self.catch_up.observe(t, st);
        // The pending target's fate is what its solve came to.
        if let (Some(outcome), Some((index, log))) = (tick.solve, self.pending.take()) {
            self.follow(index, log, outcome, in_collision);
        }
    }

    /// Counts a solved target by its outcome, failing it where it fails;
    /// `in_collision`: the refusal was the collision check's.
    fn follow(&mut self, index: u64, log: u64, outcome: SolveOutcome, in_collision: bool) {
        match outcome {
            SolveOutcome::Refused { why } if in_collision => {
                self.report.collision_refused += 1;
                self.fail(index, log, FailureKind::Collision, why);
            }
            SolveOutcome::Refused { why } => {
                self.report.rejected += 1;
                let detail = format!("the solver refused it: {why}");
                self.fail(index, log, FailureKind::Rejected, detail);
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
                let max = |m: Option<f64>, x: f64| Some(m.map_or(x, |m| m.max(x)));
                r.max_position_error_m = max(r.max_position_error_m, position_error);
                r.max_orientation_error_rad = max(r.max_orientation_error_rad, orientation_error);
                let limit = self.opts.thresholds.max_position_error;
                if position_error > limit {
                    let detail = format!("solved {position_error:.6} m off (limit {limit} m)");
                    self.fail(index, log, FailureKind::PositionError, detail);
                }
            }
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
        let r = &mut self.report;
        r.final_tracking_error_m = st.tracking_error;
        r.collision = st.collision.clone();
        r.mean_tracking_error_m = st.tracking.mean;
        r.caught_up_s = self.catch_up.caught_up_s;
        r.start_up_tracking_error_m = self.catch_up.start_up;
        r.steady_tracking_error_m = r.caught_up_s.map(|_| self.catch_up.steady);
        r.simulated_s = self.next_tick.saturating_sub(1) as f64 * self.dt;
        r.wall_s = self.started.elapsed().as_secs_f64();
        r.messages_per_s = r.messages as f64 / r.wall_s.max(1e-9);
        r.clock = self.clock.source();
        r.clock_note = self.clock.note(self.core.config().max_target_age);
        r.evaluate();
        self.report
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ik::{Common, JacobianOptions, SolverConfig};
    use crate::model::Chain;
    use crate::node::{JointState, NodeConfig};
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
        let limits = r.core.motion().limits().to_vec();
        let names = r.core.joint_names().clone();
        let js = |q: Vec<f64>| JointState {
            stamp: 0.0,
            name: Arc::clone(&names),
            velocity: vec![0.0; q.len()],
            position: q,
        };
        let mut jump = q0.clone();
        jump[0] += 0.5; // 25 rad/s at 50 Hz
        r.limits
            .check((0, 0.0), &js(jump.clone()), &limits, &mut r.report);
        assert_eq!(r.report.velocity_violations, 1);
        assert_eq!(r.report.acceleration_violations, 1);
        let mut past = jump;
        past[1] = limits[1].upper + 0.01;
        past[2] = f64::NAN;
        r.limits.check((1, 0.02), &js(past), &limits, &mut r.report);
        assert_eq!(r.report.limit_violations, 1);
        assert_eq!(r.report.non_finite, 1);
        assert_eq!(r.report.tick_failures[0].joint, "base_yaw");
        let report = r.finish(&mut ());
        assert!(!report.passed);
    }

    /// A replay's solves count their budget on the thread's CPU time (a
    /// CI runner's load must not fail a bag), and new settings taken
    /// during the replay keep that clock.
    #[test]
    fn a_replay_counts_solve_budgets_on_cpu_time_across_retunes() {
        let mut r = replay();
        assert_eq!(r.core.config().budget_clock.kind(), BudgetClock::Cpu);
        let settings = crate::node::NodeSettings::default();
        r.core.retune(&settings).unwrap();
        r.core.tick(0.0);
        assert!(!r.core.retune_pending());
        assert_eq!(r.core.config().budget_clock.kind(), BudgetClock::Cpu);
    }
}
