//! `arm_ik teleop`: a leader arm moved by hand drives the follower, as
//! LeRobot's teleoperation does, without ROS. One synchronous loop per
//! period: the leader's servos (relaxed, torque off) are read with one
//! sync read, the reading becomes a `leader` command of the follower's
//! node core, whose tick (limiter, collision guard; the approach at the
//! start-up speed; the hold when the leader falls silent) writes the
//! follower with one sync write. Both links are paced by that loop, so a
//! reading reaches the follower in the period it was read. This file wires
//! flags, the leader's link and the library's run loop; `--view` shows the
//! follower live in Foxglove as `sim` and `run` do.

use super::robot::RobotArgs;
use super::run::{Printer, flags, taught, verdict, write_text};
use super::settings_args::{NodeArgs, SolverArgs};
use super::stop::Stop;
use super::values;
use super::view::{View, ViewArgs};
use super::watch::Watch;
use arm_ik::bag::RobotTopics;
use arm_ik::node::TeleopSettings;
use arm_ik::run::{
    Clock, LeaderError, LeaderSource, LineSource, RunOptions, Source, map_joints, moved_joints,
    open_leader,
};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The follower's URDF and links (default: the built-in arm).
    #[command(flatten)]
    robot: RobotArgs,
    #[command(flatten)]
    solver: SolverArgs,
    #[command(flatten)]
    node: NodeArgs,
    /// The leader's servo file (calibration as for `run --config`); its
    /// servos must report their position (bus servos, not PWM).
    #[arg(long, value_name = "CONFIG")]
    leader: PathBuf,
    /// Serial port of the leader arm.
    #[arg(long, value_name = "PORT")]
    leader_port: String,
    /// The leader's URDF, when it is not the follower's make (joints are
    /// then matched by role, or by --map).
    #[arg(long, value_name = "URDF")]
    leader_urdf: Option<PathBuf>,
    /// The follower's servo file.
    #[arg(long, value_name = "CONFIG")]
    follower: PathBuf,
    /// Serial port of the follower arm.
    #[arg(long, value_name = "PORT")]
    follower_port: String,
    /// Leader joints mapped by hand to follower joints: `LEADER=FOLLOWER`,
    /// comma-separated or repeated.
    #[arg(long, value_name = "LEADER=FOLLOWER")]
    map: Vec<String>,
    /// A leader silent this long (ms) makes the follower hold.
    #[arg(long, default_value_t = TeleopSettings::default().timeout * 1e3, value_parser = values::positive)]
    leader_timeout_ms: f64,
    /// Joint speed of the first move to the leader's pose (rad/s).
    #[arg(long, default_value_t = TeleopSettings::default().startup_speed, value_parser = values::positive)]
    startup_speed: f64,
    /// Stop after this long (s); default: until Ctrl-C.
    #[arg(long, value_parser = values::non_negative)]
    duration: Option<f64>,
    #[command(flatten)]
    view: ViewArgs,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let chain = a.robot.chain()?;
    let leader_chain = match &a.leader_urdf {
        Some(p) => a.robot.links.chain(p)?,
        None => chain.clone(),
    };
    let settings = a.node.node_settings(&a.solver)?;
    let leader = open_leader(
        &a.leader,
        &a.leader_port,
        &leader_chain,
        settings.motion.rate_hz,
    )
    .map_err(|e| match e {
        LeaderError::Link { .. } => anyhow::anyhow!("--leader-port: {e}"),
        _ => anyhow::anyhow!("--leader {e}"),
    })?;
    let built = arm_ik::run::build_paced_on_port(&settings, &chain, &a.follower, &a.follower_port)
        .map_err(flags)?;
    for w in &built.warnings {
        errln!("arm_ik teleop: warning: {w}");
    }
    let map = map_joints(&leader_chain, &moved_joints(built.core.layout()), &a.map)?;
    let leader_names = moved_joints(&arm_ik::node::JointLayout::new(&leader_chain));
    errln!("arm_ik teleop: {}", map.describe(&leader_names));
    let teleop = TeleopSettings {
        startup_speed: a.startup_speed,
        timeout: a.leader_timeout_ms * 1e-3,
    };
    let mut core = built.core.with_leader(teleop);
    errln!(
        "arm_ik teleop: leader on {}: torque off, move it by hand; the follower on {} first comes to its pose at {} rad/s",
        a.leader_port,
        a.follower_port,
        a.startup_speed
    );
    let signals = Stop::on_signals()?;
    let stop = signals.shared();
    // Command lines typed on stdin (relax, enable) reach the follower
    // beside the leader's frames; the end of stdin ends nothing.
    let stdin = arm_ik::run::spawn_reader(std::io::BufReader::new(std::io::stdin()));
    let mut source = Source::Leader {
        leader: Box::new(LeaderSource::new(leader, &map)),
        lines: Some(LineSource::new(stdin, false)),
    };
    let opts = RunOptions {
        clock: Clock::Wall,
        duration: a.duration,
        settle_s: 0.0,
    };
    let mut watch = Watch::new(Printer::new("teleop", false, opts.duration), &chain.base);
    if let Some(addr) = a.view.view {
        let robot = RobotTopics::new(&chain, a.robot.description(&chain, None)?);
        watch.view = Some(View::start(addr, robot, false)?);
    }
    let summary = arm_ik::run::run(&mut core, &mut source, &opts, &stop, &mut watch);
    drop(watch.view);
    watch.printer.finish();
    let signalled = signals.requested();
    stop.store(true, Ordering::Relaxed);
    let leader_status = match &source {
        Source::Leader { leader: l, .. } => Some((l.link().to_string(), l.frames, l.missed)),
        _ => None,
    };
    drop(source);
    let taught = taught(&core.status().teach);
    let teleop = core.status().teach.teleop.clone();
    drop(core);
    let mut out = super::out::stdout();
    write_text(&mut out, "teleop", &summary)?;
    if let Some(t) = teleop {
        writeln!(
            out,
            "leader: {} frames taken, {} approaches, {} silences",
            t.frames, t.approaches, t.silences
        )?;
    }
    if let Some((link, frames, missed)) = leader_status {
        writeln!(
            out,
            "leader link: {link}; {frames} reads gave a frame, {missed} did not"
        )?;
    }
    for line in &taught.lines {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    if signalled {
        return Ok(signals.report("teleop", ""));
    }
    Ok(verdict("teleop", &summary))
}
