//! The node core's hooks for steering the tip by hand: twists and
//! target-marker feedback taken in, the steering's goal tracked each tick,
//! and the marker's protocol state handed to the front-end
//! ([`crate::node::steer`] decides; this only wires it into the core).

use super::NodeCore;
use crate::node::command::Refused;
use crate::node::marker::{Drag, FeedbackEvent, MarkerFeedback, MarkerSnapshot, MarkerUpdate};
use crate::node::status::{RejectReason, SteerMode};
use crate::servo::ServoOutput;

impl<S: ServoOutput> NodeCore<S> {
    /// Takes in marker feedback: a drag of the target marker.
    pub(super) fn marker_feedback(
        &mut self,
        fb: &MarkerFeedback,
        now: f64,
    ) -> Result<(), (RejectReason, String)> {
        let checked = match fb.event {
            FeedbackEvent::PoseUpdate | FeedbackEvent::MouseUp => {
                Some(self.check(&fb.target(), now)?)
            }
            _ => None,
        };
        let drag = self.steering.feedback(fb, now, &mut self.status.steering)?;
        let (Drag::Move(_) | Drag::Release(_), Some(target)) = (&drag, checked) else {
            return Ok(());
        };
        self.steering.drag(
            target,
            matches!(drag, Drag::Release(_)),
            self.motion.position(),
            &mut self.status.steering,
        );
        Ok(())
    }

    /// A twist or marker feedback taken in, or refused: counted, and the
    /// pending target (older) gives way to it.
    pub(super) fn steered(
        &mut self,
        taken: Result<(), (RejectReason, String)>,
    ) -> Result<(), Refused> {
        match taken {
            Ok(()) => {
                if self.status.steering.mode != SteerMode::Idle && self.pending.take().is_some() {
                    self.status.targets.superseded += 1;
                }
                Ok(())
            }
            Err((reason, why)) => {
                self.status.steering.refused += 1;
                self.status.last_rejection = Some((reason, why.clone()));
                Err(Refused { reason, why })
            }
        }
    }

    /// Moves the arm along the jog's or the dragged marker's goal when one
    /// steers (the motion tracks the moving goal); false when none does.
    pub(super) fn steer(&mut self, now: f64) -> bool {
        let chain = self.solver.chain();
        let st = &mut self.status;
        let Some(goal) =
            self.steering
                .step(chain, &self.motion, &self.config.jog, now, &mut st.steering)
        else {
            return false;
        };
        // The arm's axes follow the steering; the others (a gripper) keep
        // their own goals.
        self.goal[..goal.len()].copy_from_slice(goal);
        st.holding = false;
        let mut goal = self.goal.clone();
        let dof = self.layout.dof();
        let slowed = (self.guard.as_mut()).is_some_and(|g| g.slow(&self.motion, &mut goal, dof));
        let stopped = self.guarded(|m| m.track(&goal));
        let chain = self.solver.chain();
        if stopped {
            // Stopped at the margin: the jog halts there (a twist pushing
            // on stays halted, one backing out moves), a drag holds.
            self.steering
                .blocked(chain, self.motion.goal(), &mut self.status.steering);
        } else if slowed {
            // Slowed near something: the steering goes on from where the
            // arm goes, not from where it asked for.
            self.steering.slowed(chain, &goal);
        }
        if let Some(t) = self.steering.target() {
            self.active = Some(t.clone());
            self.last_solved = Some(t.clone());
        }
        true
    }

    /// The target marker's update to publish after the tick at `now`, if
    /// any (see [`crate::node::marker`]).
    pub fn marker_update(&mut self, now: f64) -> Option<MarkerUpdate> {
        let tip = self.tip_pose();
        self.steering.marker_update(&tip, now)
    }

    /// The target marker as `get_interactive_markers` answers it.
    pub fn marker_snapshot(&self) -> MarkerSnapshot {
        self.steering.marker_snapshot()
    }

    /// A line for the front-end to log once (the node says some things
    /// once rather than every tick).
    pub fn take_notice(&mut self) -> Option<String> {
        if !self.notices.is_empty() {
            return Some(self.notices.remove(0));
        }
        if let Some(n) = self.guard.as_mut().and_then(|g| g.take_notice()) {
            return Some(n);
        }
        self.steering.take_notice()
    }
}
