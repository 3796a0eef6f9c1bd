//! Subproblem 1 (Paden-Kahan): the angle that turns one point onto another
//! about an axis.

use super::Turn;
use nalgebra::Vector3;

/// The angle `theta` (with its sine and cosine) with `rot(k, theta) p = q` for unit `k`, in
/// `(-pi, pi]`; in the least-squares sense when `p` and `q` differ in
/// height along `k` or in distance from it (model error).
///
/// Undefined (returns 0) when `p` or `q` lies on the axis: any angle does.
/// [`sp1_degenerate`] says when that is so.
#[inline]
pub fn sp1(p: &Vector3<f64>, q: &Vector3<f64>, k: &Vector3<f64>) -> Turn {
    let pp = p - k * k.dot(p);
    let qp = q - k * k.dot(q);
    Turn::atan2(k.dot(&pp.cross(&qp)), pp.dot(&qp))
}

/// True when `p` lies within `eps` of the axis `k` (relative to `|p|`), so
/// that [`sp1`] cannot tell the angle.
#[inline]
pub fn sp1_degenerate(p: &Vector3<f64>, k: &Vector3<f64>, eps: f64) -> bool {
    // Squared on both sides: no square root.
    (p - k * k.dot(p)).norm_squared() <= eps * eps * p.norm_squared().max(1e-300)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ik::geo::rot;

    #[test]
    fn recovers_the_angle() {
        let k = Vector3::new(1.0, 2.0, -0.5).normalize();
        let p = Vector3::new(0.3, -1.0, 2.0);
        for theta in [-3.0, -1.0, 0.0, 0.5, 3.1] {
            let q = rot(&k, theta) * p;
            let t = sp1(&p, &q, &k);
            assert!((t.angle - theta).abs() < 1e-12, "{theta}");
            assert!((t.sin - theta.sin()).abs() < 1e-12 && (t.cos - theta.cos()).abs() < 1e-12);
        }
    }
}
