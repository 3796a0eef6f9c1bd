//! The joint-space motion limiter: moves the commanded joints toward the
//! latest IK answer at a fixed period, so a far target never makes a jump.
//!
//! It works in discrete time on purpose: the servo sees one position per
//! tick, so the limits must hold for the differences between consecutive
//! ticks, not for a continuous profile that is then sampled. Each tick every
//! joint picks a new velocity `v'` and moves by `v' * dt`, with
//!
//! * `|v'| <= v_max` (velocity limit),
//! * `|v' - v| <= a_max * dt` (acceleration limit),
//! * `v'` small enough that the joint can still stop before its position
//!   limit decelerating at `a_max` ([`brake_speed`]), so limits are never
//!   passed, not even by a overshoot.
//!
//! Inside those hard bounds the joint heads for its goal on a trapezoidal
//! profile (accelerate, cruise, brake in time). With synchronisation on, the
//! joints that would arrive early get their velocity and acceleration scaled
//! down so that all joints arrive together (a straight line in joint space
//! for a move from rest), which is how an arm looks deliberate rather than
//! jerky. The pace is re-estimated every tick from rest-to-rest times, so
//! joints already moving arrive together only approximately (within about a
//! tenth of the move). Joints after the arm's (a gripper) can be left out of
//! the synchronisation ([`MotionLimiter::synchronise_first`]): a gripper
//! closing must neither wait for the arm nor slow it down.

/// Limits of one joint for the motion limiter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AxisLimits {
    /// Position range (rad or m); infinite for continuous joints.
    pub lower: f64,
    pub upper: f64,
    /// Maximum speed (rad/s or m/s), finite and positive.
    pub velocity: f64,
    /// Maximum acceleration (rad/s^2 or m/s^2), finite and positive.
    pub acceleration: f64,
}

/// Per-joint trapezoidal motion toward a goal, stepped once per tick.
#[derive(Debug, Clone)]
pub struct MotionLimiter {
    dt: f64,
    limits: Vec<AxisLimits>,
    q: Vec<f64>,
    v: Vec<f64>,
    goal: Vec<f64>,
    /// The leading joints that arrive together (0: none).
    synchronised: usize,
}

impl MotionLimiter {
    /// A limiter at rest at `q0` (clamped into the limits), goal = `q0`.
    ///
    /// `dt` is the control period in seconds; `limits` one entry per joint
    /// with positive finite velocity and acceleration (the node's config
    /// validation guarantees that).
    pub fn new(dt: f64, limits: Vec<AxisLimits>, q0: &[f64], synchronise: bool) -> MotionLimiter {
        assert_eq!(limits.len(), q0.len(), "one limit per joint");
        assert!(dt > 0.0 && dt.is_finite(), "period must be positive");
        let mut m = MotionLimiter {
            dt,
            q: vec![0.0; q0.len()],
            v: vec![0.0; q0.len()],
            goal: vec![0.0; q0.len()],
            limits,
            synchronised: if synchronise { q0.len() } else { 0 },
        };
        m.reset(q0);
        m
    }

    /// Synchronises only the first `n` joints (those of the arm), when
    /// synchronisation is on; the others move on their own.
    pub fn synchronise_first(mut self, n: usize) -> MotionLimiter {
        self.synchronised = self.synchronised.min(n);
        self
    }

    /// New speed and acceleration limits (live tuning): the joints keep
    /// their positions and velocities, so nothing jumps; a joint faster
    /// than its new speed limit slows down at its acceleration limit.
    /// Position limits are the robot's and stay as they are.
    pub fn set_limits(&mut self, limits: &[AxisLimits]) {
        assert_eq!(limits.len(), self.limits.len(), "one limit per joint");
        for (l, new) in self.limits.iter_mut().zip(limits) {
            l.velocity = new.velocity;
            l.acceleration = new.acceleration;
        }
    }

    /// Stops joint `i` where it is now said to be, `q` (clamped), e.g. a
    /// blocked gripper at its measured position: at rest, its goal there.
    pub fn hold(&mut self, i: usize, q: f64) {
        let l = self.limits[i];
        if q.is_finite() {
            self.q[i] = q.clamp(l.lower, l.upper);
        }
        self.v[i] = 0.0;
        self.goal[i] = self.q[i];
    }

