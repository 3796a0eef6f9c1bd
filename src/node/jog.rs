//! Jogging: a twist (a velocity for the tip) becomes a target pose that
//! moves a little every tick, which the [`Follower`](super::follow::Follower)
//! then follows. This is what `teleop_twist_keyboard` and
//! `teleop_twist_joy` drive through `~/cmd_vel`, as MoveIt Servo does for
//! bigger arms.
//!
//! The jog keeps its own velocity and changes it toward the latest twist
//! at most by the acceleration limits each tick, so key presses and
//! releases start and stop the arm smoothly. A twist holds for
//! `jog_timeout` after it arrived; after that the jog slows to a stop by
//! itself. The target never runs ahead of what the arm reached by more
//! than a small lead: when a joint limit or a singularity holds the tip
//! back, the target waits, so reversing the stick moves the arm back at
//! once instead of first winding the target back.

use super::settings::{JogSettings, TwistFrame};
use super::status::RejectReason;
use crate::ik::Target;
use crate::model::Transform;
use nalgebra::{UnitQuaternion, Vector3};
use serde::{Deserialize, Serialize};

/// How far the target may lead the pose the arm reached (m, rad).
const LEAD: f64 = 0.002;
const LEAD_ANGLE: f64 = 0.02;

/// A velocity for the tip: `geometry_msgs/Twist` (`cmd_vel`) or
/// `TwistStamped` (`target_twist`) without ROS.
///
/// JSON form (a `{"type":"twist",...}` command line): `{"linear":[x,y,z],
/// "angular":[x,y,z], "frame_id":"base_link", "stamp":0}`, every field
/// optional (zero, empty: the `cmd_vel_frame` parameter's frame, now).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TwistMsg {
    /// When the twist was sent (s, node clock); 0 means "now". A stamped
    /// twist older than `max_target_age` is refused as stale; the timeout
    /// runs from arrival.
    #[serde(default)]
    pub stamp: f64,
    /// The base link or the tip link; empty: `cmd_vel_frame`.
    #[serde(default)]
    pub frame_id: String,
    /// m/s.
    #[serde(default)]
    pub linear: [f64; 3],
    /// rad/s, about the frame's axes.
    #[serde(default)]
    pub angular: [f64; 3],
}

impl TwistMsg {
    /// A twist in `frame_id`, stamped "now".
    pub fn new(frame_id: &str, linear: [f64; 3], angular: [f64; 3]) -> TwistMsg {
        TwistMsg {
            stamp: 0.0,
            frame_id: frame_id.to_string(),
            linear,
            angular,
        }
    }

    /// The frame the twist's vectors are in: the base or the tip link by
    /// name, `default` when it names none; any other frame is refused.
    pub fn frame(
        &self,
        base: &str,
        tip: &str,
        default: TwistFrame,
    ) -> Result<TwistFrame, (RejectReason, String)> {
        match self.frame_id.as_str() {
            "" => Ok(default),
            f if f == base => Ok(TwistFrame::Base),
            f if f == tip => Ok(TwistFrame::Tip),
            f => Err((
                RejectReason::WrongFrame,
                format!(
                    "twist frame '{f}' is neither the base link '{base}' nor the tip link '{tip}'"
                ),
            )),
        }
    }

    /// Refuses NaN and infinite velocities.
    pub fn check_finite(&self) -> Result<(), (RejectReason, String)> {
        if self
            .linear
            .iter()
            .chain(&self.angular)
            .all(|v| v.is_finite())
        {
            Ok(())
        } else {
            Err((
                RejectReason::NotFinite,
                format!("twist linear {:?} angular {:?}", self.linear, self.angular),
            ))
        }
    }

    /// True when it asks the tip to turn.
    pub fn turns(&self) -> bool {
        self.angular.iter().any(|v| *v != 0.0)
    }
}

/// How a tick of the jog may change its speed: what keeps it able to
/// brake in time near a singularity (decided by the steering, which looks
/// ahead).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Pace {
    /// Toward the live twist, within the accelerations.
    #[default]
    Ahead,
    /// No faster than now (the direction may still change).
    Keep,
    /// Slower, at the accelerations.
    Brake,
}

