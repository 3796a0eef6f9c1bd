//! Writes a benchmark target set (the format of `../shared/targets`) for a
//! project robot: joint vectors drawn uniformly within the limits by a
//! seeded SplitMix64, poses by the chain's forward kinematics.
//!
//! ```text
//! cargo run --release --example make_targets -- --urdf urdf/arm.urdf \
//!     --n 1000 --rng-seed 7 --output benches/targets/arm.json
//! ```
//!
//! With `--paths P`, a path set instead: P continuous paths of n / P
//! targets each ([`TargetSet::generate_paths`]); with `--track S`, P (`--paths`, default 1)
//! smooth paths of S seconds at `--rate` Hz ([`TargetSet::generate_track`]).
//! `--position-only` writes positions, `--axis-only` 5D targets (the
//! tip's +z axis pointing where the generating pose points it).
//!
//! `tests/targets.rs` regenerates every committed set and fails when the
//! files are out of date.

use anyhow::Context;
use arm_ik::bench::TargetSet;
use arm_ik::model::Chain;
use clap::Parser;
use std::path::{Component, Path, PathBuf};

#[derive(Debug, Parser)]
struct Args {
    #[arg(long)]
    urdf: PathBuf,
    #[arg(long)]
    base: Option<String>,
    #[arg(long)]
    tip: Option<String>,
    #[arg(long, default_value_t = 1000)]
    n: usize,
    #[arg(long, default_value_t = 7)]
    rng_seed: u64,
    /// Targets are positions only (legs, position benchmarks).
    #[arg(long)]
    position_only: bool,
    /// 5D targets: only where the tip's +z axis points counts (the roll
    /// about it free); the samples are those of the pose set with the same
    /// arguments.
    #[arg(long, conflicts_with = "position_only")]
    axis_only: bool,
    /// A path set: this many continuous paths of --n / --paths targets each,
    /// neighbours at most 1 mm and 0.01 rad apart.
    #[arg(long)]
    paths: Option<usize>,
    /// A track set instead: smooth paths of this many seconds (--paths of
    /// them, default 1), sampled at --rate Hz (--n is ignored).
    #[arg(long)]
    track: Option<f64>,
    /// With --track: targets per second.
    #[arg(long, default_value_t = 20.0, requires = "track")]
    rate: f64,
    #[arg(long)]
    output: PathBuf,
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    let chain = Chain::from_urdf_file(&a.urdf, a.base.as_deref(), a.tip.as_deref())?;
    let dir = a.output.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let urdf = relative(&a.urdf, dir)?;
    let set = match a.paths {
        _ if a.track.is_some() => {
            let seconds = a.track.unwrap_or_default();
            let paths = a.paths.unwrap_or(1);
            if !(seconds > 0.0 && seconds <= 3600.0 && a.rate > 0.0 && a.rate <= 1000.0) {
                anyhow::bail!("--track needs 0 < seconds <= 3600 and 0 < --rate <= 1000");
            }
            if paths == 0 {
                anyhow::bail!("--paths must be at least 1");
            }
            let shape = (paths, seconds, a.rate);
            TargetSet::generate_track(&chain, &urdf, shape, a.rng_seed, a.position_only)
        }
        None => TargetSet::generate(&chain, &urdf, a.n, a.rng_seed, a.position_only),
        Some(0) => anyhow::bail!("--paths must be at least 1"),
        Some(p) => {
            TargetSet::generate_paths(&chain, &urdf, p, a.n / p, a.rng_seed, a.position_only)
        }
    };
    let mut set = set;
    if a.axis_only {
        set.tool_axis = Some([0.0, 0.0, 1.0]);
    }
    std::fs::write(&a.output, set.to_json())
        .with_context(|| format!("writing {}", a.output.display()))?;
    println!(
        "{}: {} samples of {} ({} -> {}), urdf {urdf}",
        a.output.display(),
        set.samples.len(),
        chain.robot,
        chain.base,
        chain.tip
    );
    Ok(())
}

/// `file` as a path relative to the folder `dir` ('/'-separated, so the
/// JSON is the same on every platform), worked out from the paths as
/// given, not with symlinks resolved: with `../shared` a symlink beside
/// the clone, the set must still say `../../../shared/...`, as committed.
fn relative(file: &Path, dir: &Path) -> anyhow::Result<String> {
    let cwd = std::env::current_dir().context("the current folder")?;
    let abs = |p: &Path| lexical(&cwd.join(p));
    let (file, dir) = (abs(file), abs(dir));
    let (f, d): (Vec<Component>, Vec<Component>) =
        (file.components().collect(), dir.components().collect());
    let common = f.iter().zip(&d).take_while(|(x, y)| x == y).count();
    let parts: Vec<String> = std::iter::repeat_n("..".to_owned(), d.len() - common)
        .chain(
            f[common..]
                .iter()
                .map(|c| c.as_os_str().to_string_lossy().into_owned()),
        )
        .collect();
    Ok(parts.join("/"))
}

/// `p` with `.` and `..` taken out by the text alone (`a/b/../c` is
/// `a/c`), as a shell's `cd -L` reads a path.
fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
