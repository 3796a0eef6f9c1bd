//! `arm_ik import-lerobot`: a LeRobot calibration file in, the servo
//! YAML of the same arm out.

use super::stop::Stop;
use anyhow::{Context, bail};
use arm_ik::bag::output::{self, Existing, Inputs};
use arm_ik::servo::lerobot::{self, Robot};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The JSON LeRobot wrote after calibrating the arm (e.g.
    /// ~/.cache/huggingface/lerobot/calibration/robots/so101_follower/<id>.json).
    file: PathBuf,
    /// Which arm the file is of: so100, so101, koch (v1.1 follower), koch-leader.
    #[arg(long, value_parser = parse_robot)]
    robot: Robot,
    /// Write the YAML here instead of to standard output.
    #[arg(long)]
    output: Option<PathBuf>,
    /// Overwrite --output if it exists.
    #[arg(long)]
    force: bool,
}

fn parse_robot(name: &str) -> Result<Robot, String> {
    Robot::from_name(name)
        .ok_or_else(|| format!("unknown robot '{name}' (known: {})", Robot::names()))
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    if let Some(out) = &a.output
        && out.exists()
        && !a.force
    {
        bail!("{} exists; pass --force to overwrite it", out.display());
    }
    let text = std::fs::read_to_string(&a.file)
        .with_context(|| format!("cannot read {}", a.file.display()))?;
    let imported = lerobot::import(&text, &a.file.display().to_string(), a.robot)?;
    for w in &imported.warnings {
        errln!("arm_ik: warning: {w}");
    }
    match &a.output {
        Some(out) => {
            // Staged and renamed into place: an interrupted write leaves
            // the old file, never half of the new one.
            let stop = Stop::on_signals()?;
            let inputs = Inputs::named(&a.file, "the calibration being read")?;
            output::write_file(out, imported.yaml.as_bytes(), Existing::Replace, &inputs)
                .with_context(|| format!("cannot write {}", out.display()))?;
            if stop.requested() {
                return Ok(stop.report("import-lerobot", "the output was written whole"));
            }
            errln!("wrote {}", out.display());
        }
        None => {
            let mut out = super::out::stdout();
            out.write_all(imported.yaml.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