    /// Puts the joints at rest at `q` (clamped; NaN becomes the nearest
    /// finite point of the range, 0 when that is unbounded), e.g. from servo
    /// feedback at start-up.
    pub fn reset(&mut self, q: &[f64]) {
        for (i, l) in self.limits.iter().enumerate() {
            let x = if q[i].is_finite() { q[i] } else { 0.0 };
            self.q[i] = x.clamp(l.lower, l.upper);
            self.v[i] = 0.0;
            self.goal[i] = self.q[i];
        }
    }

    /// Sets where the joints should go; values are clamped into the limits
    /// (non-finite values keep the joint's current goal).
    pub fn set_goal(&mut self, goal: &[f64]) {
        for (i, l) in self.limits.iter().enumerate() {
            if goal[i].is_finite() {
                self.goal[i] = goal[i].clamp(l.lower, l.upper);
            }
        }
    }

    /// Advances one period.
    pub fn step(&mut self) {
        let dt = self.dt;
        // Time-synchronisation: the slowest joint sets the pace.
        let mut lead = 0.0_f64;
        for i in 0..self.synchronised {
            lead = lead.max(self.move_time(i));
        }
        for i in 0..self.q.len() {
            let l = self.limits[i];
            let (a, vmax) = (l.acceleration, l.velocity);
            let (q, v) = (self.q[i], self.v[i]);
            let d = self.goal[i] - q;
            let dist = d.abs();
            let sgn = if d < 0.0 { -1.0 } else { 1.0 };
            let u = sgn * v; // speed toward the goal (negative: moving away)

            // Scaled limits so this joint arrives with the slowest one.
            let s = if lead > 0.0 && i < self.synchronised {
                (self.move_time(i) / lead).clamp(0.0, 1.0)
            } else {
                1.0
            };
            let (vs, as_) = (vmax * s, a * s * s);

            let land = dist / dt;
            let mut new_v = if land <= as_.max(f64::MIN_POSITIVE) * dt
                && (u - land).abs() <= a * dt
                && land <= vmax
            {
                // Close enough to land exactly this tick and stop the next.
                sgn * land
            } else {
                let brake = brake_speed(dist, as_, dt);
                let want = vs.min(brake);
                let u_new = if want >= u {
                    (u + as_ * dt).min(want)
                } else {
                    // Braking that the scaled profile cannot do in time
                    // (the pace changed, or the goal jumped) uses the full
                    // deceleration.
                    let dec = if u > brake { a } else { as_ };
                    (u - dec * dt).max(want)
                };
                sgn * u_new
            };
            // Hard bounds: position limits (stop in time), speed, and
            // acceleration last so it always holds.
            new_v = new_v
                .min(limit_speed(l.upper - q, a, dt))
                .max(-limit_speed(q - l.lower, a, dt))
                .clamp(-vmax, vmax)
                .min(v + a * dt)
                .max(v - a * dt);
            let mut new_q = q + new_v * dt;
            if (new_v - sgn * land).abs() <= f64::EPSILON * land.max(1.0) {
                new_q = self.goal[i]; // land exactly, no rounding crumbs
            }
            self.q[i] = new_q.clamp(l.lower, l.upper);
            self.v[i] = new_v;
        }
    }

