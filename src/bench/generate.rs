//! Making target sets: joint vectors drawn with a seeded SplitMix64, poses
//! by the chain's own forward kinematics, so that the same arguments always
//! give the same file.

use super::{NamedSeed, PathSpan, Sample, TargetSet};
use crate::ik::Rng;
use crate::ik::rotation_error;
use crate::model::{Chain, Frames, JointKind};
use nalgebra::{DMatrix, UnitQuaternion};
use std::path::PathBuf;

/// Path sets: neighbouring targets are at most this far apart (m, rad) ...
pub const PATH_POSITION_STEP: f64 = 1e-3;
pub const PATH_ROTATION_STEP: f64 = 0.01;
/// ... and the configuration that generates them moves no joint more than
/// this between two targets, so a continuous answer exists even where the
/// tip moves slowly (near a singular pose).
pub const PATH_JOINT_STEP: f64 = 0.01;

impl TargetSet {
    /// Draws `n` configurations of `chain` uniformly within the joints'
    /// sampling ranges ([`crate::model::Joint::sample_range`]: the limits,
    /// `[-pi, pi]` for continuous joints) with SplitMix64 seeded by
    /// `rng_seed`, and records each one's tip pose. `urdf` is stored as given
    /// (the robot file relative to where the set will be written). The same
    /// arguments always give the same set.
    pub fn generate(
        chain: &Chain,
        urdf: &str,
        n: usize,
        rng_seed: u64,
        position_only: bool,
    ) -> TargetSet {
        let ranges = ranges(chain);
        let mut rng = Rng::new(rng_seed);
        let samples = (0..n)
            .map(|_| sample(chain, draw(&ranges, &mut rng)))
            .collect();
        TargetSet::new(chain, urdf, rng_seed, position_only, Vec::new(), samples)
    }

    /// `paths` continuous paths of `per_path` targets each: every path
    /// starts at a random configuration (drawn as [`TargetSet::generate`]
    /// draws) and moves in a straight line in joint space, in a random
    /// direction, bouncing off the limits and turning away from singular
    /// poses (where two branches of answers meet, either of them
    /// continuous); a target is recorded each time
    /// the tip has moved [`PATH_POSITION_STEP`] or turned
    /// [`PATH_ROTATION_STEP`] (or a joint moved [`PATH_JOINT_STEP`]),
    /// whichever comes first. The tip's path is continuous and reachable
    /// throughout, and the generating configurations (each sample's `q`)
    /// are a continuous answer.
    pub fn generate_paths(
        chain: &Chain,
        urdf: &str,
        paths: usize,
        per_path: usize,
        rng_seed: u64,
        position_only: bool,
    ) -> TargetSet {
        let ranges = ranges(chain);
        let mut rng = Rng::new(rng_seed);
        let mut spans = Vec::with_capacity(paths);
        let mut samples = Vec::with_capacity(paths * per_path);
        for _ in 0..paths {
            let mut q = draw(&ranges, &mut rng);
            let mut dir = vec![0.0; ranges.len()];
            random_direction(&mut rng, &mut dir);
            spans.push(PathSpan {
                start: q.clone(),
                len: per_path,
            });
            samples.push(sample(chain, q.clone()));
            for _ in 1..per_path {
                q = next_on_path(chain, &ranges, &q, &mut dir, position_only, &mut rng);
                samples.push(sample(chain, q.clone()));
            }
        }
        TargetSet::new(chain, urdf, rng_seed, position_only, spans, samples)
    }

    pub(super) fn new(
        chain: &Chain,
        urdf: &str,
        rng_seed: u64,
        position_only: bool,
        paths: Vec<PathSpan>,
        samples: Vec<Sample>,
    ) -> TargetSet {
        let ranges = ranges(chain);
        let mid = chain.mid_configuration();
        let seed = |name: &str, q: Vec<f64>| NamedSeed {
            name: name.to_owned(),
            q,
        };
        TargetSet {
            rate_hz: None,
            tool_axis: None,
            urdf: urdf.to_owned(),
            base_link: chain.base.clone(),
            tip_link: chain.tip.clone(),
            joint_names: chain.joints.iter().map(|j| j.name.clone()).collect(),
            lower: ranges.iter().map(|r| r.0).collect(),
            upper: ranges.iter().map(|r| r.1).collect(),
            continuous: chain
                .joints
                .iter()
                .map(|j| j.kind == JointKind::Continuous)
                .collect(),
            position_only,
            rng_seed: Some(rng_seed),
            seeds: vec![
                seed("mid", mid.clone()),
                seed("zero", vec![0.0; mid.len()]),
                seed("mid+0.1", mid.iter().map(|v| v + 0.1).collect()),
            ],
            paths,
            samples,
            path: PathBuf::new(),
        }
    }
}

