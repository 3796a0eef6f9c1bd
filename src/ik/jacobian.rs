//! Constrained Jacobian solver: damped least squares with adaptive
//! (Levenberg-Marquardt) damping, joint limits inside every step, per-joint
//! modes, a null-space pull toward a rest pose on redundant arms, and random
//! restarts inside a wall-clock budget.
//!
//! Why each piece is there:
//! - Adaptive damping makes the step a Gauss-Newton step far from
//!   singularities (fast, quadratic convergence) and a short gradient step
//!   near them (a UR5 at its zero pose is singular, and that is the
//!   benchmark's seed).
//! - A joint sitting on a limit whose step points outward is taken out of
//!   the step and the step is solved again, so the remaining joints make up
//!   for it instead of the clamp silently eating the step.
//! - Restarts from uniform random seeds end local minima; the budget keeps a
//!   control loop's deadline.

use super::metric::{PoseError, pose_error};
use super::{Bounds, Common, IkError, Outcome, Reason, Rng, Solution, Target, finish};
use crate::model::{Chain, Frames, Transform};
use std::time::{Duration, Instant};

/// Options of the constrained Jacobian solver.
#[derive(Debug, Clone, PartialEq)]
pub struct JacobianOptions {
    /// Wall-clock budget for one solve, restarts included.
    pub budget: Duration,
    /// Iterations of one attempt before a restart from a random seed.
    pub max_iterations: u32,
    /// Restart from random seeds while the budget lasts.
    pub restarts: bool,
    /// Starting Levenberg-Marquardt damping.
    pub initial_damping: f64,
    /// Rest pose the null-space term pulls towards on redundant arms
    /// (`None`: the middle of the limits).
    pub rest: Option<Vec<f64>>,
    /// Gain of the null-space pull, per iteration (0 disables it).
    pub null_space_gain: f64,
    /// Largest change of one joint in one step (rad or m): keeps a step
    /// computed near a singularity from flinging the arm around.
    pub max_step: f64,
    /// Seed of the restart generator (runs are reproducible).
    pub rng_seed: u64,
}

impl Default for JacobianOptions {
    fn default() -> Self {
        JacobianOptions {
            budget: Duration::from_millis(5),
            max_iterations: 60,
            restarts: true,
            initial_damping: 1e-3,
            rest: None,
            null_space_gain: 0.0,
            max_step: 1.0,
            rng_seed: 0x5eed,
        }
    }
}

impl JacobianOptions {
    fn validate(&self, chain: &Chain) -> Result<(), IkError> {
        let bad = |option, why: String| IkError::BadOption {
            solver: "jacobian",
            option,
            why,
        };
        if self.max_iterations == 0 {
            return Err(bad("max_iterations", "must be at least 1".into()));
        }
        if !(self.initial_damping.is_finite() && self.initial_damping > 0.0) {
            return Err(bad(
                "initial_damping",
                format!("{} is not positive", self.initial_damping),
            ));
        }
        if !(self.null_space_gain.is_finite() && (0.0..=1.0).contains(&self.null_space_gain)) {
            return Err(bad(
                "null_space_gain",
                format!("{} is not in [0, 1]", self.null_space_gain),
            ));
        }
        if !(self.max_step.is_finite() && self.max_step > 0.0) {
            return Err(bad(
                "max_step",
                format!("{} is not positive", self.max_step),
            ));
        }
        if let Some(rest) = &self.rest {
            if rest.len() != chain.dof() {
                return Err(bad(
                    "rest",
                    format!("{} values for {} joints", rest.len(), chain.dof()),
                ));
            }
            if rest.iter().any(|v| !v.is_finite()) {
                return Err(bad("rest", "contains a non-finite value".into()));
            }
        }
        Ok(())
    }
}

/// Damping bounds: below, the step is pure Gauss-Newton; above, the attempt
/// is stuck and a restart is cheaper than more damping.
const MIN_DAMPING: f64 = 1e-12;
const MAX_DAMPING: f64 = 1e8;
/// An attempt whose error shrank by less than this factor over
/// `STALL_WINDOW` accepted steps is in a local minimum.
const STALL_RATIO: f64 = 0.999;
const STALL_WINDOW: u32 = 8;
/// Attempts spent on a target beyond reach (the first from the seed).
const OUT_OF_REACH_ATTEMPTS: u32 = 4;

/// The constrained Jacobian solver bound to one chain.
#[derive(Debug, Clone)]
pub struct JacobianSolver {
    chain: Chain,
    options: JacobianOptions,
    common: Common,
    template: Bounds,
    rest: Vec<f64>,
    rng: Rng,
    ws: Workspace,
}