/// The latest twist, as taken in.
#[derive(Debug, Clone, Copy)]
struct Ask {
    frame: TwistFrame,
    linear: Vector3<f64>,
    angular: Vector3<f64>,
    /// Arrival on the node clock (s).
    at: f64,
}

/// The jog's state: the latest twist, the velocity it is ramping and the
/// target pose it integrates.
#[derive(Debug, Clone, Default)]
pub struct Jog {
    ask: Option<Ask>,
    linear: Vector3<f64>,
    angular: Vector3<f64>,
    target: Option<(Vector3<f64>, UnitQuaternion<f64>)>,
    /// How the next tick may change the speed.
    pace: Pace,
    /// The tip trails the target by more than the lead: the target waits.
    stalled: bool,
    /// The direction (unit, base frame) the tip was moving when a
    /// singularity halted it: until the jog moves back against it, no
    /// twist pushes the tip that way again.
    blocked: Option<Vector3<f64>>,
    /// The same for turning: the axis (unit, base frame) the tip was
    /// turning about when the jog braked for a singularity.
    blocked_turn: Option<Vector3<f64>>,
    /// The linear velocity the live twist asked for last tick (base
    /// frame), before any slowing.
    pushed: Vector3<f64>,
    /// The same for the angular velocity.
    pushed_turn: Vector3<f64>,
    /// The share of the set speeds the collision check allows near an
    /// obstacle (`None`: all of it).
    share: Option<f64>,
}

impl Jog {
    /// Takes in a checked twist received at `now`.
    pub fn command(&mut self, msg: &TwistMsg, frame: TwistFrame, now: f64) {
        self.ask = Some(Ask {
            frame,
            linear: Vector3::from(msg.linear),
            angular: Vector3::from(msg.angular),
            at: now,
        });
    }

    /// True while a twist is live or the tip is still moving from one.
    pub fn is_active(&self) -> bool {
        self.target.is_some() || self.ask.is_some()
    }

    /// Forgets everything: something else moves the arm now.
    pub fn stop(&mut self) {
        *self = Jog::default();
    }

    /// How the next tick may change the speed (see [`Pace`]).
    pub fn set_pace(&mut self, pace: Pace) {
        self.pace = pace;
    }

    /// Scales the twist's speeds by `share` from the next tick (`None`
    /// lifts it). The velocity drops at once rather than
    /// within the jog's deceleration: slowing is what the collision check
    /// asks for, and the joints' own limits still bound the change.
    pub fn slow_to(&mut self, share: Option<f64>) {
        self.share = share.filter(|s| s.is_finite()).map(|s| s.clamp(0.0, 1.0));
    }

    /// True while the jog turns the tip or a live twist asks it to.
    pub fn turning(&self) -> bool {
        self.angular != Vector3::zeros() || self.ask.is_some_and(|a| a.angular != Vector3::zeros())
    }

    /// The tip's velocity in the base frame (m/s, rad/s).
    pub fn velocity(&self) -> (Vector3<f64>, Vector3<f64>) {
        (self.linear, self.angular)
    }

