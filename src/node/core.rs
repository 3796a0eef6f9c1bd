//! The node's control loop, free of ROS: targets in, one solve per tick at
//! most, limited motion toward the answer, joint state and servo command
//! out. The ROS adapter, `arm_ik sim` and the tests all drive this same
//! code, on whatever clock they pass to [`NodeCore::tick`].

use super::command::{Command, Refused};
use super::motion::MotionLimiter;
use super::msg::{JointState, TargetMsg};
use super::settings::{NodeConfig, NodeSettings, SettingError};
use super::status::{NodeStatus, RejectReason, SolveOutcome};
use crate::ik::{Common, IkError, SolveStatus, Solver, SolverConfig, Target};
use crate::model::{Chain, JointKind, Transform, wrap_angle};
use crate::servo::{ServoOutput, VirtualServo};
use std::sync::Arc;
use std::time::Instant;
use thiserror::Error;

/// A node that cannot start, and why.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum NodeError {
    #[error("invalid node setting {name}: {why}")]
    Config { name: &'static str, why: String },
    /// A solver or motion setting, named as the ROS parameter is.
    #[error(transparent)]
    Setting(#[from] SettingError),
    #[error(transparent)]
    Solver(#[from] IkError),
}

/// What one tick produced: the joint state to publish, and what became of
/// the target it solved, if it solved one.
#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub joint_state: JointState,
    pub solve: Option<SolveOutcome>,
}

/// The latest valid target, waiting for the next tick.
#[derive(Debug, Clone)]
struct Pending {
    target: Target,
}

/// The control loop state machine. `S` is where commands go; virtual servos
/// by default.
pub struct NodeCore<S: ServoOutput = VirtualServo> {
    solver: Solver,
    config: NodeConfig,
    names: Arc<[String]>,
    continuous: Vec<bool>,
    motion: MotionLimiter,
    servo: S,
    pending: Option<Pending>,
    /// The target the motion is heading for (for the tracking error).
    active: Option<Target>,
    /// The latest solved target, reached or not (for displays).
    last_solved: Option<Target>,
    started: bool,
    last_tick: Option<f64>,
    first_tick: f64,
    goal: Vec<f64>,
    status: NodeStatus,
}

impl NodeCore<VirtualServo> {
    /// A node on virtual servos resting at the start pose.
    pub fn with_virtual_servos(
        chain: &Chain,
        solver: SolverConfig,
        common: Common,
        config: NodeConfig,
    ) -> Result<NodeCore<VirtualServo>, NodeError> {
        let start = config
            .initial
            .clone()
            .unwrap_or_else(|| chain.mid_configuration());
        NodeCore::new(chain, solver, common, config, VirtualServo::new(start))
    }

    /// The node core `settings` describe, on virtual servos, as `arm_ik
    /// sim` and `replay` run it.
    pub fn from_settings(
        chain: &Chain,
        settings: &NodeSettings,
    ) -> Result<NodeCore<VirtualServo>, NodeError> {
        let (solver, common) = settings.solver_config(chain)?;
        let config = settings.node_config(chain)?;
        NodeCore::with_virtual_servos(chain, solver, common, config)
    }
}

impl<S: ServoOutput> NodeCore<S> {
    /// Binds the solver to `chain` and checks the settings. The arm starts at
    /// the servos' feedback when they give one (so a real arm does not
    /// snap to a default pose), else at `config.initial` or mid-range.
    pub fn new(
        chain: &Chain,
        solver: SolverConfig,
        common: Common,
        config: NodeConfig,
        servo: S,
    ) -> Result<NodeCore<S>, NodeError> {
        let limits = config.axis_limits(chain)?;
        let solver = Solver::new(chain, solver, common)?;
        let start = config
            .initial
            .clone()
            .unwrap_or_else(|| chain.mid_configuration());
        let motion = MotionLimiter::new(1.0 / config.rate_hz, limits, &start, config.synchronise);
        let mut status = NodeStatus::new(solver.kind());
        status.link = servo.link().to_string();
        Ok(NodeCore {
            names: chain.joints.iter().map(|j| j.name.clone()).collect(),
            continuous: chain
                .joints
                .iter()
                .map(|j| j.kind == JointKind::Continuous)
                .collect(),
            goal: start,
            motion,
            solver,
            config,
            servo,
            pending: None,
            active: None,
            last_solved: None,
            started: false,
            last_tick: None,
            first_tick: 0.0,
            status,
        })
    }

    /// Takes in one command received at `now` (node clock, s): every
    /// front-end's input comes through here. A refused command is counted
    /// in the status (with the last refusal's reason) and changes nothing.
    pub fn command(&mut self, cmd: &Command, now: f64) -> Result<(), Refused> {
        match cmd {
            Command::Target(msg) => match self.on_target(msg, now) {
                None => Ok(()),
                Some(reason) => Err(Refused {
                    reason,
                    why: self.last_rejection_why(),
                }),
            },
        }
    }

    /// What exactly was wrong with the last refused input.
    fn last_rejection_why(&self) -> String {
        self.status
            .last_rejection
            .as_ref()
            .map(|(_, why)| why.clone())
            .unwrap_or_default()
    }

    /// Takes in a target received at `now` (node clock, s). Invalid, stale
    /// and wrong-frame targets are rejected and counted here; a valid one
    /// replaces any target not yet solved, because only the latest matters.
    /// Returns the rejection reason, if any.
    pub fn on_target(&mut self, msg: &TargetMsg, now: f64) -> Option<RejectReason> {
        self.status.targets.received += 1;
        match self.check(msg, now) {
            Ok(target) => {
                self.status.targets.accepted += 1;
                if self.pending.replace(Pending { target }).is_some() {
                    self.status.targets.superseded += 1;
                }
                None
            }
            Err((reason, why)) => {
                self.status.targets.rejected.count(reason);
                self.status.last_rejection = Some((reason, why));
                Some(reason)
            }
        }
    }

    fn check(&self, msg: &TargetMsg, now: f64) -> Result<Target, (RejectReason, String)> {
        let base = &self.solver.chain().base;
        if !msg.frame_id.is_empty() && msg.frame_id != *base {
            return Err((
                RejectReason::WrongFrame,
                format!("frame '{}' is not the base link '{base}'", msg.frame_id),
            ));
        }
        if !msg.stamp.is_finite() {
            return Err((RejectReason::NotFinite, format!("stamp {}", msg.stamp)));
        }
        let age = now - msg.stamp;
        if msg.stamp != 0.0 && age.abs() > self.config.max_target_age {
            return Err((
                RejectReason::Stale,
                format!(
                    "stamp {:.3} s is {:.3} s from the node clock {:.3} s (limit {} s)",
                    msg.stamp, age, now, self.config.max_target_age
                ),
            ));
        }
        Target::from_xyzw(msg.position, msg.orientation).map_err(|e| match e {
            IkError::NonFiniteTarget { .. } => (RejectReason::NotFinite, e.to_string()),
            _ => (RejectReason::Invalid, e.to_string()),
        })
    }

    /// One control period at node time `now` (s): solves the latest target
    /// if a new one came (warm-started from the current joints), steps the
    /// motion, commands the servos and returns the joint state with what
    /// became of the target it solved.
    ///
    /// Each call advances the motion by exactly one period (`1/rate_hz`):
    /// the caller owns the timing, so simulated time, bag replay and a ROS
    /// timer all get the same motion, and a late tick delays the arm rather
    /// than making it jump.
    pub fn tick(&mut self, now: f64) -> Tick {
        let wall = Instant::now();
        if !self.started {
            match self.valid_feedback() {
                Some(fb) => {
                    self.motion.reset(&fb);
                    self.started = true;
                }
                // Hardware that will report where it is, but has not yet
                // (still connecting): hold the start pose until it does.
                None if self.servo.measured() => {}
                None => self.started = true,
            }
        }
        // Until the start pose is known, the latest target waits and the
        // arm is not moved.
        let mut solve = None;
        if self.started {
            if let Some(p) = self.pending.take() {
                solve = Some(self.solve(p));
            }
            self.motion.step();
        }
        let q = self.motion.position();
        self.servo.command(q, now);

        let st = &mut self.status;
        st.servo_lag = self.servo.feedback().map_or(0.0, |fb| {
            fb.iter()
                .zip(q)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        });
        if let Some(t) = &self.active {
            let tip = self.solver.chain().fk(q);
            st.tracking_error = (tip.translation.vector - t.position).norm();
            st.tracking.record(st.tracking_error);
        }
        st.link.clear();
        st.link.push_str(self.servo.link());
        st.link_ok = self.servo.link_ok();
        st.ticks += 1;
        match self.last_tick {
            None => self.first_tick = now,
            Some(_) if now > self.first_tick => {
                st.loop_rate_hz = (st.ticks - 1) as f64 / (now - self.first_tick);
            }
            Some(_) => {}
        }
        self.last_tick = Some(now);
        st.tick_time.record(wall.elapsed().as_secs_f64());
        let position = match self.valid_feedback() {
            Some(fb) if self.servo.measured() => fb,
            _ => self.motion.position().to_vec(),
        };
        Tick {
            joint_state: JointState {
                stamp: now,
                name: self.names.clone(),
                position,
                velocity: self.motion.velocity().to_vec(),
            },
            solve,
        }
    }

    /// The servos' feedback when it has one finite value per joint.
    fn valid_feedback(&self) -> Option<Vec<f64>> {
        self.servo
            .feedback()
            .filter(|fb| fb.len() == self.goal.len() && fb.iter().all(|x| x.is_finite()))
    }

    fn solve(&mut self, p: Pending) -> SolveOutcome {
        let t0 = Instant::now();
        let result = self.solver.solve(&p.target, self.motion.position());
        let st = &mut self.status;
        st.solve_time.record(t0.elapsed().as_secs_f64());
        let sol = match result {
            Ok(s) => s,
            Err(e) => {
                // Validated already; kept for solver-specific refusals.
                st.targets.rejected.count(RejectReason::Invalid);
                st.last_rejection = Some((RejectReason::Invalid, e.to_string()));
                return SolveOutcome::Refused { why: e.to_string() };
            }
        };
        st.targets.solved += 1;
        self.last_solved = Some(p.target.clone());
        st.last_position_error = sol.position_error;
        st.last_orientation_error = sol.orientation_error;
        st.last_solve = Some(sol.status);
        let (status, position_error, orientation_error) =
            (sol.status, sol.position_error, sol.orientation_error);
        let usable = match status {
            SolveStatus::Converged => true,
            SolveStatus::BestEffort(_) => position_error <= self.config.max_best_effort_error,
            SolveStatus::Failed(_) => false,
        };
        if !usable {
            st.targets.unreachable += 1;
            st.holding = true;
            return SolveOutcome::Unreachable {
                status,
                position_error,
                orientation_error,
            };
        }
        st.holding = false;
        st.targets.reached += 1;
        if !status.is_converged() {
            st.targets.best_effort += 1;
        }
        // Continuous joints take the short way round.
        let q = self.motion.position();
        for (i, g) in self.goal.iter_mut().enumerate() {
            *g = if self.continuous[i] {
                q[i] + wrap_angle(sol.q[i] - q[i])
            } else {
                sol.q[i]
            };
        }
        self.motion.set_goal(&self.goal);
        self.active = Some(p.target);
        SolveOutcome::Reached {
            status,
            position_error,
            orientation_error,
        }
    }

    /// The latest solved target, whether reached or not: with
    /// [`NodeStatus::holding`] it tells a display where the arm was asked to go
    /// and whether it is going there.
    pub fn last_target(&self) -> Option<&Target> {
        self.last_solved.as_ref()
    }

    /// The target the arm is moving toward or holding at, if any.
    pub fn active_target(&self) -> Option<&Target> {
        self.active.as_ref()
    }

    /// The commanded tip pose in the base frame (forward kinematics of the
    /// current commanded joints).
    pub fn tip_pose(&self) -> Transform {
        self.solver.chain().fk(self.motion.position())
    }

    pub fn status(&self) -> &NodeStatus {
        &self.status
    }

    pub fn config(&self) -> &NodeConfig {
        &self.config
    }

    pub fn chain(&self) -> &Chain {
        self.solver.chain()
    }

    /// The motion limiter (current joints, velocities, goal, limits).
    pub fn motion(&self) -> &MotionLimiter {
        &self.motion
    }

    pub fn servo(&self) -> &S {
        &self.servo
    }

    pub fn servo_mut(&mut self) -> &mut S {
        &mut self.servo
    }

    /// Joint names in chain order.
    pub fn joint_names(&self) -> &Arc<[String]> {
        &self.names
    }
}
