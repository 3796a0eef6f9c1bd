//! Solving the latest target: the solver's answer, refused (collision,
//! a swing mid-stream) or held (out of reach), else the motion's goal.

use super::{NodeCore, Pending, collide};
use crate::ik::SolveStatus;
use crate::model::wrap_angle;
use crate::node::status::{RejectReason, SolveOutcome};
use crate::servo::ServoOutput;
use std::time::Instant;

impl<S: ServoOutput> NodeCore<S> {
    /// Solves `p` at `now` and, when its answer is usable, makes it the
    /// goal: what became of the target.
    pub(super) fn solve(&mut self, p: Pending, now: f64) -> SolveOutcome {
        let t0 = Instant::now();
        let before = self.last_solved.clone();
        let (result, refused) = self.solve_clear(&p.target);
        let st = &mut self.status;
        st.solve_time.record(t0.elapsed().as_secs_f64());
        let sol = match result {
            Ok(s) => s,
            Err(e) => {
                // Validated already; kept for solver-specific refusals.
                st.targets.rejected.count(RejectReason::Invalid);
                st.last_rejection = Some((RejectReason::Invalid, e.to_string()));
                return SolveOutcome::Refused { why: e.to_string() };
            }
        };
        if let Some(out) = collide::refusal(&sol, refused.as_deref(), st) {
            return out;
        }
        st.targets.solved += 1;
        self.last_solved = Some(p.target.clone());
        st.last_position_error = sol.position_error;
        st.last_orientation_error = sol.orientation_error;
        st.last_solve = Some(sol.status);
        let (status, position_error, orientation_error) =
            (sol.status, sol.position_error, sol.orientation_error);
        let usable = match status {
            SolveStatus::Converged => true,
            SolveStatus::BestEffort(_) => position_error <= self.config.max_best_effort_error,
            SolveStatus::Failed(_) => false,
        };
        if !usable {
            st.targets.unreachable += 1;
            st.holding = true;
            return SolveOutcome::Unreachable {
                status,
                position_error,
                orientation_error,
            };
        }
        // Continuous joints take the short way round; the joints off the
        // chain (a gripper) keep their goal.
        let q = self.motion.position();
        let answer: Vec<f64> = (sol.q.iter().enumerate())
            .map(|(i, &a)| match self.continuous[i] {
                true => q[i] + wrap_angle(a - q[i]),
                false => a,
            })
            .collect();
        if let Some(out) = self.swing_refusal(before.as_ref(), &p.target, &answer, now) {
            return out;
        }
        let st = &mut self.status;
        st.holding = false;
        st.targets.reached += 1;
        if !status.is_converged() {
            st.targets.best_effort += 1;
        }
        self.goal[..answer.len()].copy_from_slice(&answer);
        self.take_answer(now);
        self.active = Some(p.target);
        SolveOutcome::Reached {
            status,
            position_error,
            orientation_error,
        }
    }
}
