//! `arm_ik bench`: the benchmark protocol of `../shared/targets/README.md`.

use super::settings_args::SolverArgs;
use arm_ik::bench::{self, Criteria, KChain, Summary, TargetSet};
use arm_ik::ik::Solver;
use arm_ik::model::Chain;
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
    /// Named seed every query starts from.
    #[arg(long, default_value = "mid")]
    seed_name: String,
    /// Also run another solver on the same targets in the same run: `k`.
    #[arg(long)]
    compare: Option<String>,
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
    let seed = set.seed(&a.seed_name)?.to_vec();
    let (config, common) = a.solver.config(&chain)?;
    let criteria = Criteria {
        position_tolerance: a.solver.position_tolerance,
        orientation_tolerance: a.solver.orientation_tolerance,
        budget: Duration::from_secs_f64(a.solver.budget_ms / 1e3),
        position_only: set.position_only,
    };
    let mut solver = Solver::new(&chain, config, common)?;
    let records = bench::run(&mut solver, &set, &seed, &criteria);
    let ours = bench::summarize(solver.kind().name(), &set.name(), &records, &criteria);

    let other = match a.compare.as_deref() {
        None => None,
        Some("k") => {
            let kc = KChain::load(&urdf, &chain)?;
            let rec = kc.run(&chain, &set.samples, &seed, &criteria);
            Some(bench::summarize("k", &set.name(), &rec, &criteria))
        }
        Some(other) => anyhow::bail!(
            "--compare {other}: only 'k' (the k crate's JacobianIkSolver) is available"
        ),
    };

    if let Some(path) = &a.output {
        let raw = json!({
            "solver": ours.solver,
            "arm": set.name(),
            "seed": a.seed_name,
            "records": records,
        });
        std::fs::write(path, serde_json::to_vec(&raw)?)
            .map_err(|e| anyhow::anyhow!("--output {}: {e}", path.display()))?;
    }
    if a.json {
        let mut out = serde_json::to_value(&ours)?;
        if let Some(o) = &other {
            out["compare"] = serde_json::to_value(o)?;
            out["ratios"] = ratios(&ours, o);
        }
        println!("{}", serde_json::to_string(&out)?);
    } else {
        println!(
            "{} targets, tolerance {:.0e} m / {:.0e} rad{}, budget {} ms, seed '{}'",
            set.name(),
            criteria.position_tolerance,
            criteria.orientation_tolerance,
            if criteria.position_only {
                " (position only)"
            } else {
                ""
            },
            a.solver.budget_ms,
            a.seed_name
        );
        println!(
            "{:<10} {:>6} {:>9} {:>11} {:>11} {:>12} {:>10}",
            "solver", "n", "success", "median_us", "p99_us", "median_ok_us", "mean_iter"
        );
        for s in std::iter::once(&ours).chain(other.as_ref()) {
            println!(
                "{:<10} {:>6} {:>8.2}% {:>11.1} {:>11.1} {:>12.1} {:>10.1}",
                s.solver,
                s.n,
                100.0 * s.success_rate,
                s.median_us,
                s.p99_us,
                s.median_success_us,
                s.mean_iterations
            );
        }
        if let Some(o) = &other {
            let r = ratios(&ours, o);
            println!("ratios {} / {}: {}", ours.solver, o.solver, r);
        }
    }
    Ok(ExitCode::SUCCESS)
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
        "median_us": div(ours.median_us, other.median_us),
        "p99_us": div(ours.p99_us, other.p99_us),
    })
}
