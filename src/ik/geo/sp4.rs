//! Subproblem 4 (Paden-Kahan): the angle that puts a turning point in a
//! plane.

use super::Turn;
use nalgebra::Vector3;

/// Solutions `theta` of `h · rot(k, theta) p = d` for unit `k` and `h`:
/// up to two; when the plane is out of reach, the angle that comes
/// nearest, with `exact == false`.
pub fn sp4(
    h: &Vector3<f64>,
    p: &Vector3<f64>,
    k: &Vector3<f64>,
    d: f64,
) -> ([Turn; 2], usize, bool) {
    Sp4::new(h, p, k).solve(d)
}

/// Subproblem 4 for fixed `h`, `p` and `k` (a wrist: only the plane's
/// offset changes from target to target), prepared once.
///
/// `h · rot(k, theta) p = A cos(theta) + B sin(theta) + C`, so
/// `theta = atan2(B, A) ± acos((d - C) / sqrt(A² + B²))`.
#[derive(Debug, Clone, Copy)]
pub struct Sp4 {
    phi: Turn,
    /// `sqrt(A² + B²)` and `C`.
    r: f64,
    c: f64,
}

impl Sp4 {
    pub fn new(h: &Vector3<f64>, p: &Vector3<f64>, k: &Vector3<f64>) -> Sp4 {
        let along = k * k.dot(p);
        let pp = p - along;
        let a = h.dot(&pp);
        let b = h.dot(&k.cross(&pp));
        Sp4 {
            phi: Turn::atan2(b, a),
            r: (a * a + b * b).sqrt(),
            c: h.dot(&along),
        }
    }

    /// The angles that put the turning point in the plane at offset `d`.
    #[inline]
    pub fn solve(&self, d: f64) -> ([Turn; 2], usize, bool) {
        let (phi, r, c) = (self.phi, self.r, self.c);
        if r < 1e-300 {
            return ([phi, phi], 1, (d - c).abs() < 1e-12);
        }
        let x = (d - c) / r;
        if x.abs() <= 1.0 {
            let w = Turn::acos(x);
            ([phi.plus(w), phi.minus(w)], 2, true)
        } else {
            let t = if x > 0.0 { phi } else { phi.flipped() };
            ([t, t], 1, (x.abs() - 1.0) < 1e-12)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ik::geo::rot;

    #[test]
    fn both_angles_reach_the_plane() {
        let k = Vector3::new(0.0, 0.6, 0.8);
        let h = Vector3::new(1.0, 0.2, -0.3).normalize();
        let p = Vector3::new(0.5, -0.4, 0.7);
        let d = h.dot(&(rot(&k, -0.9) * p));
        let (t, count, exact) = sp4(&h, &p, &k, d);
        assert!(exact && count == 2);
        for theta in t {
            assert!((h.dot(&(rot(&k, theta.angle) * p)) - d).abs() < 1e-12);
            assert!((h.dot(&(theta.rot(&k) * p)) - d).abs() < 1e-12);
        }
        assert!(
            t.iter()
                .any(|x| (crate::model::wrap_angle(x.angle + 0.9)).abs() < 1e-9)
        );
    }
}
