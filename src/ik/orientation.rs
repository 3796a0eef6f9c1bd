//! What a target asks of the tip's orientation: all of it, one tool axis
//! pointing along a direction (the roll about it free), or nothing.

use super::IkError;
use super::geometry::perpendicular;
use nalgebra::{Unit, UnitQuaternion, Vector3};
use std::fmt;
use std::str::FromStr;

/// What a [`super::Target`] asks of the tip's orientation. One enum, so
/// that every solver and the metric match on the kind and none can take a
/// pointing target for a pose or a position (the analytic and geo solvers
/// refuse the kinds they do not solve, naming them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Orientation {
    /// Nothing: the position only (3 constraints).
    Free,
    /// The whole rotation (6 constraints with the position).
    Full(UnitQuaternion<f64>),
    /// A tool axis pointing along a direction, free to roll about it (5
    /// constraints with the position): "the gripper straight down at the
    /// cup". A 6-joint arm has one joint to spare for it.
    Axis(Pointing),
}

/// A tool axis and the direction it should point in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pointing {
    /// The wanted direction, in the chain's base frame.
    pub direction: Unit<Vector3<f64>>,
    /// The axis of the tip frame that points along it (by default +z, the
    /// approach axis of a ROS tool frame such as UR5's `tool0`).
    pub tool: Unit<Vector3<f64>>,
}

impl Pointing {
    /// `direction` for the tip's +z axis.
    pub fn along(direction: Unit<Vector3<f64>>) -> Pointing {
        Pointing {
            direction,
            tool: Vector3::z_axis(),
        }
    }
}

impl Orientation {
    /// The full rotation, when that is what is asked.
    pub fn full(&self) -> Option<UnitQuaternion<f64>> {
        match self {
            Orientation::Full(q) => Some(*q),
            _ => None,
        }
    }

    /// A rotation that meets what is asked, to show it (a marker): the
    /// rotation itself, or for a pointing target the shortest turn of the
    /// tool axis onto its direction (one of its rolls); `None` for none.
    pub fn shown(&self) -> Option<UnitQuaternion<f64>> {
        match self {
            Orientation::Free => None,
            Orientation::Full(q) => Some(*q),
            Orientation::Axis(p) => Some(
                UnitQuaternion::rotation_between_axis(&p.tool, &p.direction).unwrap_or_else(|| {
                    // Opposite: half a turn about any axis across the tool.
                    let across = Unit::new_normalize(perpendicular(&p.tool));
                    UnitQuaternion::from_axis_angle(&across, std::f64::consts::PI)
                }),
            ),
        }
    }

    /// True when nothing is asked of the orientation.
    pub fn is_free(&self) -> bool {
        matches!(self, Orientation::Free)
    }

    /// How many of the tip's six degrees of freedom the orientation
    /// constrains: 3, 2 (the roll about the axis is free) or 0.
    pub fn constraints(&self) -> usize {
        match self {
            Orientation::Free => 0,
            Orientation::Full(_) => 3,
            Orientation::Axis(_) => 2,
        }
    }

    /// The orientation a share `s` (0 to 1) of the way from `self` to
    /// `to`, turned the short way round (slerp); the turn between the two
    /// is [`Orientation::turn_to`]. Two kinds do not mix: where the kinds
    /// differ, or either is free, there is nothing to turn along and the
    /// way is free ([`Orientation::Free`]). A pointing direction turned
    /// exactly half a turn has no one way round and keeps `self`'s.
    pub fn toward(&self, to: &Orientation, s: f64) -> Orientation {
        match (self, to) {
            (Orientation::Full(a), Orientation::Full(b)) => Orientation::Full(a.slerp(b, s)),
            (Orientation::Axis(a), Orientation::Axis(b)) if a.tool == b.tool => {
                Orientation::Axis(Pointing {
                    direction: a.direction.slerp(&b.direction, s),
                    tool: a.tool,
                })
            }
            _ => Orientation::Free,
        }
    }

