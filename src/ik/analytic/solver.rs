//! The analytic solver: picks among the closed-form candidates, lets the
//! limits decide the wrist pitch when the target leaves it free, and
//! polishes the answer on the real chain.

use super::planar::{Arcs, Branch, Candidate, Plan, fit_winding};
use super::polish::Secondary;
use super::structure::{HipKnee, rotate};
use super::{AnalyticOptions, Bend};
use crate::ik::bounds::Bounds;
use crate::ik::geometry::angle_about_axis;
use crate::ik::{Common, IkError, Outcome, Reason, Solution, Target, finish};
use crate::model::{Chain, Frames, wrap_angle};
use nalgebra::UnitQuaternion;
use std::f64::consts::{FRAC_PI_2, PI, TAU};

#[derive(Debug, Clone)]
pub struct AnalyticSolver {
    pub(super) chain: Chain,
    pub(super) options: AnalyticOptions,
    pub(super) common: Common,
    pub(super) geometry: HipKnee,
    /// Bounds after the modes, before a seed locks any joint.
    pub(super) base_bounds: Bounds,
    pub(super) bounds: Bounds,
    pub(super) frames: Frames,
}

/// Margin (rad) kept from the other planar joints' limits when the limits
/// decide the pitch.
const LIMIT_MARGIN: f64 = 1e-6;

/// First and largest steps (rad) of the walk along the reachable pitches
/// when the limits decide the pitch: small first steps find the nearby limit
/// a warm seed stopped at; the largest bounds what a narrow window of
/// in-limit pitches can hide.
const WALK_FIRST_STEP: f64 = 1e-3;
const WALK_MAX_STEP: f64 = 0.05;

impl AnalyticSolver {
    pub fn new(chain: &Chain, options: AnalyticOptions, common: Common) -> Result<Self, IkError> {
        let geometry = HipKnee::measure(chain)?;
        if let Some(p) = options.pitch
            && !p.is_finite()
        {
            return Err(IkError::BadOption {
                solver: "analytic",
                option: "pitch",
                why: format!("{p} is not finite"),
            });
        }
        if let Bend::Pole(p) = options.bend
            && !p.iter().all(|v| v.is_finite())
        {
            return Err(IkError::BadOption {
                solver: "analytic",
                option: "bend",
                why: format!("pole {p:?} is not finite"),
            });
        }
        let base_bounds = Bounds::new(chain, &common.modes);
        Ok(AnalyticSolver {
            chain: chain.clone(),
            bounds: base_bounds.clone(),
            base_bounds,
            frames: Frames::new(chain),
            geometry,
            options,
            common,
        })
    }

    pub fn chain(&self) -> &Chain {
        &self.chain
    }

    /// The measured geometry (what [`HipKnee::measure`] returns).
    pub fn geometry(&self) -> &HipKnee {
        &self.geometry
    }

    /// [`approach_pitch`](super::approach_pitch) of configuration `q` on this solver's chain.
    pub fn approach_pitch(&self, q: &[f64]) -> f64 {
        self.geometry.approach_pitch(&self.chain, q)
    }

    pub fn solve(&mut self, target: &Target, seed: &[f64]) -> Solution {
        let n = self.geometry.dof;
        self.bounds.lower.copy_from_slice(&self.base_bounds.lower);
        self.bounds.upper.copy_from_slice(&self.base_bounds.upper);
        let mut start = [0.0; 5];
        self.bounds.lock_at(&self.chain, seed, &mut start[..n]);
        let orientation = (target.orientation.full()).filter(|_| target.wants_orientation());
        let (mut best, pitch) = self.closed_form(target, orientation, &start);

        // On an ideal chain a clean closed-form answer is exact already.
        // Anything else is polished, even a clamped or out-of-limits
        // answer: the best iterate is kept, so it never gets worse.
        let g = &self.geometry;
        let exact = g.deviation < 1e-12
            && !best.clamped
            && best.violation == 0.0
            && best.misaligned < 1e-12;
        let mut iterations = 1;
        if !exact {
            let secondary = match (orientation, pitch) {
                (Some(o), _) if n == 5 => Secondary::Orientation(o),
                (_, Some(p)) => Secondary::Pitch(p),
                (Some(o), None) if n == 4 => {
                    Secondary::Pitch(g.pitch_of_direction(&(o * g.approach_tool), best.q[0]))
                }
                _ => Secondary::None,
            };
            iterations += self.polish(target, secondary, &mut best.q);
        }
        finish(
            &self.chain,
            &self.bounds,
            target,
            &self.common.tolerance,
            &start[..n],
            Outcome {
                q: best.q[..n].to_vec(),
                iterations,
                why_not: Reason::OutOfReach,
            },
        )
    }

