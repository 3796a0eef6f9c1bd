//! The benchmark with the collision check on (`arm_ik bench --collision`):
//! the protocols of [`super::run`] on the targets whose own pose is clear
//! (the configuration that generated a target keeps the margin from the
//! arm itself, the floor and the workspace's obstacles), each solved by
//! [`Solver::solve_admissible`] as the node solves it, and every answer
//! checked again here: one closer than the margin fails as
//! [`Verdict::Collision`], whatever the solver said.

use super::{
    Answer, Criteria, Record, Stopwatch, TargetSet, Verdict, clock, run_with, sample_target,
};
use crate::collision::{Clear, World};
use crate::ik::Solver;
use serde::Serialize;
use std::sync::atomic::AtomicBool;

/// What the collision check made of a run.
#[derive(Debug, Clone, Serialize)]
pub struct CollisionFigures {
    /// The clearance every answer keeps (m).
    pub margin: f64,
    /// Targets left out: their own pose is closer than the margin.
    pub skipped: usize,
    /// The smallest distance of any answer's closest pair (m, signed) and
    /// that pair (`forearm vs floor`); answers are the targets the solver
    /// says it reached (infinite and empty when there were none).
    pub min_clearance: f64,
    pub closest: String,
}

/// `set` without the targets whose generating configuration is closer
/// than `world`'s margin (a path keeps its start and loses those
/// targets), and how many were left out.
pub fn clear_targets(set: &TargetSet, world: &mut World) -> (TargetSet, usize) {
    let margin = world.margin();
    let keep: Vec<bool> = set
        .samples
        .iter()
        .map(|s| world.clear_of(&s.q, margin, None).is_ok())
        .collect();
    let mut out = set.clone();
    out.samples = set
        .samples
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(s, _)| s.clone())
        .collect();
    let mut first = 0;
    for path in &mut out.paths {
        let kept = keep[first..first + path.len].iter().filter(|k| **k).count();
        first += path.len;
        path.len = kept;
    }
    out.paths.retain(|p| p.len > 0);
    let skipped = keep.iter().filter(|k| !**k).count();
    (out, skipped)
}

/// Runs `set` (already cleared, see [`clear_targets`]) through `solver`
/// with the collision check of `world`, and judges every answer's
/// clearance too.
pub fn run_clear(
    solver: &mut Solver,
    set: &TargetSet,
    seed: &[f64],
    c: &Criteria,
    world: &mut World,
    skipped: usize,
    stop: &AtomicBool,
) -> (Vec<Record>, CollisionFigures) {
    let chain = solver.chain().clone();
    let mut records = run_with(&chain, set, seed, c, stop, |sample, seed| {
        let target = sample_target(sample, c.orientation);
        let mut clear = Clear::new(world);
        let watch = Stopwatch::start();
        let result = solver.solve_admissible(&target, seed, &mut clear, c.budget, clock(c.clock));
        Answer::from_result(result, watch.stop())
    });
    let margin = world.margin();
    let mut figures = CollisionFigures {
        margin,
        skipped,
        min_clearance: f64::INFINITY,
        closest: String::new(),
    };
    for r in &mut records {
        if r.q.len() != chain.dof() || r.q.iter().any(|v| !v.is_finite()) {
            continue;
        }
        let n = world.nearest(&r.q);
        r.clearance = Some(n.distance);
        // Only answers count: a refused target's returned seed is no
        // answer, however close it is (a seed inside an obstacle made the
        // summary report a collision no answer had).
        if r.status != Verdict::Success {
            continue;
        }
        if n.distance < figures.min_clearance {
            figures.min_clearance = n.distance;
            figures.closest = world.describe(&n);
        }
        if n.distance < margin {
            r.status = Verdict::Collision;
            r.detail = Some(format!(
                "{} {:.1} mm apart",
                world.describe(&n),
                n.distance * 1e3
            ));
        }
    }
    (records, figures)
}
