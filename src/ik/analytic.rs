//! Analytic hip-knee solver: a yaw or roll joint, then two parallel joints, in closed form.

use super::{Common, IkError, Solution, Target};
use crate::model::Chain;

/// Which of the two knee (elbow) solutions to take.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Bend {
    /// The solution closest to the seed (smooth tracking).
    #[default]
    Closest,
    /// Knee angle positive about its axis.
    Positive,
    /// Knee angle negative about its axis.
    Negative,
    /// The knee points towards this point (base frame), like the pole
    /// target of a two-bone IK.
    Pole(nalgebra::Vector3<f64>),
}

/// Options of the analytic solver.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AnalyticOptions {
    pub bend: Bend,
    /// Approach pitch (rad) for arms with a wrist pitch joint when the target
    /// has no orientation; `None` keeps the seed's pitch.
    pub pitch: Option<f64>,
}

#[derive(Debug, Clone)]
pub struct AnalyticSolver {
    chain: Chain,
    options: AnalyticOptions,
    common: Common,
}

impl AnalyticSolver {
    pub fn new(chain: &Chain, options: AnalyticOptions, common: Common) -> Result<Self, IkError> {
        Ok(AnalyticSolver {
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
