//! The messages a viewer needs to draw the arm without another node:
//! `std_msgs/msg/String` (`/robot_description`), `tf2_msgs/msg/TFMessage`
//! (`/tf`, `/tf_static`) and `visualization_msgs/msg/Marker` (the
//! targets), written in CDR as ROS 2 (Jazzy) writes them, with their
//! `ros2msg` schema texts. `tests/view.rs` checks the bytes and the texts
//! against the `rosbags` library's Jazzy type store.

use super::cdr::{CdrError, CdrReader, CdrWriter, Endian};
use super::definition;
use super::messages::Header;

pub const STRING: &str = "std_msgs/msg/String";
pub const TF_MESSAGE: &str = "tf2_msgs/msg/TFMessage";
pub const MARKER: &str = "visualization_msgs/msg/Marker";

/// A `std_msgs/msg/String` payload.
pub fn encode_string(text: &str, endian: Endian) -> Vec<u8> {
    let mut w = CdrWriter::new(endian);
    w.string(text);
    w.finish()
}

/// The text of a `std_msgs/msg/String` payload.
pub fn decode_string(data: &[u8]) -> Result<String, CdrError> {
    CdrReader::new(data)?.string("data")
}

/// One `geometry_msgs/msg/TransformStamped`: the pose of `child` in
/// `header.frame_id`.
#[derive(Debug, Clone, PartialEq)]
pub struct TransformStamped {
    pub header: Header,
    pub child_frame_id: String,
    pub translation: [f64; 3],
    /// `x, y, z, w`.
    pub rotation: [f64; 4],
}

/// A `tf2_msgs/msg/TFMessage` payload.
pub fn encode_tf(transforms: &[TransformStamped], endian: Endian) -> Vec<u8> {
    let mut w = CdrWriter::new(endian);
    w.u32(transforms.len() as u32);
    for t in transforms {
        t.header.write(&mut w);
        w.string(&t.child_frame_id);
        for x in t.translation.iter().chain(&t.rotation) {
            w.f64(*x);
        }
    }
    w.finish()
}

/// The transforms of a `tf2_msgs/msg/TFMessage` payload.
pub fn decode_tf(data: &[u8]) -> Result<Vec<TransformStamped>, CdrError> {
    let mut r = CdrReader::new(data)?;
    let n = r.len("transforms", 4 + 4 + 4 + 4 + 56)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let header = Header::read(&mut r)?;
        let child_frame_id = r.string("child_frame_id")?;
        let mut v = [0.0; 7];
        for x in &mut v {
            *x = r.f64("transform")?;
        }
        out.push(TransformStamped {
            header,
            child_frame_id,
            translation: [v[0], v[1], v[2]],
            rotation: [v[3], v[4], v[5], v[6]],
        });
    }
    Ok(out)
}

/// The marker shapes used here (`Marker.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerShape {
    /// Along the pose's x axis: a target with an orientation.
    Arrow = 0,
    /// A target position only.
    Sphere = 2,
}

/// A `visualization_msgs/msg/Marker` that adds (or replaces, same `ns`
/// and `id`) one shape, kept until replaced.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub header: Header,
    pub ns: String,
    pub id: i32,
    pub shape: MarkerShape,
    pub position: [f64; 3],
    /// `x, y, z, w`.
    pub orientation: [f64; 4],
    pub scale: [f64; 3],
    /// `r, g, b, a` in 0..1.
    pub color: [f32; 4],
}

impl Marker {
    pub fn encode(&self, endian: Endian) -> Vec<u8> {
        let mut w = CdrWriter::new(endian);
        self.header.write(&mut w);
        w.string(&self.ns);
        w.i32(self.id);
        w.i32(self.shape as i32);
        w.i32(0); // action ADD
        for x in self.position.iter().chain(&self.orientation) {
            w.f64(*x);
        }
        for x in self.scale {
            w.f64(x);
        }
        for x in self.color {
            w.f32(x);
        }
        w.i32(0); // lifetime: 0 is forever
        w.u32(0);
        w.u8(0); // frame_locked
        w.u32(0); // points
        w.u32(0); // colors
        w.string(""); // texture_resource
        Header::default().write(&mut w); // texture: CompressedImage
        w.string("");
        w.u32(0);
        w.u32(0); // uv_coordinates
        w.string(""); // text
        w.string(""); // mesh_resource
        w.string(""); // mesh_file.filename
        w.u32(0); // mesh_file.data
        w.u8(0); // mesh_use_embedded_materials
        w.finish()
    }
}

