//! The node core's hooks for teaching the arm ([`crate::node::teleop`],
//! [`crate::node::trajectory`], [`crate::node::program`] and
//! [`crate::node::poses::store`] decide; this wires them into the core):
//! leader frames and trajectories become a goal per tick that the one
//! motion limiter tracks, as the jog's does, so every limit (and any
//! check on the motion) covers them; programs issue their steps through
//! the same paths as the commands; recorded poses go into the poses file
//! and the named poses at once.

use super::NodeCore;
use crate::node::TargetMsg;
use crate::node::cartesian::Planning;
use crate::node::command::{Command, Refused};
use crate::node::msg::stale_why;
use crate::node::poses::store::{Comments, PoseStore};
use crate::node::poses::valid_name;
use crate::node::program::{Advance, GripperGoal, ProgramRun, Programs, Step};
use crate::node::status::RejectReason;
use crate::node::teleop::{Drive, LeaderMsg, Teleop, TeleopSettings};
use crate::node::trajectory::{self, Trajectory, TrajectoryError, TrajectoryJoint, TrajectoryMsg};
use crate::servo::ServoOutput;

/// What the core keeps for teaching.
#[derive(Debug, Default)]
pub(super) struct Teach {
    teleop: Option<Teleop>,
    trajectory: Option<Trajectory>,
    /// The message and joints of [`Teach::trajectory`] when it was taken
    /// before the arm's start pose was known: it is planned again from
    /// the measured pose, and its clock starts, once that pose is known
    /// (until then the arm is not moved, so a clock already running would
    /// leave it behind its own trajectory).
    waiting: Option<(TrajectoryMsg, Vec<TrajectoryJoint>)>,
    /// A Cartesian path being planned (`core/cartesian.rs`).
    pub(super) cartesian: Option<Planning>,
    program: Option<ProgramRun>,
    programs: Programs,
    store: Option<PoseStore>,
}

type Taken = Result<(), (RejectReason, String)>;

impl<S: ServoOutput> NodeCore<S> {
    /// Takes in one command received at `now` (node clock, s): every
    /// front-end's input comes through here. A refused command is counted
    /// in the status (with the last refusal's reason) and changes nothing.
    /// While a leader arm drives, the other commands that would move the
    /// arm are refused (reason `teleop`); one that is taken ends a running
    /// program, and a trajectory when it moves that trajectory's joints.
    pub fn command(&mut self, cmd: &Command, now: f64) -> Result<(), Refused> {
        if let Some(t) = &self.teach.teleop
            && cmd.moves()
            && !matches!(cmd, Command::Leader(_))
            && t.driving(now)
        {
            let why = format!(
                "the arm follows the leader arm (last frame {:.0} ms ago): relax it, or stop the leader, first",
                t.status.leader_age_s * 1e3
            );
            return Err(self.refuse_command(cmd, RejectReason::Teleop, why));
        }
        let taken = self.take_command(cmd, now);
        if taken.is_ok() && cmd.moves() {
            self.supersede(cmd);
        }
        taken
    }

    /// A command refused before it was looked at, counted where its kind
    /// is counted.
    fn refuse_command(&mut self, cmd: &Command, reason: RejectReason, why: String) -> Refused {
        let st = &mut self.status;
        match cmd {
            Command::Target(_) => {
                st.targets.received += 1;
                st.targets.rejected.count(reason);
            }
            Command::Twist(_) | Command::MarkerFeedback(_) => st.steering.refused += 1,
            _ => {
                st.commands.received += 1;
                st.commands.refused.count(reason);
            }
        }
        st.last_rejection = Some((reason, why.clone()));
        Refused { reason, why }
    }

