//! One Levenberg-Marquardt descent: from a start configuration downhill on
//! the weighted pose error until it is within tolerance, stalls, or runs
//! out of iterations or time.

use super::Workspace;
use super::linalg::{mul, normal_equations};
use super::redundancy::{
    Redundancy, clearance_pull, limits_pull, manipulability_pull, posture_pull, spare_singular,
};
use crate::ik::metric::{PoseDeviation, joint_distance, pose_error};
use crate::ik::{Admissible, Deadline, Orientation, Reason, Target, Tolerance};
use crate::model::{Chain, Frames};
use nalgebra::Vector3;

/// Damping bounds: below, the step is pure Gauss-Newton; above, the attempt
/// is stuck and a restart is cheaper than more damping.
const MIN_DAMPING: f64 = 1e-12;
const MAX_DAMPING: f64 = 1e8;
/// When a descent gives up on a local minimum: when its error has not
/// at least halved over the last `window` iterations (accepted or not).
/// Descents that reach a solution converge quadratically (about ten
/// iterations from a random start); the ones that crawl end in a local
/// minimum, where a restart is cheaper than the crawl.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Patience {
    window: u32,
    /// The error must shrink at least by this factor per window.
    ratio: f64,
}

impl Patience {
    /// From the caller's seed, usually next to the answer (tracking):
    /// slow progress near a singular pose is still worth more than a
    /// random restart that may land on another branch.
    pub const PATIENT: Patience = Patience {
        window: 8,
        ratio: 0.5,
    };
    /// From a random start. Measured on the shared arms: ends a failing
    /// restart after about 12 iterations instead of 40, and loses about
    /// 5 % of the restarts that would have converged.
    pub const QUICK: Patience = Patience {
        window: 3,
        ratio: 0.5,
    };
    /// Beyond reach there is no zero to converge to, only the closest
    /// pose: descend until the error stops shrinking at all.
    pub const THOROUGH: Patience = Patience {
        window: 16,
        ratio: 0.999,
    };
}

/// What one descent is asked to do; the state it changes is the
/// [`Workspace`].
pub(super) struct Descent<'a> {
    pub chain: &'a Chain,
    pub target: &'a Target,
    pub tol: Tolerance,
    pub max_iterations: u32,
    pub initial_damping: f64,
    pub max_step: f64,
    /// How a redundant arm's self-motion is steered (`None`: not at all).
    pub steer: Option<Steer<'a>>,
    pub deadline: Deadline,
    pub patience: Patience,
    /// Closest mode on an arm without self-motion: lean toward the seed.
    pub toward: Option<Toward<'a>>,
}

/// The secondary objective a redundant arm's descent follows in the task's
/// null space (see [`super::redundancy`]).
#[derive(Clone, Copy)]
pub(super) struct Steer<'a> {
    pub objective: Redundancy,
    /// The posture objective's rest pose.
    pub rest: &'a [f64],
    /// `k`, the pull of the first step; each later step pulls half as
    /// much, and after [`STEER_STEPS`] none, so that the descent still
    /// converges exactly.
    pub gain: f64,
    /// The clearance band (m; 0: none): when the solve's check measures
    /// less room than this, the self-motion is also steered up its
    /// gradient ([`clearance_pull`]), fading as the others do.
    pub band: f64,
    /// Steer only once the descent has reached the target, from the
    /// answer (position-only targets): a target out of reach, or one the
    /// descent is still on its way to, is descended to as without a steer
    /// (a 5-joint arm's jog pushed out of reach keeps its line).
    pub once_reached: bool,
}

/// Steps of a descent that steer the self-motion: enough that a solve
/// whose seed already meets the target moves along its self-motion, few
/// enough that the fading pull never keeps the descent from converging.
const STEER_STEPS: u32 = 4;
/// Above this damping the damped projector `I - (A+λI)⁻¹A` is no longer
/// close to the null space: the step does not steer.
const STEER_DAMPING: f64 = 1e-2;
/// A steering step from an answer already within tolerance is kept while
/// the error it makes stays below this cost (about 1 mm): the next steps
/// bring it back within tolerance.
const STEER_COST: f64 = 1e-6;

