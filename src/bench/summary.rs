//! The figures of one benchmark run.

use super::{Criteria, Record, TargetSet, Verdict};
use serde::Serialize;

/// A path step larger than this (rad, one joint) is a jump to another
/// branch: at 1 mm / 0.01 rad between targets no joint needs to move
/// that far.
pub const STEP_LIMIT: f64 = 0.1;

/// Which protocol a run followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchProtocol {
    /// Every target from the same named seed.
    Targets,
    /// Continuous paths, each target from the previous answer.
    Paths,
}

/// Summary figures of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub solver: String,
    pub targets: String,
    pub protocol: BenchProtocol,
    pub n: usize,
    /// Fraction of queries that succeeded, in `[0, 1]`.
    pub success_rate: f64,
    /// Wall time over all queries (µs): median, 99th percentile, largest.
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    /// The solving thread's CPU time over all queries (µs): median, 99th
    /// percentile, largest. Beside the wall time: where they differ, other
    /// processes took the CPU.
    pub cpu_p50_us: f64,
    pub cpu_p99_us: f64,
    pub cpu_max_us: f64,
    /// Median wall time of the successful queries (µs), as the shared
    /// README's table reports.
    pub median_success_us: f64,
    /// `|q - seed|` over the answers (rad): median and 99th percentile.
    /// Targets: the distance from the named seed; paths: from the previous
    /// answer.
    pub median_distance: f64,
    pub p99_distance: f64,
    pub mean_iterations: f64,
    /// Path protocol only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<PathFigures>,
    pub position_tolerance: f64,
    pub orientation_tolerance: f64,
    pub budget_ms: f64,
    /// The clock the budget was counted on: `wall` or `cpu`.
    pub budget_clock: &'static str,
    /// Why the failed queries failed, most frequent first.
    pub failures: Vec<FailureCount>,
    /// With the collision check: the targets left out and the closest
    /// any answer came (the caller fills it in).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collision: Option<super::CollisionFigures>,
}

/// How many queries failed the same way.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureCount {
    pub verdict: Verdict,
    /// The solver's reason, when it gave one.
    pub reason: Option<String>,
    pub count: usize,
}

/// The failed records grouped by verdict and reason, most frequent first.
fn failure_counts(records: &[Record]) -> Vec<FailureCount> {
    let mut counts: Vec<FailureCount> = Vec::new();
    for r in records.iter().filter(|r| r.status != Verdict::Success) {
        match counts
            .iter_mut()
            .find(|c| c.verdict == r.status && c.reason == r.detail)
        {
            Some(c) => c.count += 1,
            None => counts.push(FailureCount {
                verdict: r.status,
                reason: r.detail.clone(),
                count: 1,
            }),
        }
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.count));
    counts
}

/// How well the answers along the paths stayed on one branch.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PathFigures {
    pub paths: usize,
    /// Steps from one answer to the next.
    pub steps: usize,
    /// The largest change of one joint in one step (rad).
    pub largest_step: f64,
    /// Steps in which a joint moved more than [`STEP_LIMIT`]: jumps to
    /// another branch.
    pub jumps: usize,
}

/// Summary figures of a run of `set`.
pub fn summarize(solver: &str, set: &TargetSet, records: &[Record], c: &Criteria) -> Summary {
    let n = records.len();
    let mut all: Vec<f64> = records.iter().map(|r| r.t * 1e6).collect();
    let mut cpu: Vec<f64> = records.iter().map(|r| r.cpu_t * 1e6).collect();
    let mut ok: Vec<f64> = records
        .iter()
        .filter(|r| r.status == Verdict::Success)
        .map(|r| r.t * 1e6)
        .collect();
    let mut distances: Vec<f64> = records
        .iter()
        .map(|r| r.distance)
        .filter(|d| d.is_finite())
        .collect();
    let successes = ok.len();
    let mean = |total: f64| if n == 0 { 0.0 } else { total / n as f64 };
    Summary {
        solver: solver.to_owned(),
        targets: set.name(),
        protocol: if set.paths.is_empty() {
            BenchProtocol::Targets
        } else {
            BenchProtocol::Paths
        },
        n,
        success_rate: mean(successes as f64),
        p50_us: percentile(&mut all, 0.5),
        p99_us: percentile(&mut all, 0.99),
        max_us: percentile(&mut all, 1.0),
        cpu_p50_us: percentile(&mut cpu, 0.5),
        cpu_p99_us: percentile(&mut cpu, 0.99),
        cpu_max_us: percentile(&mut cpu, 1.0),
        median_success_us: percentile(&mut ok, 0.5),
        median_distance: percentile(&mut distances, 0.5),
        p99_distance: percentile(&mut distances, 0.99),
        mean_iterations: mean(records.iter().map(|r| r.iterations as f64).sum()),
        paths: (!set.paths.is_empty()).then(|| path_figures(set, records)),
        position_tolerance: c.position_tolerance,
        orientation_tolerance: c.orientation_tolerance,
        budget_ms: c.budget.as_secs_f64() * 1e3,
        budget_clock: c.clock.name(),
        failures: failure_counts(records),
        collision: None,
    }
}

fn path_figures(set: &TargetSet, records: &[Record]) -> PathFigures {
    let steps: Vec<f64> = records.iter().filter_map(|r| r.step).collect();
    PathFigures {
        paths: set.paths.len(),
        steps: steps.len(),
        largest_step: steps.iter().copied().fold(0.0, f64::max),
        jumps: steps.iter().filter(|s| **s > STEP_LIMIT).count(),
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
