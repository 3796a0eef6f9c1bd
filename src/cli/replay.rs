//! `arm_ik replay`: a rosbag2 bag's targets through the node core on the
//! bag's clock, with pass/fail checks for CI (exit 0 only when all pass).

use super::bag_args::TopicArgs;
use super::progress::Progress;
use super::robot::RobotArgs;
use super::settings_args::{NodeArgs, SolverArgs, setting_ids};
use super::stop::Stop;
use super::values;
use super::view::{View, ViewArgs};
use anyhow::Context as _;
use arm_ik::bag::output::{self, Existing, Inputs};
use arm_ik::bag::{BagReader, RobotTopics};
use arm_ik::node::{NodeCore, NodeParams, UrdfSource};
use arm_ik::replay::clock::{self, ClockSource};
use arm_ik::replay::plot::PlotRecorder;
use arm_ik::replay::topics::list;
use arm_ik::replay::{
    OutputBag, Outputs, Replay, ReplayOptions, Report, Thresholds, junit::junit_xml,
};
use std::io::Write;
use std::ops::ControlFlow;
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
    #[arg(long, default_value_t = 1e-3, value_parser = values::non_negative)]
    max_position_error: f64,
    /// Largest tip-to-target distance once the arm has caught up with its
    /// target, after the start-up move (m); default: unchecked (a moving
    /// target is followed with a lag by design).
    #[arg(long, value_parser = values::non_negative)]
    max_tracking_error: Option<f64>,
    /// Time given to the arm to arrive after the last target (s).
    #[arg(long, default_value_t = 10.0, value_parser = values::non_negative)]
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
    /// The node's clock: auto (a recorded /clock when the bag has one,
    /// else the receive times), receive (the bag's receive times), stamps
    /// (the targets' header stamps: a bag recorded while another played
    /// back, whose stamps keep the first recording's clock) or clock (the
    /// recorded /clock, required).
    #[arg(long, value_enum, default_value_t = ClockArg::Auto)]
    clock: ClockArg,
    #[command(flatten)]
    view: ViewArgs,
}

/// `--clock`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ClockArg {
    Auto,
    Receive,
    Stamps,
    Clock,
}

/// The node core as `ik_node` builds it from the parameter `file`: the
/// same reading, the same checks, on virtual servos.
/// With the URDF text of its `robot_description` parameter, if it has one.
fn core_from_file(robot: &RobotArgs, file: &Path) -> anyhow::Result<(NodeCore, Option<String>)> {
    let params = NodeParams::from_ros_yaml_file(file)?;
    let in_file = || format!("{}: ik_node parameters", file.display());
    let settings = params.settings().with_context(in_file)?;
    let chain = robot.chain_for(&params, file)?;
    let xml = match params.urdf_source() {
        UrdfSource::Xml(xml) => Some(xml),
        _ => None,
    };
    Ok((
        NodeCore::from_settings(&chain, &settings).with_context(in_file)?,
        xml,
    ))
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    // Before any output is staged, so a signal never leaves its temporary.
    let stop = Stop::on_signals()?;
    let (core, xml) = match &a.config {
        Some(file) => core_from_file(&a.robot, file)?,
        None => (a.node.core(&a.robot.chain()?, &a.solver)?, None),
    };
    let mut bag = BagReader::open(&a.bag)?;
    // Outputs are checked before the replay, so a long run does not end
    // in a refusal; they never touch the bag being read.
    let inputs = Inputs::of(&a.bag)?;
    for p in [&a.report, &a.junit, &a.plot].into_iter().flatten() {
        output::check_file(p, Existing::Replace, &inputs)?;
    }
    let opts = a.options()?;
    if let Some(declared) = bag.declared_topics() {
        (opts.topics.check_declared(&declared))
            .map_err(|e| anyhow::anyhow!("{}: {e}", a.bag.display()))?;
    }
    let existing = if a.overwrite {
        Existing::Replace
    } else {
        Existing::Refuse
    };
    let robot = if a.output.is_some() || a.view.view.is_some() {
        let text = a.robot.description(core.chain(), xml.as_deref())?;
        Some(RobotTopics::new(core.chain(), text))
    } else {
        None
    };
    let mut sink = Outputs {
        bag: (a.output.as_ref().zip(robot.clone()))
            .map(|(p, robot)| OutputBag::create(p, existing, &inputs, robot))
            .transpose()?,
        plot: (a.plot.as_ref()).map(|_| PlotRecorder::new(core.joint_names(), 4000)),
        view: match (a.view.view, robot) {
            (Some(addr), Some(robot)) => Some(Box::new(View::start(addr, robot, true)?)),
            _ => None,
        },
    };
    let mut replay = Replay::new(core, &a.bag.display().to_string(), opts);
    let mut progress = Progress::new();
    replay.read(&mut bag, &mut sink, |n, bag| {
        progress.update(n, || bag.progress());
        if stop.requested() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    progress.finish();
    let report = replay.finish(&mut sink);
    if report.messages == 0 && report.bag_error.is_none() && !report.stopped {
        let seen = bag.seen_topics().iter();
        anyhow::bail!(
            "{}: no messages on {} or {}; topics in the bag: {}",
            a.bag.display(),
            report.pose_topic,
            report.point_topic,
            list(seen.map(|(a, b)| (a.as_str(), b.as_str())))
        );
    }
    // Stopped: the outputs are dropped unwritten (their temporaries go),
    // so whatever was there before stays.
    if !report.stopped {
        if let Some(out) = sink.bag.take() {
            out.finish()?;
        }
        a.write_reports(&report, sink.plot.as_ref(), &inputs)?;
    }
    drop(sink);
    let mut out = super::out::stdout();
    if a.json {
        writeln!(out, "{}", serde_json::to_string(&report)?)?;
    } else {
        report.write_table(&mut out)?;
    }
    out.flush()?;
    if let Some(note) = &report.clock_note {
        errln!("arm_ik replay: note: {note}");
    }
    if report.stopped {
        let outputs = [&a.output, &a.report, &a.junit, &a.plot];
        let written = if outputs.iter().any(|o| o.is_some()) {
            "nothing written: outputs and reports that existed are as they were"
        } else {
            ""
        };
        return Ok(stop.report("replay", written));
    }
    if let Some(e) = &report.bag_error {
        anyhow::bail!("{e} (stopped reading; replayed what came before)");
    }
    Ok(if report.passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_NOT_REACHED)
    })
}

