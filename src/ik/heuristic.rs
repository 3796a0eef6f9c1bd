//! What the two heuristic solvers (CCD and FABRIK) share: the outer loop
//! (start pose, epsilon exit, iteration cap, pattern moves, stall detection
//! and restarts, the reason a solve stopped) and the turn of one joint that
//! best serves several weighted directions at once.
//!
//! The reason reported when the tolerance is not met: `OutOfReach` when the
//! target is farther from the first joint than the sum of the segment
//! lengths (the search then stops at its first stall), else `Stalled` when
//! an attempt stopped improving at least once, else `IterationCap`.
//!
//! Each solver supplies only its sweep, one iteration of its own method
//! ([`Sweep`]); everything around it is here so that both stop, restart and
//! report in the same way.

use super::geometry::angle_about_axis;
use super::metric::pose_error;
use super::{
    Bounds, Common, IkError, Orientation, Outcome, Reason, Rng, Solution, Start, Target, finish,
};
use crate::model::{Chain, JointKind, Transform};
use nalgebra::{Point3, Vector3};

/// Iterations without a relative improvement of [`PROGRESS`] after which an
/// attempt counts as stalled. CCD and FABRIK converge linearly, so an attempt
/// that gains less than this over several sweeps would need thousands more.
const STALL_WINDOW: u32 = 6;

/// Relative improvement of an attempt's best error that counts as progress.
const PROGRESS: f64 = 2e-3;

/// Most trials of one pattern move (the step grows up to 2^8 - 1 times).
const PATTERN_DOUBLINGS: u32 = 8;

/// Seed of the restart generator: fixed, so a solve depends only on its
/// inputs (a reset start gives the same answer for any seed).
const RESTART_SEED: u64 = 0x0ccd_0fab;

/// One iteration of a heuristic solver.
pub(crate) trait Sweep {
    /// Moves `q` one iteration towards `target`, keeping every joint within
    /// `bounds` after each change. `iteration` counts from 0 over the whole
    /// solve (restarts included), for schedules such as CCD's greediness.
    fn sweep(
        &mut self,
        chain: &Chain,
        bounds: &Bounds,
        target: &Target,
        q: &mut [f64],
        iteration: u32,
    );
}

/// The stopping rules of one solve, taken from a solver's options.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan<'a> {
    pub max_iterations: u32,
    pub epsilon: Option<f64>,
    pub start: &'a Start,
    pub restarts: bool,
    pub pattern_moves: bool,
}

/// Checks the options both heuristic solvers have.
pub(crate) fn check_plan(solver: &'static str, plan: &Plan, dof: usize) -> Result<(), IkError> {
    let bad = |option, why: String| IkError::BadOption {
        solver,
        option,
        why,
    };
    if let Some(e) = plan.epsilon
        && !(e.is_finite() && e > 0.0)
    {
        return Err(bad("epsilon", format!("{e} is not a positive length")));
    }
    if let Start::Reset(Some(rest)) = plan.start {
        if rest.len() != dof {
            return Err(bad(
                "start",
                format!("rest pose has {} values, chain has {dof}", rest.len()),
            ));
        }
        if rest.iter().any(|v| !v.is_finite()) {
            return Err(bad("start", format!("rest pose {rest:?} is not finite")));
        }
    }
    Ok(())
}

/// The outer loop's state, created once per solver so that a solve does not
/// allocate inside its iterations.
#[derive(Debug, Clone)]
pub(crate) struct Search {
    /// Bounds from the joint modes, before a seed pins the locked joints.
    modes_bounds: Bounds,
    /// This solve's bounds (locked joints pinned at the seed).
    bounds: Bounds,
    /// The rest pose of [`Start::Reset`] (the middle of the limits if none).
    rest: Vec<f64>,
    /// The first joint's origin: it never moves, so reach is measured from it.
    root: Point3<f64>,
    /// Sum of the segment lengths from the first joint to the tip.
    reach: f64,
    q: Vec<f64>,
    best: Vec<f64>,
    previous: Vec<f64>,
    trial: Vec<f64>,
}

impl Search {
    pub fn new(chain: &Chain, common: &Common, start: &Start) -> Search {
        let rest = match start {
            Start::Reset(Some(r)) => r.clone(),
            _ => chain.mid_configuration(),
        };
        let bounds = Bounds::new(chain, &common.modes);
        let (root, reach) = reach(chain);
        let n = chain.dof();
        Search {
            modes_bounds: bounds.clone(),
            bounds,
            rest,
            root,
            reach,
            q: vec![0.0; n],
            best: vec![0.0; n],
            previous: vec![0.0; n],
            trial: vec![0.0; n],
        }
    }

