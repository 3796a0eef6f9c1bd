//! The robot's moving joints outside the chain: a gripper, its mimic
//! fingers, the other legs of a walking robot. The chain's solvers never
//! see them, but the node publishes them in its joint states (so
//! robot_state_publisher and RViz show the whole robot) and drives the ones
//! that follow no other joint (a gripper).

use super::{JointKind, Limits, ModelError};

/// A joint that follows another (`position = leader * multiplier +
/// offset`), as a URDF `<mimic>` says.
#[derive(Debug, Clone, PartialEq)]
pub struct Mimic {
    pub leader: String,
    pub multiplier: f64,
    pub offset: f64,
}

/// A moving joint of the URDF that is not in the chain.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtraJoint {
    pub name: String,
    pub kind: JointKind,
    pub limits: Limits,
    /// Maximum speed from the URDF (rad/s or m/s); infinite when absent.
    pub max_velocity: f64,
    /// Set when the joint follows another; it is then computed, never
    /// commanded.
    pub mimic: Option<Mimic>,
}

impl ExtraJoint {
    /// Commanded on its own (a gripper), not computed from another joint.
    pub fn actuated(&self) -> bool {
        self.mimic.is_none()
    }

    /// Where it rests until told otherwise: 0 when that is inside its
    /// limits (the URDF's zero pose), else the middle of its range.
    pub fn rest(&self) -> f64 {
        if self.limits.contains(0.0) {
            0.0
        } else {
            self.limits.mid()
        }
    }
}

/// The moving joints of `joints` (the URDF's, in order) that are not named
/// in `chain`, with their mimic relations checked: a leader must be a
/// moving joint of the robot that follows no other.
pub(super) fn extra_joints(
    joints: &[urdf_rs::Joint],
    chain: &[String],
    source: &str,
) -> Result<Vec<ExtraJoint>, ModelError> {
    let moving = |j: &urdf_rs::Joint| kind_of(&j.joint_type).is_some();
    let mut out = Vec::new();
    for j in joints
        .iter()
        .filter(|j| moving(j) && !chain.contains(&j.name))
    {
        let kind = kind_of(&j.joint_type).expect("filtered to moving joints");
        let mimic = match &j.mimic {
            None => None,
            Some(m) => {
                let leader = joints.iter().find(|l| l.name == m.joint);
                if !leader.is_some_and(|l| moving(l) && l.mimic.is_none()) {
                    return Err(ModelError::BadMimic {
                        source_name: source.to_owned(),
                        joint: j.name.clone(),
                        leader: m.joint.clone(),
                    });
                }
                Some(Mimic {
                    leader: m.joint.clone(),
                    multiplier: m.multiplier.unwrap_or(1.0),
                    offset: m.offset.unwrap_or(0.0),
                })
            }
        };
        out.push(ExtraJoint {
            name: j.name.clone(),
            kind,
            limits: match kind {
                JointKind::Continuous => Limits::UNBOUNDED,
                _ => Limits {
                    lower: j.limit.lower,
                    upper: j.limit.upper,
                },
            },
            max_velocity: if j.limit.velocity > 0.0 {
                j.limit.velocity
            } else {
                f64::INFINITY
            },
            mimic,
        });
    }
    Ok(out)
}

/// The joint kinds a node can publish; planar and floating joints are
/// not driven by joint states.
pub(super) fn kind_of(t: &urdf_rs::JointType) -> Option<JointKind> {
    match t {
        urdf_rs::JointType::Revolute => Some(JointKind::Revolute),
        urdf_rs::JointType::Continuous => Some(JointKind::Continuous),
        urdf_rs::JointType::Prismatic => Some(JointKind::Prismatic),
        _ => None,
    }
}
