//! Subproblem 3 (Paden-Kahan): the angle that puts a turning point at a
//! given distance from another.

use super::Turn;
use super::sp1::sp1;
use nalgebra::Vector3;

/// Subproblem 3: the solutions `theta` of `|rot(k, theta) p - q| = d` for
/// unit `k`, up to two; when the distance cannot be met, the angle that
/// comes nearest, with `exact == false`. Prepared once for fixed `p`, `q`
/// and `k` (an arm's elbow: only the distance changes from target to
/// target).
///
/// Along the axis the distance is fixed (`k·(p - q)`); across it, the law
/// of cosines on the projections gives `theta = phi ± acos(..)`.
#[derive(Debug, Clone, Copy)]
pub struct Sp3 {
    phi: Turn,
    /// `|p⊥|² + |q⊥|² + h²` and `2 |p⊥| |q⊥|`.
    sum: f64,
    denom: f64,
}

impl Sp3 {
    pub fn new(p: &Vector3<f64>, q: &Vector3<f64>, k: &Vector3<f64>) -> Sp3 {
        let pp = p - k * k.dot(p);
        let qp = q - k * k.dot(q);
        let h = k.dot(&(p - q));
        let (np, nq) = (pp.norm(), qp.norm());
        Sp3 {
            phi: sp1(&pp, &qp, k),
            sum: np * np + nq * nq + h * h,
            denom: 2.0 * np * nq,
        }
    }

    /// The angles that put the turning point at distance `d`.
    #[inline]
    pub fn solve(&self, d: f64) -> ([Turn; 2], usize, bool) {
        let phi = self.phi;
        if self.denom < 1e-300 {
            return ([phi, phi], 1, false);
        }
        let c = (self.sum - d * d) / self.denom;
        if c.abs() <= 1.0 {
            let a = Turn::acos(c);
            ([phi.plus(a), phi.minus(a)], 2, true)
        } else {
            let t = if c > 0.0 { phi } else { phi.flipped() };
            ([t, t], 1, (c.abs() - 1.0) < 1e-12)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ik::geo::rot;

    #[test]
    fn both_angles_meet_the_distance() {
        let k = Vector3::new(0.2, -1.0, 0.4).normalize();
        let p = Vector3::new(1.0, 0.3, -0.2);
        let q = Vector3::new(-0.5, 0.8, 0.9);
        let d = (rot(&k, 1.3) * p - q).norm();
        let (t, count, exact) = Sp3::new(&p, &q, &k).solve(d);
        assert!(exact && count == 2);
        for theta in t {
            assert!(((rot(&k, theta.angle) * p - q).norm() - d).abs() < 1e-12);
            assert!(((theta.rot(&k) * p - q).norm() - d).abs() < 1e-12);
        }
        assert!(
            t.iter()
                .any(|x| (crate::model::wrap_angle(x.angle - 1.3)).abs() < 1e-9)
        );
        // Too far: the nearest angle, flagged.
        let (t, count, exact) = Sp3::new(&p, &q, &k).solve(100.0);
        assert!(!exact && count == 1);
        let best = (t[0].rot(&k) * p - q).norm();
        for x in [-3.0, -1.0, 0.0, 1.0, 3.0] {
            assert!((rot(&k, x) * p - q).norm() <= best + 1e-12);
        }
    }
}
