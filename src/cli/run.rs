//! `arm_ik sim` and `arm_ik run`: the node core without ROS, driven by the
//! library's loop (`arm_ik::run`) from the built-in figure-eight, JSON
//! lines on stdin or a target bag; `sim` on virtual servos, `run` also on
//! real ones. This file only wires flags to the library and prints.

use super::bag_args::TopicArgs;
use super::robot::RobotArgs;
use super::settings_args::{NodeArgs, SolverArgs, flag_error};
use super::stop::Stop;
use super::values;
use super::view::{View, ViewArgs};
use super::watch::Watch;
use super::{EXIT_ERROR, EXIT_NOT_REACHED};
use anyhow::Context as _;
use arm_ik::bag::output::{Existing, Inputs};
use arm_ik::bag::{BagReader, RobotTopics};
use arm_ik::model::Chain;
use arm_ik::node::program::RobotView;
use arm_ik::node::status::TeachStatus;
use arm_ik::node::{
    FigureEight, JointState, NodeCore, NodeError, NodeStatus, PoseStore, ProgramState, Programs,
    Tick,
};
use arm_ik::replay::OutputBag;
use arm_ik::run::{
    BagSource, Clock, Ending, InputError, LineSource, MeanMax, RunError, RunOptions, RunSummary,
    Source, Verdict,
};
use arm_ik::servo::Output;
use arm_ik::servo::calibration::Calibration;
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// What `sim` and `run` share: the robot, the node's settings, the input
/// and the clock.
#[derive(Debug, clap::Args)]
pub struct LoopArgs {
    #[command(flatten)]
    robot: RobotArgs,
    #[command(flatten)]
    solver: SolverArgs,
    #[command(flatten)]
    node: NodeArgs,
    /// Node time to run (s). Default: 20 s of the figure-eight; with
    /// --stdin or --bag, until the input ends and the arm has settled.
    #[arg(long, value_parser = values::non_negative)]
    duration: Option<f64>,
    /// After the input ends, the most time given to the arm to arrive (s).
    #[arg(long, default_value_t = 10.0, value_parser = values::non_negative)]
    settle: f64,
    /// Run at wall-clock speed instead of as fast as possible.
    #[arg(long)]
    realtime: bool,
    /// Read commands from stdin, one JSON object per line: a target
    /// {"position":[x,y,z],"orientation":[x,y,z,w],"frame_id":"base_link"}
    /// (orientation and frame_id optional), or any node command
    /// {"type":"target",...} (docs/cli.md, "The arm without ROS"). Without
    /// --realtime each line is the input of one tick (a blank line: a tick
    /// without input, to wait); with it, every line
    /// that arrived since the last tick is taken in and the latest target
    /// is solved (the others count as superseded), so input faster than
    /// the loop (1 kHz) is fine.
    #[arg(long, conflicts_with = "bag")]
    stdin: bool,
    /// Follow the targets of a rosbag2 bag (MCAP or sqlite3) at their
    /// recorded timing, read as ik_node subscribes (see --pose-topic).
    #[arg(long, value_name = "BAG")]
    bag: Option<PathBuf>,
    #[command(flatten)]
    topics: TopicArgs,
    /// Time for one loop of the built-in figure-eight (s).
    #[arg(long, default_value_t = 10.0, value_parser = values::positive)]
    period: f64,
    /// Named poses (YAML, joint names to positions: `home`, `rest`, ...)
    /// for `{"type":"pose","name":"home"}` lines; the ROS
    /// parameter `poses_file`. Checked against the robot before anything
    /// moves.
    #[arg(long, value_name = "FILE")]
    poses: Option<PathBuf>,
    /// A program (YAML list of steps: pose, target, joints, gripper,
    /// wait), named by its file's stem; checked against the robot and the
    /// poses before anything moves. Without --stdin or --bag the (one)
    /// program runs and the run ends when it does; with --stdin, any of
    /// them runs on a `{"type":"program","name":"pick"}` line. Repeatable.
    #[arg(long = "program", value_name = "FILE", conflicts_with = "bag")]
    programs: Vec<PathBuf>,
    /// Print joint states as JSON lines, one per tick, and the summary as
    /// the last line.
    #[arg(long)]
    json: bool,
    /// Record the run as a rosbag2 MCAP bag (a folder, or one file when
    /// the name ends in .mcap; replaced if it exists) that shows the arm
    /// with no other node: /robot_description, /tf_static, /tf,
    /// /joint_states, the targets and their marker (docs/bags.md).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    #[command(flatten)]
    view: ViewArgs,
}

