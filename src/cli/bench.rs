//! `arm_ik bench`: the benchmark protocols of `arm_ik::bench` (targets as
//! in `../shared/targets/README.md`, or paths).

use super::collision_args::WorldArgs;
use super::settings_args::{SolverArgs, flag_error, flag_usage};
use super::stop::Stop;
use super::values;
use arm_ik::bag::output::{self, Existing, Inputs};
use arm_ik::bench::{self, BenchProtocol, Criteria, KChain, STEP_LIMIT, Summary, TargetSet};
use arm_ik::collision;
use arm_ik::ik::{BudgetClock, OrientationMode, Solver, SolverConfig};
use arm_ik::model::Chain;
use arm_ik::node::{NodeConfig, NodeCore, NodeSettings, track};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Target file (JSON, as in ../shared/targets).
    #[arg(long)]
    targets: PathBuf,
    /// Robot file; overrides the target file's own (which is relative to it).
    #[arg(long)]
    urdf: Option<PathBuf>,
    #[command(flatten)]
    solver: SolverArgs,
    /// The clock --budget-ms is counted on, by the solver and by the
    /// verdict: wall (elapsed time, as the node counts it) or cpu (the
    /// solving thread's CPU time, which other processes cannot add to).
    /// Both times are reported either way.
    #[arg(long, value_name = "CLOCK", default_value_t = BudgetClock::default(),
          value_parser = values::budget_clock)]
    budget_clock: BudgetClock,
    /// Named seed every query starts from (targets protocol, default
    /// mid); a path starts where its file says, and a track (a set with a
    /// rate) where its file says unless a seed is named here.
    #[arg(long)]
    seed_name: Option<String>,
    /// A track set: give the node each path whole, as a Cartesian path
    /// (planned whole while the arm holds, then run), instead of
    /// streaming its targets one at a time.
    #[arg(long)]
    whole_path: bool,
    /// Also run another solver on the same targets in the same run: `k`.
    #[arg(long)]
    compare: Option<String>,
    /// Collision-aware IK, as the node solves: only a solution that keeps
    /// the margin from the arm itself, the floor and the workspace counts;
    /// targets whose own pose does not are left out.
    #[arg(long)]
    collision: bool,
    /// Leave out the targets whose own pose is in collision (as
    /// --collision does) but solve without the check: the same targets
    /// for a run to compare --collision with.
    #[arg(long, conflicts_with = "collision")]
    clear_targets: bool,
    #[command(flatten)]
    world: WorldArgs,
    /// Write every query's joints, time and status as JSON.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let set = TargetSet::load(&a.targets)?;
    let urdf = a.urdf.clone().unwrap_or_else(|| set.urdf_path());
    if a.urdf.is_none() && !urdf.exists() {
        let shared = set.urdf.contains("shared/");
        anyhow::bail!(
            "{}: its robot {} (\"urdf\": \"{}\", relative to the target file) is not there{}; or give the robot's file with --urdf",
            a.targets.display(),
            urdf.display(),
            set.urdf,
            if shared {
                ": this set is for a shared robot, in ../shared beside the clone (the conformance data)"
            } else {
                ""
            }
        );
    }
    let chain = Chain::from_urdf_file(&urdf, Some(&set.base_link), Some(&set.tip_link))?;
    if chain.joint_names() != set.joint_names {
        anyhow::bail!(
            "{}: the target file names joints {:?} but {} gives {:?}",
            a.targets.display(),
            set.joint_names,
            urdf.display(),
            chain.joint_names()
        );
    }
    let options = a.world.options(a.collision).map_err(flag_usage)?;
    if set.rate_hz.is_some() {
        return run_track(&a, &set, &chain, options);
    }
    if a.whole_path {
        return Err(anyhow::Error::new(super::UsageError(format!(
            "--whole-path: {} is not a track set (make_targets --track writes one)",
            a.targets.display()
        ))));
    }
    let seed_name = a.seed_name.as_deref().unwrap_or("mid");
    let seed = set.seed(seed_name)?.to_vec();
    let mut world = match a.collision || a.clear_targets {
        true => Some(collision::build(&chain, &options)?),
        false => None,
    };
    let (set, skipped) = match &mut world {
        Some(w) => bench::clear_targets(&set, w),
        None => (set, 0),
    };
    if !a.collision {
        world = None;
    }
    // Before our own run, so a comparison that cannot run fails at once.
    let k = match a.compare.as_deref() {
        None => None,
        Some("k") if matches!(target_orientation(&a, &set), OrientationMode::Axis { .. }) => {
            anyhow::bail!("--compare k: the k crate's solver has no 5D (pointing-axis) targets")
        }
        Some("k") => Some(KChain::load(&urdf, &chain)?),
        Some(other) => anyhow::bail!(
            "--compare {other}: only 'k' (the k crate's JacobianIkSolver) is available"
        ),
    };
    let (mut config, common) = a.solver.config(&chain)?;
    if let SolverConfig::Jacobian(o) = &mut config {
        o.clock = bench::clock(a.budget_clock);
    }
    let criteria = Criteria {
        position_tolerance: a.solver.position_tolerance,
        orientation_tolerance: a.solver.orientation_tolerance,
        budget: Duration::from_secs_f64(a.solver.budget_ms / 1e3),
        clock: a.budget_clock,
        orientation: target_orientation(&a, &set),
    };
    let mut solver = Solver::new(&chain, config, common)?;
    let stop = Stop::on_signals()?;
    let (records, figures) = match &mut world {
        Some(w) => {
            let (r, f) =
                bench::run_clear(&mut solver, &set, &seed, &criteria, w, skipped, stop.flag());
            (r, Some(f))
        }
        None => (
            bench::run_until(&mut solver, &set, &seed, &criteria, stop.flag()),
            None,
        ),
    };
    let mut name = solver.kind().to_string();
    if a.solver.closest {
        name.push_str("+closest");
    }
    if figures.is_some() {
        name.push_str("+collision");
    } else if a.clear_targets {
        name.push_str(" (clear targets)");
    }
    let mut ours = bench::summarize(&name, &set, &records, &criteria);
    ours.collision = figures;

    let other = k.filter(|_| !stop.requested()).map(|kc| {
        let rec = kc.run(&chain, &set, &seed, &criteria);
        bench::summarize("k", &set, &rec, &criteria)
    });

    if let Some(path) = a.output.as_ref().filter(|_| !stop.requested()) {
        let raw = json!({
            "solver": ours.solver,
            "arm": set.name(),
            "seed": seed_name,
            "protocol": ours.protocol,
            "records": records,
        });
        let mut inputs = Inputs::named(&a.targets, "the target file being read")?;
        inputs.add_named(&urdf, "the URDF being read")?;
        output::write_file(path, &serde_json::to_vec(&raw)?, Existing::Replace, &inputs)
            .map_err(|e| anyhow::anyhow!("--output: {e}"))?;
    }
    if a.json {
        let mut out = serde_json::to_value(&ours)?;
        if let Some(o) = &other {
            out["compare"] = serde_json::to_value(o)?;
            out["ratios"] = ratios(&ours, o);
        }
        outln!("{}", serde_json::to_string(&out)?)?;
    } else {
        print_table(&ours, other.as_ref(), seed_name)?;
    }
    if stop.requested() {
        let n = set.samples.len();
        let kept = match &a.output {
            Some(p) => format!("{} not written", p.display()),
            None => String::new(),
        };
        errln!("arm_ik bench: {} of {n} queries ran", records.len());
        return Ok(stop.report("bench", &kept));
    }
    Ok(ExitCode::SUCCESS)
}

