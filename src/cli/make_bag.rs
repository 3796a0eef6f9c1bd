//! `arm_ik make-bag`: a target bag from a waypoint scenario, so CI
//! scenarios need no robot and no ROS.

use super::progress::Progress;
use super::stop::Stop;
use arm_ik::bag::output::{Existing, Inputs};
use arm_ik::bag::{BagWriter, Endian, Scenario, Storage};
use std::path::PathBuf;
use std::process::ExitCode;
use std::str::FromStr;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The scenario YAML (see tests/data/scenario.yaml).
    waypoints: PathBuf,
    /// The bag to write: a folder (metadata.yaml + one storage file), or a
    /// .mcap file with --storage mcap; it must not exist (see --overwrite).
    #[arg(long)]
    output: PathBuf,
    /// The rosbag2 storage plugin: mcap or sqlite3.
    #[arg(long, default_value = "mcap", value_parser = Storage::from_str)]
    storage: Storage,
    /// Play the waypoints this many times (overrides the file's `repeat`).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    repeat: Option<u64>,
    /// Write big-endian CDR (CDR_BE) instead of little-endian.
    #[arg(long)]
    big_endian: bool,
    /// Replace an existing --output (a bag folder, or a .mcap file).
    #[arg(long)]
    overwrite: bool,
    /// Write a rate above 1000 Hz or more than 5 000 000 messages.
    #[arg(long)]
    force: bool,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    // Before any output is staged, so a signal never leaves its temporary.
    let stop = Stop::on_signals()?;
    let text = std::fs::read_to_string(&a.waypoints)
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.waypoints.display()))?;
    let mut s = Scenario::from_yaml(&text)
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.waypoints.display()))?;
    if let Some(r) = a.repeat {
        s.repeat = r;
        s.check_end()
            .map_err(|e| anyhow::anyhow!("{} with --repeat {r}: {e}", a.waypoints.display()))?;
    }
    if !a.force {
        s.check_size()
            .map_err(|e| anyhow::anyhow!("{}: {e}", a.waypoints.display()))?;
    }
    let endian = if a.big_endian {
        Endian::Big
    } else {
        Endian::Little
    };
    let existing = if a.overwrite {
        Existing::Replace
    } else {
        Existing::Refuse
    };
    let inputs = Inputs::named(&a.waypoints, "the scenario being read")?;
    let mut w = BagWriter::create_with(&a.output, a.storage, existing, &inputs)?;
    let topic = w.add_topic(s.topic(), s.target_type().name())?;
    let mut n = 0u64;
    let total = s.len();
    let mut progress = Progress::new();
    for (t, target) in s.samples() {
        if stop.requested() {
            break;
        }
        w.write(topic, t, &target.encode(endian))?;
        n += 1;
        progress.update(n, || n as f64 / total as f64);
    }
    progress.finish();
    if stop.requested() {
        drop(w); // its temporary goes
        outln!(
            "arm_ik make-bag: {n} of {total} messages generated, none written to {}",
            a.output.display()
        )?;
        let kept = if a.output.exists() {
            "the existing output is as it was"
        } else {
            ""
        };
        return Ok(stop.report("make-bag", kept));
    }
    w.finish()?;
    outln!(
        "arm_ik make-bag: {} messages on {} ({}) at {} Hz to {} ({})",
        n,
        s.topic(),
        s.target_type().name(),
        s.rate_hz,
        a.output.display(),
        a.storage.identifier()
    )?;
    Ok(ExitCode::SUCCESS)
}