    /// The best closed-form candidate on the ideal model, and the approach
    /// pitch it was built for (`None` when the orientation decides it, or
    /// for three joints).
    fn closed_form(
        &self,
        target: &Target,
        orientation: Option<UnitQuaternion<f64>>,
        start: &[f64; 5],
    ) -> (Candidate, Option<f64>) {
        let n = self.geometry.dof;
        let g = &self.geometry;
        let pitch = match (orientation, self.options.pitch) {
            _ if n == 3 => None,
            (Some(_), _) => None,
            (None, Some(p)) => Some(p),
            (None, None) => Some(g.pitch_of(&self.chain.fk(&start[..n]), start[0])),
        };
        let approach = orientation.map(|o| o * g.approach_tool);
        let plan = Plan {
            target: target.position,
            seed: start,
            q5: start[4],
            pole: match self.options.bend {
                Bend::Pole(p) => Some(p),
                _ => None,
            },
            approach,
            near: None,
        };
        let sigma_of = move |q1: f64| match (pitch, approach) {
            (Some(p), _) => g.pitch0 - p,
            (None, Some(app)) => g.pitch0 - g.pitch_of_direction(&app, q1),
            (None, None) => 0.0,
        };
        match orientation.filter(|_| n == 5) {
            // Position only, no pitch asked: the solver picks the pitch.
            None if n >= 4 && orientation.is_none() && self.options.pitch.is_none() => {
                let seed_pitch = pitch.expect("the seed's pitch");
                let best = self.free_pitch(&plan, g.pitch0 - seed_pitch, start);
                (best, Some(g.pitch0 - best.sigma))
            }
            None => (
                self.choose(&mut g.candidates(&plan, sigma_of), start),
                pitch,
            ),
            Some(o) => (self.oriented(plan, o, sigma_of), pitch),
        }
    }

    /// Five joints and an orientation: the asked approach direction must
    /// lie in the limb plane, which fixes joint 1 up to a half turn; with it
    /// the roll follows from the orientation. Joint 1 is then solved again
    /// from the position (exact when the pose is reachable, "position
    /// first" when it is not).
    fn oriented(
        &self,
        mut plan: Plan,
        o: UnitQuaternion<f64>,
        sigma_of: impl Fn(f64) -> f64 + Copy,
    ) -> Candidate {
        let g = &self.geometry;
        let start = plan.seed;
        let app = plan.approach.expect("orientation gives an approach");
        let (x, y) = (app.dot(&g.a), app.dot(&g.u.cross(&g.a)));
        let hypotheses = if x.hypot(y) > 1e-9 {
            let phi = y.atan2(x);
            [phi + FRAC_PI_2, phi - FRAC_PI_2]
        } else {
            // Approach along joint 1's axis: any yaw is aligned, take the
            // position's.
            let first = self.choose(&mut g.candidates(&plan, sigma_of), start);
            [first.q[0]; 2]
        };
        let mut all = [Candidate::default(); 8];
        for (h, q1) in hypotheses.into_iter().enumerate() {
            let side = rotate(&g.u, q1, &g.a);
            let turn = angle_about_axis(&app, &side, &(o * g.side_tool)).unwrap_or(0.0);
            let (lo, hi) = (self.bounds.lower[4], self.bounds.upper[4]);
            plan.q5 = fit_winding(g.s5 * turn, start[4], lo, hi).0;
            plan.near = Some(q1);
            all[4 * h..4 * h + 4].copy_from_slice(&g.candidates(&plan, sigma_of));
        }
        self.choose(&mut all, start)
    }

