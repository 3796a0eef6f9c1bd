//! The commands that operate the arm without a target: joint moves, the
//! gripper, relax and enable, named poses. Each either changes the goals of
//! the one motion limiter (so every move keeps the same speed,
//! acceleration and position limits) or is refused with a reason, changing
//! nothing.

use super::NodeCore;
use crate::node::command::Refused;
use crate::node::msg::JointCommandMsg;
use crate::node::settings::Gripper;
use crate::node::status::RejectReason;
use crate::servo::ServoOutput;

fn refuse(reason: RejectReason, why: impl Into<String>) -> Result<(), (RejectReason, String)> {
    Err((reason, why.into()))
}

impl<S: ServoOutput> NodeCore<S> {
    /// Counts a command other than a target, and records a refusal.
    pub(super) fn count(
        &mut self,
        taken: Result<(), (RejectReason, String)>,
    ) -> Result<(), Refused> {
        let c = &mut self.status.commands;
        c.received += 1;
        match taken {
            Ok(()) => {
                c.accepted += 1;
                Ok(())
            }
            Err((reason, why)) => {
                c.refused.count(reason);
                self.status.last_rejection = Some((reason, why.clone()));
                Err(Refused { reason, why })
            }
        }
    }

    /// Refused while the servos are relaxed: nothing may move them.
    pub(super) fn moving_allowed(&self) -> Result<(), (RejectReason, String)> {
        if self.relaxed {
            return refuse(
                RejectReason::Relaxed,
                "the servos are relaxed: enable them first",
            );
        }
        Ok(())
    }

    /// New goals for some axes: the arm's replace the target being
    /// followed; a new gripper goal releases a stalled gripper.
    /// Before the start pose is known (see [`NodeCore::tick`]) they wait,
    /// as a target does, and are taken once it is.
    pub(super) fn move_axes(&mut self, goals: impl IntoIterator<Item = (usize, f64)>) {
        let dof = self.layout.dof();
        let gripper = self.gripper.map(|g| g.axis);
        for (axis, q) in goals {
            if !self.started {
                self.early_goals.retain(|&(a, _)| a != axis);
                self.early_goals.push((axis, q));
                if axis < dof {
                    self.pending = None;
                }
                continue;
            }
            let l = self.motion.limits()[axis];
            self.goal[axis] = q.clamp(l.lower, l.upper);
            if axis < dof {
                self.pending = None;
                self.active = None;
                self.status.holding = false;
                self.steering.release(&mut self.status.steering);
            }
            if Some(axis) == gripper {
                self.stalled = false;
            }
        }
        self.motion.set_goal(&self.goal);
    }

    /// The start pose is known at node time `now`: the joint goals and a
    /// trajectory commanded before it are taken now.
    pub(super) fn begin(&mut self, now: f64) {
        self.started = true;
        if let (Some(g), Some(st)) = (&mut self.guard, &mut self.status.collision) {
            g.measure(self.motion.position(), st);
            g.check_start(st);
        }
        let early = std::mem::take(&mut self.early_goals);
        if !early.is_empty() {
            self.move_axes(early);
        }
        self.start_waiting_trajectory(now);
    }

    /// Moves the named joints to their positions (clamped to their
    /// limits); unknown and mimic joints, repeated names and non-finite
    /// positions are refused, naming the joint.
    pub(super) fn joint_command(
        &mut self,
        msg: &JointCommandMsg,
    ) -> Result<(), (RejectReason, String)> {
        self.moving_allowed()?;
        if msg.name.len() != msg.position.len() {
            let why = format!(
                "{} joint names and {} positions",
                msg.name.len(),
                msg.position.len()
            );
            return refuse(RejectReason::Invalid, why);
        }
        if msg.name.is_empty() {
            return refuse(RejectReason::Invalid, "no joints given");
        }
        let mut goals = Vec::with_capacity(msg.name.len());
        for (name, &q) in msg.name.iter().zip(&msg.position) {
            let axis = self
                .layout
                .axis(name)
                .ok_or_else(|| self.unknown_joint(name))?;
            if !q.is_finite() {
                return refuse(RejectReason::NotFinite, format!("joint '{name}' to {q}"));
            }
            if goals.iter().any(|&(a, _)| a == axis) {
                return refuse(RejectReason::Invalid, format!("joint '{name}' given twice"));
            }
            goals.push((axis, q));
        }
        self.move_axes(goals);
        Ok(())
    }

    pub(super) fn unknown_joint(&self, name: &str) -> (RejectReason, String) {
        let why = match self.layout.leader_of(name) {
            Some(leader) => format!("joint '{name}' mimics '{leader}': command '{leader}'"),
            None => format!(
                "no joint '{name}' (the node moves {})",
                self.layout.names()[..self.layout.axes()].join(", ")
            ),
        };
        (RejectReason::UnknownJoint, why)
    }

    /// Moves the gripper to where `position` says (clamped to its limits).
    pub(super) fn gripper_to(
        &mut self,
        position: impl FnOnce(&Gripper) -> f64,
    ) -> Result<(), (RejectReason, String)> {
        let Some(g) = self.gripper else {
            return refuse(
                RejectReason::NoGripper,
                "the robot has no gripper (see the gripper_joint parameter)",
            );
        };
        self.moving_allowed()?;
        let q = position(&g);
        if !q.is_finite() {
            return refuse(RejectReason::NotFinite, format!("gripper to {q}"));
        }
        self.move_axes([(g.axis, q)]);
        Ok(())
    }

    /// Every servo limp: the target and the moves are dropped, the arm
    /// stops being driven where it is.
    pub(super) fn relax(&mut self) {
        if self.relaxed {
            return;
        }
        self.relaxed = true;
        self.servo.relax();
        self.teach_relaxed();
        self.pending = None;
        self.steering.release(&mut self.status.steering);
        self.early_goals.clear();
        self.active = None;
        self.stalled = false;
        self.status.holding = false;
        let q = self.motion.position().to_vec();
        self.motion.reset(&q);
        self.goal.copy_from_slice(&q);
    }

    /// The servos hold again, from where they are: measured when the
    /// servos measure, else where they were last told; the motion restarts
    /// there at rest, so nothing jumps.
    pub(super) fn enable(&mut self) {
        if !self.relaxed {
            return;
        }
        self.relaxed = false;
        self.servo.enable();
        self.teach_enabled();
        let q = match self.valid_feedback() {
            Some(fb) if self.servo.measured() => fb,
            _ => self.motion.position().to_vec(),
        };
        self.motion.reset(&q);
        self.goal.copy_from_slice(self.motion.position());
    }

    /// Moves to the named pose in joint space.
    pub(super) fn go_to(&mut self, name: &str) -> Result<(), (RejectReason, String)> {
        self.moving_allowed()?;
        let Some(pose) = self.poses.get(name) else {
            let why = if self.poses.is_empty() {
                format!(
                    "no pose '{name}': no poses file was given (ik_node's poses_file parameter, arm_ik run's --poses)"
                )
            } else {
                let names: Vec<&str> = self.poses.names().collect();
                format!("no pose '{name}' (the poses are {})", names.join(", "))
            };
            return refuse(RejectReason::UnknownPose, why);
        };
        let pose = pose.to_vec();
        self.move_axes(pose);
        Ok(())
    }
}