/// `run`: the loop's flags and the servos.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    run: LoopArgs,
    /// Servo calibration and link file (e.g. config/servos_pwm.yaml), its
    /// `kind` naming the protocol; checked against the robot. Without
    /// --port the servos are virtual.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Serial port of the servos: drive them for real (needs --config and
    /// --realtime).
    #[arg(long, requires_all = ["config", "realtime"])]
    port: Option<String>,
}

/// `arm_ik sim`: virtual servos.
pub fn sim(a: LoopArgs) -> anyhow::Result<ExitCode> {
    let chain = a.robot.chain()?;
    let settings = a.node.node_settings(&a.solver)?;
    let core = arm_ik::run::build_virtual(&settings, &chain, a.poses.as_deref()).map_err(flags)?;
    let core = teach(&a, &chain, core.core)?;
    execute(&a, &chain, core, "sim")
}

/// `arm_ik run`: the servos of `--config` on `--port`, else virtual ones.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let l = &a.run;
    let chain = l.robot.chain()?;
    let settings = l.node.node_settings(&l.solver)?;
    let built = match (&a.config, &a.port) {
        (Some(file), Some(port)) => {
            arm_ik::run::build_on_port(&settings, &chain, file, port, l.poses.as_deref())
        }
        (file, _) => {
            if let Some(file) = file {
                let cal = Calibration::load(file, &chain)?;
                for w in &cal.warnings {
                    errln!("arm_ik run: warning: {w}");
                }
                errln!(
                    "arm_ik run: {} checked; no --port: virtual servos",
                    file.display()
                );
            }
            arm_ik::run::build_virtual(&settings, &chain, l.poses.as_deref())
        }
    }
    .map_err(flags)?;
    for w in &built.warnings {
        errln!("arm_ik run: warning: {w}");
    }
    let core = teach(l, &chain, built.core)?;
    execute(l, &chain, core, "run")
}

/// The programs of `--program`, and `--poses` as the file that
/// `{"type":"record_pose"}` lines write into.
fn teach(a: &LoopArgs, chain: &Chain, core: NodeCore<Output>) -> anyhow::Result<NodeCore<Output>> {
    if a.programs.len() > 1 && !a.stdin {
        anyhow::bail!(
            "--program: {} programs and no --stdin: give one program to run, or several with --stdin and {{\"type\":\"program\",\"name\":...}} lines",
            a.programs.len()
        );
    }
    let robot = RobotView {
        chain,
        poses: core.poses(),
        has_gripper: core.gripper().is_some(),
    };
    let programs = Programs::load(&a.programs, &robot)?;
    let core = core.with_programs(programs);
    Ok(match &a.poses {
        Some(file) => core.with_pose_store(PoseStore::new(file)),
        None => core,
    })
}

/// A node that cannot be built, named by the flag at fault.
pub(super) fn flags(e: RunError) -> anyhow::Error {
    match e {
        RunError::Output { name, why } => {
            let flag = if name == "port" { "--port" } else { "--config" };
            anyhow::anyhow!("{flag}: {why}")
        }
        RunError::Node(NodeError::Setting(e)) => flag_error(e),
        other => other.into(),
    }
}

