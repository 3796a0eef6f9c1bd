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
//!
//! A jog looks ahead near singularities so it can always brake in time
//! (`steer/lookahead.rs`), and while steering the elbow keeps the side it
//! is bent to, the wrist too while the tip is only placed
//! (`steer/elbow.rs`).
//!
//! At a singularity the follower can be stuck where the arm is not: the
//! project arm starts straight up, stretched, and a target below its tip
//! asks for no joint motion to first order (bending the elbow lowers the
//! tip only to second order), nor one beside it (the tip is on the base's
//! axis). Then the node core solves the steered target with its solver
//! (`Steering::stuck`, seeded from the goal with each bend a little bent
//! either way) and the goal moves toward that answer in joint space,
//! within the same per-tick bounds (`Steering::unfold`), until following
//! works again: from the start pose a drag or a jog moves the arm as from
//! any other.

use super::follow::{FollowStep, Follower, Hold};
use super::jog::{Jog, Pace, TwistMsg};
use super::marker::{Drag, MarkerFeedback, MarkerSnapshot, MarkerUpdate, TargetMarker};
use super::motion::{AxisLimits, MotionLimiter, brake_speed};
use super::settings::JogSettings;
use super::status::{RejectReason, SteerMode, SteerStatus};
use crate::ik::reach;
use crate::ik::{JointMode, Target};
use crate::model::{Chain, Transform};
use nalgebra::UnitQuaternion;

mod elbow;
mod lookahead;
mod unfold;

use elbow::Elbows;

