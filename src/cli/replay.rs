//! `arm_ik replay`: a rosbag2 bag's targets through the node core on the
//! bag's clock, with pass/fail checks for CI (exit 0 only when all pass).

use super::bag_args::TopicArgs;
use super::progress::Progress;
use super::robot::RobotArgs;
use super::settings_args::{NodeArgs, SolverArgs, setting_ids};
use anyhow::Context as _;
use arm_ik::bag::output::{self, Existing, Inputs};
use arm_ik::bag::{
    BagReader, BagWriter, Header, JOINT_STATE, JointStateMsg, Storage, TargetType, TopicId,
};
use arm_ik::node::{JointState, NodeCore, NodeParams};
use arm_ik::replay::plot::PlotRecorder;
use arm_ik::replay::topics::list;
use arm_ik::replay::{Replay, ReplayOptions, Report, Thresholds, TickSink, junit::junit_xml};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The bag: a rosbag2 folder (metadata.yaml + .mcap or .db3) or a .mcap/.db3 file.
    bag: PathBuf,
    /// The node's ROS 2 parameter file (e.g. config/arm.yaml, the one the
    /// launch files give ik_node): solver, tolerances, rate and motion
    /// limits, links and URDF as the live node uses them. Instead of the
    /// solver and motion options below; --urdf/--base/--tip still override.
    #[arg(long, value_name = "FILE", conflicts_with_all = setting_ids())]
    config: Option<PathBuf>,
    #[command(flatten)]
    robot: RobotArgs,
    #[command(flatten)]
    topics: TopicArgs,
    #[command(flatten)]
    solver: SolverArgs,
    #[command(flatten)]
    node: NodeArgs,
    /// Unreachable targets allowed for a pass.
    #[arg(long, default_value_t = 0)]
    max_unreachable: u64,
    /// Rejected, malformed or wrongly typed targets allowed for a pass.
    #[arg(long, default_value_t = 0)]
    max_rejected: u64,
    /// Largest IK position error of a reached target, and of the settled
    /// tip to the last target (m).
    #[arg(long, default_value_t = 1e-3)]
    max_position_error: f64,
    /// Largest tip-to-target distance at any tick (m); default: unchecked
    /// (a moving target is followed with a lag by design).
    #[arg(long)]
    max_tracking_error: Option<f64>,
    /// Time given to the arm to arrive after the last target (s).
    #[arg(long, default_value_t = 10.0)]
    settle: f64,
    /// Write the report as JSON.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Write the joint states and the targets as a rosbag2 MCAP bag (a
    /// folder, or one file when the name ends in .mcap); it must not exist
    /// (see --overwrite) nor be any file of the bag being read.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Replace an existing --output (the reports are always replaced).
    #[arg(long)]
    overwrite: bool,
    /// Write JUnit XML of the checks.
    #[arg(long)]
    junit: Option<PathBuf>,
    /// Draw joint angles and tracking error over time as SVG.
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Print the report JSON on stdout instead of the table.
    #[arg(long)]
    json: bool,
}

/// Joint states to the output bag and the plot.
struct Sink {
    out: Option<(BagWriter, TopicId)>,
    plot: Option<PlotRecorder>,
    error: Option<arm_ik::bag::BagError>,
}

impl TickSink for Sink {
    fn tick(&mut self, log_time_ns: u64, js: &JointState, tracking_error: f64) {
        if let Some(p) = &mut self.plot {
            p.record(js.stamp, js, tracking_error);
        }
        if let (Some((w, joints)), None) = (&mut self.out, &self.error) {
            let msg = JointStateMsg {
                header: Header {
                    stamp_ns: log_time_ns as i64,
                    frame_id: String::new(),
                },
                name: js.name.to_vec(),
                position: js.position.clone(),
                velocity: js.velocity.clone(),
                effort: Vec::new(),
            };
            if let Err(e) = w.write(
                *joints,
                log_time_ns,
                &msg.encode(arm_ik::bag::Endian::Little),
            ) {
                self.error = Some(e);
            }
        }
    }
}

