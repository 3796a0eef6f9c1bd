//! The collision world as RViz draws it: [`ShapeMarker`]s (the obstacles,
//! the floor, the links of the closest pair coloured near or in contact,
//! decided by [`crate::collision::markers`]) copied into a `MarkerArray`
//! for `~/collision_markers`.
//!
//! The array starts with a `DELETEALL`, so a link that stopped being near,
//! or an obstacle taken out of the workspace file, disappears with the next
//! message instead of staying drawn where it was last.

use super::{MARKER_NS, color};
use crate::collision::markers::{MarkerShape, ShapeMarker};
use r2r::builtin_interfaces::msg::{Duration as RosDuration, Time};
use r2r::geometry_msgs::msg::{Point, Pose, Quaternion, Vector3};
use r2r::std_msgs::msg::Header;
use r2r::visualization_msgs::msg::{Marker, MarkerArray};

/// `visualization_msgs/Marker` types and actions used here (spelled out
/// for the reason given at [`super::level`]).
pub mod kind {
    pub const CUBE: i32 = 1;
    pub const SPHERE: i32 = 2;
    pub const CYLINDER: i32 = 3;
    pub const TRIANGLE_LIST: i32 = 11;
    pub const ADD: i32 = 0;
    pub const DELETEALL: i32 = 3;
}

/// The `MarkerArray` of `shapes` in `base_link`'s frame: a `DELETEALL`,
/// then one marker per shape, its namespace `arm_ik/<ns>` (`obstacles`,
/// `links`). `template` is any `Marker`, as for [`super::markers`].
pub fn collision_markers(
    template: &Marker,
    base_link: &str,
    stamp: Time,
    shapes: &[ShapeMarker],
) -> MarkerArray {
    let header = Header {
        stamp,
        frame_id: base_link.to_string(),
    };
    let mut clear = template.clone();
    clear.header = header.clone();
    clear.ns = MARKER_NS.to_string();
    clear.action = kind::DELETEALL;
    let mut markers = vec![clear];
    markers.extend(shapes.iter().map(|s| shape_marker(template, &header, s)));
    MarkerArray { markers }
}