    /// One tick of `dt` at `now`: ramps the velocity toward the live twist
    /// (or to rest once it timed out) and moves the target by it. `tip` is
    /// the pose the arm was sent to last tick: the start of a new jog and
    /// the frame of tip-frame twists. `None` once at rest with no live
    /// twist: the jog is over.
    pub fn advance(
        &mut self,
        settings: &JogSettings,
        tip: &Transform,
        now: f64,
        dt: f64,
    ) -> Option<Target> {
        let live = self.ask.filter(|a| now - a.at <= settings.timeout);
        let share = self.share.unwrap_or(1.0);
        let (want_linear, want_angular) = match live {
            Some(a) => {
                let to_base = match a.frame {
                    TwistFrame::Base => nalgebra::Rotation3::identity(),
                    TwistFrame::Tip => tip.rotation,
                };
                (
                    capped(to_base * a.linear, settings.linear_speed) * share,
                    capped(to_base * a.angular, settings.angular_speed) * share,
                )
            }
            None => (Vector3::zeros(), Vector3::zeros()),
        };
        if self.share.is_some() {
            self.linear = capped(self.linear, want_linear.norm());
            self.angular = capped(self.angular, want_angular.norm());
        }
        self.pushed = want_linear;
        self.pushed_turn = want_angular;
        let want_linear = unblocked(want_linear, self.blocked);
        let want_angular = unblocked(want_angular, self.blocked_turn);
        let (want_linear, want_angular) = match self.pace {
            Pace::Ahead => (want_linear, want_angular),
            Pace::Keep => (
                capped(want_linear, self.linear.norm()),
                capped(want_angular, self.angular.norm()),
            ),
            Pace::Brake => (Vector3::zeros(), Vector3::zeros()),
        };
        self.linear = approach(self.linear, want_linear, settings.linear_acceleration * dt);
        self.angular = approach(
            self.angular,
            want_angular,
            settings.angular_acceleration * dt,
        );
        if self.blocked.is_some_and(|d| self.linear.dot(&d) < 0.0) {
            self.blocked = None;
        }
        if self
            .blocked_turn
            .is_some_and(|d| self.angular.dot(&d) < 0.0)
        {
            self.blocked_turn = None;
        }
        if live.is_none() && self.linear == Vector3::zeros() && self.angular == Vector3::zeros() {
            self.stop();
            return None;
        }
        let (p, r) = self.target.get_or_insert_with(|| {
            (
                tip.translation.vector,
                UnitQuaternion::from_rotation_matrix(&tip.rotation),
            )
        });
        if !self.stalled {
            *p += self.linear * dt;
        }
        *r = UnitQuaternion::from_scaled_axis(self.angular * dt) * *r;
        Some(Target::pose(*p, *r))
    }

    /// True while a singularity halted the jog and the twists still push
    /// only that way: the arm should come to rest and stay.
    pub fn blocked_at_rest(&self) -> bool {
        self.blocked() && !self.moving()
    }

    /// True while a singularity blocks a way the tip was pushed.
    pub fn blocked(&self) -> bool {
        self.blocked.is_some() || self.blocked_turn.is_some()
    }

    /// True while the tip moves or turns.
    pub fn moving(&self) -> bool {
        self.linear != Vector3::zeros() || self.angular != Vector3::zeros()
    }

    /// Starts braking to rest within the jog's accelerations: the way the
    /// tip is moving and turning now is blocked (as after a
    /// [`Jog::halt`]), so a twist that keeps pushing that way slows to a
    /// stop and stays there, and one that backs out moves it again. Used
    /// when braking any later would carry the arm into a singularity.
    pub fn brake(&mut self) {
        let moving = self.linear.try_normalize(1e-12);
        if let Some(d) = moving.or_else(|| self.pushed.try_normalize(1e-12)) {
            self.blocked = Some(d);
        }
        let turning = self.angular.try_normalize(1e-12);
        if let Some(d) = turning.or_else(|| self.pushed_turn.try_normalize(1e-12)) {
            self.blocked_turn = Some(d);
        }
    }

    /// Stops the jog where the tip got to (`reached`): at a singularity
    /// the tip is held where it is, not chased around the edge of the
    /// workspace. A twist that keeps pushing the same way leaves it
    /// there (as MoveIt Servo does); one that backs out, or turns
    /// sideways, moves it again from rest.
    pub fn halt(&mut self, reached: &Transform) {
        self.brake();
        self.linear = Vector3::zeros();
        self.angular = Vector3::zeros();
        self.stalled = false;
        self.target = Some((
            reached.translation.vector,
            UnitQuaternion::from_rotation_matrix(&reached.rotation),
        ));
    }

