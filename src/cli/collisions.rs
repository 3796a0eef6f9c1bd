//! `arm_ik collisions`: the collision model arm_ik builds for a URDF, as
//! the node would at start: which links are approximated, where the floor
//! is, which pairs are checked and which are left out (the
//! allowed-collision matrix) and why; `--srdf-out` writes the matrix as an
//! SRDF a MoveIt user can reuse; `--svg` draws the arm, the floor and
//! the obstacles from the side, at `--joints` (the picture of
//! docs/collisions.md).

use super::collision_args::WorldArgs;
use super::robot::LinkArgs;
use super::stop::Stop;
use super::{UsageError, values};
use anyhow::Context;
use arm_ik::bag::output::{self, Existing, Inputs};
use arm_ik::collision::{self, Owner, World};
use arm_ik::model::Chain;
use arm_ik::plot::scene::{self, View};
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
    /// The pose the closest pair is found (and the picture drawn) in: one
    /// value per moving joint of the chain in chain order (`arm_ik check`
    /// lists them), then optionally the gripper's; rad, or m for
    /// prismatic joints; default: the URDF's zero pose.
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true,
          value_parser = values::finite)]
    joints: Option<Vec<f64>>,
    /// Draw the arm's collision solids, the floor and the obstacles from
    /// the side into this SVG file, the closest pair outlined in red.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Which plane of the base frame the picture shows.
    #[arg(long, value_enum, default_value_t = ViewArg::Xz)]
    view: ViewArg,
}

/// `--view`: the library's [`View`] by its plane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ViewArg {
    /// x to the right, z up.
    Xz,
    /// y to the right, z up.
    Yz,
}

impl From<ViewArg> for View {
    fn from(v: ViewArg) -> View {
        match v {
            ViewArg::Xz => View::Xz,
            ViewArg::Yz => View::Yz,
        }
    }
}

/// The pose `--joints` gives, checked against the robot: as many values
/// as the chain's joints, or as every axis of the body (the gripper's
/// too); a value outside its limits is drawn where it would be, with a
/// warning.
fn pose(a: &Args, chain: &Chain, world: &World) -> anyhow::Result<Option<Vec<f64>>> {
    let Some(q) = &a.joints else {
        return Ok(None);
    };
    let axes = world.body().axes;
    if q.len() != chain.dof() && q.len() != axes {
        let gripper = if axes > chain.dof() {
            format!(" (or {axes} with the gripper's)")
        } else {
            String::new()
        };
        return Err(UsageError(format!(
            "--joints: {} values for the {} moving joints{gripper} of {} -> {} ({})",
            q.len(),
            chain.dof(),
            chain.base,
            chain.tip,
            chain.joint_names().join(", ")
        ))
        .into());
    }
    for (j, &v) in chain.joints.iter().zip(q) {
        if !j.limits.contains(v) {
            errln!(
                "arm_ik collisions: warning: {} = {v} is outside its limits [{}, {}]; drawn where it would be",
                j.name,
                j.limits.lower,
                j.limits.upper
            );
        }
    }
    Ok(Some(q.clone()))
}

/// Draws the picture at `q` into `path`, staged so an interrupted write
/// leaves no temporary; the exit code when a signal stopped the command.
fn draw(
    a: &Args,
    world: &mut World,
    q: &[f64],
    path: &std::path::Path,
) -> anyhow::Result<Option<ExitCode>> {
    let stop = Stop::on_signals()?;
    let mut inputs = Inputs::named(&a.urdf, "the URDF being read")?;
    if let Some(w) = &a.world.workspace_file {
        inputs.add_named(w, "the workspace file being read")?;
    }
    let title = format!("arm_ik collisions {}", a.urdf.display());
    let svg = scene::scene_svg(world, q, a.view.into(), &title)?;
    output::write_file(path, svg.as_bytes(), Existing::Replace, &inputs)
        .with_context(|| format!("cannot write {}", path.display()))?;
    if stop.requested() {
        return Ok(Some(
            stop.report("collisions", "the picture was written whole"),
        ));
    }
    Ok(None)
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let chain = a.links.chain(&a.urdf)?;
    let options = a
        .world
        .options(true)
        .map_err(super::settings_args::flag_usage)?;
    let mut world = collision::build(&chain, &options)?;
    let given = pose(&a, &chain, &world)?;
    let rest = world.body().rest.clone();
    let q = given.clone().unwrap_or_else(|| rest.clone());
    if let Some(path) = &a.svg
        && let Some(stopped) = draw(&a, &mut world, &q, path)?
    {
        return Ok(stopped);
    }
    let nearest = world.nearest(&rest);
    let at_pose = given.as_ref().map(|q| world.nearest(q));
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
        let mut out = json!({
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
        if let Some(n) = &at_pose {
            out["pose"] = json!({
                "joints": q,
                "clearance": finite_or_null(n.distance),
                "closest": world.describe(n),
            });
        }
        outln!("{}", serde_json::to_string_pretty(&out)?)?;
    } else {
        print_text(&world, &checked, &nearest)?;
        if let Some(n) = at_pose.filter(|n| n.distance.is_finite()) {
            outln!(
                "--joints pose: closest {}, {:.1} mm apart",
                world.describe(&n),
                n.distance * 1e3
            )?;
        }
        if let Some(path) = &a.svg {
            outln!("wrote {}", path.display())?;
        }
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
