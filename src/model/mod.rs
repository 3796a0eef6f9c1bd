//! The kinematic model: a serial chain of moving joints between a base link
//! and a tip link, read from a URDF.
//!
//! Fixed joints are folded into the origin of the next moving joint (or into
//! the tip offset), so forward kinematics touches only the joints that move.

mod body;
mod error;
mod extra;
mod finite;
mod kinematics;
mod urdf;
mod urdf_text;
mod xacro;

pub use body::{BodyJoint, BodyLink, CollisionShape, Geometry, RobotBody};
pub use error::ModelError;
pub use extra::{ExtraJoint, Mimic};
pub use kinematics::{Frames, Twist, axis_rotation};
pub use urdf::{ChainSelection, LinkPose, RobotTree};

use nalgebra::{IsometryMatrix3, Unit, Vector3};

/// A rigid transform. Rotation matrices compose faster than quaternions in
/// the forward-kinematics loop and never need renormalising.
pub type Transform = IsometryMatrix3<f64>;

/// How a joint moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JointKind {
    /// Rotates about its axis within `[lower, upper]`.
    Revolute,
    /// Rotates about its axis without limit; angles are kept in `[-pi, pi]`.
    Continuous,
    /// Slides along its axis within `[lower, upper]` (metres).
    Prismatic,
}

impl JointKind {
    pub fn name(self) -> &'static str {
        match self {
            JointKind::Revolute => "revolute",
            JointKind::Continuous => "continuous",
            JointKind::Prismatic => "prismatic",
        }
    }

    /// Rotating joints (revolute and continuous).
    pub fn rotates(self) -> bool {
        !matches!(self, JointKind::Prismatic)
    }
}

/// Position limits of one joint. Continuous joints have infinite bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub lower: f64,
    pub upper: f64,
}

impl Limits {
    pub const UNBOUNDED: Limits = Limits {
        lower: f64::NEG_INFINITY,
        upper: f64::INFINITY,
    };

    pub fn contains(&self, q: f64) -> bool {
        q >= self.lower && q <= self.upper
    }

    pub fn clamp(&self, q: f64) -> f64 {
        q.clamp(self.lower, self.upper)
    }

    /// The middle of the range (0 for unbounded joints).
    pub fn mid(&self) -> f64 {
        if self.lower.is_finite() && self.upper.is_finite() {
            0.5 * (self.lower + self.upper)
        } else {
            0.0
        }
    }
}

/// One moving joint of a chain.
#[derive(Debug, Clone)]
pub struct Joint {
    pub name: String,
    pub kind: JointKind,
    /// Transform from the previous moving joint's frame (after its motion),
    /// or from the base link, to this joint's frame; fixed joints in between
    /// are folded in.
    pub origin: Transform,
    /// Unit axis in this joint's frame.
    pub axis: Unit<Vector3<f64>>,
    pub limits: Limits,
    /// Maximum speed from the URDF (rad/s or m/s); infinite when absent.
    pub max_velocity: f64,
}

impl Joint {
    /// The joint's own motion for position `q`.
    #[inline]
    pub fn motion(&self, q: f64) -> Transform {
        match self.kind {
            JointKind::Prismatic => {
                Transform::translation(self.axis.x * q, self.axis.y * q, self.axis.z * q)
            }
            _ => Transform::from_parts(
                nalgebra::Translation3::identity(),
                nalgebra::Rotation3::from_axis_angle(&self.axis, q),
            ),
        }
    }

    /// Brings `q` into the joint's range: clamps bounded joints and wraps
    /// continuous ones into `[-pi, pi]`. NaN becomes the middle of the range.
    pub fn normalize(&self, q: f64) -> f64 {
        if !q.is_finite() {
            return self.limits.mid();
        }
        match self.kind {
            JointKind::Continuous => wrap_angle(q),
            _ => self.limits.clamp(q),
        }
    }

    /// The range random restarts sample from: the limits, or `[-pi, pi]` for
    /// continuous joints. Always finite: a missing bound (URDF 1.2 allows
    /// omitting `lower`/`upper`, meaning no limit) is replaced by one turn
    /// (or 1 m for prismatic joints) from the other bound, or from 0.
    pub fn sample_range(&self) -> (f64, f64) {
        use std::f64::consts::PI;
        match self.kind {
            JointKind::Continuous => (-PI, PI),
            _ => {
                let half = if self.kind.rotates() { PI } else { 1.0 };
                let (lo, hi) = (self.limits.lower, self.limits.upper);
                match (lo.is_finite(), hi.is_finite()) {
                    (true, true) => (lo, hi),
                    (true, false) => (lo, lo + 2.0 * half),
                    (false, true) => (hi - 2.0 * half, hi),
                    (false, false) => (-half, half),
                }
            }
        }
    }
}

/// Wraps an angle into `[-pi, pi]`.
pub fn wrap_angle(a: f64) -> f64 {
    use std::f64::consts::{PI, TAU};
    if (-PI..=PI).contains(&a) {
        a
    } else {
        let w = (a + PI).rem_euclid(TAU) - PI;
        if w < -PI { w + TAU } else { w }
    }
}

/// A serial kinematic chain from `base` to `tip`.
#[derive(Debug, Clone)]
pub struct Chain {
    /// Where the URDF came from: a file path or `robot_description`.
    pub source: String,
    /// The robot's name in the URDF.
    pub robot: String,
    pub base: String,
    pub tip: String,
    pub joints: Vec<Joint>,
    /// Transform from the last moving joint's frame to the tip link.
    pub tip_offset: Transform,
    /// The robot's other moving joints (a gripper, mimic fingers), in URDF
    /// order: not solved for, but published and, unless they mimic
    /// another joint, commanded.
    pub extras: Vec<ExtraJoint>,
    /// The whole robot's links and collision shapes, for the collision
    /// checker; shared, since chains are cloned freely.
    pub body: std::sync::Arc<RobotBody>,
}

impl Chain {
    /// Loads the chain from a URDF file. `base`/`tip` default as described in
    /// [`RobotTree::chain`].
    pub fn from_urdf_file(
        path: impl AsRef<std::path::Path>,
        base: Option<&str>,
        tip: Option<&str>,
    ) -> Result<Chain, ModelError> {
        RobotTree::from_file(path)?.chain(&ChainSelection::new(base, tip))
    }

    /// Loads the chain from URDF XML text (ROS passes it as the
    /// `robot_description` parameter or topic).
    pub fn from_urdf_str(
        xml: &str,
        base: Option<&str>,
        tip: Option<&str>,
    ) -> Result<Chain, ModelError> {
        RobotTree::from_str(xml, "robot_description")?.chain(&ChainSelection::new(base, tip))
    }

    /// Number of moving joints.
    pub fn dof(&self) -> usize {
        self.joints.len()
    }

    pub fn joint_names(&self) -> Vec<&str> {
        self.joints.iter().map(|j| j.name.as_str()).collect()
    }

    /// The middle of every joint's range.
    pub fn mid_configuration(&self) -> Vec<f64> {
        self.joints.iter().map(|j| j.limits.mid()).collect()
    }

    /// True when every value is finite and inside its joint's limits.
    pub fn within_limits(&self, q: &[f64]) -> bool {
        q.len() == self.joints.len()
            && q.iter()
                .zip(&self.joints)
                .all(|(&v, j)| v.is_finite() && j.limits.contains(v))
    }
}
