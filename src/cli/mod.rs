//! Command-line interface: one file per subcommand.

mod bench;
mod check;
mod drive;
mod import_lerobot;
mod latency;
mod make_bag;
mod parse;
mod ports;
mod replay;
mod robot;
mod sim;
mod solve;
mod solver_args;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Inverse kinematics for hobby robot arms: URDF in, joint angles out.
#[derive(Debug, Parser)]
#[command(name = "arm_ik", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show a URDF chain: joints, limits, and which solvers apply (and why not).
    Check(check::Args),
    /// Solve one target pose.
    Solve(solve::Args),
    /// Run the IK benchmark protocol on a target file.
    Bench(bench::Args),
    /// Run the node on virtual servos in simulated time: a built-in
    /// figure-eight or targets from stdin; no ROS, no hardware.
    Sim(sim::Args),
    /// Time the node from a new target to the servo command and joint
    /// state (p50/p99/max) on virtual servos.
    Latency(latency::Args),
    /// Replay a rosbag2 bag's targets (MCAP or sqlite3) through the node
    /// core and check every target and tick; exit 0 only if all checks pass.
    Replay(replay::Args),
    /// Write a target bag from a waypoint scenario (YAML).
    MakeBag(make_bag::Args),
    /// Send one joint-space pose to the servos (firmware bridge or Feetech
    /// bus, per --config) and hold it; virtual servos without --port.
    Drive(drive::Args),
    /// List serial ports with their USB ids.
    Ports(ports::Args),
    /// Turn a LeRobot calibration file (SO-100, SO-101, Koch) into the
    /// servo YAML of the same arm.
    ImportLerobot(import_lerobot::Args),
}

/// Exit code for "ran, but the answer is not good enough" (a target not
/// reached, a benchmark below its goal): distinct from 1, an error.
pub const EXIT_NOT_REACHED: u8 = 2;

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Check(a) => check::run(a),
        Command::Solve(a) => solve::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Sim(a) => sim::run(a),
        Command::Latency(a) => latency::run(a),
        Command::Replay(a) => replay::run(a),
        Command::MakeBag(a) => make_bag::run(a),
        Command::Drive(a) => drive::run(a),
        Command::Ports(a) => ports::run(a),
        Command::ImportLerobot(a) => import_lerobot::run(a),
    }
}