    /// The angle (rad) the tip turns from `self` to `to` along
    /// [`Orientation::toward`]: 0 where that way is free.
    pub fn turn_to(&self, to: &Orientation) -> f64 {
        match (self, to) {
            (Orientation::Full(a), Orientation::Full(b)) => a.angle_to(b),
            (Orientation::Axis(a), Orientation::Axis(b)) if a.tool == b.tool => {
                a.direction.angle(&b.direction)
            }
            _ => 0.0,
        }
    }

    /// The name of the target kind, as errors and docs say it.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Orientation::Free => "position-only",
            Orientation::Full(_) => "pose",
            Orientation::Axis(_) => "pointing-axis (5D)",
        }
    }
}

/// What the node (and replay, run, bench) makes of a pose's orientation:
/// one setting, parsed once, that the CLI flags and the ROS parameter
/// both convert into.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum OrientationMode {
    /// The whole rotation counts.
    #[default]
    Full,
    /// Only where the tool axis points counts (a 5D target); the roll is
    /// free.
    Axis { tool: Unit<Vector3<f64>> },
    /// Only the position counts.
    Ignore,
}

impl OrientationMode {
    /// Every mode's name, in the order the docs list them.
    pub const NAMES: [&'static str; 3] = ["full", "axis", "ignore"];

    /// The tool axis of `axis` when none is named (the `tool_axis`
    /// setting's default): the tip's +z, the approach axis of a ROS tool
    /// frame such as UR5's `tool0`. Many URDFs' grippers point along +x
    /// instead, hence the setting.
    pub const DEFAULT_TOOL_AXIS: [f64; 3] = [0.0, 0.0, 1.0];

    /// `axis` for the tip's +z.
    pub fn axis() -> OrientationMode {
        OrientationMode::Axis {
            tool: Vector3::z_axis(),
        }
    }

    /// This mode with `tool` as the tool axis of its 5D targets: the one
    /// place the two settings `target_orientation` and `tool_axis` meet
    /// (the ROS parameters and the CLI flags both end here). `full` and
    /// `ignore` have no tool axis and stay as they are, so the order in
    /// which the two are set does not matter.
    pub fn with_tool(self, tool: Unit<Vector3<f64>>) -> OrientationMode {
        match self {
            OrientationMode::Axis { .. } => OrientationMode::Axis { tool },
            other => other,
        }
    }

    /// The tool axis of a 5D mode; `None` for the others.
    pub fn tool(&self) -> Option<Unit<Vector3<f64>>> {
        match self {
            OrientationMode::Axis { tool } => Some(*tool),
            _ => None,
        }
    }

    /// Refuses a solver that cannot solve the targets this mode makes
    /// (see [`super::SolverKind::supports`]).
    pub fn check_solver(&self, solver: super::SolverKind) -> Result<(), IkError> {
        let asked = self.apply(Some(UnitQuaternion::identity()));
        solver.supports(&asked)
    }

    pub fn name(&self) -> &'static str {
        match self {
            OrientationMode::Full => "full",
            OrientationMode::Axis { .. } => "axis",
            OrientationMode::Ignore => "ignore",
        }
    }

    /// What `orientation` (a full rotation, or none) asks under this mode.
    pub fn apply(&self, orientation: Option<UnitQuaternion<f64>>) -> Orientation {
        match (self, orientation) {
            (_, None) | (OrientationMode::Ignore, _) => Orientation::Free,
            (OrientationMode::Full, Some(q)) => Orientation::Full(q),
            (OrientationMode::Axis { tool }, Some(q)) => Orientation::Axis(Pointing {
                direction: Unit::new_normalize(q * tool.into_inner()),
                tool: *tool,
            }),
        }
    }
}

impl fmt::Display for OrientationMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for OrientationMode {
    type Err = String;
    /// `full`, `axis` (the tip's +z; [`OrientationMode::with_tool`] names
    /// another axis) or `ignore`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "full" => Ok(OrientationMode::Full),
            "axis" => Ok(OrientationMode::axis()),
            "ignore" => Ok(OrientationMode::Ignore),
            _ => Err(format!(
                "'{s}' is not one of {}",
                OrientationMode::NAMES.join(", ")
            )),
        }
    }
}

