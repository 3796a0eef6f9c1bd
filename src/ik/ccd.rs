//! Cyclic coordinate descent (CCD).
//!
//! Each iteration walks the joints from the tip to the base and turns each
//! one, about its own current axis, by the angle that brings the tip closest
//! to the target (a prismatic joint slides by the error along its axis). Each
//! step is clamped to the joint's bounds before the next joint is looked at,
//! so limits hold inside the iteration, not only at the end.
//!
//! When the target asks for an orientation, each turn is the best one for the
//! weighted sum of the position and orientation errors (the weights of the
//! shared metric), so CCD remains an exact coordinate descent on that sum.
//! On a 5-DOF arm not every pose is reachable; position then competes with
//! orientation as the weights say.

use super::heuristic::{Plan, Search, Sweep, Turn, check_plan};
use super::{Bounds, Common, IkError, Solution, Target};
use crate::model::{Chain, Frames, JointKind};

use super::Start;

/// Options of the CCD solver.
#[derive(Debug, Clone, PartialEq)]
pub struct CcdOptions {
    pub max_iterations: u32,
    /// Stop as soon as the position error is below this (m); `None`: the
    /// common position tolerance.
    pub epsilon: Option<f64>,
    /// Fraction of each joint's ideal turn applied per step, in (0, 1].
    pub greediness: f64,
    /// Raise the greediness linearly to 1 by the last iteration.
    pub incremental: bool,
    /// Warm start from the seed, or reset to a rest pose each solve.
    pub start: Start,
    /// Restart from a random pose within the bounds when the sweeps stop
    /// making progress (a joint limit or a local minimum); the restarts draw
    /// on the same iteration cap. Off: stop at the first stall.
    pub restarts: bool,
    /// After each sweep, repeat its step (doubling) while the error keeps
    /// falling: a pattern move, not part of the classic method, that cuts
    /// the iterations several-fold near full stretch and joint limits.
    /// Off: the classic method alone.
    pub pattern_moves: bool,
}

impl Default for CcdOptions {
    fn default() -> Self {
        CcdOptions {
            max_iterations: 200,
            epsilon: None,
            greediness: 1.0,
            incremental: false,
            start: Start::Warm,
            restarts: true,
            pattern_moves: true,
        }
    }
}

impl CcdOptions {
    /// The greediness of iteration `k` (from 0): constant, or rising
    /// linearly from `greediness` to 1 at the last iteration.
    pub fn greediness_at(&self, k: u32) -> f64 {
        if !self.incremental {
            return self.greediness;
        }
        if self.max_iterations <= 1 {
            return 1.0;
        }
        let t = (f64::from(k) / f64::from(self.max_iterations - 1)).min(1.0);
        self.greediness + (1.0 - self.greediness) * t
    }

    fn plan(&self) -> Plan<'_> {
        Plan {
            max_iterations: self.max_iterations,
            epsilon: self.epsilon,
            start: &self.start,
            restarts: self.restarts,
            pattern_moves: self.pattern_moves,
        }
    }
}

#[derive(Debug, Clone)]
pub struct CcdSolver {
    chain: Chain,
    options: CcdOptions,
    common: Common,
    search: Search,
    sweep: CcdSweep,
}

impl CcdSolver {
    pub fn new(chain: &Chain, options: CcdOptions, common: Common) -> Result<Self, IkError> {
        let g = options.greediness;
        if !(g > 0.0 && g <= 1.0) {
            return Err(IkError::BadOption {
                solver: "ccd",
                option: "greediness",
                why: format!("{g} is not in (0, 1]"),
            });
        }
        check_plan("ccd", &options.plan(), chain.dof())?;
        Ok(CcdSolver {
            chain: chain.clone(),
            search: Search::new(chain, &common, &options.start),
            sweep: CcdSweep {
                frames: Frames::new(chain),
                options: options.clone(),
            },
            options,
            common,
        })
    }

    pub fn chain(&self) -> &Chain {
        &self.chain
    }

    pub fn solve(&mut self, target: &Target, seed: &[f64]) -> Solution {
        let plan = self.options.plan();
        self.search.run(
            &self.chain,
            &self.common,
            &plan,
            target,
            seed,
            &mut self.sweep,
        )
    }
}

/// One CCD iteration's scratch memory.
#[derive(Debug, Clone)]
struct CcdSweep {
    frames: Frames,
    options: CcdOptions,
}

impl Sweep for CcdSweep {
    fn sweep(
        &mut self,
        chain: &Chain,
        bounds: &Bounds,
        target: &Target,
        q: &mut [f64],
        iteration: u32,
    ) {
        let greediness = self.options.greediness_at(iteration);
        let wp = target.position_weight * target.position_weight;
        for i in (0..chain.dof()).rev() {
            if bounds.locked[i] {
                continue;
            }
            // Fresh frames for every joint: the joints after it just moved.
            let tip = chain.joint_frames(q, &mut self.frames);
            let axis = self.frames.axes[i];
            let pivot = self.frames.origins[i].coords;
            let error = target.position - tip.translation.vector;
            let step = match chain.joints[i].kind {
                JointKind::Prismatic => axis.dot(&error),
                JointKind::Revolute | JointKind::Continuous => {
                    let mut turn = Turn::default();
                    let from = tip.translation.vector - pivot;
                    turn.add(&axis, &from, &(target.position - pivot), wp);
                    turn.add_orientation(&axis, &tip, target);
                    turn.angle().unwrap_or(0.0)
                }
            };
            q[i] = bounds.clamp_one(i, q[i] + greediness * step);
        }
    }
}
