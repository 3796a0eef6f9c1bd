//! The one error measure all solvers and the benchmark share.

use super::Target;
use crate::model::{Chain, JointKind, Transform, wrap_angle};
use nalgebra::{UnitQuaternion, Vector3};

/// When a pose counts as reached.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Metres.
    pub position: f64,
    /// Radians (angle of the relative rotation).
    pub orientation: f64,
}

impl Default for Tolerance {
    /// 1e-5 m and 1e-5 rad, the TRAC-IK benchmark protocol.
    fn default() -> Self {
        Tolerance {
            position: 1e-5,
            orientation: 1e-5,
        }
    }
}

/// How far the tip is from the target, in the base frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoseDeviation {
    /// Target position minus tip position (m).
    pub position: Vector3<f64>,
    /// Rotation that takes the tip's orientation to the target's, as an
    /// axis times angle (rad); zero when the target has no orientation.
    pub rotation: Vector3<f64>,
}

impl PoseDeviation {
    pub fn position_norm(&self) -> f64 {
        self.position.norm()
    }

    pub fn rotation_norm(&self) -> f64 {
        self.rotation.norm()
    }

    /// True when both parts are within tolerance.
    pub fn within(&self, tol: &Tolerance) -> bool {
        self.position_norm() <= tol.position && self.rotation_norm() <= tol.orientation
    }

    /// The weighted squared error that the iterative solvers minimise.
    pub fn weighted_sq(&self, target: &Target) -> f64 {
        let wp = target.position_weight;
        let wo = target.orientation_weight;
        wp * wp * self.position.norm_squared() + wo * wo * self.rotation.norm_squared()
    }
}

/// The error of `tip` against `target`. Orientation counts only when the
/// target asks for it (an orientation weight of 0 means position only).
pub fn pose_error(tip: &Transform, target: &Target) -> PoseDeviation {
    let position = target.position - tip.translation.vector;
    let rotation = match target.orientation {
        Some(q) if target.orientation_weight > 0.0 => rotation_error(tip, &q),
        _ => Vector3::zeros(),
    };
    PoseDeviation { position, rotation }
}

/// Axis-angle of `target * tip⁻¹` in the base frame: the rotation to apply
/// to the tip to reach the target. Its norm is the angle between the two.
pub fn rotation_error(tip: &Transform, target: &UnitQuaternion<f64>) -> Vector3<f64> {
    let current = UnitQuaternion::from_rotation_matrix(&tip.rotation);
    (target * current.inverse()).scaled_axis()
}

/// The angle (rad) between the tip's orientation and `target`, in
/// [0, π]: the norm of [`rotation_error`]. From the half-angle's sine and
/// cosine (atan2), exact near 0 where an arccosine of the cosine loses half
/// the digits.
pub fn orientation_distance(tip: &Transform, target: &UnitQuaternion<f64>) -> f64 {
    let current = UnitQuaternion::from_rotation_matrix(&tip.rotation);
    let d = (current.inverse() * target).into_inner();
    2.0 * half_angle(d.imag().norm(), d.w.abs())
}

/// `atan2(y, x)` for `y, x >= 0`. A solver checks answers that met the
/// target, where `y / x` is tiny: there the series `r - r³/3 + r⁵/5` is
/// exact to the last bit (the next term, `r⁷/7`, is below `r` times
/// 1e-19 for `r <= 1e-3`) and costs a division where `atan2` costs a
/// library call (a check per branch in the closed forms).
#[inline]
fn half_angle(y: f64, x: f64) -> f64 {
    if y <= 1e-3 * x {
        let r = y / x;
        let r2 = r * r;
        r * (1.0 - r2 * (1.0 / 3.0 - r2 * 0.2))
    } else {
        y.atan2(x)
    }
}

/// The joint-space distance from `seed` to `q`: `sqrt(Σ wᵢ (qᵢ - seedᵢ)²)`,
/// continuous joints measured the short way round. `weights` empty means
/// every weight is 1. The closest mode minimises it; the benchmark reports
/// it (unweighted) as `|q - seed|`.
pub fn joint_distance(chain: &Chain, q: &[f64], seed: &[f64], weights: &[f64]) -> f64 {
    let mut sum = 0.0;
    for (i, j) in chain.joints.iter().enumerate() {
        let mut d = q[i] - seed[i];
        if j.kind == JointKind::Continuous {
            d = wrap_angle(d);
        }
        sum += weights.get(i).copied().unwrap_or(1.0) * d * d;
    }
    sum.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_angle_series_matches_atan2() {
        for r in [0.0, 1e-12, 1e-7, 3e-5, 1e-4, 5e-4, 1e-3, 2e-3, 0.5] {
            for x in [1.0, 0.7, 1e-3] {
                let y = r * x;
                let (a, b) = (half_angle(y, x), y.atan2(x));
                assert!((a - b).abs() <= 2.0 * f64::EPSILON * b, "{y} {x}: {a} {b}");
            }
        }
    }
}
