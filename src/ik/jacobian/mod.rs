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

mod closest;
mod descent;
mod linalg;
mod options;
mod redundancy;
mod restarts;

pub use options::{Closest, JacobianOptions};
pub use redundancy::Redundancy;

use super::{
    Admissible, Bounds, Clock, Common, Deadline, IkError, Outcome, Reason, Rng, Solution, Target,
    finish,
};
use crate::model::{Chain, Frames, Transform};
use closest::{Aim, Nearest};
use descent::{Attempt, Descent, Patience, Steer, Toward};
use linalg::Factor;
use restarts::Restarts;

/// Attempts spent on a target beyond reach (the first from the seed).
const OUT_OF_REACH_ATTEMPTS: u32 = 4;
/// The closest mode's pull toward the seed (see `descent::Toward::pull`),
/// relative to the normal matrix of a unit-weight pose error. Measured on
/// the shared arms: 1 finds nearer solutions than 0.3 for as many
/// iterations; 3 and more slow the descents down.
const SEED_PULL: f64 = 1.0;
/// The share of the budget the closest mode searches once it has a
/// solution.
const CLOSEST_SHARE: f64 = 0.9;
/// Closest-mode attempts without a solution after which the pull stops.
const UNPULLED_AFTER: u32 = 8;

/// The constrained Jacobian solver bound to one chain.
#[derive(Debug, Clone)]
pub struct JacobianSolver {
    setup: Setup,
    rng: Rng,
    /// The seed of the current solve, brought into the bounds.
    seed: Vec<f64>,
    ws: Workspace,
}

/// What a solver is bound to: read, never changed, by a solve.
#[derive(Debug, Clone)]
struct Setup {
    chain: Chain,
    options: JacobianOptions,
    common: Common,
    template: Bounds,
    rest: Vec<f64>,
    /// Closest mode: the joint weights divided by the largest, so that the
    /// pulls toward the seed never exceed the distance to it (empty: all
    /// 1). The same distances up to a factor, so the same nearest answer.
    weights: Vec<f64>,
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
    /// The answer a descent steering only once reached started from.
    reached: Vec<f64>,
    pull: Vec<f64>,
    /// The clearance's gradient, from the solve's check.
    gradient: Vec<f64>,
    /// The manipulability's gradient near a singular pose
    /// ([`redundancy::spare_singular`]).
    lift: Vec<f64>,
    /// The last step's check found something within the clearance band.
    near: bool,
    /// The clearance the descent measured, and where (`clear_from`): its
    /// later steering steps follow that gradient from there.
    measured: Option<f64>,
    clear_from: Vec<f64>,
    projected: Vec<f64>,
    normal: Vec<f64>,
    factor: Factor,
    active: Vec<bool>,
    restarts: Restarts,
    /// The solution a closest-mode slide step started from.
    anchor: Vec<f64>,
}

impl Workspace {
    fn new(chain: &Chain, bounds: Bounds) -> Workspace {
        let n = chain.dof();
        Workspace {
            bounds,
            frames: Frames::new(chain),
            trial_frames: Frames::new(chain),
            q: vec![0.0; n],
            trial: vec![0.0; n],
            best: vec![0.0; n],
            step: vec![0.0; n],
            rhs: vec![0.0; n],
            scratch: vec![0.0; n],
            reached: vec![0.0; n],
            pull: vec![0.0; n],
            gradient: vec![0.0; n],
            lift: vec![0.0; n],
            near: false,
            measured: None,
            clear_from: vec![0.0; n],
            projected: vec![0.0; n],
            normal: vec![0.0; n * n],
            factor: Factor::new(n),
            active: vec![true; n],
            restarts: Restarts::new(n),
            anchor: vec![0.0; n],
        }
    }
}

impl JacobianSolver {
    /// Counts the budget on `clock` from the next solve on.
    pub fn set_clock(&mut self, clock: Clock) {
        self.setup.options.clock = clock;
    }

    /// Resolves the redundancy by `objective` from the next solve on.
    pub fn set_redundancy(&mut self, objective: Redundancy) {
        self.setup.options.redundancy = objective;
    }

    pub fn new(chain: &Chain, options: JacobianOptions, common: Common) -> Result<Self, IkError> {
        options.validate(chain)?;
        let template = Bounds::new(chain, &common.modes);
        let rest = options
            .rest
            .clone()
            .unwrap_or_else(|| chain.mid_configuration());
        let weights = options
            .closest
            .as_ref()
            .map(|c| {
                let most = c.weights.iter().fold(0.0f64, |m, w| m.max(*w));
                c.weights.iter().map(|w| w / most).collect()
            })
            .unwrap_or_default();
        Ok(JacobianSolver {
            rng: Rng::new(options.rng_seed),
            seed: vec![0.0; chain.dof()],
            ws: Workspace::new(chain, template.clone()),
            setup: Setup {
                chain: chain.clone(),
                options,
                common,
                template,
                rest,
                weights,
            },
        })
    }

