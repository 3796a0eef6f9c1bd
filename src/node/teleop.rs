//! Leader–follower teleoperation, decided without ROS: a stream of leader
//! poses (joint positions by the follower's joint names, URDF units; the
//! front-end maps the names, [`names`]) becomes, every tick, the goal the
//! follower's motion limiter tracks.
//!
//! - The follower first moves to the leader's pose in a straight line in
//!   joint space at the start-up speed (the servo link's `startup_speed`),
//!   braking within the acceleration limits to stop on the pose, from
//!   wherever it is: at the first frame, after a silence, after
//!   relax and enable. The approach ends once the arm is within a tick's
//!   start-up step of the leader's pose, or of the pose it was heading
//!   for in the tick before: a leader moved just as the follower gets
//!   there is followed, not approached slowly all over again. Then it
//!   follows each frame, landing on it within the tick when the speed
//!   and acceleration limits allow and otherwise catching up as fast as
//!   they allow, never faster (a leader yanked by hand is followed at the
//!   speed limit).
//! - A leader silent for longer than the timeout (the link's command
//!   timeout) makes the follower hold where it is, and the status says so
//!   until frames come again, when the slow approach starts over.
//! - While a live leader drives, the other commands that move the arm are
//!   the core's to refuse (reason `teleop`); relax and enable work.

pub mod names;

use super::motion::{AxisLimits, brake_speed};
use serde::{Deserialize, Serialize};

/// One frame of the leader arm: positions by the follower's joint names.
/// JSON form: `{"type":"leader","name":["shoulder","gripper"],"position":[0.3,0.8]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeaderMsg {
    pub name: Vec<String>,
    /// URDF units, one per name.
    pub position: Vec<f64>,
}

/// How the follower takes a leader.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TeleopSettings {
    /// Joint speed of the approach to the leader's pose (rad/s or m/s).
    pub startup_speed: f64,
    /// A leader silent for longer than this (s) makes the follower hold.
    pub timeout: f64,
}

impl Default for TeleopSettings {
    /// The servo link's defaults (`link.startup_speed`,
    /// `link.command_timeout_ms`).
    fn default() -> Self {
        TeleopSettings {
            startup_speed: 0.3,
            timeout: 0.5,
        }
    }
}

/// Where the teleoperation is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TeleopPhase {
    /// No leader frame yet.
    #[default]
    Waiting,
    /// Moving to the leader's pose at the start-up speed.
    Approach,
    /// Following every frame.
    Follow,
    /// The leader went silent: holding.
    Silent,
}

/// The teleoperation as the status and `/diagnostics` show it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TeleopStatus {
    pub phase: TeleopPhase,
    /// Leader frames taken in.
    pub frames: u64,
    /// Slow approaches started (the first, and one after each silence or
    /// enable).
    pub approaches: u64,
    /// Times the leader went silent.
    pub silences: u64,
    /// Age of the latest frame at the last tick (s).
    pub leader_age_s: f64,
    /// Said while the leader is silent.
    pub note: Option<String>,
}

/// What the follower does this tick.
#[derive(Debug, Clone, PartialEq)]
pub enum Drive {
    /// Nothing from the leader (none yet).
    Idle,
    /// Hold where the arm is: the leader has just gone silent (said once;
    /// while it stays silent, [`Drive::Idle`]).
    Hold,
    /// Track these goals (one per axis).
    Track(Vec<f64>),
}

/// The teleoperation's state.
#[derive(Debug, Clone)]
pub struct Teleop {
    settings: TeleopSettings,
    /// The leader's latest pose per axis (none: an axis it does not lead).
    leader: Vec<Option<f64>>,
    /// Node time of the latest frame.
    last_frame: Option<f64>,
    /// An approach is under way (counted once when it starts).
    approaching: bool,
    /// The pose the approach headed for in the last tick (every axis).
    aim: Option<Vec<f64>>,
    pub status: TeleopStatus,
}

impl Teleop {
    pub fn new(settings: TeleopSettings, axes: usize) -> Teleop {
        Teleop {
            settings,
            leader: vec![None; axes],
            last_frame: None,
            approaching: false,
            aim: None,
            status: TeleopStatus::default(),
        }
    }

    pub fn settings(&self) -> TeleopSettings {
        self.settings
    }

    /// A frame at node time `now`: (axis, position) pairs, checked by the
    /// core. After a silence (or before the first frame) the approach
    /// starts over.
    pub fn frame(&mut self, positions: &[(usize, f64)], now: f64) {
        for &(axis, q) in positions {
            self.leader[axis] = Some(q);
        }
        self.last_frame = Some(now);
        self.status.frames += 1;
        if matches!(
            self.status.phase,
            TeleopPhase::Waiting | TeleopPhase::Silent
        ) {
            self.restart();
        }
    }

