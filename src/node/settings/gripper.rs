//! Gripper settings: which joint is the gripper, its open and closed
//! positions, and the load at which it counts as stalled; resolved against
//! the robot into a [`Gripper`].

use super::SettingError;
use crate::model::Chain;
use crate::node::joints::JointLayout;

/// The `gripper_joint` keyword for "the only actuated joint off the chain".
pub const AUTO_GRIPPER: &str = "auto";

/// Which joint the gripper commands move.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum GripperJoint {
    /// The only actuated joint off the chain, if there is exactly one (a
    /// robot with several, e.g. other legs, then has no gripper).
    #[default]
    Auto,
    /// No gripper: gripper commands are refused.
    None,
    /// This joint, which must be actuated and off the chain.
    Named(String),
}

impl GripperJoint {
    /// `gripper_joint` as the ROS parameter spells it: `auto`, empty for
    /// none, or a joint name.
    pub fn parse(s: &str) -> GripperJoint {
        match s.trim() {
            "" => GripperJoint::None,
            AUTO_GRIPPER => GripperJoint::Auto,
            name => GripperJoint::Named(name.to_owned()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            GripperJoint::Auto => AUTO_GRIPPER,
            GripperJoint::None => "",
            GripperJoint::Named(n) => n,
        }
    }
}

/// The gripper as the parameters describe it.
#[derive(Debug, Clone, PartialEq)]
pub struct GripperSettings {
    pub joint: GripperJoint,
    /// Where `open` puts it (URDF units); `None`: the end of its range
    /// farther from zero.
    pub open: Option<f64>,
    /// Where `close` puts it; `None`: the end of its range nearer zero
    /// (URDF grippers are modelled closed at zero, and a closed position at
    /// the range's end squeezes what it holds).
    pub closed: Option<f64>,
    /// A servo load above this fraction of its maximum (0..=1), while the
    /// gripper is short of its command, counts as a stall.
    pub stall_load: f64,
}

impl Default for GripperSettings {
    fn default() -> Self {
        GripperSettings {
            joint: GripperJoint::Auto,
            open: None,
            closed: None,
            stall_load: 0.6,
        }
    }
}

/// The resolved gripper: which axis, and its positions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gripper {
    /// The node's axis (see [`JointLayout`]).
    pub axis: usize,
    pub open: f64,
    pub closed: f64,
    pub stall_load: f64,
}

/// A position parameter (`gripper_open`, `gripper_closed`); blank: `None`.
pub fn parse_position(name: &'static str, s: &str) -> Result<Option<f64>, SettingError> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(Some(x)),
        _ => Err(SettingError::new(
            name,
            format!("'{s}'"),
            "is not a number; give a position of the gripper joint, or leave it empty for its limit",
        )),
    }
}

impl GripperSettings {
    /// Checks what needs no robot.
    pub fn validate(&self) -> Result<(), SettingError> {
        let l = self.stall_load;
        if !(l.is_finite() && l > 0.0 && l <= 1.0) {
            return Err(SettingError::new(
                "gripper_stall_load",
                l,
                "must be a fraction of the servo's maximum load, in (0, 1]",
            ));
        }
        Ok(())
    }

    /// The gripper on `chain`, or `None` when there is none; a named joint
    /// that is not an actuated joint off the chain, or a position outside
    /// its limits, is refused.
    pub fn resolve(&self, chain: &Chain) -> Result<Option<Gripper>, SettingError> {
        self.validate()?;
        let layout = JointLayout::new(chain);
        let axis = match &self.joint {
            GripperJoint::None => return Ok(None),
            GripperJoint::Auto if layout.extras().len() == 1 => layout.dof(),
            GripperJoint::Auto => return Ok(None),
            GripperJoint::Named(name) => named_axis(&layout, name)?,
        };
        let limits = layout.limits(chain, axis);
        let (near, far) = if limits.lower.abs() <= limits.upper.abs() {
            (limits.lower, limits.upper)
        } else {
            (limits.upper, limits.lower)
        };
        let joint = &layout.names()[axis];
        let within = |name: &'static str, x: Option<f64>, default: f64| match x {
            Some(x) if !limits.contains(x) => Err(SettingError::new(
                name,
                x,
                format!(
                    "is outside the limits of '{joint}', [{}, {}]",
                    limits.lower, limits.upper
                ),
            )),
            Some(x) => Ok(x),
            None if default.is_finite() => Ok(default),
            None => Err(SettingError::new(
                name,
                "''",
                format!("'{joint}' has no limit to open or close to: give a position"),
            )),
        };
        Ok(Some(Gripper {
            axis,
            open: within("gripper_open", self.open, far)?,
            closed: within("gripper_closed", self.closed, near)?,
            stall_load: self.stall_load,
        }))
    }
}

