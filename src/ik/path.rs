//! A Cartesian path known whole before the arm moves, solved whole.
//!
//! A target streamed one at a time can only be solved from where the arm
//! is, and where a path forks (a singular pose, a piece of the self-motion
//! that the joint limits cut off ahead) the solve has nothing to choose
//! the side by: some later target may then be out of reach on the side it
//! took, and the arm must swing across (benches/README.md, "Why no rule
//! that solves target by target meets the goal on every path"). When the
//! whole path is given, the side can be chosen by what comes after.
//!
//! The search keeps a few candidate configurations per target, as the
//! ladder graphs of Cartesian planners do (ROS-Industrial's Descartes):
//! each candidate of one target is continued to the next by solves
//! seeded from it, once as it is and a few times jittered along a
//! random direction, so both sides of a fork and the width of the
//! self-motion are tried. Only continuations within the per-joint step
//! count. The candidates kept are spread out (farthest first), so a
//! branch that ends at a limit does not take all the others with it. At
//! the end the surviving candidate with the shortest joint path is
//! traced back, and smoothed along the self-motion (`smooth`: picked
//! among jittered candidates, neighbouring answers zig-zag a little,
//! which the arm's acceleration limits turn into lag). Every answer is
//! one the solver converged on, within the joint limits, each a step
//! within `max_step` of the one before.

mod smooth;

use super::{Admissible, IkError, JacobianOptions, Rng, Solver, Target};
use crate::model::{Chain, JointKind, wrap_angle};
use smooth::Smoothing;

/// How widely [`solve_path`] searches.
#[derive(Debug, Clone, PartialEq)]
pub struct PathOptions {
    /// Candidates kept per target.
    pub candidates: usize,
    /// Jittered solves per candidate and target, besides the plain one.
    pub jitters: usize,
    /// How far a jittered seed is moved from its candidate (rad or m,
    /// the largest joint change).
    pub jitter: f64,
    /// The largest change of each joint from one target to the next: the
    /// path's answers never step further (one value per joint).
    pub max_step: Vec<f64>,
    /// When the targets are due and how fast each joint may move: a step
    /// is then bounded by the time to the target too, so a path slow in
    /// one part and fast in another is held to each part's own pace.
    pub timing: Option<PathTiming>,
    /// Seeds the jitter, so a path is always solved the same way.
    pub rng_seed: u64,
    /// Sweeps of smoothing over the path found (`smooth`): each solves
    /// every inner target once more.
    pub smooth_sweeps: usize,
    /// Answers with less room than this (m) beyond the check's margin
    /// ([`Admissible::clearance`]) cost more, the nearer the more (at
    /// the margin as much as a step at its full bound): of the continuous
    /// paths the one that keeps clear is
    /// found, and smoothing never brings an answer nearer. 0: only the
    /// check's verdict counts.
    pub clearance_band: f64,
}

/// The targets' times and the joints' speed limits (see
/// [`PathOptions::timing`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PathTiming {
    /// When each target is due (s), each later than the one before.
    pub times: Vec<f64>,
    /// The fastest each joint may move (rad/s or m/s, one per joint).
    pub speed: Vec<f64>,
}

impl PathOptions {
    /// The search's defaults, with every joint's step limited to `step`.
    pub fn with_step(chain: &Chain, step: f64) -> PathOptions {
        PathOptions {
            candidates: 24,
            jitters: 3,
            jitter: step,
            max_step: vec![step; chain.dof()],
            timing: None,
            rng_seed: 1,
            smooth_sweeps: 4,
            clearance_band: JacobianOptions::default().clearance_band,
        }
    }
}

/// A path solved whole.
#[derive(Debug, Clone, PartialEq)]
pub struct PathSolution {
    /// One configuration per target, in order.
    pub q: Vec<Vec<f64>>,
    /// The largest change of one joint between two successive answers.
    pub largest_step: f64,
    /// Solves run in all.
    pub solves: usize,
}

/// Why a path could not be solved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    #[error("the path has no targets")]
    Empty,
    #[error("target {index} of the path: {source}")]
    Target { index: usize, source: IkError },
    /// Every branch followed so far ends before target `index` (counted
    /// from 0): no answer the solver converges on within the joint limits
    /// is a step from one to the target before (from the start, for the
    /// first).
    #[error(
        "target {index} of {count}: no answer within the joint limits reaches it continuously from the path before it"
    )]
    Broken { index: usize, count: usize },
    /// As [`PathError::Broken`], and answers that would have continued
    /// the path were refused by the check ([`Admissible`]: in collision,
    /// in the application).
    #[error(
        "target {index} of {count}: every answer that reaches it continuously from the path before it is refused by the check"
    )]
    Inadmissible { index: usize, count: usize },
    #[error("max_step has {got} values for {expected} joints")]
    StepCount { expected: usize, got: usize },
    #[error("timing: {got} {what} for {expected}")]
    TimingCount {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    /// Target `index`'s time is not after the one before it.
    #[error("timing: target {index} is due at {time} s, not after the target before it")]
    TimeOrder { index: usize, time: f64 },
}

