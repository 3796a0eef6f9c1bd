//! The one error measure all solvers and the benchmark share.

use super::Target;
use super::geometry::perpendicular;
use super::orientation::{Orientation, Pointing};
use crate::model::{Chain, JointKind, Transform, wrap_angle};
use nalgebra::{UnitQuaternion, Vector3};

/// When a pose counts as reached.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Metres.
    pub position: f64,
    /// Radians: the angle of the relative rotation, or for a pointing
    /// (5D) target the angle between the tool axis and its direction.
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
    /// For a pointing (5D) target, the shortest rotation that turns the
    /// tool axis onto the direction: perpendicular to both, the roll about
    /// the axis never part of it.
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
        _ if target.orientation_weight <= 0.0 => Vector3::zeros(),
        Orientation::Free => Vector3::zeros(),
        Orientation::Full(q) => rotation_error(tip, &q),
        Orientation::Axis(p) => pointing_error(&(tip.rotation * p.tool.into_inner()), &p),
    };
    PoseDeviation { position, rotation }
}

/// The shortest rotation (axis times angle, base frame) that turns
/// `axis` (the tool axis, base frame) onto `p.direction`; its norm is the
/// angle between them. Pointing exactly away, any axis across serves:
/// the one across and nearest the base's x or y.
fn pointing_error(axis: &Vector3<f64>, p: &Pointing) -> Vector3<f64> {
    let d = p.direction.into_inner();
    let across = axis.cross(&d);
    let sin = across.norm();
    let cos = axis.dot(&d);
    if sin > 1e-300 {
        across * (angle_of(sin, cos) / sin)
    } else if cos >= 0.0 {
        Vector3::zeros()
    } else {
        perpendicular(axis) * std::f64::consts::PI
    }
}

/// The angle from its sine and cosine (both of a unit pair), in [0, π].
fn angle_of(sin: f64, cos: f64) -> f64 {
    if cos >= 0.0 {
        half_angle(sin, cos)
    } else {
        std::f64::consts::PI - half_angle(sin, -cos)
    }
}

/// The rotation part of `pose_error` whatever the weight: `None` for a
/// position target (for callers with their own weighing, such as the
/// node's follower).
pub fn orientation_error(tip: &Transform, orientation: &Orientation) -> Option<Vector3<f64>> {
    match orientation {
        Orientation::Free => None,
        Orientation::Full(q) => Some(rotation_error(tip, q)),
        Orientation::Axis(p) => Some(pointing_error(&(tip.rotation * p.tool.into_inner()), p)),
    }
}

/// The angle the orientation tolerance applies to, between the tip and
/// what `orientation` asks: the relative rotation's for a full one, the
/// tool axis's to its direction for a pointing one, 0 for none.
pub fn orientation_angle(tip: &Transform, orientation: &Orientation) -> f64 {
    match orientation {
        Orientation::Free => 0.0,
        Orientation::Full(q) => orientation_distance(tip, q),
        Orientation::Axis(p) => {
            let axis = tip.rotation * p.tool.into_inner();
            let d = p.direction.into_inner();
            angle_of(axis.cross(&d).norm(), axis.dot(&d))
        }
    }
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
    use nalgebra::{Rotation3, Translation3, Unit};

    fn tip_turned(r: Rotation3<f64>) -> Transform {
        Transform::from_parts(Translation3::new(0.1, 0.2, 0.3), r)
    }

    /// A pointing target asks nothing of the roll about the tool axis:
    /// any roll of a tip whose +z points down costs nothing.
    #[test]
    fn roll_about_the_tool_axis_costs_nothing() {
        let down = Unit::new_normalize(Vector3::new(0.0, 0.0, -1.0));
        let target = Target::axis(Vector3::new(0.1, 0.2, 0.3), down);
        let flip = Rotation3::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI);
        for roll in [0.0, 0.7, -2.0, 3.1] {
            let tip = tip_turned(flip * Rotation3::from_axis_angle(&Vector3::z_axis(), roll));
            let e = pose_error(&tip, &target);
            assert!(e.rotation_norm() < 1e-12, "roll {roll}: {e:?}");
            assert!(e.within(&Tolerance::default()));
            assert!(orientation_angle(&tip, &target.orientation) < 1e-12);
        }
    }

    /// A tool axis tilted by an angle is off by that angle, about an axis
    /// across it, whatever the roll; pointing away, by π.
    #[test]
    fn a_tilted_axis_is_measured_as_its_angle() {
        let up = Vector3::z_axis();
        let target = Target::axis(Vector3::zeros(), up);
        for (tilt, roll) in [
            (1e-6, 0.0),
            (0.3, 1.0),
            (2.5, -0.4),
            (std::f64::consts::PI, 0.2),
        ] {
            let r = Rotation3::from_axis_angle(&Vector3::y_axis(), tilt)
                * Rotation3::from_axis_angle(&Vector3::z_axis(), roll);
            let tip = tip_turned(r);
            let e = pose_error(&tip, &target);
            assert!((e.rotation_norm() - tilt).abs() < 1e-12, "{tilt}: {e:?}");
            let axis = tip.rotation * Vector3::z();
            assert!(e.rotation.dot(&axis).abs() < 1e-12, "across the tool axis");
            assert!((orientation_angle(&tip, &target.orientation) - tilt).abs() < 1e-12);
        }
        let tip = tip_turned(Rotation3::from_axis_angle(&Vector3::y_axis(), 2e-5));
        assert!(!pose_error(&tip, &target).within(&Tolerance::default()));
    }

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
