//! What a replay check can find, as types: the kind of a failing target
//! message, the limit a tick broke, and the checks themselves with the
//! failures each one covers. Serialised in snake_case, as the report's JSON
//! and the JUnit names spell them.

use serde::Serialize;
use std::fmt;

/// Why a target message failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// Solved, but too far off: the arm held.
    Unreachable,
    /// Refused by the node core (NaN, bad quaternion, stale, wrong frame)
    /// or by the solver.
    Rejected,
    /// Could not be decoded.
    Malformed,
    /// Not the type the node takes on that topic.
    WrongType,
    /// Reached, but the IK answer's error is above the threshold.
    PositionError,
    /// Refused: every solution found puts the arm in collision.
    Collision,
}

/// Which limit a tick's joint state broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitKind {
    JointLimit,
    Velocity,
    Acceleration,
    NotFinite,
}

/// One pass/fail line of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckName {
    BagRead,
    Targets,
    Reachable,
    ValidInput,
    PositionError,
    TrackingError,
    JointLimits,
    VelocityLimits,
    AccelerationLimits,
    Finite,
    /// No target refused as in collision, no tick ending in collision.
    Collision,
}

impl CheckName {
    /// The message failures this check fails on.
    pub fn failure_kinds(self) -> &'static [FailureKind] {
        match self {
            CheckName::Reachable => &[FailureKind::Unreachable],
            CheckName::ValidInput => &[
                FailureKind::Rejected,
                FailureKind::Malformed,
                FailureKind::WrongType,
            ],
            CheckName::PositionError => &[FailureKind::PositionError],
            CheckName::Collision => &[FailureKind::Collision],
            _ => &[],
        }
    }

    /// The tick failures this check fails on.
    pub fn limit_kind(self) -> Option<LimitKind> {
        match self {
            CheckName::JointLimits => Some(LimitKind::JointLimit),
            CheckName::VelocityLimits => Some(LimitKind::Velocity),
            CheckName::AccelerationLimits => Some(LimitKind::Acceleration),
            CheckName::Finite => Some(LimitKind::NotFinite),
            _ => None,
        }
    }
}

/// The snake_case name serde gives a unit variant, for the text outputs.
fn snake_name<T: Serialize>(v: &T, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => f.pad(&s),
        _ => Err(fmt::Error),
    }
}

macro_rules! display_by_serde_name {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                snake_name(self, f)
            }
        }
    )*};
}

display_by_serde_name!(FailureKind, LimitKind, CheckName);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_snake_case_of_the_json() {
        assert_eq!(FailureKind::WrongType.to_string(), "wrong_type");
        assert_eq!(LimitKind::NotFinite.to_string(), "not_finite");
        assert_eq!(
            CheckName::AccelerationLimits.to_string(),
            "acceleration_limits"
        );
        assert_eq!(
            serde_json::to_string(&CheckName::BagRead).unwrap(),
            "\"bag_read\""
        );
    }
}