    /// The follower moved or was moved some other way (relaxed and
    /// enabled): approach the leader slowly again.
    pub fn restart(&mut self) {
        self.approaching = false;
        self.aim = None;
        self.status.phase = TeleopPhase::Approach;
        self.status.note = None;
    }

    /// True while a live leader drives the arm.
    pub fn driving(&self, now: f64) -> bool {
        matches!(
            self.status.phase,
            TeleopPhase::Approach | TeleopPhase::Follow
        ) && !self.silent(now)
    }

    fn silent(&self, now: f64) -> bool {
        self.last_frame
            .is_none_or(|t| now - t > self.settings.timeout)
    }

    /// The tick at `now`: the goals to track from the arm's goals `goal`
    /// (every axis; those the leader does not lead keep theirs), where the
    /// arm is, `position`, and its `limits` (the approach brakes within
    /// their accelerations), for a period `dt`.
    pub fn step(
        &mut self,
        now: f64,
        goal: &[f64],
        position: &[f64],
        limits: &[AxisLimits],
        dt: f64,
    ) -> Drive {
        self.status.leader_age_s = self.last_frame.map_or(0.0, |t| (now - t).max(0.0));
        if matches!(
            self.status.phase,
            TeleopPhase::Waiting | TeleopPhase::Silent
        ) {
            return Drive::Idle;
        }
        if self.silent(now) {
            self.status.phase = TeleopPhase::Silent;
            self.status.silences += 1;
            self.status.note = Some(format!(
                "leader silent for {:.0} ms (more than {:.0} ms): holding",
                self.status.leader_age_s * 1e3,
                self.settings.timeout * 1e3
            ));
            return Drive::Hold;
        }
        let target: Vec<f64> = goal
            .iter()
            .zip(&self.leader)
            .map(|(&g, l)| l.unwrap_or(g))
            .collect();
        if self.status.phase == TeleopPhase::Follow {
            return Drive::Track(target);
        }
        if !self.approaching {
            self.approaching = true;
            self.status.approaches += 1;
        }
        self.approach(position, target, limits, dt)
    }

    /// The approach's tick toward the leader's pose `target`: a straight
    /// line in joint space from where the arm is, one tick ahead of it,
    /// the farthest joint at the start-up speed and the others in
    /// proportion, slowing down to stop on the pose. Led from the arm
    /// rather than from the last goal, a follower still speeding up is
    /// never asked to catch up faster.
    fn approach(
        &mut self,
        position: &[f64],
        target: Vec<f64>,
        limits: &[AxisLimits],
        dt: f64,
    ) -> Drive {
        let far_from = |to: &[f64]| {
            position
                .iter()
                .zip(to)
                .map(|(q, t)| (t - q).abs())
                .fold(0.0, f64::max)
        };
        let step = self.settings.startup_speed * dt;
        // There: close enough to land on it this tick slowly enough to
        // stop the next (within a start-up step, within the acceleration).
        let there = |to: &[f64]| {
            far_from(to) <= step.min(line_acceleration(position, to, limits) * dt * dt)
        };
        // Arrived: at the leader's pose, or where the approach headed a
        // tick ago. The last step leaves the arm just short of its aim,
        // where it sits for a tick: without the second test, a leader
        // yanked in that tick would be approached at the start-up speed
        // instead of followed.
        if there(&target) || self.aim.as_deref().is_some_and(there) {
            self.approaching = false;
            self.aim = None;
            self.status.phase = TeleopPhase::Follow;
            return Drive::Track(target);
        }
        let far = far_from(&target);
        let a = line_acceleration(position, &target, limits);
        let s = self.settings.startup_speed.min(brake_speed(far, a, dt)) * dt / far;
        let goal = position
            .iter()
            .zip(&target)
            .map(|(q, t)| q + (t - q) * s)
            .collect();
        self.aim = Some(target);
        Drive::Track(goal)
    }
}

