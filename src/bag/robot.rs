//! The topics that show the arm moving with no other node: what the node
//! publishes (`/joint_states`, the targets) plus what
//! robot_state_publisher would (`/robot_description` and `/tf_static`,
//! latched; `/tf` for every joint state) and a marker per target. Every
//! MCAP the project writes and the live `--view` carry these same bytes,
//! built here once.
//!
//! The frames are robot_state_publisher's: one transform per URDF joint,
//! parent link to child link, the joint's origin then its motion; fixed
//! joints on `/tf_static`, moving joints on `/tf` stamped with the joint
//! state's stamp. A moving joint the joint state does not name is left
//! out, as robot_state_publisher leaves it out.

use super::messages::{Header, JOINT_STATE, JointStateMsg, StampedTarget, TargetType};
use super::viz::{self, Marker, MarkerShape, TransformStamped};
use super::{Endian, Qos};
use crate::model::{Chain, JointKind, Transform};
use nalgebra::{Unit, UnitQuaternion, Vector3};

/// A topic of the robot's picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Topic {
    Description,
    TfStatic,
    Tf,
    JointStates,
    Target(TargetType),
    TargetMarker,
}

impl Topic {
    pub const ALL: [Topic; 7] = [
        Topic::Description,
        Topic::TfStatic,
        Topic::Tf,
        Topic::JointStates,
        Topic::Target(TargetType::Pose),
        Topic::Target(TargetType::Point),
        Topic::TargetMarker,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Topic::Description => "/robot_description",
            Topic::TfStatic => "/tf_static",
            Topic::Tf => "/tf",
            Topic::JointStates => "/joint_states",
            Topic::Target(kind) => kind.topic(),
            Topic::TargetMarker => "/target_marker",
        }
    }

    pub fn type_name(self) -> &'static str {
        match self {
            Topic::Description => viz::STRING,
            Topic::TfStatic | Topic::Tf => viz::TF_MESSAGE,
            Topic::JointStates => JOINT_STATE,
            Topic::Target(kind) => kind.name(),
            Topic::TargetMarker => viz::MARKER,
        }
    }

    /// Latched as robot_state_publisher offers them, else volatile.
    pub fn qos(self) -> Qos {
        match self {
            Topic::Description | Topic::TfStatic => Qos::Latched,
            _ => Qos::Volatile,
        }
    }
}

/// One message to publish or record: its topic and CDR bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    pub topic: Topic,
    pub data: Vec<u8>,
}

/// One URDF joint as a transform from its parent link to its child link.
#[derive(Debug, Clone)]
struct Frame {
    joint: String,
    parent: String,
    child: String,
    origin: Transform,
    axis: Unit<Vector3<f64>>,
    kind: Option<JointKind>,
}

impl Frame {
    /// The child link's pose in the parent link at joint position `q`.
    fn at(&self, q: f64) -> Transform {
        let motion = match self.kind {
            None => Transform::identity(),
            Some(JointKind::Prismatic) => {
                Transform::translation(self.axis.x * q, self.axis.y * q, self.axis.z * q)
            }
            Some(_) => Transform::from_parts(
                nalgebra::Translation3::identity(),
                nalgebra::Rotation3::from_axis_angle(&self.axis, q),
            ),
        };
        self.origin * motion
    }

    fn stamped(&self, stamp_ns: i64, q: f64) -> TransformStamped {
        let t = self.at(q);
        let r = UnitQuaternion::from_rotation_matrix(&t.rotation);
        let v = t.translation.vector;
        TransformStamped {
            header: Header {
                stamp_ns,
                frame_id: self.parent.clone(),
            },
            child_frame_id: self.child.clone(),
            translation: [v.x, v.y, v.z],
            rotation: [r.i, r.j, r.k, r.w],
        }
    }
}

/// Builds the messages of [`Topic`] for one robot.
#[derive(Debug, Clone)]
pub struct RobotTopics {
    description: String,
    base: String,
    fixed: Vec<Frame>,
    moving: Vec<Frame>,
}

impl RobotTopics {
    /// For the robot of `chain`, whose URDF text is `description`.
    pub fn new(chain: &Chain, description: String) -> RobotTopics {
        let links = &chain.body.links;
        let (mut fixed, mut moving) = (Vec::new(), Vec::new());
        for link in links {
            let Some(j) = &link.joint else { continue };
            let frame = Frame {
                joint: j.name.clone(),
                parent: links[j.parent].name.clone(),
                child: link.name.clone(),
                origin: j.origin,
                axis: j.axis,
                kind: j.kind,
            };
            match j.kind {
                None => fixed.push(frame),
                Some(_) => moving.push(frame),
            }
        }
        RobotTopics {
            description,
            base: chain.base.clone(),
            fixed,
            moving,
        }
    }

