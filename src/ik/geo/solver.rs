//! The geo solver: every closed-form branch of the target, wound into the
//! limits, the one the mode asks for, polished on the real chain when the
//! URDF is not exactly ideal.

use super::branches::{Branch, Branches};
use super::polish::polish;
use super::structure::{Family, GeoStructure};
use super::{GeoOptions, Pick, parallel, spherical};
use crate::ik::bounds::{Bounds, fit_winding};
use crate::ik::{Common, IkError, Outcome, Reason, Solution, Target, finish, finish_with};
use crate::model::{Chain, Frames};
use nalgebra::{Rotation3, UnitQuaternion};

#[derive(Debug, Clone)]
pub struct GeoSolver {
    chain: Chain,
    structure: GeoStructure,
    options: GeoOptions,
    common: Common,
    /// Bounds after the modes, before a seed locks any joint.
    base_bounds: Bounds,
    bounds: Bounds,
    frames: Frames,
    branches: Branches,
    /// Per branch: how far outside the bounds (rad, summed) once wound,
    /// and the squared distance to the seed.
    fit: [(f64, f64); 8],
}

/// Two answers closer than this (rad, every joint) are one solution (at a
/// singular pose two branches meet).
const SAME_SOLUTION: f64 = 1e-6;

impl GeoSolver {
    pub fn new(chain: &Chain, options: GeoOptions, common: Common) -> Result<Self, IkError> {
        let structure = GeoStructure::measure(chain)?;
        let base_bounds = Bounds::new(chain, &common.modes);
        Ok(GeoSolver {
            chain: chain.clone(),
            structure,
            options,
            common,
            bounds: base_bounds.clone(),
            base_bounds,
            frames: Frames::new(chain),
            branches: Branches::default(),
            fit: [(0.0, 0.0); 8],
        })
    }

    pub fn chain(&self) -> &Chain {
        &self.chain
    }

    /// The family and model read from the chain.
    pub fn structure(&self) -> &GeoStructure {
        &self.structure
    }

