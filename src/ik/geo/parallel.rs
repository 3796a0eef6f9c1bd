//! The UR-like family: joints 2, 3, 4 parallel, axes 5 and 6 intersecting
//! (Elias and Wen's "three parallel, two intersecting" case).
//!
//! The parallel joints keep every vector's component along their axis, so
//! the wrist position's component fixes joint 1 (subproblem 4) and the
//! tool axis's component fixes joint 5 (subproblem 4); joint 6 follows
//! from where the parallel axis lands in the tool (subproblem 1), the sum
//! q2 + q3 + q4 from the remaining rotation, and the planar two-link from
//! subproblems 3 and 1.

use super::branches::Branches;
use super::structure::{GeoStructure, Goal};
use super::{Turn, sp1, sp1_degenerate, sp4};

/// Every branch of `goal`; `hint` decides the free angle at a wrist
/// singularity (joint 6 at the hint's). Each rotation is built from the
/// sine and cosine the subproblem found ([`Turn`]).
pub fn solve(s: &GeoStructure, goal: &Goal, hint: &[f64; 6], out: &mut Branches) {
    let (h, p, r06, w) = (&s.h, &s.p, goal.r06, goal.w);
    let k = h[1];
    let (s3, s4) = (k.dot(&h[2]).signum(), k.dot(&h[3]).signum());
    let d1 = k.dot(&(p[1] + p[2] + p[3] + p[4]));
    let (t1, n1, e1) = sp4(&k, &w, &h[0], d1);
    let x = s.across;
    for &t in &t1[..n1] {
        let q1 = t.neg();
        let r1t = q1.rot(&h[0]).transpose();
        let r16 = r1t * r06;
        let k6 = r16.transpose() * k;
        let (q5s, n5, e5) = s.wrist.solve(k.dot(&(r16 * h[5])));
        for &q5 in &q5s[..n5] {
            let r5t = q5.rot(&h[4]).transpose();
            let from = r5t * k;
            let q6 = if sp1_degenerate(&from, &h[5], 1e-9) {
                Turn::new(hint[5])
            } else {
                sp1(&from, &k6, &h[5]).neg()
            };
            let r234 = r16 * q6.rot(&h[5]).transpose() * r5t;
            let q234 = sp1(&x, &(r234 * x), &k);
            let v = r1t * w - p[1] - r234 * p[4];
            let (q3s, n3, e3) = s.elbow.solve(v.norm());
            for &q3 in &q3s[..n3] {
                let q2 = sp1(&(p[2] + q3.rot(&h[2]) * p[3]), &v, &k);
                // q2 + q3 + q4 about the common direction is q234.
                let q4 = q234.minus(q2).minus(q3.times_sign(s3)).times_sign(s4);
                out.push([q1, q2, q3, q4, q5, q6], e1 && e5 && e3);
            }
        }
    }
}
