//! `arm_ik latency`: the node's input-to-servo latency in simulation, p50,
//! p99 and max, reproducible with one command (goal: p99 <= 1 ms), for targets,
//! jog twists or drags of the target marker (`--input`).
//! `benches/node.rs` measures the same path under criterion.

use super::EXIT_NOT_REACHED;
use super::collision_args::CollisionArgs;
use super::robot::RobotArgs;
use super::settings_args::{SolverArgs, flag_error, flag_usage};
use super::values;
use arm_ik::node::{
    LatencyInput, LatencyProbe, LatencyReport, MotionSettings, NodeStatus, TimeSummary,
};
use serde_json::json;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    robot: RobotArgs,
    #[command(flatten)]
    solver: SolverArgs,
    /// The collision check every tick makes (on by default: the floor at
    /// the base's lowest point), as the node's.
    #[command(flatten)]
    collision: CollisionArgs,
    /// Inputs to time, one per tick along the figure-eight of `sim`.
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    targets: u64,
    /// What to send each tick: `target` (a position target, solved),
    /// `twist` (a jog twist along the path) or `marker` (target-marker
    /// feedback dragging along it).
    #[arg(long, default_value = "target", value_parser = LatencyInput::parse)]
    input: LatencyInput,
    /// Targets run first and not timed (solves from the start pose, cold
    /// caches).
    #[arg(long, default_value_t = 100)]
    warmup: usize,
    /// Control rate (Hz): sets how far the path moves between targets.
    #[arg(long = "rate", default_value_t = MotionSettings::default().rate_hz, value_parser = values::positive)]
    rate_hz: f64,
    /// Time for one loop of the figure-eight (s).
    #[arg(long, default_value_t = LatencyProbe::DEFAULT_PERIOD, value_parser = values::positive)]
    period: f64,
    /// Exit with code 2 when the p99 target-to-joint-state latency is above
    /// this (µs); by default only reported, since a shared or throttled
    /// machine must not fail a build.
    #[arg(long, value_name = "US", value_parser = values::positive)]
    max_p99_us: Option<f64>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// The node's latency goal (docs/benchmarks.md), shown next to the
/// figures.
const GOAL_P99_US: f64 = 1000.0;

fn us(s: &TimeSummary) -> serde_json::Value {
    json!({
        "p50": s.p50 * 1e6,
        "p99": s.p99 * 1e6,
        "max": s.max * 1e6,
        "mean": s.mean * 1e6,
        "count": s.count,
    })
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let chain = a.robot.chain()?;
    let (solver, common) = a.solver.config(&chain)?;
    let mut config = MotionSettings {
        rate_hz: a.rate_hz,
        ..MotionSettings::default()
    }
    .node_config(&chain)
    .map_err(flag_error)?;
    config.collision = a.collision.options().map_err(flag_usage)?;
    let mut probe =
        LatencyProbe::new(&chain, solver, common, config, a.period)?.with_input(a.input);
    let r = probe.measure(a.warmup, a.targets as usize);
    let s = probe.node().status();
    let t = &s.targets;
    let limit = a.max_p99_us.unwrap_or(GOAL_P99_US);
    let within = r.joint_state.p99 * 1e6 <= limit;

    if a.json {
        let v = json!({
            "input": a.input,
            "solver": s.solver.name(),
            "dof": chain.dof(),
            "rate_hz": a.rate_hz,
            "period_s": a.period,
            "warmup": a.warmup,
            "targets": a.targets,
            "target_to_servo_us": us(&r.servo),
            "target_to_joint_state_us": us(&r.joint_state),
            "solve_time_us": us(&s.solve_time.summary()),
            "p99_limit_us": limit,
            "within_limit": within,
            "counters": t,
            "steering": s.steering,
            "collision": s.collision,
        });
        outln!("{v}")?;
    } else {
        print_text(&a, chain.dof(), &r, s, limit, within)?;
    }
    Ok(if a.max_p99_us.is_some() && !within {
        ExitCode::from(EXIT_NOT_REACHED)
    } else {
        ExitCode::SUCCESS
    })
}

/// The human-readable report.
fn print_text(
    a: &Args,
    dof: usize,
    r: &LatencyReport,
    s: &NodeStatus,
    limit: f64,
    within: bool,
) -> std::io::Result<()> {
    outln!(
        "arm_ik latency: {} {}s on the figure-eight ({} solver, {} joints, {} Hz, {} warm-up)",
        a.targets,
        a.input.name(),
        s.solver,
        dof,
        a.rate_hz,
        a.warmup
    )?;
    for (what, x) in [
        ("input -> servo command:", &r.servo),
        ("input -> joint state:", &r.joint_state),
    ] {
        outln!(
            "{what:<24} p50 {:.1} us, p99 {:.1} us, max {:.1} us",
            x.p50 * 1e6,
            x.p99 * 1e6,
            x.max * 1e6
        )?;
    }
    if a.input == LatencyInput::Target {
        outln!(
            "targets: {} solved, {} reached ({} best effort), {} unreachable",
            s.targets.solved,
            s.targets.reached,
            s.targets.best_effort,
            s.targets.unreachable
        )?;
    } else {
        let st = &s.steering;
        outln!(
            "steering: {} twists, {} marker feedback, {} refused",
            st.twists,
            st.marker_feedback,
            st.refused
        )?;
    }
    if let Some(c) = &s.collision {
        outln!(
            "collision check: {} pairs every tick, closest {:.1} mm ({}), {} motions stopped",
            c.pairs,
            c.min_clearance * 1e3,
            c.min_closest,
            c.stops
        )?;
    }
    outln!(
        "p99 {:.1} us {} the {} {limit} us",
        r.joint_state.p99 * 1e6,
        if within { "within" } else { "ABOVE" },
        if a.max_p99_us.is_some() {
            "limit"
        } else {
            "goal"
        },
    )?;
    Ok(())
}
