//! The robot's body as solids: each link's `<collision>` shapes (meshes as
//! their convex hulls), a capsule around the joint-to-joint segment of a
//! link without geometry or whose mesh cannot be found, and how the links
//! move with the node's axes (the chain's joints, then the actuated joints
//! off it, as the node's motion orders them; mimic joints follow).

use super::mesh;
use super::solid::{Part, Solid, isometry};
use super::{CollisionError, CollisionOptions};
use crate::model::{Chain, Geometry, JointKind, RobotBody};
use parry3d_f64::math::{Isometry, Real};
use parry3d_f64::na::{self as pna, Point3, Unit, UnitQuaternion, Vector3};

/// A link shorter than this (m) gets a ball rather than a capsule.
const SHORT: f64 = 1e-4;
/// How far (m) beyond the margin a floor lowered for the default pose
/// stays from it.
const REST_SLACK: f64 = 1e-3;

/// Why a link's body is not the URDF's `<collision>` geometry.
#[derive(Debug, Clone, PartialEq)]
pub enum Approximation {
    /// No `<collision>` element: a capsule around its segment.
    NoGeometry,
    /// A mesh could not be used (not found, unreadable): a capsule.
    Mesh { why: String },
    /// No geometry and no link below: a frame, not checked.
    Frame,
}

impl std::fmt::Display for Approximation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Approximation::NoGeometry => f.write_str("no <collision> geometry: a capsule"),
            Approximation::Mesh { why } => write!(f, "{why}: a capsule"),
            Approximation::Frame => f.write_str("no geometry and no link below: not checked"),
        }
    }
}

/// How a link's joint is driven.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Drive {
    Fixed,
    /// `axes[axis] * multiplier + offset`, or `rest` when the axes given
    /// stop before it.
    Axis {
        axis: usize,
        multiplier: f64,
        offset: f64,
        rest: f64,
    },
}

#[derive(Debug, Clone)]
struct Kin {
    parent: Option<usize>,
    origin: Isometry<Real>,
    axis: Unit<Vector3<f64>>,
    prismatic: bool,
    /// A sliding joint's longest travel from zero (m); 0 for turning ones.
    travel: f64,
    drive: Drive,
}

/// One link's solids.
#[derive(Debug, Clone)]
pub struct LinkParts {
    pub name: String,
    pub parts: Vec<Part>,
    pub approximated: Option<Approximation>,
    /// Moves relative to the base when some axis moves.
    pub moving: bool,
    /// (axis, lever) for every axis that moves the link: a turn of `d`
    /// rad moves no point of it more than `d * lever` (m; `lever` 1 per m
    /// for a sliding axis).
    levers: Vec<(usize, f64)>,
}

/// The robot as solids on its links, and the links' poses in the chain's
/// base frame.
#[derive(Debug, Clone)]
pub struct Body {
    pub links: Vec<LinkParts>,
    kin: Vec<Kin>,
    base: usize,
    /// Scratch: each link's pose in the root frame, then the base frame.
    poses: Vec<Isometry<Real>>,
    /// Axes the body is moved by (the chain's joints, then the actuated
    /// joints off it).
    pub axes: usize,
    /// Radius of the capsules that stand in for links without geometry.
    pub capsule_radius: f64,
    /// The default pose of those axes: zero where the limits allow it,
    /// else mid-range (the URDF's zero pose, as MoveIt's default).
    pub rest: Vec<f64>,
}

/// Where the default floor is, and why there (see [`Body::default_floor`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FloorOrigin {
    /// The lowest point of the base link's geometry (and of the links
    /// fixed to it).
    BaseGeometry,
    /// The base has no geometry: its frame's origin, where URDFs put the
    /// mounting face.
    BaseOrigin,
    /// Lowered below the default pose's lowest point, so the arm at rest
    /// keeps the margin from it.
    BelowRest,
}

