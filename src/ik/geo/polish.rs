//! Newton steps on the real chain after the closed form on the measured
//! (ideal) model: six joints, six pose errors, a square system.

use crate::ik::bounds::Bounds;
use crate::ik::metric::pose_error;
use crate::ik::{Orientation, Target};
use crate::model::{Chain, Frames};
use nalgebra::{SMatrix, SVector, UnitQuaternion};

/// Newton iterations at most; from a closed form within the model error
/// two or three are enough.
const ITERATIONS: u32 = 10;

/// Polishes `q` towards `target` (position and `orientation`) on `chain`,
/// keeping every joint in `bounds`; the best iterate is kept, so it never
/// gets worse. Returns the iterations used.
pub fn polish(
    chain: &Chain,
    frames: &mut Frames,
    bounds: &Bounds,
    target: &Target,
    orientation: &UnitQuaternion<f64>,
    q: &mut [f64; 6],
) -> u32 {
    let full = Target {
        orientation: Orientation::Full(*orientation),
        orientation_weight: 1.0,
        ..target.clone()
    };
    let mut best = (f64::INFINITY, *q);
    let mut used = 0;
    for _ in 0..ITERATIONS {
        let tip = chain.jacobian(q, frames);
        let e = pose_error(&tip, &full);
        let cost = e.position_norm() + e.rotation_norm();
        if cost < best.0 {
            best = (cost, *q);
        }
        if cost < 1e-13 {
            break;
        }
        let mut j = SMatrix::<f64, 6, 6>::zeros();
        for (i, c) in frames.columns.iter().enumerate() {
            j.fixed_view_mut::<3, 1>(0, i).copy_from(&c.linear);
            j.fixed_view_mut::<3, 1>(3, i).copy_from(&c.angular);
        }
        let rhs =
            SVector::<f64, 6>::from_iterator(e.position.iter().chain(e.rotation.iter()).copied());
        let Some(step) = j.lu().solve(&rhs) else {
            break;
        };
        if !step.iter().all(|v| v.is_finite()) {
            break;
        }
        let scale = (0.3 / step.norm()).min(1.0);
        for i in 0..6 {
            q[i] = bounds.clamp_one(i, q[i] + scale * step[i]);
        }
        used += 1;
    }
    let tip = chain.fk(q);
    let e = pose_error(&tip, &full);
    if e.position_norm() + e.rotation_norm() >= best.0 {
        *q = best.1;
    }
    used
}
