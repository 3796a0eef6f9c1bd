//! Arms with a spherical wrist (axes 4, 5, 6 meeting in one point), as most
//! six-axis arms built like industrial ones: the wrist centre depends on
//! joints 1 to 3 only, the orientation left over is the wrist's.
//!
//! With axes 1 and 2 intersecting: the wrist centre's distance from their
//! common point fixes joint 3 (subproblem 3), then joints 1 and 2 together
//! (subproblem 2). With axes 2 and 3 parallel: the wrist centre's component
//! along them fixes joint 1 (subproblem 4), then joint 3 (subproblem 3)
//! and joint 2 (subproblem 1). The wrist: joint 5 by subproblem 4, joint 4
//! by subproblem 1, joint 6 from what is left.

use super::branches::Branches;
use super::structure::{Family, GeoStructure, Goal};
use super::{Turn, sp1, sp1_degenerate, sp2, sp4};
use nalgebra::Matrix3;

/// Every branch of `goal`; `hint` decides the free angle at a wrist
/// singularity (joint 4 at the hint's).
pub fn solve(s: &GeoStructure, goal: &Goal, hint: &[f64; 6], out: &mut Branches) {
    let (h, p, r06, w) = (&s.h, &s.p, goal.r06, goal.w);
    let mut arm = [[Turn::ZERO; 3]; 4];
    let mut exact = [false; 4];
    let mut n = 0;
    if s.family == Family::SphericalIntersecting {
        let (q3s, n3, e3) = s.elbow.solve(w.norm());
        for &q3 in &q3s[..n3] {
            let v = p[2] + q3.rot(&h[2]) * p[3];
            let (pairs, n12, e12) = sp2(&w, &h[0], &v, &h[1]);
            for &(t1, q2) in &pairs[..n12] {
                arm[n] = [t1.neg(), q2, q3];
                exact[n] = e3 && e12;
                n += 1;
            }
        }
    } else {
        let k = h[1];
        let (t1, n1, e1) = sp4(&k, &w, &h[0], k.dot(&(p[1] + p[2] + p[3])));
        for &t in &t1[..n1] {
            let v = t.neg().rot(&h[0]).transpose() * w - p[1];
            let (q3s, n3, e3) = s.elbow.solve(v.norm());
            for &q3 in &q3s[..n3] {
                let q2 = sp1(&(p[2] + q3.rot(&h[2]) * p[3]), &v, &k);
                arm[n] = [t.neg(), q2, q3];
                exact[n] = e1 && e3;
                n += 1;
            }
        }
    }
    for (a, &e) in arm[..n].iter().zip(&exact[..n]) {
        let r03 = a[0].rot(&h[0]) * a[1].rot(&h[1]) * a[2].rot(&h[2]);
        wrist(s, &(r03.transpose() * r06), *a, e, hint, out);
    }
}

/// The wrist angles that make `r36` (the rotation joints 4 to 6 must
/// give), appended to the arm angles `a`.
fn wrist(
    s: &GeoStructure,
    r36: &Matrix3<f64>,
    a: [Turn; 3],
    exact: bool,
    hint: &[f64; 6],
    out: &mut Branches,
) {
    let h = &s.h;
    let (q5s, n5, e5) = s.wrist.solve(h[3].dot(&(r36 * h[5])));
    for &q5 in &q5s[..n5] {
        let r5 = q5.rot(&h[4]);
        let from = r5 * h[5];
        let q4 = if sp1_degenerate(&from, &h[3], 1e-9) {
            Turn::new(hint[3])
        } else {
            sp1(&from, &(r36 * h[5]), &h[3])
        };
        let r6 = (q4.rot(&h[3]) * r5).transpose() * r36;
        let x = s.across;
        let q6 = sp1(&x, &(r6 * x), &h[5]);
        out.push([a[0], a[1], a[2], q4, q5, q6], exact && e5);
    }
}