impl Body {
    /// The body of `chain`'s robot: meshes resolved through
    /// `options.mesh_path` (and `AMENT_PREFIX_PATH`), capsules of
    /// `options.capsule_radius` where there is no usable geometry.
    pub fn new(chain: &Chain, options: &CollisionOptions) -> Result<Body, CollisionError> {
        let robot: &RobotBody = &chain.body;
        let base = robot
            .link(&chain.base)
            .ok_or_else(|| CollisionError::Robot(format!("no link '{}'", chain.base)))?;
        let kin = drives(chain);
        let mut links = Vec::with_capacity(robot.links.len());
        for (i, link) in robot.links.iter().enumerate() {
            let (parts, approximated) = parts(robot, i, options)?;
            links.push(LinkParts {
                name: link.name.clone(),
                parts,
                approximated,
                moving: false,
                levers: Vec::new(),
            });
        }
        let mut body = Body {
            poses: vec![Isometry::identity(); links.len()],
            axes: chain.dof() + chain.extras.iter().filter(|e| e.actuated()).count(),
            rest: rest_pose(chain),
            capsule_radius: options.capsule_radius,
            links,
            kin,
            base,
        };
        body.find_levers();
        Ok(body)
    }

    /// The index of the link called `name`.
    pub fn link(&self, name: &str) -> Option<usize> {
        self.links.iter().position(|l| l.name == name)
    }

    /// The base link's index.
    pub fn base(&self) -> usize {
        self.base
    }

    /// True when `a` is `b`'s parent or child.
    pub fn adjacent(&self, a: usize, b: usize) -> bool {
        self.kin[a].parent == Some(b) || self.kin[b].parent == Some(a)
    }

    /// Places every link for `axes` (missing trailing axes at rest) and
    /// returns the poses in the base frame, by link index.
    pub fn place(&mut self, axes: &[f64]) -> &[Isometry<Real>] {
        for i in 0..self.kin.len() {
            let k = &self.kin[i];
            let mut pose = match k.parent {
                Some(p) => self.poses[p] * k.origin,
                None => Isometry::identity(),
            };
            if let Drive::Axis {
                axis,
                multiplier,
                offset,
                rest,
            } = k.drive
            {
                let q = axes.get(axis).map_or(rest, |v| v * multiplier + offset);
                pose *= if k.prismatic {
                    Isometry::translation(k.axis.x * q, k.axis.y * q, k.axis.z * q)
                } else {
                    Isometry::from_parts(
                        pna::Translation3::identity(),
                        UnitQuaternion::from_axis_angle(&k.axis, q),
                    )
                };
            }
            self.poses[i] = pose;
        }
        if self.base != 0 {
            let to_base = self.poses[self.base].inverse();
            for p in &mut self.poses {
                *p = to_base * *p;
            }
        }
        &self.poses
    }

    /// The poses of the last [`Body::place`].
    pub fn poses(&self) -> &[Isometry<Real>] {
        &self.poses
    }

    /// Adds to `out[a]`, for each axis `a` below `out.len()` that moves
    /// `link`, how fast `point` (fixed on the link, base frame, as placed
    /// by the last [`Body::place`]) moves along `dir` per unit of that
    /// axis: `dir · (ω × (point - o))` for a turning joint about `ω`
    /// through `o`, `dir · axis` for a sliding one (times a mimic's
    /// multiplier). The point Jacobian, seen along one direction.
    pub fn add_point_rate(
        &self,
        link: usize,
        point: &Point3<f64>,
        dir: &Vector3<f64>,
        out: &mut [f64],
    ) {
        let mut at = Some(link);
        while let Some(l) = at {
            let k = &self.kin[l];
            if let Drive::Axis {
                axis, multiplier, ..
            } = k.drive
                && axis < out.len()
            {
                let pose = &self.poses[l];
                let w = pose.rotation * k.axis.into_inner();
                let v = if k.prismatic {
                    w
                } else {
                    w.cross(&(point - Point3::from(pose.translation.vector)))
                };
                out[axis] += multiplier * dir.dot(&v);
            }
            at = k.parent;
        }
    }

    /// How far (m) any point of `link` can move while each axis `a` moves
    /// by at most `travel[a]` (rad or m).
    pub fn sweep(&self, link: usize, travel: &[f64]) -> f64 {
        self.links[link]
            .levers
            .iter()
            .map(|&(a, lever)| travel.get(a).map_or(0.0, |t| t.abs()) * lever)
            .sum()
    }

    /// True for the links the floor is never checked against: the base,
    /// the links fixed to it, and those turning (or sliding) directly on
    /// it (a turntable). They stand on the table by design; only the links
    /// beyond them can be driven into it.
    pub fn on_base(&self, link: usize) -> bool {
        !self.links[link].moving || self.kin[link].parent.is_some_and(|p| !self.links[p].moving)
    }