/// Scratch memory, sized once per chain: no allocation while iterating.
#[derive(Debug, Clone)]
struct Workspace {
    bounds: Bounds,
    frames: Frames,
    trial_frames: Frames,
    q: Vec<f64>,
    trial: Vec<f64>,
    best: Vec<f64>,
    step: Vec<f64>,
    rhs: Vec<f64>,
    scratch: Vec<f64>,
    pull: Vec<f64>,
    projected: Vec<f64>,
    normal: Vec<f64>,
    factor: Vec<f64>,
    active: Vec<bool>,
}

impl JacobianSolver {
    pub fn new(chain: &Chain, options: JacobianOptions, common: Common) -> Result<Self, IkError> {
        options.validate(chain)?;
        let n = chain.dof();
        let template = Bounds::new(chain, &common.modes);
        let rest = options
            .rest
            .clone()
            .unwrap_or_else(|| chain.mid_configuration());
        let ws = Workspace {
            bounds: template.clone(),
            frames: Frames::new(chain),
            trial_frames: Frames::new(chain),
            q: vec![0.0; n],
            trial: vec![0.0; n],
            best: vec![0.0; n],
            step: vec![0.0; n],
            rhs: vec![0.0; n],
            scratch: vec![0.0; n],
            pull: vec![0.0; n],
            projected: vec![0.0; n],
            normal: vec![0.0; n * n],
            factor: vec![0.0; n * n],
            active: vec![true; n],
        };
        Ok(JacobianSolver {
            chain: chain.clone(),
            rng: Rng::new(options.rng_seed),
            options,
            common,
            template,
            rest,
            ws,
        })
    }

    pub fn chain(&self) -> &Chain {
        &self.chain
    }

    pub fn options(&self) -> &JacobianOptions {
        &self.options
    }

    pub fn solve(&mut self, target: &Target, seed: &[f64]) -> Solution {
        let started = Instant::now();
        let deadline = started + self.options.budget;
        let tol = self.common.tolerance;
        let ws = &mut self.ws;
        ws.bounds.clone_from(&self.template);
        ws.bounds.lock_at(&self.chain, seed, &mut ws.q);
        let clean_seed = ws.q.clone();
        // The seed is the answer until an attempt finds a better one (an
        // attempt whose cost overflows never does).
        ws.best.copy_from_slice(&ws.q);
        let redundant = self.chain.dof() > if target.wants_orientation() { 6 } else { 3 };
        let null_gain = if redundant {
            self.options.null_space_gain
        } else {
            0.0
        };

        // A target beyond the chain's reach has no exact answer to restart
        // for: a few attempts find the stretched pose closest to it.
        let out_of_reach = beyond_reach(&self.chain, target);
        let mut attempts_left = if out_of_reach {
            OUT_OF_REACH_ATTEMPTS
        } else {
            u32::MAX
        };
        let mut best_cost = f64::INFINITY;
        let mut iterations = 0u32;
        let mut why_not = Reason::IterationCap;
        loop {
            attempts_left -= 1;
            let attempt = run_attempt(
                &self.chain,
                &self.options,
                target,
                &tol,
                ws,
                &self.rest,
                null_gain,
                deadline,
            );
            iterations += attempt.iterations;
            if attempt.cost < best_cost {
                best_cost = attempt.cost;
                ws.best.copy_from_slice(&ws.q);
                why_not = attempt.end;
            }
            if attempt.converged {
                break;
            }
            if !self.options.restarts || attempts_left == 0 {
                break;
            }
            if Instant::now() >= deadline {
                why_not = Reason::TimeBudget;
                break;
            }
            ws.bounds.sample(&mut self.rng, &mut ws.q);
        }
        // Beyond reach is the reason whatever ended the search: no amount
        // of time would have reached the target.
        if out_of_reach {
            why_not = Reason::OutOfReach;
        }
        finish(
            &self.chain,
            &ws.bounds,
            target,
            &tol,
            &clean_seed,
            Outcome {
                q: ws.best.clone(),
                iterations,
                why_not,
            },
        )
    }
}

/// True when the target position lies farther from the first joint than
/// the chain can stretch ([`reach`]).
pub fn beyond_reach(chain: &Chain, target: &Target) -> bool {
    let first = chain.joints[0].origin.translation.vector;
    (target.position - first).norm() > reach(chain) * (1.0 + 1e-9) + 1e-9
}