pub(super) fn ranges(chain: &Chain) -> Vec<(f64, f64)> {
    chain.joints.iter().map(|j| j.sample_range()).collect()
}

fn draw(ranges: &[(f64, f64)], rng: &mut Rng) -> Vec<f64> {
    ranges.iter().map(|&(lo, hi)| rng.range(lo, hi)).collect()
}

/// The sample for configuration `q`: its tip pose.
pub(super) fn sample(chain: &Chain, q: Vec<f64>) -> Sample {
    let tip = chain.fk(&q);
    let r = UnitQuaternion::from_rotation_matrix(&tip.rotation);
    // q and -q are the same rotation; keep w >= 0 so files diff cleanly.
    let s = if r.w < 0.0 { -1.0 } else { 1.0 };
    Sample {
        position: tip.translation.vector.into(),
        quaternion: [s * r.i, s * r.j, s * r.k, s * r.w],
        q,
    }
}

/// The next configuration along direction `dir` from `q`, turning to a new
/// random direction (up to [`TURNS`] times) where it would come near a
/// singular pose: there two branches of answers meet and either is a
/// continuous answer, so the path would not say which one a solver should
/// follow.
fn next_on_path(
    chain: &Chain,
    ranges: &[(f64, f64)],
    q: &[f64],
    dir: &mut [f64],
    position_only: bool,
    rng: &mut Rng,
) -> Vec<f64> {
    let floor = SINGULAR_FRACTION * reach(chain);
    for _ in 0..TURNS {
        let next = step_on_path(chain, ranges, q, dir);
        if smallest_singular_value(chain, &next, position_only) >= floor {
            return next;
        }
        random_direction(rng, dir);
    }
    step_on_path(chain, ranges, q, dir)
}

/// A random direction in joint space, its largest component 1.
fn random_direction(rng: &mut Rng, dir: &mut [f64]) {
    for d in dir.iter_mut() {
        *d = rng.range(-1.0, 1.0);
    }
    let most = dir.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    dir.iter_mut().for_each(|v| *v /= most);
}

/// A path turns when the smallest singular value of the task Jacobian
/// falls below this fraction of the chain's reach (m per rad).
pub(super) const SINGULAR_FRACTION: f64 = 0.02;
/// New directions tried before a path goes on into a singular region.
const TURNS: usize = 100;

/// The sum of the distances between successive joints and the tip at zero:
/// an upper bound of how far the chain reaches.
pub(super) fn reach(chain: &Chain) -> f64 {
    let mut frames = Frames::new(chain);
    let tip = chain.joint_frames(&vec![0.0; chain.dof()], &mut frames);
    let mut points: Vec<_> = frames.origins.iter().map(|p| p.coords).collect();
    points.push(tip.translation.vector);
    points.windows(2).map(|w| (w[1] - w[0]).norm()).sum()
}

/// The smallest singular value of the Jacobian at `q` (position rows only
/// for position targets).
pub(super) fn smallest_singular_value(chain: &Chain, q: &[f64], position_only: bool) -> f64 {
    let mut frames = Frames::new(chain);
    chain.jacobian(q, &mut frames);
    let rows = if position_only { 3 } else { 6 };
    let j = DMatrix::from_fn(rows, chain.dof(), |r, c| {
        let t = &frames.columns[c];
        if r < 3 { t.linear[r] } else { t.angular[r - 3] }
    });
    j.singular_values()
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
}

/// The step along `dir` from `q`: the longest (halving from
/// [`PATH_JOINT_STEP`]) within the path's spacing. A joint that would
/// leave its range is reflected back into it, and its direction reversed.
fn step_on_path(chain: &Chain, ranges: &[(f64, f64)], q: &[f64], dir: &mut [f64]) -> Vec<f64> {
    let here = chain.fk(q);
    let here_rotation = UnitQuaternion::from_rotation_matrix(&here.rotation);
    let mut h = PATH_JOINT_STEP;
    loop {
        let mut next_dir = dir.to_vec();
        let next: Vec<f64> = q
            .iter()
            .zip(ranges)
            .enumerate()
            .map(|(i, (&v, &(lo, hi)))| {
                let x = v + h * next_dir[i];
                if x > hi || x < lo {
                    next_dir[i] = -next_dir[i];
                    (if x > hi { 2.0 * hi - x } else { 2.0 * lo - x }).clamp(lo, hi)
                } else {
                    x
                }
            })
            .collect();
        let there = chain.fk(&next);
        let moved = (there.translation.vector - here.translation.vector).norm();
        let turned = rotation_error(&there, &here_rotation).norm();
        if (moved <= PATH_POSITION_STEP && turned <= PATH_ROTATION_STEP) || h < 1e-9 {
            dir.copy_from_slice(&next_dir);
            return next;
        }
        h *= 0.5;
    }
}