/// What the targets ask of the orientation: the set's kind (a position or
/// a 5D set), or for a set of poses what --target-orientation says.
fn target_orientation(a: &Args, set: &TargetSet) -> OrientationMode {
    match set.orientation_mode() {
        OrientationMode::Full => a.solver.orientation_mode(),
        other => other,
    }
}

/// The track protocol ([`arm_ik::node::track`]): the set streamed into the
/// node core at its rate, the core starting at the path's start (the arm's
/// known pose) or at the named seed.
fn run_track(
    a: &Args,
    set: &TargetSet,
    chain: &Chain,
    collision: arm_ik::collision::CollisionOptions,
) -> anyhow::Result<ExitCode> {
    let mut settings = NodeSettings {
        solver: a.solver.settings().map_err(flag_usage)?,
        collision,
        ..NodeSettings::default()
    };
    settings.solver.target_orientation = target_orientation(a, set);
    let (solver, common) = settings.solver_config(chain).map_err(flag_error)?;
    let config = settings.node_config(chain).map_err(flag_error)?;
    let from = match &a.seed_name {
        Some(name) => format!("seed '{name}'"),
        None => "each path's start".to_owned(),
    };
    let stop = Stop::on_signals()?;
    let mut all = Vec::with_capacity(set.paths.len());
    let mut node_rate = 0.0;
    for (k, path) in set.paths.iter().enumerate() {
        let start = match &a.seed_name {
            Some(name) => set.seed(name)?.to_vec(),
            None => path.start.clone(),
        };
        let config = NodeConfig {
            initial: Some(start),
            budget_clock: bench::clock(a.budget_clock),
            ..config.clone()
        };
        let mut core =
            NodeCore::with_virtual_servos(chain, solver.clone(), common.clone(), config)?;
        node_rate = core.config().rate_hz;
        let feed = match a.whole_path {
            true => track::Feed::Whole,
            false => track::Feed::Stream,
        };
        all.push(track::replay_track_with(
            &mut core,
            set,
            k,
            stop.flag(),
            feed,
            |_| {},
        ));
        if stop.requested() {
            break;
        }
    }
    let rate = set.rate_hz.unwrap_or_default();
    let total = track::TrackFigures::merge(&all);
    if a.json {
        let mut out = serde_json::to_value(&total)?;
        out["arm"] = json!(set.name());
        out["solver"] = json!(settings.solver.solver.name());
        out["rate_hz"] = json!(rate);
        out["target_orientation"] = json!(settings.solver.target_orientation.name());
        if let Some(t) = settings.solver.target_orientation.tool() {
            out["tool_axis"] = json!([t.x, t.y, t.z]);
        }
        out["node_rate_hz"] = json!(node_rate);
        out["paths"] = serde_json::to_value(&all)?;
        outln!("{}", serde_json::to_string(&out)?)?;
    } else {
        print_track(set, &all, &total, node_rate, &from)?;
        if a.whole_path {
            print_planning(&all, node_rate)?;
        }
    }
    if stop.requested() {
        return Ok(stop.report("bench", ""));
    }
    Ok(ExitCode::SUCCESS)
}

