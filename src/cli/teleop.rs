//! `arm_ik teleop`: a leader arm moved by hand drives the follower, as
//! LeRobot's teleoperation does, without ROS. The leader's servos are
//! relaxed (torque off) and read every period on their own thread; each
//! reading becomes a `leader` command of the follower's node core, which
//! approaches the leader's pose at the start-up speed, then follows within
//! its limits and holds when the leader falls silent. This file wires
//! flags, the leader's link and the library's run loop.

use super::robot::RobotArgs;
use super::run::{Printer, flags, taught, verdict, write_text};
use super::settings_args::{NodeArgs, SolverArgs};
use super::stop::Stop;
use super::values;
use anyhow::Context as _;
use arm_ik::node::teleop::names::{NameMap, match_names, parse_map};
use arm_ik::node::{Command, JointLayout, LeaderMsg, TeleopSettings};
use arm_ik::run::{Clock, Line, LineSource, READ_AHEAD, RunOptions, Source};
use arm_ik::servo::calibration::Calibration;
use arm_ik::servo::{SerialServo, ServoOutput};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let chain = a.robot.chain()?;
    let leader_chain = match &a.leader_urdf {
        Some(p) => a.robot.links.chain(p)?,
        None => chain.clone(),
    };
    let settings = a.node.node_settings(&a.solver)?;
    let leader = open_leader(&a, &leader_chain)?;
    let built = arm_ik::run::build_on_port(&settings, &chain, &a.follower, &a.follower_port, None)
        .map_err(flags)?;
    for w in &built.warnings {
        errln!("arm_ik teleop: warning: {w}");
    }
    // The joints each side moves (a mimic joint follows its leader).
    let moved = |l: &JointLayout| l.names()[..l.axes()].to_vec();
    let leader_names = moved(&JointLayout::new(&leader_chain));
    let follower_names = moved(built.core.layout());
    let explicit = a
        .map
        .iter()
        .map(|m| parse_map(m))
        .collect::<Result<Vec<_>, _>>()?
        .concat();
    let map = match_names(&leader_names, &follower_names, &explicit)?;
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
    let period = core.motion().period();
    let (tx, rx) = std::sync::mpsc::sync_channel(READ_AHEAD);
    forward_stdin(tx.clone());
    let reader = spawn_leader(leader, map, period, stop.clone(), tx);
    let mut source = Source::Lines(LineSource::new(rx, false));
    let opts = RunOptions {
        clock: Clock::Wall,
        duration: a.duration,
        settle_s: 0.0,
    };
    let mut printer = Printer::new("teleop", false, opts.duration);
    let summary = arm_ik::run::run(&mut core, &mut source, &opts, &stop, &mut printer);
    printer.finish();
    // Whether a signal ended the run, before the flag also stops the reader.
    let signalled = signals.requested();
    stop.store(true, Ordering::Relaxed);
    let leader_status = reader.join().ok();
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
    if let Some(s) = leader_status {
        writeln!(out, "leader link: {s}")?;
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

/// The leader's servos on `--leader-port`, relaxed: refused when its
/// protocol cannot report positions (hobby servos behind the PWM bridge).
fn open_leader(a: &Args, chain: &arm_ik::model::Chain) -> anyhow::Result<SerialServo> {
    let cal = Calibration::load(&a.leader, chain)
        .with_context(|| format!("--leader {}", a.leader.display()))?;
    if !cal.protocol.measures_positions {
        anyhow::bail!(
            "--leader {}: {} servos cannot report their position, so they cannot lead; a leader arm needs bus servos (Feetech, Dynamixel)",
            a.leader.display(),
            cal.protocol.name
        );
    }
    let mut leader = SerialServo::open(&a.leader_port, cal).map_err(|e| {
        anyhow::anyhow!(
            "--leader-port: cannot start the link on {}: {e}",
            a.leader_port
        )
    })?;
    leader.relax();
    Ok(leader)
}

/// Reads the relaxed leader every `period` s on its own thread and hands
/// each reading, by the follower's joint names, to the run loop; a leader
/// whose link is down sends nothing (the follower holds after its
/// timeout). Ends when `stop` is set, returning the link's last state.
fn spawn_leader(
    mut leader: SerialServo,
    map: NameMap,
    period: f64,
    stop: Arc<AtomicBool>,
    tx: SyncSender<Line>,
) -> JoinHandle<String> {
    let names: Vec<String> = map.pairs.iter().map(|(_, f, _)| f.clone()).collect();
    std::thread::spawn(move || {
        let start = Instant::now();
        let mut n = 0u64;
        while !stop.load(Ordering::Relaxed) {
            n += 1;
            // Relaxed, this sends nothing; it refreshes the link's state.
            leader.command(&[], start.elapsed().as_secs_f64());
            let reading = leader
                .feedback()
                .filter(|_| leader.link_ok())
                .and_then(|q| {
                    map.pairs
                        .iter()
                        .map(|(i, _, _)| q.get(*i).copied())
                        .collect::<Option<Vec<f64>>>()
                });
            if let Some(position) = reading {
                let msg = LeaderMsg {
                    name: names.clone(),
                    position,
                };
                // A loop that is behind drops this reading: the next one
                // is newer anyway.
                let _ = tx.try_send((n as usize, Ok(Some(Command::Leader(msg)))));
            }
            let due = start + Duration::from_secs_f64(period * n as f64);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        leader.link().to_string()
    })
}

/// Commands typed on stdin, as JSON lines (`{"type":"relax"}`,
/// `{"type":"enable"}`, ...), go to the follower beside the leader's
/// frames; the end of stdin ends nothing.
fn forward_stdin(tx: SyncSender<Line>) {
    let lines = arm_ik::run::spawn_reader(std::io::BufReader::new(std::io::stdin()));
    std::thread::spawn(move || {
        for line in lines {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
}
