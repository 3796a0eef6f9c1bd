//! Newton steps on the real chain after the closed form on the ideal model.

use super::solver::AnalyticSolver;
use super::structure::rotate;
use crate::ik::Target;
use crate::ik::metric::rotation_error;
use crate::model::wrap_angle;
use nalgebra::{Matrix3, SMatrix, UnitQuaternion, Vector3};

/// `mᵀ (m mᵀ + damping I)⁻¹`, the damped least-norm inverse of a 3x5 map.
fn damped_pinv(m: &SMatrix<f64, 3, 5>, damping: f64) -> Option<SMatrix<f64, 5, 3>> {
    let gram = m * m.transpose() + Matrix3::identity() * damping;
    gram.try_inverse().map(|inv| m.transpose() * inv)
}

/// What the Newton polish matches besides the position.
#[derive(Clone, Copy)]
pub(super) enum Secondary {
    None,
    Pitch(f64),
    Orientation(UnitQuaternion<f64>),
}

/// Newton polish iterations at most (each costs one Jacobian).
const POLISH_ITERATIONS: u32 = 8;

impl AnalyticSolver {
    /// Newton steps on the real chain: the position exactly (least-norm
    /// step), the secondary task in what is left (null space). Absorbs the
    /// difference between the real URDF and the ideal model. Joints stay
    /// in bounds; the best iterate is kept. Returns the iterations used.
    pub(super) fn polish(
        &mut self,
        target: &Target,
        secondary: Secondary,
        q: &mut [f64; 5],
    ) -> u32 {
        let n = self.geometry.dof;
        let g = &self.geometry;
        let mut free = [false; 5];
        for (i, f) in free.iter_mut().enumerate().take(n) {
            *f = !self.bounds.locked[i];
        }
        if n == 5 && !matches!(secondary, Secondary::Orientation(_)) {
            free[4] = false; // the roll stays where the seed had it
        }
        let mut best = (f64::INFINITY, *q);
        let mut used = 0;
        for it in 0..=POLISH_ITERATIONS {
            // The residual from plain FK first: on an ideal chain the closed
            // form is already exact and no Jacobian is needed.
            let tip = self.chain.fk(&q[..n]);
            let ep = target.position - tip.translation.vector;
            let mut es = Vector3::zeros();
            let app = tip.rotation * g.approach_tool;
            let forward = rotate(&g.u, q[0], &g.a).cross(&g.u);
            let (y, x) = (app.dot(&g.u), app.dot(&forward));
            match secondary {
                Secondary::None => {}
                Secondary::Pitch(p) => es.x = wrap_angle(p - y.atan2(x)),
                Secondary::Orientation(o) => es = rotation_error(&tip, &o),
            }
            let cost = ep.norm() + 0.1 * es.norm();
            if cost < best.0 {
                best = (cost, *q);
            }
            if ep.norm() < 1e-13 && es.norm() < 1e-12 || it == POLISH_ITERATIONS {
                break;
            }
            used += 1;
            self.chain.jacobian(&q[..n], &mut self.frames);
            let mut js = SMatrix::<f64, 3, 5>::zeros();
            let mut jp = SMatrix::<f64, 3, 5>::zeros();
            for (i, &is_free) in free.iter().enumerate().take(n) {
                if !is_free {
                    continue;
                }
                let axis = self.frames.axes[i];
                jp.set_column(i, &self.frames.columns[i].linear);
                match secondary {
                    Secondary::None => {}
                    Secondary::Pitch(_) => {
                        // d atan2(y, x): the approach turns about each axis,
                        // and "forward" turns with joint 1.
                        let dapp = axis.cross(&app);
                        let mut dx = dapp.dot(&forward);
                        if i == 0 {
                            dx += app.dot(&g.u.cross(&forward));
                        }
                        js[(0, i)] = (x * dapp.dot(&g.u) - y * dx) / (x * x + y * y).max(1e-300);
                    }
                    Secondary::Orientation(_) => js.set_column(i, &axis),
                }
            }
            let Some(mut step) = prioritized_step(&jp, &js, &ep, &es) else {
                break;
            };
            let size = step.norm();
            if !size.is_finite() || size < 1e-15 {
                break; // nothing left to gain (e.g. an unreachable pitch)
            }
            if size > 0.2 {
                step *= 0.2 / size;
            }
            for i in 0..n {
                q[i] = self.bounds.clamp_one(i, q[i] + step[i]);
            }
        }
        *q = best.1;
        used
    }
}

/// The position step (least norm) plus the secondary task's step in what
/// the position leaves free. Damped right pseudo-inverses: 3x3 inverses
/// only (an SVD would cost more than the whole closed form). The damping
/// only matters near singular poses, where the step cap and keeping the
/// best iterate take over. `None` when the position Jacobian is singular.
fn prioritized_step(
    jp: &SMatrix<f64, 3, 5>,
    js: &SMatrix<f64, 3, 5>,
    ep: &Vector3<f64>,
    es: &Vector3<f64>,
) -> Option<SMatrix<f64, 5, 1>> {
    let jp_pinv = damped_pinv(jp, 1e-10)?;
    let step1 = jp_pinv * ep;
    let null = SMatrix::<f64, 5, 5>::identity() - jp_pinv * jp;
    let m = js * null;
    let step2 = match damped_pinv(&m, 1e-9) {
        Some(m_pinv) => m_pinv * (es - js * step1),
        None => SMatrix::<f64, 5, 1>::zeros(),
    };
    Some(step1 + null * step2)
}
