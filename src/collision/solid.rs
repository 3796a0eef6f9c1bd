//! The convex solids the checker measures: URDF primitives, mesh hulls and
//! the capsules that stand in for links without geometry, each placed in
//! its link's (or obstacle's) frame.

use super::hull::{Hinted, Hull};
use parry3d_f64::bounding_volume::{Aabb, BoundingVolume};
use parry3d_f64::math::{Isometry, Point, Real, Vector};
use parry3d_f64::na::{self as pna, UnitQuaternion, Vector3};
use parry3d_f64::shape::{Ball, Capsule, Cuboid, Cylinder, Shape, SupportMap};
use std::cell::Cell;
use std::sync::Arc;

use crate::model::Transform;

/// One convex solid.
#[derive(Debug, Clone)]
pub enum Solid {
    Cuboid(Cuboid),
    Ball(Ball),
    /// parry's cylinders run along y; the part's placement turns URDF's z
    /// onto it.
    Cylinder(Cylinder),
    Capsule(Capsule),
    /// A mesh's convex hull (see [`Hull`]: a support function that climbs
    /// its edges).
    Hull(Arc<Hull>),
}

impl Solid {
    pub fn support(&self) -> &dyn SupportMap {
        match self {
            Solid::Cuboid(s) => s,
            Solid::Ball(s) => s,
            Solid::Cylinder(s) => s,
            Solid::Capsule(s) => s,
            Solid::Hull(s) => s.as_ref(),
        }
    }

    /// How far (m) the solid reaches beyond its support function's shape:
    /// a simplified hull's rounding radius, 0 for the others.
    pub fn round(&self) -> f64 {
        match self {
            Solid::Hull(h) => h.round,
            _ => 0.0,
        }
    }

    /// The support function, searching a hull from vertex `start` (which
    /// becomes the vertex found; see [`Hinted`]).
    pub fn support_from(&self, start: u32) -> Support<'_> {
        match self {
            Solid::Hull(h) => Support::Hull(Hinted {
                hull: h,
                start: Cell::new(start),
            }),
            other => Support::Plain(other.support()),
        }
    }

    /// The solid as parry's shape (bounding boxes, markers); its support
    /// function is the plain one, whatever the last search did.
    pub fn shape(&self) -> &dyn Shape {
        match self {
            Solid::Cuboid(s) => s,
            Solid::Ball(s) => s,
            Solid::Cylinder(s) => s,
            Solid::Capsule(s) => s,
            Solid::Hull(s) => &s.poly,
        }
    }

    /// A box of `size` (full lengths, m).
    pub fn cuboid(size: [f64; 3]) -> Solid {
        Solid::Cuboid(Cuboid::new(Vector3::from(size) / 2.0))
    }

    /// A URDF cylinder along z, as a part placement (the turn onto parry's
    /// y axis) and the solid.
    pub fn cylinder(radius: f64, length: f64) -> (Isometry<Real>, Solid) {
        let turn = Isometry::from_parts(
            pna::Translation3::identity(),
            UnitQuaternion::from_axis_angle(&Vector::x_axis(), std::f64::consts::FRAC_PI_2),
        );
        (turn, Solid::Cylinder(Cylinder::new(length / 2.0, radius)))
    }

    /// A capsule around the segment `a`-`b`.
    pub fn capsule(a: [f64; 3], b: [f64; 3], radius: f64) -> Solid {
        Solid::Capsule(Capsule::new(Point::from(a), Point::from(b), radius))
    }
}

/// A solid's support function for one query (see [`Solid::support_from`]).
pub enum Support<'a> {
    Plain(&'a dyn SupportMap),
    Hull(Hinted<'a>),
}

impl Support<'_> {
    /// Where the hull's search ended (0 for other solids).
    pub fn hint(&self) -> u32 {
        match self {
            Support::Plain(_) => 0,
            Support::Hull(h) => h.start.get(),
        }
    }
}

impl SupportMap for Support<'_> {
    fn local_support_point(&self, dir: &Vector<Real>) -> Point<Real> {
        match self {
            Support::Plain(s) => s.local_support_point(dir),
            Support::Hull(h) => h.local_support_point(dir),
        }
    }
}

/// A solid placed in a frame (a link's or an obstacle's).
#[derive(Debug, Clone)]
pub struct Part {
    pub solid: Solid,
    /// From the frame to the solid.
    pub place: Isometry<Real>,
    /// The solid's bounding box in its own frame.
    pub aabb: Aabb,
    /// A ball around it: centre (in the frame the part is placed in) and
    /// radius. Farther apart than their balls, two parts cannot touch; for
    /// a part turned askew the ball is the tighter of the two bounds.
    pub centre: Point<Real>,
    pub radius: f64,
    /// Distance from the frame's origin to the farthest point of the
    /// solid: how far it swings when the frame turns.
    pub reach: f64,
}

impl Part {
    pub fn new(solid: Solid, place: Isometry<Real>) -> Part {
        let aabb = solid.shape().compute_local_aabb().loosened(solid.round());
        let reach = aabb
            .vertices()
            .iter()
            .map(|v| (place * v).coords.norm())
            .fold(0.0, f64::max);
        let ball = solid.shape().compute_local_bounding_sphere();
        Part {
            centre: place * ball.center,
            radius: ball.radius + solid.round(),
            solid,
            place,
            aabb,
            reach,
        }
    }

    /// The world box of the part when its frame is at `frame`.
    pub fn world_aabb(&self, pose: &Isometry<Real>) -> Aabb {
        self.aabb.transform_by(pose)
    }

    /// The lowest z of the part when its frame is at `frame`.
    pub fn lowest(&self, pose: &Isometry<Real>) -> f64 {
        self.solid.support().support_point(pose, &-Vector::z()).z - self.solid.round()
    }
}

/// A kinematics transform in the checker's vector types.
pub fn isometry(t: &Transform) -> Isometry<Real> {
    let q = nalgebra::UnitQuaternion::from_rotation_matrix(&t.rotation);
    let v = t.translation.vector;
    Isometry::from_parts(
        pna::Translation3::new(v.x, v.y, v.z),
        UnitQuaternion::new_normalize(pna::Quaternion::new(q.w, q.i, q.j, q.k)),
    )
}

/// `xyz` and fixed-axis `rpy` as a placement.
pub fn placement(xyz: [f64; 3], rpy: [f64; 3]) -> Isometry<Real> {
    Isometry::from_parts(
        pna::Translation3::new(xyz[0], xyz[1], xyz[2]),
        UnitQuaternion::from_euler_angles(rpy[0], rpy[1], rpy[2]),
    )
}