/// The node core as `ik_node` builds it from the parameter `file`: the
/// same reading, the same checks, on virtual servos.
fn core_from_file(robot: &RobotArgs, file: &Path) -> anyhow::Result<NodeCore> {
    let params = NodeParams::from_ros_yaml_file(file)?;
    let in_file = || format!("{}: ik_node parameters", file.display());
    let settings = params.settings().with_context(in_file)?;
    let chain = robot.chain_for(&params, file)?;
    NodeCore::from_settings(&chain, &settings).with_context(in_file)
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let core = match &a.config {
        Some(file) => core_from_file(&a.robot, file)?,
        None => a.node.core(&a.robot.chain()?, &a.solver)?,
    };
    if !(a.max_position_error.is_finite() && a.max_position_error >= 0.0) {
        anyhow::bail!(
            "--max-position-error {} must be 0 or more",
            a.max_position_error
        );
    }
    let topics = a.topics.topics()?;
    let mut bag = BagReader::open(&a.bag)?;
    // Outputs are checked before the replay, so a long run does not end
    // in a refusal; they never touch the bag being read.
    let inputs = Inputs::of(&a.bag)?;
    for p in [&a.report, &a.junit, &a.plot].into_iter().flatten() {
        output::check_file(p, Existing::Replace, &inputs)?;
    }
    if let Some(declared) = bag.declared_topics() {
        topics
            .check_declared(&declared)
            .map_err(|e| anyhow::anyhow!("{}: {e}", a.bag.display()))?;
    }
    let opts = ReplayOptions {
        topics,
        position_only: a.topics.position_only,
        settle_s: a.settle,
        max_listed: 1000,
        thresholds: Thresholds {
            max_unreachable: a.max_unreachable,
            max_rejected: a.max_rejected,
            max_position_error: a.max_position_error,
            max_tracking_error: a.max_tracking_error.unwrap_or(f64::INFINITY),
        },
    };
    let names = core.joint_names().to_vec();
    let mut replay = Replay::new(core, &a.bag.display().to_string(), opts);
    let mut sink = Sink {
        out: output_bag(&a, &inputs)?,
        plot: a.plot.as_ref().map(|_| PlotRecorder::new(&names, 4000)),
        error: None,
    };
    // Output topics of the pose and point targets, added when first seen.
    let mut target_topics: [Option<TopicId>; 2] = [None, None];
    let mut progress = Progress::new();
    let mut n = 0u64;
    while let Some(item) = bag.next() {
        let msg = match item {
            Ok(m) => m,
            Err(e) => {
                replay.bag_error(&e);
                eprintln!("arm_ik replay: {e} (stopped reading; replayed what came before)");
                break;
            }
        };
        replay.feed(&msg, &mut sink);
        if let Some(kind) = replay.options().topics.target_type(&msg.topic)
            && TargetType::from_name(&msg.type_name) == Some(kind)
            && let Some((w, _)) = &mut sink.out
        {
            let slot = &mut target_topics[kind as usize];
            let id = match *slot {
                Some(id) => Ok(id),
                None => w.add_topic(&msg.topic, kind.name()),
            };
            if let Err(e) = id.and_then(|id| {
                *slot = Some(id);
                w.write(id, msg.log_time_ns, &msg.data)
            }) {
                sink.error = Some(e);
            }
        }
        n += 1;
        progress.update(n, || bag.progress());
    }
    progress.finish();
    let report = replay.finish(&mut sink);
    if report.messages == 0 && report.bag_error.is_none() {
        anyhow::bail!(
            "{}: no messages on {} or {}; topics in the bag: {}",
            a.bag.display(),
            report.pose_topic,
            report.point_topic,
            list(
                bag.seen_topics()
                    .iter()
                    .map(|(a, b)| (a.as_str(), b.as_str()))
            )
        );
    }
    if let Some(e) = sink.error.take() {
        return Err(e.into());
    }
    if let Some((w, _)) = sink.out.take() {
        w.finish()?;
    }
    if let (Some(p), Some(rec)) = (&a.plot, &sink.plot) {
        let title = format!(
            "arm_ik replay {} ({} solver)",
            a.bag.display(),
            report.solver
        );
        output::write_file(p, rec.svg(&title).as_bytes(), Existing::Replace, &inputs)?;
    }
    if let Some(p) = &a.junit {
        output::write_file(p, junit_xml(&report).as_bytes(), Existing::Replace, &inputs)?;
    }
    if let Some(p) = &a.report {
        let text = serde_json::to_string_pretty(&report)?;
        output::write_file(p, text.as_bytes(), Existing::Replace, &inputs)?;
    }
    let mut out = std::io::stdout().lock();
    if a.json {
        writeln!(out, "{}", serde_json::to_string(&report)?)?;
    } else {
        summary(&mut out, &report)?;
    }
    out.flush()?;
    if let Some(e) = &report.bag_error {
        anyhow::bail!("{e}");
    }
    Ok(if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_NOT_REACHED)
    })
}

/// The `--output` bag with its joint-state topic, created before the
/// replay (under a temporary name until it is finished).
fn output_bag(a: &Args, inputs: &Inputs) -> anyhow::Result<Option<(BagWriter, TopicId)>> {
    let Some(p) = &a.output else {
        return Ok(None);
    };
    let existing = if a.overwrite {
        Existing::Replace
    } else {
        Existing::Refuse
    };
    let mut w = BagWriter::create_with(p, Storage::Mcap, existing, inputs)?;
    let joints = w.add_topic("/joint_states", JOINT_STATE)?;
    Ok(Some((w, joints)))
}

fn summary(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    writeln!(
        out,
        "arm_ik replay: {}: {} targets ({} on {}, {} on {}), {:.1} s simulated in {:.3} s wall ({:.0} messages/s, {} solver)",
        r.bag,
        r.messages,
        r.pose_messages,
        r.pose_topic,
        r.point_messages,
        r.point_topic,
        r.simulated_s,
        r.wall_s,
        r.messages_per_s,
        r.solver
    )?;
    writeln!(
        out,
        "targets: {} reached ({} best effort), {} unreachable, {} rejected, {} malformed, {} wrong type, {} superseded",
        r.reached,
        r.best_effort,
        r.unreachable,
        r.rejected,
        r.malformed,
        r.wrong_type,
        r.superseded
    )?;
    writeln!(out, "{:<20} {:<6} detail", "check", "result")?;
    for c in &r.checks {
        writeln!(
            out,
            "{:<20} {:<6} {}",
            c.name,
            if c.passed { "pass" } else { "FAIL" },
            c.detail
        )?;
    }
    for f in r.failures.iter().take(10) {
        writeln!(
            out,
            "  message {} ({} ns): {}: {}",
            f.index, f.log_time_ns, f.kind, f.detail
        )?;
    }
    for f in r.tick_failures.iter().take(10) {
        writeln!(
            out,
            "  tick {} ({:.3} s): {} {} = {} (limit {})",
            f.tick, f.time_s, f.joint, f.kind, f.value, f.limit
        )?;
    }
    let more = r.failures.len().saturating_sub(10) as u64 + r.failures_not_listed;
    if more > 0 {
        writeln!(out, "  ... {more} more failing messages (see --report)")?;
    }
    writeln!(out, "result: {}", if r.passed { "PASS" } else { "FAIL" })
}