    /// Advances one period toward a goal that moves every tick (jogging,
    /// dragging a marker), instead of [`MotionLimiter::set_goal`] and
    /// [`MotionLimiter::step`].
    ///
    /// `step` plans to stop at the goal every tick, so a goal that keeps
    /// moving is followed at a growing distance, and time-synchronisation
    /// bends the path. Here each joint lands exactly on its goal whenever
    /// that keeps its velocity and acceleration limits (a goal moving
    /// within them is followed with no lag); otherwise it moves at the
    /// goal's own velocity plus what still lets it stop relative to the
    /// goal, within the same hard bounds as `step` (speed, acceleration,
    /// stopping before the position limits). No synchronisation: each
    /// joint keeps to its own goal path, which is already coordinated.
    pub fn track(&mut self, goal: &[f64]) {
        let dt = self.dt;
        for (i, l) in self.limits.iter().enumerate() {
            let (q, v) = (self.q[i], self.v[i]);
            let g = if goal[i].is_finite() {
                goal[i].clamp(l.lower, l.upper)
            } else {
                self.goal[i]
            };
            let w = (g - self.goal[i]) / dt;
            self.goal[i] = g;
            let (a, vmax) = (l.acceleration, l.velocity);
            let d = g - q;
            let land = d / dt;
            let hard = |x: f64| {
                x.min(brake_speed(l.upper - q, a, dt))
                    .max(-brake_speed(q - l.lower, a, dt))
                    .clamp(-vmax, vmax)
                    .min(v + a * dt)
                    .max(v - a * dt)
            };
            // A goal stepped to the edge of what the joint can do lands
            // exactly, rounding aside: missing it by an ulp would make the
            // joint plan a stop instead.
            // Otherwise: the goal's velocity plus what closes, and still
            // lets it stop relative to the goal, the gap left after this
            // tick if it moved at the goal's velocity. (Closing the gap
            // before the tick instead, `d`, settles one tick ahead of a
            // goal moving faster than `a * dt`: on it before it moves,
            // then past it by one step, for good.)
            let new_v = if (hard(land) - land).abs() <= LAND_TOLERANCE * (1.0 + land.abs()) {
                land
            } else {
                let e = d - w * dt;
                let sgn = if e < 0.0 { -1.0 } else { 1.0 };
                hard(w + sgn * brake_speed(e.abs(), a, dt))
            };
            self.q[i] = if new_v == land {
                g
            } else {
                (q + new_v * dt).clamp(l.lower, l.upper)
            };
            self.v[i] = new_v;
        }
    }

    /// Rest-to-rest time of joint `i` to its goal at full limits: the pace
    /// used for time-synchronisation.
    fn move_time(&self, i: usize) -> f64 {
        let l = &self.limits[i];
        let d = (self.goal[i] - self.q[i]).abs();
        let (v, a) = (l.velocity, l.acceleration);
        if d >= v * v / a {
            d / v + v / a
        } else {
            2.0 * (d / a).sqrt()
        }
    }

    pub fn position(&self) -> &[f64] {
        &self.q
    }

    pub fn velocity(&self) -> &[f64] {
        &self.v
    }

    pub fn goal(&self) -> &[f64] {
        &self.goal
    }

    pub fn period(&self) -> f64 {
        self.dt
    }

    pub fn limits(&self) -> &[AxisLimits] {
        &self.limits
    }

    /// True when every joint is at its goal and at rest.
    pub fn is_settled(&self) -> bool {
        self.q.iter().zip(&self.goal).all(|(q, g)| q == g) && self.v.iter().all(|&v| v == 0.0)
    }
}

/// How far (relative) a landing speed may be outside the joint's bounds
/// and still count as within them: floating-point rounding only.
const LAND_TOLERANCE: f64 = 1e-12;

/// The largest speed `u >= 0` to take this tick that still lets the joint
/// stop within distance `d` decelerating at `a`, in discrete steps of `dt`.
///
/// The condition is `u^2/(2a) + 3/2 u dt <= d`: after moving `u dt` the
/// remaining distance covers the braking staircase `u - a dt, u - 2a dt, ...`
/// with room to spare, and if it holds now, braking at `a` keeps it holding
/// next tick, so a joint that respects it can always stop in time.
pub fn brake_speed(d: f64, a: f64, dt: f64) -> f64 {
    if d.is_nan() || d <= 0.0 || a <= 0.0 {
        return 0.0;
    }
    if d.is_infinite() {
        return f64::INFINITY;
    }
    let b = 1.5 * dt;
    // Root of u^2/(2a) + b u - d = 0 in the cancellation-free form.
    2.0 * d / (b + (b * b + 2.0 * d / a).sqrt())
}

