//! Following a moving tip target locally, one tick at a time: what jogging
//! and dragging the target marker move the arm with.
//!
//! The solvers answer "which joints reach this pose", from anywhere, with
//! random restarts when a descent stalls; along a path that can switch the
//! elbow or the wrist to another branch between two targets a millimetre
//! apart, and a 5-joint arm asked for a full pose trades position for
//! orientation. A hand on a joystick or a mouse wants neither: the tip must
//! go where it is pushed, from where it is, without jumps. So the
//! [`Follower`] only ever takes small steps from the current joints:
//!
//! * **Position first.** Each step is a damped least-squares step on the
//!   tip position; the orientation is corrected only with the motion left
//!   in the position's null space (task priority), so on an arm with fewer
//!   than 6 joints the position is followed exactly and the orientation as
//!   closely as the remaining joints allow. What they cannot turn is
//!   ignored, not traded against position.
//! * **Bounded.** The joints move at most one tick of their speed limit
//!   per tick (scaled together, so the tip keeps its direction), never past
//!   a limit: a joint that reaches one drops out and the others carry on
//!   where they can; so does a joint that already used this tick's speed or
//!   acceleration budget (braking as hard as it may), so the others still
//!   correct the tip.
//! * **Slow near singularities.** When a step lowers the position
//!   Jacobian's smallest singular value below a threshold (the arm nearly
//!   stretched, or the tip nearly over the base axis), the step shrinks in
//!   proportion and stops before the singularity, as MoveIt Servo does;
//!   steps away from it are never slowed, so the arm can always back out.
//!   The damping rises there too, so no step asks for a huge joint speed.
//!
//! No randomness and no restarts: the answer follows from the current
//! joints, so consecutive answers along a smooth path are close.

use crate::ik::reach;
use crate::ik::{Bounds, JointMode, Target};
use crate::ik::{orientation_angle, orientation_error};
use crate::model::{Chain, Frames};
use nalgebra::{Matrix3, SymmetricEigen, Vector3};
use serde::Serialize;

/// Descent iterations per tick at most: a tick's target moves a
/// millimetre or so, which two Gauss-Newton steps already reach to a
/// micrometre; the rest is for a target that jumped.
const ITERATIONS: usize = 8;
/// Below this error (m, rad) the tip is where it was asked to be.
const CONVERGED: f64 = 1e-9;
/// Singular values of the position Jacobian, as fractions of the chain's
/// reach (m per rad): below `SLOW` a step toward the singularity is
/// slowed, at `STOP` it is stopped.
const SLOW: f64 = 0.03;
const STOP: f64 = 0.005;
/// Damping of the orientation step (rad per rad): keeps a nearly
/// unreachable turn from asking for large joint steps.
const ORIENTATION_DAMPING: f64 = 0.02;

/// A joint whose step this tick is within this (rad or m) of its budget
/// has spent it.
const SPENT: f64 = 1e-12;
/// A joint this close (rad or m) to one of its limits is at it.
const AT_LIMIT: f64 = 1e-9;
/// Tries of a step, halving it each time, before the tick gives up on
/// getting closer.
const HALVINGS: usize = 4;
/// Weight of the orientation error against the position error (m per
/// rad) when judging a step: small, so position comes first, yet a step
/// that turns the tip further from the target without bringing it nearer
/// is refused.
const TURN_WEIGHT: f64 = 0.01;

/// How far a tip is from a target, position first: `e_p` (m) plus a
/// little of `e_o` (rad).
fn merit(e_p: f64, e_o: f64) -> f64 {
    e_p + TURN_WEIGHT * e_o
}

/// What held the tip back this tick, if anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Hold {
    /// A joint is at one of its limits and the others cannot make up for it.
    JointLimit,
    /// The arm is close to a singularity: it slowed or stopped there.
    Singularity,
    /// The collision check stopped the arm at the margin.
    Collision,
}

/// One tick of following.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FollowStep {
    /// Distance from the tip to the target after the step (m).
    pub position_error: f64,
    /// Angle from the tip's orientation to the target's (rad); 0 for a
    /// position-only target.
    pub orientation_error: f64,
    /// What kept the tip from the target, when something did.
    pub hold: Option<Hold>,
    /// The joints' speed limits capped the step: the target is further
    /// than one tick away.
    pub speed_limited: bool,
    /// The smallest singular value of the position Jacobian at the start
    /// of the tick and at its end (m/rad): how close the arm is to a
    /// singularity, and whether it is getting closer. Infinite when the
    /// tip was already there.
    pub sigma: (f64, f64),
}