    /// Keeps the target within a small lead of `reached`, the pose the arm
    /// got to this tick: while the tip trails the target by more than
    /// the lead (a joint limit or a singularity holds it back), the target
    /// position stops moving, so the target never runs away and never
    /// drags the tip off the path the twists draw; the orientation, which
    /// a 5-joint arm may not follow at all, is pulled back to within
    /// a small angle of the tip's.
    pub fn hold_lead(&mut self, reached: &Transform) {
        let Some((p, r)) = &mut self.target else {
            return;
        };
        self.stalled = (*p - reached.translation.vector).norm() > LEAD;
        let turned = UnitQuaternion::from_rotation_matrix(&reached.rotation);
        let ahead = (*r * turned.inverse()).scaled_axis();
        *r = UnitQuaternion::from_scaled_axis(capped(ahead, LEAD_ANGLE)) * turned;
    }
}

/// `want` without its part pushing along `blocked` (a unit vector), when
/// it pushes that way.
fn unblocked(want: Vector3<f64>, blocked: Option<Vector3<f64>>) -> Vector3<f64> {
    match blocked {
        Some(d) if want.dot(&d) > 0.0 => want - d * want.dot(&d),
        _ => want,
    }
}

/// `v` scaled down to length `max` when longer, keeping its direction.
fn capped(v: Vector3<f64>, max: f64) -> Vector3<f64> {
    let n = v.norm();
    if n > max { v * (max / n) } else { v }
}

