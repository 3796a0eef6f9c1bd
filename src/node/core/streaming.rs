//! The node core's hooks for a stream of targets ([`crate::node::stream`]
//! decides; this only wires it in): each answer handed to the stream, and
//! the motion advanced along the stream's moving goal while one is on.

use super::NodeCore;
use crate::ik::{IkError, Solution, Target};
use crate::servo::ServoOutput;

impl<S: ServoOutput> NodeCore<S> {
    /// A new answer (in `self.goal`) at `now`: the stream takes it, or the
    /// motion goes to it as to a single target.
    pub(super) fn take_answer(&mut self, now: f64) {
        let dof = self.layout.dof();
        let speeds: Vec<f64> = self.motion.limits()[..dof]
            .iter()
            .map(|l| l.velocity)
            .collect();
        let arm = &self.motion.position()[..dof];
        self.stream.answered(now, &self.goal[..dof], arm, &speeds);
        if self.stream.answer().is_none() {
            self.motion.set_goal(&self.goal);
        }
    }

    /// One period of motion toward the goal: along the stream's moving
    /// goal while the latest answer is still the goal, else straight to it.
    pub(super) fn advance(&mut self, now: f64) {
        let dof = self.layout.dof();
        let streaming = self.stream.answer() == Some(&self.goal[..dof]);
        let moving = streaming
            .then(|| self.stream.goal(now + self.motion.period()))
            .flatten();
        match moving {
            Some(mut goal) => {
                goal.extend_from_slice(&self.goal[dof..]);
                self.guarded(|m| m.track(&goal));
            }
            None => {
                if streaming {
                    self.stream.end();
                    self.motion.set_goal(&self.goal);
                }
                self.guarded(|m| m.step());
            }
        }
    }

    /// Solves `target` from `seed` (where the arm is) and, while a stream
    /// is on and the arm has no self-motion for the target, also from
    /// where the answers are heading ([`crate::node::stream::TargetStream::continuation`]):
    /// of the two answers, the one nearer that continuation. Both are
    /// usually the same answer; near a singular pose (a stretched elbow,
    /// where two branches meet) the arm, trailing the path, is still on
    /// the near side and its seed can take the branch that turns back,
    /// while the continuation has crossed with the path (benches/README.md,
    /// Track sets). No look-ahead to tune: one step of the answers' own.
    /// A redundant arm's answers move along their self-motion on every
    /// solve (the steering), so there the seed alone decides: taking the
    /// nearer answer there too made more jumps, not fewer (the project
    /// arm's position track set 17 instead of 13, the UR5's 1 instead of 0).
    pub(super) fn solve_continuing(
        &mut self,
        target: &Target,
        seed: &[f64],
    ) -> Result<Solution, IkError> {
        let first = self.solver.solve(target, seed)?;
        let constraints = if target.wants_orientation() { 6 } else { 3 };
        let ahead = self
            .stream
            .continuation()
            .filter(|_| seed.len() <= constraints && first.status.is_converged());
        let Some(ahead) = ahead else {
            return Ok(first);
        };
        let away = |q: &[f64]| -> f64 { q.iter().zip(&ahead).map(|(a, b)| (a - b).powi(2)).sum() };
        match self.solver.solve(target, &ahead) {
            Ok(other) if other.status.is_converged() && away(&other.q) < away(&first.q) => {
                Ok(other)
            }
            _ => Ok(first),
        }
    }
}
