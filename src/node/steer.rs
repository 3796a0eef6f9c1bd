//! Steering the tip by hand: the jog (twists) and the target marker (drag
//! in RViz), and which of them, if any, moves the arm.
//!
//! Both hand the [`Follower`] a target that moves a little every tick;
//! its answer becomes the motion limiter's goal, so the arm still moves
//! within every joint limit. The follower keeps its own joint vector (the
//! goal), started from where the arm is when steering begins, so the goal
//! is a continuous path and the limiter only ever chases it a tick behind.
//! A target from a topic or a file takes over at once (the node core calls
//! [`Steering::release`]); a twist or a drag takes over from a target the
//! same way: the latest input wins.

use super::follow::{FollowStep, Follower, Hold};
use super::jog::{Jog, TwistMsg};
use super::marker::{Drag, MarkerFeedback, MarkerSnapshot, MarkerUpdate, TargetMarker};
use super::motion::{AxisLimits, MotionLimiter, brake_speed};
use super::settings::JogSettings;
use super::status::{RejectReason, SteerMode, SteerStatus};
use crate::ik::reach;
use crate::ik::{JointMode, Target};
use crate::model::{Chain, Transform};
use nalgebra::UnitQuaternion;

/// Below this orientation error (rad) a 5-joint arm counts as following
/// the orientation it was asked for.
const TURN_FOLLOWED: f64 = 0.01;
/// The share of each joint's speed that turning the tip (after placing
/// it) may use. Near the edge of what a 5-joint arm can turn, holding the
/// orientation asks ever more speed of the elbow until, at the straight
/// elbow, it suddenly cannot; capped, the orientation gives way smoothly
/// and the elbow never has to brake from full speed.
const TURN_SHARE: f64 = 0.25;
/// The jog slows when the position Jacobian's smallest singular value
/// falls below this fraction of the chain's reach (m/rad), approaching a
/// singularity; on the project arm that is about where the stretching
/// elbow's speed doubles.
const JOG_SLOW: f64 = 0.15;
/// Jogging at full speed far from singularities, the project arm's
/// joints use up to about a third of their speed; the jog slows from
/// twice that and stops at six times.
const AMPLIFICATION_SLOW: f64 = 0.6;
const AMPLIFICATION_STOP: f64 = 2.0;
/// A dragged marker turned less than this (rad) from where it was grabbed
/// counts as only moved.
const UNTURNED: f64 = 1e-3;
/// A drag that was let go counts as done once a tick moves no joint more
/// than this (rad or m): the arm is as close as it gets.
const SETTLED: f64 = 1e-7;

/// The jog, the marker and the follower that moves the arm for them.
#[derive(Debug, Clone)]
pub struct Steering {
    follower: Follower,
    jog: Jog,
    marker: TargetMarker,
    mode: SteerMode,
    goal: Vec<f64>,
    before: Vec<f64>,
    drag: Option<Target>,
    /// The marker's orientation when the drag began.
    grabbed: Option<UnitQuaternion<f64>>,
    released: bool,
    target: Option<Target>,
    limits: Vec<(f64, f64)>,
    steps: Vec<(f64, f64)>,
    turn_caps: Vec<f64>,
    base: String,
    tip: String,
    dof: usize,
    /// The chain's reach (m).
    reach: f64,
    notice: Option<String>,
}

impl Steering {
    /// Steering for `chain`; `modes` are the solver's per-joint modes.
    pub fn new(chain: &Chain, modes: &[JointMode]) -> Steering {
        let n = chain.dof();
        Steering {
            follower: Follower::new(chain, modes),
            jog: Jog::default(),
            // Handles a quarter of the arm's reach across: big enough to
            // grab, small enough not to hide the arm.
            marker: TargetMarker::new(&chain.base, reach(chain) / 4.0),
            mode: SteerMode::Idle,
            goal: vec![0.0; n],
            before: vec![0.0; n],
            drag: None,
            grabbed: None,
            released: false,
            target: None,
            limits: vec![(0.0, 0.0); n],
            steps: vec![(0.0, 0.0); n],
            turn_caps: vec![0.0; n],
            base: chain.base.clone(),
            tip: chain.tip.clone(),
            dof: n,
            reach: reach(chain),
            notice: None,
        }
    }

    /// The solver's per-joint modes changed.
    pub fn set_modes(&mut self, chain: &Chain, modes: &[JointMode]) {
        self.follower.set_modes(chain, modes);
    }

    /// Takes in a twist received at `now` (its stamp already checked);
    /// `q` is where the arm is, where a new jog starts.
    pub fn twist(
        &mut self,
        msg: &TwistMsg,
        settings: &JogSettings,
        q: &[f64],
        now: f64,
        status: &mut SteerStatus,
    ) -> Result<(), (RejectReason, String)> {
        msg.check_finite()?;
        let frame = msg.frame(&self.base, &self.tip, settings.cmd_vel_frame)?;
        if self.mode != SteerMode::Jog {
            self.begin(SteerMode::Jog, q, status);
        }
        self.jog.command(msg, frame, now);
        status.twists += 1;
        Ok(())
    }

