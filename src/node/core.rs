//! The node's control loop, free of ROS: targets in, one solve per tick at
//! most, limited motion toward the answer, joint state and servo command
//! out. The ROS adapter, `arm_ik sim` and the tests all drive this same
//! code, on whatever clock they pass to [`NodeCore::tick`].

use super::motion::{AxisLimits, MotionLimiter};
use super::msg::{JointState, TargetMsg};
use super::status::{RejectReason, Status};
use super::virtual_servo::{ServoOutput, VirtualServo};
use crate::ik::{Common, IkError, Solver, SolverConfig, Target};
use crate::model::{Chain, JointKind, Transform, wrap_angle};
use std::sync::Arc;
use std::time::Instant;
use thiserror::Error;

/// Node settings (the future ROS parameters).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeConfig {
    /// Control rate (Hz): one motion step, joint state and servo command per
    /// tick.
    pub rate_hz: f64,
    /// Per-joint speed limits; empty: the URDF `velocity` of each joint.
    /// Either way capped at `velocity_cap`.
    pub max_velocity: Vec<f64>,
    /// Upper bound on every joint speed (rad/s or m/s): URDF speeds are the
    /// servo's no-load figures, too fast for a loaded arm, and a joint
    /// without one must still be limited.
    pub velocity_cap: f64,
    /// Per-joint acceleration limits; empty: `default_acceleration` for all.
    pub max_acceleration: Vec<f64>,
    /// (rad/s^2 or m/s^2) URDF has no acceleration limits.
    pub default_acceleration: f64,
    /// A best-effort answer is followed only when its position error is
    /// below this (m); otherwise the arm holds and the target counts as
    /// unreachable.
    pub max_best_effort_error: f64,
    /// Targets stamped further than this from the node clock are stale (s).
    pub max_target_age: f64,
    /// Start pose when the servos give no feedback; `None`: mid-range.
    pub initial: Option<Vec<f64>>,
    /// Slow the early joints so all arrive together.
    pub synchronise: bool,
}

impl Default for NodeConfig {
    fn default() -> Self {
        NodeConfig {
            rate_hz: 50.0,
            max_velocity: Vec::new(),
            velocity_cap: 2.0,
            max_acceleration: Vec::new(),
            default_acceleration: 8.0,
            max_best_effort_error: 0.01,
            max_target_age: 0.5,
            initial: None,
            synchronise: true,
        }
    }
}

/// A node that cannot start, and why.
#[derive(Debug, Error)]
pub enum NodeError {
    #[error("invalid node setting {name}: {why}")]
    Config { name: &'static str, why: String },
    #[error(transparent)]
    Solver(#[from] IkError),
}

fn bad(name: &'static str, why: impl Into<String>) -> NodeError {
    NodeError::Config {
        name,
        why: why.into(),
    }
}

impl NodeConfig {
    /// The per-joint limits for the motion limiter, checked.
    pub fn axis_limits(&self, chain: &Chain) -> Result<Vec<AxisLimits>, NodeError> {
        let n = chain.dof();
        let positive = |name, x: f64| {
            if x.is_finite() && x > 0.0 {
                Ok(x)
            } else {
                Err(bad(name, format!("{x} must be a positive number")))
            }
        };
        positive("rate_hz", self.rate_hz)?;
        positive("velocity_cap", self.velocity_cap)?;
        positive("default_acceleration", self.default_acceleration)?;
        positive("max_target_age", self.max_target_age)?;
        if self.max_best_effort_error.is_nan() || self.max_best_effort_error < 0.0 {
            return Err(bad(
                "max_best_effort_error",
                format!("{} must be 0 or more", self.max_best_effort_error),
            ));
        }
        for (name, v) in [
            ("max_velocity", &self.max_velocity),
            ("max_acceleration", &self.max_acceleration),
        ] {
            if !v.is_empty() && v.len() != n {
                return Err(bad(name, format!("{} values for {n} joints", v.len())));
            }
            for &x in v {
                positive(name, x)?;
            }
        }
        if let Some(q) = &self.initial
            && (q.len() != n || q.iter().any(|x| !x.is_finite()))
        {
            return Err(bad(
                "initial",
                format!("needs {n} finite values, got {q:?}"),
            ));
        }
        Ok(chain
            .joints
            .iter()
            .enumerate()
            .map(|(i, j)| {
                let urdf = if j.max_velocity.is_finite() && j.max_velocity > 0.0 {
                    j.max_velocity
                } else {
                    f64::INFINITY
                };
                let v = self.max_velocity.get(i).copied().unwrap_or(urdf);
                AxisLimits {
                    lower: j.limits.lower,
                    upper: j.limits.upper,
                    velocity: v.min(self.velocity_cap),
                    acceleration: self
                        .max_acceleration
                        .get(i)
                        .copied()
                        .unwrap_or(self.default_acceleration),
                }
            })
            .collect())
    }
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
    status: Status,
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
        let mut status = Status::new(solver.kind().name());
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
    /// motion, commands the servos and returns the joint state.
    ///
    /// Each call advances the motion by exactly one period (`1/rate_hz`):
    /// the caller owns the timing, so simulated time, bag replay and a ROS
    /// timer all get the same motion, and a late tick delays the arm rather
    /// than making it jump.
    pub fn tick(&mut self, now: f64) -> JointState {
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
        if self.started {
            if let Some(p) = self.pending.take() {
                self.solve(p);
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
        JointState {
            stamp: now,
            name: self.names.clone(),
            position,
            velocity: self.motion.velocity().to_vec(),
        }
    }

    /// The servos' feedback when it has one finite value per joint.
    fn valid_feedback(&self) -> Option<Vec<f64>> {
        self.servo
            .feedback()
            .filter(|fb| fb.len() == self.goal.len() && fb.iter().all(|x| x.is_finite()))
    }

    fn solve(&mut self, p: Pending) {
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
                return;
            }
        };
        st.targets.solved += 1;
        self.last_solved = Some(p.target.clone());
        st.last_position_error = sol.position_error;
        st.last_orientation_error = sol.orientation_error;
        st.last_solve = Some(sol.status.name());
        let converged = sol.status.is_converged();
        let usable = converged
            || (matches!(sol.status, crate::ik::SolveStatus::BestEffort(_))
                && sol.position_error <= self.config.max_best_effort_error);
        if !usable {
            st.targets.unreachable += 1;
            st.holding = true;
            return;
        }
        st.holding = false;
        st.targets.reached += 1;
        if !converged {
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
    }

    /// The latest solved target, whether reached or not: with
    /// [`Status::holding`] it tells a display where the arm was asked to go
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

    pub fn status(&self) -> &Status {
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