fn execute(
    a: &LoopArgs,
    chain: &Chain,
    mut core: NodeCore<Output>,
    name: &str,
) -> anyhow::Result<ExitCode> {
    let mut source = source(a, chain, &core)?;
    let opts = RunOptions {
        // A viewer watches at wall-clock speed.
        clock: if a.realtime || a.view.view.is_some() {
            Clock::Wall
        } else {
            Clock::Simulated
        },
        duration: match &source {
            Source::Path { .. } => Some(a.duration.unwrap_or(20.0)),
            _ => a.duration,
        },
        settle_s: a.settle,
    };
    let stop = Stop::on_signals()?;
    let printer = Printer::new(name, a.json, opts.duration);
    let mut watch = Watch::new(printer, &chain.base);
    if a.record.is_some() || a.view.view.is_some() {
        let robot = RobotTopics::new(chain, a.robot.description(chain, None)?);
        if let Some(path) = &a.record {
            let inputs = match &a.bag {
                Some(bag) => Inputs::of(bag)?,
                None => Inputs::default(),
            };
            watch.bag = Some(OutputBag::create(
                path,
                Existing::Replace,
                &inputs,
                robot.clone(),
            )?);
        }
        if let Some(addr) = a.view.view {
            watch.view = Some(View::start(addr, robot, false)?);
        }
    }
    let summary = arm_ik::run::run(&mut core, &mut source, &opts, stop.flag(), &mut watch);
    let mut printer = watch.printer;
    printer.finish();
    if let Some(e) = printer.error.take() {
        return Err(e).context("writing joint states to stdout");
    }
    drop(watch.view);
    if let Some(bag) = watch.bag.filter(|_| summary.ended != Ending::Stopped) {
        bag.finish()?;
    }
    let taught = taught(&core.status().teach);
    drop(core); // closes the servo link
    let mut out = super::out::stdout();
    if a.json {
        writeln!(out, "{}", serde_json::to_string(&Line::Summary(&summary))?)?;
    } else {
        write_text(&mut out, name, &summary)?;
        for line in &taught.lines {
            writeln!(out, "{line}")?;
        }
        if summary.ended == Ending::Stopped {
            writeln!(
                out,
                "stopped by {} after {:.2} s",
                stop.signal_name(),
                summary.simulated_s
            )?;
        }
    }
    out.flush()?;
    if summary.ended == Ending::Stopped {
        return Ok(stop.report(name, ""));
    }
    if let Some(why) = taught.failed {
        errln!("arm_ik {name}: {why}");
        return Ok(ExitCode::from(EXIT_NOT_REACHED));
    }
    Ok(verdict(name, &summary))
}

/// Where the commands come from.
fn source(a: &LoopArgs, chain: &Chain, core: &NodeCore<Output>) -> anyhow::Result<Source> {
    if let (false, Some(name)) = (a.stdin, core.programs().names().next()) {
        // The one program, as the only input of the first tick.
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let cmd = arm_ik::node::Command::Program { name: name.into() };
        tx.send((1, Ok(Some(cmd)))).expect("the channel has room");
        return Ok(Source::Lines(LineSource::new(rx, true)));
    }
    if a.stdin {
        let rx = arm_ik::run::spawn_reader(std::io::BufReader::new(std::io::stdin()));
        return Ok(Source::Lines(LineSource::new(rx, !a.realtime)));
    }
    if let Some(path) = &a.bag {
        let topics = a.topics.topics()?;
        let reader = BagReader::open(path)?;
        if let Some(declared) = reader.declared_topics() {
            topics
                .check_declared(&declared)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        }
        let source = BagSource::new(reader, topics);
        return Ok(Source::Bag(Box::new(source)));
    }
    Ok(Source::Path {
        path: FigureEight::for_chain(chain),
        period: a.period,
        frame: chain.base.clone(),
    })
}

/// What the run's programs, trajectories and recordings came to.
pub(super) struct Taught {
    pub(super) lines: Vec<String>,
    /// A program that did not finish, and why.
    pub(super) failed: Option<String>,
}

pub(super) fn taught(t: &TeachStatus) -> Taught {
    let mut lines = Vec::new();
    let mut failed = None;
    if let Some(p) = &t.program {
        let why = p.message.as_deref().unwrap_or("");
        let line = match p.state {
            ProgramState::Done => format!("program '{}': done, {} steps", p.name, p.steps),
            ProgramState::Running => {
                format!(
                    "program '{}': still at step {} of {} when the run ended",
                    p.name, p.step, p.steps
                )
            }
            ProgramState::Failed | ProgramState::Stopped => {
                format!(
                    "program '{}': step {} of {}: {why}",
                    p.name, p.step, p.steps
                )
            }
        };
        if p.state != ProgramState::Done {
            failed = Some(line.clone());
        }
        lines.push(line);
    }
    let tr = &t.trajectory;
    if tr.accepted > 0 {
        lines.push(format!(
            "trajectories: {} taken, the last {} of {} points passed ({:.2} s)",
            tr.accepted, tr.passed, tr.points, tr.duration_s
        ));
        if let Some(late) = &tr.late {
            lines.push(late.describe(tr.points));
        }
        if let Some(why) = &tr.aborted {
            lines.push(format!("the last trajectory was cut short: {why}"));
        }
    }
    let c = &t.cartesian;
    if c.accepted > 0 {
        lines.push(format!(
            "cartesian paths: {} taken, the last {} of {} points ({} put in between on the lines) planned in {:.2} s, largest joint step {:.3} rad",
            c.accepted, c.solved, c.points, c.between, c.planned_s, c.largest_step
        ));
        if let Some(why) = &c.failed {
            let line = format!("the last cartesian path was not run: {why}");
            failed = Some(line.clone());
            lines.push(line);
        }
    }
    lines.extend(t.recorded.clone());
    Taught { lines, failed }
}

