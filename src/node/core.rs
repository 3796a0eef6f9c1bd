//! The node's control loop, free of ROS: targets in, one solve per tick at
//! most, limited motion toward the answer, joint state and servo command
//! out. The ROS adapter, `arm_ik sim` and the tests all drive this same
//! code, on whatever clock they pass to [`NodeCore::tick`].
//!
//! The commands that operate the arm without a target (joint moves, the
//! gripper, relax and enable, named poses) are in `operate`; new settings
//! while it runs (live tuning) in `retune`.

mod cartesian;
mod collide;
mod operate;
mod retune;
mod solve;
mod steering;
mod streaming;
mod teach;

use super::command::{Command, Refused};
use super::gripper::{self, GripperStatus};
use super::guard::Guard;
use super::joints::JointLayout;
use super::motion::MotionLimiter;
use super::msg::{JointState, TargetMsg, clip, stale_why};
use super::poses::Poses;
use super::settings::{Gripper, NodeConfig, NodeSettings, SettingError};
use super::status::{NodeStatus, RejectReason, SolveOutcome};
use super::steer::Steering;
use super::stream::TargetStream;
use crate::collision::CollisionError;
use crate::ik::{Clock, Common, IkError, Solver, SolverConfig, Target};
use crate::model::{Chain, JointKind, Transform};
use crate::servo::{ServoOutput, VirtualServo};
use retune::Retune;
pub use retune::check_settings;
use std::sync::Arc;
use std::time::Instant;
use thiserror::Error;