    /// Sum of the segment lengths from the first joint to the tip (m).
    pub fn reach(&self) -> f64 {
        self.reach
    }

    /// Runs `sweep` until the position error is below epsilon (and the
    /// orientation within tolerance when the target asks for it), the cap
    /// is reached, or the search stalls. A stalled attempt restarts from a
    /// random pose within the bounds when `plan.restarts` is set and the
    /// target is within reach; the best pose over all attempts is returned.
    pub fn run(
        &mut self,
        chain: &Chain,
        common: &Common,
        plan: &Plan,
        target: &Target,
        seed: &[f64],
        sweep: &mut impl Sweep,
    ) -> Solution {
        self.bounds.clone_from(&self.modes_bounds);
        self.bounds.lock_at(chain, seed, &mut self.q);
        if let Start::Reset(_) = plan.start {
            for i in 0..self.q.len() {
                self.q[i] = self.bounds.clamp_one(i, self.rest[i]);
            }
        }
        let epsilon = plan.epsilon.unwrap_or(common.tolerance.position);
        let out_of_reach = (target.position - self.root.coords).norm() > self.reach;
        let mut rng = Rng::new(RESTART_SEED);

        let mut error = Error::of(chain, &self.q, target);
        let mut best = error.score;
        self.best.copy_from_slice(&self.q);
        let mut attempt_best = best;
        let mut stale = 0;
        let mut stalled = false;
        let mut restarts = 0;
        let mut iterations = 0;
        while !error.reached(target, epsilon, &common.tolerance) && iterations < plan.max_iterations
        {
            self.previous.copy_from_slice(&self.q);
            sweep.sweep(chain, &self.bounds, target, &mut self.q, iterations);
            iterations += 1;
            error = Error::of(chain, &self.q, target);
            if plan.pattern_moves {
                error = self.pattern_move(chain, target, error);
            }
            if error.score < best {
                best = error.score;
                self.best.copy_from_slice(&self.q);
            }
            if error.score < attempt_best * (1.0 - PROGRESS) {
                attempt_best = error.score;
                stale = 0;
            } else {
                stale += 1;
            }
            if stale >= STALL_WINDOW && !error.reached(target, epsilon, &common.tolerance) {
                stalled = true;
                if out_of_reach || !plan.restarts {
                    break;
                }
                restarts += 1;
                self.restart(&mut rng, restarts);
                error = Error::of(chain, &self.q, target);
                attempt_best = error.score;
                stale = 0;
            }
        }
        let why_not = if out_of_reach {
            Reason::OutOfReach
        } else if stalled {
            Reason::Stalled
        } else {
            Reason::IterationCap
        };
        finish(
            chain,
            &self.bounds,
            target,
            &common.tolerance,
            seed,
            Outcome {
                q: self.best.clone(),
                iterations,
                why_not,
            },
        )
    }
}

impl Search {
    /// Restart `k` (from 1) starts from the best pose moved `k/4` of the way
    /// to a random pose within the bounds: the first restarts stay near the
    /// best pose (a warm-started tracker should not jump to another
    /// branch), later ones search the whole range.
    fn restart(&mut self, rng: &mut Rng, k: u32) {
        self.bounds.sample(rng, &mut self.trial);
        let reach = (f64::from(k) / 4.0).min(1.0);
        for i in 0..self.q.len() {
            let v = self.best[i] + reach * (self.trial[i] - self.best[i]);
            self.q[i] = self.bounds.clamp_one(i, v);
        }
    }

    /// A pattern move (as in Hooke and Jeeves' search): repeats the step the
    /// last sweep made, doubling it while the error keeps falling. Coordinate
    /// methods crawl along narrow valleys (an arm near full stretch, a joint
    /// on its limit) in many small zig-zag sweeps whose sum points along the
    /// valley; following that sum is what cuts the iterations. Costs one
    /// forward kinematics per trial and never makes the error worse.
    fn pattern_move(&mut self, chain: &Chain, target: &Target, mut error: Error) -> Error {
        let mut scale = 1.0;
        for _ in 0..PATTERN_DOUBLINGS {
            for i in 0..self.q.len() {
                let step = self.q[i] - self.previous[i];
                self.trial[i] = self.bounds.clamp_one(i, self.q[i] + scale * step);
            }
            let e = Error::of(chain, &self.trial, target);
            if e.score >= error.score {
                break;
            }
            self.q.copy_from_slice(&self.trial);
            error = e;
            scale *= 2.0;
        }
        error
    }
}