const HEADER: (&str, &str) = (
    "std_msgs/Header",
    "builtin_interfaces/Time stamp\nstring frame_id\n",
);
const TIME: (&str, &str) = ("builtin_interfaces/Time", "int32 sec\nuint32 nanosec\n");
const VECTOR3: (&str, &str) = ("geometry_msgs/Vector3", "float64 x\nfloat64 y\nfloat64 z\n");
const POINT: (&str, &str) = ("geometry_msgs/Point", "float64 x\nfloat64 y\nfloat64 z\n");
const QUATERNION: (&str, &str) = (
    "geometry_msgs/Quaternion",
    "float64 x\nfloat64 y\nfloat64 z\nfloat64 w\n",
);

const MARKER_MAIN: &str = "int32 ARROW=0\nint32 CUBE=1\nint32 SPHERE=2\nint32 CYLINDER=3\n\
int32 LINE_STRIP=4\nint32 LINE_LIST=5\nint32 CUBE_LIST=6\nint32 SPHERE_LIST=7\nint32 POINTS=8\n\
int32 TEXT_VIEW_FACING=9\nint32 MESH_RESOURCE=10\nint32 TRIANGLE_LIST=11\nint32 ARROW_STRIP=12\n\
int32 ADD=0\nint32 MODIFY=0\nint32 DELETE=2\nint32 DELETEALL=3\n\
std_msgs/Header header\nstring ns\nint32 id\nint32 type\nint32 action\n\
geometry_msgs/Pose pose\ngeometry_msgs/Vector3 scale\nstd_msgs/ColorRGBA color\n\
builtin_interfaces/Duration lifetime\nbool frame_locked\ngeometry_msgs/Point[] points\n\
std_msgs/ColorRGBA[] colors\nstring texture_resource\nsensor_msgs/CompressedImage texture\n\
visualization_msgs/UVCoordinate[] uv_coordinates\nstring text\nstring mesh_resource\n\
visualization_msgs/MeshFile mesh_file\nbool mesh_use_embedded_materials\n";

/// The `ros2msg` schema text of a type of this module (dependencies after
/// it, each once, as rosbag2 writes them); `None` for any other type.
pub fn ros2msg_definition(type_name: &str) -> Option<String> {
    Some(match type_name {
        STRING => "string data\n".to_string(),
        TF_MESSAGE => definition(
            "geometry_msgs/TransformStamped[] transforms\n",
            &[
                (
                    "geometry_msgs/TransformStamped",
                    "std_msgs/Header header\nstring child_frame_id\ngeometry_msgs/Transform transform\n",
                ),
                HEADER,
                TIME,
                (
                    "geometry_msgs/Transform",
                    "geometry_msgs/Vector3 translation\ngeometry_msgs/Quaternion rotation\n",
                ),
                VECTOR3,
                QUATERNION,
            ],
        ),
        MARKER => definition(
            MARKER_MAIN,
            &[
                HEADER,
                TIME,
                (
                    "geometry_msgs/Pose",
                    "geometry_msgs/Point position\ngeometry_msgs/Quaternion orientation\n",
                ),
                POINT,
                QUATERNION,
                VECTOR3,
                (
                    "std_msgs/ColorRGBA",
                    "float32 r\nfloat32 g\nfloat32 b\nfloat32 a\n",
                ),
                ("builtin_interfaces/Duration", "int32 sec\nuint32 nanosec\n"),
                (
                    "sensor_msgs/CompressedImage",
                    "std_msgs/Header header\nstring format\nuint8[] data\n",
                ),
                ("visualization_msgs/UVCoordinate", "float32 u\nfloat32 v\n"),
                (
                    "visualization_msgs/MeshFile",
                    "string filename\nuint8[] data\n",
                ),
            ],
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transforms_and_strings_round_trip() {
        let t = TransformStamped {
            header: Header {
                stamp_ns: 1_500_000_001,
                frame_id: "base_link".into(),
            },
            child_frame_id: "shoulder".into(),
            translation: [0.1, 0.2, 0.3],
            rotation: [0.0, 0.0, 0.6, 0.8],
        };
        for endian in [Endian::Little, Endian::Big] {
            let b = encode_tf(&[t.clone(), t.clone()], endian);
            assert_eq!(decode_tf(&b).unwrap(), vec![t.clone(), t.clone()]);
            assert_eq!(
                decode_string(&encode_string("<robot/>", endian)).unwrap(),
                "<robot/>"
            );
        }
    }
}