/// One candidate answer: its joints, the candidate of the target before
/// it came from, and the joint path's cost so far ([`step_cost`]).
#[derive(Debug, Clone)]
struct Node {
    q: Vec<f64>,
    parent: usize,
    cost: f64,
}

/// Solves `targets` in order as one continuous joint path from `start`
/// (the arm's pose; the first target is solved from it, and may be any
/// distance away). `solver` should be the one the arm tracks with, so the
/// answers are those it would give, picked among.
pub fn solve_path(
    solver: &mut Solver,
    targets: Vec<Target>,
    start: &[f64],
    opts: PathOptions,
) -> Result<PathSolution, PathError> {
    let mut search = PathSearch::new(solver.chain(), targets, start, opts)?;
    while search.step(solver, usize::MAX, &mut Unchecked)? == Progress::Searching {}
    Ok(search.finish())
}

/// Admits every answer: a search with nothing to check but the joint
/// limits.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unchecked;

impl Admissible for Unchecked {
    fn admits(&mut self, _q: &[f64], _reaches: bool) -> bool {
        true
    }
}

/// Whether a [`PathSearch`] has more to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    Searching,
    Done,
}

/// [`solve_path`] a few solves at a time, so a control loop can search
/// between its ticks and never miss one (the node core does).
#[derive(Debug, Clone)]
pub struct PathSearch {
    chain: Chain,
    targets: Vec<Target>,
    opts: PathOptions,
    /// Each joint's bound on the step into each target (the first's only
    /// weighs its cost).
    bounds: Vec<Vec<f64>>,
    rng: Rng,
    /// The candidates of each target solved so far (the first: the start).
    layers: Vec<Vec<Node>>,
    /// The next layer, as far as it is built: from which candidate of the
    /// last layer, and which of its solves, it goes on.
    next: Vec<Node>,
    at: (usize, usize),
    /// Whether the check refused an answer that would have continued the
    /// path into the layer being built.
    refused: bool,
    /// Once every target has candidates: the cheapest path, smoothing.
    smoothing: Option<Smoothing>,
    solves: usize,
    /// Scratch for the check's clearance gradient.
    gradient: Vec<f64>,
}

impl PathSearch {
    pub fn new(
        chain: &Chain,
        targets: Vec<Target>,
        start: &[f64],
        opts: PathOptions,
    ) -> Result<PathSearch, PathError> {
        if opts.max_step.len() != chain.dof() {
            return Err(PathError::StepCount {
                expected: chain.dof(),
                got: opts.max_step.len(),
            });
        }
        if targets.is_empty() {
            return Err(PathError::Empty);
        }
        let bounds = step_bounds(&opts, targets.len())?;
        let root = Node {
            q: start.to_vec(),
            parent: 0,
            cost: 0.0,
        };
        Ok(PathSearch {
            chain: chain.clone(),
            targets,
            bounds,
            rng: Rng::new(opts.rng_seed),
            opts,
            layers: vec![vec![root]],
            next: Vec::new(),
            at: (0, 0),
            refused: false,
            smoothing: None,
            solves: 0,
            gradient: Vec::new(),
        })
    }

    /// Targets solved so far, and in all.
    pub fn solved(&self) -> (usize, usize) {
        (self.layers.len() - 1, self.targets.len())
    }

    /// Runs at most `budget` solves (at least one) of the search. Only
    /// answers `check` admits are kept (in the node: clear of
    /// collisions), so where some of the self-motion collides the path
    /// goes through the rest of it.
    pub fn step(
        &mut self,
        solver: &mut Solver,
        budget: usize,
        check: &mut dyn Admissible,
    ) -> Result<Progress, PathError> {
        let mut left = budget.max(1);
        loop {
            if self.layers.len() > self.targets.len() && self.smoothing.is_none() {
                let (sweeps, band) = (self.opts.smooth_sweeps, self.opts.clearance_band);
                self.smoothing = Some(Smoothing::new(self.cheapest(), sweeps, band));
            }
            if self.smoothing.as_ref().is_some_and(Smoothing::done) {
                return Ok(Progress::Done);
            }
            if left == 0 {
                return Ok(Progress::Searching);
            }
            left -= 1;
            match &mut self.smoothing {
                Some(s) => {
                    self.solves += 1;
                    s.one(&self.chain, solver, &self.targets, &self.bounds, check)?;
                }
                None => self.solve_one(solver, check)?,
            }
        }
    }