    /// A command from outside was taken: it ends a running program (not
    /// the one it starts) and a trajectory whose joints it moves.
    fn supersede(&mut self, cmd: &Command) {
        let kind = match cmd {
            Command::Program { .. } => return,
            Command::Trajectory(_) => "trajectory",
            Command::CartesianPath(_) => "cartesian path",
            Command::Leader(_) => "leader",
            Command::Target(_) => "target",
            Command::Twist(_) | Command::MarkerFeedback(_) => "jog or marker",
            Command::JointCommand(_) => "joint",
            Command::Pose { .. } => "pose",
            _ => "gripper",
        };
        if let Some(mut run) = self.teach.program.take() {
            run.stop(format!("stopped by a {kind} command"));
            self.status.teach.program = Some(run.status);
        }
        let dof = self.layout.dof();
        let moved: Vec<usize> = match cmd {
            // Each replaces the one before itself; a trajectory of the
            // arm's joints replaces a path being planned too.
            Command::CartesianPath(_) => return,
            Command::Trajectory(m) => {
                if m.joint_names
                    .iter()
                    .any(|n| self.layout.axis(n).is_some_and(|a| a < dof))
                {
                    self.drop_planning("replaced by a trajectory command");
                }
                return;
            }
            Command::JointCommand(m) => m.name.iter().filter_map(|n| self.layout.axis(n)).collect(),
            Command::Gripper { .. } | Command::OpenGripper | Command::CloseGripper => {
                self.gripper.map(|g| g.axis).into_iter().collect()
            }
            _ => (0..self.layout.axes()).collect(),
        };
        if let Some(t) = &self.teach.trajectory
            && t.axes().iter().any(|a| moved.contains(a))
        {
            self.end_trajectory();
        }
        if moved.iter().any(|&a| a < dof) {
            self.drop_planning(&format!("replaced by a {kind} command"));
        }
    }

    pub(super) fn end_trajectory(&mut self) {
        self.teach.waiting = None;
        if let Some(mut t) = self.teach.trajectory.take() {
            t.status.active = false;
            self.status.teach.trajectory = t.status;
        }
    }

    /// The same core following a leader arm's frames ([`Command::Leader`]).
    pub fn with_leader(mut self, settings: TeleopSettings) -> NodeCore<S> {
        let teleop = Teleop::new(settings, self.layout.axes());
        self.status.teach.teleop = Some(teleop.status.clone());
        self.teach.teleop = Some(teleop);
        self
    }

    /// The same core with programs to run ([`Command::Program`]).
    pub fn with_programs(mut self, programs: Programs) -> NodeCore<S> {
        self.teach.programs = programs;
        self
    }

    /// The same core recording poses into `store` ([`Command::RecordPose`]).
    pub fn with_pose_store(mut self, store: PoseStore) -> NodeCore<S> {
        self.teach.store = Some(store);
        self
    }

    /// The programs this core runs.
    pub fn programs(&self) -> &Programs {
        &self.teach.programs
    }

    /// True while a program, a trajectory or a Cartesian path is under
    /// way: the arm may be at rest between two of their steps, or holding
    /// while a path is planned.
    pub fn busy(&self) -> bool {
        self.teach.program.is_some()
            || self.teach.trajectory.is_some()
            || self.teach.cartesian.is_some()
    }

    /// A leader frame: (axis, position) checked, then handed to the
    /// teleoperation.
    pub(super) fn leader_frame(&mut self, msg: &LeaderMsg, now: f64) -> Result<(), Refused> {
        let checked = self.leader_positions(msg);
        let Some(t) = &mut self.teach.teleop else {
            let why = "no leader arm is set up (leader_config, arm_ik teleop)".to_string();
            return self.count(Err((RejectReason::Invalid, why)));
        };
        match checked {
            Ok(positions) => {
                t.frame(&positions, now);
                self.status.teach.teleop = Some(t.status.clone());
                Ok(())
            }
            Err(e) => self.count(Err(e)),
        }
    }

    fn leader_positions(
        &self,
        msg: &LeaderMsg,
    ) -> Result<Vec<(usize, f64)>, (RejectReason, String)> {
        if msg.name.len() != msg.position.len() {
            let why = format!(
                "{} joint names and {} positions",
                msg.name.len(),
                msg.position.len()
            );
            return Err((RejectReason::Invalid, why));
        }
        msg.name
            .iter()
            .zip(&msg.position)
            .map(|(name, &q)| {
                let axis = self
                    .layout
                    .axis(name)
                    .ok_or_else(|| self.unknown_joint(name))?;
                if !q.is_finite() {
                    return Err((
                        RejectReason::NotFinite,
                        format!("leader joint '{name}' at {q}"),
                    ));
                }
                Ok((axis, q))
            })
            .collect()
    }

