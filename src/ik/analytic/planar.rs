//! The closed form on the ideal model: the joint-1 branches, the planar
//! two-link problem (law of cosines), and the wrist angles that keep the
//! wrist centre reachable.

use super::structure::{HipKnee, cross2, rotate, rotate2};
use crate::model::wrap_angle;
use nalgebra::{Vector2, Vector3};
use std::f64::consts::PI;

pub(super) use crate::ik::bounds::fit_winding;

/// When the solver picks the pitch (position-only target, no pitch asked),
/// the knee angle it aims at stays this far (rad) from the straight (and
/// fully folded) limb and from the knee's limits, when the target allows:
/// no singular knee for the polish, no joint on its limit.
const KNEE_MARGIN: f64 = 1e-4;

impl HipKnee {
    fn planar(&self, v: &Vector3<f64>) -> Vector2<f64> {
        Vector2::new(v.dot(&self.e1), v.dot(&self.e2))
    }

    /// Tip position at zero for the other joints when the roll is `q5`.
    fn tip_at_roll(&self, q5: f64) -> Vector3<f64> {
        match &self.roll {
            Some((p5, a5)) => p5 + rotate(a5, q5, &(self.tip - p5)),
            None => self.tip,
        }
    }

    /// The joint-1 branches of `plan`, with what the planar problem sees
    /// once joint 1 is undone. Returns how many are distinct (1 or 2).
    pub(super) fn branches(&self, plan: &Plan) -> ([Branch; 2], usize) {
        let tip = self.tip_at_roll(plan.q5);
        let lateral = (tip - self.p1).dot(&self.a);
        let o = if self.dof >= 4 {
            self.planar(&(tip - self.end))
        } else {
            Vector2::zeros()
        };
        let v = plan.target - self.p1;
        let (x, y) = (v.dot(&self.a), v.dot(&self.u.cross(&self.a)));
        let r = x.hypot(y);
        let mut clamped = false;
        let angles = if r < 1e-12 {
            // On joint 1's axis: any yaw reaches it, keep the seed's.
            clamped |= lateral.abs() > 1e-12;
            [plan.seed[0]; 2]
        } else {
            let c = lateral / r;
            clamped |= c.abs() > 1.0;
            let alpha = c.clamp(-1.0, 1.0).acos();
            let phi = y.atan2(x);
            [phi + alpha, phi - alpha]
        };
        let angles = match plan.near {
            Some(h) if wrap_angle(angles[1] - h).abs() < wrap_angle(angles[0] - h).abs() => {
                [angles[1]; 2]
            }
            Some(_) => [angles[0]; 2],
            None => angles,
        };
        let branch = |q1: f64| {
            let local = self.p1 + rotate(&self.u, -q1, &v);
            Branch {
                q1,
                w: self.planar(&(local - self.p2)),
                o,
                misaligned: plan
                    .approach
                    .map_or(0.0, |app| app.dot(&rotate(&self.u, q1, &self.a)).abs()),
                pole: plan.pole.map(|p| {
                    let pl = self.p1 + rotate(&self.u, -q1, &(p - self.p1));
                    self.planar(&(pl - self.p2))
                }),
                clamped,
            }
        };
        let first = branch(angles[0]);
        if angles[1] == angles[0] {
            ([first; 2], 1)
        } else {
            ([first, branch(angles[1])], 2)
        }
    }

    /// The planar (law of cosines) solution of branch `br` for wrist angle
    /// `sigma` (ignored for three joints) and bend `s` (+1 or -1).
    pub(super) fn solve_planar(&self, br: &Branch, sigma: f64, s: f64, plan: &Plan) -> Candidate {
        let (l1, l2) = self.links;
        let t = br.w - rotate2(sigma, &br.o);
        let d = t.norm();
        let c = (d * d - l1 * l1 - l2 * l2) / (2.0 * l1 * l2);
        let gamma = c.clamp(-1.0, 1.0).acos();
        let th3 = -self.beta + s * gamma;
        let th2 = if d < 1e-12 {
            plan.seed[1]
        } else {
            let reach = self.u1 + rotate2(th3, &self.u2);
            t.y.atan2(t.x) - reach.y.atan2(reach.x)
        };
        let mut q = [0.0; 5];
        q[0] = br.q1;
        q[1] = th2;
        q[2] = self.s3 * th3;
        if self.dof >= 4 {
            q[3] = self.s4 * (sigma - th2 - th3);
        }
        if self.dof == 5 {
            q[4] = plan.q5;
        }
        let knee = rotate2(th2, &self.u1);
        Candidate {
            q,
            bend: self.s3 * s * gamma,
            pole_side: br
                .pole
                .is_none_or(|pp| cross2(&t, &knee) * cross2(&t, &pp) >= 0.0),
            misaligned: br.misaligned,
            clamped: br.clamped || c.abs() > 1.0 + 1e-12,
            violation: 0.0,
            distance: 0.0,
            sigma,
        }
    }

    /// The ideal-model candidates: two branches of joint 1 times two bends.
    /// `sigma` is the planar angle of the wrist (sum of the planar joints),
    /// ignored for three joints.
    pub(super) fn candidates(&self, plan: &Plan, sigma_of: impl Fn(f64) -> f64) -> [Candidate; 4] {
        let (branches, count) = self.branches(plan);
        let mut out = [Candidate::default(); 4];
        for (b, br) in branches.iter().enumerate().take(count) {
            let sigma = sigma_of(br.q1);
            for (k, s) in [1.0, -1.0].into_iter().enumerate() {
                out[2 * b + k] = self.solve_planar(br, sigma, s, plan);
            }
        }
        if count == 1 {
            out.copy_within(0..2, 2); // one branch only: no need to redo it
        }
        out
    }

