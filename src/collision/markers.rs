//! What RViz shows of the collision world, without ROS: the obstacles and
//! the floor, and the links of the closest pair coloured when they are
//! near (amber, within a few margins) or in contact (red). The ROS adapter
//! (`crate::ros::convert`) only copies these into a `MarkerArray`.

use super::solid::Solid;
use super::world::{Nearest, Owner, World};
use parry3d_f64::math::{Isometry, Real, Vector};
use parry3d_f64::na::UnitQuaternion;

/// Links this many margins apart count as near.
const NEAR_MARGINS: f64 = 3.0;
/// Half the side of the floor's square (m).
const FLOOR_HALF: f64 = 0.6;

/// The geometry of one marker.
#[derive(Debug, Clone, PartialEq)]
pub enum MarkerShape {
    /// Full side lengths (m).
    Cube([f64; 3]),
    Sphere(f64),
    /// Along the marker's z.
    Cylinder {
        radius: f64,
        length: f64,
    },
    /// A convex hull as triangles (vertices in the marker's frame).
    Triangles(Vec<[f64; 3]>),
}

/// One marker: a shape, where it is (base frame) and its colour.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeMarker {
    /// `obstacles` or `links`.
    pub ns: &'static str,
    pub id: i32,
    pub shape: MarkerShape,
    pub position: [f64; 3],
    /// `x, y, z, w`.
    pub orientation: [f64; 4],
    /// `r, g, b, a`.
    pub color: [f32; 4],
}

const OBSTACLE: [f32; 4] = [0.3, 0.45, 0.8, 0.5];
const FLOOR: [f32; 4] = [0.6, 0.6, 0.6, 0.3];
const NEAR: [f32; 4] = [1.0, 0.7, 0.0, 0.7];
const CONTACT: [f32; 4] = [1.0, 0.1, 0.1, 0.8];

/// The markers of `world` as its last query placed it; `nearest` is that
/// query's closest pair.
pub fn markers(world: &World, nearest: &Nearest) -> Vec<ShapeMarker> {
    let mut out = Vec::new();
    if let Some(z) = world.floor() {
        out.push(ShapeMarker {
            ns: "obstacles",
            id: 0,
            shape: MarkerShape::Cube([2.0 * FLOOR_HALF, 2.0 * FLOOR_HALF, 0.002]),
            position: [0.0, 0.0, z - 0.001],
            orientation: [0.0, 0.0, 0.0, 1.0],
            color: FLOOR,
        });
    }
    let near = NEAR_MARGINS * world.margin();
    let colour = if nearest.distance < 0.0 {
        Some(CONTACT)
    } else if nearest.distance < near {
        Some(NEAR)
    } else {
        None
    };
    let mut link_id = 0;
    for (owner, pose, solid) in world.solids() {
        let (ns, color) = match owner {
            Owner::Obstacle(_) => ("obstacles", OBSTACLE),
            Owner::Link(_) if owner == nearest.a || owner == nearest.b => match colour {
                Some(c) => ("links", c),
                None => continue,
            },
            _ => continue,
        };
        let id = if ns == "links" {
            link_id += 1;
            link_id
        } else {
            out.len() as i32 + 1
        };
        out.push(marker(ns, id, pose, solid, color));
    }
    out
}

fn marker(
    ns: &'static str,
    id: i32,
    pose: &Isometry<Real>,
    solid: &Solid,
    color: [f32; 4],
) -> ShapeMarker {
    let mut pose = *pose;
    let shape = match solid {
        Solid::Cuboid(c) => MarkerShape::Cube((c.half_extents * 2.0).into()),
        Solid::Ball(b) => MarkerShape::Sphere(b.radius),
        Solid::Cylinder(c) => {
            // parry's cylinders run along y, RViz's along z.
            pose *=
                UnitQuaternion::from_axis_angle(&Vector::x_axis(), -std::f64::consts::FRAC_PI_2);
            MarkerShape::Cylinder {
                radius: c.radius,
                length: 2.0 * c.half_height,
            }
        }
        Solid::Capsule(c) => {
            let (a, b) = (c.segment.a, c.segment.b);
            let mid = nalgebra_mid(a.coords, b.coords);
            let axis = b - a;
            let turn = UnitQuaternion::rotation_between(&Vector::z(), &axis)
                .unwrap_or_else(UnitQuaternion::identity);
            pose *= Isometry::from_parts(mid, turn);
            MarkerShape::Cylinder {
                radius: c.radius,
                length: axis.norm() + 2.0 * c.radius,
            }
        }
        Solid::Hull(h) => {
            let (points, faces) = h.poly.to_trimesh();
            MarkerShape::Triangles(
                faces
                    .iter()
                    .flat_map(|f| f.iter().map(|&i| points[i as usize].coords.into()))
                    .collect(),
            )
        }
    };
    let t = pose.translation.vector;
    let q = pose.rotation;
    ShapeMarker {
        ns,
        id,
        shape,
        position: [t.x, t.y, t.z],
        orientation: [q.i, q.j, q.k, q.w],
        color,
    }
}

fn nalgebra_mid(a: Vector<Real>, b: Vector<Real>) -> parry3d_f64::na::Translation3<Real> {
    let m = (a + b) / 2.0;
    parry3d_f64::na::Translation3::new(m.x, m.y, m.z)
}