    /// A trajectory: checked and planned from where the arm is, replacing
    /// what is left of the one before.
    pub(super) fn trajectory(&mut self, msg: &TrajectoryMsg, now: f64) -> Taken {
        self.moving_allowed()?;
        self.check_start(msg.stamp, now)?;
        let mut joints = Vec::with_capacity(msg.joint_names.len());
        for name in &msg.joint_names {
            let axis = self
                .layout
                .axis(name)
                .ok_or_else(|| self.unknown_joint(name))?;
            if joints.iter().any(|j: &TrajectoryJoint| j.axis == axis) {
                return Err((RejectReason::Invalid, format!("joint '{name}' given twice")));
            }
            joints.push(TrajectoryJoint {
                axis,
                name: name.clone(),
                limits: self.motion.limits()[axis],
            });
        }
        let start = if msg.stamp == 0.0 { now } else { msg.stamp };
        let mut t = self.plan_trajectory(msg, &joints, start)?;
        t.status.accepted = self.status.teach.trajectory.accepted + 1;
        // It takes over the arm's joints it names, as a joint command does.
        if joints.iter().any(|j| j.axis < self.layout.dof()) {
            self.pending = None;
            self.active = None;
            self.status.holding = false;
            self.steering.release(&mut self.status.steering);
        }
        self.status.teach.trajectory = t.status.clone();
        self.teach.trajectory = Some(t);
        self.teach.waiting = (!self.started).then(|| (msg.clone(), joints));
        Ok(())
    }

    /// When a timed motion (a trajectory, a Cartesian path) is to start:
    /// a finite stamp, 0 (now), or one no older than `max_target_age`
    /// (a later one waits).
    pub(super) fn check_start(&self, stamp: f64, now: f64) -> Taken {
        if !stamp.is_finite() {
            return Err((RejectReason::NotFinite, format!("stamp {stamp}")));
        }
        let age = self.config.max_target_age;
        if stamp != 0.0 && stamp < now - age {
            return Err((RejectReason::Stale, stale_why(stamp, now, age)));
        }
        Ok(())
    }

    /// `msg` over `joints`, planned from where the motion is, to start at
    /// node time `start`.
    fn plan_trajectory(
        &self,
        msg: &TrajectoryMsg,
        joints: &[TrajectoryJoint],
        start: f64,
    ) -> Result<Trajectory, (RejectReason, String)> {
        trajectory::plan(
            msg,
            joints,
            self.motion.position(),
            self.motion.velocity(),
            start,
        )
        .map_err(|e| match e {
            TrajectoryError::NotFinite(s) => (RejectReason::NotFinite, s),
            other => (RejectReason::Invalid, other.to_string()),
        })
    }

    /// The start pose is known (at node time `now`): a trajectory taken
    /// before it is planned again from that pose and starts now, or at
    /// its stamp if that is later. One whose stamp passed while the arm
    /// was connecting starts late rather than partway through, so the
    /// arm never chases a reference that has run ahead of it.
    pub(super) fn start_waiting_trajectory(&mut self, now: f64) {
        let Some((msg, joints)) = self.teach.waiting.take() else {
            return;
        };
        let accepted = self.status.teach.trajectory.accepted;
        match self.plan_trajectory(&msg, &joints, now.max(msg.stamp)) {
            Ok(mut t) => {
                t.status.accepted = accepted;
                self.status.teach.trajectory = t.status.clone();
                self.teach.trajectory = Some(t);
            }
            // Checked when it was taken; only a measured pose the plan
            // cannot start from (not finite) gets here.
            Err((_, why)) => {
                if let Some(t) = &mut self.teach.trajectory {
                    t.status.aborted = Some(format!("not started from the measured pose: {why}"));
                }
                self.end_trajectory();
            }
        }
    }