/// Per-chain scratch memory and the settings of the follower; no
/// allocation per tick.
#[derive(Debug, Clone)]
pub struct Follower {
    frames: Frames,
    template: Bounds,
    bounds: Bounds,
    start: Vec<f64>,
    dq: Vec<f64>,
    /// The position part of `dq`.
    dq_p: Vec<f64>,
    moved: Vec<f64>,
    trial: Vec<f64>,
    /// How far each joint moved this tick for the orientation part.
    turned: Vec<f64>,
    free: Vec<bool>,
    /// Joints taken out of this tick's step at a position limit (not only
    /// out of speed budget).
    at_limit: Vec<bool>,
    /// Orientation-step columns (rotation left after the position task).
    spare: Vec<Vector3<f64>>,
    slow: f64,
    stop: f64,
}

/// The primary (position) step's pieces, for the secondary one.
struct PositionStep {
    /// Smallest singular value of the free joints' position Jacobian.
    sigma_min: f64,
    /// The exact pseudo-inverse kernel `(J Jᵀ)⁺` (3x3) on the significant
    /// directions: the position task's null-space projector is built from it.
    pinv: Matrix3<f64>,
}

impl Follower {
    /// A follower for `chain`; `modes` are the solver's per-joint modes
    /// (locked joints stay where they are, clamped ones in their range).
    pub fn new(chain: &Chain, modes: &[JointMode]) -> Follower {
        let n = chain.dof();
        let reach = reach(chain).max(1e-3);
        let template = Bounds::new(chain, modes);
        Follower {
            frames: Frames::new(chain),
            bounds: template.clone(),
            template,
            start: vec![0.0; n],
            dq: vec![0.0; n],
            dq_p: vec![0.0; n],
            moved: vec![0.0; n],
            trial: vec![0.0; n],
            turned: vec![0.0; n],
            free: vec![true; n],
            at_limit: vec![false; n],
            spare: vec![Vector3::zeros(); n],
            slow: SLOW * reach,
            stop: STOP * reach,
        }
    }

    /// The smallest singular value of the position Jacobian below which
    /// a step toward the singularity is stopped (m/rad), and the one below
    /// which it is slowed.
    pub fn singular_band(&self) -> (f64, f64) {
        (self.stop, self.slow)
    }

    /// New per-joint modes (the solver's `lock` and `clamp` changed).
    pub fn set_modes(&mut self, chain: &Chain, modes: &[JointMode]) {
        self.template = Bounds::new(chain, modes);
    }

