//! Inverse kinematics: several solvers behind one interface.
//!
//! Every solver takes a [`Target`] and a seed and returns a [`Solution`]
//! whose joints are finite and inside the limits, whatever came in. Pick one
//! by [`SolverKind`] or build its options ([`SolverConfig`]), bind it to a
//! chain with [`Solver::new`] and call [`Solver::solve`] as often as needed:
//! the solver keeps its scratch memory between calls.
//!
//! The pieces every solver shares live in private modules beside them: the
//! joint bounds after per-joint modes ([`JointMode`]), the pose error and
//! the joint distance ([`Tolerance`], [`joint_distance`]), and the final
//! check that turns a joint vector into a [`Solution`].

mod analytic;
mod bounds;
mod ccd;
mod clock;
mod fabrik;
mod geo;
mod geometry;
mod heuristic;
mod jacobian;
mod metric;
mod orientation;
mod path;
mod rng;
mod solution;
mod target;

pub use analytic::{
    AXIS_TOLERANCE, AnalyticOptions, AnalyticSolver, Bend, HipKnee, Layout, approach_pitch,
};
pub use bounds::{Bounds, JointMode};
pub use ccd::{CcdOptions, CcdSolver};
pub use clock::{BudgetClock, Clock, Deadline, OwnTime};
pub use fabrik::{FabrikOptions, FabrikSolver};
pub use geo::{Family, GeoOptions, GeoSolver, GeoStructure, INTERSECTION_TOLERANCE, Pick};
pub use jacobian::{Closest, JacobianOptions, JacobianSolver, Redundancy, reach};
pub use metric::{
    PoseDeviation, Tolerance, joint_distance, orientation_angle, orientation_distance,
    orientation_error, pose_error, rotation_error,
};
pub use orientation::{Orientation, OrientationMode, Pointing, direction_from_xyz};
pub use path::{
    PathError, PathOptions, PathSearch, PathSolution, PathTiming, Progress, Unchecked,
    largest_step, solve_path,
};
pub use rng::Rng;
pub use solution::{Reason, Solution, SolveStatus};
pub use target::{QUATERNION_LENGTH_TOLERANCE, Target, quaternion_from_xyzw};

use crate::model::Chain;
use solution::{Outcome, finish, finish_with};
use std::time::Duration;
use thiserror::Error;

/// Errors that stop a solve before it starts. Everything that can be
/// answered with a best-effort pose is a [`SolveStatus`], not an error.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum IkError {
    #[error("target {field} is not finite: {value}")]
    NonFiniteTarget { field: &'static str, value: String },
    #[error("target {field} is invalid: {why}")]
    InvalidTarget { field: &'static str, why: String },
    #[error("seed has {got} values but the chain has {expected} joints")]
    SeedLength { expected: usize, got: usize },
    #[error("{count} joint modes given but the chain has {expected} joints")]
    ModeCount { expected: usize, count: usize },
    #[error("joint mode for '{joint}' is invalid: {why}")]
    BadMode { joint: String, why: String },
    #[error("the {solver} solver does not fit this chain: {why}")]
    Unsupported { solver: &'static str, why: String },
    #[error(
        "the {solver} solver cannot list every solution: it finds one per solve (the geo solver lists them all on the 6R arms it fits)"
    )]
    CannotListAll { solver: &'static str },
    #[error(
        "the {solver} solver does not solve {kind} targets (the jacobian, ccd and fabrik solvers do)"
    )]
    UnsupportedTarget {
        solver: &'static str,
        kind: &'static str,
    },
    #[error("invalid {solver} option {option}: {why}")]
    BadOption {
        solver: &'static str,
        option: &'static str,
        why: String,
    },
}

/// Which solver, by name (as on the command line and in ROS parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SolverKind {
    Jacobian,
    Analytic,
    Ccd,
    Fabrik,
    /// Closed form for 6R arms by subproblems (every solution).
    Geo,
}

impl SolverKind {
    pub const ALL: [SolverKind; 5] = [
        SolverKind::Jacobian,
        SolverKind::Analytic,
        SolverKind::Ccd,
        SolverKind::Fabrik,
        SolverKind::Geo,
    ];

