//! The IK benchmark protocols.
//!
//! Targets (`../shared/targets/README.md`, as in the TRAC-IK paper): every
//! query starts from the same named seed. Paths (a target file with
//! `paths`): continuous Cartesian paths, targets at most 1 mm and 0.01 rad
//! apart, the first solved from the path's start configuration and each
//! next one from the previous answer, as a node following a moving target
//! does; the answers must stay on one branch (no large joint steps).
//!
//! A query succeeds when the pose error is within the tolerances, every
//! joint is within its limits, and the time is within the budget: wall
//! time by default, or the solving thread's CPU time
//! ([`Criteria::clock`], `--budget-clock cpu`), which other processes
//! cannot add to. Both are recorded.
//! Success is judged here, independently of what the solver claims: the
//! returned joints go through the chain's forward kinematics again.

mod clear;
pub mod cpu_time;
mod generate;
mod kcompare;
mod summary;
mod targets;
mod track;

pub use clear::{CollisionFigures, clear_targets, run_clear};
pub use cpu_time::{Stopwatch, Times, clock, thread_cpu_time};
pub use generate::{PATH_JOINT_STEP, PATH_POSITION_STEP, PATH_ROTATION_STEP};
pub use kcompare::{KChain, KError};
pub use summary::{
    BenchProtocol, FailureCount, PathFigures, STEP_LIMIT, Summary, percentile, summarize,
};
pub use targets::{NamedSeed, PathSpan, Sample, TargetFileError, TargetSet};

use crate::ik::{
    BudgetClock, IkError, OrientationMode, Solution, Solver, Target, joint_distance,
    orientation_angle,
};
use crate::model::Chain;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Pass criteria of one benchmark run.
#[derive(Debug, Clone, Copy)]
pub struct Criteria {
    pub position_tolerance: f64,
    pub orientation_tolerance: f64,
    pub budget: Duration,
    /// The clock the budget is counted on (the solver's should be the
    /// same: [`clock`]).
    pub clock: BudgetClock,
    /// What the targets ask of the orientation (the set's
    /// [`TargetSet::orientation_mode`]).
    pub orientation: OrientationMode,
}

/// One query's outcome, in target order.
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    pub q: Vec<f64>,
    /// Wall time in seconds.
    pub t: f64,
    /// The solving thread's CPU time in seconds.
    pub cpu_t: f64,
    /// `success`, or what failed.
    pub status: Verdict,
    /// Why, when it failed: the solver's own status when the pose was not
    /// reached, or the error that rejected the query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub position_error: f64,
    pub orientation_error: f64,
    pub iterations: u32,
    /// `|q - seed|` (rad, [`joint_distance`]); NaN when there is no
    /// usable answer.
    pub distance: f64,
    /// Path protocol: the largest change of one joint from the previous
    /// answer (rad); absent for a path's first target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<f64>,
    /// With the collision check: the answer's smallest distance between a
    /// checked pair (m, signed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clearance: Option<f64>,
}

/// What the benchmark makes of one returned configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Within the tolerances and the limits, in time.
    Success,
    /// Not within the tolerances (or not a usable joint vector).
    Error,
    /// A joint outside its limits.
    Limits,
    /// Reached, but after the budget.
    Time,
    /// The solver refused the query with an error.
    Rejected,
    /// Reached, but the arm there is closer than the margin to itself,
    /// the floor or an obstacle (with the collision check).
    Collision,
}

impl Verdict {
    /// As the JSON spells it.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Success => "success",
            Verdict::Error => "error",
            Verdict::Limits => "limits",
            Verdict::Time => "time",
            Verdict::Rejected => "rejected",
            Verdict::Collision => "collision",
        }
    }

    /// What the verdict means, for a reader of the table.
    pub fn meaning(self) -> &'static str {
        match self {
            Verdict::Success => "reached in time, within the limits",
            Verdict::Error => "not within the tolerances",
            Verdict::Limits => "a joint outside its limits",
            Verdict::Time => "reached after the budget",
            Verdict::Rejected => "refused by the solver",
            Verdict::Collision => "reached, but closer than the collision margin",
        }
    }
}

/// [`judge`]'s answer: the verdict and the pose error it was based on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    pub verdict: Verdict,
    /// Metres; NaN when the joint vector was unusable.
    pub position_error: f64,
    /// Radians; NaN when the joint vector was unusable.
    pub orientation_error: f64,
}

impl Judgement {
    pub fn success(&self) -> bool {
        self.verdict == Verdict::Success
    }
}

/// Judges a returned configuration against a sample; `elapsed` is the
/// time on the criteria's clock.
pub fn judge(
    chain: &Chain,
    sample: &Sample,
    q: &[f64],
    elapsed: Duration,
    c: &Criteria,
) -> Judgement {
    if q.len() != chain.dof() || q.iter().any(|v| !v.is_finite()) {
        return Judgement {
            verdict: Verdict::Error,
            position_error: f64::NAN,
            orientation_error: f64::NAN,
        };
    }
    let tip = chain.fk(q);
    let target = sample_target(sample, c.orientation);
    let position_error = (target.position - tip.translation.vector).norm();
    let orientation_error = orientation_angle(&tip, &target.orientation);
    let verdict = if !chain.within_limits(q) {
        Verdict::Limits
    } else if position_error > c.position_tolerance || orientation_error > c.orientation_tolerance {
        Verdict::Error
    } else if elapsed > c.budget {
        Verdict::Time
    } else {
        Verdict::Success
    };
    Judgement {
        verdict,
        position_error,
        orientation_error,
    }
}

