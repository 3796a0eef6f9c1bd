//! What the last queries measured, kept as lower bounds of each pair's
//! distance, so the next query near them measures only the pairs that
//! may have come close. The node asks about nearly the same configuration
//! many times a tick (where the arm is, the solve's steps, the stopping
//! path) and tick after tick; a pair measured 8 cm apart cannot be 5 cm
//! apart a few millimetres of motion later, and its bounding boxes (the
//! only bound the query had before) overlap long before its solids do.
//!
//! The bound: no point of a link moves farther than its joints' travel
//! times their lever arms ([`super::Body::sweep`]). Each pair's bound is
//! kept at one reference configuration; a measurement at `q` becomes a
//! bound there by taking off how far each of the two links may be from
//! where it was at the reference, and a query at `q` takes it off again.
//! When the arm has gone far from the reference, the reference moves to
//! where it is and every bound loses the way there, so bounds age with the
//! arm's own motion rather than with how many queries it took.

use super::Body;
use super::Owner;

/// How far (m) any link may be from where it was at the reference before
/// the reference moves. A bound loses up to twice this per link between a
/// measurement and a query; each move of the reference costs the bounds
/// its own sweep. A few millimetres: about one tick of a fast arm.
const REBASE: f64 = 0.004;

/// Lower bounds of the checked pairs' distances, at a reference
/// configuration.
#[derive(Debug, Clone, Default)]
pub(super) struct Coherence {
    /// The configuration the bounds hold at; empty: none yet.
    reference: Vec<f64>,
    /// Each pair's bound at the reference (m); `-inf`: unknown.
    bounds: Vec<f64>,
    /// Each pair's two links' indices into `growth` (the last slot, always
    /// 0, for what the base frame holds still); `None` for a pair with an
    /// obstacle held by a link, which may reach farther than the link's
    /// own geometry and so move farther than its sweep: never bounded.
    links: Vec<Option<[usize; 2]>>,
    /// How far each link may be from where it was at the reference, at the
    /// configuration placed last (m); one more slot, 0.
    growth: Vec<f64>,
    travel: Vec<f64>,
    /// The smallest distance over every pair at `nearest_at`, as the last
    /// closest-pair query found it (or its cap, when nothing came within).
    nearest: Option<f64>,
    nearest_at: Vec<f64>,
    /// Some pair has an obstacle held by a link: no bound from the
    /// smallest distance either.
    held: bool,
    /// Checks settled from the smallest distance (for the tests).
    #[cfg(test)]
    settled: usize,
}

impl Coherence {
    /// Forgets every bound, for `pairs` given by what each side moves
    /// with, out of `links` links.
    pub(super) fn reset(&mut self, links: usize, pairs: impl Iterator<Item = [Moves; 2]>) {
        let slot = |m: Moves| match m {
            Moves::With(l) => Some(l),
            Moves::Still => Some(links),
            Moves::Held => None,
        };
        self.links = pairs.map(|[a, b]| Some([slot(a)?, slot(b)?])).collect();
        self.bounds = vec![f64::NEG_INFINITY; self.links.len()];
        self.growth = vec![0.0; links + 1];
        self.reference.clear();
        self.held = self.links.iter().any(Option::is_none);
        self.nearest = None;
    }

    /// Forgets what the queries measured (a query from scratch follows).
    #[cfg(test)]
    fn forget(&mut self) {
        self.bounds.fill(f64::NEG_INFINITY);
        self.nearest = None;
    }

    /// Every pair is at least `distance` apart at `axes`.
    pub(super) fn keep_nearest(&mut self, axes: &[f64], distance: f64) {
        self.nearest = Some(distance).filter(|d| !d.is_nan());
        self.nearest_at.clear();
        self.nearest_at.extend_from_slice(axes);
    }