/// `from` moved toward `to` by at most `step` (vector length), landing
/// exactly on `to` when it is within reach.
fn approach(from: Vector3<f64>, to: Vector3<f64>, step: f64) -> Vector3<f64> {
    let d = to - from;
    if d.norm() <= step {
        to
    } else {
        from + capped(d, step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{Rotation3, Translation3};

    const DT: f64 = 0.02;

    fn tip_pointing_forward() -> Transform {
        // Tool z along base x: the wrist pitched 90 degrees forward.
        Transform::from_parts(
            Translation3::new(0.2, 0.0, 0.1),
            Rotation3::from_axis_angle(&Vector3::y_axis(), std::f64::consts::FRAC_PI_2),
        )
    }

    /// Sends `twist` in `frame` and advances the jog on each tick of `ticks`.
    fn push(
        jog: &mut Jog,
        tip: &Transform,
        twist: &TwistMsg,
        frame: TwistFrame,
        ticks: std::ops::Range<usize>,
    ) {
        let s = JogSettings::default();
        for k in ticks {
            jog.command(twist, frame, k as f64 * DT);
            jog.advance(&s, tip, k as f64 * DT, DT);
        }
    }

    #[test]
    fn frames_are_the_base_or_the_tip_link_by_name() {
        let t = TwistMsg::new("", [0.0; 3], [0.0; 3]);
        assert_eq!(
            t.frame("base_link", "tool", TwistFrame::Tip),
            Ok(TwistFrame::Tip)
        );
        let t = TwistMsg::new("tool", [0.0; 3], [0.0; 3]);
        assert_eq!(
            t.frame("base_link", "tool", TwistFrame::Base),
            Ok(TwistFrame::Tip)
        );
        let t = TwistMsg::new("world", [0.0; 3], [0.0; 3]);
        let (reason, why) = t.frame("base_link", "tool", TwistFrame::Base).unwrap_err();
        assert_eq!(reason, RejectReason::WrongFrame);
        assert!(
            why.contains("'world'") && why.contains("base_link"),
            "{why}"
        );
        let t = TwistMsg::new("", [f64::NAN, 0.0, 0.0], [0.0; 3]);
        assert_eq!(t.check_finite().unwrap_err().0, RejectReason::NotFinite);
    }

    #[test]
    fn speed_ramps_within_the_acceleration_and_is_capped() {
        let s = JogSettings::default();
        let mut jog = Jog::default();
        let tip = tip_pointing_forward();
        jog.command(
            &TwistMsg::new("", [0.0; 3], [0.0; 3]),
            TwistFrame::Base,
            0.0,
        );
        let twist = TwistMsg::new("", [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]);
        let mut speed = 0.0;
        for k in 0..50 {
            let now = k as f64 * DT;
            jog.command(&twist, TwistFrame::Base, now);
            jog.advance(&s, &tip, now, DT).unwrap();
            let v = jog.velocity().0.x;
            assert!(v - speed <= s.linear_acceleration * DT + 1e-12);
            speed = v;
        }
        assert_eq!(speed, s.linear_speed, "capped at the jog speed");
    }

    #[test]
    fn tip_frame_twists_follow_the_tool_axes() {
        let mut jog = Jog::default();
        let tip = tip_pointing_forward();
        let twist = TwistMsg::new("", [0.0, 0.0, 0.05], [0.0; 3]);
        push(&mut jog, &tip, &twist, TwistFrame::Tip, 0..20);
        // Tool z is base x here.
        let v = jog.velocity().0;
        assert!((v.x - 0.05).abs() < 1e-12 && v.z.abs() < 1e-12, "{v:?}");
    }

    #[test]
    fn a_silent_teleop_stops_the_jog_within_the_acceleration() {
        let s = JogSettings::default();
        let mut jog = Jog::default();
        let tip = tip_pointing_forward();
        jog.command(
            &TwistMsg::new("", [0.1, 0.0, 0.0], [0.0; 3]),
            TwistFrame::Base,
            0.0,
        );
        let mut k = 0;
        let mut speeds = Vec::new();
        while jog.advance(&s, &tip, k as f64 * DT, DT).is_some() {
            speeds.push(jog.velocity().0.x);
            k += 1;
            assert!(k < 1000, "never stopped");
        }
        assert!(!jog.is_active());
        // Up to speed, held until the timeout, then down at the limit.
        let top = speeds.iter().cloned().fold(0.0, f64::max);
        assert!(top > 0.09, "{top}");
        let timeout_tick = (s.timeout / DT).round() as usize;
        assert!(speeds[timeout_tick] > 0.0);
        for w in speeds.windows(2) {
            assert!((w[1] - w[0]).abs() <= s.linear_acceleration * DT + 1e-12);
        }
        assert!(k as f64 * DT <= s.timeout + 2.0 * top / s.linear_acceleration + 2.0 * DT);
    }

    #[test]
    fn a_push_into_a_halting_singularity_stays_halted_and_backing_out_moves() {
        let s = JogSettings::default();
        let mut jog = Jog::default();
        let tip = tip_pointing_forward();
        let out = TwistMsg::new("", [0.1, 0.0, 0.0], [0.0; 3]);
        push(&mut jog, &tip, &out, TwistFrame::Base, 0..20);
        jog.halt(&tip);
        for k in 20..40 {
            jog.command(&out, TwistFrame::Base, k as f64 * DT);
            let t = jog.advance(&s, &tip, k as f64 * DT, DT).unwrap();
            assert_eq!(t.position, tip.translation.vector, "tick {k}");
            assert!(jog.blocked_at_rest());
        }
        let back = TwistMsg::new("", [-0.1, 0.0, 0.0], [0.0; 3]);
        jog.command(&back, TwistFrame::Base, 40.0 * DT);
        jog.advance(&s, &tip, 40.0 * DT, DT);
        assert!(jog.velocity().0.x < 0.0 && !jog.blocked_at_rest());
    }

    #[test]
    fn the_target_waits_for_a_held_back_tip() {
        let s = JogSettings::default();
        let mut jog = Jog::default();
        let tip = tip_pointing_forward();
        let twist = TwistMsg::new("", [0.1, 0.0, 0.0], [0.0, 0.0, 0.5]);
        let mut target = None;
        for k in 0..100 {
            jog.command(&twist, TwistFrame::Base, k as f64 * DT);
            target = jog.advance(&s, &tip, k as f64 * DT, DT);
            // The tip does not move at all.
            jog.hold_lead(&tip);
        }
        let t = target.unwrap();
        let lead = (t.position - tip.translation.vector).norm();
        assert!(lead <= LEAD + 0.1 * DT + 1e-12, "{lead}");
    }
}
