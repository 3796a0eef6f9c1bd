//! `arm_ik solve`: one target, one answer.

use super::robot::LinkArgs;
use super::settings_args::SolverArgs;
use super::{parse, values};
use arm_ik::bench::{self, Stopwatch};
use arm_ik::ik::{
    BudgetClock, Orientation, Pointing, Solver, SolverConfig, Target, direction_from_xyz,
    joint_distance,
};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The URDF file.
    #[arg(long)]
    urdf: PathBuf,
    #[command(flatten)]
    links: LinkArgs,
    #[command(flatten)]
    solver: SolverArgs,
    /// The clock --budget-ms is counted on: wall (elapsed time, as the
    /// node counts it) or cpu (the solving thread's CPU time).
    #[arg(long, value_name = "CLOCK", default_value_t = BudgetClock::default(),
          value_parser = values::budget_clock)]
    budget_clock: BudgetClock,
    /// Target position x,y,z in the base frame (m), each at most 1e6 in size.
    #[arg(long, allow_hyphen_values = true, value_parser = parse::numbers::<3>)]
    position: [f64; 3],
    /// Target orientation as a quaternion x,y,z,w, each at most 1e6 in size
    /// (omit: position only).
    #[arg(long, allow_hyphen_values = true, value_parser = parse::numbers::<4>)]
    orientation: Option<[f64; 4]>,
    /// A 5D target: the direction x,y,z (base frame) the tool axis
    /// (--tool-axis, the tip's +z by default) points in, its roll free;
    /// any non-zero length (it is normalised). Instead of --orientation.
    #[arg(long, allow_hyphen_values = true, value_parser = values::direction,
          conflicts_with = "orientation")]
    axis: Option<[f64; 3]>,
    /// Start configuration, one value per joint, each at most 1e6 in size
    /// (default: the middle of the limits).
    #[arg(long, allow_hyphen_values = true, value_delimiter = ',', value_parser = values::finite)]
    seed: Option<Vec<f64>>,
    /// List every solution within the limits (solvers that know them all:
    /// geo), nearest the seed first.
    #[arg(long)]
    all: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let chain = a.links.chain(&a.urdf)?;
    let target = target(&a)?;
    let seed = match &a.seed {
        Some(s) => s.clone(),
        None => chain.mid_configuration(),
    };
    let (mut config, common) = a.solver.config(&chain)?;
    if let SolverConfig::Jacobian(o) = &mut config {
        o.clock = bench::clock(a.budget_clock);
    }
    let mut solver = Solver::new(&chain, config, common)?;
    if a.all {
        return all(&mut solver, &target, &seed, a.json);
    }
    let watch = Stopwatch::start();
    let sol = solver.solve(&target, &seed)?;
    let time = watch.stop();
    let elapsed = time.wall;
    if a.json {
        let joints: serde_json::Map<String, serde_json::Value> = chain
            .joints
            .iter()
            .zip(&sol.q)
            .map(|(j, q)| (j.name.clone(), json!(q)))
            .collect();
        let out = json!({
            "solver": solver.kind().name(),
            "joint_names": chain.joint_names(),
            "q": sol.q,
            "joints": joints,
            "position_error": sol.position_error,
            "orientation_error": sol.orientation_error,
            "iterations": sol.iterations,
            "status": sol.status.name(),
            "reason": sol.status.reason().map(|r| r.name()),
            "time_us": elapsed.as_secs_f64() * 1e6,
            "cpu_us": time.cpu.as_secs_f64() * 1e6,
            "budget_clock": a.budget_clock.name(),
        });
        outln!("{}", serde_json::to_string_pretty(&out)?)?;
    } else {
        outln!("{}: {}", solver.kind(), sol.status)?;
        for (j, q) in chain.joints.iter().zip(&sol.q) {
            outln!("  {:<22} {:>10.6}", j.name, q)?;
        }
        outln!(
            "position error {:.3e} m, orientation error {:.3e} rad, {} iterations, {:.1} us",
            sol.position_error,
            sol.orientation_error,
            sol.iterations,
            elapsed.as_secs_f64() * 1e6
        )?;
    }
    Ok(if sol.status.is_converged() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::EXIT_NOT_REACHED)
    })
}

/// The target the flags ask for: a pose (as --target-orientation takes
/// it), a pointing axis or a position; either 5D kind points the one
/// --tool-axis.
fn target(a: &Args) -> anyhow::Result<Target> {
    let mut target = Target::from_xyzw(a.position, a.orientation)?;
    target.orientation = (a.solver.orientation_mode()).apply(target.orientation.full());
    if let Some(d) = a.axis {
        target.orientation = Orientation::Axis(Pointing {
            direction: direction_from_xyz("--axis", d)?,
            tool: a.solver.tool(),
        });
    }
    Ok(target)
}

/// `--all`: every solution within the limits, or the solver's reason why
/// it cannot list them.
fn all(solver: &mut Solver, target: &Target, seed: &[f64], json: bool) -> anyhow::Result<ExitCode> {
    let start = std::time::Instant::now();
    let all = solver.solve_all(target, seed)?;
    let elapsed = start.elapsed();
    let chain = solver.chain();
    if json {
        let solutions: Vec<_> = all
            .iter()
            .map(|s| {
                json!({
                    "q": s.q,
                    "distance": joint_distance(chain, &s.q, seed, &[]),
                    "position_error": s.position_error,
                    "orientation_error": s.orientation_error,
                })
            })
            .collect();
        let out = json!({
            "solver": solver.kind().name(),
            "joint_names": chain.joint_names(),
            "count": all.len(),
            "solutions": solutions,
            "time_us": elapsed.as_secs_f64() * 1e6,
        });
        outln!("{}", serde_json::to_string_pretty(&out)?)?;
    } else {
        outln!(
            "{}: {} solution(s) within the limits, nearest the seed first ({:.1} us)",
            solver.kind(),
            all.len(),
            elapsed.as_secs_f64() * 1e6
        )?;
        outln!("  {}", chain.joint_names().join(" "))?;
        for s in &all {
            let q: Vec<String> = s.q.iter().map(|v| format!("{v:.6}")).collect();
            outln!(
                "  {}  |q - seed| {:.4}",
                q.join(" "),
                joint_distance(chain, &s.q, seed, &[])
            )?;
        }
    }
    Ok(if all.is_empty() {
        ExitCode::from(super::EXIT_NOT_REACHED)
    } else {
        ExitCode::SUCCESS
    })
}
