//! FABRIK: forward and backward reaching on joint positions, mapped back to hinge angles.

use super::{Common, IkError, Solution, Target};
use crate::model::Chain;

use super::Start;

/// Options of the FABRIK solver.
#[derive(Debug, Clone, PartialEq)]
pub struct FabrikOptions {
    pub max_iterations: u32,
    /// Stop as soon as the position error is below this (m); `None`: the
    /// common position tolerance.
    pub epsilon: Option<f64>,
    /// Warm start from the seed, or reset to a rest pose each solve.
    pub start: Start,
}

impl Default for FabrikOptions {
    fn default() -> Self {
        FabrikOptions {
            max_iterations: 200,
            epsilon: None,
            start: Start::Warm,
        }
    }
}

#[derive(Debug, Clone)]
pub struct FabrikSolver {
    chain: Chain,
    options: FabrikOptions,
    common: Common,
}

impl FabrikSolver {
    pub fn new(chain: &Chain, options: FabrikOptions, common: Common) -> Result<Self, IkError> {
        Ok(FabrikSolver {
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