    /// The tick's goal from the leader or the trajectory, tracked by the
    /// motion limiter; false when neither drives the arm (the caller
    /// steps the motion toward its goal as usual).
    pub(super) fn timed(&mut self, now: f64) -> bool {
        let dt = self.motion.period();
        if let Some(t) = &mut self.teach.teleop {
            let drive = t.step(
                now,
                &self.goal,
                self.motion.position(),
                self.motion.limits(),
                dt,
            );
            self.status.teach.teleop = Some(t.status.clone());
            match drive {
                Drive::Idle => {}
                Drive::Hold => {
                    // Stop where the arm is (braking within the limits).
                    self.goal.copy_from_slice(self.motion.position());
                    self.motion.set_goal(&self.goal);
                }
                Drive::Track(goal) => {
                    // Through the collision guard, as every motion: a
                    // leader that leads into the table is followed to the
                    // margin, no further.
                    self.goal.copy_from_slice(&goal);
                    self.guarded(|m| m.track(&goal));
                    return true;
                }
            }
        }
        let Some(t) = &mut self.teach.trajectory else {
            return false;
        };
        let reference = t.sample(now);
        for (&axis, &q) in t.axes().iter().zip(&reference) {
            self.goal[axis] = q;
        }
        let goal = self.goal.clone();
        if self.guarded(|m| m.track(&goal)) {
            // Stopped short of a collision: the rest of the trajectory is
            // dropped (the arm holds where it stopped) and the status says
            // why.
            let why = self
                .status
                .collision
                .as_ref()
                .and_then(|c| c.last_stop.clone());
            if let Some(t) = &mut self.teach.trajectory {
                t.status.aborted = why.or_else(|| Some("stopped by the collision check".into()));
            }
            self.end_trajectory();
            return true;
        }
        let Some(t) = &mut self.teach.trajectory else {
            return false;
        };
        t.record(now, self.motion.position(), &reference);
        let arrived = t.axes().iter().all(|&a| {
            self.motion.position()[a] == self.goal[a] && self.motion.velocity()[a] == 0.0
        });
        self.status.teach.trajectory = t.status.clone();
        if t.over(now) && arrived {
            self.end_trajectory();
        }
        true
    }

    /// Stores where the arm is as pose `name`: measured when the servos
    /// measure, clamped into the joints' limits (what was clamped is said),
    /// written into the poses file and offered at once.
    pub(super) fn record_pose(&mut self, name: &str) -> Taken {
        let Some(store) = &self.teach.store else {
            return Err((
                RejectReason::Invalid,
                format!("no poses file to record '{name}' into (poses_file, --poses)"),
            ));
        };
        if !valid_name(name) {
            let why = format!(
                "pose name '{}' must be letters, digits and underscores, starting with a letter",
                crate::node::msg::clip(name, 60)
            );
            return Err((RejectReason::Invalid, why));
        }
        // Servos that measure are believed only while their link is up:
        // an old reading would store a pose the arm is not in.
        let q = if self.servo.measured() {
            self.valid_feedback()
                .filter(|_| self.servo.link_ok())
                .ok_or_else(|| {
                    let why = format!(
                        "pose '{name}' not recorded: the servos have not reported where they are ({})",
                        self.servo.link()
                    );
                    (RejectReason::Invalid, why)
                })?
        } else {
            self.motion.position().to_vec()
        };
        let chain = self.solver.chain();
        let mut joints = Vec::with_capacity(q.len());
        let mut clamped = Vec::new();
        for (axis, &x) in q.iter().enumerate() {
            let l = self.layout.limits(chain, axis);
            // Micro-radians are plenty, and read better in the file; the
            // limit itself when rounding would step past it.
            let rounded = (x * 1e6).round() / 1e6;
            let v = if l.contains(rounded) {
                rounded
            } else {
                l.clamp(x)
            };
            let joint = self.layout.names()[axis].clone();
            if (v - x).abs() > 1e-6 {
                clamped.push(format!("{joint} clamped from {x:.4} to {v:.4}"));
            }
            joints.push((joint, v));
        }
        let stored = store
            .write(name, &joints)
            .map_err(|e| (RejectReason::Invalid, e.to_string()))?;
        let axes = joints
            .iter()
            .enumerate()
            .map(|(a, (_, v))| (a, *v))
            .collect();
        self.poses.insert(name, axes);
        let mut said = format!(
            "{} pose '{name}' in {}",
            if stored.replaced {
                "replaced"
            } else {
                "recorded"
            },
            store.path().display()
        );
        if !clamped.is_empty() {
            said.push_str(&format!(" ({}: outside the limits)", clamped.join(", ")));
        }
        match stored.comments {
            Comments::Kept => {}
            Comments::LostInEntry => said.push_str("; the comments inside its old entry are gone"),
            Comments::Rewritten => said.push_str(
                "; the file could not be edited line by line and was written anew: its comments are gone",
            ),
        }
        self.status.teach.recorded = Some(said);
        Ok(())
    }