    /// Refuses the target kinds the solver does not solve, naming them:
    /// the closed forms (analytic, geo) solve poses and positions, not a
    /// pointing axis with a free roll; answering one as a pose or a
    /// position would solve something nobody asked for.
    pub fn supports(self, orientation: &Orientation) -> Result<(), IkError> {
        match (self, orientation) {
            (SolverKind::Analytic | SolverKind::Geo, Orientation::Axis(_)) => {
                Err(IkError::UnsupportedTarget {
                    solver: self.name(),
                    kind: orientation.kind_name(),
                })
            }
            _ => Ok(()),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SolverKind::Jacobian => "jacobian",
            SolverKind::Analytic => "analytic",
            SolverKind::Ccd => "ccd",
            SolverKind::Fabrik => "fabrik",
            SolverKind::Geo => "geo",
        }
    }
}

impl std::str::FromStr for SolverKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        SolverKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                format!("unknown solver '{s}' (choose jacobian, analytic, ccd, fabrik or geo)")
            })
    }
}

impl std::fmt::Display for SolverKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Options common to every solver.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Common {
    /// When a pose counts as reached.
    pub tolerance: Tolerance,
    /// Per-joint mode; empty means every joint is free within its limits.
    pub modes: Vec<JointMode>,
}

/// A solver and its options, chosen at run time.
#[derive(Debug, Clone, PartialEq)]
pub enum SolverConfig {
    Jacobian(JacobianOptions),
    Analytic(AnalyticOptions),
    Ccd(CcdOptions),
    Fabrik(FabrikOptions),
    Geo(GeoOptions),
}

impl SolverConfig {
    /// The solver's default options.
    pub fn default_for(kind: SolverKind) -> SolverConfig {
        match kind {
            SolverKind::Jacobian => SolverConfig::Jacobian(JacobianOptions::default()),
            SolverKind::Analytic => SolverConfig::Analytic(AnalyticOptions::default()),
            SolverKind::Ccd => SolverConfig::Ccd(CcdOptions::default()),
            SolverKind::Fabrik => SolverConfig::Fabrik(FabrikOptions::default()),
            SolverKind::Geo => SolverConfig::Geo(GeoOptions::default()),
        }
    }

    /// Counts the solver's own time budget on `clock`; only the Jacobian
    /// solver has one (the others end by their iteration caps).
    pub fn set_clock(&mut self, clock: Clock) {
        if let SolverConfig::Jacobian(o) = self {
            o.clock = clock;
        }
    }

    /// The configuration for tracking: solves whose seed is where the arm
    /// is, one target after the other along a path (the node's). The geo
    /// solver knows every branch, so it takes the one nearest the seed
    /// ([`Pick::Closest`]): the continuous branch, where its first branch
    /// within the limits may be another from one target to the next (the
    /// arm would swing across). The other solvers already start from the
    /// seed and stay on its branch.
    pub fn for_tracking(self) -> SolverConfig {
        match self {
            SolverConfig::Geo(mut o) => {
                o.pick = Pick::Closest;
                SolverConfig::Geo(o)
            }
            other => other,
        }
    }

    pub fn kind(&self) -> SolverKind {
        match self {
            SolverConfig::Jacobian(_) => SolverKind::Jacobian,
            SolverConfig::Analytic(_) => SolverKind::Analytic,
            SolverConfig::Ccd(_) => SolverKind::Ccd,
            SolverConfig::Fabrik(_) => SolverKind::Fabrik,
            SolverConfig::Geo(_) => SolverKind::Geo,
        }
    }
}

/// One IK solver bound to one chain, with its scratch memory.
///
/// A plain enum rather than a trait object: the node's control loop calls
/// `solve` at the control rate and the match is free.
#[derive(Debug, Clone)]
pub enum Solver {
    Jacobian(Box<jacobian::JacobianSolver>),
    Analytic(Box<analytic::AnalyticSolver>),
    Ccd(ccd::CcdSolver),
    Fabrik(fabrik::FabrikSolver),
    Geo(Box<geo::GeoSolver>),
}

