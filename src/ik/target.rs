//! What a solver is asked to reach.

use super::IkError;
use super::orientation::{Orientation, Pointing};
use nalgebra::{Quaternion, Unit, UnitQuaternion, Vector3};

/// A tip pose in the chain's base frame (metres, REP 103).
///
/// `orientation` says what is asked of the tip's orientation: all of it,
/// where one tool axis points (5D), or nothing. The weights trade
/// position against orientation where both cannot be met (a 4- or 5-DOF arm
/// reaches only some orientations at a given point): an orientation weight of
/// 0 is the same as asking for the position only.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub position: Vector3<f64>,
    pub orientation: Orientation,
    pub position_weight: f64,
    pub orientation_weight: f64,
}

impl Target {
    /// A position-only target.
    pub fn position(p: Vector3<f64>) -> Target {
        Target {
            position: p,
            orientation: Orientation::Free,
            position_weight: 1.0,
            orientation_weight: 1.0,
        }
    }

    /// A full pose target.
    pub fn pose(p: Vector3<f64>, q: UnitQuaternion<f64>) -> Target {
        Target {
            orientation: Orientation::Full(q),
            ..Target::position(p)
        }
    }

    /// A position and the direction the tip's +z axis (the approach axis
    /// of a ROS tool frame) points in, the roll about it free.
    pub fn axis(p: Vector3<f64>, direction: Unit<Vector3<f64>>) -> Target {
        Target {
            orientation: Orientation::Axis(Pointing::along(direction)),
            ..Target::position(p)
        }
    }

    /// A pose from a position and an `x, y, z, w` quaternion as ROS sends it;
    /// the quaternion is checked and normalised by [`quaternion_from_xyzw`].
    pub fn from_xyzw(p: [f64; 3], xyzw: Option<[f64; 4]>) -> Result<Target, IkError> {
        let position = Vector3::from(p);
        check_finite("position", position.as_slice())?;
        let orientation = match xyzw {
            None => Orientation::Free,
            Some(v) => Orientation::Full(quaternion_from_xyzw(v)?),
        };
        let t = Target {
            orientation,
            ..Target::position(position)
        };
        t.validate()?;
        Ok(t)
    }

    /// The target a share `s` (0 to 1) of the way from `self` to `to`: the
    /// position on the straight line between the two, the orientation as
    /// [`Orientation::toward`] turns it, the weights `to`'s. What a
    /// Cartesian path asks of the tip between two of its points.
    pub fn toward(&self, to: &Target, s: f64) -> Target {
        Target {
            position: self.position.lerp(&to.position, s),
            orientation: self.orientation.toward(&to.orientation, s),
            ..to.clone()
        }
    }

    /// True when orientation takes part in the solve.
    pub fn wants_orientation(&self) -> bool {
        !self.orientation.is_free() && self.orientation_weight > 0.0
    }

    /// How many of the tip's six degrees of freedom the target constrains
    /// (6, 5 or 3): a chain with more joints has self-motion to steer.
    pub fn constraints(&self) -> usize {
        let o = if self.orientation_weight > 0.0 {
            self.orientation.constraints()
        } else {
            0
        };
        3 + o
    }

    /// Rejects NaN, infinite or negative values before any solver sees them.
    pub fn validate(&self) -> Result<(), IkError> {
        check_finite("position", self.position.as_slice())?;
        if let Orientation::Axis(p) = &self.orientation {
            for (field, v) in [("axis", p.direction), ("tool_axis", p.tool)] {
                check_finite(field, v.as_slice())?;
                let n = v.norm();
                if (n - 1.0).abs() > UNIT_TOLERANCE {
                    return Err(IkError::InvalidTarget {
                        field,
                        why: format!("direction {:?} has length {n:.3e}, not 1", v.as_slice()),
                    });
                }
            }
        }
        if let Orientation::Full(q) = &self.orientation {
            check_finite("orientation", q.coords.as_slice())?;
            // The field is public: `UnitQuaternion::new_unchecked` can put
            // any quaternion in. A zero or scaled one would measure a
            // meaningless orientation error (zero reads as "no error").
            let n = q.coords.norm();
            if (n - 1.0).abs() > UNIT_TOLERANCE {
                return Err(IkError::InvalidTarget {
                    field: "orientation",
                    why: format!("quaternion {:?} has length {n:.3e}, not 1", q.coords),
                });
            }
        }
        for (field, w) in [
            ("position_weight", self.position_weight),
            ("orientation_weight", self.orientation_weight),
        ] {
            if !w.is_finite() {
                return Err(IkError::NonFiniteTarget {
                    field,
                    value: w.to_string(),
                });
            }
            if w < 0.0 {
                return Err(IkError::InvalidTarget {
                    field,
                    why: format!("weight {w} is negative"),
                });
            }
        }
        if self.position_weight == 0.0 && !self.wants_orientation() {
            return Err(IkError::InvalidTarget {
                field: "position_weight",
                why: "both weights are zero: nothing to solve for".into(),
            });
        }
        Ok(())
    }
}

/// How far from 1 the length of a target's quaternion may be.
const UNIT_TOLERANCE: f64 = 1e-6;