impl Args {
    /// The clock of the replay and the first recorded /clock's offset.
    fn clock(&self) -> anyhow::Result<(ClockSource, i64)> {
        let recorded = || clock::first_clock_offset(&self.bag);
        Ok(match self.clock {
            ClockArg::Receive => (ClockSource::Receive, 0),
            ClockArg::Stamps => (ClockSource::Stamps, 0),
            ClockArg::Auto => match recorded()? {
                Some(offset) => (ClockSource::ClockTopic, offset),
                None => (ClockSource::Receive, 0),
            },
            ClockArg::Clock => match recorded()? {
                Some(offset) => (ClockSource::ClockTopic, offset),
                None => anyhow::bail!(
                    "--clock clock: {} has no {} ({}) to take the clock from",
                    self.bag.display(),
                    clock::CLOCK_TOPIC,
                    arm_ik::bag::CLOCK
                ),
            },
        })
    }

    /// The replay's options from the flags.
    fn options(&self) -> anyhow::Result<ReplayOptions> {
        let (clock, clock_offset_ns) = self.clock()?;
        Ok(ReplayOptions {
            clock,
            clock_offset_ns,
            topics: self.topics.topics()?,
            settle_s: self.settle,
            max_listed: 1000,
            thresholds: Thresholds {
                max_unreachable: self.max_unreachable,
                max_rejected: self.max_rejected,
                max_position_error: self.max_position_error,
                max_tracking_error: self.max_tracking_error,
            },
        })
    }

    /// The plot, JUnit XML and JSON report, each when asked for.
    fn write_reports(
        &self,
        report: &Report,
        plot: Option<&PlotRecorder>,
        inputs: &Inputs,
    ) -> anyhow::Result<()> {
        let write = |p: &Path, text: String| {
            output::write_file(p, text.as_bytes(), Existing::Replace, inputs)
        };
        if let (Some(p), Some(rec)) = (&self.plot, plot) {
            let title = format!(
                "arm_ik replay {} ({} solver)",
                self.bag.display(),
                report.solver
            );
            write(p, rec.svg(&title, report.caught_up_s)?)?;
        }
        if let Some(p) = &self.junit {
            write(p, junit_xml(report)?)?;
        }
        if let Some(p) = &self.report {
            write(p, serde_json::to_string_pretty(report)?)?;
        }
        Ok(())
    }
}