    /// Takes in marker feedback received at `now`: what it asks of the arm.
    pub fn feedback(
        &mut self,
        fb: &MarkerFeedback,
        now: f64,
        status: &mut SteerStatus,
    ) -> Result<Drag, (RejectReason, String)> {
        let drag = self.marker.feedback(fb, now)?;
        status.marker_feedback += 1;
        Ok(drag)
    }

    /// Follows the dragged marker to `target` (checked); `released` when
    /// the user let go there. `q` is where the arm is.
    pub fn drag(&mut self, target: Target, released: bool, q: &[f64], status: &mut SteerStatus) {
        if self.mode != SteerMode::Drag {
            self.begin(SteerMode::Drag, q, status);
            self.grabbed = target.orientation;
        }
        self.drag = Some(self.placed_or_turned(target));
        self.released = released;
    }

    /// A drag target as the follower gets it: on an arm with fewer than 6
    /// joints, a marker moved but not turned since it was grabbed places
    /// the tip only (see the jog's same rule in [`Steering::step`]).
    fn placed_or_turned(&self, target: Target) -> Target {
        let turned = match (self.grabbed, target.orientation) {
            (Some(a), Some(b)) => a.angle_to(&b) > UNTURNED,
            _ => true,
        };
        if self.dof < 6 && !turned {
            Target::position(target.position)
        } else {
            target
        }
    }

    /// Something else moves the arm now: stop jogging and dragging.
    pub fn release(&mut self, status: &mut SteerStatus) {
        self.mode = SteerMode::Idle;
        self.jog.stop();
        self.drag = None;
        self.target = None;
        self.marker.follow_tip();
        status.mode = SteerMode::Idle;
        status.hold = None;
    }

    fn begin(&mut self, mode: SteerMode, q: &[f64], status: &mut SteerStatus) {
        self.release(status);
        self.goal.copy_from_slice(&q[..self.dof]);
        self.mode = mode;
        status.mode = mode;
    }

    /// One tick at `now`: moves the goal toward the jog's or the drag's
    /// target and returns it for the motion limiter; `None` while nothing
    /// steers.
    pub fn step(
        &mut self,
        chain: &Chain,
        motion: &MotionLimiter,
        settings: &JogSettings,
        now: f64,
        status: &mut SteerStatus,
    ) -> Option<&[f64]> {
        let dt = motion.period();
        for (i, l) in motion.limits().iter().take(self.dof).enumerate() {
            self.limits[i] = (l.lower, l.upper);
            self.steps[i] = tick_range(l, self.goal[i], motion.velocity()[i], dt);
            self.turn_caps[i] = TURN_SHARE * l.velocity * dt;
        }
        let target = match self.mode {
            SteerMode::Idle => return None,
            SteerMode::Jog => {
                let tip = chain.fk(&self.goal);
                match (self.jog.advance(settings, &tip, now, dt), &self.target) {
                    // An arm with fewer than 6 joints moving the tip
                    // without turning it: holding the orientation exactly
                    // drives it to the straight elbow at ever higher
                    // speed, so it places the tip and lets the
                    // orientation follow the least joint motion.
                    (Some(t), _) if self.dof < 6 && !self.jog.turning() => {
                        Target::position(t.position)
                    }
                    (Some(t), _) => t,
                    // The jog is at rest but the joints still slow down
                    // onto its last target.
                    (None, Some(t)) if !self.settled() => t.clone(),
                    (None, _) => {
                        // At rest: the goal stays where the jog left it.
                        self.release(status);
                        return None;
                    }
                }
            }
            SteerMode::Drag => self.drag.clone()?,
        };
        self.before.copy_from_slice(&self.goal);
        if self.mode == SteerMode::Jog && self.jog.blocked_at_rest() {
            self.brake(chain, motion, status);
            self.target = Some(target);
            return Some(&self.goal);
        }
        let step = self.follower.step(
            chain,
            &mut self.goal,
            &target,
            &self.limits,
            &self.steps,
            &self.turn_caps,
        );
        status.hold = step.hold;
        if self.mode == SteerMode::Jog && step.hold == Some(Hold::Singularity) {
            self.jog.halt(&chain.fk(&self.goal));
        } else if self.mode == SteerMode::Jog {
            self.jog.hold_lead(&chain.fk(&self.goal));
            let scale = self.singularity_scale(step.sigma, self.amplification(motion, settings));
            self.jog.set_speed_scale(scale);
        } else if self.released && self.settled() {
            // Let go and got there as far as the arm can: the marker shows
            // the tip again, and the arm holds.
            self.release(status);
        }
        self.note_unfollowed_turn(&step, status);
        self.target = Some(target);
        Some(&self.goal)
    }

