//! The node core's hooks for the collision check ([`crate::node::guard`]
//! decides; this wires it into the core): the guard built from the
//! settings and said at start, every motion step taken through it,
//! solves that look for a collision-free answer and refuse a target whose
//! every answer collides, and the guard rebuilt when the margin or the
//! workspace file change while the node runs.

use super::{NodeCore, NodeError};
use crate::collision::markers::ShapeMarker;
use crate::collision::{self, Clear, CollisionOptions};
use crate::ik::{IkError, Reason, Solution, SolverConfig, Target};
use crate::model::Chain;
use crate::node::guard::Guard;
use crate::node::motion::MotionLimiter;
use crate::node::status::{CollisionStatus, NodeStatus, RejectReason, SolveOutcome};
use crate::servo::ServoOutput;
use std::time::Duration;

/// The budget of a collision-aware solve by a solver without its own.
const DEFAULT_BUDGET: Duration = Duration::from_millis(5);

/// The collision guard `options` ask for on `chain` (none when the check
/// is off).
pub(crate) fn make_guard(
    chain: &Chain,
    options: &CollisionOptions,
) -> Result<Option<Box<Guard>>, NodeError> {
    if !options.check {
        return Ok(None);
    }
    let world = collision::build(chain, options)?;
    Ok(Some(Box::new(Guard::new(
        world,
        options.workspace.as_deref(),
    ))))
}

/// What the front-end logs at start about the model (which links are
/// approximated and why, what is checked), with the status it reports.
pub(super) fn start_notices(guard: Option<&Guard>, status: &mut NodeStatus) -> Vec<String> {
    let Some(g) = guard else {
        status.collision = None;
        return Vec::new();
    };
    status.collision = Some(CollisionStatus::new(g.world().pair_count()));
    collision::describe(g.world())
        .into_iter()
        .map(|l| format!("collision check: {l}"))
        .collect()
}

/// The guard the new `options` ask for, from the one running (`old`):
/// the same body and pairs with a new margin and workspace when only those
/// changed; built anew when the check is turned on; none when it is off.
pub(super) fn retuned_guard(
    chain: &Chain,
    old: Option<&Guard>,
    was: &CollisionOptions,
    options: &CollisionOptions,
) -> Result<Option<Box<Guard>>, NodeError> {
    match old {
        Some(g) if options.check && same_model(was, options) => Ok(Some(Box::new(
            g.retuned(options.margin, options.workspace.as_deref())?,
        ))),
        _ => make_guard(chain, options),
    }
}

/// True when `a` and `b` build the same body and pairs (what only a
/// restart changes: the SRDF, the mesh path, the capsules).
fn same_model(a: &CollisionOptions, b: &CollisionOptions) -> bool {
    (&a.srdf, &a.mesh_path, a.capsule_radius) == (&b.srdf, &b.mesh_path, b.capsule_radius)
}

/// The refusal of a solve whose every answer collides, naming the pair.
pub(super) fn refusal(
    sol: &Solution,
    pair: Option<&str>,
    st: &mut NodeStatus,
) -> Option<SolveOutcome> {
    if sol.status.is_converged() || sol.status.reason() != Some(Reason::Inadmissible) {
        return None;
    }
    let why = format!(
        "every solution found is in collision: {}",
        pair.unwrap_or("a checked pair")
    );
    st.targets.rejected.count(RejectReason::Collision);
    st.last_rejection = Some((RejectReason::Collision, why.clone()));
    Some(SolveOutcome::Refused { why })
}

impl<S: ServoOutput> NodeCore<S> {
    /// One step of the motion through the collision guard, when it is on:
    /// `advance` is taken only if braking after it keeps the margin;
    /// otherwise the arm brakes and stops short of contact, which is
    /// counted and said once. True when it stopped.
    pub(super) fn guarded(&mut self, advance: impl FnOnce(&mut MotionLimiter)) -> bool {
        let Some(g) = &mut self.guard else {
            advance(&mut self.motion);
            return false;
        };
        let Some(n) = g.step(&mut self.motion, advance) else {
            self.stopped = false;
            return false;
        };
        // The arm holds where it stops; a new command moves it on.
        let goal = self.motion.goal();
        self.goal.copy_from_slice(goal);
        if !self.stopped
            && let Some(st) = &mut self.status.collision
        {
            let why = format!(
                "motion stopped before contact: {} within the {:.0} mm margin",
                g.world().describe(&n),
                g.world().margin() * 1e3
            );
            st.stops += 1;
            st.last_stop = Some(why.clone());
            self.notices.push(why);
        }
        self.stopped = true;
        true
    }

    /// Solves `target` from where the arm is (without the check, also from
    /// where a stream of answers is heading: `solve_continuing`); with the
    /// check on, only a collision-free answer counts (the solvers look on
    /// within their budget), and the pair of the last refused answer comes
    /// with it.
    pub(super) fn solve_clear(
        &mut self,
        target: &Target,
    ) -> (Result<Solution, IkError>, Option<String>) {
        let budget = match &self.solver_config.0 {
            SolverConfig::Jacobian(o) => o.budget,
            _ => DEFAULT_BUDGET,
        };
        let dof = self.layout.dof();
        let Some(g) = &mut self.guard else {
            let seed = self.motion.position()[..dof].to_vec();
            return (self.solve_continuing(target, &seed), None);
        };
        let seed = &self.motion.position()[..dof];
        let mut clear = Clear::new(g.world_mut());
        let clock = self.config.budget_clock;
        let r = self
            .solver
            .solve_admissible(target, seed, &mut clear, budget, clock);
        let pair = clear.refused().map(|n| g.world().describe(&n));
        (r, pair)
    }

    /// Takes the guard a retune built, keeping the counts since start.
    pub(super) fn take_guard(&mut self, guard: Option<Box<Guard>>) {
        let kept = self.status.collision.take();
        self.guard = guard;
        let notices = start_notices(self.guard.as_deref(), &mut self.status);
        if let (Some(st), Some(old)) = (&mut self.status.collision, kept) {
            *st = CollisionStatus {
                pairs: st.pairs,
                ..old
            };
        } else {
            // Turned on (or off) live: say what it checks now.
            self.notices.extend(notices);
        }
    }

    /// The collision world's markers where the arm is now (none when the
    /// check is off): the obstacles, and the links of the closest pair
    /// when they are near or in contact.
    pub fn collision_markers(&mut self) -> Vec<ShapeMarker> {
        let Some(g) = &mut self.guard else {
            return Vec::new();
        };
        let q = self.motion.position().to_vec();
        let near = g.world_mut().nearest(&q);
        collision::markers::markers(g.world(), &near)
    }

    /// The collision guard, when the check is on.
    pub fn guard(&self) -> Option<&Guard> {
        self.guard.as_deref()
    }
}