    pub fn chain(&self) -> &Chain {
        &self.setup.chain
    }

    pub fn options(&self) -> &JacobianOptions {
        &self.setup.options
    }

    pub fn solve(&mut self, target: &Target, seed: &[f64]) -> Solution {
        self.solve_with(target, seed, None)
    }

    /// [`JacobianSolver::solve`] where a solution must also be admitted by
    /// `check` (clear of collisions): a converged attempt it refuses is
    /// one more failed attempt, and the search restarts within the budget.
    pub fn solve_with(
        &mut self,
        target: &Target,
        seed: &[f64],
        mut check: Option<&mut dyn Admissible>,
    ) -> Solution {
        let deadline = Deadline::start(self.setup.options.clock, self.setup.options.budget);
        let JacobianSolver {
            setup,
            rng,
            seed: clean,
            ws,
        } = self;
        ws.bounds.clone_from(&setup.template);
        ws.bounds.lock_at(&setup.chain, seed, &mut ws.q);
        clean.copy_from_slice(&ws.q);
        let seed = &clean[..];
        ws.restarts.reset(rng);
        // The seed is the answer until an attempt finds a better one (an
        // attempt whose cost overflows never does).
        ws.best.copy_from_slice(&ws.q);
        let mut search = Search::new(setup, target, deadline);
        let mut descent = setup.descent(target, &search, check.is_some());
        loop {
            descent.toward = setup.lean(&search).map(|_| Toward {
                seed,
                weights: &setup.weights,
                pull: search.pull(),
                cutoff: search.nearest.distance,
            });
            let mut attempt = descent.run(ws, check.as_deref_mut());
            // A solution the check refuses is one more failed attempt (a
            // best effort is checked once, at the end, if it is the answer).
            if let Some(c) = check.as_deref_mut()
                && attempt.converged
                && !c.admits(&ws.q, true)
            {
                search.refused += 1;
                attempt.converged = false;
                attempt.cost = f64::INFINITY;
            }
            if search.done(setup, &descent, ws, seed, attempt) {
                break;
            }
            if !search.out_of_reach {
                descent.patience = Patience::QUICK;
            }
            // The clearance steers the descent from the seed (a tracking
            // solve's, next to its answer), not the restarts: measured on
            // the Panda's pillar-and-shelf targets, steering every
            // converging restart cost more iterations than it saved
            // (benches/README.md, Collision).
            if let Some(s) = &mut descent.steer {
                s.band = 0.0;
            }
            ws.restarts.next(&ws.bounds, &mut ws.q);
        }
        // A best effort in collision is no answer: the arm stays put.
        if let Some(c) = check
            && ws.best != seed
            && !search.found
            && !c.admits(&ws.best, false)
        {
            ws.best.copy_from_slice(seed);
        }
        ws.bounds.wind_toward(&mut ws.best, seed);
        finish(
            &setup.chain,
            &ws.bounds,
            target,
            &setup.common.tolerance,
            seed,
            Outcome {
                q: ws.best.clone(),
                iterations: search.iterations,
                // Beyond reach is the reason whatever ended the search: no
                // amount of time would have reached the target.
                // A target reached only in collision is refused as such,
                // not answered with a stalled attempt elsewhere.
                why_not: if search.refused > 0 {
                    Reason::Inadmissible
                } else if search.out_of_reach {
                    Reason::OutOfReach
                } else {
                    search.why_not
                },
            },
        )
    }
}

impl Setup {
    /// The first descent of a solve: from the seed, patient. `checked`:
    /// the solve has a check, whose clearance may steer.
    fn descent<'a>(&'a self, target: &'a Target, search: &Search, checked: bool) -> Descent<'a> {
        let o = &self.options;
        let band = if checked { o.clearance_band } else { 0.0 };
        Descent {
            chain: &self.chain,
            target,
            tol: self.common.tolerance,
            max_iterations: self.options.max_iterations,
            initial_damping: self.options.initial_damping,
            max_step: self.options.max_step,
            // The closest mode wants the self-motion nearest the seed (it
            // slides there), not steered away from it.
            // On position targets the gradients steer only from an answer
            // (`once_reached`): from the start of the descent they pulled
            // the 5-joint arm's jog, pushed out of reach, off its line
            // (tests/jog.rs). The posture pull (asked for explicitly) as
            // it always did, from the first step. The clearance steers
            // with any objective, `off` too.
            steer: (search.redundant
                && o.closest.is_none()
                && (o.redundancy != Redundancy::Off || band > 0.0)
                && o.null_space_gain > 0.0)
                .then_some(Steer {
                    objective: o.redundancy,
                    rest: &self.rest,
                    gain: o.null_space_gain,
                    band,
                    // 5D targets steer from the first step, as poses do:
                    // steering only once reached, the Panda trailed its
                    // 5D path 7 by 39 mm instead of 28 (benches/README.md,
                    // Fourth pass).
                    once_reached: target.constraints() == 3 && o.redundancy != Redundancy::Posture,
                }),
            deadline: search.deadline.clone(),
            patience: if search.out_of_reach {
                Patience::THOROUGH
            } else {
                Patience::PATIENT
            },
            toward: None,
        }
    }

