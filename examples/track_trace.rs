//! Replays one path of a track set (`make_targets --track`) through the
//! node core as `arm_ik bench` does (virtual servos, the path's start as
//! the arm's pose, no collision check, default settings) and prints each
//! answer beside the configuration that generated its target: to trace
//! a jump or a lag to its cause (benches/README.md, Track sets).
//!
//! ```text
//! cargo run --release --example track_trace -- [--whole] <set.json> <path> [from_s to_s [every]]
//! ```
//!
//! `--whole` gives the path as one Cartesian path (`arm_ik bench
//! --whole-path`): planned, then run, its times from when it moves.
//!
//! Rows: time, sample, the largest joint change since the previous answer
//! (rad), the tip's lag behind the latest target (mm), the smallest
//! singular value of the answer's and of the generating configuration's
//! task Jacobian (position rows only for a position set), the answer, the
//! generating configuration and the commanded joints. Without a window,
//! the answers around the first three jumps (steps above 0.1 rad).

use arm_ik::bench::{STEP_LIMIT, TargetSet};
use arm_ik::model::{Chain, Frames};
use arm_ik::node::track::{Feed, path_samples, replay_track_with};
use arm_ik::node::{NodeConfig, NodeCore, NodeSettings};
use nalgebra::DMatrix;
use std::sync::atomic::AtomicBool;

struct Row {
    t: f64,
    sample: usize,
    answer: Vec<f64>,
    arm: Vec<f64>,
    step: f64,
    lag: f64,
}

fn main() -> anyhow::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let feed = match args.iter().position(|a| a == "--whole") {
        Some(i) => {
            args.remove(i);
            Feed::Whole
        }
        None => Feed::Stream,
    };
    let (Some(file), Some(path)) = (args.first(), args.get(1)) else {
        anyhow::bail!("usage: track_trace [--whole] <set.json> <path> [from_s to_s [every]]");
    };
    let set = TargetSet::load(file)?;
    let path: usize = path.parse()?;
    anyhow::ensure!(
        path < set.paths.len(),
        "the set has {} paths",
        set.paths.len()
    );
    let chain = Chain::from_urdf_file(set.urdf_path(), Some(&set.base_link), Some(&set.tip_link))?;
    let mut settings = NodeSettings::default();
    settings.collision.check = false;
    settings.solver.target_orientation = set.orientation_mode();
    let (solver, common) = settings.solver_config(&chain)?;
    let config = NodeConfig {
        initial: Some(set.paths[path].start.clone()),
        ..settings.node_config(&chain)?
    };
    let mut core = NodeCore::with_virtual_servos(&chain, solver, common, config)?;
    let rows = replay(&mut core, &set, path, feed);
    let jumps: Vec<usize> = (0..rows.len())
        .filter(|&i| rows[i].step > STEP_LIMIT)
        .collect();
    println!("{} answers, {} jumps", rows.len(), jumps.len());
    let shown: Vec<usize> = match (args.get(2), args.get(3)) {
        (Some(a), Some(b)) => {
            let (from, to): (f64, f64) = (a.parse()?, b.parse()?);
            let every: usize = args.get(4).map_or(Ok(1), |s| s.parse())?;
            (0..rows.len())
                .filter(|&i| rows[i].t >= from && rows[i].t <= to)
                .filter(|&i| i % every.max(1) == 0 || jumps.contains(&i))
                .collect()
        }
        _ => {
            let mut v: Vec<usize> = jumps
                .iter()
                .take(3)
                .flat_map(|&j| j.saturating_sub(10)..(j + 3).min(rows.len()))
                .collect();
            v.dedup();
            v
        }
    };
    let samples = path_samples(&set, path);
    let rows_of = if set.position_only { 3 } else { 6 };
    let f = |v: &[f64]| v.iter().map(|x| format!("{x:7.3}")).collect::<String>();
    for i in shown {
        let r = &rows[i];
        let made = &samples[r.sample].q;
        let (sa, sg) = (
            smallest_singular(&chain, &r.answer, rows_of),
            smallest_singular(&chain, made, rows_of),
        );
        println!(
            "t {:6.2} s{:5} step {:5.3} lag {:5.1} mm sv {sa:5.3}/{sg:5.3} | ans{} | gen{} | arm{}",
            r.t,
            r.sample,
            r.step,
            r.lag * 1e3,
            f(&r.answer),
            f(made),
            f(&r.arm)
        );
    }
    Ok(())
}

/// The path given to the core by `node::track::replay_track_with`, as
/// the bench gives it: one row per answer.
fn replay<S: arm_ik::servo::ServoOutput>(
    core: &mut NodeCore<S>,
    set: &TargetSet,
    path: usize,
    feed: Feed,
) -> Vec<Row> {
    let mut rows = Vec::new();
    let stop = AtomicBool::new(false);
    replay_track_with(core, set, path, &stop, feed, |a| {
        rows.push(Row {
            t: a.t,
            sample: a.sample,
            answer: a.answer.to_vec(),
            arm: a.arm.to_vec(),
            step: a.step,
            lag: a.lag,
        })
    });
    rows
}

/// The smallest singular value of the first `rows` rows of the Jacobian
/// at `q` (position, then rotation).
fn smallest_singular(chain: &Chain, q: &[f64], rows: usize) -> f64 {
    let mut frames = Frames::new(chain);
    chain.jacobian(q, &mut frames);
    let j = DMatrix::from_fn(rows, q.len(), |r, c| {
        let col = &frames.columns[c];
        if r < 3 {
            col.linear[r]
        } else {
            col.angular[r - 3]
        }
    });
    j.singular_values().min()
}