/// Longest input value a refusal quotes (bytes).
const MAX_ECHO: usize = 120;

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
    /// The collision model cannot be built (a mesh, the workspace file,
    /// the SRDF).
    #[error(transparent)]
    Collision(#[from] CollisionError),
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

/// The solver configuration the node runs `config` as, at start and on
/// every retune (so an unchanged setting compares equal): every solve is
/// seeded with where the arm is, so it tracks
/// ([`SolverConfig::for_tracking`]: the geo solver takes the branch nearest
/// it, whatever its pick was set to), with its budget on the loop's clock.
fn node_solver(config: SolverConfig, clock: Clock) -> SolverConfig {
    let mut config = config.for_tracking();
    config.set_clock(clock);
    config
}

/// The control loop state machine. `S` is where commands go; virtual servos
/// by default.
pub struct NodeCore<S: ServoOutput = VirtualServo> {
    solver: Solver,
    /// What the solver was built from, to rebuild it only when it changes.
    solver_config: (SolverConfig, Common),
    config: NodeConfig,
    layout: JointLayout,
    continuous: Vec<bool>,
    gripper: Option<Gripper>,
    poses: Poses,
    /// Limp servos: see [`Command::Relax`].
    relaxed: bool,
    /// Settings to take at the next tick.
    retune: Option<Box<Retune>>,
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
    /// Joint goals commanded before the start pose was known.
    early_goals: Vec<(usize, f64)>,
    /// The gripper is held where an object stopped it.
    stalled: bool,
    gripper_load: Option<f64>,
    status: NodeStatus,
    /// The jog and the target marker.
    steering: Steering,
    /// A stream of targets being followed between its answers.
    stream: TargetStream,
    /// The collision check of every motion, when it is on.
    guard: Option<Box<Guard>>,
    /// Lines the front-end logs once (the collision model at start).
    notices: Vec<String>,
    /// The guard stopped the last tick's motion.
    stopped: bool,
    /// Teleoperation, trajectories, programs, the poses file.
    teach: teach::Teach,
}

impl NodeCore<VirtualServo> {
    /// A node on virtual servos resting at the start pose.
    pub fn with_virtual_servos(
        chain: &Chain,
        solver: SolverConfig,
        common: Common,
        config: NodeConfig,
    ) -> Result<NodeCore<VirtualServo>, NodeError> {
        let start = JointLayout::new(chain).start(
            config
                .initial
                .as_deref()
                .unwrap_or(&chain.mid_configuration()),
        );
        NodeCore::new(chain, solver, common, config, VirtualServo::new(start))
    }

    /// The node core `settings` describe, on virtual servos (one per joint
    /// the node moves, gripper included), as `arm_ik sim` and `replay` run
    /// it.
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
    /// snap to a default pose), else at `config.initial` or mid-range; the
    /// joints off the chain (a gripper) at their rest position unless
    /// `config.initial` gives them.
    pub fn new(
        chain: &Chain,
        solver: SolverConfig,
        common: Common,
        config: NodeConfig,
        servo: S,
    ) -> Result<NodeCore<S>, NodeError> {
        let limits = config.axis_limits(chain)?;
        let steering = Steering::new(chain, &common.modes);
        let gripper = config.gripper.resolve(chain)?;
        let solver = node_solver(solver, config.budget_clock);
        let solver_config = (solver.clone(), common.clone());
        let solver = Solver::new(chain, solver, common)?;
        let layout = JointLayout::new(chain);
        let start = layout.start(
            config
                .initial
                .as_deref()
                .unwrap_or(&chain.mid_configuration()),
        );
        let motion = MotionLimiter::new(1.0 / config.rate_hz, limits, &start, config.synchronise)
            .synchronise_first(chain.dof());
        let mut status = NodeStatus::new(solver.kind());
        status.link = servo.link().to_string();
        let guard = collide::make_guard(chain, &config.collision)?;
        let notices = collide::start_notices(guard.as_deref(), &mut status);
        Ok(NodeCore {
            continuous: chain
                .joints
                .iter()
                .map(|j| j.kind == JointKind::Continuous)
                .collect(),
            layout,
            gripper,
            poses: Poses::default(),
            relaxed: false,
            retune: None,
            goal: start,
            early_goals: Vec::new(),
            motion,
            solver,
            solver_config,
            config,
            servo,
            pending: None,
            active: None,
            last_solved: None,
            started: false,
            last_tick: None,
            first_tick: 0.0,
            stalled: false,
            gripper_load: None,
            status,
            steering,
            stream: TargetStream::default(),
            guard,
            notices,
            stopped: false,
            teach: teach::Teach::default(),
        })
    }

    /// One command, once [`NodeCore::command`] admitted it.
    fn take_command(&mut self, cmd: &Command, now: f64) -> Result<(), Refused> {
        // Settings accepted since the last tick hold for this command too:
        // `ros2 param set gripper_open` answered, then `~/open_gripper`,
        // must open to the new position.
        self.take_retune();
        let taken = match cmd {
            Command::Target(msg) => {
                return match self.on_target(msg, now) {
                    None => Ok(()),
                    Some(reason) => Err(Refused {
                        reason,
                        why: self.last_rejection_why(),
                    }),
                };
            }
            Command::Twist(msg) => {
                let taken = self
                    .moving_allowed()
                    .and_then(|()| self.check_stamp(msg.stamp, now))
                    .and_then(|()| {
                        self.steering.twist(
                            msg,
                            &self.config.jog,
                            self.motion.position(),
                            now,
                            &mut self.status.steering,
                        )
                    });
                return self.steered(taken);
            }
            Command::MarkerFeedback(fb) => {
                let taken = self.marker_feedback(fb, now);
                return self.steered(taken);
            }
            Command::JointCommand(msg) => self.joint_command(msg),
            Command::Gripper { position } => self.gripper_to(|_| *position),
            Command::OpenGripper => self.gripper_to(|g| g.open),
            Command::CloseGripper => self.gripper_to(|g| g.closed),
            Command::Relax => {
                self.relax();
                Ok(())
            }
            Command::Enable => {
                self.enable();
                Ok(())
            }
            Command::Pose { name } => self.go_to(name),
            Command::Leader(msg) => return self.leader_frame(msg, now),
            Command::Trajectory(msg) => self.trajectory(msg, now),
            Command::CartesianPath(msg) => self.cartesian_path(msg, now),
            Command::RecordPose { name } => self.record_pose(name),
            Command::Program { name } => self.run_program(name),
        };
        self.count(taken)
    }

    /// Applies settings accepted by [`NodeCore::retune`], between ticks.
    fn take_retune(&mut self) {
        if let Some(r) = self.retune.take() {
            self.apply(*r);
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
                self.steering.release(&mut self.status.steering);
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
        self.moving_allowed()?;
        let base = &self.solver.chain().base;
        if !msg.frame_id.is_empty() && msg.frame_id != *base {
            let frame = clip(&msg.frame_id, MAX_ECHO);
            return Err((
                RejectReason::WrongFrame,
                format!("frame '{frame}' is not the base link '{base}'"),
            ));
        }
        self.check_stamp(msg.stamp, now)?;
        let mut target = Target::from_xyzw(msg.position, msg.orientation).map_err(|e| match e {
            IkError::NonFiniteTarget { .. } => (RejectReason::NotFinite, e.to_string()),
            _ => (RejectReason::Invalid, e.to_string()),
        })?;
        target.orientation = (self.config.target_orientation).apply(target.orientation.full());
        Ok(target)
    }

    /// Refuses a non-finite stamp, or one further than `max_target_age`
    /// from the node clock; 0 means "now".
    fn check_stamp(&self, stamp: f64, now: f64) -> Result<(), (RejectReason, String)> {
        if !stamp.is_finite() {
            return Err((RejectReason::NotFinite, format!("stamp {stamp}")));
        }
        if stamp != 0.0 && (now - stamp).abs() > self.config.max_target_age {
            let why = stale_why(stamp, now, self.config.max_target_age);
            return Err((RejectReason::Stale, why));
        }
        Ok(())
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
        self.take_retune();
        if let (Some(g), Some(st)) = (&mut self.guard, &mut self.status.collision) {
            g.poll_workspace(st);
        }
        if !self.started {
            self.try_start(now);
        }
        // Until the start pose is known, the latest target waits and the
        // arm is not moved. Relaxed, nothing is solved or moved; an arm
        // moved by hand is followed where the servos measure it.
        let mut solve = None;
        if self.relaxed {
            if let Some(fb) = self.valid_feedback().filter(|_| self.servo.measured()) {
                self.motion.reset(&fb);
                self.goal.copy_from_slice(self.motion.position());
            }
        } else if self.started {
            self.program_step(now);
            self.plan_step(now);
            if let Some(p) = self.pending.take() {
                solve = Some(self.solve(p, now));
            }
            if !self.steer(now) && !self.timed(now) {
                self.advance(now);
            }
            self.check_stall();
        }
        if let (Some(g), Some(st)) = (&mut self.guard, &mut self.status.collision) {
            g.measure(self.motion.position(), st);
        }
        let q = self.motion.position();
        // Servos that will say where they are get no command before they
        // did: the first one starts from their measured pose, never from
        // the node's guess (a gripper would twitch toward it).
        if self.started || !self.servo.measured() {
            self.servo.command(q, now);
        }

        let st = &mut self.status;
        st.servo_lag = self.servo.feedback().map_or(0.0, |fb| {
            fb.iter()
                .zip(q)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        });
        if let Some(t) = &self.active {
            let tip = self.solver.chain().fk(&q[..self.layout.dof()]);
            st.tracking_error = (tip.translation.vector - t.position).norm();
            st.tracking.record(st.tracking_error);
        }
        st.link.clear();
        st.link.push_str(self.servo.link());
        st.link_ok = self.servo.link_ok();
        st.relaxed = self.relaxed;
        st.ticks += 1;
        match self.last_tick {
            None => self.first_tick = now,
            Some(_) if now > self.first_tick => {
                st.loop_rate_hz = (st.ticks - 1) as f64 / (now - self.first_tick);
            }
            Some(_) => {}
        }
        self.last_tick = Some(now);
        let axes = match self.valid_feedback() {
            Some(fb) if self.servo.measured() => fb,
            _ => self.motion.position().to_vec(),
        };
        let (position, velocity) = self.layout.publish(&axes, self.motion.velocity());
        self.status.gripper = self.gripper_status(&position);
        self.status.tick_time.record(wall.elapsed().as_secs_f64());
        Tick {
            joint_state: JointState {
                stamp: now,
                name: self.layout.names().clone(),
                position,
                velocity,
            },
            solve,
        }
    }

    /// Starts the motion where the servos measure the arm, or where the
    /// node assumes it is when they cannot measure.
    fn try_start(&mut self, now: f64) {
        match self.valid_feedback() {
            Some(fb) => {
                self.motion.reset(&fb);
                self.goal.copy_from_slice(self.motion.position());
                self.begin(now);
            }
            // Hardware that will report where it is, but has not yet
            // (still connecting): hold the start pose until it does.
            None if self.servo.measured() => {}
            None => self.begin(now),
        }
    }

    /// The servos' feedback for every axis, when it has one finite value
    /// per chain joint: axes it does not cover (an extra joint without a
    /// servo that reports) are taken from the motion.
    fn valid_feedback(&self) -> Option<Vec<f64>> {
        let dof = self.layout.dof();
        let mut fb = self
            .servo
            .feedback()
            .filter(|fb| fb.len() >= dof && fb.iter().all(|x| x.is_finite()))?;
        fb.truncate(self.goal.len());
        let n = fb.len();
        fb.extend_from_slice(&self.motion.position()[n..]);
        Some(fb)
    }

    /// A blocked gripper holds where it is measured (see [`gripper`]).
    fn check_stall(&mut self) {
        let Some(g) = self.gripper else { return };
        let Some(effort) = self.servo.effort().and_then(|e| e.get(g.axis).copied()) else {
            return;
        };
        let measured = self
            .valid_feedback()
            .map_or(self.motion.position()[g.axis], |fb| fb[g.axis]);
        if gripper::stalled(&g, self.goal[g.axis], measured, &effort) {
            self.motion.hold(g.axis, measured);
            self.goal[g.axis] = self.motion.position()[g.axis];
            self.stalled = true;
        }
        self.gripper_load = effort.load;
    }

    /// The gripper's status from the published `position`.
    fn gripper_status(&self, position: &[f64]) -> Option<GripperStatus> {
        let g = self.gripper?;
        Some(GripperStatus {
            joint: self.layout.names()[g.axis].clone(),
            position: position[g.axis],
            command: self.goal[g.axis],
            load: self.gripper_load,
            stalled: self.stalled,
        })
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
        self.solver
            .chain()
            .fk(&self.motion.position()[..self.layout.dof()])
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

    /// The motion limiter (current joints, velocities, goal, limits), one
    /// axis per joint the node moves: the chain's, then the actuated joints
    /// off it (a gripper).
    pub fn motion(&self) -> &MotionLimiter {
        &self.motion
    }

    /// Where the node is taking the arm, one value per axis as
    /// [`NodeCore::motion`]: the latest answer while following targets
    /// (the motion's own goal moves toward it along a stream of them).
    pub fn goal(&self) -> &[f64] {
        &self.goal
    }

    /// Which joints the node moves and publishes.
    pub fn layout(&self) -> &JointLayout {
        &self.layout
    }

    /// The gripper, when the robot has one.
    pub fn gripper(&self) -> Option<&Gripper> {
        self.gripper.as_ref()
    }

    /// The named poses (see [`NodeCore::with_poses`]).
    pub fn poses(&self) -> &Poses {
        &self.poses
    }

    /// Counts every solve's time budget on `clock` from the next solve on:
    /// the loop's choice, kept across retunes (see
    /// [`NodeConfig::budget_clock`]).
    pub fn set_budget_clock(&mut self, clock: Clock) {
        self.config.budget_clock = clock;
        self.solver_config.0.set_clock(clock);
        self.solver.set_clock(clock);
    }

    /// The same core with named poses to go to ([`Command::Pose`]), checked
    /// against the robot by [`PoseFile::check`](super::poses::PoseFile::check).
    pub fn with_poses(mut self, poses: Poses) -> NodeCore<S> {
        self.poses = poses;
        self
    }

    /// The servo output, for the caller to close (e.g. a link that relaxes
    /// or holds the servos on exit).
    pub fn into_servo(self) -> S {
        self.servo
    }

    pub fn servo(&self) -> &S {
        &self.servo
    }

    pub fn servo_mut(&mut self) -> &mut S {
        &mut self.servo
    }

    /// Every joint name the joint state carries: the chain's in order, the
    /// actuated joints off it, then the mimic joints (see [`JointLayout`]).
    pub fn joint_names(&self) -> &Arc<[String]> {
        self.layout.names()
    }
}