/// The track figures, one row per path and one for them all.
fn print_track(
    set: &TargetSet,
    all: &[track::TrackFigures],
    total: &track::TrackFigures,
    node_rate: f64,
    from: &str,
) -> std::io::Result<()> {
    let rate = set.rate_hz.unwrap_or_default();
    let seconds = set.paths.first().map_or(0.0, |p| p.len as f64 / rate);
    outln!(
        "track {}: {} paths of {seconds:.0} s at {rate} Hz, node at {node_rate} Hz, each from {from}",
        set.name(),
        set.paths.len(),
    )?;
    outln!(
        "{:>5} {:>8} {:>9} {:>13} {:>6} {:>9} {:>6} {:>9} {:>8} {:>8}",
        "path",
        "reached",
        "on_path_s",
        "worst_lag_mm",
        "at_s",
        "max_step",
        "jumps",
        "tick_step",
        "p50_us",
        "p99_us"
    )?;
    let rows = all.iter().enumerate().map(|(k, f)| (k.to_string(), f));
    for (name, f) in rows.chain(std::iter::once(("all".to_owned(), total))) {
        let on_path = f
            .on_path_at
            .map_or_else(|| "never".to_owned(), |t| format!("{t:.2}"));
        outln!(
            "{name:>5} {:>7.2}% {:>9} {:>13.1} {:>6.2} {:>9.4} {:>6} {:>9.4} {:>8.1} {:>8.1}",
            100.0 * f.reached as f64 / f.targets.max(1) as f64,
            on_path,
            f.worst_lag * 1e3,
            f.worst_lag_at,
            f.largest_step,
            f.jumps,
            f.largest_tick_step,
            f.solve_p50_us,
            f.solve_p99_us
        )?;
    }
    if total.halts > 0 {
        outln!(
            "held: {} targets refused, their answers a swing to another configuration",
            total.halts
        )?;
    }
    if total.min_clearance.is_finite() {
        outln!(
            "collision check: {} targets refused (every answer collides), {} motions stopped \
             before contact, closest {:.1} mm ({})",
            total.refused,
            total.stops,
            total.min_clearance * 1e3,
            total.closest_pair
        )?;
    }
    outln!(
        "worst_lag: tip to the latest target once within {:.0} mm of it; max_step: largest \
         change of one joint between answers; jumps: answers moving a joint more than \
         {STEP_LIMIT} rad; tick_step: largest change in one tick",
        track::ON_PATH * 1e3
    )
}