/// When a descent steers by the clearance: for [`STEER_STEPS`] steps from
/// the iteration it comes within [`BASIN_COST`] of its answer (at once
/// when tracking, whose seed is next to it; near the end of a descent from
/// a restart), while the check finds something within the band. Far from
/// its answer a step's self-motion says nothing of where the answer will
/// be, and the queries would cost without steering it.
struct Clearing {
    on: bool,
    basin: Option<u32>,
}

impl Clearing {
    fn new(d: &Descent, checked: bool) -> Clearing {
        Clearing {
            on: checked && d.steer.is_some_and(|s| s.band > 0.0),
            basin: None,
        }
    }

    /// Steps since the basin when iteration `it` (whose cost is `cost`)
    /// steers by the clearance.
    fn at(&mut self, it: u32, cost: f64) -> Option<u32> {
        if !self.on {
            return None;
        }
        if self.basin.is_none() && cost < BASIN_COST {
            self.basin = Some(it);
        }
        let k = it - self.basin?;
        if k >= STEER_STEPS {
            self.on = false;
            return None;
        }
        Some(k)
    }
}

/// How a closest-mode descent leans toward the seed.
#[derive(Clone, Copy)]
pub(super) struct Toward<'a> {
    pub seed: &'a [f64],
    /// The joint weights of the distance (empty: all 1).
    pub weights: &'a [f64],
    /// `μ`: the step minimises `|J dq - e|² + μ 2⁻ᵏ |dq - (seed - q)|²_W`
    /// at iteration `k`, a Tikhonov term that pulls the first steps toward
    /// the seed, so that the descent tends to end on the solution branch
    /// nearest it, and fades so that it still converges exactly. 0: none.
    pub pull: f64,
    /// A distance from the seed past which a converging descent is not
    /// worth finishing: the nearest solution found so far.
    pub cutoff: f64,
}

/// The cost below which a descent has found its basin: `|e|` about 1 cm
/// or 0.01 rad, a few iterations before the tolerance.
const BASIN_COST: f64 = 1e-4;
/// Joint-space distance (rad) a descent still travels from `BASIN_COST`
/// to its solution, at most (generously: near a singular pose it is more
/// than `|e|` suggests).
const BASIN_MARGIN: f64 = 0.2;

/// Below this the pull toward the seed no longer changes a step.
const PULL_FADED: f64 = 1e-12;

/// How a descent ended.
pub(super) struct Attempt {
    pub converged: bool,
    pub cost: f64,
    pub iterations: u32,
    pub end: Reason,
}

/// The weighted error of the current configuration.
#[derive(Clone, Copy)]
pub(super) struct Residual {
    pub err: PoseDeviation,
    /// `e`: position then rotation, each times its weight.
    pub e: [f64; 6],
    /// `|e|²`.
    pub cost: f64,
}