/// Shortest direction accepted (its length before normalising).
const SHORTEST_DIRECTION: f64 = 1e-9;

/// A unit direction from three numbers given as `field`: refused when
/// not finite or (nearly) zero, naming the field; normalised otherwise (a
/// direction's length says nothing, so any length is accepted).
pub fn direction_from_xyz(field: &'static str, v: [f64; 3]) -> Result<Unit<Vector3<f64>>, IkError> {
    if !v.iter().all(|x| x.is_finite()) {
        return Err(IkError::NonFiniteTarget {
            field,
            value: format!("{v:?}"),
        });
    }
    let big = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let scaled = Vector3::from(v) / if big > 0.0 { big } else { 1.0 };
    if big * scaled.norm() < SHORTEST_DIRECTION {
        return Err(IkError::InvalidTarget {
            field,
            why: format!("direction {v:?} is zero; it needs a non-zero length"),
        });
    }
    Ok(Unit::new_normalize(scaled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_are_normalised_and_zero_or_nan_refused() {
        let d = direction_from_xyz("axis", [0.0, 0.0, -3.0]).unwrap();
        assert!((d.into_inner() - Vector3::new(0.0, 0.0, -1.0)).norm() < 1e-15);
        let e = direction_from_xyz("axis", [0.0, 0.0, 0.0]).unwrap_err();
        assert!(
            matches!(e, IkError::InvalidTarget { field: "axis", .. }),
            "{e}"
        );
        let e = direction_from_xyz("axis", [f64::NAN, 0.0, 1.0]).unwrap_err();
        assert!(
            matches!(e, IkError::NonFiniteTarget { field: "axis", .. }),
            "{e}"
        );
    }

    /// `axis` keeps where the tool's +z points and nothing of the roll.
    #[test]
    fn the_axis_mode_keeps_the_tool_axis_of_a_rotation() {
        let q = UnitQuaternion::from_euler_angles(std::f64::consts::PI, 0.0, 0.3);
        let Orientation::Axis(p) = OrientationMode::axis().apply(Some(q)) else {
            panic!("not an axis target");
        };
        assert!((p.direction.into_inner() - Vector3::new(0.0, 0.0, -1.0)).norm() < 1e-12);
        assert_eq!(OrientationMode::Ignore.apply(Some(q)), Orientation::Free);
        assert_eq!(OrientationMode::axis().apply(None), Orientation::Free);
        for name in OrientationMode::NAMES {
            assert_eq!(name.parse::<OrientationMode>().unwrap().name(), name);
        }
        assert!(
            "roll"
                .parse::<OrientationMode>()
                .unwrap_err()
                .contains("axis")
        );
    }

    /// With the tool axis +x, what counts is where the pose's +x points:
    /// a quarter turn about z takes +x to +y, and that is the direction.
    #[test]
    fn another_tool_axis_keeps_that_axis_of_a_rotation() {
        let x = Vector3::x_axis();
        let mode = OrientationMode::axis().with_tool(x);
        assert_eq!(mode, OrientationMode::Axis { tool: x });
        assert_eq!(mode.tool(), Some(x));
        let q = UnitQuaternion::from_euler_angles(0.0, 0.0, std::f64::consts::FRAC_PI_2);
        let Orientation::Axis(p) = mode.apply(Some(q)) else {
            panic!("not an axis target");
        };
        assert!((p.direction.into_inner() - Vector3::y()).norm() < 1e-12);
        assert_eq!(p.tool, x);
        // Full and ignore have no tool axis to take.
        assert_eq!(OrientationMode::Full.with_tool(x), OrientationMode::Full);
        assert_eq!(OrientationMode::Ignore.with_tool(x).tool(), None);
        let z = OrientationMode::DEFAULT_TOOL_AXIS;
        assert_eq!(
            OrientationMode::axis().tool(),
            Some(direction_from_xyz("tool_axis", z).unwrap())
        );
    }
}