/// Fed whole: how long each path took to plan, or why it did not run.
fn print_planning(all: &[track::TrackFigures], node_rate: f64) -> std::io::Result<()> {
    for (k, f) in all.iter().enumerate() {
        match (&f.failed, f.planned_s) {
            (Some(why), _) => outln!("path {k}: not run: {why}")?,
            (None, Some(s)) => outln!(
                "path {k}: planned whole in {s:.2} s of node time (the arm holding), {} ticks planning",
                (s * node_rate).round()
            )?,
            (None, None) => outln!("path {k}: stopped while planning")?,
        }
    }
    outln!(
        "whole paths: p50_us/p99_us are the wall times of the ticks that planned; the lag counts from when the path began to move"
    )
}

/// The figures as a table, one row per solver.
fn print_table(ours: &Summary, other: Option<&Summary>, seed_name: &str) -> std::io::Result<()> {
    let start = match ours.protocol {
        BenchProtocol::Targets => format!("every target from seed '{seed_name}'"),
        BenchProtocol::Paths => "paths, each target from the previous answer".to_owned(),
    };
    outln!(
        "{} targets, tolerance {:.0e} m / {:.0e} rad, budget {} ms ({} clock), {start}",
        ours.targets,
        ours.position_tolerance,
        ours.orientation_tolerance,
        ours.budget_ms,
        ours.budget_clock,
    )?;
    let paths = ours.paths.is_some();
    out!(
        "{:<17} {:>5} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9}",
        "solver",
        "n",
        "success",
        "p50_us",
        "p99_us",
        "max_us",
        "cpu_p50",
        "cpu_p99",
        "med_dist",
        "p99_dist",
        "mean_iter"
    )?;
    if paths {
        out!(" {:>9} {:>6}", "max_step", "jumps")?;
    }
    outln!()?;
    for s in std::iter::once(ours).chain(other) {
        out!(
            "{:<17} {:>5} {:>7.2}% {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>9.3} {:>9.3} {:>9.1}",
            s.solver,
            s.n,
            100.0 * s.success_rate,
            s.p50_us,
            s.p99_us,
            s.max_us,
            s.cpu_p50_us,
            s.cpu_p99_us,
            s.median_distance,
            s.p99_distance,
            s.mean_iterations
        )?;
        if let Some(p) = &s.paths {
            out!(" {:>9.4} {:>6}", p.largest_step, p.jumps)?;
        }
        outln!()?;
    }
    if paths {
        outln!(
            "dist: |q - previous answer| (rad); max_step: largest change of one joint; \
             jumps: steps moving a joint more than {STEP_LIMIT} rad"
        )?;
    }
    if let Some(c) = &ours.collision {
        let closest = if c.min_clearance.is_finite() {
            format!("{:.1} mm ({})", c.min_clearance * 1e3, c.closest)
        } else {
            "none (no target reached)".to_string()
        };
        outln!(
            "collision check: margin {:.0} mm; {} targets left out (their own pose is closer); \
             the closest answer {closest}",
            c.margin * 1e3,
            c.skipped,
        )?;
    }
    for s in std::iter::once(ours).chain(other) {
        print_failures(s)?;
    }
    if let Some(o) = other {
        outln!("ratios {} / {}: {}", ours.solver, o.solver, ratios(ours, o))?;
    }
    Ok(())
}

/// Why a solver's failed queries failed, with counts.
fn print_failures(s: &Summary) -> std::io::Result<()> {
    if s.failures.is_empty() {
        return Ok(());
    }
    outln!("{} failures:", s.solver)?;
    for f in &s.failures {
        let why = f.reason.as_deref().unwrap_or("no reason given");
        outln!(
            "  {:>5} {} ({}): {why}",
            f.count,
            f.verdict.name(),
            f.verdict.meaning()
        )?;
    }
    Ok(())
}

/// Our figures divided by the other solver's.
fn ratios(ours: &Summary, other: &Summary) -> serde_json::Value {
    let div = |a: f64, b: f64| {
        if b > 0.0 && b.is_finite() && a.is_finite() {
            json!(a / b)
        } else {
            serde_json::Value::Null
        }
    };
    json!({
        "success_rate": div(ours.success_rate, other.success_rate),
        "p50_us": div(ours.p50_us, other.p50_us),
        "p99_us": div(ours.p99_us, other.p99_us),
    })
}