    /// One solve of the layer being built; a finished layer is spread and
    /// kept.
    fn solve_one(
        &mut self,
        solver: &mut Solver,
        check: &mut dyn Admissible,
    ) -> Result<(), PathError> {
        let index = self.layers.len() - 1;
        let (parent, j) = self.at;
        let from = &self.layers[index][parent];
        let seed = if j == 0 {
            from.q.clone()
        } else {
            jittered(&self.chain, &mut self.rng, self.opts.jitter, &from.q)
        };
        self.solves += 1;
        let s = solver
            .solve(&self.targets[index], &seed)
            .map_err(|source| PathError::Target { index, source })?;
        // The first target may be any distance from the start; each after
        // it a step from an answer to the one before.
        let from = &self.layers[index][parent];
        let bound = &self.bounds[index];
        let continuous = index == 0 || within(&self.chain, &from.q, &s.q, bound);
        if s.status.is_converged() && continuous {
            if check.admits(&s.q, true) {
                let near = nearness(check, &s.q, self.opts.clearance_band, &mut self.gradient);
                self.next.push(Node {
                    cost: from.cost + step_cost(&self.chain, &from.q, &s.q, bound) + near,
                    q: s.q,
                    parent,
                });
            } else {
                self.refused = true;
            }
        }
        self.at = if j < self.opts.jitters {
            (parent, j + 1)
        } else {
            (parent + 1, 0)
        };
        if self.at.0 < self.layers[index].len() {
            return Ok(());
        }
        self.at = (0, 0);
        let count = self.targets.len();
        if self.next.is_empty() {
            return Err(match self.refused {
                true => PathError::Inadmissible { index, count },
                false => PathError::Broken { index, count },
            });
        }
        self.refused = false;
        let layer = spread(&self.chain, &self.opts, std::mem::take(&mut self.next));
        self.layers.push(layer);
        Ok(())
    }

    /// The path found: the surviving candidate with the shortest joint
    /// path, traced back and smoothed. Call once [`PathSearch::step`]
    /// said [`Progress::Done`].
    pub fn finish(self) -> PathSolution {
        let q = match self.smoothing {
            Some(s) if s.done() => s.q,
            _ => panic!("PathSearch::finish before the search was done"),
        };
        let largest_step = q
            .windows(2)
            .map(|w| largest_step(&self.chain, &w[0], &w[1]))
            .fold(0.0, f64::max);
        PathSolution {
            q,
            largest_step,
            solves: self.solves,
        }
    }

    /// The surviving candidate of the last target with the shortest joint
    /// path, traced back to the first target.
    fn cheapest(&self) -> Vec<Vec<f64>> {
        let last = &self.layers[self.layers.len() - 1];
        let mut k = (0..last.len())
            .min_by(|&a, &b| last[a].cost.total_cmp(&last[b].cost))
            .expect("a finished layer has a candidate");
        let mut q = Vec::with_capacity(self.targets.len());
        for layer in self.layers[1..].iter().rev() {
            q.push(layer[k].q.clone());
            k = layer[k].parent;
        }
        q.reverse();
        q
    }
}

/// Each joint's bound on the step into each of `count` targets: its
/// `max_step`, and with a timing no more than its speed allows in the
/// time from the target before. The first target's step, from the
/// start, is not held to its bound, only costed by it (the answers
/// nearest the arm are preferred).
fn step_bounds(opts: &PathOptions, count: usize) -> Result<Vec<Vec<f64>>, PathError> {
    let dof = opts.max_step.len();
    let mut bounds = vec![opts.max_step.clone(); count];
    let Some(timing) = &opts.timing else {
        return Ok(bounds);
    };
    for (what, expected, got) in [
        ("times", count, timing.times.len()),
        ("speeds", dof, timing.speed.len()),
    ] {
        if got != expected {
            return Err(PathError::TimingCount {
                what,
                expected,
                got,
            });
        }
    }
    for (index, w) in timing.times.windows(2).enumerate() {
        let gap = w[1] - w[0];
        // A NaN is refused too.
        if gap.is_nan() || gap <= 0.0 {
            return Err(PathError::TimeOrder {
                index: index + 1,
                time: w[1],
            });
        }
        for (b, v) in bounds[index + 1].iter_mut().zip(&timing.speed) {
            *b = b.min(v * gap);
        }
    }
    Ok(bounds)
}

