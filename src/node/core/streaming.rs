//! The node core's hooks for a stream of targets ([`crate::node::stream`]
//! decides; this only wires it in): each answer handed to the stream, and
//! the motion advanced along the stream's moving goal while one is on.

use super::NodeCore;
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
}