/// Below this orientation error (rad) a 5-joint arm counts as following
/// the orientation it was asked for.
const TURN_FOLLOWED: f64 = 0.01;
/// The share of each joint's speed that turning the tip (after placing
/// it) may use. Near the edge of what a 5-joint arm can turn, holding the
/// orientation asks ever more speed of the elbow until, at the straight
/// elbow, it suddenly cannot; capped, the orientation gives way smoothly
/// and the elbow never has to brake from full speed.
const TURN_SHARE: f64 = 0.25;
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
    /// The follower's last step, when it took one.
    last: Option<FollowStep>,
    elbows: Elbows,
    /// The last step got nowhere at a singularity: the core solves.
    stuck: bool,
    /// The solver's last answer while unfolding (the next solve's seed).
    unfolding: Option<Vec<f64>>,
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
            last: None,
            elbows: Elbows::new(chain),
            stuck: false,
            unfolding: None,
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
            self.grabbed = target.orientation.full();
        }
        self.drag = Some(self.placed_or_turned(target));
        self.released = released;
    }

    /// A drag target as the follower gets it: on an arm with fewer than 6
    /// joints, a marker moved but not turned since it was grabbed places
    /// the tip only (see the jog's same rule in [`Steering::step`]).
    fn placed_or_turned(&self, target: Target) -> Target {
        let turned = match (self.grabbed, target.orientation.full()) {
            (Some(a), Some(b)) => a.angle_to(&b) > UNTURNED,
            _ => true,
        };
        if self.dof < 6 && !turned {
            Target::position(target.position)
        } else {
            target
        }
    }

    /// The collision check stopped the arm with its joints going to `q`:
    /// the steering's goal is put there, a jog halts (a twist that keeps
    /// pushing the same way stays halted, one that backs out moves), a
    /// drag holds until the marker moves somewhere the arm may go.
    pub fn blocked(&mut self, chain: &Chain, q: &[f64], status: &mut SteerStatus) {
        self.goal.copy_from_slice(&q[..self.dof]);
        if self.mode == SteerMode::Jog {
            self.jog.halt(&chain.fk(&self.goal));
        }
        status.hold = Some(Hold::Collision);
    }

    /// The collision check slowed a drag near an obstacle: its joints go
    /// to `q` this tick. The steering's goal is put there so it does not
    /// run ahead of the arm.
    pub fn slowed(&mut self, q: &[f64]) {
        self.goal.copy_from_slice(&q[..self.dof]);
    }

    /// True while a twist steers the arm.
    pub fn jogging(&self) -> bool {
        self.mode == SteerMode::Jog
    }

    /// The collision check's share of full speed for the jog near an
    /// obstacle (`None`: full speed), taken from the next tick on.
    pub fn slow_jog(&mut self, share: Option<f64>) {
        self.jog.slow_to(share);
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
        self.elbows.begin();
        self.stuck = false;
        self.unfolding = None;
        self.mode = mode;
        status.mode = mode;
    }

    /// One tick at `now`: moves the goal toward the jog's or the drag's
    /// target and returns it for the motion limiter; `None` while nothing
    /// steers. A jog that could not brake in time if it went on one more
    /// tick paces itself to brake in time (see `steer/lookahead.rs`).
    pub fn step(
        &mut self,
        chain: &Chain,
        motion: &MotionLimiter,
        settings: &JogSettings,
        now: f64,
        status: &mut SteerStatus,
    ) -> Option<&[f64]> {
        let pace = match self.mode {
            // Unfolding moves toward the solver's answer, braking onto it:
            // nothing to look ahead for.
            SteerMode::Jog if self.unfolding.is_none() => self.pace(chain, motion, settings, now),
            _ => Pace::Ahead,
        };
        if pace == Pace::Brake && !self.jog.moving() {
            // At rest and even the smallest step on would end badly: the
            // jog halts there, as at a singularity, until it turns away.
            self.jog.brake();
        }
        self.jog.set_pace(pace);
        self.advance(chain, motion, settings, now, status)?;
        if self.mode == SteerMode::Jog && (self.jog.blocked() || pace != Pace::Ahead) {
            status.hold = Some(Hold::Singularity);
        }
        Some(&self.goal)
    }

    /// [`Steering::step`] without looking ahead.
    fn advance(
        &mut self,
        chain: &Chain,
        motion: &MotionLimiter,
        settings: &JogSettings,
        now: f64,
        status: &mut SteerStatus,
    ) -> Option<&[f64]> {
        let dt = motion.period();
        let target = self.next_target(chain, settings, now, dt, status)?;
        self.load_ranges(motion, target.orientation.is_free());
        self.before.copy_from_slice(&self.goal);
        self.last = None;
        if self.mode == SteerMode::Jog && self.jog.blocked_at_rest() {
            self.brake(chain, motion, status);
            self.target = Some(target);
            return Some(&self.goal);
        }
        let from = (target.position - chain.fk(&self.goal).translation.vector).norm();
        let step = self.follower.step(
            chain,
            &mut self.goal,
            &target,
            &self.limits,
            &self.steps,
            &self.turn_caps,
        );
        self.stuck = self.is_stuck(&step, from);
        status.hold = step.hold;
        self.last = Some(step);
        if self.mode == SteerMode::Jog && step.hold == Some(Hold::Singularity) && !self.stuck {
            self.jog.halt(&chain.fk(&self.goal));
        } else if self.mode == SteerMode::Jog {
            self.jog.hold_lead(&chain.fk(&self.goal));
        } else if self.released && self.settled() && !self.stuck {
            // Let go and got there as far as the arm can: the marker shows
            // the tip again, and the arm holds.
            self.release(status);
        }
        self.note_unfollowed_turn(&step, status);
        self.target = Some(target);
        Some(&self.goal)
    }

    /// The goal the last step left (the motion limiter's, for the arm's
    /// axes).
    pub fn goal(&self) -> &[f64] {
        &self.goal
    }

    /// The target the follower moves the tip toward this tick: the jog's
    /// (advanced by `dt`) or the dragged marker's; `None` when nothing
    /// steers any more.
    fn next_target(
        &mut self,
        chain: &Chain,
        settings: &JogSettings,
        now: f64,
        dt: f64,
        status: &mut SteerStatus,
    ) -> Option<Target> {
        match self.mode {
            SteerMode::Idle => None,
            SteerMode::Jog => {
                let tip = chain.fk(&self.goal);
                match (self.jog.advance(settings, &tip, now, dt), &self.target) {
                    // An arm with fewer than 6 joints moving the tip
                    // without turning it: holding the orientation exactly
                    // drives it to the straight elbow at ever higher
                    // speed, so it places the tip and lets the
                    // orientation follow the least joint motion.
                    (Some(t), _) if self.dof < 6 && !self.jog.turning() => {
                        Some(Target::position(t.position))
                    }
                    (Some(t), _) => Some(t),
                    // The jog is at rest but the joints still slow down
                    // onto its last target.
                    (None, Some(t)) if !self.settled() => Some(t.clone()),
                    (None, _) => {
                        // At rest: the goal stays where the jog left it.
                        self.release(status);
                        None
                    }
                }
            }
            SteerMode::Drag => self.drag.clone(),
        }
    }

    /// Each joint's range and step bounds this tick, from the motion
    /// limiter's state; `placing` when the target places the tip without
    /// turning it (then the wrist keeps its bend too, see `steer/elbow.rs`).
    fn load_ranges(&mut self, motion: &MotionLimiter, placing: bool) {
        let dt = motion.period();
        for (i, l) in motion.limits().iter().take(self.dof).enumerate() {
            let range = (l.lower, l.upper);
            let (lower, upper) = self.elbows.narrow(i, self.goal[i], range, placing);
            let l = AxisLimits { lower, upper, ..*l };
            self.limits[i] = (lower, upper);
            self.steps[i] = tick_range(&l, self.goal[i], motion.velocity()[i], dt);
            self.turn_caps[i] = TURN_SHARE * l.velocity * dt;
        }
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

    /// The marker update to publish now, `tip` being the commanded tip
    /// pose.
    pub fn marker_update(&mut self, tip: &Transform) -> Option<MarkerUpdate> {
        self.marker.update(tip)
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
