//! `arm_ik check`: what arm_ik makes of a URDF chain.

use super::robot::LinkArgs;
use arm_ik::ik::{Common, Solver, SolverConfig, SolverKind};
use arm_ik::model::Chain;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The URDF file.
    urdf: PathBuf,
    #[command(flatten)]
    links: LinkArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let chain = a.links.chain(&a.urdf)?;
    // Whether a solver applies is whatever binding it to the chain says.
    let solvers: Vec<(SolverKind, Result<String, String>)> = SolverKind::ALL
        .into_iter()
        .map(|k| {
            let fits = Solver::new(&chain, SolverConfig::default_for(k), Common::default())
                .map(|s| match &s {
                    Solver::Analytic(a) => a.geometry().to_string(),
                    Solver::Geo(g) => g.structure().to_string(),
                    _ => String::new(),
                })
                .map_err(|e| e.to_string());
            (k, fits)
        })
        .collect();
    if a.json {
        print_json(&chain, &solvers)?;
    } else {
        print_text(&chain, &solvers)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Each solver with whether it applies: the analytic and geo solvers'
/// structure when it does, the reason when it does not.
type Applies = [(SolverKind, Result<String, String>)];

fn print_json(chain: &Chain, solvers: &Applies) -> anyhow::Result<()> {
    let joints: Vec<_> = chain
        .joints
        .iter()
        .map(|j| {
            json!({
                "name": j.name,
                "type": j.kind.name(),
                "axis": [j.axis.x, j.axis.y, j.axis.z],
                "lower": finite_or_null(j.limits.lower),
                "upper": finite_or_null(j.limits.upper),
                "max_velocity": finite_or_null(j.max_velocity),
            })
        })
        .collect();
    let solvers: serde_json::Map<String, serde_json::Value> = solvers
        .iter()
        .map(|(k, r)| {
            let v = match r {
                Ok(detail) if detail.is_empty() => json!({"applies": true}),
                Ok(detail) => json!({"applies": true, "structure": detail}),
                Err(why) => json!({"applies": false, "why": why}),
            };
            (k.name().to_owned(), v)
        })
        .collect();
    let out = json!({
        "source": chain.source,
        "robot": chain.robot,
        "base": chain.base,
        "tip": chain.tip,
        "dof": chain.dof(),
        "joints": joints,
        "solvers": solvers,
    });
    outln!("{}", serde_json::to_string_pretty(&out)?)?;
    Ok(())
}

fn print_text(chain: &Chain, solvers: &Applies) -> std::io::Result<()> {
    outln!(
        "{} ({}): {} -> {}, {} moving joints",
        chain.robot,
        chain.source,
        chain.base,
        chain.tip,
        chain.dof()
    )?;
    outln!(
        "  {:<22} {:<10} {:<22} {:>10} {:>10} {:>8}",
        "joint",
        "type",
        "axis",
        "lower",
        "upper",
        "vmax"
    )?;
    for j in &chain.joints {
        outln!(
            "  {:<22} {:<10} {:<22} {:>10} {:>10} {:>8}",
            j.name,
            j.kind.name(),
            format!("({:.3}, {:.3}, {:.3})", j.axis.x, j.axis.y, j.axis.z),
            fmt_limit(j.limits.lower),
            fmt_limit(j.limits.upper),
            fmt_limit(j.max_velocity),
        )?;
    }
    outln!("solvers:")?;
    for (k, r) in solvers {
        match r {
            Ok(detail) if detail.is_empty() => outln!("  {:<9} yes", k.name()),
            Ok(detail) => outln!("  {:<9} yes: {detail}", k.name()),
            Err(why) => outln!("  {:<9} no: {why}", k.name()),
        }?
    }
    Ok(())
}

fn finite_or_null(v: f64) -> serde_json::Value {
    if v.is_finite() {
        json!(v)
    } else {
        serde_json::Value::Null
    }
}

fn fmt_limit(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.4}")
    } else {
        "none".into()
    }
}
