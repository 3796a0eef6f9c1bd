//! The ROS 2 messages a replay reads and writes, in CDR:
//! `geometry_msgs/msg/PoseStamped` and `PointStamped` (targets) and
//! `sensor_msgs/msg/JointState` (what the node publishes), with their
//! `ros2msg` definitions as rosbag2 stores them in MCAP schemas (the
//! message text, then each dependency after a `=====` line and `MSG: name`),
//! so Foxglove and `ros2 bag play` can decode our bags.

use super::cdr::{CdrError, CdrReader, CdrWriter, Endian};
use super::definition;

pub const POSE_STAMPED: &str = "geometry_msgs/msg/PoseStamped";
pub const POINT_STAMPED: &str = "geometry_msgs/msg/PointStamped";
pub const JOINT_STATE: &str = "sensor_msgs/msg/JointState";
/// What `ros2 bag play --clock` publishes on `/clock`, and `ros2 bag
/// record` records with the rest.
pub const CLOCK: &str = "rosgraph_msgs/msg/Clock";

/// A `rosgraph_msgs/msg/Clock` payload: the time it publishes (ns).
pub fn decode_clock(data: &[u8]) -> Result<i64, CdrError> {
    let mut r = CdrReader::new(data)?;
    let sec = r.i32("clock.sec")?;
    let nanosec = r.u32("clock.nanosec")?;
    Ok(sec as i64 * 1_000_000_000 + nanosec as i64)
}

/// The message types a target topic may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TargetType {
    /// Position and orientation.
    Pose,
    /// Position only.
    Point,
}

impl TargetType {
    /// From a ROS type name; the ROS 1 style without `msg/` is accepted
    /// because some converted bags use it.
    pub fn from_name(name: &str) -> Option<TargetType> {
        match name {
            POSE_STAMPED | "geometry_msgs/PoseStamped" => Some(TargetType::Pose),
            POINT_STAMPED | "geometry_msgs/PointStamped" => Some(TargetType::Point),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            TargetType::Pose => POSE_STAMPED,
            TargetType::Point => POINT_STAMPED,
        }
    }

    /// The topic `ik_node` takes this type on (`target_pose`,
    /// `target_point`, resolved in the root namespace). DDS matches a
    /// topic with one type only, so each type has its own.
    pub fn topic(self) -> &'static str {
        match self {
            TargetType::Pose => "/target_pose",
            TargetType::Point => "/target_point",
        }
    }

    /// The short ROS name, `PoseStamped` or `PointStamped`.
    pub fn short_name(self) -> &'static str {
        match self {
            TargetType::Pose => "PoseStamped",
            TargetType::Point => "PointStamped",
        }
    }

    pub fn other(self) -> TargetType {
        match self {
            TargetType::Pose => TargetType::Point,
            TargetType::Point => TargetType::Pose,
        }
    }
}

/// `std_msgs/Header`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Header {
    /// `builtin_interfaces/Time` as nanoseconds (`sec * 1e9 + nanosec`).
    pub stamp_ns: i64,
    pub frame_id: String,
}

impl Header {
    pub(super) fn read(r: &mut CdrReader) -> Result<Header, CdrError> {
        let sec = r.i32("header.stamp.sec")?;
        let nanosec = r.u32("header.stamp.nanosec")?;
        let frame_id = r.string("header.frame_id")?;
        Ok(Header {
            stamp_ns: sec as i64 * 1_000_000_000 + nanosec as i64,
            frame_id,
        })
    }

    pub(super) fn write(&self, w: &mut CdrWriter) {
        w.i32(self.stamp_ns.div_euclid(1_000_000_000) as i32);
        w.u32(self.stamp_ns.rem_euclid(1_000_000_000) as u32);
        w.string(&self.frame_id);
    }
}

/// A target as it comes off the wire, before any check: NaN and zero
/// quaternions are for the node core to refuse, as the live node would.
#[derive(Debug, Clone, PartialEq)]
pub struct StampedTarget {
    pub header: Header,
    pub position: [f64; 3],
    /// `x, y, z, w`; `None` for a `PointStamped`.
    pub orientation: Option<[f64; 4]>,
}

impl StampedTarget {
    /// Decodes a `PoseStamped` or `PointStamped` payload.
    pub fn decode(kind: TargetType, data: &[u8]) -> Result<StampedTarget, CdrError> {
        let mut r = CdrReader::new(data)?;
        let header = Header::read(&mut r)?;
        let mut p = [0.0; 3];
        for (x, what) in p.iter_mut().zip(["x", "y", "z"]) {
            *x = r.f64(what)?;
        }
        let orientation = match kind {
            TargetType::Point => None,
            TargetType::Pose => {
                let mut q = [0.0; 4];
                for (x, what) in q.iter_mut().zip([
                    "orientation.x",
                    "orientation.y",
                    "orientation.z",
                    "orientation.w",
                ]) {
                    *x = r.f64(what)?;
                }
                Some(q)
            }
        };
        Ok(StampedTarget {
            header,
            position: p,
            orientation,
        })
    }

