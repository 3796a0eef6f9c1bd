//! Out of a singularity the follower is stuck in (see the module
//! documentation of `steer`): the stuck step is noticed here, the node
//! core solves the steered target from the seeds given here, and the goal
//! moves toward the answer in joint space, within the tick's bounds.

use super::{Steering, tick_range};
use crate::ik::Target;
use crate::model::Chain;
use crate::node::follow::FollowStep;
use crate::node::motion::{AxisLimits, MotionLimiter};
use crate::node::status::{SteerMode, SteerStatus};

/// A follower step that brings the tip less than this nearer (m) at a
/// singularity got nowhere.
const NO_PROGRESS: f64 = 1e-7;
/// Closer than this to the steered target (m) there is nothing to unfold
/// for.
const UNFOLD_ERROR: f64 = 1e-5;
/// How far each bend is bent either way in the seeds of an unfolding
/// solve (rad): enough to pick the branch on that side of straight.
const UNFOLD_NUDGE: f64 = 0.1;

impl Steering {
    /// True when a step that started `from` the target (m) ended stuck
    /// at a singularity: no nearer, or still unfolding and still in the
    /// singularity's slow-down band.
    pub(super) fn is_stuck(&self, step: &FollowStep, from: f64) -> bool {
        let (stop, slow) = self.follower.singular_band();
        let got_nowhere = step.sigma.0 < stop && step.position_error > from - NO_PROGRESS;
        let unfolding = self.unfolding.is_some() && step.sigma.1 < slow;
        step.position_error > UNFOLD_ERROR && (got_nowhere || unfolding)
    }

    /// When the last step was stuck at a singularity (see the module
    /// documentation): the target to solve and the seeds to solve it from,
    /// best first: the last answer while unfolding, else the goal with each
    /// bend bent a little either way (and the goal itself).
    pub fn stuck(&self) -> Option<(Target, Vec<Vec<f64>>)> {
        if !self.stuck {
            return None;
        }
        let target = self.target.clone()?;
        if let Some(q) = &self.unfolding {
            return Some((target, vec![q.clone()]));
        }
        let mut seeds = Vec::new();
        for i in self.elbows.joints() {
            for side in [1.0, -1.0] {
                let mut q = self.goal.clone();
                let (lo, hi) = self.limits[i];
                q[i] = (q[i] + side * UNFOLD_NUDGE).clamp(lo, hi);
                seeds.push(q);
            }
        }
        seeds.push(self.goal.clone());
        Some((target, seeds))
    }

    /// Moves this tick's goal toward `answer`, the solver's joints for the
    /// stuck target: all joints in proportion, within this tick's bounds,
    /// and each slowing in time to stop on its answer (as on a position
    /// limit), so the arm lands there rather than swinging past. `None`
    /// (no answer) leaves the goal where following left it, and a drag
    /// that was let go ends there.
    pub fn unfold(
        &mut self,
        chain: &Chain,
        motion: &MotionLimiter,
        answer: Option<&[f64]>,
        status: &mut SteerStatus,
    ) {
        let Some(q) = answer else {
            self.unfolding = None;
            if self.mode == SteerMode::Drag && self.released && self.settled() {
                self.release(status);
            }
            return;
        };
        let dt = motion.period();
        let mut ranges = Vec::with_capacity(self.dof);
        let mut s = 1.0_f64;
        for (i, &to) in q.iter().enumerate().take(self.dof) {
            let from = self.before[i];
            let (lower, upper) = self.limits[i];
            let l = AxisLimits {
                lower: if to < from { lower.max(to) } else { lower },
                upper: if to > from { upper.min(to) } else { upper },
                ..motion.limits()[i]
            };
            let (lo, hi) = tick_range(&l, from, motion.velocity()[i], dt);
            let d = to - from;
            if d > 0.0 {
                s = s.min(hi / d);
            } else if d < 0.0 {
                s = s.min(lo / d);
            }
            ranges.push((lo, hi));
        }
        let s = s.max(0.0);
        for (i, (lo, hi)) in ranges.into_iter().enumerate() {
            let (lower, upper) = self.limits[i];
            let step = (s * (q[i] - self.before[i])).clamp(lo, hi.max(lo));
            self.goal[i] = (self.before[i] + step).clamp(lower, upper);
        }
        self.unfolding = Some(q.to_vec());
        status.hold = None;
        if self.mode == SteerMode::Jog {
            self.jog.hold_lead(&chain.fk(&self.goal));
        }
    }
}