/// The target a sample asks for under `mode`.
pub fn sample_target(sample: &Sample, mode: OrientationMode) -> Target {
    let p = nalgebra::Vector3::from(sample.position);
    let mut t = Target::from_xyzw(sample.position, Some(sample.quaternion))
        .unwrap_or_else(|_| Target::position(p));
    t.orientation = mode.apply(t.orientation.full());
    t
}

/// What a solver under test returned for one query.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The joints; `None` when the query was refused.
    pub q: Option<Vec<f64>>,
    pub time: Times,
    /// Why, when the pose is not reached (the solver's status or error).
    pub detail: Option<String>,
    pub iterations: u32,
}

impl Answer {
    /// A solver's result as the bench records it: a status other than
    /// converged, or the error, is the detail.
    pub fn from_result(result: Result<Solution, IkError>, time: Times) -> Answer {
        match result {
            Ok(sol) => Answer {
                detail: (!sol.status.is_converged()).then(|| sol.status.to_string()),
                q: Some(sol.q),
                time,
                iterations: sol.iterations,
            },
            Err(e) => Answer {
                q: None,
                time,
                detail: Some(e.to_string()),
                iterations: 0,
            },
        }
    }
}

/// Runs `set` with its protocol (paths when the file has them, else every
/// sample from `seed`) through `solve`, which answers a sample from a seed,
/// and judges every answer. Setting `stop` (a signal) ends the run after
/// the query under way: the records are those of the queries answered.
pub fn run_with(
    chain: &Chain,
    set: &TargetSet,
    seed: &[f64],
    c: &Criteria,
    stop: &AtomicBool,
    mut solve: impl FnMut(&Sample, &[f64]) -> Answer,
) -> Vec<Record> {
    let go_on = || !stop.load(Ordering::Relaxed);
    if set.paths.is_empty() {
        return set
            .samples
            .iter()
            .take_while(|_| go_on())
            .map(|s| record(chain, s, seed, solve(s, seed), c, None))
            .collect();
    }
    let mut records = Vec::with_capacity(set.samples.len());
    let mut first = 0;
    for path in &set.paths {
        // The arm starts on the path; then each target from the answer
        // before (an unusable answer leaves the arm where it was).
        let mut at: &[f64] = &path.start;
        let mut previous: Option<Vec<f64>> = None;
        for s in &set.samples[first..first + path.len] {
            if !go_on() {
                return records;
            }
            let r = record(chain, s, at, solve(s, at), c, previous.as_deref());
            if r.distance.is_finite() {
                previous = Some(r.q.clone());
            }
            records.push(r);
            at = previous.as_deref().unwrap_or(&path.start);
        }
        first += path.len;
    }
    records
}

/// Runs `set` through one of our solvers (see [`run_with`]).
pub fn run(solver: &mut Solver, set: &TargetSet, seed: &[f64], c: &Criteria) -> Vec<Record> {
    run_until(solver, set, seed, c, &AtomicBool::new(false))
}

/// [`run`] until `stop` is set (see [`run_with`]).
pub fn run_until(
    solver: &mut Solver,
    set: &TargetSet,
    seed: &[f64],
    c: &Criteria,
    stop: &AtomicBool,
) -> Vec<Record> {
    let chain = solver.chain().clone();
    run_with(&chain, set, seed, c, stop, |sample, seed| {
        let target = sample_target(sample, c.orientation);
        let watch = Stopwatch::start();
        let result = solver.solve(&target, seed);
        Answer::from_result(result, watch.stop())
    })
}

/// Judges one answer. `previous`: the answer before on the path.
fn record(
    chain: &Chain,
    sample: &Sample,
    seed: &[f64],
    answer: Answer,
    c: &Criteria,
    previous: Option<&[f64]>,
) -> Record {
    let t = answer.time.wall.as_secs_f64();
    let cpu_t = answer.time.cpu.as_secs_f64();
    let Some(q) = answer.q else {
        return Record {
            q: Vec::new(),
            t,
            cpu_t,
            status: Verdict::Rejected,
            detail: answer.detail,
            position_error: f64::NAN,
            orientation_error: f64::NAN,
            iterations: answer.iterations,
            distance: f64::NAN,
            step: None,
            clearance: None,
        };
    };
    let j = judge(chain, sample, &q, answer.time.on(c.clock), c);
    let usable = q.len() == chain.dof() && q.iter().all(|v| v.is_finite());
    Record {
        status: j.verdict,
        detail: answer.detail.filter(|_| !j.success()),
        position_error: j.position_error,
        orientation_error: j.orientation_error,
        iterations: answer.iterations,
        distance: if usable {
            joint_distance(chain, &q, seed, &[])
        } else {
            f64::NAN
        },
        step: previous
            .filter(|_| usable)
            .map(|p| largest_step(chain, p, &q)),
        clearance: None,
        q,
        t,
        cpu_t,
    }
}

pub use crate::ik::largest_step;
