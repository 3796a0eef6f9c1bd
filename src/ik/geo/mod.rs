//! Closed-form IK for 6R arms by subproblem decomposition (the IK-Geo
//! approach of Elias and Wen, 2022): every solution of a 6D target from
//! the Paden-Kahan subproblems 1 to 4, no iteration and no 1D search, for
//! the arm families where that is possible ([`Family`]): three parallel
//! axes (UR-like) and a spherical wrist with axes 1, 2 intersecting or
//! axes 2, 3 parallel (most six-axis arms built like industrial ones).
//!
//! The family is read from the URDF at the zero configuration
//! ([`GeoStructure::measure`]), within [`AXIS_TOLERANCE`](crate::ik::AXIS_TOLERANCE) of parallel and
//! [`INTERSECTION_TOLERANCE`] of intersecting. Real URDFs are only
//! approximately ideal (angles written as 1.5708): the closed form is
//! solved on the measured axes and, when the real chain misses the target
//! by more than the tolerance, a few Newton steps on the real
//! chain finish it ([`polish`]).
//!
//! With every branch known the pick is exact: the first within the limits
//! ([`Pick::First`]), or the one nearest the seed ([`Pick::Closest`]; each
//! joint wound by whole turns to the value in its limits nearest the seed,
//! which minimises `|q - seed|` since the distance adds up per joint).

mod branches;
mod parallel;
mod polish;
mod solver;
mod sp1;
mod sp2;
mod sp3;
mod sp4;
mod spherical;
mod structure;

pub use solver::GeoSolver;
pub use structure::{Family, GeoStructure};

pub(crate) use sp1::{sp1, sp1_degenerate};
pub(crate) use sp2::sp2;
pub(crate) use sp3::Sp3;
pub(crate) use sp4::{Sp4, sp4};

use crate::model::axis_rotation;
use nalgebra::{Matrix3, Vector3};

/// Tolerance (m) on "intersecting" axes: the common point may miss each
/// axis by this much. The Newton polish absorbs such offsets; larger ones
/// mean another mechanism.
pub const INTERSECTION_TOLERANCE: f64 = 1e-4;

/// Which of the solutions within the limits to return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pick {
    /// The first branch within the limits (speed mode).
    #[default]
    First,
    /// The branch nearest the seed: the exact optimum of `|q - seed|`, and
    /// when tracking (the seed is the last answer) the continuous branch.
    Closest,
}

/// Options of the geo solver.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GeoOptions {
    pub pick: Pick,
}

/// The rotation by `angle` about the unit `axis` (Rodrigues).
#[inline]
pub(crate) fn rot(axis: &Vector3<f64>, angle: f64) -> Matrix3<f64> {
    Turn::new(angle).rot(axis)
}

/// A joint angle with its sine and cosine. The subproblems find an angle
/// from a sine and a cosine they already hold (`atan2`, `acos`), so they
/// hand all three on: the next rotation and the check of the branch on
/// the real chain ([`Chain::fk_trig`](crate::model::Chain::fk_trig)) then
/// need no `sin_cos` (it was a fifth of `solve_all`'s time).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Turn {
    pub angle: f64,
    pub sin: f64,
    pub cos: f64,
}

impl Default for Turn {
    fn default() -> Self {
        Turn::ZERO
    }
}

impl Turn {
    pub const ZERO: Turn = Turn {
        angle: 0.0,
        sin: 0.0,
        cos: 1.0,
    };

    #[inline]
    pub fn new(angle: f64) -> Turn {
        let (sin, cos) = angle.sin_cos();
        Turn { angle, sin, cos }
    }

    /// The angle of the vector `(x, y)` of any length (`atan2(y, x)`);
    /// zero for the zero vector.
    #[inline]
    pub fn atan2(y: f64, x: f64) -> Turn {
        let n = (x * x + y * y).sqrt();
        if n > 0.0 && n.is_finite() {
            Turn {
                angle: y.atan2(x),
                sin: y / n,
                cos: x / n,
            }
        } else {
            Turn::new(y.atan2(x))
        }
    }

    /// `acos(c)` for `c` in `[-1, 1]`, its sine non-negative.
    #[inline]
    pub fn acos(c: f64) -> Turn {
        Turn {
            angle: c.acos(),
            sin: (1.0 - c * c).max(0.0).sqrt(),
            cos: c,
        }
    }

    #[inline]
    pub fn neg(self) -> Turn {
        Turn {
            angle: -self.angle,
            sin: -self.sin,
            cos: self.cos,
        }
    }

    /// `sign * angle` for `sign` ±1 (an axis taken the other way round).
    #[inline]
    pub fn times_sign(self, sign: f64) -> Turn {
        if sign < 0.0 { self.neg() } else { self }
    }

    #[inline]
    pub fn plus(self, o: Turn) -> Turn {
        Turn {
            angle: self.angle + o.angle,
            sin: self.sin * o.cos + self.cos * o.sin,
            cos: self.cos * o.cos - self.sin * o.sin,
        }
    }

    #[inline]
    pub fn minus(self, o: Turn) -> Turn {
        self.plus(o.neg())
    }

    /// Half a turn more.
    #[inline]
    pub fn flipped(self) -> Turn {
        Turn {
            angle: self.angle + std::f64::consts::PI,
            sin: -self.sin,
            cos: -self.cos,
        }
    }

    /// The rotation by this angle about the unit `axis`.
    #[inline]
    pub fn rot(&self, axis: &Vector3<f64>) -> Matrix3<f64> {
        axis_rotation(axis, self.sin, self.cos)
    }
}
