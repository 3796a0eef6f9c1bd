//! Subproblem 2 (Paden-Kahan): two angles about two intersecting axes that
//! bring two points together.

use super::Turn;
use super::sp1::sp1;
use nalgebra::Vector3;

/// Solutions `(theta1, theta2)` of `rot(k1, theta1) p1 = rot(k2, theta2) p2`
/// for unit, non-parallel `k1` and `k2`: up to two; when there is none
/// (`|p1| != |p2|` or the cones miss), the least-squares one, with
/// `exact == false`.
///
/// The common point `c` lies on both cones: `k1·c = k1·p1`, `k2·c = k2·p2`,
/// `|c| = |p1|`. Written as `c = a k1 + b k2 + g (k1 × k2)`, the first two
/// fix `a` and `b`, the norm gives `g = ±sqrt(..)`.
pub fn sp2(
    p1: &Vector3<f64>,
    k1: &Vector3<f64>,
    p2: &Vector3<f64>,
    k2: &Vector3<f64>,
) -> ([(Turn, Turn); 2], usize, bool) {
    let s = k1.dot(k2);
    let n = k1.cross(k2);
    let n2 = n.norm_squared();
    let (a1, a2) = (k1.dot(p1), k2.dot(p2));
    let a = (a1 - s * a2) / n2;
    let b = (a2 - s * a1) / n2;
    let base = k1 * a + k2 * b;
    // Both points' norms should agree; the mean absorbs model error.
    let r2 = 0.5 * (p1.norm_squared() + p2.norm_squared());
    let g2 = (r2 - base.norm_squared()) / n2;
    let solve = |g: f64| {
        let c = base + n * g;
        (sp1(p1, &c, k1), sp1(p2, &c, k2))
    };
    if g2 > 0.0 {
        let g = g2.sqrt();
        ([solve(g), solve(-g)], 2, true)
    } else {
        let one = solve(0.0);
        ([one, one], 1, g2 > -1e-12)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ik::geo::rot;

    #[test]
    fn one_of_the_two_is_the_generating_pair() {
        let k1 = Vector3::new(0.0, 0.0, 1.0);
        let k2 = Vector3::new(1.0, 0.5, 0.2).normalize();
        let p2 = Vector3::new(0.4, -0.7, 1.1);
        let (t1, t2) = (0.7, -2.1);
        let c = rot(&k2, t2) * p2;
        let p1 = rot(&k1, -t1) * c;
        let (sols, count, exact) = sp2(&p1, &k1, &p2, &k2);
        assert!(exact && count == 2);
        assert!(
            sols.iter()
                .any(|(a, b)| (a.angle - t1).abs() < 1e-9 && (b.angle - t2).abs() < 1e-9),
            "{sols:?}"
        );
        for (a, b) in sols {
            assert!((rot(&k1, a.angle) * p1 - rot(&k2, b.angle) * p2).norm() < 1e-9);
            assert!((a.rot(&k1) * p1 - b.rot(&k2) * p2).norm() < 1e-9);
        }
    }
}
