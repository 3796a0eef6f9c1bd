//! `arm_ik teach`: record poses by hand without ROS. The servos are
//! relaxed, the arm is posed by hand, and each name typed on stdin (one a
//! line, Enter to store) records where the servos measure the arm into the
//! poses file, for `{"type":"pose"}`, programs and `~/go_to/<name>`. The
//! recording itself is the node core's (`record_pose`): this file wires
//! flags, stdin and the wall-clock loop.

use super::robot::RobotArgs;
use super::run::flags;
use super::settings_args::{NodeArgs, SolverArgs};
use super::stop::Stop;
use arm_ik::node::{Command, NodeCore};
use arm_ik::servo::{Output, ServoOutput};
use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

/// How long names typed before the servos first report wait for them (s).
const LINK_WAIT_S: f64 = 10.0;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    robot: RobotArgs,
    #[command(flatten)]
    solver: SolverArgs,
    #[command(flatten)]
    node: NodeArgs,
    /// Servo file of the arm (bus servos that report their position).
    #[arg(long, value_name = "CONFIG")]
    config: PathBuf,
    /// Serial port of the arm; without it the servos are virtual (the
    /// poses recorded are where the virtual arm rests).
    #[arg(long)]
    port: Option<String>,
    /// The poses file to store into (it must exist and have `home`:
    /// start from a copy of config/poses_arm.yaml); rewritten atomically,
    /// keeping its comments.
    #[arg(long, value_name = "FILE")]
    poses: PathBuf,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let chain = a.robot.chain()?;
    let settings = a.node.node_settings(&a.solver)?;
    let built = match &a.port {
        Some(port) => {
            arm_ik::run::build_on_port(&settings, &chain, &a.config, port, Some(&a.poses))
        }
        None => arm_ik::run::build_virtual(&settings, &chain, Some(&a.poses)),
    }
    .map_err(flags)?;
    for w in &built.warnings {
        errln!("arm_ik teach: warning: {w}");
    }
    if a.port.is_some() && !built.core.servo().measured() {
        anyhow::bail!(
            "--config {}: these servos cannot report their position, so a pose cannot be recorded by hand; use bus servos (Feetech, Dynamixel)",
            a.config.display()
        );
    }
    let store = arm_ik::node::PoseStore::new(&a.poses);
    let mut core = built.core.with_pose_store(store);
    core.command(&Command::Relax, 0.0)?;
    errln!(
        "arm_ik teach: servos relaxed: pose the arm by hand, then type a name and Enter to store the pose in {} (Ctrl-D ends)",
        a.poses.display()
    );
    let names = spawn_names();
    let stop = Stop::on_signals()?;
    let failed = session(&mut core, &names, stop.flag())?;
    drop(core); // closes the link as its on_exit says
    if stop.requested() {
        return Ok(stop.report("teach", ""));
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_ERROR)
    })
}

/// Ticks the relaxed arm on the wall clock, recording each name once the
/// servos report; the number of names not recorded.
fn session(
    core: &mut NodeCore<Output>,
    names: &Receiver<String>,
    stop: &std::sync::atomic::AtomicBool,
) -> anyhow::Result<usize> {
    let dt = core.motion().period();
    let start = Instant::now();
    let show = std::io::stderr().is_terminal();
    let mut failed = 0;
    let mut k = 0u64;
    while !stop.load(Ordering::Relaxed) {
        let now = k as f64 * dt;
        if let Some(wait) =
            (start + Duration::from_secs_f64(now)).checked_duration_since(Instant::now())
        {
            std::thread::sleep(wait);
        }
        let tick = core.tick(now);
        k += 1;
        if show && k.is_multiple_of(25) {
            let q: Vec<String> = tick
                .joint_state
                .position
                .iter()
                .map(|x| format!("{x:.3}"))
                .collect();
            err!("\r\x1b[K{}", q.join(" "));
        }
        // At the start the link may still be connecting: names wait for
        // it a while; after that the core refuses them while it is down.
        if !core.status().link_ok && now < LINK_WAIT_S {
            continue;
        }
        match names.try_recv() {
            Ok(name) => failed += usize::from(!record(core, &name, now)?),
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => break,
        }
    }
    if show {
        errln!("");
    }
    Ok(failed)
}

/// Records `name`, saying what was stored; false when it was not. A
/// closed stdout ends the session (main then exits quietly).
fn record(core: &mut NodeCore<Output>, name: &str, now: f64) -> std::io::Result<bool> {
    let cmd = Command::RecordPose { name: name.into() };
    match core.command(&cmd, now) {
        Ok(()) => {
            let said = core.status().teach.recorded.clone().unwrap_or_default();
            outln!("{said}")?;
            super::out::stdout().flush()?;
            Ok(true)
        }
        Err(e) => {
            errln!("arm_ik teach: {}", e.why);
            Ok(false)
        }
    }
}

/// The names typed on stdin, trimmed, blank lines skipped; the channel
/// closes at the end of the input.
fn spawn_names() -> Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            let name = line.trim();
            if !name.is_empty() && tx.send(name.to_string()).is_err() {
                break;
            }
        }
    });
    rx
}
