//! The node core's hooks for a stream of targets ([`crate::node::stream`]
//! decides what is a stream and what a swing; this wires it in): each
//! answer handed to the stream, the motion advanced along the stream's
//! moving goal while one is on, and a swing mid-stream refused when it
//! would take the tip off the path (measured here, on the chain).

use super::NodeCore;
use crate::ik::{IkError, PoseDeviation, Solution, Target, Tolerance, pose_error};
use crate::model::Chain;
use crate::node::cartesian::{LINE_SPAN, LINE_SPAN_TURN};
use crate::node::status::{RejectReason, SolveOutcome};
use crate::node::stream::MAX_GAP;
use crate::servo::ServoOutput;

impl<S: ServoOutput> NodeCore<S> {
    /// A new answer (in `self.goal`) at `now`: the stream takes it, or the
    /// motion goes to it as to a single target.
    pub(super) fn take_answer(&mut self, now: f64) {
        let dof = self.layout.dof();
        let speeds = self.speeds();
        let arm = &self.motion.position()[..dof];
        self.stream.answered(now, &self.goal[..dof], arm, &speeds);
        if self.stream.answer().is_none() {
            self.motion.set_goal(&self.goal);
        }
    }

    /// The chain joints' speed limits.
    fn speeds(&self) -> Vec<f64> {
        let dof = self.layout.dof();
        self.motion.limits()[..dof]
            .iter()
            .map(|l| l.velocity)
            .collect()
    }

    /// The refusal of `answer` (the chain's joints) to `target`, solved at
    /// `now`, when it would swing the arm to another configuration in the
    /// middle of a stream: `target` is a step of a path from `before` (the
    /// target solved before it; no farther than a Cartesian path's points
    /// joined as the joints move), but the answer leaves the stream's
    /// joint path ([`crate::node::stream::TargetStream::swing`]). The arm
    /// holds at the stream's latest answer; the stream goes on, so the arm
    /// follows again once an answer is a step of the path, and a pause
    /// lets the next target move it as a single target would.
    pub(super) fn swing_refusal(
        &mut self,
        before: Option<&Target>,
        target: &Target,
        answer: &[f64],
        now: f64,
    ) -> Option<SolveOutcome> {
        let before = before?;
        // Something else (a joint command, a pose) has set the goal since
        // the stream's latest answer: the arm is not on the stream's path.
        if self.goal[..self.layout.dof()] != *self.stream.latest() {
            return None;
        }
        let moved = (target.position - before.position).norm();
        if moved > LINE_SPAN || before.orientation.turn_to(&target.orientation) > LINE_SPAN_TURN {
            return None;
        }
        let swing = self.stream.swing(now, answer, &self.speeds())?;
        let off = sweep(
            self.solver.chain(),
            self.stream.latest(),
            answer,
            before,
            target,
        );
        if off.within(&SWEEP) {
            return None;
        }
        self.stream.held(now);
        let why = format!(
            "the target moved {:.1} mm along its path, but its answer swings {} by {:.2} in \
             {:.0} ms, more than twice its speed limit allows, and would take the tip {:.0} mm \
             and {:.2} rad off the path to another configuration: the arm holds (pause the \
             stream {MAX_GAP} s to let it move there, or send the path whole as a \
             cartesian_path)",
            moved * 1e3,
            self.layout.names()[swing.joint],
            swing.change,
            swing.within * 1e3,
            off.position_norm() * 1e3,
            off.rotation_norm(),
        );
        let st = &mut self.status;
        st.targets.rejected.count(RejectReason::Reconfiguration);
        st.last_rejection = Some((RejectReason::Reconfiguration, why.clone()));
        st.holding = true;
        Some(SolveOutcome::Refused { why })
    }