/// `q` moved along a random direction by up to `a` per joint, kept
/// within the joint limits.
fn jittered(chain: &Chain, rng: &mut Rng, a: f64, q: &[f64]) -> Vec<f64> {
    q.iter()
        .zip(&chain.joints)
        .map(|(&x, j)| {
            let moved = x + rng.range(-a, a);
            if j.kind == JointKind::Continuous {
                moved
            } else {
                moved.clamp(j.limits.lower, j.limits.upper)
            }
        })
        .collect()
}

/// At most `candidates` of `nodes`, spread out: the one with the shortest
/// path first, then each time the one farthest from those kept; answers
/// closer than a hundredth of the jitter to a kept one are the same
/// answer.
fn spread(chain: &Chain, opts: &PathOptions, mut nodes: Vec<Node>) -> Vec<Node> {
    let best = (0..nodes.len())
        .min_by(|&a, &b| nodes[a].cost.total_cmp(&nodes[b].cost))
        .expect("spread of no candidates");
    let mut kept = vec![nodes.swap_remove(best)];
    let mut gap: Vec<f64> = nodes
        .iter()
        .map(|n| largest_step(chain, &n.q, &kept[0].q))
        .collect();
    let same = opts.jitter * 0.01;
    while kept.len() < opts.candidates {
        let Some(far) = (0..nodes.len()).max_by(|&a, &b| gap[a].total_cmp(&gap[b])) else {
            break;
        };
        if gap[far] <= same {
            break;
        }
        let n = nodes.swap_remove(far);
        gap.swap_remove(far);
        for (g, m) in gap.iter_mut().zip(&nodes) {
            *g = g.min(largest_step(chain, &m.q, &n.q));
        }
        kept.push(n);
    }
    kept
}

/// What a step from `a` to `b` costs: the square of the largest share of
/// its bound any joint uses. Squared, so a path that moves evenly costs
/// less than one with the same length in a few fast steps, which the arm
/// would trail.
fn step_cost(chain: &Chain, a: &[f64], b: &[f64], max: &[f64]) -> f64 {
    let share = chain
        .joints
        .iter()
        .zip(a.iter().zip(b))
        .zip(max)
        .map(|((j, (x, y)), m)| joint_change(j.kind, *x, *y) / m)
        .fold(0.0, f64::max);
    share * share
}

/// What being near the check's margin costs at `q`: the square of the
/// share of `band` that its room beyond the margin lacks (0 outside the
/// band, 1 at the margin: as much as a step at its full bound, so a path
/// hugging an obstacle costs more than one that moves a little more to
/// keep off it).
/// `gradient` is scratch space for the check.
fn nearness(check: &mut dyn Admissible, q: &[f64], band: f64, gradient: &mut Vec<f64>) -> f64 {
    if band <= 0.0 {
        return 0.0;
    }
    gradient.resize(q.len(), 0.0);
    match check.clearance(q, band, gradient) {
        Some(room) => {
            let lack = ((band - room) / band).max(0.0);
            lack * lack
        }
        None => 0.0,
    }
}

/// Every joint of `b` within its `max` of `a`.
fn within(chain: &Chain, a: &[f64], b: &[f64], max: &[f64]) -> bool {
    chain
        .joints
        .iter()
        .zip(a.iter().zip(b))
        .zip(max)
        .all(|((j, (x, y)), m)| joint_change(j.kind, *x, *y) <= *m)
}

/// How far one joint moves from `x` to `y`: the shorter way round for a
/// continuous joint.
fn joint_change(kind: JointKind, x: f64, y: f64) -> f64 {
    signed_change(kind, x, y).abs()
}

/// The change of one joint from `x` to `y`, with its sign: the shorter
/// way round for a continuous joint.
fn signed_change(kind: JointKind, x: f64, y: f64) -> f64 {
    if kind == JointKind::Continuous {
        wrap_angle(y - x)
    } else {
        y - x
    }
}

/// The largest change of one joint between two configurations (rad or
/// m; continuous joints the short way round).
pub fn largest_step(chain: &Chain, a: &[f64], b: &[f64]) -> f64 {
    chain
        .joints
        .iter()
        .zip(a.iter().zip(b))
        .map(|(j, (x, y))| joint_change(j.kind, *x, *y))
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests;
