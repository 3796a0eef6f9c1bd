//! The IK benchmark protocol of `../shared/targets/README.md` (as in the
//! TRAC-IK paper): every query starts from the same named seed; it succeeds
//! when the pose error is within the tolerances, every joint is within its
//! limits, and the wall time is within the budget.
//!
//! Success is judged here, independently of what the solver claims: the
//! returned joints go through the chain's forward kinematics again.

mod kcompare;
mod targets;

pub use kcompare::{KChain, KError};
pub use targets::{NamedSeed, Sample, TargetFileError, TargetSet};

use crate::ik::{Solver, Target, metric};
use crate::model::Chain;
use serde::Serialize;
use std::time::{Duration, Instant};

/// Pass criteria of one benchmark run.
#[derive(Debug, Clone, Copy)]
pub struct Criteria {
    pub position_tolerance: f64,
    pub orientation_tolerance: f64,
    pub budget: Duration,
    /// Judge position only (leg target files).
    pub position_only: bool,
}

/// One query's outcome, in target order.
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    pub q: Vec<f64>,
    /// Wall time in seconds.
    pub t: f64,
    /// `success`, or what failed.
    pub status: Verdict,
    /// Why, when it failed: the solver's own status when the pose was not
    /// reached, or the error that rejected the query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    pub position_error: f64,
    pub orientation_error: f64,
    pub iterations: u32,
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

/// Summary figures of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub solver: String,
    pub targets: String,
    pub n: usize,
    /// Fraction of queries that succeeded, in `[0, 1]`.
    pub success_rate: f64,
    /// Median and 99th percentile wall time over all queries (µs).
    pub median_us: f64,
    pub p99_us: f64,
    /// Median wall time of the successful queries (µs), as the shared
    /// README's table reports.
    pub median_success_us: f64,
    pub mean_iterations: f64,
    pub position_tolerance: f64,
    pub orientation_tolerance: f64,
    pub budget_ms: f64,
}

/// Judges a returned configuration against a sample.
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
    let target = sample_target(sample, c.position_only);
    let position_error = (target.position - tip.translation.vector).norm();
    let orientation_error = match target.orientation {
        Some(o) => metric::orientation_distance(&tip, &o),
        None => 0.0,
    };
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

/// The target a sample asks for.
pub fn sample_target(sample: &Sample, position_only: bool) -> Target {
    let p = nalgebra::Vector3::from(sample.position);
    if position_only {
        Target::position(p)
    } else {
        Target::from_xyzw(sample.position, Some(sample.quaternion))
            .unwrap_or_else(|_| Target::position(p))
    }
}

/// Runs every sample through `solver` from `seed` and judges it.
pub fn run(solver: &mut Solver, set: &TargetSet, seed: &[f64], c: &Criteria) -> Vec<Record> {
    let chain = solver.chain().clone();
    set.samples
        .iter()
        .map(|sample| {
            let target = sample_target(sample, c.position_only);
            let start = Instant::now();
            let result = solver.solve(&target, seed);
            let elapsed = start.elapsed();
            match result {
                Ok(sol) => {
                    let j = judge(&chain, sample, &sol.q, elapsed, c);
                    Record {
                        status: j.verdict,
                        detail: (j.verdict == Verdict::Error).then(|| sol.status.to_string()),
                        q: sol.q,
                        t: elapsed.as_secs_f64(),
                        position_error: j.position_error,
                        orientation_error: j.orientation_error,
                        iterations: sol.iterations,
                    }
                }
                Err(e) => Record {
                    q: Vec::new(),
                    t: elapsed.as_secs_f64(),
                    status: Verdict::Rejected,
                    detail: Some(e.to_string()),
                    position_error: f64::NAN,
                    orientation_error: f64::NAN,
                    iterations: 0,
                },
            }
        })
        .collect()
}

/// Summary figures of a run.
pub fn summarize(solver: &str, targets: &str, records: &[Record], c: &Criteria) -> Summary {
    let n = records.len();
    let mut all: Vec<f64> = records.iter().map(|r| r.t * 1e6).collect();
    let mut ok: Vec<f64> = records
        .iter()
        .filter(|r| r.status == Verdict::Success)
        .map(|r| r.t * 1e6)
        .collect();
    let successes = ok.len();
    Summary {
        solver: solver.to_owned(),
        targets: targets.to_owned(),
        n,
        success_rate: if n == 0 {
            0.0
        } else {
            successes as f64 / n as f64
        },
        median_us: percentile(&mut all, 0.5),
        p99_us: percentile(&mut all, 0.99),
        median_success_us: percentile(&mut ok, 0.5),
        mean_iterations: if n == 0 {
            0.0
        } else {
            records.iter().map(|r| r.iterations as f64).sum::<f64>() / n as f64
        },
        position_tolerance: c.position_tolerance,
        orientation_tolerance: c.orientation_tolerance,
        budget_ms: c.budget.as_secs_f64() * 1e3,
    }
}

/// Nearest-rank percentile (`p` in `[0, 1]`); NaN for an empty set.
pub fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let rank = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}
