//! Geometry shared by the solvers (CCD, FABRIK, analytic, geo) and the
//! metric.

use nalgebra::Vector3;

/// A unit vector perpendicular to the unit `k`: across it and nearest the
/// x axis, or the y axis when `k` is nearly along x.
#[inline]
pub(crate) fn perpendicular(k: &Vector3<f64>) -> Vector3<f64> {
    let other = if k.x.abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    k.cross(&other).normalize()
}

/// The signed angle about unit `axis` that best turns direction `from`
/// towards `to` (both projected on the plane normal to `axis`). `None` when
/// either projection is too short to define a direction.
pub fn angle_about_axis(
    axis: &Vector3<f64>,
    from: &Vector3<f64>,
    to: &Vector3<f64>,
) -> Option<f64> {
    let f = from - axis * axis.dot(from);
    let t = to - axis * axis.dot(to);
    let scale = from.norm().max(to.norm()).max(1e-300);
    if f.norm() < 1e-12 * scale.max(1.0) || t.norm() < 1e-12 * scale.max(1.0) {
        return None;
    }
    Some(axis.dot(&f.cross(&t)).atan2(f.dot(&t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quarter_turn_about_z() {
        let a =
            angle_about_axis(&Vector3::z(), &Vector3::x(), &Vector3::new(0.0, 2.0, 5.0)).unwrap();
        assert!((a - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
        assert!(angle_about_axis(&Vector3::z(), &Vector3::z(), &Vector3::x()).is_none());
    }
}