    /// Moves `q` toward `target` for one tick: each joint `i` by a step
    /// within `steps[i]` (`(least, most)`, rad or m: one tick of what its
    /// speed and acceleration allow from its current speed; a range that
    /// leaves out zero makes a moving joint coast on), within its limits
    /// (`lower`, `upper`, intersected with the modes' bounds). `q` must be
    /// within those limits. The orientation part of each joint's step is
    /// kept within `turn_caps[i]`.
    pub fn step(
        &mut self,
        chain: &Chain,
        q: &mut [f64],
        target: &Target,
        limits: &[(f64, f64)],
        steps: &[(f64, f64)],
        turn_caps: &[f64],
    ) -> FollowStep {
        self.bounds.clone_from(&self.template);
        self.start.copy_from_slice(q);
        self.bounds.lock_at(chain, &self.start, q);
        for (i, &(lo, hi)) in limits.iter().enumerate() {
            self.bounds.lower[i] = self.bounds.lower[i].max(lo);
            self.bounds.upper[i] = self.bounds.upper[i].min(hi).max(self.bounds.lower[i]);
            q[i] = self.bounds.clamp_one(i, q[i]);
        }
        // What no joint can avoid this tick: slowing down no faster than
        // its acceleration allows.
        for (i, qi) in q.iter_mut().enumerate() {
            let coast = 0.0_f64.clamp(steps[i].0, steps[i].1.max(steps[i].0));
            let next = self.bounds.clamp_one(i, *qi + coast);
            self.moved[i] = next - *qi;
            *qi = next;
        }
        self.turned.iter_mut().for_each(|t| *t = 0.0);
        let mut sigma_start = None;
        let mut speed_limited = false;
        let mut blocked = false;
        for _ in 0..ITERATIONS {
            let tip = chain.jacobian(q, &mut self.frames);
            let e_p = target.position - tip.translation.vector;
            let e_o = orientation_error(&tip, &target.orientation);
            if e_p.norm() < CONVERGED && e_o.is_none_or(|e| e.norm() < CONVERGED) {
                break;
            }
            let sigma = self.direction(q, &e_p, e_o.as_ref(), steps);
            sigma_start.get_or_insert(sigma);
            blocked = self.at_limit.iter().any(|&l| l);
            // Position first under the speed limits too: the position step
            // takes what the budget allows, the orientation what is left.
            let s_p = self.fraction(q, None, steps);
            let s_o = self
                .fraction(q, Some(s_p), steps)
                .min(self.turn_fraction(turn_caps));
            let before = merit(e_p.norm(), e_o.map_or(0.0, |e| e.norm()));
            if s_p + s_o <= 0.0 || !self.try_step(chain, q, target, (s_p, s_o), before) {
                break;
            }
            if self.budget_left(steps) <= 0.0 {
                speed_limited = true;
                break;
            }
        }
        let mut hold = blocked.then_some(Hold::JointLimit);
        let mut sigma = (f64::INFINITY, f64::INFINITY);
        if let Some(before) = sigma_start {
            let (slowed, after) = self.slow_near_singularity(chain, q, before);
            if slowed {
                hold = Some(Hold::Singularity);
            }
            sigma = (before, after);
        }
        let tip = chain.fk(q);
        let position_error = (target.position - tip.translation.vector).norm();
        let orientation_error = orientation_angle(&tip, &target.orientation);
        if position_error < 1e-6 && orientation_error < 1e-6 {
            hold = None;
        }
        FollowStep {
            position_error,
            orientation_error,
            hold,
            speed_limited,
            sigma,
        }
    }

