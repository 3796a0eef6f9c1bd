//! What a run came to: the node's counters and times, how the run ended,
//! and a verdict a front-end turns into its exit code. `Serialize`, so the
//! JSON a script reads is this struct, field for field.

use super::delivery::Delivery;
use crate::ik::SolverKind;
use crate::node::status::RunningStats;
use crate::node::status::{CollisionStatus, CommandCounters};
use crate::node::{FigureEight, NodeStatus, RejectReason, TargetCounters, TimeSummary};
use crate::replay::CatchUp;
use serde::Serialize;

/// Why the loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    /// The requested duration ran out.
    Duration,
    /// The input ended and the arm settled (or the settle time ran out).
    InputEnded,
    /// Asked to stop (SIGINT, SIGTERM).
    Stopped,
    /// Whoever reads the joint states went away (a closed pipe).
    OutputClosed,
}

/// The run judged as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Targets came and at least one was reached, or no target came (a
    /// run of other commands).
    Ok,
    /// Targets came, none was reached: unreachable, rejected or never
    /// solved.
    NothingReached,
    /// Every input was malformed: nothing the node could take.
    AllInputMalformed,
    /// The servo link never came up (a port that cannot be opened, servos
    /// that never answered): nothing moved.
    ServosUnreachable,
    /// Some reached targets never went to the servos: the link was down.
    NotSent,
}

/// Microseconds: the solve and tick times as people read them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Micros {
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
    pub count: u64,
}

impl From<TimeSummary> for Micros {
    fn from(s: TimeSummary) -> Micros {
        Micros {
            p50: s.p50 * 1e6,
            p99: s.p99 * 1e6,
            max: s.max * 1e6,
            count: s.count,
        }
    }
}

/// A refusal, as the summary shows the last one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rejection {
    pub reason: RejectReason,
    pub why: String,
}

/// Mean and maximum (m).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MeanMax {
    pub mean: f64,
    pub max: f64,
}

impl From<RunningStats> for MeanMax {
    fn from(s: RunningStats) -> MeanMax {
        MeanMax {
            mean: s.mean,
            max: s.max,
        }
    }
}

/// Twists and target-marker feedback: the arm steered by hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Steered {
    pub twists: u64,
    pub marker_feedback: u64,
    /// Twists and feedback refused (the reason is the last rejection).
    pub refused: u64,
}

/// The built-in figure-eight as a person measures it: full width and
/// height (m), where [`FigureEight`] keeps the half sizes its formula
/// uses; the text summary's "160 x 80 mm" is these.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PathSummary {
    /// Metres, base frame.
    pub center: [f64; 3],
    /// Full extent along `u` and along `v` (m).
    pub width: f64,
    pub height: f64,
    /// Unit directions of the plane in the base frame.
    pub u: [f64; 3],
    pub v: [f64; 3],
    /// One loop (s).
    pub period_s: f64,
}

impl PathSummary {
    pub fn new(path: &FigureEight, period_s: f64) -> PathSummary {
        PathSummary {
            center: path.center,
            width: 2.0 * path.width,
            height: 2.0 * path.height,
            u: path.u,
            v: path.v,
            period_s,
        }
    }
}

/// What the loop counted besides the node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Inputs taken (commands and malformed ones).
    pub inputs: u64,
    pub malformed: u64,
    /// Most inputs taken in one tick.
    pub max_per_tick: usize,
}

/// The summary of a run.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    /// Node time run (s): simulated, or wall-clock paced with `realtime`.
    pub simulated_s: f64,
    pub wall_s: f64,
    pub ticks: u64,
    pub loop_rate_hz: f64,
    pub ticks_per_wall_s: f64,
    #[serde(serialize_with = "crate::node::status::solver_name")]
    pub solver: SolverKind,
    pub link: String,
    pub targets: TargetCounters,
    /// Joint commands, gripper commands, relax and enable, named poses.
    pub commands: CommandCounters,
    pub steered: Steered,
    /// What the servo link carried: `targets.reached` counts only the
    /// targets it sent (see [`Delivery`]).
    pub servos: Delivery,
    /// Inputs that were not commands (lines, bag messages).
    pub malformed_lines: u64,
    /// Most inputs taken in one tick; `None` for the built-in path, whose
    /// input cannot pile up.
    pub max_targets_per_tick: Option<usize>,
    /// Over every tick with a target, the start-up move included.
    pub tracking_error_m: MeanMax,
    /// When the arm first caught up with its targets (s of node time);
    /// `None` if it never did.
    pub caught_up_s: Option<f64>,
    /// The tracking error before that: the start-up move, as large as the
    /// distance the arm started from.
    pub start_up_tracking_error_m: MeanMax,
    /// The tracking error after it: how well the arm follows. `None` if it
    /// never caught up.
    pub steady_tracking_error_m: Option<MeanMax>,
    pub solve_time_us: Micros,
    pub tick_time_us: Micros,
    pub last_rejection: Option<Rejection>,
    /// The collision check, when it is on: the smallest distance between a
    /// checked pair and that pair (now and since start), the ticks that
    /// ended in collision, the motions stopped short of contact.
    pub collision: Option<CollisionStatus>,
    /// The built-in path followed, when it was the input.
    pub path: Option<PathSummary>,
    pub ended: Ending,
    pub verdict: Verdict,
}

