//! FABRIK: forward and backward reaching on joint positions, mapped back to hinge angles.
//!
//! One iteration (after Aristidou & Lasenby, 2011):
//! 1. Take the points of the current pose: each joint's origin, then the tip.
//! 2. Keep only the points where the chain can bend. The leading points that
//!    no joint can move (on the first axes, like a shoulder right above a
//!    base yaw) form the fixed root. A joint whose next point lies on its own
//!    axis (a wrist roll with the tip on its axis, or two joints on one point)
//!    cannot change the angle at its origin, so that point is dropped and the
//!    segments on either side become one rigid segment.
//! 3. Backward pass from the tip (tip on the target, each earlier point pulled
//!    along the line to keep its segment length), forward pass from the root.
//!    A target beyond the total length stretches the chain straight at it.
//! 4. Map back to angles: from the base, turn each joint about its real axis
//!    so the later points that are off that axis (the first of them and
//!    those after it) turn towards their FABRIK positions (each pair through
//!    [`angle_about_axis`](super::geometry::angle_about_axis), combined by least squares), clamp to the bounds,
//!    and recompute the frames before the next joint. A prismatic joint
//!    slides the next point towards its FABRIK position along the axis.
//!    Why all later points and not the first only: see `map_back`.
//!
//! FABRIK places positions only. When the target asks for an orientation,
//! the joints that cannot move any point (such as a wrist roll) turn to
//! reduce the orientation error; the others serve position first.

use super::heuristic::{Plan, Search, Sweep, Turn, check_plan, off_axis};
use super::{Bounds, Common, IkError, Solution, Target};
use crate::model::{Chain, Frames, JointKind};
use nalgebra::{Point3, Vector3};

use super::Start;

/// Options of the FABRIK solver.
#[derive(Debug, Clone, PartialEq)]
pub struct FabrikOptions {
    /// 1000 by default: most solves take 10 to 30, but a target next to a
    /// joint limit can take hundreds (see the tests' figures).
    pub max_iterations: u32,
    /// Stop as soon as the position error is below this (m); `None`: the
    /// common position tolerance.
    pub epsilon: Option<f64>,
    /// Warm start from the seed, or reset to a rest pose each solve.
    pub start: Start,
    /// Restart from a random pose within the bounds when the iterations stop
    /// making progress (the map-back fighting a joint limit); the restarts
    /// draw on the same iteration cap. Off: stop at the first stall.
    pub restarts: bool,
    /// After each sweep, repeat its step (doubling) while the error keeps
    /// falling: a pattern move, not part of the classic method, that cuts
    /// the iterations several-fold near full stretch and joint limits.
    /// Off: the classic method alone.
    pub pattern_moves: bool,
}

impl Default for FabrikOptions {
    fn default() -> Self {
        FabrikOptions {
            max_iterations: 1000,
            epsilon: None,
            start: Start::Warm,
            restarts: true,
            pattern_moves: true,
        }
    }
}