fn shape_marker(template: &Marker, header: &Header, s: &ShapeMarker) -> Marker {
    let mut m = template.clone();
    m.header = header.clone();
    m.ns = format!("{MARKER_NS}/{}", s.ns);
    m.id = s.id;
    m.action = kind::ADD;
    m.lifetime = RosDuration { sec: 0, nanosec: 0 };
    m.frame_locked = false;
    let [x, y, z] = s.position;
    let [qx, qy, qz, qw] = s.orientation;
    m.pose = Pose {
        position: Point { x, y, z },
        orientation: Quaternion {
            x: qx,
            y: qy,
            z: qz,
            w: qw,
        },
    };
    let [r, g, b, a] = s.color;
    m.color = color(r, g, b, a);
    let scale = |x, y, z| Vector3 { x, y, z };
    (m.type_, m.scale) = match &s.shape {
        MarkerShape::Cube([x, y, z]) => (kind::CUBE, scale(*x, *y, *z)),
        MarkerShape::Sphere(r) => (kind::SPHERE, scale(2.0 * r, 2.0 * r, 2.0 * r)),
        MarkerShape::Cylinder { radius, length } => {
            (kind::CYLINDER, scale(2.0 * radius, 2.0 * radius, *length))
        }
        MarkerShape::Triangles(vertices) => {
            m.points = vertices
                .iter()
                .map(|&[x, y, z]| Point { x, y, z })
                .collect();
            (kind::TRIANGLE_LIST, scale(1.0, 1.0, 1.0))
        }
    };
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collision::{self, CollisionOptions};
    use crate::model::Chain;
    use crate::ros::convert::tests::blank_marker;
    use crate::ros::convert::time;

    /// The project arm over a table with a box beside it: RViz gets the
    /// floor and the box where the workspace file puts them, in the base
    /// frame; with the forearm folded down to the table the near links
    /// come coloured (red in contact), drawn from their hulls or shapes.
    #[test]
    fn obstacles_and_near_links_become_rviz_markers_in_the_base_frame() {
        let urdf = include_str!("../../../urdf/arm.urdf");
        let chain = Chain::from_urdf_str(urdf, None, None).unwrap();
        let dir = std::env::temp_dir().join(format!("arm_ik-ros-markers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ws = dir.join("workspace.yaml");
        std::fs::write(
            &ws,
            "floor_z: 0.0\nobstacles:\n  - {name: box, shape: box, size: [0.1, 0.2, 0.3], position: [0.3, 0.0, 0.15]}\n",
        )
        .unwrap();
        let options = CollisionOptions {
            workspace: Some(ws),
            ..CollisionOptions::default()
        };
        let mut world = collision::build(&chain, &options).unwrap();
        let _ = std::fs::remove_dir_all(&dir);

        // Far from everything: only the floor and the box, after the DELETEALL.
        let up = vec![0.0; chain.dof()];
        let near = world.nearest(&up);
        let shapes = collision::markers::markers(&world, &near);
        let m = collision_markers(&blank_marker(), "base_link", time(3.0), &shapes);
        assert_eq!(m.markers[0].action, kind::DELETEALL);
        let drawn = &m.markers[1..];
        assert!(drawn.iter().all(|x| x.header.frame_id == "base_link"
            && x.header.stamp.sec == 3
            && x.action == kind::ADD));
        let obstacles: Vec<_> = drawn
            .iter()
            .filter(|x| x.ns == "arm_ik/obstacles")
            .collect();
        assert_eq!(obstacles.len(), 2, "floor and box");
        let b = obstacles
            .iter()
            .find(|x| x.pose.position.x == 0.3)
            .expect("the box at x = 0.3");
        assert_eq!(b.type_, kind::CUBE);
        assert_eq!((b.scale.x, b.scale.y, b.scale.z), (0.1, 0.2, 0.3));
        assert_eq!(b.pose.position.z, 0.15);
        let floor = obstacles.iter().find(|x| x.id != b.id).unwrap();
        assert_eq!(floor.type_, kind::CUBE);
        assert!(floor.pose.position.z <= 0.0 && floor.scale.z < 0.01);
        // Distinct ids within a namespace, or RViz would overwrite one.
        assert_ne!(floor.id, b.id);

        // Folded down through the table: the pair in contact drawn red.
        let down = fold_into_table(&chain, &mut world);
        let near = world.nearest(&down);
        assert!(near.distance < 0.0, "{}", world.describe(&near));
        let shapes = collision::markers::markers(&world, &near);
        let m = collision_markers(&blank_marker(), "base_link", time(3.0), &shapes);
        let links: Vec<_> = m
            .markers
            .iter()
            .filter(|x| x.ns == "arm_ik/links")
            .collect();
        assert!(!links.is_empty(), "the colliding link is drawn");
        for l in &links {
            assert!(l.color.r > 0.9 && l.color.g < 0.2, "red: {:?}", l.color);
            assert!(
                [
                    kind::CUBE,
                    kind::CYLINDER,
                    kind::SPHERE,
                    kind::TRIANGLE_LIST
                ]
                .contains(&l.type_)
            );
            if l.type_ == kind::TRIANGLE_LIST {
                assert!(!l.points.is_empty() && l.points.len() % 3 == 0);
            }
            let q = &l.pose.orientation;
            let norm = (q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w).sqrt();
            assert!((norm - 1.0).abs() < 1e-9);
        }
        let mut ids: Vec<i32> = links.iter().map(|l| l.id).collect();
        ids.dedup();
        assert_eq!(ids.len(), links.len());
    }

    /// A configuration of `chain` with a link through the floor: the
    /// shoulder and elbow swept until one is found.
    fn fold_into_table(chain: &Chain, world: &mut collision::World) -> Vec<f64> {
        let mut q = vec![0.0; chain.dof()];
        for a in 0..40 {
            for b in 0..40 {
                q[1] = -3.0 + 0.15 * a as f64;
                q[2] = -3.0 + 0.15 * b as f64;
                let q: Vec<f64> = chain
                    .joints
                    .iter()
                    .zip(&q)
                    .map(|(j, &x)| j.limits.clamp(x))
                    .collect();
                if world.nearest(&q).distance < -0.005 {
                    return q;
                }
            }
        }
        panic!("no configuration of the arm reaches through the table");
    }
}
