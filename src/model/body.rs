//! The robot's body as the URDF describes it: every link, the joint that
//! carries it, and its `<collision>` shapes. Plain data, no geometry
//! queries: the collision checker (`crate::collision`, part of the
//! application) turns it into shapes it can measure, and moves them with
//! the joints. Kept beside the chain because the chain is what every part
//! of the application holds, and a URDF given as `robot_description` text
//! has no file to read the shapes from again.

use super::{JointKind, Transform};
use nalgebra::{Rotation3, Translation3, Unit, Vector3};
use std::path::PathBuf;

/// A collision shape's geometry, in its own frame, as URDF gives it
/// (metres). Cylinders and capsules are along their z axis.
#[derive(Debug, Clone, PartialEq)]
pub enum Geometry {
    Box {
        size: [f64; 3],
    },
    Cylinder {
        radius: f64,
        length: f64,
    },
    Capsule {
        radius: f64,
        length: f64,
    },
    Sphere {
        radius: f64,
    },
    /// A mesh file (`package://`, `file://`, absolute or relative to the
    /// URDF's folder), scaled per axis.
    Mesh {
        filename: String,
        scale: [f64; 3],
    },
}

/// One `<collision>` element: a geometry placed in its link's frame.
#[derive(Debug, Clone, PartialEq)]
pub struct CollisionShape {
    pub origin: Transform,
    pub geometry: Geometry,
}

/// The joint that carries a link, from its parent link.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyJoint {
    pub name: String,
    /// Index of the parent link in [`RobotBody::links`] (always before
    /// this link).
    pub parent: usize,
    /// From the parent link's frame to this joint's frame at zero.
    pub origin: Transform,
    pub axis: Unit<Vector3<f64>>,
    /// `None` for a fixed joint (and for planar and floating ones, which
    /// nothing drives: they stay at zero).
    pub kind: Option<JointKind>,
}

/// One link of the robot.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyLink {
    pub name: String,
    /// `None` for the root link.
    pub joint: Option<BodyJoint>,
    pub collisions: Vec<CollisionShape>,
}

/// Every link of the robot, parents before children (the root first).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RobotBody {
    /// The folder of the URDF file, for relative mesh paths; `None` when
    /// the URDF came as text.
    pub folder: Option<PathBuf>,
    pub links: Vec<BodyLink>,
}

impl RobotBody {
    /// The body of a parsed URDF whose links form a tree rooted at `root`.
    pub(super) fn from_urdf(robot: &urdf_rs::Robot, root: &str) -> RobotBody {
        let mut links: Vec<BodyLink> = Vec::with_capacity(robot.links.len());
        let shapes = |name: &str| -> Vec<CollisionShape> {
            robot
                .links
                .iter()
                .find(|l| l.name == name)
                .map(|l| l.collision.iter().map(collision_shape).collect())
                .unwrap_or_default()
        };
        links.push(BodyLink {
            name: root.to_owned(),
            joint: None,
            collisions: shapes(root),
        });
        // Breadth first from the root: parents before children.
        let mut next = 0;
        while next < links.len() {
            let parent = links[next].name.clone();
            for j in robot.joints.iter().filter(|j| j.parent.link == parent) {
                links.push(BodyLink {
                    name: j.child.link.clone(),
                    joint: Some(BodyJoint {
                        name: j.name.clone(),
                        parent: next,
                        origin: pose(&j.origin),
                        axis: Unit::try_new(Vector3::from(*j.axis.xyz), 1e-12)
                            .unwrap_or(Vector3::z_axis()),
                        kind: super::extra::kind_of(&j.joint_type),
                    }),
                    collisions: shapes(&j.child.link),
                });
            }
            next += 1;
        }
        RobotBody {
            folder: None,
            links,
        }
    }

    /// The index of the link called `name`.
    pub fn link(&self, name: &str) -> Option<usize> {
        self.links.iter().position(|l| l.name == name)
    }

    /// The indices of the links carried by `link` (itself excluded).
    pub fn children(&self, link: usize) -> impl Iterator<Item = usize> + '_ {
        self.links
            .iter()
            .enumerate()
            .filter(move |(_, l)| l.joint.as_ref().is_some_and(|j| j.parent == link))
            .map(|(i, _)| i)
    }
}

/// The URDF origin as a transform: rpy is fixed-axis roll, pitch, yaw.
fn pose(p: &urdf_rs::Pose) -> Transform {
    Transform::from_parts(
        Translation3::new(p.xyz[0], p.xyz[1], p.xyz[2]),
        Rotation3::from_euler_angles(p.rpy[0], p.rpy[1], p.rpy[2]),
    )
}

fn collision_shape(c: &urdf_rs::Collision) -> CollisionShape {
    use urdf_rs::Geometry as G;
    let geometry = match &c.geometry {
        G::Box { size } => Geometry::Box { size: size.0 },
        G::Cylinder { radius, length } => Geometry::Cylinder {
            radius: *radius,
            length: *length,
        },
        G::Capsule { radius, length } => Geometry::Capsule {
            radius: *radius,
            length: *length,
        },
        G::Sphere { radius } => Geometry::Sphere { radius: *radius },
        G::Mesh { filename, scale } => Geometry::Mesh {
            filename: filename.clone(),
            scale: scale.map_or([1.0; 3], |s| s.0),
        },
    };
    CollisionShape {
        origin: pose(&c.origin),
        geometry,
    }
}