/// Everything a summary is made from.
pub(super) struct Parts<'a> {
    pub status: &'a NodeStatus,
    pub tally: Tally,
    pub simulated_s: f64,
    pub wall_s: f64,
    pub streams: bool,
    pub path: Option<PathSummary>,
    pub ended: Ending,
    pub catch_up: &'a CatchUp,
    pub delivery: Delivery,
}

impl RunSummary {
    pub(super) fn new(p: Parts<'_>) -> RunSummary {
        let s = p.status;
        let c = p.catch_up;
        let d = p.delivery;
        // Reached means the servos took it.
        let mut targets = s.targets;
        targets.reached = d.sent;
        targets.best_effort = targets.best_effort.min(d.sent);
        RunSummary {
            simulated_s: p.simulated_s,
            wall_s: p.wall_s,
            ticks: s.ticks,
            loop_rate_hz: s.loop_rate_hz,
            ticks_per_wall_s: s.ticks as f64 / p.wall_s.max(1e-9),
            solver: s.solver,
            link: s.link.clone(),
            targets,
            commands: s.commands,
            steered: Steered {
                twists: s.steering.twists,
                marker_feedback: s.steering.marker_feedback,
                refused: s.steering.refused,
            },
            servos: d,
            malformed_lines: p.tally.malformed,
            max_targets_per_tick: p.streams.then_some(p.tally.max_per_tick),
            tracking_error_m: s.tracking.into(),
            caught_up_s: c.caught_up_s,
            start_up_tracking_error_m: c.start_up.into(),
            steady_tracking_error_m: c.caught_up_s.map(|_| c.steady.into()),
            solve_time_us: s.solve_time.summary().into(),
            tick_time_us: s.tick_time.summary().into(),
            last_rejection: s.last_rejection.as_ref().map(|(reason, why)| Rejection {
                reason: *reason,
                why: why.clone(),
            }),
            collision: s.collision.clone(),
            path: p.path,
            ended: p.ended,
            verdict: verdict(&targets, &p.tally, &d),
        }
    }
}

fn verdict(t: &TargetCounters, tally: &Tally, d: &Delivery) -> Verdict {
    if tally.inputs > 0 && tally.malformed == tally.inputs {
        Verdict::AllInputMalformed
    } else if !d.connected {
        Verdict::ServosUnreachable
    } else if t.received > 0 && t.reached == 0 {
        Verdict::NothingReached
    } else if d.not_sent > 0 {
        Verdict::NotSent
    } else {
        Verdict::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_reached_nothing_or_took_nothing_says_so() {
        let mut t = TargetCounters::default();
        let mut tally = Tally::default();
        let mut up = Delivery::default();
        up.observe(0, true);
        assert_eq!(verdict(&t, &tally, &up), Verdict::Ok);
        t.received = 10;
        t.unreachable = 10;
        assert_eq!(verdict(&t, &tally, &up), Verdict::NothingReached);
        t.reached = 1;
        assert_eq!(verdict(&t, &tally, &up), Verdict::Ok);
        let mut lost = up;
        lost.observe(2, false);
        lost.finish();
        assert_eq!(verdict(&t, &tally, &lost), Verdict::NotSent);
        let never = Delivery::default();
        assert_eq!(verdict(&t, &tally, &never), Verdict::ServosUnreachable);
        tally.inputs = 3;
        tally.malformed = 3;
        assert_eq!(
            verdict(&TargetCounters::default(), &tally, &up),
            Verdict::AllInputMalformed
        );
    }
}
