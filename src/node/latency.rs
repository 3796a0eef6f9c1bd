//! How long the node takes to answer a new input: wall time from
//! [`NodeCore::command`] (a target, a jog twist or a drag of the target
//! marker, [`LatencyInput`]) through the [`NodeCore::tick`] that acts on it
//! to the servo command and the joint state. This is the latency the arm's
//! user feels (the goal is p99 <= 1 ms in simulation), measured on the
//! real node code rather than on the solver alone, because the motion
//! limiter, the servo output and the status bookkeeping are on the same
//! path.
//!
//! `benches/node.rs` (criterion) and `arm_ik latency` (p50/p99/max) both
//! drive a [`LatencyProbe`], so their figures measure the same thing.

use super::command::Command;
use super::core::{NodeCore, NodeError};
use super::jog::TwistMsg;
use super::marker::{FeedbackEvent, MarkerFeedback, pose_of};
use super::msg::TargetMsg;
use super::path::figure_eight;
use super::settings::NodeConfig;
use super::status::TimeSummary;
use crate::ik::{Common, SolverConfig};
use crate::model::Chain;
use crate::servo::{ServoOutput, VirtualServo};
use serde::Serialize;
use std::time::Instant;

/// What the probe sends the node each tick, all along the figure-eight.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LatencyInput {
    /// A position target on the path (`target_point`): a full solve.
    #[default]
    Target,
    /// A base-frame twist along the path's velocity (`cmd_vel`): a jog
    /// step.
    Twist,
    /// Marker feedback dragging to the next point of the path
    /// (`target_marker/feedback`, POSE_UPDATE): a drag step.
    Marker,
}

impl LatencyInput {
    pub const ALL: [LatencyInput; 3] = [
        LatencyInput::Target,
        LatencyInput::Twist,
        LatencyInput::Marker,
    ];

    pub fn name(self) -> &'static str {
        match self {
            LatencyInput::Target => "target",
            LatencyInput::Twist => "twist",
            LatencyInput::Marker => "marker",
        }
    }

    /// By [`LatencyInput::name`]; the error lists the names.
    pub fn parse(s: &str) -> Result<LatencyInput, String> {
        LatencyInput::ALL
            .into_iter()
            .find(|i| i.name() == s)
            .ok_or_else(|| format!("'{s}' is not one of target, twist, marker"))
    }
}

/// A servo output that notes when it was last commanded, so the time a
/// servo frame leaves the node can be measured from outside the node
/// without instrumenting [`NodeCore::tick`] itself.
#[derive(Debug, Clone)]
pub struct TimedServo<S: ServoOutput = VirtualServo> {
    inner: S,
    last_command: Option<Instant>,
}

impl<S: ServoOutput> TimedServo<S> {
    pub fn new(inner: S) -> TimedServo<S> {
        TimedServo {
            inner,
            last_command: None,
        }
    }

    /// When the last command had been handed to the wrapped servos.
    pub fn last_command(&self) -> Option<Instant> {
        self.last_command
    }

    pub fn inner(&self) -> &S {
        &self.inner
    }
}

impl<S: ServoOutput> ServoOutput for TimedServo<S> {
    /// Commands the wrapped servos, then takes the time: the frame counts
    /// as out once the driver has it.
    fn command(&mut self, positions: &[f64], t: f64) {
        self.inner.command(positions, t);
        self.last_command = Some(Instant::now());
    }

    fn feedback(&self) -> Option<Vec<f64>> {
        self.inner.feedback()
    }

    fn link(&self) -> &str {
        self.inner.link()
    }
}

/// One input's trip through the node, wall time in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencySample {
    /// From `command` to the servo command having been sent.
    pub servo: f64,
    /// From `command` to `tick` returning the joint state (the end of the
    /// path: the state is what the node publishes).
    pub joint_state: f64,
}

/// Latency over many targets (seconds, exact quantiles).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyReport {
    pub servo: TimeSummary,
    pub joint_state: TimeSummary,
}

/// A node on timed virtual servos fed one new target per tick along the
/// figure-eight of `arm_ik sim`.
///
/// One target per tick is the worst case for latency: every tick solves,
/// warm-started from joints that lag the path (as on the real arm), so the
/// figures include a full solve each time rather than ticks with nothing to
/// do.
pub struct LatencyProbe {
    node: NodeCore<TimedServo>,
    period: f64,
    base: String,
    k: u64,
    input: LatencyInput,
    /// The tip's orientation at the start: the dragged marker's.
    grabbed: [f64; 4],
}

impl LatencyProbe {
    /// One loop of the figure-eight takes this long (s), as in `arm_ik sim`.
    pub const DEFAULT_PERIOD: f64 = 10.0;

    /// A probe on `chain` resting at the start pose (`config.initial` or
    /// mid-range); `period` is the time for one loop of the path (s).
    pub fn new(
        chain: &Chain,
        solver: SolverConfig,
        common: Common,
        config: NodeConfig,
        period: f64,
    ) -> Result<LatencyProbe, NodeError> {
        if !(period.is_finite() && period > 0.0) {
            return Err(NodeError::Config {
                name: "period",
                why: format!("{period} must be a positive number of seconds"),
            });
        }
        let start = config
            .initial
            .clone()
            .unwrap_or_else(|| chain.mid_configuration());
        let servo = TimedServo::new(VirtualServo::new(start));
        let node = NodeCore::new(chain, solver, common, config, servo)?;
        let grabbed = pose_of(&node.tip_pose()).1;
        Ok(LatencyProbe {
            node,
            period,
            base: chain.base.clone(),
            k: 0,
            input: LatencyInput::Target,
            grabbed,
        })
    }