    /// The joint step for the errors at `q` (Jacobian in `self.frames`),
    /// written to `self.dq`, with joints pushing into a limit taken out,
    /// and joints that already used this tick's budget (`steps`) in the
    /// step's direction: a joint braking as hard as it can must not
    /// stall the others, which can still correct the tip. Returns the
    /// smallest singular value of the position Jacobian.
    fn direction(
        &mut self,
        q: &[f64],
        e_p: &Vector3<f64>,
        e_o: Option<&Vector3<f64>>,
        steps: &[(f64, f64)],
    ) -> f64 {
        for (i, f) in self.free.iter_mut().enumerate() {
            *f = self.bounds.lower[i] < self.bounds.upper[i];
            self.at_limit[i] = false;
        }
        let mut sigma = None;
        // Each pass frees the step of one more joint that would push
        // through its limit; at most one pass per joint.
        for _ in 0..=q.len() {
            let primary = self.position_step(e_p);
            // The arm's own nearness to a singularity: with every joint
            // that can move, before any is taken out for this tick.
            sigma.get_or_insert(primary.sigma_min);
            self.dq_p.copy_from_slice(&self.dq);
            if let Some(e_o) = e_o {
                self.orientation_step(e_o, &primary);
            }
            let mut changed = false;
            for (i, f) in self.free.iter_mut().enumerate() {
                if !*f {
                    continue;
                }
                let (lo, hi) = steps[i];
                let (m, d) = (self.moved[i], self.dq[i]);
                let spent = (d > 0.0 && m >= hi - SPENT) || (d < 0.0 && m <= lo + SPENT);
                // A joint braking onto a limit comes within a hair of it
                // and has then spent its budget: that is the limit.
                let (lower, upper) = (self.bounds.lower[i], self.bounds.upper[i]);
                let limited =
                    (d > 0.0 && q[i] >= upper - AT_LIMIT) || (d < 0.0 && q[i] <= lower + AT_LIMIT);
                if limited || spent {
                    *f = false;
                    self.at_limit[i] = limited;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        sigma.unwrap_or(0.0)
    }

    /// Damped least squares on the position over the free joints, into
    /// `self.dq`; the damping grows as the smallest singular value falls
    /// below the slow-down threshold.
    fn position_step(&mut self, e_p: &Vector3<f64>) -> PositionStep {
        let cols = &self.frames.columns;
        let mut jjt = Matrix3::zeros();
        for (c, _) in cols.iter().zip(&self.free).filter(|(_, f)| **f) {
            jjt += c.linear * c.linear.transpose();
        }
        let eig = SymmetricEigen::new(jjt);
        let s_min = eig.eigenvalues.min().max(0.0);
        let sigma_min = s_min.sqrt();
        let ratio = (sigma_min / self.slow).min(1.0);
        let lambda2 = (1.0 - ratio * ratio) * (0.5 * self.slow).powi(2);
        let cut = (1e-3 * self.stop).powi(2);
        let mut damped = Matrix3::zeros();
        let mut pinv = Matrix3::zeros();
        for k in 0..3 {
            let s = eig.eigenvalues[k].max(0.0);
            let u = eig.eigenvectors.column(k);
            let uut = u * u.transpose();
            damped += uut / (s + lambda2 + 1e-30);
            if s > cut {
                pinv += uut / s;
            }
        }
        let y = damped * e_p;
        for (i, c) in cols.iter().enumerate() {
            self.dq[i] = if self.free[i] { c.linear.dot(&y) } else { 0.0 };
        }
        PositionStep { sigma_min, pinv }
    }

    /// Adds to `self.dq` the orientation correction that leaves the tip
    /// position alone (to first order): damped least squares on the
    /// orientation Jacobian projected into the position task's null space.
    fn orientation_step(&mut self, e_o: &Vector3<f64>, primary: &PositionStep) {
        let cols = &self.frames.columns;
        // J_o J_p⁺ = (Σ ω_j v_jᵀ) (J_p J_pᵀ)⁺, then each column of
        // J_o N = ω_j - J_o J_p⁺ v_j.
        let mut cross = Matrix3::zeros();
        let mut turned = Vector3::zeros();
        for (i, c) in cols.iter().enumerate() {
            if self.free[i] {
                cross += c.angular * c.linear.transpose();
                turned += c.angular * self.dq[i];
            }
        }
        let map = cross * primary.pinv;
        let mut aat = Matrix3::identity() * ORIENTATION_DAMPING.powi(2);
        for (i, c) in cols.iter().enumerate() {
            self.spare[i] = if self.free[i] {
                c.angular - map * c.linear
            } else {
                Vector3::zeros()
            };
            aat += self.spare[i] * self.spare[i].transpose();
        }
        let Some(inv) = aat.try_inverse() else {
            return;
        };
        let z = inv * (e_o - turned);
        for (d, a) in self.dq.iter_mut().zip(&self.spare) {
            *d += a.dot(&z);
        }
    }

    /// The fraction of a step to take: with `after_position` `None`, of
    /// the position part `self.dq_p`; with `Some(s_p)`, of the orientation
    /// part on top of `s_p` of the position part. The most that keeps every
    /// joint within its tick budget and short of its bounds (a joint then
    /// meets its limit exactly).
    fn fraction(&self, q: &[f64], after_position: Option<f64>, steps: &[(f64, f64)]) -> f64 {
        let mut s = 1.0_f64;
        for i in 0..q.len() {
            let (base, d) = match after_position {
                None => (0.0, self.dq_p[i]),
                Some(s_p) => (s_p * self.dq_p[i], self.dq[i] - self.dq_p[i]),
            };
            if !d.is_finite() || !base.is_finite() {
                return 0.0;
            }
            if d == 0.0 {
                continue;
            }
            let m = self.moved[i];
            let hi = (steps[i].1 - m).min(self.bounds.upper[i] - q[i]);
            let lo = (steps[i].0 - m).max(self.bounds.lower[i] - q[i]);
            let room = if d > 0.0 { hi - base } else { lo - base };
            s = s.min(room / d);
        }
        s.max(0.0)
    }

    /// Takes `s_p` of the position part of the step plus as much of the
    /// orientation part (`s_o`, halved up to [`HALVINGS`] times) as
    /// truly turns the tip: at least half of what the linear model
    /// promised (Armijo's rule), or the position part alone when no
    /// fraction does. False (and `q` unchanged) when the step does not
    /// bring the tip closer at all ([`merit`] not below `before`).
    ///
    /// Near the edge of what a 5-joint arm can turn, the orientation's
    /// Gauss-Newton step overshoots (the elbow straightens and the
    /// linearisation fails); without the check the goal would swing
    /// across the straight elbow every tick.
    fn try_step(
        &mut self,
        chain: &Chain,
        q: &mut [f64],
        target: &Target,
        (s_p, mut s_o): (f64, f64),
        before: f64,
    ) -> bool {
        let (m0, e0) = self.trial_merit(chain, q, target, s_p, 0.0);
        let mut best = (m0 < before).then_some(0.0);
        if let Some(e0) = e0 {
            // The turn the orientation part makes, to first order.
            let mut turn = Vector3::zeros();
            for (i, c) in self.frames.columns.iter().enumerate() {
                turn += c.angular * (self.dq[i] - self.dq_p[i]);
            }
            for _ in 0..HALVINGS {
                let promised = e0.norm() - (e0 - turn * s_o).norm();
                if promised <= 0.0 {
                    break;
                }
                let (m, _) = self.trial_merit(chain, q, target, s_p, s_o);
                if m <= m0.min(before) - 0.5 * TURN_WEIGHT * promised {
                    best = Some(s_o);
                    break;
                }
                s_o *= 0.5;
            }
        }
        let Some(s_o) = best else {
            return false;
        };
        self.trial_merit(chain, q, target, s_p, s_o);
        for (i, qi) in q.iter_mut().enumerate() {
            self.turned[i] += (s_o * (self.dq[i] - self.dq_p[i])).abs();
            self.moved[i] += self.trial[i] - *qi;
            *qi = self.trial[i];
        }
        true
    }

    /// Puts `q` plus `s_p` of the position part and `s_o` of the
    /// orientation part of the step into `self.trial`; returns its
    /// [`merit`] and orientation error (for a pose target).
    fn trial_merit(
        &mut self,
        chain: &Chain,
        q: &[f64],
        target: &Target,
        s_p: f64,
        s_o: f64,
    ) -> (f64, Option<Vector3<f64>>) {
        for (i, t) in self.trial.iter_mut().enumerate() {
            let d = s_p * self.dq_p[i] + s_o * (self.dq[i] - self.dq_p[i]);
            *t = self.bounds.clamp_one(i, q[i] + d);
        }
        let tip = chain.fk(&self.trial);
        let e_p = (target.position - tip.translation.vector).norm();
        let e_o = orientation_error(&tip, &target.orientation);
        (merit(e_p, e_o.map_or(0.0, |e| e.norm())), e_o)
    }

    /// The most of the orientation part of the step that keeps each
    /// joint's share of it over the tick within `turn_caps`.
    fn turn_fraction(&self, turn_caps: &[f64]) -> f64 {
        let mut s = 1.0_f64;
        for (i, cap) in turn_caps.iter().enumerate() {
            let d = (self.dq[i] - self.dq_p[i]).abs();
            if d > 0.0 {
                s = s.min((cap - self.turned[i]).max(0.0) / d);
            }
        }
        s
    }

    /// The least step budget left over the joints that moved, in the
    /// direction each moved (rad or m).
    fn budget_left(&self, steps: &[(f64, f64)]) -> f64 {
        self.moved
            .iter()
            .zip(steps)
            .filter(|(m, _)| **m != 0.0)
            .map(|(m, (lo, hi))| if *m > 0.0 { hi - m } else { m - lo })
            .fold(f64::INFINITY, f64::min)
    }

    /// Scales this tick's motion down when it took the position Jacobian's
    /// smallest singular value from `before` further down into the
    /// slow-down band: in proportion to how deep, to nothing at the stop
    /// threshold. Returns whether it scaled, and the singular value after
    /// the tick's motion (before the scaling).
    fn slow_near_singularity(&mut self, chain: &Chain, q: &mut [f64], before: f64) -> (bool, f64) {
        chain.jacobian(q, &mut self.frames);
        self.free.iter_mut().for_each(|f| *f = true);
        let after = self.position_step(&Vector3::zeros()).sigma_min;
        if after >= before || after >= self.slow {
            return (false, after);
        }
        let keep = ((after - self.stop) / (self.slow - self.stop)).clamp(0.0, 1.0);
        for (i, qi) in q.iter_mut().enumerate() {
            *qi = self
                .bounds
                .clamp_one(i, self.start[i] + keep * (*qi - self.start[i]));
        }
        (true, after)
    }
}

#[cfg(test)]
mod tests;