    /// Starts program `name` (replacing a running one) at the next tick.
    pub(super) fn run_program(&mut self, name: &str) -> Taken {
        self.moving_allowed()?;
        let Some(program) = self.teach.programs.get(name).cloned() else {
            let names: Vec<&str> = self.teach.programs.names().collect();
            let why = if names.is_empty() {
                format!("no program '{name}': none were given (programs, --program)")
            } else {
                format!(
                    "no program '{name}' (the programs are {})",
                    names.join(", ")
                )
            };
            return Err((RejectReason::Invalid, why));
        };
        if let Some(mut old) = self.teach.program.take() {
            old.stop(format!("replaced by program '{name}'"));
        }
        self.end_trajectory();
        let run = ProgramRun::new(program);
        self.status.teach.program = Some(run.status.clone());
        self.teach.program = Some(run);
        Ok(())
    }

    /// The program's tick: the next step once the one before finished.
    pub(super) fn program_step(&mut self, now: f64) {
        let settled = self.motion.is_settled() && self.pending.is_none();
        let unreachable = self.status.targets.unreachable;
        let Some(run) = &mut self.teach.program else {
            return;
        };
        let mut advance = run.advance(now, settled, unreachable);
        if let Advance::Issue(step) = &advance {
            let step = step.clone();
            if let Err((_, why)) = self.issue(&step, now)
                && let Some(run) = &mut self.teach.program
            {
                advance = run.refused(&why);
            }
        }
        let Some(run) = &mut self.teach.program else {
            return;
        };
        self.status.teach.program = Some(run.status.clone());
        if matches!(advance, Advance::Done | Advance::Failed(_)) {
            self.teach.program = None;
        }
    }

    /// Carries out one program step through the command's own path.
    fn issue(&mut self, step: &Step, now: f64) -> Taken {
        match step {
            Step::Pose(name) => self.go_to(name),
            Step::Joints(axes) => {
                self.moving_allowed()?;
                self.move_axes(axes.iter().copied());
                Ok(())
            }
            Step::Gripper(g) => {
                let g = *g;
                self.gripper_to(|grip| match g {
                    GripperGoal::Open => grip.open,
                    GripperGoal::Close => grip.closed,
                    GripperGoal::Position(p) => p,
                })
            }
            Step::Target(t) => {
                let msg = TargetMsg {
                    stamp: 0.0,
                    frame_id: String::new(),
                    position: t.position,
                    orientation: t.orientation,
                };
                match self.on_target(&msg, now) {
                    None => Ok(()),
                    Some(reason) => Err((reason, self.last_rejection_why())),
                }
            }
            Step::Wait(_) => Ok(()),
        }
    }

    /// Relaxed: trajectories and programs stop; the teleoperation will
    /// approach the leader again once enabled.
    pub(super) fn teach_relaxed(&mut self) {
        self.end_trajectory();
        self.drop_planning("stopped: the servos were relaxed");
        if let Some(mut run) = self.teach.program.take() {
            run.stop("stopped: the servos were relaxed".into());
            self.status.teach.program = Some(run.status);
        }
    }

    /// Enabled: the follower approaches the leader slowly again.
    pub(super) fn teach_enabled(&mut self) {
        if let Some(t) = &mut self.teach.teleop
            && t.status.frames > 0
        {
            t.restart();
        }
    }
}
