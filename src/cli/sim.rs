//! `arm_ik sim`: the node's main job with no ROS and no hardware: the node
//! core on virtual servos, following a built-in figure-eight or targets from
//! stdin, on simulated time.

use super::robot::RobotArgs;
use super::settings_args::{NodeArgs, SolverArgs};
use arm_ik::node::{TargetMsg, figure_eight};
use serde_json::json;
use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    robot: RobotArgs,
    #[command(flatten)]
    solver: SolverArgs,
    /// Simulated time to run (s).
    #[arg(long, default_value_t = 20.0)]
    duration: f64,
    #[command(flatten)]
    node: NodeArgs,
    /// Run at wall-clock speed instead of as fast as possible.
    #[arg(long)]
    realtime: bool,
    /// Read targets from stdin, one JSON object per line:
    /// {"position":[x,y,z],"orientation":[x,y,z,w],"frame_id":"base_link"}
    /// (orientation and frame_id optional). Without --realtime each line is
    /// the target of one tick; with it, every line that arrived since the
    /// last tick is taken in and the latest is solved (the others count as
    /// superseded), so input faster than the loop (1 kHz) is fine.
    #[arg(long)]
    stdin: bool,
    /// Time for one loop of the built-in figure-eight (s).
    #[arg(long, default_value_t = 10.0)]
    period: f64,
    /// Print joint states as JSON lines, one per tick, and the summary as
    /// the last line.
    #[arg(long)]
    json: bool,
}

/// One stdin line: its number and the target, or why it is malformed.
type Line = (usize, Result<TargetMsg, String>);

/// Lines read ahead of the loop. Bounded, so a writer faster than the loop
/// blocks on the pipe instead of growing memory; with `--realtime` this is
/// also the most the loop takes in one tick (see [`run`]).
const READ_AHEAD: usize = 1024;