/// The axis of the joint `gripper_joint` names.
fn named_axis(layout: &JointLayout, name: &str) -> Result<usize, SettingError> {
    let refuse = |why: String| Err(SettingError::new("gripper_joint", format!("'{name}'"), why));
    match layout.axis(name) {
        Some(axis) if axis >= layout.dof() => Ok(axis),
        Some(_) => refuse("is a joint of the arm's chain, not a gripper".into()),
        None => match layout.leader_of(name) {
            Some(leader) => refuse(format!("mimics '{leader}': name '{leader}' instead")),
            None => {
                let known: Vec<&str> = layout.extras().iter().map(|e| e.name.as_str()).collect();
                refuse(format!(
                    "is not a moving joint off the chain (those are: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm() -> Chain {
        Chain::from_urdf_str(include_str!("../../../urdf/arm.urdf"), None, None).unwrap()
    }

    #[test]
    fn the_arms_only_extra_is_its_gripper_closed_at_zero() {
        let g = GripperSettings::default().resolve(&arm()).unwrap().unwrap();
        assert_eq!((g.axis, g.open, g.closed), (5, 1.2, 0.0));
        let named = GripperSettings {
            joint: GripperJoint::parse("gripper"),
            open: Some(0.8),
            ..GripperSettings::default()
        };
        assert_eq!(named.resolve(&arm()).unwrap().unwrap().open, 0.8);
        let none = GripperSettings {
            joint: GripperJoint::parse(" "),
            ..GripperSettings::default()
        };
        assert_eq!(none.resolve(&arm()).unwrap(), None);
        // A robot without joints off the chain has no gripper.
        let leg = Chain::from_urdf_str(include_str!("../../../urdf/leg.urdf"), None, None).unwrap();
        assert_eq!(GripperSettings::default().resolve(&leg).unwrap(), None);
    }

    #[test]
    fn a_wrong_gripper_is_refused_naming_the_parameter_and_the_joint() {
        let refused = |s: GripperSettings| s.resolve(&arm()).unwrap_err();
        let d = GripperSettings::default;
        let e = refused(GripperSettings {
            joint: GripperJoint::parse("elbow"),
            ..d()
        });
        assert_eq!(e.name, "gripper_joint");
        assert!(e.why.contains("chain"), "{e}");
        let e = refused(GripperSettings {
            joint: GripperJoint::parse("gripper_mirror"),
            ..d()
        });
        assert!(e.why.contains("mimics 'gripper'"), "{e}");
        let e = refused(GripperSettings {
            joint: GripperJoint::parse("claw"),
            ..d()
        });
        assert!(
            e.to_string().contains("'claw'") && e.why.contains("gripper"),
            "{e}"
        );
        let e = refused(GripperSettings {
            open: Some(1.5),
            ..d()
        });
        assert_eq!(e.name, "gripper_open");
        assert!(e.why.contains("[0, 1.2]"), "{e}");
        let e = refused(GripperSettings {
            stall_load: 0.0,
            ..d()
        });
        assert_eq!(e.name, "gripper_stall_load");
        let e = parse_position("gripper_closed", "shut").unwrap_err();
        assert_eq!(e.name, "gripper_closed");
        assert_eq!(parse_position("gripper_closed", " 0.1 "), Ok(Some(0.1)));
        assert_eq!(parse_position("gripper_closed", ""), Ok(None));
    }
}
