//! Smoothing the joint path the search found, along the self-motion.
//!
//! The search picks each answer among a few candidates, and where the arm
//! has joints to spare (a 7-joint arm on poses, any arm on positions)
//! neighbouring answers can sit on different sides of a candidate's
//! jitter: the joints zig-zag a little from target to target although
//! each step is within its bound. Run as a trajectory, a zig-zag asks
//! the joints for accelerations their limits do not allow, and the arm
//! falls behind the path's times where it is fast.
//!
//! Each sweep moves every inner answer halfway toward the middle of its
//! two neighbours (a discrete Laplacian step) and solves its target again
//! from there: a damped least-squares solve from a near seed moves the
//! joints the least, so the answer slides along the self-motion toward
//! the smooth path. It is kept only if the solver converged, both steps
//! stay within their bounds, the joints bend less there (the second
//! difference of the three answers shrinks), the check admits it and it
//! is no nearer the check's margin (`nearness`): every property of the
//! path the search found still holds, and no sweep makes a point rougher
//! or brings it nearer an obstacle.

use super::{PathError, nearness, signed_change, within};
use crate::ik::{Admissible, Solver, Target};
use crate::model::{Chain, JointKind};

/// A smoothing of a path, a few solves at a time.
#[derive(Debug, Clone)]
pub(super) struct Smoothing {
    /// The path: one configuration per target.
    pub q: Vec<Vec<f64>>,
    /// The sweeps still to run, and the inner answer the current one is at.
    sweeps_left: usize,
    at: usize,
    /// [`super::PathOptions::clearance_band`], and scratch for the check.
    band: f64,
    gradient: Vec<f64>,
}

impl Smoothing {
    pub fn new(q: Vec<Vec<f64>>, sweeps: usize, band: f64) -> Smoothing {
        Smoothing {
            // Only paths with inner answers bend.
            sweeps_left: if q.len() < 3 { 0 } else { sweeps },
            q,
            at: 1,
            band,
            gradient: Vec::new(),
        }
    }

    pub fn done(&self) -> bool {
        self.sweeps_left == 0
    }

    /// Smooths the next inner answer: one solve. `bounds[i]` bounds the
    /// step into answer `i`.
    pub fn one(
        &mut self,
        chain: &Chain,
        solver: &mut Solver,
        targets: &[Target],
        bounds: &[Vec<f64>],
        check: &mut dyn Admissible,
    ) -> Result<(), PathError> {
        let i = self.at;
        let (before, here, after) = (&self.q[i - 1], &self.q[i], &self.q[i + 1]);
        let seed = toward_middle(chain, before, here, after);
        let s = solver
            .solve(&targets[i], &seed)
            .map_err(|source| PathError::Target { index: i, source })?;
        if s.status.is_converged()
            && within(chain, before, &s.q, &bounds[i])
            && within(chain, &s.q, after, &bounds[i + 1])
            && bend(chain, before, &s.q, after) < bend(chain, before, here, after)
            && check.admits(&s.q, false)
            && no_nearer(check, (self.band, &mut self.gradient), here, &s.q)
        {
            self.q[i] = s.q;
        }
        self.at += 1;
        if self.at + 1 == self.q.len() {
            self.at = 1;
            self.sweeps_left -= 1;
        }
        Ok(())
    }
}

/// Whether `new` is no nearer the check's margin than `old`, within
/// `band` (with scratch for the check).
fn no_nearer(
    check: &mut dyn Admissible,
    (band, gradient): (f64, &mut Vec<f64>),
    old: &[f64],
    new: &[f64],
) -> bool {
    if band <= 0.0 {
        return true;
    }
    let was = nearness(check, old, band, gradient);
    nearness(check, new, band, gradient) <= was
}

/// `here` moved halfway toward the middle of `before` and `after`
/// (continuous joints the short way round), within the joint limits.
fn toward_middle(chain: &Chain, before: &[f64], here: &[f64], after: &[f64]) -> Vec<f64> {
    chain
        .joints
        .iter()
        .enumerate()
        .map(|(k, j)| {
            let c = here[k];
            let mid = c + 0.5
                * (signed_change(j.kind, c, before[k]) + signed_change(j.kind, c, after[k]));
            let x = 0.5 * (c + mid);
            if j.kind == JointKind::Continuous {
                x
            } else {
                x.clamp(j.limits.lower, j.limits.upper)
            }
        })
        .collect()
}

/// How much the joints bend at `here`: the sum over the joints of the
/// squared second difference.
fn bend(chain: &Chain, before: &[f64], here: &[f64], after: &[f64]) -> f64 {
    chain
        .joints
        .iter()
        .enumerate()
        .map(|(k, j)| {
            let d = signed_change(j.kind, here[k], after[k])
                - signed_change(j.kind, before[k], here[k]);
            d * d
        })
        .sum()
}