/// The fastest speed toward a position limit `d` away: one that can stop
/// in time ([`brake_speed`]), or one that lands exactly on it this tick and
/// stops the next within the acceleration `a` (so a goal at a limit is
/// reached, not crept up on).
fn limit_speed(d: f64, a: f64, dt: f64) -> f64 {
    let land = d / dt;
    if land <= a * dt {
        brake_speed(d, a, dt).max(land)
    } else {
        brake_speed(d, a, dt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(n: usize) -> Vec<AxisLimits> {
        vec![
            AxisLimits {
                lower: -1.5,
                upper: 1.5,
                velocity: 2.0,
                acceleration: 8.0,
            };
            n
        ]
    }

    /// Steps until settled, checking every limit on every tick.
    fn run(m: &mut MotionLimiter, ticks: usize) -> usize {
        let dt = m.period();
        let mut prev_v = m.velocity().to_vec();
        for k in 0..ticks {
            let q0 = m.position().to_vec();
            m.step();
            for (i, l) in m.limits().to_vec().iter().enumerate() {
                let v = (m.position()[i] - q0[i]) / dt;
                assert!(
                    v.abs() <= l.velocity * (1.0 + 1e-9),
                    "tick {k} joint {i} v {v}"
                );
                let acc = (v - prev_v[i]) / dt;
                assert!(
                    acc.abs() <= l.acceleration * (1.0 + 1e-6),
                    "tick {k} joint {i} a {acc}"
                );
                assert!(l.lower <= m.position()[i] && m.position()[i] <= l.upper);
                prev_v[i] = v;
            }
            if m.is_settled() {
                return k;
            }
        }
        ticks
    }

    #[test]
    fn reaches_the_goal_exactly_within_limits() {
        let mut m = MotionLimiter::new(0.02, arm(3), &[0.0, 0.0, 0.0], true);
        m.set_goal(&[1.4, -0.3, 0.001]);
        let k = run(&mut m, 1000);
        assert!(k < 1000, "never settled");
        assert_eq!(m.position(), &[1.4, -0.3, 0.001]);
        // 1.4 rad at 2 rad/s and 8 rad/s^2 takes 0.95 s ideally.
        assert!((k as f64 * 0.02) < 1.2, "took {k} ticks");
    }

    #[test]
    fn goal_reversals_never_break_limits() {
        let mut m = MotionLimiter::new(0.02, arm(2), &[0.0, 0.0], false);
        for (k, g) in [1.5, -1.5, 1.5, 0.2, -1.5].iter().enumerate() {
            m.set_goal(&[*g, -*g]);
            run(&mut m, 7 + 5 * k);
        }
        run(&mut m, 1000);
        assert!(m.is_settled());
    }

    #[test]
    fn synchronised_joints_arrive_together() {
        let mut m = MotionLimiter::new(0.02, arm(2), &[0.0, 0.0], true);
        m.set_goal(&[1.0, 0.25]);
        let mut first_done = None;
        for k in 0..200 {
            m.step();
            if first_done.is_none() && m.position()[1] == 0.25 {
                first_done = Some(k);
            }
            if m.is_settled() {
                let early = k - first_done.unwrap();
                assert!(early <= 3, "small joint arrived {early} ticks early");
                return;
            }
        }
        panic!("never settled");
    }

    #[test]
    fn a_goal_moving_within_the_limits_is_tracked_without_lag() {
        let mut m = MotionLimiter::new(0.02, arm(2), &[0.0, 0.0], true);
        // Speeds up at 4 rad/s^2 to 1 rad/s, then back to rest.
        let (mut g, mut w) = ([0.0, 0.0], 0.0_f64);
        for k in 0..150 {
            w = if k < 50 {
                (w + 0.08).min(1.0)
            } else {
                (w - 0.08).max(0.0)
            };
            g[0] += w * 0.02;
            g[1] -= 0.5 * w * 0.02;
            m.track(&g);
            assert_eq!(m.position(), &g, "tick {k}");
        }
    }

    #[test]
    fn a_goal_turned_faster_than_the_limits_allow_is_landed_on_again() {
        // A leader moved back and forth by hand at 0.15 rad/s, turning in
        // one tick (15 rad/s^2, beyond the 8 allowed): the follower
        // overshoots each turn, then must land on the goal again, not
        // run one tick ahead of it for the rest of the stroke.
        let dt = 0.01;
        let mut m = MotionLimiter::new(dt, arm(1), &[0.0], false);
        let step = 0.0015;
        let mut g = 0.0;
        for k in 0..600 {
            g += if (k / 200) % 2 == 0 { step } else { -step };
            m.track(&[g]);
            if k % 200 > 20 {
                assert!((m.position()[0] - g).abs() < 1e-12, "tick {k}");
            }
        }
    }

    #[test]
    fn a_jumping_goal_is_tracked_within_every_limit() {
        let mut m = MotionLimiter::new(0.02, arm(2), &[0.0, 0.0], false);
        let dt = m.period();
        let mut prev_v = [0.0, 0.0];
        for k in 0..400 {
            let g = if (k / 60) % 2 == 0 {
                [1.4, -1.4]
            } else {
                [-0.3, 1.6]
            };
            let q0 = m.position().to_vec();
            m.track(&g);
            for i in 0..2 {
                let v = (m.position()[i] - q0[i]) / dt;
                assert!(v.abs() <= 2.0 + 1e-9, "tick {k}: v {v}");
                assert!((v - prev_v[i]).abs() <= 8.0 * dt + 1e-9, "tick {k}: a");
                assert!(m.position()[i].abs() <= 1.5);
                prev_v[i] = v;
            }
        }
        // Then it settles on the last goal.
        for _ in 0..100 {
            m.track(&[0.2, 0.2]);
        }
        assert_eq!(m.position(), &[0.2, 0.2]);
        assert!(m.is_settled());
    }

    #[test]
    fn joints_left_out_of_the_synchronisation_keep_their_own_pace() {
        let mut m = MotionLimiter::new(0.02, arm(3), &[0.0; 3], true).synchronise_first(2);
        m.set_goal(&[1.4, 0.2, 0.2]);
        let ticks = |m: &mut MotionLimiter, i: usize, at: f64| {
            (0..200).find(|_| {
                m.step();
                m.position()[i] == at
            })
        };
        // The third joint is not slowed to the first's pace: it arrives in
        // the time 0.2 rad takes at full limits (0.32 s).
        let third = ticks(&mut m.clone(), 2, 0.2).unwrap();
        let second = ticks(&mut m, 1, 0.2).unwrap();
        assert!(third <= 17 && second > 40, "{third} {second}");
    }

    #[test]
    fn new_limits_keep_the_motion_and_hold_stops_one_joint() {
        let mut m = MotionLimiter::new(0.02, arm(2), &[0.0; 2], false);
        m.set_goal(&[1.5, 1.5]);
        for _ in 0..30 {
            m.step();
        }
        let (q, v) = (m.position().to_vec(), m.velocity().to_vec());
        let mut slow = arm(2);
        slow[0].velocity = 0.5;
        m.set_limits(&slow);
        assert_eq!((m.position(), m.velocity()), (&q[..], &v[..]));
        // Slowing to the new limit keeps the acceleration limit.
        for _ in 0..1000 {
            let v0 = m.velocity()[0];
            m.step();
            assert!((m.velocity()[0] - v0).abs() <= 8.0 * 0.02 * (1.0 + 1e-9));
        }
        assert!(m.velocity()[0].abs() <= 0.5);
        assert_eq!(m.position(), [1.5, 1.5]);
        m.set_goal(&[-1.0, -1.0]);
        m.step();
        m.hold(1, 9.0);
        assert_eq!(
            (m.position()[1], m.velocity()[1], m.goal()[1]),
            (1.5, 0.0, 1.5)
        );
    }

    #[test]
    fn a_goal_at_a_limit_is_reached_as_fast_as_one_inside() {
        let ticks = |goal: f64| {
            let mut m = MotionLimiter::new(0.02, arm(1), &[0.0], false);
            m.set_goal(&[goal]);
            (1..200).find(|_| {
                m.step();
                m.position()[0] == goal
            })
        };
        let (inside, at_limit) = (ticks(1.5 - 1e-9).unwrap(), ticks(1.5).unwrap());
        assert!(at_limit <= inside + 1, "{at_limit} ticks vs {inside}");
    }

    #[test]
    fn brake_speed_stops_in_time() {
        let (a, dt) = (8.0, 0.02);
        for d in [1e-6, 1e-3, 0.05, 0.7] {
            let mut u = brake_speed(d, a, dt);
            let mut left = d - u * dt;
            while u > 0.0 {
                u = (u - a * dt).max(0.0);
                left -= u * dt;
            }
            assert!(left >= -1e-15, "overshot by {left} from {d}");
        }
    }
}
