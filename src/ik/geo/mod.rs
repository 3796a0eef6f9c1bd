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
pub(crate) use sp3::sp3;
pub(crate) use sp4::sp4;

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
    let (s, c) = angle.sin_cos();
    let k = axis;
    let t = 1.0 - c;
    Matrix3::new(
        c + k.x * k.x * t,
        k.x * k.y * t - k.z * s,
        k.x * k.z * t + k.y * s,
        k.y * k.x * t + k.z * s,
        c + k.y * k.y * t,
        k.y * k.z * t - k.x * s,
        k.z * k.x * t - k.y * s,
        k.z * k.y * t + k.x * s,
        c + k.z * k.z * t,
    )
}

/// A unit vector perpendicular to the unit `k`.
#[inline]
pub(crate) fn perpendicular(k: &Vector3<f64>) -> Vector3<f64> {
    let other = if k.x.abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    k.cross(&other).normalize()
}