    /// True when, from the smallest distance kept alone, every pair is at
    /// least `clearance` apart at `axes` plus, with `sweep`, how far each
    /// of its links may still move (`sweep[link]`): the question of the
    /// guard's braking check, asked where the arm was just measured. A
    /// pair closes by at most its two links' sweeps from there, so the
    /// two largest sweeps (each with its link's own allowance) bound them
    /// all. False when it cannot tell.
    pub(super) fn settles(
        &mut self,
        body: &Body,
        axes: &[f64],
        clearance: f64,
        sweep: Option<&[f64]>,
    ) -> bool {
        let Some(d0) = self.nearest.filter(|_| !self.held) else {
            return false;
        };
        // The room the sweeps may take, checked as they add up (most
        // configurations far from the last measured fail at once).
        let room = d0 - clearance;
        if room.is_nan() || room < 0.0 {
            return false;
        }
        if !travel(body, axes, &self.nearest_at, &mut self.travel) {
            return false;
        }
        let (mut first, mut second) = (0.0f64, 0.0f64);
        for l in 0..self.growth.len() - 1 {
            let s = body.sweep(l, &self.travel) + sweep.map_or(0.0, |s| s[l]);
            if s.is_nan() || s > room {
                return false;
            }
            if s > first {
                second = first;
                first = s;
            } else if s > second {
                second = s;
            }
        }
        let settled = first + second <= room;
        #[cfg(test)]
        {
            self.settled += usize::from(settled);
        }
        settled
    }

    /// The world is placed at `axes` (missing axes at rest): the links'
    /// growth from the reference, which moves here when that is large.
    pub(super) fn moved(&mut self, body: &Body, axes: &[f64]) {
        let finite = travel(body, axes, &self.reference, &mut self.travel);
        let links = self.growth.len() - 1;
        if self.reference.is_empty() || !finite {
            // Nothing to measure from, or a NaN joint: every bound is
            // forgotten, and a configuration that is not finite is no
            // reference.
            self.bounds.fill(f64::NEG_INFINITY);
            self.growth.fill(0.0);
            self.reference.clear();
            self.nearest = None;
            if axes.iter().all(|a| a.is_finite()) {
                place_at(body, axes, self.travel.len(), &mut self.reference);
            }
            return;
        }
        let mut largest = 0.0f64;
        for l in 0..links {
            self.growth[l] = body.sweep(l, &self.travel);
            largest = largest.max(self.growth[l]);
        }
        if largest > REBASE {
            for (b, links) in self.bounds.iter_mut().zip(&self.links) {
                if let Some([x, y]) = *links {
                    *b -= self.growth[x] + self.growth[y];
                }
            }
            self.growth.fill(0.0);
            place_at(body, axes, self.travel.len(), &mut self.reference);
        }
    }

    /// A lower bound of pair `k`'s distance where the world was placed
    /// last; `-inf` when nothing is known.
    pub(super) fn bound(&self, k: usize) -> f64 {
        match self.links[k] {
            Some([x, y]) if !self.reference.is_empty() => {
                self.bounds[k] - self.growth[x] - self.growth[y]
            }
            _ => f64::NEG_INFINITY,
        }
    }

    /// Pair `k` is at least `lower` apart where the world was placed last.
    pub(super) fn learn(&mut self, k: usize, lower: f64) {
        let Some([x, y]) = self.links[k] else {
            return;
        };
        if self.reference.is_empty() || lower.is_nan() {
            return;
        }
        let at_reference = lower - self.growth[x] - self.growth[y];
        self.bounds[k] = self.bounds[k].max(at_reference);
    }
}

/// Axis `a` of `v`, at rest where `v` has none (as [`Body::place`]
/// puts missing axes).
fn axis(body: &Body, v: &[f64], a: usize) -> f64 {
    v.get(a).or(body.rest.get(a)).copied().unwrap_or(0.0)
}

/// Each axis's travel from `from` to `axes` into `out`; false when one is
/// not finite (a NaN joint, or nothing to measure from at infinity).
fn travel(body: &Body, axes: &[f64], from: &[f64], out: &mut Vec<f64>) -> bool {
    let n = axes.len().max(from.len());
    out.clear();
    out.extend((0..n).map(|a| (axis(body, axes, a) - axis(body, from, a)).abs()));
    out.iter().all(|t| t.is_finite())
}

/// `axes` with the first `n` axes filled in (at rest where missing), into
/// `out`.
fn place_at(body: &Body, axes: &[f64], n: usize, out: &mut Vec<f64>) {
    out.clear();
    out.extend((0..n).map(|a| axis(body, axes, a)));
}

/// What one side of a pair moves with.
#[derive(Debug, Clone, Copy)]
pub(super) enum Moves {
    /// A link's own geometry.
    With(usize),
    /// Nothing: the floor, an obstacle fixed in the base frame.
    Still,
    /// An obstacle held by a link.
    Held,
}

