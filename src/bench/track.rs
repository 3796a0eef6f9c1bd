//! Track sets: one long, smooth path sampled in time (e.g. 60 s at 20 Hz),
//! as a program streaming targets to the node publishes them. Replayed
//! through the node core (`node::track`), they show what the short path
//! sets cannot: whether a redundant arm's answers drift along its
//! self-motion until a joint limit forces a reconfiguration.

use super::generate::{SINGULAR_FRACTION, ranges, reach, sample, smallest_singular_value};
use super::{PathSpan, TargetSet};
use crate::ik::Rng;
use crate::model::Chain;
use std::f64::consts::TAU;

/// Sines summed per joint: enough that no two joints move in step.
const WAVES: usize = 3;
/// Frequencies of the sines (Hz): slow, a joint takes 25 s or more per
/// swing, as a person guiding a tool would move it.
const SLOWEST_HZ: f64 = 0.04;
const FASTEST_HZ: f64 = 0.08;
/// Each joint swings by at most this share of its range either side of
/// its centre, and the centre is drawn at least `CENTRE_INSET` of the
/// range from each limit: the path keeps 10 % of every range from the
/// limits.
const SWING: f64 = 0.3;
const CENTRE_INSET: f64 = 0.4;
/// ... and by at most this (rad or m) either side.
const MAX_SWING: f64 = 1.2;
/// Paths drawn before one that keeps away from singular poses is taken.
const DRAWS: usize = 200;

/// One joint's motion: a centre and sines around it.
struct JointWave {
    centre: f64,
    /// (amplitude, frequency Hz, phase rad).
    waves: [(f64, f64, f64); WAVES],
}

impl JointWave {
    fn draw(range: (f64, f64), rng: &mut Rng) -> JointWave {
        let (lo, hi) = range;
        let r = hi - lo;
        let centre = rng.range(lo + CENTRE_INSET * r, hi - CENTRE_INSET * r);
        let swing = (SWING * r).min(MAX_SWING);
        let mut waves = [(0.0, 0.0, 0.0); WAVES];
        let mut total = 0.0;
        for w in &mut waves {
            *w = (
                rng.range(0.2, 1.0),
                rng.range(SLOWEST_HZ, FASTEST_HZ),
                rng.range(0.0, TAU),
            );
            total += w.0;
        }
        for w in &mut waves {
            w.0 *= swing / total;
        }
        JointWave { centre, waves }
    }

    fn at(&self, t: f64) -> f64 {
        self.centre
            + self
                .waves
                .iter()
                .map(|(a, f, p)| a * (TAU * f * t + p).sin())
                .sum::<f64>()
    }
}

impl TargetSet {
    /// A track set: `paths` paths of `seconds` each sampled at `rate_hz`, the tip
    /// pose of a smooth joint-space motion (each joint a sum of slow sines
    /// around a random centre, kept 10 % of its range from either limit),
    /// redrawn until it keeps away from singular poses (as
    /// [`TargetSet::generate_paths`] does), so one continuous answer
    /// exists for the whole path: the generating configurations. The same
    /// arguments always give the same set.
    pub fn generate_track(
        chain: &Chain,
        urdf: &str,
        (paths, seconds, rate_hz): (usize, f64, f64),
        rng_seed: u64,
        position_only: bool,
    ) -> TargetSet {
        let mut rng = Rng::new(rng_seed);
        let n = (seconds * rate_hz).round().max(1.0) as usize;
        let mut spans = Vec::with_capacity(paths);
        let mut samples = Vec::with_capacity(paths * n);
        for _ in 0..paths {
            let path = draw_track(chain, n, rate_hz, position_only, &mut rng);
            spans.push(PathSpan {
                start: path[0].clone(),
                len: n,
            });
            samples.extend(path.into_iter().map(|q| sample(chain, q)));
        }
        let mut set = TargetSet::new(chain, urdf, rng_seed, position_only, spans, samples);
        set.rate_hz = Some(rate_hz);
        set
    }
}

/// The configurations of one track of `n` samples at `rate_hz`.
fn draw_track(
    chain: &Chain,
    n: usize,
    rate_hz: f64,
    position_only: bool,
    rng: &mut Rng,
) -> Vec<Vec<f64>> {
    let ranges = ranges(chain);
    let floor = SINGULAR_FRACTION * reach(chain);
    // When no draw keeps the floor (a minute-long path of an arm with a
    // stretched-elbow singularity inside its range often cannot), the one
    // that keeps farthest from singular poses: near one two answer branches
    // meet, and which one the generating path went on is not in its poses.
    let mut best = (f64::NEG_INFINITY, Vec::new());
    for _ in 0..DRAWS {
        let joints: Vec<JointWave> = ranges.iter().map(|&r| JointWave::draw(r, rng)).collect();
        let path: Vec<Vec<f64>> = (0..n)
            .map(|k| {
                let t = k as f64 / rate_hz;
                joints.iter().map(|j| j.at(t)).collect::<Vec<f64>>()
            })
            .collect();
        let closest = path
            .iter()
            .map(|q| smallest_singular_value(chain, q, position_only))
            .fold(f64::INFINITY, f64::min);
        if closest > best.0 {
            best = (closest, path);
        }
        if best.0 >= floor {
            break;
        }
    }
    best.1
}