    /// Encodes as `PoseStamped` when there is an orientation, else as
    /// `PointStamped`.
    pub fn encode(&self, endian: Endian) -> Vec<u8> {
        let mut w = CdrWriter::new(endian);
        self.header.write(&mut w);
        for &x in &self.position {
            w.f64(x);
        }
        if let Some(q) = self.orientation {
            for x in q {
                w.f64(x);
            }
        }
        w.finish()
    }

    pub fn kind(&self) -> TargetType {
        if self.orientation.is_some() {
            TargetType::Pose
        } else {
            TargetType::Point
        }
    }
}

/// `sensor_msgs/JointState`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JointStateMsg {
    pub header: Header,
    pub name: Vec<String>,
    pub position: Vec<f64>,
    pub velocity: Vec<f64>,
    pub effort: Vec<f64>,
}

impl JointStateMsg {
    pub fn decode(data: &[u8]) -> Result<JointStateMsg, CdrError> {
        let mut r = CdrReader::new(data)?;
        Ok(JointStateMsg {
            header: Header::read(&mut r)?,
            name: r.string_seq("name")?,
            position: r.f64_seq("position")?,
            velocity: r.f64_seq("velocity")?,
            effort: r.f64_seq("effort")?,
        })
    }

    pub fn encode(&self, endian: Endian) -> Vec<u8> {
        let mut w = CdrWriter::new(endian);
        self.header.write(&mut w);
        w.string_seq(&self.name);
        w.f64_seq(&self.position);
        w.f64_seq(&self.velocity);
        w.f64_seq(&self.effort);
        w.finish()
    }
}

const TIME: &str = "int32 sec\nuint32 nanosec\n";
const HEADER: &str = "builtin_interfaces/Time stamp\nstring frame_id\n";
const POINT: &str = "float64 x\nfloat64 y\nfloat64 z\n";
const QUATERNION: &str = "float64 x 0\nfloat64 y 0\nfloat64 z 0\nfloat64 w 1\n";
const POSE: &str = "Point position\nQuaternion orientation\n";

/// The `ros2msg` schema text of a type this module knows, dependencies
/// included; `None` for any other type.
pub fn ros2msg_definition(type_name: &str) -> Option<String> {
    let header = ("std_msgs/Header", HEADER);
    let time = ("builtin_interfaces/Time", TIME);
    Some(match type_name {
        POSE_STAMPED => definition(
            "std_msgs/Header header\nPose pose\n",
            &[
                header,
                time,
                ("geometry_msgs/Pose", POSE),
                ("geometry_msgs/Point", POINT),
                ("geometry_msgs/Quaternion", QUATERNION),
            ],
        ),
        POINT_STAMPED => definition(
            "std_msgs/Header header\nPoint point\n",
            &[header, time, ("geometry_msgs/Point", POINT)],
        ),
        JOINT_STATE => definition(
            "std_msgs/Header header\n\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n",
            &[header, time],
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_and_joint_states_round_trip_in_both_byte_orders() {
        for endian in [Endian::Little, Endian::Big] {
            let t = StampedTarget {
                header: Header {
                    stamp_ns: -1_500_000_000,
                    frame_id: "base_link".into(),
                },
                position: [0.1, -0.2, 0.3],
                orientation: Some([0.0, 0.0, 0.6, 0.8]),
            };
            let b = t.encode(endian);
            assert_eq!(StampedTarget::decode(TargetType::Pose, &b).unwrap(), t);
            let p = StampedTarget {
                orientation: None,
                ..t.clone()
            };
            let b = p.encode(endian);
            assert_eq!(StampedTarget::decode(TargetType::Point, &b).unwrap(), p);
            let js = JointStateMsg {
                header: t.header.clone(),
                name: vec!["a".into(), "bc".into()],
                position: vec![1.0, 2.0],
                velocity: vec![0.5, f64::MIN_POSITIVE],
                effort: vec![],
            };
            assert_eq!(JointStateMsg::decode(&js.encode(endian)).unwrap(), js);
        }
    }

    #[test]
    fn a_short_pose_is_an_error() {
        let t = StampedTarget {
            header: Header::default(),
            position: [1.0, 2.0, 3.0],
            orientation: None,
        };
        let b = t.encode(Endian::Little);
        let e = StampedTarget::decode(TargetType::Pose, &b).unwrap_err();
        assert!(e.to_string().contains("orientation.x"), "{e}");
    }
}