impl Solver {
    /// Binds a solver to `chain`. Fails when the options are invalid or, for
    /// the analytic solver, when the chain does not have the structure it
    /// solves in closed form (the error says why).
    pub fn new(chain: &Chain, config: SolverConfig, common: Common) -> Result<Solver, IkError> {
        if !common.modes.is_empty() && common.modes.len() != chain.dof() {
            return Err(IkError::ModeCount {
                expected: chain.dof(),
                count: common.modes.len(),
            });
        }
        for (m, j) in common.modes.iter().zip(&chain.joints) {
            m.validate(j)?;
        }
        Ok(match config {
            SolverConfig::Jacobian(o) => {
                Solver::Jacobian(Box::new(jacobian::JacobianSolver::new(chain, o, common)?))
            }
            SolverConfig::Analytic(o) => {
                Solver::Analytic(Box::new(analytic::AnalyticSolver::new(chain, o, common)?))
            }
            SolverConfig::Ccd(o) => Solver::Ccd(ccd::CcdSolver::new(chain, o, common)?),
            SolverConfig::Fabrik(o) => Solver::Fabrik(fabrik::FabrikSolver::new(chain, o, common)?),
            SolverConfig::Geo(o) => Solver::Geo(Box::new(geo::GeoSolver::new(chain, o, common)?)),
        })
    }

    /// Solves for `target` starting from `seed` (one value per joint; values
    /// outside the limits or NaN are brought into range first).
    pub fn solve(&mut self, target: &Target, seed: &[f64]) -> Result<Solution, IkError> {
        self.check_input(target, seed)?;
        Ok(match self {
            Solver::Jacobian(s) => s.solve(target, seed),
            Solver::Analytic(s) => s.solve(target, seed),
            Solver::Ccd(s) => s.solve(target, seed),
            Solver::Fabrik(s) => s.solve(target, seed),
            Solver::Geo(s) => s.solve(target, seed),
        })
    }

    /// A target that can be solved for and a seed with a value per joint.
    fn check_input(&self, target: &Target, seed: &[f64]) -> Result<(), IkError> {
        target.validate()?;
        self.kind().supports(&target.orientation)?;
        let expected = self.chain().dof();
        if seed.len() != expected {
            return Err(IkError::SeedLength {
                expected,
                got: seed.len(),
            });
        }
        Ok(())
    }

    /// Every solution within the limits that reaches `target` (nearest
    /// `seed` first), for the solvers that know them all (geo); the others
    /// say they cannot.
    pub fn solve_all(&mut self, target: &Target, seed: &[f64]) -> Result<Vec<Solution>, IkError> {
        self.check_input(target, seed)?;
        match self {
            Solver::Geo(s) => Ok(s.solve_all(target, seed)),
            other => Err(IkError::CannotListAll {
                solver: other.kind().name(),
            }),
        }
    }

    pub fn chain(&self) -> &Chain {
        match self {
            Solver::Jacobian(s) => s.chain(),
            Solver::Analytic(s) => s.chain(),
            Solver::Ccd(s) => s.chain(),
            Solver::Fabrik(s) => s.chain(),
            Solver::Geo(s) => s.chain(),
        }
    }

    pub fn kind(&self) -> SolverKind {
        match self {
            Solver::Jacobian(_) => SolverKind::Jacobian,
            Solver::Analytic(_) => SolverKind::Analytic,
            Solver::Ccd(_) => SolverKind::Ccd,
            Solver::Fabrik(_) => SolverKind::Fabrik,
            Solver::Geo(_) => SolverKind::Geo,
        }
    }

    /// Counts the solver's own time budget on `clock` from the next solve
    /// on (see [`SolverConfig::set_clock`]).
    pub fn set_clock(&mut self, clock: Clock) {
        if let Solver::Jacobian(s) = self {
            s.set_clock(clock);
        }
    }

    /// How near the check's margin (m) the solver starts steering an
    /// answer away from it ([`JacobianOptions::clearance_band`]); 0 for
    /// the solvers that do not steer.
    pub fn clearance_band(&self) -> f64 {
        match self {
            Solver::Jacobian(s) => s.options().clearance_band,
            _ => 0.0,
        }
    }

