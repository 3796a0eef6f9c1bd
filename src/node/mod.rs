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
//! [`LatencyProbe`] times the path from a new target to the servo command.

pub mod command;
pub mod core;
pub mod gripper;
pub mod joints;
pub mod latency;
pub mod memory;
pub mod motion;
pub mod msg;
pub mod params;
pub mod path;
pub mod poses;
pub mod report;
pub mod settings;
pub mod status;

pub use command::{Command, Refused};
pub use core::{NodeCore, NodeError, Tick};
pub use gripper::GripperStatus;
pub use joints::JointLayout;
pub use latency::{LatencyProbe, LatencyReport, LatencySample, TimedServo};
pub use memory::MemoryNode;
pub use motion::{AxisLimits, MotionLimiter};
pub use msg::{JointCommandMsg, JointState, TargetMsg};
pub use params::{
    LiveError, LiveParams, NodeParams, ParamFileError, ParamInfo, ParamSpec, ParamType, ParamValue,
    UrdfSource,
};
pub use path::{FigureEight, figure_eight};
pub use poses::{PoseError, PoseFile, Poses};
pub use report::{Health, HealthMonitor, Level};
pub use settings::{
    GripperSettings, MotionSettings, NodeConfig, NodeSettings, SettingError, SolverSettings,
};
pub use status::{
    CommandCounters, NodeStatus, RejectReason, SolveOutcome, TargetCounters, TimeStats, TimeSummary,
};