/// How far the tip can get from the first joint (m): the sum of the
/// distances between successive joints and to the tip, plus every
/// prismatic joint's travel; an upper bound of the reach.
pub fn reach(chain: &Chain) -> f64 {
    let mut t = Transform::identity();
    let mut reach = 0.0;
    let mut prev: Option<nalgebra::Vector3<f64>> = None;
    let mut prismatic = 0.0;
    for j in &chain.joints {
        t *= j.origin;
        let p = t.translation.vector;
        if let Some(q) = prev {
            reach += (p - q).norm();
        }
        prev = Some(p);
        if !j.kind.rotates() {
            prismatic += j.limits.lower.abs().max(j.limits.upper.abs());
        }
    }
    reach + chain.tip_offset.translation.vector.norm() + prismatic
}

struct Attempt {
    converged: bool,
    cost: f64,
    iterations: u32,
    end: Reason,
}

/// Weighted error vector `e` (position then rotation) and its cost `|e|²`.
fn error_vector(err: &PoseError, target: &Target) -> ([f64; 6], f64) {
    let wp = target.position_weight;
    let wo = if target.wants_orientation() {
        target.orientation_weight
    } else {
        0.0
    };
    let e = [
        wp * err.position.x,
        wp * err.position.y,
        wp * err.position.z,
        wo * err.rotation.x,
        wo * err.rotation.y,
        wo * err.rotation.z,
    ];
    (e, e.iter().map(|v| v * v).sum())
}

/// One Levenberg-Marquardt descent from `ws.q`. Leaves the attempt's best
/// configuration in `ws.q`.
#[allow(clippy::too_many_arguments)]
fn run_attempt(
    chain: &Chain,
    options: &JacobianOptions,
    target: &Target,
    tol: &super::Tolerance,
    ws: &mut Workspace,
    rest: &[f64],
    null_gain: f64,
    deadline: Instant,
) -> Attempt {
    let n = chain.dof();
    let wp = target.position_weight;
    let wo = if target.wants_orientation() {
        target.orientation_weight
    } else {
        0.0
    };
    let tip = chain.jacobian(&ws.q, &mut ws.frames);
    let mut err = pose_error(&tip, target);
    let (mut e, mut cost) = error_vector(&err, target);
    let mut lambda = options.initial_damping;
    let mut window_cost = cost;
    let mut accepted_in_window = 0;

    for it in 0..options.max_iterations {
        if err.within(tol) {
            return Attempt {
                converged: true,
                cost,
                iterations: it,
                end: Reason::IterationCap,
            };
        }
        if it % 4 == 3 && Instant::now() >= deadline {
            return Attempt {
                converged: false,
                cost,
                iterations: it,
                end: Reason::TimeBudget,
            };
        }
        normal_equations(&ws.frames, wp, wo, &e, n, &mut ws.normal, &mut ws.rhs);
        for (i, a) in ws.active.iter_mut().enumerate() {
            *a = !ws.bounds.locked[i];
        }
        // Solve; then drop joints that the step drives into a limit they sit
        // on, and solve again without them.
        let mut solved = false;
        for _pass in 0..2 {
            if !damped_solve(
                &ws.normal,
                &ws.rhs,
                &ws.active,
                lambda,
                n,
                &mut ws.factor,
                &mut ws.step,
            ) {
                break;
            }
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
            lambda *= 10.0;
            if lambda > MAX_DAMPING {
                return Attempt {
                    converged: false,
                    cost,
                    iterations: it,
                    end: Reason::Numerical,
                };
            }
            continue;
        }
        if null_gain > 0.0 {
            add_null_space_pull(ws, rest, null_gain, n);
        }
        let largest = ws.step.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let scale = if largest > options.max_step {
            options.max_step / largest
        } else {
            1.0
        };
        for i in 0..n {
            ws.trial[i] = ws.bounds.clamp_one(i, ws.q[i] + scale * ws.step[i]);
        }
        let trial_tip = chain.jacobian(&ws.trial, &mut ws.trial_frames);
        let trial_err = pose_error(&trial_tip, target);
        let (trial_e, trial_cost) = error_vector(&trial_err, target);
        if trial_cost.is_finite() && trial_cost < cost {
            std::mem::swap(&mut ws.q, &mut ws.trial);
            std::mem::swap(&mut ws.frames, &mut ws.trial_frames);
            err = trial_err;
            e = trial_e;
            cost = trial_cost;
            lambda = (lambda * 0.1).max(MIN_DAMPING);
            accepted_in_window += 1;
            if accepted_in_window == STALL_WINDOW {
                if cost > window_cost * STALL_RATIO && !err.within(tol) {
                    return Attempt {
                        converged: false,
                        cost,
                        iterations: it + 1,
                        end: Reason::Stalled,
                    };
                }
                window_cost = cost;
                accepted_in_window = 0;
            }
        } else {
            lambda *= 10.0;
            if lambda > MAX_DAMPING {
                return Attempt {
                    converged: false,
                    cost,
                    iterations: it + 1,
                    end: Reason::Stalled,
                };
            }
        }
    }
    Attempt {
        converged: err.within(tol),
        cost,
        iterations: options.max_iterations,
        end: Reason::IterationCap,
    }
}