/// How fast the approach's straight line from `position` to `target` may
/// change speed (measured on its farthest joint) within every joint's
/// limit: joint i covers d_i of the line's `far`, so a_i far / d_i. The
/// approach brakes with it to stop on the pose: without the braking the
/// arm reached the pose at the start-up speed and went past it by v^2/2a
/// before the limiter stopped it (34 ticks, 3 degrees, of an STS3215 at
/// 1 rad/s and 8 rad/s^2).
fn line_acceleration(position: &[f64], target: &[f64], limits: &[AxisLimits]) -> f64 {
    let d = |(q, t): (&f64, &f64)| (t - q).abs();
    let far = position.iter().zip(target).map(d).fold(0.0, f64::max);
    position
        .iter()
        .zip(target)
        .map(d)
        .zip(limits)
        .filter(|(d, _)| *d > 0.0)
        .map(|(d, l)| l.acceleration * far / d)
        .fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DT: f64 = 0.02;

    /// Limits of three joints that can stop at once: the approach slows
    /// down only by the limiter's own margin (a step of at most 2/3 of
    /// what is left).
    fn free() -> Vec<AxisLimits> {
        limits(1e9)
    }

    fn limits(acceleration: f64) -> Vec<AxisLimits> {
        let l = AxisLimits {
            lower: f64::NEG_INFINITY,
            upper: f64::INFINITY,
            velocity: 2.0,
            acceleration,
        };
        vec![l; 3]
    }

    #[test]
    fn the_follower_approaches_at_the_start_up_speed_then_follows_each_frame() {
        let mut t = Teleop::new(TeleopSettings::default(), 3);
        assert_eq!(t.step(0.0, &[0.0; 3], &[0.0; 3], &free(), DT), Drive::Idle);
        t.frame(&[(0, 0.3), (1, -0.15)], 0.0);
        let mut goal = vec![0.0, 0.0, 0.7];
        let mut ticks = 0;
        while t.status.phase == TeleopPhase::Approach {
            let Drive::Track(g) = t.step(ticks as f64 * DT, &goal, &goal, &free(), DT) else {
                panic!("not tracking");
            };
            let far = (g[0] - goal[0]).abs();
            assert!(far <= 0.3 * DT + 1e-12, "{g:?} after {goal:?}");
            // A straight line: joint 1 moves half as fast as joint 0.
            assert!(((g[1] - goal[1]) * 2.0 + (g[0] - goal[0])).abs() < 1e-12);
            assert_eq!(g[2], 0.7, "an axis the leader does not lead keeps its goal");
            goal = g;
            ticks += 1;
            t.frame(&[(0, 0.3), (1, -0.15)], ticks as f64 * DT);
        }
        // 0.3 rad at 0.3 rad/s: one second.
        assert!((50..=51).contains(&ticks), "{ticks}");
        t.frame(&[(0, 0.5)], 1.0);
        assert_eq!(
            t.step(1.0, &goal, &goal, &free(), DT),
            Drive::Track(vec![0.5, -0.15, 0.7])
        );
        assert_eq!(t.status.approaches, 1);
    }

    #[test]
    fn the_approach_brakes_within_every_joints_acceleration_to_stop_on_the_pose() {
        // 1 rad/s, and joint 1, half of joint 0's way, may slow down at
        // only 2 rad/s^2 (joint 0 at 8): the line may brake at 4.
        let settings = TeleopSettings {
            startup_speed: 1.0,
            ..TeleopSettings::default()
        };
        let mut lim = limits(8.0);
        lim[1].acceleration = 2.0;
        let pose = [0.5, -0.25];
        let mut t = Teleop::new(settings, 2);
        let (mut q, mut v) = (vec![0.0_f64, 0.0], vec![0.0_f64, 0.0]);
        let mut top = 0.0_f64;
        for k in 0..200 {
            t.frame(&[(0, pose[0]), (1, pose[1])], k as f64 * DT);
            let Drive::Track(g) = t.step(k as f64 * DT, &q, &q, &lim, DT) else {
                panic!("not tracking");
            };
            for a in 0..2 {
                let u = (g[a] - q[a]) / DT;
                // Never past the pose, never faster than the start-up
                // speed, slowing down within the joint's limit.
                assert!(
                    (pose[a] - g[a]) * pose[a].signum() >= -1e-12,
                    "tick {k}: joint {a} at {} past {}",
                    g[a],
                    pose[a]
                );
                assert!(u.abs() <= 1.0 + 1e-9, "tick {k}: {u} rad/s");
                assert!(
                    u.abs() >= v[a].abs() - lim[a].acceleration * DT - 1e-9,
                    "tick {k}: joint {a} from {} to {u} rad/s",
                    v[a]
                );
                top = top.max(u.abs());
                v[a] = u;
            }
            q = g;
            if t.status.phase == TeleopPhase::Follow {
                // Landed slowly enough to stop there in the next tick.
                for a in 0..2 {
                    assert!(
                        v[a].abs() <= lim[a].acceleration * DT + 1e-9,
                        "landed at {v:?}"
                    );
                }
                break;
            }
        }
        assert_eq!(t.status.phase, TeleopPhase::Follow);
        assert_eq!(q, pose.to_vec());
        assert!(top > 0.99, "approached at only {top} rad/s");
    }

    #[test]
    fn a_leader_moved_as_the_follower_arrives_is_followed_not_approached_again() {
        // Start-up steps of 0.006 rad: from 0 to the leader at 0.01 the
        // first step leaves the arm 0.004 short, and in the next tick the
        // leader is yanked to 1.0.
        let mut t = Teleop::new(TeleopSettings::default(), 1);
        t.frame(&[(0, 0.01)], 0.0);
        assert_eq!(
            t.step(0.0, &[0.0], &[0.0], &free(), DT),
            Drive::Track(vec![0.006])
        );
        assert_eq!(t.status.phase, TeleopPhase::Approach);
        t.frame(&[(0, 1.0)], DT);
        // Arrived where it was heading: it follows the yank (the limiter
        // holds it to the speed limit), rather than creeping after it at
        // the start-up speed.
        assert_eq!(
            t.step(DT, &[0.006], &[0.006], &free(), DT),
            Drive::Track(vec![1.0])
        );
        assert_eq!(t.status.phase, TeleopPhase::Follow);
        assert_eq!(t.status.approaches, 1);

        // Not yet arrived (more than two steps short of its aim): a
        // leader moved meanwhile is still approached at the start-up
        // speed.
        let mut t = Teleop::new(TeleopSettings::default(), 1);
        t.frame(&[(0, 0.02)], 0.0);
        assert_eq!(
            t.step(0.0, &[0.0], &[0.0], &free(), DT),
            Drive::Track(vec![0.006])
        );
        t.frame(&[(0, 1.0)], DT);
        let Drive::Track(g) = t.step(DT, &[0.006], &[0.006], &free(), DT) else {
            panic!("not tracking");
        };
        assert!((g[0] - 0.012).abs() < 1e-12, "{g:?}");
        assert_eq!(t.status.phase, TeleopPhase::Approach);
    }

    #[test]
    fn a_leader_silent_for_less_than_the_timeout_is_still_followed_at_full_speed() {
        let mut t = Teleop::new(TeleopSettings::default(), 1);
        t.frame(&[(0, 0.0)], 0.0);
        assert_eq!(
            t.step(0.0, &[0.0], &[0.0], &free(), DT),
            Drive::Track(vec![0.0])
        );
        assert_eq!(t.status.phase, TeleopPhase::Follow);
        // 0.45 s without a frame (the timeout is 0.5 s), then a yank.
        assert_eq!(
            t.step(0.45, &[0.0], &[0.0], &free(), DT),
            Drive::Track(vec![0.0])
        );
        t.frame(&[(0, 1.0)], 0.46);
        assert_eq!(
            t.step(0.46, &[0.0], &[0.0], &free(), DT),
            Drive::Track(vec![1.0])
        );
        assert_eq!(t.status.phase, TeleopPhase::Follow);
        assert_eq!((t.status.approaches, t.status.silences), (1, 0));
    }

    #[test]
    fn a_silent_leader_makes_the_follower_hold_and_say_so_until_it_speaks_again() {
        let mut t = Teleop::new(TeleopSettings::default(), 1);
        t.frame(&[(0, 0.0)], 0.0);
        assert!(matches!(
            t.step(0.0, &[0.0], &[0.0], &free(), DT),
            Drive::Track(_)
        ));
        assert!(t.driving(0.4));
        assert!(matches!(
            t.step(0.5, &[0.0], &[0.0], &free(), DT),
            Drive::Track(_)
        ));
        assert_eq!(t.step(0.52, &[0.0], &[0.0], &free(), DT), Drive::Hold);
        assert!(!t.driving(0.52));
        let note = t.status.note.clone().unwrap();
        assert!(
            note.contains("leader silent for 520 ms") && note.contains("holding"),
            "{note}"
        );
        assert_eq!(t.step(5.0, &[0.0], &[0.0], &free(), DT), Drive::Idle);
        t.frame(&[(0, 1.0)], 5.0);
        assert_eq!(t.status.phase, TeleopPhase::Approach);
        assert_eq!(
            t.step(5.0, &[0.0], &[0.0], &free(), DT),
            Drive::Track(vec![0.3 * DT])
        );
        assert_eq!((t.status.approaches, t.status.silences), (2, 1));
    }
}