    /// The probe sending `input` instead of targets.
    pub fn with_input(mut self, input: LatencyInput) -> LatencyProbe {
        self.input = input;
        self
    }

    /// The tick's input at node time `now`.
    fn input_at(&self, now: f64) -> Command {
        let p = figure_eight(now, self.period);
        match self.input {
            LatencyInput::Target => Command::Target(TargetMsg {
                stamp: now,
                frame_id: self.base.clone(),
                position: p,
                orientation: None,
            }),
            LatencyInput::Twist => {
                let dt = 1.0 / self.node.config().rate_hz;
                let next = figure_eight(now + dt, self.period);
                let v = [0, 1, 2].map(|i| (next[i] - p[i]) / dt);
                Command::Twist(TwistMsg::new(&self.base, v, [0.0; 3]))
            }
            LatencyInput::Marker => Command::MarkerFeedback(MarkerFeedback::new(
                FeedbackEvent::PoseUpdate,
                p,
                self.grabbed,
            )),
        }
    }

    /// Sends the next input on the path and runs the tick that acts on
    /// it. Building the message is not timed: the clock starts when the
    /// input arrives at the node.
    pub fn step(&mut self) -> LatencySample {
        let now = self.k as f64 / self.node.config().rate_hz;
        self.k += 1;
        let cmd = self.input_at(now);
        let t0 = Instant::now();
        // A refusal is counted in the status, which the caller reports.
        let _ = self.node.command(&cmd, now);
        let state = self.node.tick(now);
        let done = Instant::now();
        drop(state);
        let sent = self
            .node
            .servo()
            .last_command()
            .expect("every tick commands the servos");
        LatencySample {
            servo: sent.saturating_duration_since(t0).as_secs_f64(),
            joint_state: done.saturating_duration_since(t0).as_secs_f64(),
        }
    }

    /// Runs `warmup` targets untimed (first solves from the start pose,
    /// cold caches), then times `n` and summarises them.
    pub fn measure(&mut self, warmup: usize, n: usize) -> LatencyReport {
        for _ in 0..warmup {
            self.step();
        }
        let mut servo = Vec::with_capacity(n);
        let mut joint_state = Vec::with_capacity(n);
        for _ in 0..n {
            let s = self.step();
            servo.push(s.servo);
            joint_state.push(s.joint_state);
        }
        LatencyReport {
            servo: TimeSummary::of(&servo),
            joint_state: TimeSummary::of(&joint_state),
        }
    }

    /// The node under test (its status counts what happened to the
    /// targets, so a latency figure can be checked against solves that
    /// actually reached their target).
    pub fn node(&self) -> &NodeCore<TimedServo> {
        &self.node
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ik::SolverKind;

    const ARM: &str = include_str!("../../urdf/arm.urdf");

    /// Structure only, no speed goal: every target is solved by its own
    /// tick, and the servo frame leaves before the joint state returns.
    #[test]
    fn every_target_is_solved_and_timed_in_order() {
        let mut probe = probe(LatencyInput::Target);
        for _ in 0..20 {
            let s = probe.step();
            assert!(0.0 < s.servo && s.servo <= s.joint_state, "{s:?}");
        }
        let r = probe.measure(5, 50);
        assert_eq!(r.joint_state.count, 50);
        assert!(r.joint_state.p50 <= r.joint_state.p99 && r.joint_state.p99 <= r.joint_state.max);
        let t = probe.node().status().targets;
        assert_eq!((t.received, t.solved, t.superseded), (75, 75, 0));
        assert_eq!(t.reached, 75);
    }

    fn probe(input: LatencyInput) -> LatencyProbe {
        let chain = Chain::from_urdf_str(ARM, None, None).unwrap();
        LatencyProbe::new(
            &chain,
            SolverConfig::default_for(SolverKind::Jacobian),
            Common::default(),
            NodeConfig::default(),
            LatencyProbe::DEFAULT_PERIOD,
        )
        .unwrap()
        .with_input(input)
    }

    /// Twists jog and marker feedback drags on every tick, none refused.
    #[test]
    fn twists_and_marker_feedback_are_timed_through_the_tick() {
        for input in [LatencyInput::Twist, LatencyInput::Marker] {
            let mut probe = probe(input);
            let r = probe.measure(5, 50);
            assert_eq!(r.servo.count, 50);
            let st = &probe.node().status().steering;
            assert_eq!(st.refused, 0, "{input:?}");
            assert_eq!(st.twists + st.marker_feedback, 55, "{input:?}");
            assert_ne!(st.mode, crate::node::SteerMode::Idle, "{input:?}");
            assert_eq!(probe.node().status().targets.solved, 0);
        }
        assert_eq!(LatencyInput::parse("marker"), Ok(LatencyInput::Marker));
        assert!(LatencyInput::parse("mouse").unwrap_err().contains("twist"));
    }

    #[test]
    fn a_bad_period_is_refused() {
        let chain = Chain::from_urdf_str(ARM, None, None).unwrap();
        let probe = LatencyProbe::new(
            &chain,
            SolverConfig::default_for(SolverKind::Jacobian),
            Common::default(),
            NodeConfig::default(),
            0.0,
        );
        assert!(matches!(
            probe,
            Err(NodeError::Config { name: "period", .. })
        ));
    }
}