/// `A = Jᵀ W J` (row-major `n × n`) and `g = Jᵀ W e` with `W` the squared
/// weights; `e` is already weighted once.
fn normal_equations(
    frames: &Frames,
    wp: f64,
    wo: f64,
    e: &[f64; 6],
    n: usize,
    a: &mut [f64],
    g: &mut [f64],
) {
    let cols = &frames.columns;
    for i in 0..n {
        let ci = &cols[i];
        g[i] = wp * (ci.linear.x * e[0] + ci.linear.y * e[1] + ci.linear.z * e[2])
            + wo * (ci.angular.x * e[3] + ci.angular.y * e[4] + ci.angular.z * e[5]);
        for j in i..n {
            let cj = &cols[j];
            let v = wp * wp * ci.linear.dot(&cj.linear) + wo * wo * ci.angular.dot(&cj.angular);
            a[i * n + j] = v;
            a[j * n + i] = v;
        }
    }
}

/// Factors `A + λI` over the active joints into `l` (lower Cholesky,
/// row-major); inactive joints get an identity row so their step is 0.
/// Returns false when the matrix is not positive definite (the caller raises
/// the damping).
fn factor(a: &[f64], active: &[bool], lambda: f64, n: usize, l: &mut [f64]) -> bool {
    for i in 0..n {
        for j in 0..=i {
            l[i * n + j] = if active[i] && active[j] {
                a[i * n + j] + if i == j { lambda } else { 0.0 }
            } else if i == j {
                1.0
            } else {
                0.0
            };
        }
    }
    for j in 0..n {
        let mut d = l[j * n + j];
        for k in 0..j {
            d -= l[j * n + k] * l[j * n + k];
        }
        if d <= 0.0 || !d.is_finite() {
            return false;
        }
        let d = d.sqrt();
        l[j * n + j] = d;
        for i in j + 1..n {
            let mut s = l[i * n + j];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            l[i * n + j] = s / d;
        }
    }
    true
}

/// Solves `L Lᵀ x = b` (inactive entries of `b` read as 0).
fn substitute(l: &[f64], b: &[f64], active: &[bool], n: usize, x: &mut [f64]) {
    for i in 0..n {
        let mut s = if active[i] { b[i] } else { 0.0 };
        for k in 0..i {
            s -= l[i * n + k] * x[k];
        }
        x[i] = s / l[i * n + i];
    }
    for i in (0..n).rev() {
        let mut s = x[i];
        for k in i + 1..n {
            s -= l[k * n + i] * x[k];
        }
        x[i] = s / l[i * n + i];
    }
}

/// Solves `(A + λI) x = g` over the active joints.
fn damped_solve(
    a: &[f64],
    g: &[f64],
    active: &[bool],
    lambda: f64,
    n: usize,
    l: &mut [f64],
    x: &mut [f64],
) -> bool {
    if !factor(a, active, lambda, n, l) {
        return false;
    }
    substitute(l, g, active, n, x);
    true
}

/// Adds `k (I - (A+λI)⁻¹ A)(rest - q)` to the step: the part of a pull
/// toward the rest pose that the task does not see (the damped null-space
/// projector, reusing this step's Cholesky factor).
fn add_null_space_pull(ws: &mut Workspace, rest: &[f64], gain: f64, n: usize) {
    for (i, z) in ws.pull.iter_mut().enumerate() {
        *z = if ws.active[i] {
            gain * (rest[i] - ws.q[i])
        } else {
            0.0
        };
    }
    for (i, az) in ws.scratch.iter_mut().enumerate() {
        *az = (0..n).map(|j| ws.normal[i * n + j] * ws.pull[j]).sum();
    }
    substitute(&ws.factor, &ws.scratch, &ws.active, n, &mut ws.projected);
    for i in 0..n {
        if ws.active[i] {
            ws.step[i] += ws.pull[i] - ws.projected[i];
        }
    }
}
