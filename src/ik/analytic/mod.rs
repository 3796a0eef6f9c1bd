//! Analytic hip-knee solver: a yaw or roll joint, then two parallel joints, in closed form.
//!
//! The structure is read from the chain at its zero configuration (see
//! [`HipKnee::measure`]): joint 1 turns the whole limb about its axis `u`; joints 2
//! and 3 (hip and knee, or shoulder and elbow) have parallel axes `a`
//! perpendicular to `u`, so they move the limb inside one plane. Everything
//! the limb carries keeps a constant component along `a` (the lateral offset
//! `D`), which fixes joint 1 (two branches, `phi ± acos(D / r)`); the planar
//! two-link problem is then the law of cosines (two bends). Optionally a
//! wrist pitch joint (parallel to `a`) and a wrist roll joint (in the plane)
//! follow; the wrist is placed from an approach pitch ([`approach_pitch`]).
//!
//! Real URDFs are only approximately ideal (rounded `rpy` values, a tool off
//! the roll axis): the closed form lands within the model error and a few
//! Newton steps on the real chain finish the job.

mod planar;
mod polish;
mod solver;
mod structure;

pub use solver::AnalyticSolver;
pub use structure::{HipKnee, Layout, approach_pitch};

use nalgebra::Vector3;

/// Which of the two knee (elbow) solutions to take.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Bend {
    /// The solution closest to the seed (smooth tracking); both branches of
    /// joint 1 are considered too.
    #[default]
    Closest,
    /// Knee bent positively about its own axis, measured from the straight
    /// limb (this is the sign of the joint angle when the links are in line
    /// at zero, as on most legs and arms).
    Positive,
    /// Knee bent negatively about its axis (see [`Bend::Positive`]).
    Negative,
    /// The knee points towards this point (base frame), like the pole
    /// target of a two-bone IK: it ends on the same side of the line from
    /// the hip to the foot (wrist) as the pole.
    Pole(Vector3<f64>),
}

impl std::str::FromStr for Bend {
    type Err = String;

    /// `closest`, `positive`, `negative`, or a pole point `x,y,z` (base
    /// frame, metres), as the command line and the ROS parameter spell it.
    fn from_str(s: &str) -> Result<Bend, String> {
        Ok(match s.trim() {
            "closest" => Bend::Closest,
            "positive" => Bend::Positive,
            "negative" => Bend::Negative,
            other => {
                let v: Vec<f64> = other
                    .split(',')
                    .map(|x| x.trim().parse::<f64>())
                    .collect::<Result<_, _>>()
                    .map_err(|e| {
                        format!(
                            "'{other}': {e}; expected closest, positive, negative or a point x,y,z"
                        )
                    })?;
                match v[..] {
                    [x, y, z] if v.iter().all(|c| c.is_finite()) => {
                        Bend::Pole(nalgebra::Vector3::new(x, y, z))
                    }
                    _ => {
                        return Err(format!(
                            "'{other}': expected closest, positive, negative or a point x,y,z"
                        ));
                    }
                }
            }
        })
    }
}

/// Options of the analytic solver.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AnalyticOptions {
    pub bend: Bend,
    /// Approach pitch (rad, as defined by [`approach_pitch`]) for arms with
    /// a wrist pitch joint when the target has no orientation.
    ///
    /// `None`: the solver picks the pitch, so that every reachable point is
    /// reached: the seed's pitch when the wrist centre is reachable with it
    /// (smooth tracking from a warm seed), otherwise the pitch nearest the
    /// seed's that puts the wrist centre inside the two-link annulus with
    /// the knee in its limits (closed form), and if that breaks another
    /// joint's limits, the nearest one that keeps all joints in their limits
    /// (a short scan of the reachable pitches and a bisection).
    ///
    /// `Some(p)`: the pitch is a constraint. When the position cannot be
    /// reached with pitch `p`, the solver returns the nearest point it can
    /// reach with that pitch (the wrist centre clamped onto the annulus),
    /// flagged `BestEffort(OutOfReach)`; it does not trade the pitch for the
    /// position.
    pub pitch: Option<f64>,
}

/// Tolerance (rad) on "parallel" and "perpendicular" axes. Real URDFs write
/// angles like 1.5708, a few micro-radians off; the Newton polish absorbs
/// such deviations, larger ones mean a different mechanism.
pub const AXIS_TOLERANCE: f64 = 1e-4;