/// The exit code of a run, saying on stderr why it is not 0.
pub(super) fn verdict(name: &str, s: &RunSummary) -> ExitCode {
    let t = &s.targets;
    match s.verdict {
        Verdict::Ok => ExitCode::SUCCESS,
        Verdict::NothingReached => {
            let unsent = match s.servos.not_sent {
                0 => String::new(),
                n => format!(", {n} never sent: the servo link was down"),
            };
            errln!(
                "arm_ik {name}: none of the {} targets was reached ({} unreachable, {} rejected, {} superseded{unsent})",
                t.received,
                t.unreachable,
                t.rejected.total(),
                t.superseded
            );
            ExitCode::from(EXIT_NOT_REACHED)
        }
        Verdict::NotSent => {
            errln!(
                "arm_ik {name}: {} reached targets were never sent to the servos: the link was down for {} ticks ({})",
                s.servos.not_sent,
                s.servos.down_ticks,
                link_at_exit(&s.link)
            );
            ExitCode::from(EXIT_NOT_REACHED)
        }
        Verdict::AllInputMalformed => {
            errln!(
                "arm_ik {name}: every one of the {} inputs was malformed; nothing was run",
                s.malformed_lines
            );
            ExitCode::from(EXIT_ERROR)
        }
        Verdict::ServosUnreachable => {
            errln!(
                "arm_ik {name}: the servos were never reached ({}): nothing moved, {} targets received, none sent",
                link_at_exit(&s.link),
                t.received
            );
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// One JSON line of `--json`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Line<'a> {
    JointState(&'a JointState),
    Summary(&'a RunSummary),
}

/// Prints what the loop reports: joint states (`--json`), bad input, and
/// a progress line on a terminal.
pub struct Printer {
    name: String,
    json: bool,
    out: super::out::Stdout,
    progress: bool,
    last_progress: Instant,
    duration: Option<f64>,
    error: Option<std::io::Error>,
}

impl Printer {
    pub(super) fn new(name: &str, json: bool, duration: Option<f64>) -> Printer {
        Printer {
            name: name.to_string(),
            json,
            out: super::out::stdout(),
            progress: std::io::stderr().is_terminal(),
            last_progress: Instant::now(),
            duration,
            error: None,
        }
    }

    pub(super) fn finish(&mut self) {
        if self.progress {
            err!("\r\x1b[K");
        }
        if let Err(e) = self.out.flush() {
            self.error.get_or_insert(e);
        }
    }
}

impl arm_ik::run::Observer for Printer {
    fn tick(&mut self, tick: &Tick, s: &NodeStatus) -> ControlFlow<()> {
        if self.json {
            let line = serde_json::to_string(&Line::JointState(&tick.joint_state))
                .expect("a joint state serialises");
            if let Err(e) = writeln!(self.out, "{line}") {
                self.error = Some(e);
                return ControlFlow::Break(());
            }
        }
        if self.progress && self.last_progress.elapsed() > Duration::from_millis(200) {
            self.last_progress = Instant::now();
            let of = self
                .duration
                .map(|d| format!("/{d:.2}"))
                .unwrap_or_default();
            err!(
                "\r\x1b[K{} {:6.2}{of} s  targets {}  tracking {:.1} mm  solve p50 {:.0} us",
                self.name,
                tick.joint_state.stamp,
                s.targets.received,
                s.tracking_error * 1e3,
                s.solve_time.quantile(0.5) * 1e6
            );
        }
        ControlFlow::Continue(())
    }

    fn bad_input(&mut self, e: &InputError) {
        errln!("arm_ik {}: {e} (skipped)", self.name);
    }

    fn notice(&mut self, line: &str) {
        errln!("arm_ik {}: {line}", self.name);
    }
}

pub(super) fn write_text(out: &mut impl Write, name: &str, s: &RunSummary) -> std::io::Result<()> {
    writeln!(
        out,
        "arm_ik {name}: {:.1} s simulated in {:.3} s wall ({}; {} solver; servos: {})",
        s.simulated_s,
        s.wall_s,
        ticks(s),
        s.solver,
        link_at_exit(&s.link)
    )?;
    if let Some(p) = &s.path {
        let [x, y, z] = p.center;
        writeln!(
            out,
            "path: figure-eight {:.0} x {:.0} mm centred at ({x:.3}, {y:.3}, {z:.3}) m",
            p.width * 1e3,
            p.height * 1e3
        )?;
    }
    let t = &s.targets;
    let r = &t.rejected;
    write!(
        out,
        "targets: {} received, {} reached ({} best effort), {} rejected (not finite {}, invalid {}, stale {}, wrong frame {}), {} unreachable, {} superseded",
        t.received,
        t.reached,
        t.best_effort,
        r.total(),
        r.not_finite,
        r.invalid,
        r.stale,
        r.wrong_frame,
        t.unreachable,
        t.superseded
    )?;
    match s.malformed_lines {
        0 => writeln!(out)?,
        n => writeln!(out, ", {n} malformed inputs")?,
    }
    write_servos(out, s)?;
    write_commands(out, s)?;
    if let Some(r) = &s.last_rejection {
        writeln!(out, "last rejection: {}: {}", r.reason.name(), r.why)?;
    }
    write_tracking(out, s)?;
    let st = s.solve_time_us;
    writeln!(
        out,
        "solve time: p50 {:.0} us, p99 {:.0} us, max {:.0} us ({} solves)",
        st.p50, st.p99, st.max, st.count
    )
}

/// The link as it was when the run ended: a disconnected link is not
/// retrying any more.
fn link_at_exit(link: &str) -> &str {
    link.split("; retrying in").next().unwrap_or(link)
}

/// "151 ticks at 50.0 Hz"; the rate only when two ticks measure one.
fn ticks(s: &RunSummary) -> String {
    match s.ticks {
        1 => "1 tick".to_string(),
        n if s.loop_rate_hz > 0.0 => format!("{n} ticks at {:.1} Hz", s.loop_rate_hz),
        n => format!("{n} ticks"),
    }
}

/// What the servo link carried, when it was down at all.
fn write_servos(out: &mut impl Write, s: &RunSummary) -> std::io::Result<()> {
    let d = &s.servos;
    if !d.connected {
        return writeln!(
            out,
            "servos: never connected in {} ticks; nothing was sent",
            d.down_ticks
        );
    }
    if d.down_ticks > 0 {
        writeln!(
            out,
            "servos: link down for {} of {} ticks; {} reached targets sent, {} not sent",
            d.down_ticks, s.ticks, d.sent, d.not_sent
        )?;
    }
    Ok(())
}

/// The inputs besides targets, when there were any.
fn write_commands(out: &mut impl Write, s: &RunSummary) -> std::io::Result<()> {
    let c = &s.commands;
    if c.received > 0 {
        writeln!(
            out,
            "commands: {} received, {} accepted, {} refused",
            c.received,
            c.accepted,
            c.refused.total()
        )?;
    }
    let h = &s.steered;
    if h.twists + h.marker_feedback + h.refused > 0 {
        writeln!(
            out,
            "steered: {} twists, {} marker feedback, {} refused",
            h.twists, h.marker_feedback, h.refused
        )?;
    }
    Ok(())
}

/// The tracking error: the start-up move apart from how well the arm
/// follows after it.
fn write_tracking(out: &mut impl Write, s: &RunSummary) -> std::io::Result<()> {
    let mm = |e: MeanMax| format!("mean {:.2} mm, max {:.2} mm", e.mean * 1e3, e.max * 1e3);
    if !s.servos.connected {
        return writeln!(out, "tracking error: none (nothing was sent to the servos)");
    }
    match (s.caught_up_s, s.steady_tracking_error_m) {
        (None, _) if s.start_up_tracking_error_m.max == 0.0 => {
            let why = match s.targets.received {
                0 => "no target to track",
                _ => "no target reached",
            };
            writeln!(out, "tracking error: none ({why})")
        }
        (Some(t), Some(steady)) => writeln!(
            out,
            "tracking error: {} after the start-up move ({t:.2} s, max {:.1} mm)",
            mm(steady),
            s.start_up_tracking_error_m.max * 1e3
        ),
        _ => writeln!(
            out,
            "tracking error: never caught up with the targets ({})",
            mm(s.start_up_tracking_error_m)
        ),
    }
}