    /// One period of motion toward the goal: along the stream's moving
    /// goal while the latest answer is still the goal, else straight to it.
    pub(super) fn advance(&mut self, now: f64) {
        let dof = self.layout.dof();
        let streaming = self.stream.answer() == Some(&self.goal[..dof]);
        let moving = streaming
            .then(|| self.stream.goal(now + self.motion.period()))
            .flatten();
        match moving {
            Some(mut goal) => {
                goal.extend_from_slice(&self.goal[dof..]);
                self.guarded(|m| m.track(&goal));
            }
            None => {
                if streaming {
                    self.stream.end();
                    self.motion.set_goal(&self.goal);
                }
                self.guarded(|m| m.step());
            }
        }
    }

    /// Solves `target` from `seed` (where the arm is) and, while a stream
    /// is on and the arm has no self-motion for the target, also from
    /// where the answers are heading ([`crate::node::stream::TargetStream::continuation`]):
    /// of the two answers, the one nearer that continuation. Both are
    /// usually the same answer; near a singular pose (a stretched elbow,
    /// where two branches meet) the arm, trailing the path, is still on
    /// the near side and its seed can take the branch that turns back,
    /// while the continuation has crossed with the path (benches/README.md,
    /// Track sets). No look-ahead to tune: one step of the answers' own.
    /// A redundant arm's answers move along their self-motion on every
    /// solve (the steering), so there the seed alone decides: taking the
    /// nearer answer there too made more jumps, not fewer (the project
    /// arm's position track set 17 instead of 13, the UR5's 1 instead of 0).
    pub(super) fn solve_continuing(
        &mut self,
        target: &Target,
        seed: &[f64],
    ) -> Result<Solution, IkError> {
        let first = self.solver.solve(target, seed)?;
        let constraints = if target.wants_orientation() { 6 } else { 3 };
        let ahead = self
            .stream
            .continuation()
            .filter(|_| seed.len() <= constraints && first.status.is_converged());
        let Some(ahead) = ahead else {
            return Ok(first);
        };
        let away = |q: &[f64]| -> f64 { q.iter().zip(&ahead).map(|(a, b)| (a - b).powi(2)).sum() };
        match self.solver.solve(target, &ahead) {
            Ok(other) if other.status.is_converged() && away(&other.q) < away(&first.q) => {
                Ok(other)
            }
            _ => Ok(first),
        }
    }
}

/// A swing that keeps the tip this near the path (m, rad) is followed: a
/// joint the target leaves free turning over (a wrist's roll about a
/// pointing, 5 mm off its axis on the SO-101), or joints moving fast while
/// the tip keeps to the line. The swings to another configuration that
/// the hold is for took the tip 67–921 mm off (benches/README.md,
/// "Holding instead of swinging across").
const SWEEP: Tolerance = Tolerance {
    position: 0.02,
    orientation: 0.2,
};

/// Samples along a swing checked for [`SWEEP`], the ends left out.
const SWEEP_SAMPLES: usize = 8;

/// How far the tip strays from the path (the larger position and
/// orientation deviation) while the joints move in a straight line from
/// `from` to `to`: the position measured from the line between the two
/// tips, the orientation from the way `before` turns toward `target`.
fn sweep(
    chain: &Chain,
    from: &[f64],
    to: &[f64],
    before: &Target,
    target: &Target,
) -> PoseDeviation {
    let start = chain.fk(from).translation.vector;
    let mut worst = PoseDeviation {
        position: nalgebra::Vector3::zeros(),
        rotation: nalgebra::Vector3::zeros(),
    };
    for k in 1..SWEEP_SAMPLES {
        let s = k as f64 / SWEEP_SAMPLES as f64;
        let q: Vec<f64> = from.iter().zip(to).map(|(a, b)| a + s * (b - a)).collect();
        let mut on_path = before.toward(target, s);
        on_path.position = start.lerp(&target.position, s);
        let d = pose_error(&chain.fk(&q), &on_path);
        if d.position_norm() > worst.position_norm() {
            worst.position = d.position;
        }
        if d.rotation_norm() > worst.rotation_norm() {
            worst.rotation = d.rotation;
        }
    }
    worst
}