/// Reads and parses stdin on its own thread, so a slow or bursty writer
/// never holds up a tick and parsing costs the loop nothing.
fn spawn_stdin_reader() -> mpsc::Receiver<Line> {
    let (tx, rx) = mpsc::sync_channel::<Line>(READ_AHEAD);
    std::thread::spawn(move || {
        for (i, line) in std::io::stdin().lock().lines().enumerate() {
            let item = match line {
                Ok(l) if l.trim().is_empty() => continue,
                Ok(l) => serde_json::from_str::<TargetMsg>(&l).map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            if tx.send((i + 1, item)).is_err() {
                return;
            }
        }
    });
    rx
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let chain = a.robot.chain()?;
    if !(a.duration.is_finite() && a.duration >= 0.0) {
        anyhow::bail!("--duration {} must be 0 or more seconds", a.duration);
    }
    if !(a.period.is_finite() && a.period > 0.0) {
        anyhow::bail!("--period {} must be a positive number of seconds", a.period);
    }
    let mut node = a.node.core(&chain, &a.solver)?;

    let rate = a.node.rate_hz;
    let dt = 1.0 / rate;
    let ticks = (a.duration * rate).round() as u64;
    let lines = a.stdin.then(spawn_stdin_reader);
    let mut stdin_open = true;
    let mut malformed = 0u64;
    // Most stdin lines taken in one tick: about input rate / tick rate when
    // the loop keeps up, far more when input piled up during a stall.
    let mut max_per_tick = 0usize;
    let progress = std::io::stderr().is_terminal();
    let mut last_progress = Instant::now();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let start = Instant::now();

    for k in 0..=ticks {
        let now = k as f64 * dt;
        if a.realtime {
            let due = start + Duration::from_secs_f64(now);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        match &lines {
            None => {
                let msg = TargetMsg {
                    stamp: now,
                    frame_id: chain.base.clone(),
                    position: figure_eight(now, a.period),
                    orientation: None,
                };
                node.on_target(&msg, now);
            }
            Some(rx) if stdin_open => {
                let mut taken = 0usize;
                loop {
                    let item = if a.realtime {
                        // Everything queued is taken (the node keeps only the
                        // latest target, counting the rest as superseded), but
                        // at most one read-ahead's worth, so a writer that never
                        // pauses (a file, `yes`) cannot keep the tick from
                        // running.
                        if taken >= READ_AHEAD {
                            break;
                        }
                        match rx.try_recv() {
                            Ok(x) => x,
                            Err(mpsc::TryRecvError::Empty) => break,
                            Err(mpsc::TryRecvError::Disconnected) => {
                                stdin_open = false;
                                break;
                            }
                        }
                    } else {
                        match rx.recv() {
                            Ok(x) => x,
                            Err(_) => {
                                stdin_open = false;
                                break;
                            }
                        }
                    };
                    taken += 1;
                    match item {
                        (_, Ok(msg)) => {
                            node.on_target(&msg, now);
                            if !a.realtime {
                                break; // one line per tick
                            }
                        }
                        (n, Err(e)) => {
                            malformed += 1;
                            eprintln!("arm_ik sim: stdin line {n}: {e} (skipped)");
                        }
                    }
                }
                max_per_tick = max_per_tick.max(taken);
            }
            Some(_) => {}
        }
        let js = node.tick(now).joint_state;
        if a.json {
            let line = json!({
                "type": "joint_state",
                "stamp": js.stamp,
                "name": &*js.name,
                "position": js.position,
                "velocity": js.velocity,
            });
            writeln!(out, "{line}")?;
        }
        if progress && last_progress.elapsed() > Duration::from_millis(200) {
            last_progress = Instant::now();
            let s = node.status();
            eprint!(
                "\r\x1b[Ksim {now:6.2}/{:.2} s  targets {}  tracking {:.1} mm  solve p50 {:.0} us",
                a.duration,
                s.targets.received,
                s.tracking_error * 1e3,
                s.solve_time.quantile(0.5) * 1e6
            );
        }
    }
    if progress {
        eprint!("\r\x1b[K");
    }
    let wall = start.elapsed().as_secs_f64();
    let s = node.status();
    let solve = s.solve_time.summary();
    let tick = s.tick_time.summary();
    let t = &s.targets;
    if a.json {
        let summary = json!({
            "type": "summary",
            "simulated_s": ticks as f64 * dt,
            "wall_s": wall,
            "ticks": s.ticks,
            "loop_rate_hz": s.loop_rate_hz,
            "ticks_per_wall_s": s.ticks as f64 / wall.max(1e-9),
            "solver": s.solver.name(),
            "link": s.link,
            "targets": t,
            "malformed_lines": malformed,
            // Only stdin input can pile up; null for the built-in path.
            "max_targets_per_tick": a.stdin.then_some(max_per_tick),
            "tracking_error_m": {"mean": s.tracking.mean, "max": s.tracking.max},
            "solve_time_us": {"p50": solve.p50 * 1e6, "p99": solve.p99 * 1e6, "max": solve.max * 1e6, "count": solve.count},
            "tick_time_us": {"p50": tick.p50 * 1e6, "p99": tick.p99 * 1e6, "max": tick.max * 1e6, "count": tick.count},
            "last_rejection": s.last_rejection.as_ref().map(|(r, why)| json!({"reason": r.name(), "why": why})),
        });
        writeln!(out, "{summary}")?;
    } else {
        writeln!(
            out,
            "arm_ik sim: {:.1} s simulated in {:.3} s wall ({} ticks at {:.1} Hz; {} solver, {} servos)",
            ticks as f64 * dt,
            wall,
            s.ticks,
            s.loop_rate_hz,
            s.solver,
            s.link
        )?;
        writeln!(
            out,
            "targets: {} received, {} reached ({} best effort), {} rejected (not finite {}, invalid {}, stale {}, wrong frame {}), {} unreachable, {} superseded{}",
            t.received,
            t.reached,
            t.best_effort,
            t.rejected.total(),
            t.rejected.not_finite,
            t.rejected.invalid,
            t.rejected.stale,
            t.rejected.wrong_frame,
            t.unreachable,
            t.superseded,
            if malformed > 0 {
                format!(", {malformed} malformed stdin lines")
            } else {
                String::new()
            }
        )?;
        if let Some((r, why)) = &s.last_rejection {
            writeln!(out, "last rejection: {}: {why}", r.name())?;
        }
        writeln!(
            out,
            "tracking error: mean {:.2} mm, max {:.2} mm",
            s.tracking.mean * 1e3,
            s.tracking.max * 1e3
        )?;
        writeln!(
            out,
            "solve time: p50 {:.0} us, p99 {:.0} us, max {:.0} us ({} solves)",
            solve.p50 * 1e6,
            solve.p99 * 1e6,
            solve.max * 1e6,
            solve.count
        )?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