    /// The URDF text published on `/robot_description`.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// `/robot_description` and `/tf_static`, stamped `stamp_ns`: sent
    /// once, first (latched, a late subscriber still gets them).
    pub fn latched(&self, stamp_ns: i64) -> [Outgoing; 2] {
        let statics: Vec<TransformStamped> = self
            .fixed
            .iter()
            .map(|f| f.stamped(stamp_ns, 0.0))
            .collect();
        [
            Outgoing {
                topic: Topic::Description,
                data: viz::encode_string(&self.description, Endian::Little),
            },
            Outgoing {
                topic: Topic::TfStatic,
                data: viz::encode_tf(&statics, Endian::Little),
            },
        ]
    }

    /// The moving joints' transforms for a joint state.
    pub fn transforms(&self, stamp_ns: i64, names: &[String], q: &[f64]) -> Vec<TransformStamped> {
        self.moving
            .iter()
            .filter_map(|f| {
                let i = names.iter().position(|n| *n == f.joint)?;
                let qi = *q.get(i)?;
                qi.is_finite().then(|| f.stamped(stamp_ns, qi))
            })
            .collect()
    }

    /// `/joint_states` and `/tf` of one tick.
    pub fn joint_state(&self, msg: &JointStateMsg) -> [Outgoing; 2] {
        let tf = self.transforms(msg.header.stamp_ns, &msg.name, &msg.position);
        [
            Outgoing {
                topic: Topic::JointStates,
                data: msg.encode(Endian::Little),
            },
            Outgoing {
                topic: Topic::Tf,
                data: viz::encode_tf(&tf, Endian::Little),
            },
        ]
    }

    /// The target as the node takes it, on its topic.
    pub fn target(&self, t: &StampedTarget) -> Outgoing {
        Outgoing {
            topic: Topic::Target(t.kind()),
            data: t.encode(Endian::Little),
        }
    }

    /// The marker of a target: an arrow along the pose's x axis, or a
    /// sphere for a position; in the target's frame (the base when it
    /// names none). Each replaces the one before.
    pub fn marker(&self, t: &StampedTarget) -> Outgoing {
        let mut header = t.header.clone();
        if header.frame_id.is_empty() {
            header.frame_id = self.base.clone();
        }
        let (shape, orientation, scale) = match t.orientation {
            Some(q) => (MarkerShape::Arrow, q, [0.06, 0.008, 0.008]),
            None => (MarkerShape::Sphere, [0.0, 0.0, 0.0, 1.0], [0.02; 3]),
        };
        let m = Marker {
            header,
            ns: "target".into(),
            id: 0,
            shape,
            position: t.position,
            orientation,
            scale,
            color: [1.0, 0.45, 0.0, 0.9],
        };
        Outgoing {
            topic: Topic::TargetMarker,
            data: m.encode(Endian::Little),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chain_of_transforms_puts_the_tip_where_fk_does() {
        let urdf = include_str!("../../urdf/arm.urdf");
        let chain = Chain::from_urdf_str(urdf, None, None).unwrap();
        let topics = RobotTopics::new(&chain, urdf.into());
        let names: Vec<String> = chain.joint_names().iter().map(|s| s.to_string()).collect();
        let q: Vec<f64> = (0..chain.dof()).map(|i| 0.3 - 0.2 * i as f64).collect();
        let mut all = topics.transforms(7, &names, &q);
        all.extend(topics.fixed.iter().map(|f| f.stamped(7, 0.0)));
        // Walk from the tip up to the base through the parents.
        let mut link = chain.tip.clone();
        let mut pose = Transform::identity();
        while link != chain.base {
            let t = all.iter().find(|t| t.child_frame_id == link).unwrap();
            let [x, y, z] = t.translation;
            let [i, j, k, w] = t.rotation;
            let r = UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(w, i, j, k));
            let step =
                Transform::from_parts(nalgebra::Translation3::new(x, y, z), r.to_rotation_matrix());
            pose = step * pose;
            link = t.header.frame_id.clone();
        }
        let fk = chain.fk(&q);
        assert!((pose.translation.vector - fk.translation.vector).norm() < 1e-12);
    }
}