    /// The floor when the workspace does not place one, with why there:
    /// the lowest point of the base's own geometry (and of the links fixed
    /// to it) at the default pose, or the base frame's origin when it has
    /// none; lowered, when the default pose reaches lower, to the margin
    /// and a millimetre below it, so the arm at rest is never on the edge.
    pub fn default_floor(&mut self, margin: f64) -> (f64, FloorOrigin) {
        let rest = self.rest.clone();
        self.place(&rest);
        let lowest = |links: &mut dyn Iterator<Item = (usize, &LinkParts)>| {
            links
                .flat_map(|(l, link)| link.parts.iter().map(move |p| (l, p)))
                .map(|(l, p)| p.lowest(&(self.poses[l] * p.place)))
                .fold(f64::INFINITY, f64::min)
        };
        let base = lowest(
            &mut self
                .links
                .iter()
                .enumerate()
                .filter(|(_, l)| !l.moving && l.approximated.is_none()),
        );
        let (floor, origin) = if base.is_finite() {
            (base, FloorOrigin::BaseGeometry)
        } else {
            (0.0, FloorOrigin::BaseOrigin)
        };
        let arm = lowest(
            &mut self
                .links
                .iter()
                .enumerate()
                .filter(|&(l, _)| !self.on_base(l)),
        );
        let below = arm - margin - REST_SLACK;
        if below < floor {
            (below, FloorOrigin::BelowRest)
        } else {
            (floor, origin)
        }
    }

    /// Every link's levers: for each axis above it, the longest distance
    /// from that axis's joint to a point of the link, through the fixed
    /// offsets of the joints between (a bound whatever they turn to).
    fn find_levers(&mut self) {
        for l in 0..self.links.len() {
            let own = self.links[l]
                .parts
                .iter()
                .map(|p| p.reach)
                .fold(0.0, f64::max);
            let mut levers: Vec<(usize, f64)> = Vec::new();
            // Walk up from the link, adding each joint's offset.
            let mut arm = own;
            let mut at = l;
            while let Some(parent) = self.kin[at].parent {
                let k = &self.kin[at];
                if let Drive::Axis {
                    axis, multiplier, ..
                } = k.drive
                {
                    let lever = if k.prismatic { 1.0 } else { arm };
                    match levers.iter_mut().find(|(a, _)| *a == axis) {
                        Some((_, r)) => *r += lever * multiplier.abs(),
                        None => levers.push((axis, lever * multiplier.abs())),
                    }
                }
                arm += k.origin.translation.vector.norm() + k.travel;
                at = parent;
            }
            // Joints above the base (a chain cut below the root) count
            // too: a bound that is larger than needed, never smaller.
            self.links[l].moving = !levers.is_empty();
            self.links[l].levers = levers;
        }
    }
}

/// Zero where `limits` allow it (the URDF's zero pose), else mid-range.
fn zero_or_mid(limits: crate::model::Limits) -> f64 {
    if limits.contains(0.0) {
        0.0
    } else {
        limits.mid()
    }
}

/// The default pose of the node's axes: the chain's joints, then the
/// actuated joints off it (as they rest).
fn rest_pose(chain: &Chain) -> Vec<f64> {
    let mut q: Vec<f64> = chain.joints.iter().map(|j| zero_or_mid(j.limits)).collect();
    q.extend(
        chain
            .extras
            .iter()
            .filter(|e| e.actuated())
            .map(|e| e.rest()),
    );
    q
}

