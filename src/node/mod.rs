//! The node: the control loop behind the ROS 2 node and `arm_ik sim`,
//! without ROS.
//!
//! Targets ([`TargetMsg`]) go into a [`NodeCore`]; every [`NodeCore::tick`]
//! solves the latest one (warm-started from the current joints), moves the
//! commanded joints toward the answer within velocity, acceleration and
//! position limits ([`motion`]), sends them to a [`ServoOutput`](crate::servo::ServoOutput)
//! (`crate::servo`: virtual servos unless hardware is configured; the
//! runner layer, `crate::run`, picks one) and returns a [`JointState`]. The
//! caller passes the clock, so the same loop runs in real time, in
//! simulated time and in bag replay. [`MemoryNode`] stands in for ROS topics.
//! [`NodeSettings`] are what the node is told (solver and motion), from
//! the CLI or from the ROS parameters, [`NodeParams`], declared once;
//! [`report`] is the diagnostics,
//! both decided here so the ROS adapter (`crate::ros`, feature `ros2`) only
//! converts messages.
//! Twists and target-marker drags steer the tip by hand ([`steer`]): the
//! jog ([`jog`]) and the marker ([`marker`]) hand a moving target to a
//! local follower ([`follow`]) instead of the solver.
//! [`LatencyProbe`] times the path from a new input to the servo command.
//! Teaching the arm: a leader arm's frames followed ([`teleop`]), timed
//! joint trajectories ([`trajectory`]), programs of steps ([`program`]) and
//! poses recorded into the poses file ([`poses::store`]).

pub mod cartesian;
pub mod command;
pub mod core;
pub mod follow;
pub mod gripper;
pub mod guard;
pub mod jog;
pub mod joints;
pub mod latency;
pub mod marker;
pub mod memory;
pub mod motion;
pub mod msg;
pub mod params;
pub mod path;
pub mod poses;
pub mod program;
pub mod report;
pub mod settings;
pub mod status;
pub mod steer;
pub mod stream;
pub mod teleop;
pub mod track;
pub mod trajectory;

pub use cartesian::{CartesianPathMsg, CartesianPoint, CartesianStatus};
pub use command::{Command, Refused};
pub use core::{NodeCore, NodeError, Tick};
pub use gripper::GripperStatus;
pub use jog::TwistMsg;
pub use joints::JointLayout;
pub use latency::{LatencyInput, LatencyProbe, LatencyReport, LatencySample, TimedServo};
pub use marker::{FeedbackEvent, MarkerFeedback, MarkerSnapshot, MarkerUpdate};
pub use memory::MemoryNode;
pub use motion::{AxisLimits, MotionLimiter};
pub use msg::{JointCommandMsg, JointState, TargetMsg};
pub use params::{
    LeaderParams, LeaderSettings, LiveError, LiveParams, NodeParams, ParamFileError, ParamInfo,
    ParamSpec, ParamTable, ParamType, ParamValue, UrdfSource,
};
pub use path::{FigureEight, figure_eight};
pub use poses::store::{Comments, PoseStore, Stored};
pub use poses::{PoseError, PoseFile, Poses};
pub use program::{Program, ProgramError, ProgramState, ProgramStatus, Programs};
pub use report::{Health, HealthMonitor, Level};
pub use settings::{
    GripperSettings, JogSettings, MotionSettings, NodeConfig, NodeSettings, SettingError,
    SolverSettings, TwistFrame,
};
pub use status::{
    CollisionStatus, CommandCounters, NodeStatus, RejectReason, SolveOutcome, SteerMode,
    SteerStatus, TargetCounters, TeachStatus, TimeStats, TimeSummary,
};
pub use teleop::{LeaderMsg, TeleopPhase, TeleopSettings, TeleopStatus};
pub use trajectory::{TrajectoryMsg, TrajectoryPoint, TrajectoryStatus};
