//! Braking in time: a jog looks ahead before each tick near a singularity.
//!
//! Close to the stretched elbow (or any other singularity) the joints move
//! ever faster for the same tip speed, and they need ever more of their
//! acceleration to follow a straight line. Slowing down in proportion to
//! how close the arm is reacts too late for a joint already turning fast:
//! it cannot brake within its acceleration and swings the arm through the
//! straight elbow, off the line. So, as the motion limiter does at a
//! position limit, the jog keeps to a speed it can still stop from: each
//! tick it plays "one more tick as asked, then brake at the jog's
//! accelerations" forward on copies of the steering and the motion
//! limiter, and when that would end in a singularity or off the path it
//! brakes now instead. The tick before, the same check passed with braking
//! from now, so the arm comes to rest on the line, short of the
//! singularity, every joint within its limits.

use super::Steering;
use crate::model::Chain;
use crate::node::follow::Hold;
use crate::node::jog::Pace;
use crate::node::motion::MotionLimiter;
use crate::node::settings::JogSettings;
use crate::node::status::SteerStatus;
use nalgebra::Vector3;

/// The jog looks ahead only once the position Jacobian's smallest singular
/// value is below this fraction of the chain's reach (m/rad): farther out,
/// braking at the jog's accelerations always ends well, and the check
/// costs a dozen follower steps.
const LOOK_WITHIN: f64 = 0.15;
/// A braking tip further than this from its target (m) has been carried
/// off the path by the joints' momentum.
const ADRIFT: f64 = 0.001;
/// Ticks the look-ahead waits after the tip's braking time for the joints
/// to come to rest on the goal; still moving then, braking went wrong.
const SETTLE_TICKS: usize = 25;

impl Steering {
    /// The pace of the jog's next tick: [`Pace::Ahead`] (as the twist
    /// asks) unless that, followed by braking, would reach a singularity
    /// or leave the path; then [`Pace::Keep`] (no faster) if that brakes
    /// well, else [`Pace::Brake`]. Far from singularities, and with no
    /// jog, `Ahead` without looking.
    pub(super) fn pace(
        &self,
        chain: &Chain,
        motion: &MotionLimiter,
        settings: &JogSettings,
        now: f64,
    ) -> Pace {
        let near = self
            .last
            .is_none_or(|s| s.sigma.1.is_nan() || s.sigma.1 < LOOK_WITHIN * self.reach);
        if !self.jog.is_active() || !near {
            return Pace::Ahead;
        }
        [Pace::Ahead, Pace::Keep]
            .into_iter()
            .find(|&p| self.brakes_well(p, chain, motion, settings, now))
            .unwrap_or(Pace::Brake)
    }

    /// Plays a tick at `first` pace and then braking forward on copies of
    /// the steering and the motion limiter: true when the arm comes to
    /// rest without a singularity and without leaving the path.
    fn brakes_well(
        &self,
        first: Pace,
        chain: &Chain,
        motion: &MotionLimiter,
        settings: &JogSettings,
        now: f64,
    ) -> bool {
        let mut probe = self.clone();
        let mut limiter = motion.clone();
        let mut status = SteerStatus::default();
        let mut goal = motion.goal().to_vec();
        let dt = motion.period();
        let (v, w) = self.jog.velocity();
        let braking =
            (v.norm() / settings.linear_acceleration).max(w.norm() / settings.angular_acceleration);
        let ticks = (braking / dt).ceil() as usize + 1 + SETTLE_TICKS;
        let mut k = 0;
        // The way the tip moves: lagging along it is only slow, leaving it
        // is drift.
        let path = v.try_normalize(1e-12);
        loop {
            probe.jog.set_pace(if k == 0 { first } else { Pace::Brake });
            let t = now + k as f64 * dt;
            let Some(g) = probe.advance(chain, &limiter, settings, t, &mut status) else {
                return true;
            };
            goal[..g.len()].copy_from_slice(g);
            if probe
                .last
                .is_some_and(|s| s.hold == Some(Hold::Singularity))
                || probe.adrift(chain, path)
            {
                return false;
            }
            limiter.track(&goal);
            if k > 0 && !probe.jog.moving() && probe.settled() && limiter.is_settled() {
                return true;
            }
            if k == ticks {
                return false;
            }
            k += 1;
        }
    }

    /// True when the tip is further than [`ADRIFT`] from the jog's target
    /// across `path` (the unit direction the tip moves; all of the
    /// distance when it only turns), with no joint limit holding it.
    fn adrift(&self, chain: &Chain, path: Option<Vector3<f64>>) -> bool {
        let (Some(step), Some(target)) = (self.last, &self.target) else {
            return false;
        };
        if step.hold.is_some() {
            return false;
        }
        let e = target.position - chain.fk(&self.goal).translation.vector;
        let across = path.map_or(e, |d| e - d * e.dot(&d));
        across.norm() > ADRIFT
    }
}
