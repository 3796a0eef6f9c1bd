//! `arm_ik draw`: the arm as an SVG picture from a bag's `/tf` and
//! `/tf_static` (what `replay --output` and `sim --record` write, or any
//! recording with robot_state_publisher running): a few poses across the
//! recording, the last in full colour, and the targets. Drawn from the
//! recorded frames, not the URDF, so the picture shows what a viewer of
//! the bag would see.

use anyhow::Context as _;
use arm_ik::bag::output::{self, Existing, Inputs};
use arm_ik::bag::{BagReader, StampedTarget, TargetType, TfTree, decode_tf};
use arm_ik::plot::arm::{Segment, arm_svg};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The bag: a rosbag2 folder or a .mcap/.db3 file with /tf (and
    /// /tf_static).
    bag: PathBuf,
    /// Where to write the picture (SVG).
    #[arg(long, value_name = "FILE")]
    svg: PathBuf,
    /// Poses drawn, evenly spread over the recording (the last one in
    /// full colour).
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u64).range(1..=1000))]
    poses: u64,
}

/// The /tf messages of the bag (a first pass counts them), the targets.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let inputs = Inputs::of(&a.bag)?;
    output::check_file(&a.svg, Existing::Replace, &inputs)?;
    let mut count = 0u64;
    for m in BagReader::open(&a.bag)? {
        count += u64::from(&*m?.topic == "/tf");
    }
    if count == 0 {
        anyhow::bail!(
            "{}: no /tf messages to draw the arm from (record with `arm_ik sim --record`, \
             `arm_ik replay --output`, or with robot_state_publisher running)",
            a.bag.display()
        );
    }
    // The indices of the drawn /tf messages: evenly spread, the last included.
    let n = a.poses.clamp(1, count);
    let wanted: Vec<u64> = (1..=n).map(|k| k * count / n - 1).collect();
    let mut tree = TfTree::default();
    let (mut poses, mut targets): (Vec<Vec<Segment>>, Vec<[f64; 3]>) = (vec![], vec![]);
    let mut seen = 0u64;
    for m in BagReader::open(&a.bag)? {
        let m = m?;
        let at = || format!("{}: {} at {} ns", a.bag.display(), m.topic, m.log_time_ns);
        match &*m.topic {
            "/tf" | "/tf_static" => {
                tree.insert(&decode_tf(&m.data).with_context(at)?);
                if &*m.topic == "/tf" {
                    if wanted.contains(&seen) {
                        poses.push(tree.segments());
                    }
                    seen += 1;
                }
            }
            _ => {
                if let Some(kind) = TargetType::from_name(&m.type_name)
                    && let Ok(t) = StampedTarget::decode(kind, &m.data)
                {
                    targets.push(t.position);
                }
            }
        }
    }
    let name = a.bag.file_name().unwrap_or_default().to_string_lossy();
    let title = format!("arm_ik draw {name}: {} of {count} poses", poses.len());
    let svg = arm_svg(&poses, &targets, &title)?;
    output::write_file(&a.svg, svg.as_bytes(), Existing::Replace, &inputs)?;
    outln!(
        "{}: {} poses of {count} and {} targets drawn",
        a.svg.display(),
        poses.len(),
        targets.len()
    )?;
    Ok(ExitCode::SUCCESS)
}
