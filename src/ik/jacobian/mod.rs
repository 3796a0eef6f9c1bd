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

mod descent;
mod linalg;
mod restarts;

use super::{Bounds, Common, IkError, Outcome, Reason, Rng, Solution, Target, finish};
use crate::model::{Chain, Frames, Transform};
use descent::{Descent, Patience};
use linalg::Factor;
use restarts::Restarts;
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
    factor: Factor,
    active: Vec<bool>,
    restarts: Restarts,
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
            factor: Factor::new(n),
            active: vec![true; n],
            restarts: Restarts::new(n),
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
        ws.restarts.reset(&mut self.rng);
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
        let mut first = true;
        loop {
            attempts_left -= 1;
            let attempt = Descent {
                chain: &self.chain,
                target,
                tol,
                max_iterations: self.options.max_iterations,
                initial_damping: self.options.initial_damping,
                max_step: self.options.max_step,
                rest: &self.rest,
                null_gain,
                deadline,
                patience: if out_of_reach {
                    Patience::THOROUGH
                } else if first {
                    Patience::PATIENT
                } else {
                    Patience::QUICK
                },
            }
            .run(ws);
            first = false;
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
            ws.restarts.next(&ws.bounds, &mut ws.q);
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
/// the chain can stretch (sum of the distances between successive joints and
/// the tip, an upper bound of the reach).
pub fn beyond_reach(chain: &Chain, target: &Target) -> bool {
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
    let first = chain.joints[0].origin.translation.vector;
    reach += chain.tip_offset.translation.vector.norm() + prismatic;
    (target.position - first).norm() > reach * (1.0 + 1e-9) + 1e-9
}
