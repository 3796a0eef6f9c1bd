//! `arm_ik collisions`: the collision model arm_ik builds for a URDF, as
//! the node would at start: which links are approximated, where the floor
//! is, which pairs are checked and which are left out (the
//! allowed-collision matrix) and why; `--srdf-out` writes the matrix as an
//! SRDF a MoveIt user can reuse.

use super::collision_args::WorldArgs;
use super::robot::LinkArgs;
use anyhow::Context;
use arm_ik::collision::{self, Owner, World};
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The URDF file.
    urdf: PathBuf,
    #[command(flatten)]
    links: LinkArgs,
    #[command(flatten)]
    world: WorldArgs,
    /// Write the pairs left out as an SRDF (<disable_collisions>) here.
    #[arg(long, value_name = "FILE")]
    srdf_out: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let chain = a.links.chain(&a.urdf)?;
    let options = a
        .world
        .options(true)
        .map_err(super::settings_args::flag_usage)?;
    let mut world = collision::build(&chain, &options)?;
    let rest = world.body().rest.clone();
    let nearest = world.nearest(&rest);
    if let Some(path) = &a.srdf_out {
        std::fs::write(path, world.matrix().to_srdf(&chain.robot))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let checked: Vec<(String, String)> = world
        .checked_pairs()
        .into_iter()
        .map(|(x, y)| (name(&world, x), name(&world, y)))
        .collect();
    if a.json {
        let left_out: Vec<_> = world
            .matrix()
            .disabled
            .iter()
            .map(|d| {
                json!({"link1": d.link1, "link2": d.link2, "reason": d.reason.name(),
                       "why": d.reason.meaning()})
            })
            .collect();
        let out = json!({
            "robot": chain.robot,
            "model": collision::describe(&world),
            "floor_z": world.floor(),
            "checked": checked,
            "left_out": left_out,
            "default_pose": {
                "clearance": finite_or_null(nearest.distance),
                "closest": world.describe(&nearest),
            },
        });
        outln!("{}", serde_json::to_string_pretty(&out)?)?;
    } else {
        print_text(&world, &checked, &nearest)?;
        if let Some(path) = &a.srdf_out {
            outln!(
                "wrote {} ({} <disable_collisions>)",
                path.display(),
                world.matrix().disabled.len()
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn name(world: &World, o: Owner) -> String {
    world.name(o).to_owned()
}

fn finite_or_null(x: f64) -> serde_json::Value {
    if x.is_finite() { json!(x) } else { json!(null) }
}

fn print_text(
    world: &World,
    checked: &[(String, String)],
    nearest: &collision::Nearest,
) -> std::io::Result<()> {
    for line in collision::describe(world) {
        outln!("{line}")?;
    }
    outln!("\nchecked ({}):", checked.len())?;
    for (x, y) in checked {
        outln!("  {x} - {y}")?;
    }
    let m = world.matrix();
    outln!("\nleft out ({}):", m.disabled.len())?;
    let width = m
        .disabled
        .iter()
        .map(|d| d.link1.len() + d.link2.len() + 3)
        .max()
        .unwrap_or(0);
    for d in &m.disabled {
        let pair = format!("{} - {}", d.link1, d.link2);
        outln!(
            "  {pair:<width$}  {:<8}  {}",
            d.reason.name(),
            d.reason.meaning()
        )?;
    }
    if nearest.distance.is_finite() {
        outln!(
            "\ndefault pose: closest {}, {:.1} mm apart",
            world.describe(nearest),
            nearest.distance * 1e3
        )?;
    }
    Ok(())
}
