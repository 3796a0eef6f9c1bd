//! Live tuning: new settings while the node runs, checked at once with the
//! same checks as at start and taken at the next tick or command, whichever
//! comes first, so a tick never runs on half of them. The arm keeps its
//! position and velocity; only the solver (rebuilt when its settings
//! changed), the speed and acceleration limits, the tolerances, the gripper
//! positions and the collision check (its margin and workspace file; rebuilt
//! when they changed) change.

use super::collide::retuned_guard;
use super::{NodeCore, NodeError, node_solver};
use crate::ik::{Clock, Common, Solver, SolverConfig};
use crate::model::Chain;
use crate::node::guard::Guard;
use crate::node::motion::AxisLimits;
use crate::node::settings::{Gripper, NodeConfig, NodeSettings};
use crate::servo::ServoOutput;

/// Checked settings, waiting for the next tick.
pub(super) struct Retune {
    /// A new solver, when its settings changed.
    solver: Option<(Solver, SolverConfig, Common)>,
    config: NodeConfig,
    limits: Vec<AxisLimits>,
    gripper: Option<Gripper>,
    /// A new collision guard (or none), when its settings changed.
    guard: Option<Option<Box<Guard>>>,
}

/// What the node core would run with on `chain` under `settings`, or why
/// it cannot: every check the core makes at start, and the solver built.
fn prepare(chain: &Chain, settings: &NodeSettings, clock: Clock) -> Result<Retune, NodeError> {
    let (solver_config, common) = settings.solver_config(chain)?;
    let solver_config = node_solver(solver_config, clock);
    let mut config = settings.node_config(chain)?;
    config.budget_clock = clock;
    let limits = config.axis_limits(chain)?;
    let gripper = config.gripper.resolve(chain)?;
    let solver = Solver::new(chain, solver_config.clone(), common.clone())?;
    Ok(Retune {
        solver: Some((solver, solver_config, common)),
        config,
        limits,
        gripper,
        guard: None,
    })
}

/// Checks `settings` on `chain` as the node core does at start, without a
/// core: what a parameter server asks before it accepts a new value.
pub fn check_settings(chain: &Chain, settings: &NodeSettings) -> Result<(), NodeError> {
    prepare(chain, settings, Clock::Wall).map(|_| ())
}

impl<S: ServoOutput> NodeCore<S> {
    /// Takes new settings at the next tick, after checking them now with
    /// the checks made at start: refused settings change nothing. The
    /// control rate cannot change while the node runs (the tick timer and
    /// every motion step are built on it).
    pub fn retune(&mut self, settings: &NodeSettings) -> Result<(), NodeError> {
        if settings.motion.rate_hz != self.config.rate_hz {
            return Err(NodeError::Config {
                name: "rate_hz",
                why: format!(
                    "cannot change while the node runs ({} Hz); restart the node",
                    self.config.rate_hz
                ),
            });
        }
        let mut r = prepare(self.solver.chain(), settings, self.config.budget_clock)?;
        // Where the arm started is history, not a setting.
        r.config.initial = self.config.initial.clone();
        r.config.synchronise = self.config.synchronise;
        if let Some((_, config, common)) = &r.solver
            && (config, common) == (&self.solver_config.0, &self.solver_config.1)
        {
            r.solver = None;
        }
        if r.config.collision != self.config.collision {
            r.guard = Some(retuned_guard(
                self.solver.chain(),
                self.guard.as_deref(),
                &self.config.collision,
                &r.config.collision,
            )?);
        }
        self.retune = Some(Box::new(r));
        Ok(())
    }

    /// True while new settings wait for the next tick or command.
    pub fn retune_pending(&self) -> bool {
        self.retune.is_some()
    }

    /// Switches to checked settings, keeping the arm where it is.
    pub(super) fn apply(&mut self, r: Retune) {
        if let Some((solver, config, common)) = r.solver {
            // The jog and drag keep the new locks and clamps too.
            self.steering.set_modes(solver.chain(), &common.modes);
            self.status.solver = solver.kind();
            self.solver = solver;
            self.solver_config = (config, common);
        }
        self.motion.set_limits(&r.limits);
        self.config = r.config;
        if r.gripper.map(|g| g.axis) != self.gripper.map(|g| g.axis) {
            self.stalled = false;
        }
        self.gripper = r.gripper;
        if let Some(guard) = r.guard {
            self.take_guard(guard);
        }
    }
}