    /// Halted at a singularity with the twist still pushing into it: the
    /// joints slow to rest within their accelerations and stay, instead
    /// of the follower chasing a target on the edge of the reach (there a
    /// tiny tip error asks for large joint steps, and the joints' momentum
    /// swings the tip around the edge). Braking starts from where the
    /// joints are, not from the goal a tick ahead of them, so the limiter
    /// has no lead left to chase. The jog's target stays on the tip so a
    /// twist back out starts from where it rests.
    fn brake(&mut self, chain: &Chain, motion: &MotionLimiter, status: &mut SteerStatus) {
        let dt = motion.period();
        let axes = motion
            .limits()
            .iter()
            .zip(motion.position())
            .zip(motion.velocity());
        for (goal, ((l, &q), &v)) in self.goal.iter_mut().zip(axes) {
            let (lo, hi) = tick_range(l, q, v, dt);
            *goal = q + 0.0_f64.clamp(lo, hi);
        }
        self.jog.halt(&chain.fk(&self.goal));
        status.hold = Some(Hold::Singularity);
    }

    /// How much of the jog's speed to allow next tick (0 to 1): all of it
    /// unless the last tick brought the arm closer to a singularity
    /// (`sigma`: the position Jacobian's smallest singular value before
    /// and after it). Near one the joints move ever faster for the same
    /// tip speed, and at the follower's stop they could not brake in time.
    /// So the tip slows in proportion within [`JOG_SLOW`] of the reach,
    /// and as the joints' share of their speed limits per share of the
    /// jog's speed (`amplification`) grows from [`AMPLIFICATION_SLOW`] to
    /// [`AMPLIFICATION_STOP`], where it stops.
    fn singularity_scale(&self, (before, after): (f64, f64), amplification: f64) -> f64 {
        if after >= before || after.is_nan() {
            return 1.0;
        }
        let (slow, stop) = (JOG_SLOW * self.reach, self.follower.stop_sigma());
        let band = ((after - stop) / (slow - stop)).clamp(0.0, 1.0);
        let amplified =
            (AMPLIFICATION_STOP - amplification) / (AMPLIFICATION_STOP - AMPLIFICATION_SLOW);
        band.min(amplified.clamp(0.0, 1.0))
    }

    /// The largest share of a joint's speed limit the goal used this
    /// tick, per share of the jog's speed limits the tip used (0 when the
    /// tip did not move).
    fn amplification(&self, motion: &MotionLimiter, settings: &JogSettings) -> f64 {
        let (linear, angular) = self.jog.velocity();
        let tip =
            (linear.norm() / settings.linear_speed).max(angular.norm() / settings.angular_speed);
        if tip <= 0.0 {
            return 0.0;
        }
        let dt = motion.period();
        let joints = motion
            .limits()
            .iter()
            .take(self.dof)
            .enumerate()
            .map(|(i, l)| (self.goal[i] - self.before[i]).abs() / (l.velocity * dt))
            .fold(0.0, f64::max);
        joints / tip
    }

    /// True when the last step moved no joint noticeably.
    fn settled(&self) -> bool {
        self.goal
            .iter()
            .zip(&self.before)
            .all(|(a, b)| (a - b).abs() <= SETTLED)
    }

    /// Says once that an arm with fewer than 6 joints leaves out the part
    /// of a turn it cannot make.
    fn note_unfollowed_turn(&mut self, step: &FollowStep, status: &mut SteerStatus) {
        if self.dof >= 6 || status.note.is_some() || step.orientation_error <= TURN_FOLLOWED {
            return;
        }
        let n = self.dof;
        let note = format!(
            "{} -> {} has {n} joints: jog and drag follow the tip's position exactly and its \
             orientation only as far as {n} joints can turn it; the rest of a turn is ignored",
            self.base, self.tip
        );
        status.note = Some(note.clone());
        self.notice = Some(note);
    }

    /// What the front-end should log, once: the note on an arm that cannot
    /// follow every turn.
    pub fn take_notice(&mut self) -> Option<String> {
        self.notice.take()
    }

    /// The pose the jog or drag is steering the tip to, if one is.
    pub fn target(&self) -> Option<&Target> {
        self.target.as_ref()
    }

    /// The marker update to publish this tick, `tip` being the commanded
    /// tip pose.
    pub fn marker_update(&mut self, tip: &Transform, now: f64) -> Option<MarkerUpdate> {
        self.marker.update(tip, now)
    }

    /// The answer to `get_interactive_markers`.
    pub fn marker_snapshot(&self) -> MarkerSnapshot {
        self.marker.snapshot()
    }
}

/// The steps (least, most) a joint at `q` moving at `v` can make in one
/// tick of `dt` within `l`: its acceleration from `v`, its speed, and
/// still able to stop at its position limits; the same bounds as
/// [`MotionLimiter::track`], so the limiter lands on a goal stepped
/// within them exactly instead of lagging and overshooting.
fn tick_range(l: &AxisLimits, q: f64, v: f64, dt: f64) -> (f64, f64) {
    let (a, vmax) = (l.acceleration, l.velocity);
    let hi = (v + a * dt).min(vmax).min(brake_speed(l.upper - q, a, dt));
    let lo = (v - a * dt)
        .max(-vmax)
        .max(-brake_speed(q - l.lower, a, dt));
    (lo * dt, hi.max(lo) * dt)
}