impl Moves {
    pub(super) fn of(owner: Owner, held: impl Fn(usize) -> bool) -> Moves {
        match owner {
            Owner::Link(l) => Moves::With(l),
            Owner::Obstacle(k) if held(k) => Moves::Held,
            Owner::Obstacle(_) | Owner::Floor => Moves::Still,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::collision::{self, CollisionOptions, Workspace};
    use crate::ik::Rng;
    use crate::model::Chain;

    /// A plate in front of the project arm.
    const PLATE: &str = "obstacles:\n  - name: plate\n    shape: box\n    size: [0.01, 0.3, 0.3]\n    position: [0.2, 0.0, 0.15]\n";
    /// And a block the hand holds, which reaches past the hand's own
    /// geometry (its pairs are never bounded).
    const HELD: &str = "  - name: held\n    shape: box\n    size: [0.02, 0.02, 0.12]\n    position: [0.0, 0.0, 0.08]\n    frame: hand\n";

    /// Queries answered partly from the bounds the queries before left
    /// are the queries from scratch: the same closest pair and distance,
    /// the same verdicts, along a random walk that comes close to the
    /// plate, to the floor and to itself, with jumps and a NaN on the way.
    /// And the bounds do settle pairs and checks (so the test measures
    /// something): a bound that forgot how far the links moved fails it.
    #[test]
    fn queries_from_kept_bounds_are_the_queries_from_scratch() {
        // 1749 pairs and 0 checks settled when written (14 pairs, 3000
        // steps; no check with the held block), 1629 and 8119 without it.
        let (pairs, _) = walk(&format!("{PLATE}{HELD}"));
        let (plate, checks) = walk(PLATE);
        assert!(
            pairs > 500 && plate > 1000 && checks > 4000,
            "{pairs} {plate} {checks}"
        );
    }

    /// The walk in `scene`: the pairs settled by their bounds and the
    /// checks settled by the smallest distance.
    fn walk(scene: &str) -> (usize, usize) {
        let urdf = concat!(env!("CARGO_MANIFEST_DIR"), "/urdf/arm.urdf");
        let chain = Chain::from_urdf_file(urdf, None, None).unwrap();
        let mut w = collision::build(&chain, &CollisionOptions::default()).unwrap();
        w.set_workspace(&Workspace::parse(scene).unwrap()).unwrap();
        let mut fresh = w.clone();
        let n = w.body.rest.len();
        let mut rng = Rng::new(11);
        let mut q: Vec<f64> = vec![0.0; n];
        let (mut settled, mut settled_checks) = (0, 0);
        for step in 0..3000 {
            if step % 400 == 399 {
                q.iter_mut().for_each(|v| *v = rng.range(-1.5, 1.5));
            } else {
                q.iter_mut().for_each(|v| *v += rng.range(-0.004, 0.004));
            }
            if step == 1000 {
                let mut nan = q.clone();
                nan[2] = f64::NAN;
                w.nearest(&nan);
            }
            let near = w.nearest(&q);
            settled += (0..w.pairs.len())
                .filter(|&k| w.coherence.bound(k) >= near.distance)
                .count();
            fresh.coherence.forget();
            let truth = fresh.nearest(&q);
            assert_eq!(near, truth, "step {step} at {q:?}");
            // The guard's braking check where the arm was just measured,
            // with each link's own allowance, and the solver's check a
            // step away.
            let sweep: Vec<f64> = (0..w.body.links.len()).map(|l| 0.002 * l as f64).collect();
            let next: Vec<f64> = q.iter().map(|v| v + rng.range(-0.004, 0.004)).collect();
            for (at, clearance, sweep) in [
                (&q, 0.0, None),
                (&q, 0.01, Some(&sweep[..])),
                (&next, 0.01, None),
                (&next, 0.03, Some(&sweep[..])),
            ] {
                fresh.coherence.forget();
                let before = w.coherence.settled;
                let said = w.clear_of(at, clearance, sweep);
                settled_checks += w.coherence.settled - before;
                assert_eq!(
                    said,
                    fresh.clear_of(at, clearance, sweep),
                    "step {step} at {at:?}, clearance {clearance}, {sweep:?}"
                );
            }
        }
        (settled, settled_checks)
    }
}