    /// The answer the mode picks ([`Pick`]); `BestEffort(OutOfReach)` when
    /// no branch reaches the target inside the limits.
    pub fn solve(&mut self, target: &Target, seed: &[f64]) -> Solution {
        let (start, orientation) = self.branch_out(target, seed);
        let key = |i: usize, fit: &[(f64, f64); 8], exact: bool| {
            let (violation, distance) = fit[i];
            (violation > 0.0, !exact, violation, distance)
        };
        let all = self.branches.as_slice();
        let chosen = match self.options.pick {
            Pick::First => (0..all.len()).find(|&i| all[i].exact && self.fit[i].0 == 0.0),
            Pick::Closest => None,
        };
        let chosen = chosen.or_else(|| {
            (0..all.len()).min_by(|&a, &b| {
                key(a, &self.fit, all[a].exact)
                    .partial_cmp(&key(b, &self.fit, all[b].exact))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
        });
        let branch = match chosen {
            Some(i) => all[i],
            None => Branch {
                q: start,
                trig: start.map(f64::sin_cos),
                exact: false,
            },
        };
        self.finish_branch(target, &orientation, &start, branch)
    }

    /// Every solution inside the limits that reaches the target (within
    /// the tolerance), nearest the seed first; each joint with more than a
    /// turn of range is wound to the value nearest the seed (the other
    /// windings are the same pose). Empty when the target is out of reach.
    pub fn solve_all(&mut self, target: &Target, seed: &[f64]) -> Vec<Solution> {
        let (start, orientation) = self.branch_out(target, seed);
        // The branches within the limits, nearest the seed first (at most
        // eight: sorted in place).
        let mut order = [0usize; 8];
        let mut n = 0;
        for (i, b) in self.branches.as_slice().iter().enumerate() {
            if b.exact && self.fit[i].0 == 0.0 {
                order[n] = i;
                n += 1;
            }
        }
        let order = &mut order[..n];
        order.sort_by(|&a, &b| self.fit[a].1.total_cmp(&self.fit[b].1));
        let mut out: Vec<Solution> = Vec::with_capacity(n);
        for &i in order.iter() {
            let branch = self.branches.as_slice()[i];
            let mut q = branch.q;
            // As `finish` will: a branch that lands on one already listed
            // (two branches meeting at a singular pose) is not checked again.
            self.bounds.normalize(&mut q, &start);
            let duplicate = out.iter().any(|o| {
                o.q.iter()
                    .zip(&q)
                    .all(|(a, b)| (a - b).abs() < SAME_SOLUTION)
            });
            if duplicate {
                continue;
            }
            let s = self.finish_branch(target, &orientation, &start, branch);
            if s.status.is_converged() {
                out.push(s);
            }
        }
        out
    }

    /// Brings the seed into range, computes every branch of the target on
    /// the model and winds each into the bounds near the seed. Returns the
    /// start (the seed in range) and the orientation solved for: the
    /// target's, or the seed's own for a position-only target.
    fn branch_out(&mut self, target: &Target, seed: &[f64]) -> ([f64; 6], UnitQuaternion<f64>) {
        self.bounds.lower.copy_from_slice(&self.base_bounds.lower);
        self.bounds.upper.copy_from_slice(&self.base_bounds.upper);
        let mut start = [0.0; 6];
        self.bounds.lock_at(&self.chain, seed, &mut start);
        let orientation = match target
            .orientation
            .full()
            .filter(|_| target.wants_orientation())
        {
            Some(o) => o,
            None => UnitQuaternion::from_rotation_matrix(&self.chain.fk(&start).rotation),
        };
        let rt = *Rotation3::from(orientation).matrix();
        self.branches.clear();
        let s = &self.structure;
        let goal = s.goal(&target.position, &rt);
        match s.family {
            Family::ThreeParallel => parallel::solve(s, &goal, &start, &mut self.branches),
            Family::SphericalIntersecting | Family::SphericalParallel => {
                spherical::solve(s, &goal, &start, &mut self.branches)
            }
        }
        for (b, fit) in self.branches.as_mut_slice().iter_mut().zip(&mut self.fit) {
            *fit = (0.0, 0.0);
            for (i, &s) in start.iter().enumerate() {
                let (lo, hi) = (self.bounds.lower[i], self.bounds.upper[i]);
                let (v, violation) = fit_winding(b.q[i], s, lo, hi);
                // Rounding may leave a limit by an ulp: not a violation.
                let violation = if violation < 1e-12 { 0.0 } else { violation };
                b.q[i] = v.clamp(lo, hi);
                // Whole turns keep the sine and cosine; a clamp does not.
                if b.q[i] != v {
                    b.trig[i] = b.q[i].sin_cos();
                }
                fit.0 += violation;
                fit.1 += (b.q[i] - s).powi(2);
            }
        }
        (start, orientation)
    }

    /// Builds the solution of the branch, checked on the real chain (from
    /// the branch's sines and cosines); when the real chain misses the
    /// target by more than the tolerance (a URDF only near the ideal
    /// model), a few Newton steps first. On an ideal chain that costs one
    /// FK without `sin_cos`.
    fn finish_branch(
        &mut self,
        target: &Target,
        orientation: &UnitQuaternion<f64>,
        start: &[f64; 6],
        branch: Branch,
    ) -> Solution {
        let tol = self.common.tolerance;
        let outcome = |q: &[f64; 6], iterations: u32| Outcome {
            q: q.to_vec(),
            iterations,
            why_not: Reason::OutOfReach,
        };
        let chain = &self.chain;
        let first = finish_with(
            &self.bounds,
            target,
            &tol,
            start,
            outcome(&branch.q, 1),
            |q| chain.fk_trig(q, &branch.trig),
        );
        if first.status.is_converged() {
            return first;
        }
        let mut q = branch.q;
        let used = polish(
            &self.chain,
            &mut self.frames,
            &self.bounds,
            target,
            orientation,
            &mut q,
        );
        finish(
            &self.chain,
            &self.bounds,
            target,
            &tol,
            start,
            outcome(&q, 1 + used),
        )
    }
}