/// How each link's joint is driven by the node's axes.
fn drives(chain: &Chain) -> Vec<Kin> {
    let dof = chain.dof();
    let actuated: Vec<&str> = chain
        .extras
        .iter()
        .filter(|e| e.actuated())
        .map(|e| e.name.as_str())
        .collect();
    let axis_of = |name: &str| -> Option<(usize, f64)> {
        if let Some(i) = chain.joints.iter().position(|j| j.name == name) {
            return Some((i, zero_or_mid(chain.joints[i].limits)));
        }
        let m = actuated.iter().position(|n| *n == name)?;
        let rest = chain.extras.iter().find(|e| e.name == name)?.rest();
        Some((dof + m, rest))
    };
    chain
        .body
        .links
        .iter()
        .map(|link| {
            let Some(j) = &link.joint else {
                return Kin {
                    parent: None,
                    origin: Isometry::identity(),
                    axis: Vector3::z_axis(),
                    prismatic: false,
                    travel: 0.0,
                    drive: Drive::Fixed,
                };
            };
            let drive = match j.kind {
                None => Drive::Fixed,
                Some(_) => {
                    let mimic = chain
                        .extras
                        .iter()
                        .find(|e| e.name == j.name)
                        .and_then(|e| e.mimic.as_ref());
                    let (leader, multiplier, offset) = match mimic {
                        Some(m) => (m.leader.as_str(), m.multiplier, m.offset),
                        None => (j.name.as_str(), 1.0, 0.0),
                    };
                    match axis_of(leader) {
                        Some((axis, rest)) => Drive::Axis {
                            axis,
                            multiplier,
                            offset,
                            rest: rest * multiplier + offset,
                        },
                        None => Drive::Fixed,
                    }
                }
            };
            let a = j.axis;
            let prismatic = j.kind == Some(JointKind::Prismatic);
            let travel = chain
                .joints
                .iter()
                .find(|c| c.name == j.name)
                .map(|c| c.limits)
                .or_else(|| {
                    chain
                        .extras
                        .iter()
                        .find(|e| e.name == j.name)
                        .map(|e| e.limits)
                })
                .filter(|_| prismatic)
                .map_or(0.0, |l| l.lower.abs().max(l.upper.abs()).min(10.0));
            Kin {
                parent: Some(j.parent),
                origin: isometry(&j.origin),
                axis: Unit::new_normalize(Vector3::new(a.x, a.y, a.z)),
                prismatic,
                travel,
                drive,
            }
        })
        .collect()
}

/// The solids of link `i`, and why they are not its URDF geometry when
/// they are not.
fn parts(
    robot: &RobotBody,
    i: usize,
    options: &CollisionOptions,
) -> Result<(Vec<Part>, Option<Approximation>), CollisionError> {
    let link = &robot.links[i];
    let mut parts = Vec::new();
    let mut missing = None;
    for c in &link.collisions {
        let place = isometry(&c.origin);
        let part = match &c.geometry {
            Geometry::Box { size } => Part::new(Solid::cuboid(*size), place),
            Geometry::Sphere { radius } => {
                Part::new(Solid::Ball(parry3d_f64::shape::Ball::new(*radius)), place)
            }
            Geometry::Cylinder { radius, length } => {
                let (turn, s) = Solid::cylinder(*radius, *length);
                Part::new(s, place * turn)
            }
            Geometry::Capsule { radius, length } => {
                let h = length / 2.0;
                Part::new(
                    Solid::capsule([0.0, 0.0, -h], [0.0, 0.0, h], *radius),
                    place,
                )
            }
            Geometry::Mesh { filename, scale } => {
                let hull = mesh::resolve(filename, robot.folder.as_deref(), &options.mesh_path)
                    .and_then(|path| mesh::hull(&path, *scale));
                match hull {
                    Ok(h) => Part::new(Solid::Hull(h), place),
                    Err(e) => {
                        missing.get_or_insert(e.to_string());
                        continue;
                    }
                }
            }
        };
        parts.push(part);
    }
    if let Some(why) = missing {
        // Part of the link cannot be built: the whole link becomes its
        // capsule, rather than a body with a hole the user cannot see.
        return Ok((
            capsules(robot, i, options.capsule_radius, true),
            Some(Approximation::Mesh { why }),
        ));
    }
    if !parts.is_empty() {
        return Ok((parts, None));
    }
    let caps = capsules(robot, i, options.capsule_radius, false);
    let why = if caps.is_empty() {
        Approximation::Frame
    } else {
        Approximation::NoGeometry
    };
    Ok((caps, Some(why)))
}

/// A capsule of `radius` from link `i`'s origin to each child joint; a
/// ball at its origin for a leaf when `leaf_ball`.
fn capsules(robot: &RobotBody, i: usize, radius: f64, leaf_ball: bool) -> Vec<Part> {
    let mut out: Vec<Part> = robot
        .children(i)
        .filter_map(|c| robot.links[c].joint.as_ref())
        .map(|j| j.origin.translation.vector)
        .filter(|v| v.norm() >= SHORT)
        .map(|v| {
            Part::new(
                Solid::capsule([0.0; 3], [v.x, v.y, v.z], radius),
                Isometry::identity(),
            )
        })
        .collect();
    if out.is_empty() && leaf_ball {
        out.push(Part::new(
            Solid::Ball(parry3d_f64::shape::Ball::new(radius)),
            Isometry::identity(),
        ));
    }
    out
}