    /// Position-only target on an arm with a wrist pitch and no pitch asked:
    /// per joint-1 branch and bend, the wrist angle nearest the seed's for
    /// which the wrist centre is reachable with the knee inside its limits
    /// (closed form, [`HipKnee::arcs`]). When joint limits rule out all of
    /// those (or the ones left are farther from the seed in joint space),
    /// the reachable angles are walked for the one nearest the seed's that
    /// keeps every joint in its limits ([`Self::walk`]).
    fn free_pitch(&self, plan: &Plan, seed_sigma: f64, seed: &[f64; 5]) -> Candidate {
        let g = &self.geometry;
        let (branches, count) = g.branches(plan);
        let mut all = [Candidate::default(); 4];
        let mut arcs = [Arcs::default(); 4];
        let knees = [self.knee_range(1.0), self.knee_range(-1.0)];
        for (b, br) in branches.iter().enumerate().take(count) {
            for (k, s) in [1.0, -1.0].into_iter().enumerate() {
                let i = 2 * b + k;
                // Usually the knee's limits are symmetric: same arcs.
                arcs[i] = if k == 1 && knees[1] == knees[0] {
                    arcs[i - 1]
                } else {
                    g.arcs(br, knees[k])
                };
                all[i] = g.solve_planar(br, arcs[i].nearest(seed_sigma), s, plan);
            }
        }
        let m = 2 * count;
        // The joint-space distance to the seed of each candidate once
        // clamped into the bounds, and whether it fits as it is.
        let mut fitted = all;
        let _ = self.choose(&mut fitted[..m], seed);
        let fits = |c: &Candidate| c.violation == 0.0 && self.bend_ok(c);
        let nearest_fit = fitted[..m]
            .iter()
            .filter(|c| fits(c))
            .map(|c| c.distance)
            .fold(f64::INFINITY, f64::min);
        // Walk the others that could beat it: e.g. a warm seed whose own
        // bend just hit a limit stays in that bend, the pitch giving way,
        // rather than flipping the elbow.
        for i in 0..m {
            if !fits(&fitted[i]) && fitted[i].distance < nearest_fit {
                let s = if i % 2 == 0 { 1.0 } else { -1.0 };
                if let Some(c) = self.walk(&branches[i / 2], s, &arcs[i], seed_sigma, plan, seed) {
                    all[i] = c;
                }
            }
        }
        self.choose(&mut all[..m], seed)
    }

    /// The knee angles (from the straight limb, in `[0, pi]`) that keep
    /// joint 3 inside its bounds for bend `s`; all of them when no knee
    /// angle does (the candidate is then out of limits anyway).
    fn knee_range(&self, s: f64) -> (f64, f64) {
        let g = &self.geometry;
        let (lo, hi) = (self.bounds.lower[2], self.bounds.upper[2]);
        if hi - lo >= TAU || !(hi - lo).is_finite() {
            return (0.0, PI);
        }
        // q3 = s3 (-beta + s gamma), up to whole turns.
        let k = g.s3 * s;
        let mut best = (f64::NEG_INFINITY, 0.0, PI);
        for turn in [-TAU, 0.0, TAU] {
            let (x, y) = (
                k * (lo + turn + g.s3 * g.beta),
                k * (hi + turn + g.s3 * g.beta),
            );
            let (a, b) = (x.min(y).max(0.0), x.max(y).min(PI));
            if b - a > best.0 {
                best = (b - a, a, b);
            }
        }
        if best.0 < 0.0 {
            (0.0, PI)
        } else {
            (best.1, best.2)
        }
    }

    /// Summed violation (rad) of joints `range` of `q`, allowing any whole
    /// turn, against the bounds narrowed by `margin` (when they are wider).
    fn violation(
        &self,
        q: &[f64; 5],
        seed: &[f64; 5],
        margin: f64,
        range: std::ops::Range<usize>,
    ) -> f64 {
        range
            .map(|i| {
                let (mut lo, mut hi) = (self.bounds.lower[i], self.bounds.upper[i]);
                if hi - lo > 2.0 * margin {
                    lo += margin;
                    hi -= margin;
                }
                fit_winding(q[i], seed[i], lo, hi).1
            })
            .sum()
    }

    fn bend_ok(&self, c: &Candidate) -> bool {
        match self.options.bend {
            Bend::Closest => true,
            Bend::Positive => c.bend >= 0.0,
            Bend::Negative => c.bend <= 0.0,
            Bend::Pole(_) => c.pole_side,
        }
    }