    /// Resolves the redundancy by `objective` from the next solve on
    /// (the Jacobian solver's; the others have no such objective).
    pub fn set_redundancy(&mut self, objective: Redundancy) {
        if let Solver::Jacobian(s) = self {
            s.set_redundancy(objective);
        }
    }
}

/// A condition a solution must meet besides its joint limits and the
/// target: clear of collisions, in the application. The solvers look on
/// (restarts, within their budget) for a solution it admits, and say
/// [`Reason::Inadmissible`] when they find none. Kept as a trait so the
/// kinematics library needs no collision library.
pub trait Admissible {
    /// True when the joint vector `q` (one value per chain joint) may be
    /// an answer. `reaches`: `q` reaches the target (a refused solution,
    /// whose reason the caller may report), rather than a best effort.
    fn admits(&mut self, q: &[f64], reaches: bool) -> bool;

    /// How much room `q` has, when it has less than `band` (m): the
    /// smallest distance over what is checked minus the clearance the
    /// check keeps (negative: closer than that), with its derivative with
    /// respect to each joint of `q` in `gradient`. The Jacobian solver
    /// steers a redundant arm's self-motion up this gradient (see
    /// [`JacobianOptions::clearance_band`]). `None` (the default): the
    /// check measures no distance, or nothing comes within the band.
    fn clearance(&mut self, _q: &[f64], _band: f64, _gradient: &mut [f64]) -> Option<f64> {
        None
    }
    /// What refused the most answers that reached their target, said for
    /// a user (the pair in collision), if any was refused: so a caller
    /// that only holds the check can say why.
    fn refusal(&self) -> Option<String> {
        None
    }
}

/// Seed of the restarts [`Solver::solve_admissible`] makes for the
/// solvers without restarts of their own (deterministic answers).
const ADMISSIBLE_SEED: u64 = 0xad31_5510;

impl Solver {
    /// [`Solver::solve`], but only a solution `check` admits counts: the
    /// Jacobian solver keeps restarting within its budget until one is;
    /// the others are restarted from random seeds within `budget`, counted
    /// on `clock` (the Jacobian solver's budget and clock are its options'). When
    /// none is found the answer is the seed with the status
    /// [`SolveStatus::BestEffort`]`(`[`Reason::Inadmissible`]`)`.
    pub fn solve_admissible(
        &mut self,
        target: &Target,
        seed: &[f64],
        check: &mut dyn Admissible,
        budget: Duration,
        clock: Clock,
    ) -> Result<Solution, IkError> {
        let deadline = Deadline::start(clock, budget);
        if let Solver::Jacobian(s) = self {
            target.validate()?;
            SolverKind::Jacobian.supports(&target.orientation)?;
            if seed.len() != s.chain().dof() {
                return Err(IkError::SeedLength {
                    expected: s.chain().dof(),
                    got: seed.len(),
                });
            }
            return Ok(s.solve_with(target, seed, Some(check)));
        }
        let first = self.solve(target, seed)?;
        if check.admits(&first.q, first.status.is_converged()) {
            return Ok(first);
        }
        let mut rng = Rng::new(ADMISSIBLE_SEED);
        let mut start = seed.to_vec();
        while !deadline.passed() {
            rng.fill_configuration(self.chain(), &mut start);
            let s = self.solve(target, &start)?;
            if s.status.is_converged() && check.admits(&s.q, true) {
                return Ok(s);
            }
        }
        let chain = self.chain();
        let bounds = Bounds::new(chain, &[]);
        Ok(finish(
            chain,
            &bounds,
            target,
            &Tolerance::default(),
            seed,
            Outcome {
                q: seed.to_vec(),
                iterations: first.iterations,
                why_not: Reason::Inadmissible,
            },
        ))
    }
}

/// Where an iterative solver starts.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Start {
    /// From the seed (usually the last solution): smooth tracking.
    #[default]
    Warm,
    /// From a rest pose every time (`None`: the middle of the limits), so
    /// the answer does not depend on history.
    Reset(Option<Vec<f64>>),
}