/// How far from 1 the length of a quaternion given as a target may be: one
/// rule for every way a target comes in (topics, `sim` lines, `solve
/// --orientation`, bags, scenarios). Within it, rounding in the sender (a
/// quaternion typed with 3 or 4 decimals, or sent as `float32`) is
/// normalised away; outside it the numbers are not a rotation that was
/// meant, and guessing one would move the arm somewhere nobody asked for.
pub const QUATERNION_LENGTH_TOLERANCE: f64 = 1e-3;

/// A unit quaternion from ROS's `x, y, z, w` order: normalised when its
/// length is within [`QUATERNION_LENGTH_TOLERANCE`] of 1, refused outside,
/// naming the length.
pub fn quaternion_from_xyzw(v: [f64; 4]) -> Result<UnitQuaternion<f64>, IkError> {
    check_finite("orientation", &v)?;
    // Scaled by the largest component first: the squares of components
    // beyond ~1e154 overflow.
    let big = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let q = Quaternion::new(v[3], v[0], v[1], v[2]) / if big > 0.0 { big } else { 1.0 };
    let n = q.norm() * big;
    if (n - 1.0).abs() > QUATERNION_LENGTH_TOLERANCE {
        return Err(IkError::InvalidTarget {
            field: "orientation",
            why: format!(
                "quaternion {v:?} has length {n:.6e}; a rotation has length 1 \
                 (within {QUATERNION_LENGTH_TOLERANCE:e}, which is normalised away)"
            ),
        });
    }
    Ok(UnitQuaternion::from_quaternion(q))
}

fn check_finite(field: &'static str, v: &[f64]) -> Result<(), IkError> {
    if v.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(IkError::NonFiniteTarget {
            field,
            value: format!("{v:?}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_between_two_is_on_the_line_and_turned_the_short_way() {
        use std::f64::consts::PI;
        let a = Target::pose(Vector3::new(0.1, 0.0, 0.2), UnitQuaternion::identity());
        let turned = UnitQuaternion::from_euler_angles(0.0, 0.0, 1.5 * PI);
        let b = Target::pose(Vector3::new(0.3, 0.2, 0.0), turned);
        let m = a.toward(&b, 0.25);
        assert!((m.position - Vector3::new(0.15, 0.05, 0.15)).norm() < 1e-12);
        // 1.5 turns of yaw one way is half a turn the other: a quarter of
        // the way is an eighth of a turn back.
        assert!((a.orientation.turn_to(&b.orientation) - 0.5 * PI).abs() < 1e-12);
        let q = m.orientation.full().unwrap();
        assert!(
            (q.angle_to(&UnitQuaternion::from_euler_angles(0.0, 0.0, -PI / 8.0))).abs() < 1e-12
        );
        let down = Target::axis(a.position, -Vector3::z_axis());
        let side = Target::axis(b.position, Vector3::x_axis());
        let Orientation::Axis(p) = down.toward(&side, 0.5).orientation else {
            panic!("a pointing between two pointings")
        };
        let half = Vector3::new(1.0, 0.0, -1.0).normalize();
        assert!((p.direction.into_inner() - half).norm() < 1e-12);
        assert!((down.orientation.turn_to(&side.orientation) - PI / 2.0).abs() < 1e-12);
        // From a pose to a position only: nothing to turn along.
        let free = a.toward(&Target::position(b.position), 0.5);
        assert_eq!(free.orientation, Orientation::Free);
        assert_eq!(a.orientation.turn_to(&Orientation::Free), 0.0);
    }

    #[test]
    fn nan_and_zero_quaternions_are_rejected() {
        assert!(matches!(
            Target::from_xyzw([f64::NAN, 0.0, 0.0], None),
            Err(IkError::NonFiniteTarget {
                field: "position",
                ..
            })
        ));
        assert!(matches!(
            Target::from_xyzw([0.1, 0.0, 0.0], Some([0.0, 0.0, 0.0, 0.0])),
            Err(IkError::InvalidTarget {
                field: "orientation",
                ..
            })
        ));
    }

    /// One rule: within 1e-3 of unit length a quaternion is normalised,
    /// outside it refused with its length, however small or large.
    #[test]
    fn quaternions_near_unit_length_are_normalised_and_others_refused() {
        let t = Target::from_xyzw([0.1, 0.0, 0.0], Some([0.0, 0.0, 0.0, 1.0009])).unwrap();
        assert!((t.orientation.full().unwrap().w - 1.0).abs() < 1e-15);
        let t = Target::from_xyzw([0.1, 0.0, 0.0], Some([0.0, 0.0, 0.707, 0.707])).unwrap();
        assert!((t.orientation.full().unwrap().coords.norm() - 1.0).abs() < 1e-15);
        for w in [1e-9, 1e-6, 0.5, 0.998, 1.002, 2.0, 1e10] {
            let e = Target::from_xyzw([0.1, 0.0, 0.0], Some([0.0, 0.0, 0.0, w]))
                .unwrap_err()
                .to_string();
            assert!(e.contains("has length") && e.contains("1e-3"), "{w}: {e}");
            assert!(e.contains(&format!("{w:.6e}")), "{w}: {e}");
        }
    }
}
