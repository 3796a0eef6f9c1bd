//! The result every solver returns, and the shared last step that builds it.

use super::metric::orientation_angle;
use super::{Bounds, Target, Tolerance};
use crate::model::{Chain, Transform};

/// Why a solve did not converge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// The target lies outside the reachable workspace (or outside what the
    /// joint limits allow); the answer is the closest pose found.
    OutOfReach,
    /// The iteration cap ended the search.
    IterationCap,
    /// The wall-clock budget ended the search.
    TimeBudget,
    /// The search stopped making progress (a local minimum).
    Stalled,
    /// The arithmetic broke down (NaN); the seed is returned.
    Numerical,
    /// Every solution found was refused by the caller's check (see
    /// [`Admissible`](super::Admissible): in collision); the seed is
    /// returned.
    Inadmissible,
}

impl Reason {
    pub fn describe(self) -> &'static str {
        match self {
            Reason::OutOfReach => "target out of reach; closest pose returned",
            Reason::IterationCap => "iteration cap reached before tolerance",
            Reason::TimeBudget => "time budget spent before tolerance",
            Reason::Stalled => "stalled in a local minimum",
            Reason::Numerical => "numerical breakdown; seed returned",
            Reason::Inadmissible => {
                "every solution found was refused (in collision); seed returned"
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Reason::OutOfReach => "out_of_reach",
            Reason::IterationCap => "iteration_cap",
            Reason::TimeBudget => "time_budget",
            Reason::Stalled => "stalled",
            Reason::Numerical => "numerical",
            Reason::Inadmissible => "inadmissible",
        }
    }
}

/// Outcome of a solve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SolveStatus {
    /// Within tolerance.
    Converged,
    /// Not within tolerance: the best pose found, and why it is not better.
    BestEffort(Reason),
    /// No usable answer: the (clamped) seed is returned.
    Failed(Reason),
}

impl SolveStatus {
    pub fn is_converged(self) -> bool {
        self == SolveStatus::Converged
    }

    pub fn name(self) -> &'static str {
        match self {
            SolveStatus::Converged => "converged",
            SolveStatus::BestEffort(_) => "best_effort",
            SolveStatus::Failed(_) => "failed",
        }
    }

    pub fn reason(self) -> Option<Reason> {
        match self {
            SolveStatus::Converged => None,
            SolveStatus::BestEffort(r) | SolveStatus::Failed(r) => Some(r),
        }
    }
}

impl std::fmt::Display for SolveStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.reason() {
            None => f.write_str(self.name()),
            Some(r) => write!(f, "{} ({})", self.name(), r.describe()),
        }
    }
}

/// Joint values and how well they reach the target.
#[derive(Debug, Clone, PartialEq)]
pub struct Solution {
    /// One finite value per joint, inside the bounds.
    pub q: Vec<f64>,
    /// Distance from the tip to the target position (m).
    pub position_error: f64,
    /// Angle between tip and target orientation (rad); 0 when the target has
    /// no orientation.
    pub orientation_error: f64,
    pub iterations: u32,
    pub status: SolveStatus,
}

/// What a solver found, handed to [`finish`].
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The best joint vector found (may still hold NaN or leave the bounds
    /// by rounding: `finish` deals with both).
    pub q: Vec<f64>,
    pub iterations: u32,
    /// The reason reported when the pose is not within tolerance.
    pub why_not: Reason,
}

/// The shared last step of every solver: normalises the outcome's joints
/// into the bounds (NaN falls back to `seed`), measures the achieved error
/// with the chain's own forward kinematics, and decides the status.
pub fn finish(
    chain: &Chain,
    bounds: &Bounds,
    target: &Target,
    tol: &Tolerance,
    seed: &[f64],
    outcome: Outcome,
) -> Solution {
    finish_with(bounds, target, tol, seed, outcome, |q| chain.fk(q))
}

/// [`finish`] with the chain's forward kinematics given as `tip` (called
/// once, on the normalised joints): a closed form that holds each joint's
/// sine and cosine evaluates it without `sin_cos`
/// ([`Chain::fk_trig`](crate::model::Chain::fk_trig)).
pub fn finish_with(
    bounds: &Bounds,
    target: &Target,
    tol: &Tolerance,
    seed: &[f64],
    outcome: Outcome,
    tip: impl FnOnce(&[f64]) -> Transform,
) -> Solution {
    let Outcome {
        mut q,
        iterations,
        why_not,
    } = outcome;
    let broke = q.iter().any(|v| !v.is_finite());
    bounds.normalize(&mut q, seed);
    let tip = tip(&q);
    let position_error = (target.position - tip.translation.vector).norm();
    // One angle serves both: the error reported and the one the status is
    // judged on (as `pose_error`, only when the orientation is weighted).
    let orientation_error = orientation_angle(&tip, &target.orientation);
    let counted = if target.orientation_weight > 0.0 {
        orientation_error
    } else {
        0.0
    };
    let status = if broke {
        SolveStatus::Failed(Reason::Numerical)
    } else if position_error <= tol.position && counted <= tol.orientation {
        SolveStatus::Converged
    } else {
        SolveStatus::BestEffort(why_not)
    };
    Solution {
        q,
        position_error,
        orientation_error,
        iterations,
        status,
    }
}