impl FabrikOptions {
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
pub struct FabrikSolver {
    chain: Chain,
    options: FabrikOptions,
    common: Common,
    search: Search,
    sweep: FabrikSweep,
}

impl FabrikSolver {
    pub fn new(chain: &Chain, options: FabrikOptions, common: Common) -> Result<Self, IkError> {
        check_plan("fabrik", &options.plan(), chain.dof())?;
        let search = Search::new(chain, &common, &options.start);
        Ok(FabrikSolver {
            chain: chain.clone(),
            sweep: FabrikSweep::new(chain, search.reach()),
            search,
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

/// One FABRIK iteration's scratch memory. Points are indexed like the
/// joints, with the tip last (index `dof`).
#[derive(Debug, Clone)]
struct FabrikSweep {
    frames: Frames,
    /// Points of the current pose.
    pose: Vec<Point3<f64>>,
    /// Points after the backward and forward passes.
    goal: Vec<Point3<f64>>,
    /// Indices of the points FABRIK moves, the fixed root first.
    bends: Vec<usize>,
    /// Length of the rigid segment from `bends[k]` to `bends[k + 1]`.
    lengths: Vec<f64>,
    /// Distance under which a point counts as on an axis (m).
    on_axis: f64,
}

impl FabrikSweep {
    fn new(chain: &Chain, reach: f64) -> FabrikSweep {
        let points = chain.dof() + 1;
        FabrikSweep {
            frames: Frames::new(chain),
            pose: vec![Point3::origin(); points],
            goal: vec![Point3::origin(); points],
            bends: Vec::with_capacity(points),
            lengths: Vec::with_capacity(points),
            on_axis: 1e-9 * (1.0 + reach),
        }
    }

    /// Point `j` of the pose in `self.frames` (a joint origin or the tip).
    fn point(&self, j: usize) -> Point3<f64> {
        match self.frames.origins.get(j) {
            Some(p) => *p,
            None => Point3::from(self.frames.tip.translation.vector),
        }
    }

    /// True when point `j` of the current frames lies on joint `i`'s axis.
    fn on_axis_of(&self, i: usize, j: usize) -> bool {
        off_axis(
            &self.frames.axes[i],
            &(self.point(j) - self.frames.origins[i]),
        ) <= self.on_axis
    }

    /// Step 2: the fixed root and the points where the chain bends.
    fn find_bends(&mut self, chain: &Chain) {
        let n = chain.dof();
        let mut root = 0;
        'root: for k in 1..=n {
            for i in 0..k {
                if !chain.joints[i].kind.rotates() || !self.on_axis_of(i, k) {
                    break 'root;
                }
            }
            root = k;
        }
        self.bends.clear();
        self.bends.push(root);
        for j in root + 1..n {
            if !chain.joints[j].kind.rotates() || !self.on_axis_of(j, j + 1) {
                self.bends.push(j);
            }
        }
        if root < n {
            self.bends.push(n);
        }
        self.lengths.clear();
        for w in self.bends.windows(2) {
            self.lengths
                .push((self.pose[w[1]] - self.pose[w[0]]).norm());
        }
    }

    /// Step 3: backward and forward reaching on the bend points.
    fn reach(&mut self, target: &Vector3<f64>) {
        self.goal.copy_from_slice(&self.pose);
        let last = self.bends.len() - 1;
        let root = self.pose[self.bends[0]];
        let target = Point3::from(*target);
        let total: f64 = self.lengths.iter().sum();
        let to_target = target - root;
        if to_target.norm() > total {
            let dir = to_target / to_target.norm();
            let mut along = 0.0;
            for k in 1..=last {
                along += self.lengths[k - 1];
                self.goal[self.bends[k]] = root + dir * along;
            }
            return;
        }
        self.goal[self.bends[last]] = target;
        for k in (0..last).rev() {
            let (here, next) = (self.bends[k], self.bends[k + 1]);
            let dir = self.direction(next, here);
            self.goal[here] = self.goal[next] + dir * self.lengths[k];
        }
        self.goal[self.bends[0]] = root;
        for k in 0..last {
            let (here, next) = (self.bends[k], self.bends[k + 1]);
            let dir = self.direction(here, next);
            self.goal[next] = self.goal[here] + dir * self.lengths[k];
        }
    }

    /// Unit direction from goal point `a` to goal point `b`; when they
    /// coincide, the direction between them in the current pose.
    fn direction(&self, a: usize, b: usize) -> Vector3<f64> {
        let d = self.goal[b] - self.goal[a];
        let n = d.norm();
        if n > self.on_axis {
            return d / n;
        }
        let d = self.pose[b] - self.pose[a];
        let n = d.norm();
        if n > 0.0 { d / n } else { Vector3::zeros() }
    }

    /// Step 4: turns (or slides) every joint, base first, so that the bend
    /// points after it head for their goals.
    ///
    /// A hinge turns by the best angle for all later bend points off its
    /// axis at once (least squares, [`Turn`]), not for the first one only.
    /// The ball-joint passes put a sideways correction on the last segment
    /// (the wrist moves little, the tip swings to the target); a hinge arm
    /// cannot bend sideways there, so aiming each joint at its first point
    /// alone leaves the base yaw where it is and stops with centimetres of
    /// error on most targets of the desktop arm. With every later point in
    /// the sum the base yaw also sees the tip's goal.
    fn map_back(&mut self, chain: &Chain, bounds: &Bounds, target: &Target, q: &mut [f64]) {
        let n = chain.dof();
        for i in 0..n {
            if bounds.locked[i] {
                continue;
            }
            let tip = chain.joint_frames(q, &mut self.frames);
            let axis = self.frames.axes[i];
            let pivot = self.frames.origins[i];
            let mut later = self.bends.iter().copied().filter(|&j| j > i);
            let step = if chain.joints[i].kind == JointKind::Prismatic {
                later
                    .next()
                    .map_or(0.0, |j| axis.dot(&(self.goal[j] - self.point(j))))
            } else {
                let mut turn = Turn::default();
                for j in later.filter(|&j| !self.on_axis_of(i, j)) {
                    turn.add(
                        &axis,
                        &(self.point(j) - pivot),
                        &(self.goal[j] - pivot),
                        1.0,
                    );
                }
                if turn.angle().is_none() {
                    // Nothing to place: turn for the orientation, if asked.
                    turn.add_orientation(&axis, &tip, target);
                }
                turn.angle().unwrap_or(0.0)
            };
            q[i] = bounds.clamp_one(i, q[i] + step);
        }
    }
}

impl Sweep for FabrikSweep {
    fn sweep(&mut self, chain: &Chain, bounds: &Bounds, target: &Target, q: &mut [f64], _: u32) {
        chain.joint_frames(q, &mut self.frames);
        for j in 0..self.pose.len() {
            self.pose[j] = self.point(j);
        }
        self.find_bends(chain);
        if self.bends.len() > 1 {
            self.reach(&target.position);
            self.map_back(chain, bounds, target, q);
        }
    }
}
