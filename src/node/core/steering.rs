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
        let status = &mut self.status.steering;
        if self
            .steering
            .step(chain, &self.motion, &self.config.jog, now, status)
            .is_none()
        {
            return false;
        }
        self.unfold();
        let goal = self.steering.goal();
        // The arm's axes follow the steering; the others (a gripper) keep
        // their own goals.
        self.goal[..goal.len()].copy_from_slice(goal);
        self.status.holding = false;
        let mut goal = self.goal.clone();
        let dof = self.layout.dof();
        let slowed = match self.guard.as_mut() {
            None => false,
            // The jog slows its own Cartesian speed from the next tick, so
            // the tip stays on the line it is pushed along.
            Some(g) if self.steering.jogging() => {
                let share = g.approach_share(&self.motion, &goal);
                self.steering.slow_jog(share);
                false
            }
            Some(g) => g.slow(&self.motion, &mut goal, dof),
        };
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
            self.steering.slowed(&goal);
        }
        if let Some(t) = self.steering.target() {
            self.active = Some(t.clone());
            self.last_solved = Some(t.clone());
        }
        true
    }

    /// Steering stuck at a singularity: solves the steered target from
    /// the steering's seeds (the first that converges is taken; with
    /// several, the answer nearest the goal) and hands the answer to the
    /// steering, which moves toward it within the tick's bounds (see
    /// [`crate::node::steer`]). A seed whose solve fails ends the tries:
    /// the target is likely out of reach, and each try may take the whole
    /// solve budget.
    fn unfold(&mut self) {
        let Some((target, seeds)) = self.steering.stuck() else {
            return;
        };
        let goal = self.steering.goal().to_vec();
        let mut best: Option<(f64, Vec<f64>)> = None;
        for seed in &seeds {
            let Ok(answer) = self.solver.solve(&target, seed) else {
                break;
            };
            if !answer.status.is_converged() {
                break;
            }
            let d = answer
                .q
                .iter()
                .zip(&goal)
                .map(|(a, b)| (a - b).powi(2))
                .sum::<f64>();
            if best.as_ref().is_none_or(|(b, _)| d < *b) {
                best = Some((d, answer.q));
            }
        }
        let chain = self.solver.chain();
        let answer = best.as_ref().map(|(_, q)| q.as_slice());
        self.steering
            .unfold(chain, &self.motion, answer, &mut self.status.steering);
    }

    /// The target marker's update to publish now, if any (see
    /// [`crate::node::marker`]): asked after every tick and after every
    /// input, so a dragged pose is echoed as soon as it arrives.
    pub fn marker_update(&mut self) -> Option<MarkerUpdate> {
        let tip = self.tip_pose();
        self.steering.marker_update(&tip)
    }

    /// The target marker as `get_interactive_markers` answers it.
    pub fn marker_snapshot(&self) -> MarkerSnapshot {
        self.steering.marker_snapshot()
    }

    /// What connecting to the servos changed on them (see
    /// [`ServoOutput::take_notice`]), once: the part of
    /// [`take_notice`](Self::take_notice) a front-end without a log of its
    /// own (the CLI's run loop) still says.
    pub fn take_link_notice(&mut self) -> Option<String> {
        self.servo.take_notice()
    }

    /// A line for the front-end to log once (the node says some things
    /// once rather than every tick).
    pub fn take_notice(&mut self) -> Option<String> {
        if let Some(n) = self.take_link_notice() {
            return Some(n);
        }
        if !self.notices.is_empty() {
            return Some(self.notices.remove(0));
        }
        if let Some(n) = self.guard.as_mut().and_then(|g| g.take_notice()) {
            return Some(n);
        }
        self.steering.take_notice()
    }
}
