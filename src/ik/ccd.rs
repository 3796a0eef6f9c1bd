//! Cyclic coordinate descent (CCD).

use super::{Common, IkError, Solution, Target};
use crate::model::Chain;

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
}

impl Default for CcdOptions {
    fn default() -> Self {
        CcdOptions {
            max_iterations: 200,
            epsilon: None,
            greediness: 1.0,
            incremental: false,
            start: Start::Warm,
        }
    }
}

#[derive(Debug, Clone)]
pub struct CcdSolver {
    chain: Chain,
    options: CcdOptions,
    common: Common,
}

impl CcdSolver {
    pub fn new(chain: &Chain, options: CcdOptions, common: Common) -> Result<Self, IkError> {
        Ok(CcdSolver {
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