impl Descent<'_> {
    /// Position and orientation weights; orientation 0 when not asked.
    pub(super) fn weights(&self) -> (f64, f64) {
        let wo = if self.target.wants_orientation() {
            self.target.orientation_weight
        } else {
            0.0
        };
        (self.target.position_weight, wo)
    }

    pub(super) fn residual(&self, err: PoseDeviation) -> Residual {
        let (wp, wo) = self.weights();
        let e = [
            wp * err.position.x,
            wp * err.position.y,
            wp * err.position.z,
            wo * err.rotation.x,
            wo * err.rotation.y,
            wo * err.rotation.z,
        ];
        Residual {
            err,
            e,
            cost: e.iter().map(|v| v * v).sum(),
        }
    }

    /// A pointing target's tool axis in the base frame, at `frames`' tip:
    /// the turn about it is left free, so the normal equations take it out
    /// of their angular rows. `None` for any other target.
    pub(super) fn free_roll(&self, frames: &Frames) -> Option<Vector3<f64>> {
        match self.target.orientation {
            Orientation::Axis(p) if self.target.wants_orientation() => {
                Some(frames.tip.rotation * p.tool.into_inner())
            }
            _ => None,
        }
    }

    fn ended(&self, converged: bool, r: &Residual, iterations: u32, end: Reason) -> Attempt {
        Attempt {
            converged,
            cost: r.cost,
            iterations,
            end,
        }
    }

    /// Descends from `ws.q`; leaves the attempt's best configuration there.
    /// `check`: the solve's collision check, whose clearance the steering
    /// follows when it measures one. A descent that steers only once
    /// reached and then loses the target again ends on the answer it had
    /// reached.
    pub(super) fn run(
        &self,
        ws: &mut Workspace,
        check: Option<&mut (dyn Admissible + '_)>,
    ) -> Attempt {
        let mut reached = None;
        let attempt = self.descend(ws, check, &mut reached);
        match reached {
            Some(r) if !attempt.converged => {
                ws.q.copy_from_slice(&ws.reached);
                Attempt {
                    converged: true,
                    cost: r.cost,
                    iterations: attempt.iterations,
                    end: Reason::IterationCap,
                }
            }
            _ => attempt,
        }
    }

    /// [`Descent::run`]'s descent; `reached` gets the residual of the
    /// answer a steering once reached began from (in `ws.reached`).
    fn descend(
        &self,
        ws: &mut Workspace,
        mut check: Option<&mut (dyn Admissible + '_)>,
        reached: &mut Option<Residual>,
    ) -> Attempt {
        let tip = self.chain.jacobian(&ws.q, &mut ws.frames);
        let mut r = self.residual(pose_error(&tip, self.target));
        let mut lambda = self.initial_damping;
        let mut window_cost = r.cost;
        let mut clearing = Clearing::new(self, check.is_some());
        ws.measured = None;
        // The iteration the steering steps count from.
        let mut steer_from = self.steer.filter(|s| !s.once_reached).map(|_| 0);
        for it in 0..self.max_iterations {
            let clear = clearing.at(it, r.cost);
            // Within tolerance, a descent that still steers takes its
            // steps: the self-motion moves on every solve.
            let within = r.err.within(&self.tol);
            if within && steer_from.is_none() && self.steer.is_some() {
                steer_from = Some(it);
                ws.reached.copy_from_slice(&ws.q);
                *reached = Some(r);
            }
            let steer_k = steer_from.map(|s| it - s);
            if within && !self.steers(steer_k) && clear.is_none() {
                return self.ended(true, &r, it, Reason::IterationCap);
            }
            if it > 0 && it % self.patience.window == 0 {
                if r.cost > window_cost * self.patience.ratio {
                    return self.ended(false, &r, it, Reason::Stalled);
                }
                window_cost = r.cost;
            }
            if it % 4 == 3 && self.deadline.passed() {
                return self.ended(false, &r, it, Reason::TimeBudget);
            }
            let stepped = self.step(ws, &r, lambda, (it, steer_k, clear), check.as_deref_mut());
            if clear.is_some() && !ws.near {
                // Nothing within the band: no more clearance queries.
                clearing.on = false;
            }
            if !stepped {
                if within {
                    return self.ended(true, &r, it, Reason::IterationCap);
                }
                lambda *= 10.0;
                if lambda > MAX_DAMPING {
                    return self.ended(false, &r, it, Reason::Numerical);
                }
                continue;
            }
            let trial_tip = self.chain.jacobian(&ws.trial, &mut ws.trial_frames);
            let trial = self.residual(pose_error(&trial_tip, self.target));
            let steered = within && trial.cost <= STEER_COST;
            if !(trial.cost.is_finite() && (trial.cost < r.cost || steered)) {
                // A steering step from an answer that went too far off:
                // the answer stands.
                if within {
                    return self.ended(true, &r, it, Reason::IterationCap);
                }
                lambda *= 10.0;
                if lambda > MAX_DAMPING {
                    return self.ended(false, &r, it + 1, Reason::Stalled);
                }
                continue;
            }
            std::mem::swap(&mut ws.q, &mut ws.trial);
            std::mem::swap(&mut ws.frames, &mut ws.trial_frames);
            r = trial;
            if steered {
                window_cost = r.cost;
            }
            lambda = (lambda * 0.1).max(MIN_DAMPING);
            if r.cost < BASIN_COST && self.beyond_cutoff(ws) {
                return self.ended(false, &r, it + 1, Reason::Stalled);
            }
        }
        let converged = r.err.within(&self.tol);
        self.ended(converged, &r, self.max_iterations, Reason::IterationCap)
    }

    /// True when steering step `k` (counted from where the steering
    /// began; `None`: not yet) still steers the self-motion.
    fn steers(&self, k: Option<u32>) -> bool {
        self.steer.is_some() && k.is_some_and(|k| k < STEER_STEPS)
    }

    /// True when `ws.q`, turned toward the seed, lies past the cutoff.
    fn beyond_cutoff(&self, ws: &mut Workspace) -> bool {
        let Some(c) = &self.toward else {
            return false;
        };
        ws.scratch.copy_from_slice(&ws.q);
        ws.bounds.wind_toward(&mut ws.scratch, c.seed);
        joint_distance(self.chain, &ws.scratch, c.seed, c.weights) > c.cutoff + BASIN_MARGIN
    }

    /// The damped step from `ws.q` into `ws.trial`: solved; then joints that
    /// the step drives into a limit they sit on are dropped and it is solved
    /// again without them, so the others make up for them. False when the
    /// damped normal matrix is not positive definite.
    /// `steer_k`: the steering step (see [`Descent::steers`]); `clear`:
    /// the steps since the descent came within reach of its answer, while
    /// it steers by the clearance ([`Clearing`]); whether the check found
    /// anything within the band is left in `ws.near`.
    fn step(
        &self,
        ws: &mut Workspace,
        r: &Residual,
        lambda: f64,
        (it, steer_k, clear): (u32, Option<u32>, Option<u32>),
        check: Option<&mut (dyn Admissible + '_)>,
    ) -> bool {
        ws.near = false;
        let n = ws.q.len();
        let (wp, wo) = self.weights();
        normal_equations(
            &ws.frames,
            (wp, wo),
            &r.e,
            self.free_roll(&ws.frames).as_ref(),
            &mut ws.normal,
            &mut ws.rhs,
        );
        if let Some(c) = &self.toward {
            let mu = c.pull * 0.5f64.powi(it.min(64) as i32);
            if mu > PULL_FADED {
                for i in 0..n {
                    let w = mu * c.weights.get(i).copied().unwrap_or(1.0);
                    ws.normal[i * n + i] += w;
                    ws.rhs[i] += w * (c.seed[i] - ws.q[i]);
                }
            }
        }
        for (a, &locked) in ws.active.iter_mut().zip(&ws.bounds.locked) {
            *a = !locked;
        }
        let mut solved = false;
        for _pass in 0..2 {
            if !ws.factor.factor(&ws.normal, &ws.active, lambda) {
                break;
            }
            ws.factor.substitute(&ws.rhs, &ws.active, &mut ws.step);
            solved = true;
            let mut dropped = false;
            for i in 0..n {
                if ws.active[i] && ws.bounds.blocks(i, ws.q[i], ws.step[i]) {
                    ws.active[i] = false;
                    dropped = true;
                }
            }
            if !dropped {
                break;
            }
        }
        if !solved {
            return false;
        }
        self.steer_step(ws, lambda, (steer_k, clear), check);
        let largest = ws.step.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let scale = if largest > self.max_step {
            self.max_step / largest
        } else {
            1.0
        };
        for i in 0..n {
            ws.trial[i] = ws.bounds.clamp_one(i, ws.q[i] + scale * ws.step[i]);
        }
        true
    }
}

impl Descent<'_> {
    /// Adds the null-space steer to `ws.step` when this step steers: the
    /// objective's pull in its first steering steps `steer_k` (every step
    /// for the posture), the clearance's while `clear` says so.
    fn steer_step(
        &self,
        ws: &mut Workspace,
        lambda: f64,
        (steer_k, clear): (Option<u32>, Option<u32>),
        check: Option<&mut (dyn Admissible + '_)>,
    ) {
        let k = steer_k.unwrap_or(u32::MAX);
        let objective = steer_k.is_some()
            && (k < STEER_STEPS
                || self
                    .steer
                    .is_some_and(|s| s.objective == Redundancy::Posture));
        if let Some(steer) = &self.steer
            && (objective || clear.is_some())
            && lambda <= STEER_DAMPING
        {
            // The posture pull has a fixed point (the rest pose, seen from
            // the task): it pulls at full gain in every step, as it always
            // did; the gradients of the others fade so the descent
            // converges.
            let gain = match (objective, steer.objective) {
                (false, _) => 0.0,
                (true, Redundancy::Posture) => steer.gain,
                (true, _) => steer.gain * 0.5f64.powi(k as i32),
            };
            self.pull(ws, steer, gain);
            if let Some(k) = clear
                && let Some(c) = check
                && let Some(room) = clearance(ws, c, steer.band)
            {
                ws.near = true;
                let fade = 0.5f64.powi(k as i32);
                clearance_pull(room, steer.band, &ws.gradient, fade, &mut ws.pull);
            }
            add_null_space_pull(ws);
        }
    }

    /// `ws.pull = k ∇H` at `ws.q` for the steering objective.
    fn pull(&self, ws: &mut Workspace, steer: &Steer, gain: f64) {
        match steer.objective {
            Redundancy::Off => ws.pull.fill(0.0),
            Redundancy::Limits => {
                limits_pull(&ws.bounds, &ws.q, gain, &mut ws.pull);
                if self.target.constraints() == 3 {
                    spare_singular(self.chain, ws);
                }
            }
            Redundancy::Posture => posture_pull(steer.rest, &ws.q, gain, &mut ws.pull),
            Redundancy::Manipulability => {
                let (wp, wo) = self.weights();
                let tool = match self.target.orientation {
                    Orientation::Axis(p) => Some(p.tool.into_inner()),
                    _ => None,
                };
                manipulability_pull(self.chain, (wp, wo), tool, gain, ws);
            }
        }
    }
}

/// Adds `(I - (A+λI)⁻¹ A) z` to the step, `z` in `ws.pull`: the part of
/// the pull that the task does not see (the damped null-space projector,
/// reusing this step's Cholesky factor). Joints out of the step get none.
fn add_null_space_pull(ws: &mut Workspace) {
    for (z, &a) in ws.pull.iter_mut().zip(&ws.active) {
        if !a {
            *z = 0.0;
        }
    }
    mul(&ws.normal, &ws.pull, &mut ws.scratch);
    ws.factor
        .substitute(&ws.scratch, &ws.active, &mut ws.projected);
    for i in 0..ws.step.len() {
        if ws.active[i] {
            ws.step[i] += ws.pull[i] - ws.projected[i];
        }
    }
}

/// The clearance at `ws.q` (less the margin) when within `band`, its
/// gradient in `ws.gradient`: measured by the check at a descent's first
/// steering step, then followed along that gradient. A descent steers a
/// few short steps from one place, where the closest pair and its rate do
/// not change; measuring at every step cost the SO-101's tick most of its
/// time near a box (benches/README.md, Collision).
fn clearance(ws: &mut Workspace, check: &mut (dyn Admissible + '_), band: f64) -> Option<f64> {
    match ws.measured {
        Some(room) => {
            let moved: f64 = (ws.gradient.iter())
                .zip(ws.q.iter().zip(&ws.clear_from))
                .map(|(g, (q, from))| g * (q - from))
                .sum();
            let room = room + moved;
            (room < band).then_some(room)
        }
        None => {
            let room = check.clearance(&ws.q, band, &mut ws.gradient)?;
            ws.measured = Some(room);
            ws.clear_from.copy_from_slice(&ws.q);
            Some(room)
        }
    }
}