    /// The wrist angles (planar angle of the wrist, `pitch0 - pitch`) for
    /// which branch `br` puts the wrist centre at a distance from joint 2
    /// that a knee angle in `knee` (rad, `0` straight, `pi` folded) gives.
    ///
    /// With `w` the target and `o` the tool offset in the plane, the wrist
    /// centre is `w - R(sigma) o` and its squared distance is
    /// `|w|² + |o|² - 2 |w| |o| cos(sigma - psi)`: a band of distances is a
    /// band `[lo, hi]` of `cos(sigma - psi)`, i.e. `|sigma - psi|` in
    /// `[alpha, beta]` (two arcs, symmetric about `psi`). The knee range is first narrowed
    /// by [`KNEE_MARGIN`] (no straight knee, no knee on its limit), then
    /// widened when that leaves nothing; when even the whole annulus is out
    /// of reach, the arc is the single angle that comes closest.
    pub(super) fn arcs(&self, br: &Branch, knee: (f64, f64)) -> Arcs {
        let (l1, l2) = self.links;
        let (wn, on) = (br.w.norm(), br.o.norm());
        if wn * on < 1e-18 {
            // The wrist angle does not move the wrist centre: any is fine.
            return Arcs {
                psi: 0.0,
                lo: -1.0,
                hi: 1.0,
                reachable: true,
            };
        }
        let psi = br.w.y.atan2(br.w.x) - br.o.y.atan2(br.o.x);
        let base = wn * wn + on * on;
        let den = 2.0 * wn * on;
        let squared = |gamma: f64| l1 * l1 + l2 * l2 + 2.0 * l1 * l2 * gamma.cos();
        let band = |(g_lo, g_hi): (f64, f64)| {
            let lo = (base - squared(g_lo)) / den;
            let hi = (base - squared(g_hi)) / den;
            (lo <= 1.0 && hi >= -1.0).then_some((lo, hi))
        };
        let (g_lo, g_hi) = knee;
        let narrowed = if g_hi - g_lo > 2.0 * KNEE_MARGIN {
            (g_lo + KNEE_MARGIN, g_hi - KNEE_MARGIN)
        } else {
            let mid = 0.5 * (g_lo + g_hi);
            (mid, mid)
        };
        for range in [narrowed, knee, (0.0, PI)] {
            if let Some((lo, hi)) = band(range) {
                return Arcs {
                    psi,
                    lo,
                    hi,
                    reachable: true,
                };
            }
        }
        // Out of reach at every pitch: the tool pointing at the target
        // (shortest wrist distance) when too far, away when too close.
        let best = if base - den > squared(0.0) { 1.0 } else { -1.0 };
        Arcs {
            psi,
            lo: best,
            hi: best,
            reachable: false,
        }
    }
}

/// One joint-1 branch as the planar problem sees it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Branch {
    pub(super) q1: f64,
    /// The target relative to joint 2's axis, in the limb plane at zero
    /// (joint 1 undone).
    pub(super) w: Vector2<f64>,
    /// The tool offset (wrist pitch axis to tip) in the plane at zero.
    pub(super) o: Vector2<f64>,
    pub(super) misaligned: f64,
    pub(super) pole: Option<Vector2<f64>>,
    pub(super) clamped: bool,
}

/// The wrist angles `sigma` with `cos(sigma - psi)` in `[lo, hi]`, i.e.
/// `|wrap(sigma - psi)|` in `[alpha, beta]` (see [`HipKnee::arcs`]).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Arcs {
    pub(super) psi: f64,
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) reachable: bool,
}

impl Arcs {
    pub(super) fn alpha(&self) -> f64 {
        self.hi.min(1.0).acos()
    }

    pub(super) fn beta(&self) -> f64 {
        self.lo.max(-1.0).acos()
    }

    /// The angle of the arcs nearest `sigma` (`sigma` itself when it lies
    /// on them: no inverse cosine then).
    pub(super) fn nearest(&self, sigma: f64) -> f64 {
        let ds = wrap_angle(sigma - self.psi);
        let c = ds.cos();
        if (self.lo..=self.hi).contains(&c) {
            return sigma;
        }
        let side = if ds < 0.0 { -1.0 } else { 1.0 };
        let edge = if c > self.hi {
            self.alpha()
        } else {
            self.beta()
        };
        self.psi + side * edge
    }
}

/// What one closed-form pass aims at.
pub(super) struct Plan<'a> {
    pub(super) target: Vector3<f64>,
    pub(super) seed: &'a [f64; 5],
    pub(super) q5: f64,
    pub(super) pole: Option<Vector3<f64>>,
    /// The approach direction asked by an orientation target.
    pub(super) approach: Option<Vector3<f64>>,
    /// Only the joint-1 branch nearest this angle (the one an orientation
    /// hypothesis aligns; the other belongs to the other hypothesis).
    pub(super) near: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Candidate {
    pub(super) q: [f64; 5],
    /// Knee bend from the straight limb, signed about the knee's axis.
    pub(super) bend: f64,
    pub(super) pole_side: bool,
    /// Sine of the angle between the asked approach direction and the limb
    /// plane of this joint-1 branch: orientation the branch cannot reach.
    pub(super) misaligned: f64,
    /// The target was out of reach and was moved to the nearest reachable point.
    pub(super) clamped: bool,
    /// How far outside the bounds (rad, summed); 0 when inside.
    pub(super) violation: f64,
    /// Squared distance to the seed.
    pub(super) distance: f64,
    /// Planar angle of the wrist (`pitch0 - pitch`) the candidate was built for.
    pub(super) sigma: f64,
}
