//! Command-line interface: one file per subcommand.

#[macro_use]
pub mod out;

mod bag_args;
mod bench;
mod calibrate;
mod check;
mod collision_args;
mod collisions;
mod draw;
mod drive;
mod fk;
mod import_lerobot;
mod latency;
mod make_bag;
mod params;
mod parse;
mod ports;
mod progress;
mod replay;
mod robot;
mod run;
mod settings_args;
#[cfg(test)]
mod settings_paths;
mod solve;
mod stop;
mod teach;
mod teleop;
mod values;
mod view;
mod watch;

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
    /// Show the collision model of a URDF: approximated links, the floor,
    /// the pairs checked and those left out (the allowed-collision matrix)
    /// and why; --srdf-out writes them as an SRDF for MoveIt.
    Collisions(collisions::Args),
    /// Solve one target pose.
    Solve(solve::Args),
    /// Forward kinematics: joint angles in, the tip's pose out (--all:
    /// every link of the chain).
    Fk(fk::Args),
    /// Run the IK benchmark protocol on a target file.
    Bench(bench::Args),
    /// Run the node on virtual servos in simulated time: a built-in
    /// figure-eight placed for the robot, commands from stdin or a target
    /// bag; no ROS, no hardware.
    Sim(Box<run::LoopArgs>),
    /// Run the node without ROS on real servos (--config, --port) or
    /// virtual ones: commands as JSON lines on stdin, a target bag at its
    /// recorded timing, or the figure-eight.
    Run(Box<run::Args>),
    /// Time the node from a new target to the servo command and joint
    /// state (p50/p99/max) on virtual servos.
    Latency(latency::Args),
    /// Replay a rosbag2 bag's targets (MCAP or sqlite3) through the node
    /// core and check every target and tick; exit 0 only if all checks pass.
    Replay(Box<replay::Args>),
    /// Write a target bag from a waypoint scenario (YAML).
    MakeBag(make_bag::Args),
    /// Draw the arm as SVG from a bag's /tf and /tf_static (what replay
    /// --output and sim --record write): a few poses and the targets.
    Draw(draw::Args),
    /// Send one joint-space pose to the servos (firmware bridge, Feetech or
    /// Dynamixel bus, per --config) and hold it; virtual servos without --port.
    Drive(drive::Args),
    /// Record poses by hand: the servos relaxed, each name typed on stdin
    /// stores where the arm is into the poses file.
    Teach(Box<teach::Args>),
    /// Leader–follower teleoperation without ROS: the leader arm's servos
    /// relaxed and read, the follower copying its pose within its limits.
    Teleop(Box<teleop::Args>),
    /// List serial ports with their USB ids.
    Ports(ports::Args),
    /// List the ROS 2 node's parameters: type, default, meaning, allowed
    /// values, and whether they can change while it runs.
    Params(params::Args),
    /// Make a new arm's servo file by showing it its poses: a terminal
    /// wizard for Feetech and Dynamixel buses and the PWM bridge (zero,
    /// direction and range of each joint, written atomically).
    Calibrate(Box<calibrate::Args>),
    /// Turn a LeRobot calibration file (SO-100, SO-101, Koch) into the
    /// servo YAML of the same arm.
    ImportLerobot(import_lerobot::Args),
}

/// Exit code for an error: input that cannot be read or is invalid, a
/// device that cannot be reached, an output that may not be written.
pub const EXIT_ERROR: u8 = 1;

/// Exit code for "ran, but the answer is not good enough" (a target only
/// reached best effort, a replay check or a latency limit failed):
/// distinct from 1, an error.
pub const EXIT_NOT_REACHED: u8 = 2;

/// Exit code for a command line that could not be understood (an unknown
/// flag, a missing argument, a value that does not parse): nothing ran.
/// clap's own code for this is 2, which a CI script would read as a
/// failed check; 64 is `EX_USAGE` of BSD's `sysexits.h`.
pub const EXIT_USAGE: u8 = 64;

/// A flag whose value the library refused (out of range, or naming what
/// the robot does not have): reported like any error, but with
/// [`EXIT_USAGE`], since the command line is at fault and nothing ran.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The exit code of an error a command returned.
pub fn error_code(e: &anyhow::Error) -> ExitCode {
    if e.chain().any(|c| c.is::<UsageError>()) {
        ExitCode::from(EXIT_USAGE)
    } else {
        ExitCode::from(EXIT_ERROR)
    }
}

impl Cli {
    /// The command line, parsed. A negative number is taken as a flag's
    /// value (`--settle -1`), so its range check can say what is wrong
    /// with it rather than clap calling it an unexpected argument.
    pub fn try_parse_args() -> Result<Cli, clap::Error> {
        use clap::{CommandFactory, FromArgMatches};
        let command = Cli::command().mut_subcommands(|s| s.allow_negative_numbers(true));
        Cli::from_arg_matches(&command.try_get_matches()?)
    }
}

/// Prints clap's message and exits with [`EXIT_USAGE`]; `--help` and
/// `--version` (also "errors" to clap) print on stdout and exit 0.
pub fn usage_error(e: &clap::Error) -> ExitCode {
    let _ = e.print();
    if e.use_stderr() {
        ExitCode::from(EXIT_USAGE)
    } else {
        ExitCode::SUCCESS
    }
}

/// An error and its causes on one line, as `{:#}` joins them, but without
/// a cause whose text the line already holds: library errors that quote
/// their source (`path: No such file or directory`) would otherwise say it
/// twice.
pub fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Check(a) => check::run(a),
        Command::Collisions(a) => collisions::run(a),
        Command::Solve(a) => solve::run(a),
        Command::Fk(a) => fk::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Sim(a) => run::sim(*a),
        Command::Run(a) => run::run(*a),
        Command::Latency(a) => latency::run(a),
        Command::Replay(a) => replay::run(*a),
        Command::MakeBag(a) => make_bag::run(a),
        Command::Draw(a) => draw::run(a),
        Command::Drive(a) => drive::run(a),
        Command::Teach(a) => teach::run(*a),
        Command::Teleop(a) => teleop::run(*a),
        Command::Ports(a) => ports::run(a),
        Command::Params(a) => params::run(a),
        Command::ImportLerobot(a) => import_lerobot::run(a),
        Command::Calibrate(a) => calibrate::run(*a),
    }
}

#[cfg(test)]
mod tests {
    use super::error_text;

    #[test]
    fn a_cause_already_quoted_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = anyhow::Error::new(io).context("a.bag: No such file");
        assert_eq!(error_text(&e), "a.bag: No such file");
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = anyhow::Error::new(io).context("reading a.bag");
        assert_eq!(error_text(&e), "reading a.bag: No such file");
    }
}
