//! Constrained Jacobian solver (damped least squares / Levenberg-Marquardt).

use super::{Common, IkError, Solution, Target};
use crate::model::Chain;

/// Options of the constrained Jacobian solver.
#[derive(Debug, Clone, PartialEq)]
pub struct JacobianOptions {
    /// Wall-clock budget for one solve, restarts included.
    pub budget: std::time::Duration,
    /// Iterations of one attempt before a restart from a random seed.
    pub max_iterations: u32,
    /// Restart from random seeds while the budget lasts.
    pub restarts: bool,
    /// Starting Levenberg-Marquardt damping.
    pub initial_damping: f64,
    /// Rest pose the null-space term pulls towards on redundant arms
    /// (`None`: the middle of the limits).
    pub rest: Option<Vec<f64>>,
    /// Gain of the null-space pull (0 disables it).
    pub null_space_gain: f64,
    /// Seed of the restart generator (runs are reproducible).
    pub rng_seed: u64,
}

impl Default for JacobianOptions {
    fn default() -> Self {
        JacobianOptions {
            budget: std::time::Duration::from_millis(5),
            max_iterations: 100,
            restarts: true,
            initial_damping: 1e-3,
            rest: None,
            null_space_gain: 0.0,
            rng_seed: 0x5eed,
        }
    }
}

#[derive(Debug, Clone)]
pub struct JacobianSolver {
    chain: Chain,
    options: JacobianOptions,
    common: Common,
}

impl JacobianSolver {
    pub fn new(chain: &Chain, options: JacobianOptions, common: Common) -> Result<Self, IkError> {
        Ok(JacobianSolver {
            chain: chain.clone(),
            options,
            common,
        })
    }

    pub fn chain(&self) -> &Chain {
        &self.chain
    }

    pub fn solve(&mut self, target: &Target, seed: &[f64]) -> Solution {
        let _ = (&self.options, &self.common, target, seed);
        todo!()
    }
}