    /// The closest mode's options when its descents lean toward the seed:
    /// on an arm without self-motion for the target (a redundant arm
    /// slides to the nearest point of its self-motion instead).
    fn lean(&self, search: &Search) -> Option<&Closest> {
        self.options.closest.as_ref().filter(|_| !search.redundant)
    }
}

/// The state of one solve's search across attempts.
struct Search {
    /// The target lies beyond the chain's reach: no exact answer to restart
    /// for, a few attempts find the stretched pose closest to it.
    out_of_reach: bool,
    /// The chain has more joints than the target has constraints.
    redundant: bool,
    deadline: Deadline,
    /// The closest mode stops looking for nearer solutions a little before
    /// the budget, so that it returns within it.
    search_end: Deadline,
    attempts_left: u32,
    /// The cost of `Workspace::best` while no attempt has converged.
    best_cost: f64,
    iterations: u32,
    why_not: Reason,
    /// Closest mode: the nearest solution so far.
    nearest: Nearest,
    /// Attempts so far.
    attempts: u32,
    /// Attempts whose end the caller's check refused.
    refused: u32,
    /// An attempt converged (and was admitted): the answer is a solution.
    found: bool,
}

impl Search {
    fn new(setup: &Setup, target: &Target, deadline: Deadline) -> Search {
        let out_of_reach = beyond_reach(&setup.chain, target);
        Search {
            out_of_reach,
            redundant: setup.chain.dof() > target.constraints(),
            search_end: deadline.share(CLOSEST_SHARE),
            deadline,
            attempts_left: if out_of_reach {
                OUT_OF_REACH_ATTEMPTS
            } else {
                u32::MAX
            },
            best_cost: f64::INFINITY,
            iterations: 0,
            why_not: Reason::IterationCap,
            nearest: Nearest::new(),
            attempts: 0,
            refused: 0,
            found: false,
        }
    }

    /// Takes in an attempt that ended with `ws.q`; true when the search is
    /// over (solved, settled, out of attempts or of time).
    fn done(
        &mut self,
        setup: &Setup,
        descent: &Descent,
        ws: &mut Workspace,
        seed: &[f64],
        attempt: Attempt,
    ) -> bool {
        self.attempts += 1;
        self.attempts_left -= 1;
        self.found |= attempt.converged;
        self.iterations += attempt.iterations;
        let settled = match (&setup.options.closest, attempt.converged) {
            (Some(c), true) => {
                let aim = Aim {
                    seed,
                    weights: &setup.weights,
                    slide: self.redundant,
                };
                self.iterations += aim.consider(descent, ws, self.iterations, &mut self.nearest);
                self.nearest.settled(self.iterations, c.patience)
            }
            (None, true) => {
                ws.best.copy_from_slice(&ws.q);
                true
            }
            (Some(c), false) if self.nearest.distance.is_finite() => {
                self.nearest.settled(self.iterations, c.patience)
            }
            (_, false) => {
                self.keep_if_better(ws, attempt.cost, attempt.end);
                false
            }
        };
        if settled || !setup.options.restarts || self.attempts_left == 0 {
            return true;
        }
        if self.deadline.passed() {
            self.why_not = Reason::TimeBudget;
            return true;
        }
        self.nearest.distance.is_finite() && self.search_end.passed()
    }

    /// The pull toward the seed of the next closest-mode attempt: none once
    /// [`UNPULLED_AFTER`] attempts found no solution at all (on a target
    /// with a small basin the pull can keep the descent out of it), so
    /// that the closest mode finds a solution wherever the plain one does.
    fn pull(&self) -> f64 {
        if self.nearest.distance.is_finite() || self.attempts < UNPULLED_AFTER {
            SEED_PULL
        } else {
            0.0
        }
    }

    /// Keeps a failed attempt's end as the answer when it is the best one
    /// yet and no attempt has converged.
    fn keep_if_better(&mut self, ws: &mut Workspace, cost: f64, end: Reason) {
        if cost < self.best_cost && self.nearest.distance.is_infinite() {
            self.best_cost = cost;
            ws.best.copy_from_slice(&ws.q);
            self.why_not = end;
        }
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