/// The error the loop watches, from the shared metric.
struct Error {
    position: f64,
    rotation: f64,
    /// Weighted error (as the metric weighs it) used to compare poses.
    score: f64,
}

impl Error {
    fn of(chain: &Chain, q: &[f64], target: &Target) -> Error {
        let e = pose_error(&chain.fk(q), target);
        Error {
            position: e.position_norm(),
            rotation: e.rotation_norm(),
            score: e.weighted_sq(target).sqrt(),
        }
    }

    /// The epsilon early exit: position below epsilon (unless position has
    /// no weight) and orientation within tolerance when it is asked for.
    fn reached(&self, target: &Target, epsilon: f64, tol: &super::Tolerance) -> bool {
        (target.position_weight == 0.0 || self.position < epsilon)
            && (!target.wants_orientation() || self.rotation <= tol.orientation)
    }
}

/// The first joint's origin and the sum of the segment lengths from it to
/// the tip (joint origin to joint origin, then to the tip), plus the travel
/// of prismatic joints. Segment lengths between hinges do not depend on the
/// pose, so the middle of the limits serves.
fn reach(chain: &Chain) -> (Point3<f64>, f64) {
    let mut frames = crate::model::Frames::new(chain);
    let tip = chain.joint_frames(&chain.mid_configuration(), &mut frames);
    let Some(&root) = frames.origins.first() else {
        return (Point3::from(tip.translation.vector), 0.0);
    };
    let mut length = 0.0;
    let points = frames
        .origins
        .iter()
        .copied()
        .chain([Point3::from(tip.translation.vector)]);
    let mut previous = root;
    for p in points.skip(1) {
        length += (p - previous).norm();
        previous = p;
    }
    for j in &chain.joints {
        if j.kind == JointKind::Prismatic {
            length += j.limits.lower.abs().max(j.limits.upper.abs());
        }
    }
    (root, length)
}

/// The length of `v` across `axis` (its distance from the axis line when `v`
/// is measured from a point on it).
pub(crate) fn off_axis(axis: &Vector3<f64>, v: &Vector3<f64>) -> f64 {
    (v - axis * axis.dot(v)).norm()
}

/// The turn about one axis that best serves several weighted (from, to)
/// direction pairs at once: the angle maximising the weighted sum of
/// `to . R(angle) from`, which is the same as minimising the weighted sum of
/// squared distances between the turned `from` points and the `to` points.
/// Each pair adds its [`angle_about_axis`] as a vector whose length is its
/// weight times the two lever arms, so a pair far from the axis counts more.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Turn {
    sin: f64,
    cos: f64,
}

impl Turn {
    pub fn add(&mut self, axis: &Vector3<f64>, from: &Vector3<f64>, to: &Vector3<f64>, w: f64) {
        if w <= 0.0 {
            return;
        }
        if let Some(a) = angle_about_axis(axis, from, to) {
            let m = w * off_axis(axis, from) * off_axis(axis, to);
            self.sin += m * a.sin();
            self.cos += m * a.cos();
        }
    }

    /// Adds the tip's three frame axes against the target's, weighted so
    /// that the sum approximates the metric's `orientation_weight^2 * angle^2`
    /// (the three axes' squared distances add up to about twice the angle
    /// squared). A pointing target adds its tool axis alone against the
    /// direction, at twice the weight (one axis's squared distance is
    /// about the angle squared). Does nothing when the target has no
    /// orientation.
    pub fn add_orientation(&mut self, axis: &Vector3<f64>, tip: &Transform, target: &Target) {
        if !target.wants_orientation() {
            return;
        }
        let w = 0.5 * target.orientation_weight * target.orientation_weight;
        let goal = match target.orientation {
            Orientation::Full(q) => q,
            Orientation::Axis(p) => {
                let from = tip.rotation * p.tool.into_inner();
                self.add(axis, &from, &p.direction, 2.0 * w);
                return;
            }
            Orientation::Free => return,
        };
        let goal = goal.to_rotation_matrix();
        for c in 0..3 {
            let from = tip.rotation.matrix().column(c).into_owned();
            let to = goal.matrix().column(c).into_owned();
            self.add(axis, &from, &to, w);
        }
    }

    /// The best angle, or `None` when no pair defined a direction.
    pub fn angle(&self) -> Option<f64> {
        (self.sin != 0.0 || self.cos != 0.0).then(|| self.sin.atan2(self.cos))
    }
}
