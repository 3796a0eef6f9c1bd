//! The node core's hooks for Cartesian paths ([`crate::node::cartesian`]
//! decides): a path is checked point by point as a target is, planned a
//! share a tick while the arm holds (with the collision check on, only
//! through answers clear of collisions), then run as a joint trajectory.

use super::NodeCore;
use crate::collision::Clear;
use crate::ik::Unchecked;
use crate::node::cartesian::{CartesianPathMsg, Planning, check_times};
use crate::node::msg::TargetMsg;
use crate::node::status::RejectReason;
use crate::servo::ServoOutput;

type Taken = Result<(), (RejectReason, String)>;

impl<S: ServoOutput> NodeCore<S> {
    /// Takes a Cartesian path received at `now`: refused whole, naming
    /// the point, if any point would be refused as a target (frame, NaN,
    /// a bad quaternion) or the times do not increase; taken, it replaces
    /// the target, trajectory or path the arm was on, and the arm holds
    /// until it is planned.
    pub(super) fn cartesian_path(&mut self, msg: &CartesianPathMsg, now: f64) -> Taken {
        self.moving_allowed()?;
        self.check_start(msg.stamp, now)?;
        let times = check_times(&msg.points).map_err(|why| (RejectReason::Invalid, why))?;
        let mut targets = Vec::with_capacity(msg.points.len());
        for (k, p) in msg.points.iter().enumerate() {
            let point = TargetMsg {
                stamp: 0.0,
                frame_id: msg.frame_id.clone(),
                position: p.position,
                orientation: p.orientation,
            };
            let target = self
                .check(&point, now)
                .map_err(|(reason, why)| (reason, format!("point {}: {why}", k + 1)))?;
            targets.push(target);
        }
        let chain = self.solver.chain();
        let limits = self.motion.limits();
        let planning = Planning::new(chain, limits, &targets, &times, msg.stamp)
            .map_err(|why| (RejectReason::Invalid, why))?;
        self.end_trajectory();
        self.pending = None;
        self.active = None;
        self.status.holding = false;
        self.steering.release(&mut self.status.steering);
        let st = &mut self.status.teach.cartesian;
        st.accepted += 1;
        st.planning = true;
        (st.solved, st.points, st.between) = (0, msg.points.len(), planning.between());
        (st.solves, st.planned_s, st.largest_step, st.failed) = (0, 0.0, 0.0, None);
        st.speed_share = 0.0;
        self.teach.cartesian = Some(planning);
        Ok(())
    }

    /// One tick's share of planning the path taken, once the arm's pose
    /// is known; planned, its trajectory takes over.
    pub(super) fn plan_step(&mut self, now: f64) {
        let Some(planning) = &mut self.teach.cartesian else {
            return;
        };
        let dof = self.layout.dof();
        let start = &self.motion.position()[..dof];
        let st = &mut self.status.teach.cartesian;
        let clock = self.config.budget_clock;
        let done = match &mut self.guard {
            Some(g) => {
                let mut clear = Clear::new(g.world_mut());
                planning.step(&self.solver, clock, start, now, &mut clear, st)
            }
            None => planning.step(&self.solver, clock, start, now, &mut Unchecked, st),
        };
        let Some(done) = done else {
            return;
        };
        self.teach.cartesian = None;
        let failed = done.and_then(|traj| self.trajectory(&traj, now).map_err(|(_, why)| why));
        let st = &mut self.status.teach.cartesian;
        st.planning = false;
        st.failed = failed.err();
    }

    /// The path being planned is dropped, saying why (a command that
    /// moves the arm replaced it, the servos were relaxed).
    pub(super) fn drop_planning(&mut self, why: &str) {
        if self.teach.cartesian.take().is_some() {
            let st = &mut self.status.teach.cartesian;
            st.planning = false;
            st.failed = Some(why.to_owned());
        }
    }
}
