//! The options of the constrained Jacobian solver, and their checks.

use super::Redundancy;
use crate::ik::{Clock, IkError};
use crate::model::Chain;
use std::time::Duration;

/// The default null-space gain. Measured on the 60 s track sets of the
/// Panda and the xArm7 (benches/README.md, Track sets): with the limits
/// pull in shares of the range, 0.04-0.06 keep both without a jump on
/// the sets of seed 7; 0.03 left the Panda 61 mm behind.
pub const DEFAULT_NULL_SPACE_GAIN: f64 = 0.05;

/// The default clearance band (m): a redundant arm's self-motion is
/// steered away from what comes within this much of the collision margin.
pub const DEFAULT_CLEARANCE_BAND: f64 = 0.05;

/// Options of the constrained Jacobian solver.
#[derive(Debug, Clone, PartialEq)]
pub struct JacobianOptions {
    /// Time budget for one solve, restarts included, counted on `clock`.
    pub budget: Duration,
    /// The clock the budget is counted on: wall time (a control loop's
    /// deadline, the default) or the thread's own time (a benchmark's
    /// verdict that does not depend on the machine's load).
    pub clock: Clock,
    /// Iterations of one attempt before a restart from a random seed.
    pub max_iterations: u32,
    /// Restart from random seeds while the budget lasts.
    pub restarts: bool,
    /// Starting Levenberg-Marquardt damping.
    pub initial_damping: f64,
    /// What a redundant arm's self-motion is steered toward in the task's
    /// null space, on every solve (see [`Redundancy`]).
    pub redundancy: Redundancy,
    /// Rest pose of [`Redundancy::Posture`] (`None`: the middle of the
    /// limits).
    pub rest: Option<Vec<f64>>,
    /// Gain of the null-space pull: the fraction of the way to the rest
    /// pose ([`Redundancy::Posture`]) the first step of a solve moves along
    /// the self-motion, or ([`Redundancy::Limits`]) the pull in rad of a
    /// joint `s` of the way from its middle to a limit, `k s/(1 - s²)²`;
    /// each later step half as much (0 disables it).
    pub null_space_gain: f64,
    /// Collision-aware solves of a redundant arm ([`crate::ik::Solver::solve_admissible`]
    /// with a check that measures distances, [`crate::ik::Admissible::clearance`]):
    /// when the closest pair comes within this much (m) of the margin, the
    /// self-motion is also steered up the distance's gradient, harder the
    /// nearer it is, beside the [`Redundancy`] objective; farther away it
    /// costs nothing. 0 disables it.
    pub clearance_band: f64,
    /// Largest change of one joint in one step (rad or m): keeps a step
    /// computed near a singularity from flinging the arm around.
    pub max_step: f64,
    /// Seed of the restart generator (runs are reproducible).
    pub rng_seed: u64,
    /// Closest mode: keep searching after the first solution and return
    /// the one nearest the seed (`None`: the first solution found).
    pub closest: Option<Closest>,
}

/// The closest mode: among the solutions inside the limits, the one whose
/// joint-space distance to the seed (`sqrt(Σ wᵢ (qᵢ - seedᵢ)²)`, see
/// [`crate::ik::metric::joint_distance`]) is smallest.
///
/// The search restarts after each solution: every revolute joint is turned
/// by whole turns toward the seed, a redundant arm slides along its
/// self-motion toward the seed, an arm without self-motion leans each
/// descent toward the seed (and drops one that is converging farther than
/// the nearest solution known), and the search stops when
/// [`Closest::patience`] iterations brought no nearer solution, or at 90 %
/// of the budget. It is a search, not a proof: the answer is the nearest
/// solution found.
#[derive(Debug, Clone, PartialEq)]
pub struct Closest {
    /// Weight of each joint in the distance, in chain order (empty: all
    /// 1). A weight of 0 leaves a joint out of the distance.
    pub weights: Vec<f64>,
    /// Iterations without a nearer solution after which the search ends.
    /// Measured on the shared arms from the mid seed (median |q - seed|,
    /// median time): 350 gives ur5 3.40 rad in 0.22 ms, panda 2.76 in
    /// 0.34 ms, so101 2.51 in 0.14 ms; more finds little nearer (ur5 3.396
    /// at 4000, in 2 ms), less loses it fast (ur5 3.46 at 150).
    pub patience: u32,
}

impl Default for Closest {
    fn default() -> Self {
        Closest {
            weights: Vec::new(),
            patience: 350,
        }
    }
}

impl Default for JacobianOptions {
    fn default() -> Self {
        JacobianOptions {
            budget: Duration::from_millis(5),
            clock: Clock::Wall,
            max_iterations: 60,
            restarts: true,
            initial_damping: 1e-3,
            redundancy: Redundancy::default(),
            rest: None,
            null_space_gain: DEFAULT_NULL_SPACE_GAIN,
            clearance_band: DEFAULT_CLEARANCE_BAND,
            max_step: 1.0,
            rng_seed: 0x5eed,
            closest: None,
        }
    }
}

impl JacobianOptions {
    pub(super) fn validate(&self, chain: &Chain) -> Result<(), IkError> {
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
        if !(self.clearance_band.is_finite() && self.clearance_band >= 0.0) {
            return Err(bad(
                "clearance_band",
                format!("{} is not a distance of 0 or more", self.clearance_band),
            ));
        }
        if !(self.max_step.is_finite() && self.max_step > 0.0) {
            return Err(bad(
                "max_step",
                format!("{} is not positive", self.max_step),
            ));
        }
        if let Some(c) = &self.closest {
            c.validate(chain)?;
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

impl Closest {
    fn validate(&self, chain: &Chain) -> Result<(), IkError> {
        let w = &self.weights;
        if !w.is_empty() && w.len() != chain.dof() {
            return Err(bad(
                "closest.weights",
                format!("{} values for {} joints", w.len(), chain.dof()),
            ));
        }
        if let Some((i, v)) = w
            .iter()
            .enumerate()
            .find(|(_, v)| !(v.is_finite() && **v >= 0.0))
        {
            return Err(bad(
                "closest.weights",
                format!(
                    "the weight of '{}' is {v}; weights are finite and not negative",
                    chain.joints[i].name
                ),
            ));
        }
        if !w.is_empty() && w.iter().all(|v| *v == 0.0) {
            return Err(bad(
                "closest.weights",
                "every weight is 0: no distance to minimise".into(),
            ));
        }
        if self.patience == 0 {
            return Err(bad("closest.patience", "must be at least 1".into()));
        }
        Ok(())
    }
}

fn bad(option: &'static str, why: String) -> IkError {
    IkError::BadOption {
        solver: "jacobian",
        option,
        why,
    }
}
