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
//! traced back. Every answer is one the solver converged on, within the
//! joint limits, each a step within `max_step` of the one before.

use super::{IkError, Rng, Solver, Target};
use crate::model::{Chain, JointKind, wrap_angle};

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
    while search.step(solver, usize::MAX)? == Progress::Searching {}
    Ok(search.finish())
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
    solves: usize,
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
            solves: 0,
        })
    }

    /// Targets solved so far, and in all.
    pub fn solved(&self) -> (usize, usize) {
        (self.layers.len() - 1, self.targets.len())
    }

    /// Runs at most `budget` solves (at least one) of the search.
    pub fn step(&mut self, solver: &mut Solver, budget: usize) -> Result<Progress, PathError> {
        let mut left = budget.max(1);
        while self.layers.len() <= self.targets.len() {
            if left == 0 {
                return Ok(Progress::Searching);
            }
            left -= 1;
            self.solve_one(solver)?;
        }
        Ok(Progress::Done)
    }

    /// One solve of the layer being built; a finished layer is spread and
    /// kept.
    fn solve_one(&mut self, solver: &mut Solver) -> Result<(), PathError> {
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
            self.next.push(Node {
                cost: from.cost + step_cost(&self.chain, &from.q, &s.q, bound),
                q: s.q,
                parent,
            });
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
        if self.next.is_empty() {
            return Err(PathError::Broken {
                index,
                count: self.targets.len(),
            });
        }
        let layer = spread(&self.chain, &self.opts, std::mem::take(&mut self.next));
        self.layers.push(layer);
        Ok(())
    }

    /// The path found: the surviving candidate with the shortest joint
    /// path, traced back. Call once [`PathSearch::step`] said
    /// [`Progress::Done`].
    pub fn finish(self) -> PathSolution {
        assert!(
            self.layers.len() > self.targets.len(),
            "PathSearch::finish before the search was done"
        );
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

/// Every joint of `b` within its `max` of `a`.
fn within(chain: &Chain, a: &[f64], b: &[f64], max: &[f64]) -> bool {
    chain
        .joints
        .iter()
        .zip(a.iter().zip(b))
        .zip(max)
        .all(|((j, (x, y)), m)| joint_change(j.kind, *x, *y) <= *m)
}

/// The change of one joint from `x` to `y`: the shorter way round for a
/// continuous joint.
fn joint_change(kind: JointKind, x: f64, y: f64) -> f64 {
    if kind == JointKind::Continuous {
        wrap_angle(y - x).abs()
    } else {
        (y - x).abs()
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
mod tests {
    use super::*;
    use crate::ik::{Common, SolverConfig, SolverKind};

    fn arm() -> Chain {
        let urdf = concat!(env!("CARGO_MANIFEST_DIR"), "/urdf/arm.urdf");
        Chain::from_urdf_file(urdf, None, None).unwrap()
    }

    /// The tip's positions along a slow joint-space path of the project
    /// arm (200 points), with the configuration it starts in.
    fn path(chain: &Chain) -> (Vec<Target>, Vec<f64>) {
        let mid = chain.mid_configuration();
        let q = |k: usize| -> Vec<f64> {
            let t = k as f64 * 0.05;
            mid.iter()
                .enumerate()
                .map(|(i, m)| m + 0.5 * (0.3 * t + i as f64).sin())
                .collect()
        };
        let targets = (0..200)
            .map(|k| Target::position(chain.fk(&q(k)).translation.vector))
            .collect();
        (targets, q(0))
    }

    fn solver(chain: &Chain) -> Solver {
        let config = SolverConfig::default_for(SolverKind::Jacobian);
        Solver::new(chain, config, Common::default()).unwrap()
    }

    #[test]
    fn a_path_known_whole_is_solved_continuously_through_every_point() {
        let chain = arm();
        let (targets, start) = path(&chain);
        let mut opts = PathOptions::with_step(&chain, 0.1);
        opts.max_step[2] = 0.03;
        let found = solve_path(&mut solver(&chain), targets.clone(), &start, opts.clone()).unwrap();
        assert_eq!(found.q.len(), targets.len());
        for (k, (q, t)) in found.q.iter().zip(&targets).enumerate() {
            let off = (chain.fk(q).translation.vector - t.position).norm();
            assert!(off < 1e-4, "point {k}: {off} m off");
            assert!(
                q.iter()
                    .zip(&chain.joints)
                    .all(|(x, j)| (j.limits.lower..=j.limits.upper).contains(x))
            );
        }
        for w in found.q.windows(2) {
            assert!(within(&chain, &w[0], &w[1], &opts.max_step), "{w:?}");
        }
        assert!(found.largest_step <= 0.1);
    }

    /// The project arm along a joint path whose pace changes: points
    /// `k < 100` a short step apart and `0.005` s, the rest eight times
    /// that step and `0.05` s apart.
    fn paced_path(chain: &Chain) -> (Vec<Target>, Vec<f64>, Vec<f64>) {
        let mid = chain.mid_configuration();
        let q = |k: usize| -> Vec<f64> {
            let s = if k < 100 {
                0.25 * k as f64
            } else {
                25.0 + 2.0 * (k - 100) as f64
            };
            let t = s * 0.05;
            mid.iter()
                .enumerate()
                .map(|(i, m)| m + 0.5 * (0.3 * t + i as f64).sin())
                .collect()
        };
        let times = (0..200)
            .map(|k| {
                if k < 100 {
                    0.005 * k as f64
                } else {
                    0.5 + 0.05 * (k - 100) as f64
                }
            })
            .collect();
        let targets = (0..200)
            .map(|k| Target::position(chain.fk(&q(k)).translation.vector))
            .collect();
        (targets, times, q(0))
    }

    #[test]
    fn each_step_is_bounded_by_the_speed_over_its_own_time() {
        let chain = arm();
        let (targets, times, start) = paced_path(&chain);
        let speed = vec![1.0; chain.dof()];
        let timed = PathOptions {
            timing: Some(PathTiming {
                times: times.clone(),
                speed: speed.clone(),
            }),
            ..PathOptions::with_step(&chain, 0.1)
        };
        // As the node searches: the candidates try the self-motion.
        let mut s = solver(&chain);
        s.set_redundancy(crate::ik::Redundancy::Off);
        let found = solve_path(&mut s, targets.clone(), &start, timed).unwrap();
        for (k, w) in found.q.windows(2).enumerate() {
            let gap = times[k + 1] - times[k];
            let step = largest_step(&chain, &w[0], &w[1]);
            assert!(
                step <= gap * speed[0] + 1e-12,
                "step {k}: {step} rad in {gap} s"
            );
        }
        // The slow part's pace is too tight for the fast part's steps: a
        // single bound for the whole path, from its closest two points,
        // finds no path.
        let one_bound = PathOptions::with_step(&chain, 0.005);
        let e = solve_path(&mut s, targets.clone(), &start, one_bound).unwrap_err();
        assert!(
            matches!(e, PathError::Broken { index, .. } if index >= 100),
            "{e}"
        );
        let mut late = times;
        late[7] = late[6];
        let bad = PathOptions {
            timing: Some(PathTiming { times: late, speed }),
            ..PathOptions::with_step(&chain, 0.1)
        };
        let e = PathSearch::new(&chain, targets, &start, bad).unwrap_err();
        assert!(matches!(e, PathError::TimeOrder { index: 7, .. }), "{e}");
    }

    #[test]
    fn a_point_out_of_reach_breaks_the_path_there() {
        let chain = arm();
        let (mut targets, start) = path(&chain);
        targets[50] = Target::position(nalgebra::Vector3::new(5.0, 0.0, 0.0));
        let opts = PathOptions::with_step(&chain, 0.1);
        let e = solve_path(&mut solver(&chain), targets, &start, opts).unwrap_err();
        assert!(
            matches!(
                e,
                PathError::Broken {
                    index: 50,
                    count: 200
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn a_search_a_few_solves_at_a_time_finds_the_same_path() {
        let chain = arm();
        let (targets, start) = path(&chain);
        let opts = PathOptions::with_step(&chain, 0.1);
        let mut s = solver(&chain);
        let whole = solve_path(&mut s, targets.clone(), &start, opts.clone()).unwrap();
        let mut search = PathSearch::new(&chain, targets, &start, opts).unwrap();
        let mut calls = 0;
        while search.step(&mut s, 100).unwrap() == Progress::Searching {
            calls += 1;
        }
        assert!(calls > 10, "{calls}");
        assert_eq!(search.finish(), whole);
    }

    #[test]
    fn an_empty_path_and_a_step_per_joint_missing_are_refused() {
        let chain = arm();
        let opts = PathOptions::with_step(&chain, 0.1);
        let start = chain.mid_configuration();
        let e = PathSearch::new(&chain, Vec::new(), &start, opts.clone()).unwrap_err();
        assert!(matches!(e, PathError::Empty), "{e}");
        let short = PathOptions {
            max_step: vec![0.1; 2],
            ..opts
        };
        let (targets, _) = path(&chain);
        let e = PathSearch::new(&chain, targets, &start, short).unwrap_err();
        assert_eq!(e.to_string(), "max_step has 2 values for 5 joints");
    }
}