    /// Walks the reachable wrist angles of one branch and bend outward from
    /// the seed's angle (or from the arc ends nearest it), in steps that
    /// grow from [`WALK_FIRST_STEP`] to [`WALK_MAX_STEP`], for the angle
    /// nearest `seed_sigma` whose planar joints lie inside their bounds (by
    /// [`LIMIT_MARGIN`]); the first such angle of each ray is bisected back
    /// towards the last one out of bounds. A warm seed finds the limit that
    /// stopped it within a few steps; a far seed within a few dozen.
    /// `None` when joint 1 or the roll is out of bounds (no wrist angle
    /// helps), the arcs are a single angle, or no angle fits.
    fn walk(
        &self,
        br: &Branch,
        s: f64,
        arcs: &Arcs,
        seed_sigma: f64,
        plan: &Plan,
        seed: &[f64; 5],
    ) -> Option<Candidate> {
        let g = &self.geometry;
        let n = g.dof;
        let (a, b) = (arcs.alpha(), arcs.beta());
        if !arcs.reachable || b - a < 1e-9 {
            return None;
        }
        let fits = |sigma: f64| {
            let c = g.solve_planar(br, sigma, s, plan);
            self.violation(&c.q, seed, LIMIT_MARGIN, 1..4.min(n)) == 0.0
        };
        let probe = g.solve_planar(br, arcs.psi + a, s, plan);
        let mut fixed = self.violation(&probe.q, seed, 0.0, 0..1);
        if n == 5 {
            fixed += self.violation(&probe.q, seed, 0.0, 4..5);
        }
        if fixed > 0.0 {
            return None;
        }
        let ds = wrap_angle(seed_sigma - arcs.psi);
        let dist = |offset: f64| wrap_angle(offset - ds).abs();
        let mut best: Option<(f64, f64)> = None; // (distance, offset)
        for (start, dir, length) in rays(a, b, ds) {
            let (mut last, mut travelled, mut step) = (start, 0.0, 0.0_f64);
            let mut previous = dist(start);
            loop {
                let offset = start + dir * travelled;
                let d = dist(offset);
                if best.is_some_and(|(bd, _)| d >= bd) || (travelled > 0.0 && d < previous) {
                    break; // no nearer than the best, or coming back (another ray's half)
                }
                previous = d;
                if fits(arcs.psi + offset) {
                    let inside = match travelled > 0.0 {
                        true => bisect(|o| fits(arcs.psi + o), offset, last),
                        false => offset,
                    };
                    best = Some((dist(inside), inside));
                    break;
                }
                if travelled >= length {
                    break;
                }
                last = offset;
                step = (2.0 * step).clamp(WALK_FIRST_STEP, WALK_MAX_STEP);
                travelled = (travelled + step).min(length);
            }
        }
        best.map(|(_, offset)| g.solve_planar(br, arcs.psi + offset, s, plan))
    }

    /// Fits each candidate into the bounds and picks one: inside the bounds
    /// first (limits are constraints), then reaching the target in the ideal
    /// model (position, then the approach direction), then the requested
    /// bend (a preference), then closest to the seed.
    fn choose(&self, candidates: &mut [Candidate], seed: &[f64; 5]) -> Candidate {
        let n = self.geometry.dof;
        for c in candidates.iter_mut() {
            for (i, &s) in seed.iter().enumerate().take(n) {
                let (lo, hi) = (self.bounds.lower[i], self.bounds.upper[i]);
                let (v, viol) = fit_winding(c.q[i], s, lo, hi);
                c.q[i] = v.clamp(lo, hi);
                c.violation += viol;
                c.distance += (c.q[i] - s).powi(2);
            }
        }
        let key = |c: &Candidate| {
            let feasible = c.violation <= 1e-12;
            (
                !feasible,
                c.clamped,
                // Model error (a few micro-radians) is not a preference.
                if c.misaligned < 1e-7 {
                    0.0
                } else {
                    c.misaligned
                },
                !self.bend_ok(c),
                if feasible { c.distance } else { c.violation },
            )
        };
        *candidates
            .iter()
            .min_by(|x, y| {
                key(x)
                    .partial_cmp(&key(y))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .expect("at least one candidate")
    }
}

/// The rays the wrist-angle walk follows, as (start offset from psi,
/// direction, length) on the arcs `[a, b]` and `[-b, -a]`: from the seed's
/// offset `ds` outward when it lies on an arc, else from both ends of each
/// arc inward.
fn rays(a: f64, b: f64, ds: f64) -> [(f64, f64, f64); 4] {
    let mut rays = [(0.0, 0.0, 0.0); 4];
    for (k, side) in [1.0, -1.0].into_iter().enumerate() {
        let x = side * ds; // the seed's offset mirrored onto this arc
        if (a..=b).contains(&x) {
            rays[2 * k] = (side * x, side, b - x);
            rays[2 * k + 1] = (side * x, -side, x - a);
        } else {
            rays[2 * k] = (side * a, side, b - a);
            rays[2 * k + 1] = (side * b, -side, b - a);
        }
    }
    rays
}

/// The boundary between `inside` (where `fits`) and `outside`, to 1e-10,
/// from the inside.
fn bisect(fits: impl Fn(f64) -> bool, mut inside: f64, mut outside: f64) -> f64 {
    while (inside - outside).abs() > 1e-10 {
        let mid = 0.5 * (inside + outside);
        if fits(mid) {
            inside = mid;
        } else {
            outside = mid;
        }
    }
    inside
}
