//! The collision world: the robot's body, its workspace and which pairs
//! are checked, with the queries the node asks every tick.
//!
//! Every solid gets a world bounding box per query; a pair whose boxes are
//! farther apart than the distance that matters is settled without GJK.
//! Distances are signed: negative is the depth two solids overlap by
//! (parry's GJK and EPA), so an arm that starts in collision can be told
//! whether a move takes it out or further in.

use super::acm::Matrix;
use super::body::{Body, FloorOrigin};
use super::solid::{Part, Solid, placement};
use super::workspace::{Floor, Workspace};
use super::{CollisionError, CollisionOptions};
use crate::model::{Chain, Geometry};
use parry3d_f64::bounding_volume::Aabb;
use parry3d_f64::math::{Isometry, Point, Real, Vector};
use parry3d_f64::query::Contact;
use parry3d_f64::query::details::contact_support_map_support_map_with_params;
use parry3d_f64::query::gjk::{CSOPoint, GJKResult, VoronoiSimplex};
use parry3d_f64::shape::SupportMap;

mod clearance;
mod coherence;
mod query;

/// Farther than this (m) nothing is measured exactly.
const FAR: f64 = 10.0;

/// What a solid belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    Link(usize),
    Obstacle(usize),
    Floor,
}

/// The closest pair of one query and how far apart (m; negative: overlap).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Nearest {
    pub distance: f64,
    pub a: Owner,
    pub b: Owner,
}

impl Nearest {
    const NONE: Nearest = Nearest {
        distance: f64::INFINITY,
        a: Owner::Floor,
        b: Owner::Floor,
    };
}

/// An obstacle of the workspace, placed.
#[derive(Debug, Clone)]
struct Obstacle {
    name: String,
    /// The link it moves with; `None`: fixed in the base frame.
    frame: Option<usize>,
    place: Isometry<Real>,
}

/// One solid of the world.
#[derive(Debug, Clone)]
struct Item {
    owner: Owner,
    part: Part,
}

/// The robot and its workspace, ready for queries.
#[derive(Debug, Clone)]
pub struct World {
    body: Body,
    matrix: Matrix,
    obstacles: Vec<Obstacle>,
    items: Vec<Item>,
    /// Pairs of `items` to measure.
    pairs: Vec<(u32, u32)>,
    /// Items measured against the floor.
    floored: Vec<u32>,
    floor: Option<f64>,
    /// Why the floor is where it is, when the workspace did not say.
    floor_origin: Option<FloorOrigin>,
    margin: f64,
    /// The workspace the obstacles came from.
    workspace: Workspace,
    /// Where each pair's (and each floor pair's) searches on hulls start:
    /// where they ended the query before.
    hints: Vec<[u32; 2]>,
    floor_hints: Vec<u32>,
    // Scratch of each query.
    poses: Vec<Isometry<Real>>,
    boxes: Vec<Aabb>,
    centres: Vec<Point<Real>>,
    order: Vec<(f64, u32)>,
    /// Bounds of the pairs' distances from the queries before.
    coherence: coherence::Coherence,
}

impl World {
    /// The world of `chain`'s robot with `workspace`, checking the pairs
    /// `matrix` does not disable.
    pub fn new(
        chain: &Chain,
        options: &CollisionOptions,
        matrix: Matrix,
        workspace: &Workspace,
    ) -> Result<World, CollisionError> {
        let body = Body::new(chain, options)?;
        World::with_body(body, options.margin, matrix, workspace)
    }

    pub(super) fn with_body(
        body: Body,
        margin: f64,
        matrix: Matrix,
        workspace: &Workspace,
    ) -> Result<World, CollisionError> {
        let mut w = World {
            body,
            matrix,
            obstacles: Vec::new(),
            items: Vec::new(),
            pairs: Vec::new(),
            floored: Vec::new(),
            floor: None,
            floor_origin: None,
            margin,
            workspace: Workspace::default(),
            hints: Vec::new(),
            floor_hints: Vec::new(),
            poses: Vec::new(),
            boxes: Vec::new(),
            centres: Vec::new(),
            order: Vec::new(),
            coherence: coherence::Coherence::default(),
        };
        w.set_workspace(workspace)?;
        Ok(w)
    }

    /// Takes a new workspace (a reloaded file): the robot stays as it is.
    /// A workspace naming a link the robot does not have is refused and
    /// the old one kept.
    pub fn set_workspace(&mut self, ws: &Workspace) -> Result<(), CollisionError> {
        let mut obstacles = Vec::new();
        let mut touches = Vec::new();
        let link = |name: &str, what: &str| {
            self.body.link(name).ok_or_else(|| {
                CollisionError::Robot(format!(
                    "workspace obstacle {what} names link '{name}', which the robot does not have"
                ))
            })
        };
        for o in &ws.obstacles {
            let frame = match o.frame.as_deref() {
                None => None,
                Some(f) if self.body.link(f) == Some(self.body.base()) => None,
                Some(f) => Some(link(f, &format!("'{}' (frame)", o.name))?),
            };
            let touch = o
                .touch
                .iter()
                .map(|t| link(t, &format!("'{}' (touch)", o.name)))
                .collect::<Result<Vec<_>, _>>()?;
            obstacles.push(Obstacle {
                name: o.name.clone(),
                frame,
                place: placement(o.position, o.rpy),
            });
            touches.push(touch);
        }
        let floor = match ws.floor {
            Floor::Off => None,
            Floor::At(z) => Some((z, None)),
            Floor::BaseBottom => {
                let (z, why) = self.body.default_floor(self.margin);
                Some((z, Some(why)))
            }
        };
        let mut items: Vec<Item> = Vec::new();
        for (l, link) in self.body.links.iter().enumerate() {
            for part in &link.parts {
                items.push(Item {
                    owner: Owner::Link(l),
                    part: part.clone(),
                });
            }
        }
        for (k, def) in ws.obstacles.iter().enumerate() {
            items.push(Item {
                owner: Owner::Obstacle(k),
                part: obstacle_part(&def.geometry),
            });
        }
        let moving = |o: Owner| match o {
            Owner::Link(l) => self.body.links[l].moving,
            Owner::Obstacle(k) => obstacles[k]
                .frame
                .is_some_and(|l: usize| self.body.links[l].moving),
            Owner::Floor => false,
        };
        let checked = |a: Owner, b: Owner| -> bool {
            if !moving(a) && !moving(b) {
                return false;
            }
            match (a, b) {
                (Owner::Link(x), Owner::Link(y)) => {
                    x != y && !self.body.adjacent(x, y) && !self.matrix.disabled(x, y)
                }
                (Owner::Link(l), Owner::Obstacle(k)) | (Owner::Obstacle(k), Owner::Link(l)) => {
                    obstacles[k].frame != Some(l) && !touches[k].contains(&l)
                }
                _ => false,
            }
        };
        let mut pairs = Vec::new();
        for i in 0..items.len() {
            for j in i + 1..items.len() {
                if checked(items[i].owner, items[j].owner) {
                    pairs.push((i as u32, j as u32));
                }
            }
        }
        let floored = (0..items.len())
            .filter(|&i| floor.is_some() && moving(items[i].owner))
            .filter(|&i| match items[i].owner {
                Owner::Link(l) => !self.body.on_base(l),
                _ => true,
            })
            .map(|i| i as u32)
            .collect();
        self.obstacles = obstacles;
        self.items = items;
        self.pairs = pairs;
        self.floored = floored;
        self.floor = floor.map(|f| f.0);
        self.floor_origin = floor.and_then(|f| f.1);
        self.workspace = ws.clone();
        self.hints = vec![[0, 0]; self.pairs.len()];
        self.floor_hints = vec![0; self.floored.len()];
        self.poses = vec![Isometry::identity(); self.items.len()];
        self.boxes = vec![Aabb::new_invalid(); self.items.len()];
        self.centres = vec![Point::origin(); self.items.len()];
        let moves = |i: u32| {
            let held = |k: usize| self.obstacles[k].frame.is_some();
            coherence::Moves::of(self.items[i as usize].owner, held)
        };
        let pairs = self.pairs.iter().map(|&(i, j)| [moves(i), moves(j)]);
        self.coherence.reset(self.body.links.len(), pairs);
        Ok(())
    }

    /// Keeps `margin` (m) from now on; the default floor, which depends on
    /// it, is placed again. The pairs left out stay as they are.
    pub fn set_margin(&mut self, margin: f64) {
        self.margin = margin;
        let ws = self.workspace.clone();
        self.set_workspace(&ws)
            .expect("the workspace was accepted with the same links");
    }

    /// Checks the pairs `matrix` does not disable from now on.
    pub fn set_matrix(&mut self, matrix: Matrix) {
        self.matrix = matrix;
        let ws = self.workspace.clone();
        self.set_workspace(&ws)
            .expect("the workspace was accepted with the same links");
    }

    /// The workspace in use.
    pub fn workspace(&self) -> &Workspace {
        &self.workspace
    }

    pub fn obstacle_count(&self) -> usize {
        self.obstacles.len()
    }

    /// The clearance the checks keep (m).
    pub fn margin(&self) -> f64 {
        self.margin
    }

    pub fn body(&self) -> &Body {
        &self.body
    }

    pub fn matrix(&self) -> &Matrix {
        &self.matrix
    }

    /// The floor's height (m, base frame), if there is one.
    pub fn floor(&self) -> Option<f64> {
        self.floor
    }

    /// Why the floor is where it is when the workspace did not place it.
    pub fn floor_origin(&self) -> Option<FloorOrigin> {
        self.floor_origin
    }

    /// Pairs measured per query (floor ones included).
    pub fn pair_count(&self) -> usize {
        self.pairs.len() + self.floored.len()
    }

    /// Every pair measured per query, by owner, each once (a link of
    /// several solids is one owner).
    pub fn checked_pairs(&self) -> Vec<(Owner, Owner)> {
        let mut out: Vec<(Owner, Owner)> = Vec::new();
        let all = self.pairs.iter().map(|&(i, j)| self.owners(i, Some(j)));
        for p in all.chain(self.floored.iter().map(|&i| self.owners(i, None))) {
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }

    /// What an owner is called: a link's or obstacle's name, or `floor`.
    pub fn name(&self, o: Owner) -> &str {
        match o {
            Owner::Link(l) => &self.body.links[l].name,
            Owner::Obstacle(k) => &self.obstacles[k].name,
            Owner::Floor => "floor",
        }
    }

    /// "forearm vs floor".
    pub fn describe(&self, n: &Nearest) -> String {
        format!("{} vs {}", self.name(n.a), self.name(n.b))
    }

    /// Places every solid for `axes` (missing trailing axes at rest).
    fn place(&mut self, axes: &[f64]) {
        let poses = self.body.place(axes);
        for (i, item) in self.items.iter().enumerate() {
            let frame = match item.owner {
                Owner::Link(l) => poses[l],
                Owner::Obstacle(k) => {
                    let o = &self.obstacles[k];
                    match o.frame {
                        Some(l) => poses[l] * o.place,
                        None => o.place,
                    }
                }
                Owner::Floor => Isometry::identity(),
            };
            let pose = frame * item.part.place;
            self.boxes[i] = item.part.aabb.transform_by(&pose);
            self.centres[i] = frame * item.part.centre;
            self.poses[i] = pose;
        }
        self.coherence.moved(&self.body, axes);
    }

    /// Signed distance of items `i` and `j` when at most `upto`, else
    /// `Err` with a lower bound of it; `hint` is where the searches on
    /// their hulls start, and end.
    fn pair_distance(&self, i: u32, j: u32, upto: f64, hint: &mut [u32; 2]) -> Result<f64, f64> {
        self.pair_contact(i, j, upto, hint)
            .map(|(c, round)| c.dist - round)
    }

    /// [`World::pair_distance`]'s contact (points and normal in the
    /// frames of `i` and `j`, the distance without the rounding) and the
    /// rounding.
    fn pair_contact(
        &self,
        i: u32,
        j: u32,
        upto: f64,
        hint: &mut [u32; 2],
    ) -> Result<(Contact, f64), f64> {
        let (a, b) = (&self.items[i as usize], &self.items[j as usize]);
        let pos12 = self.poses[i as usize].inv_mul(&self.poses[j as usize]);
        let (sa, sb) = (
            a.part.solid.support_from(hint[0]),
            b.part.solid.support_from(hint[1]),
        );
        // Rounded hulls are measured without their rounding, which comes
        // off the distance.
        let round = a.part.solid.round() + b.part.solid.round();
        // GJK's search bound must not be negative: overlaps are found by
        // EPA, past it; the caller compares the depth.
        let upto = (upto + round).clamp(0.0, FAR);
        let mut simplex = VoronoiSimplex::new();
        let found =
            contact_support_map_support_map_with_params(&pos12, &sa, &sb, upto, &mut simplex, None);
        let c = match found {
            GJKResult::ClosestPoints(p1, p2, n1) => {
                let dist = (p2 - p1).dot(&n1);
                let p2 = pos12.inverse_transform_point(&p2);
                let n2 = pos12.inverse_transform_unit_vector(&-n1);
                Contact::new(p1, p2, n1, n2, dist)
            }
            GJKResult::NoIntersection(dir) | GJKResult::Proximity(dir) => {
                // "Farther than `upto`" holds only with its witness, the
                // gap along `dir`: parry also answers this way when GJK
                // ran out of iterations or EPA failed on touching solids.
                let w = CSOPoint::from_shapes(&pos12, &sa, &sb, &dir);
                let gap = -dir.dot(&w.point.coords);
                if gap > upto {
                    *hint = [sa.hint(), sb.hint()];
                    return Err(gap - round);
                }
                // Taken as touching: a refusal, never a pass unmeasured.
                let (p1, p2) = (w.orig1, pos12.inverse_transform_point(&w.orig2));
                Contact::new(p1, p2, dir, pos12.inverse_transform_unit_vector(&-dir), 0.0)
            }
            GJKResult::Intersection => unreachable!("EPA answers overlaps"),
        };
        *hint = [sa.hint(), sb.hint()];
        Ok((c, round))
    }

    /// Signed distance of item `i` above the floor; `hint` as for pairs.
    fn floor_distance(&self, i: u32, hint: &mut u32) -> f64 {
        let item = &self.items[i as usize];
        let s = item.part.solid.support_from(*hint);
        let low = s.support_point(&self.poses[i as usize], &-Vector::z());
        *hint = s.hint();
        low.z - item.part.solid.round() - self.floor.unwrap_or(f64::NEG_INFINITY)
    }

    /// A lower bound of the distance between items `i` and `j` (placed):
    /// the gap between their bounding boxes, or when that is below
    /// `enough`, the larger of it and the gap between their balls; 0 or
    /// less when both overlap.
    fn gap(&self, i: u32, j: u32, enough: f64) -> f64 {
        let (i, j) = (i as usize, j as usize);
        let boxes = box_gap(&self.boxes[i], &self.boxes[j]);
        if boxes >= enough {
            return boxes;
        }
        let balls = (self.centres[i] - self.centres[j]).norm()
            - self.items[i].part.radius
            - self.items[j].part.radius;
        boxes.max(balls)
    }

    fn owners(&self, i: u32, j: Option<u32>) -> (Owner, Owner) {
        let a = self.items[i as usize].owner;
        (a, j.map_or(Owner::Floor, |j| self.items[j as usize].owner))
    }

    /// For each pair of links in `all`, whether any of their solids are
    /// closer than the margin at `axes`: what the check would refuse, for
    /// sampling the allowed-collision matrix.
    pub fn link_contacts(&mut self, axes: &[f64], all: &[(usize, usize)]) -> Vec<bool> {
        self.place(axes);
        let mut by_link: Vec<Vec<u32>> = vec![Vec::new(); self.body.links.len()];
        for (i, item) in self.items.iter().enumerate() {
            if let Owner::Link(l) = item.owner {
                by_link[l].push(i as u32);
            }
        }
        all.iter()
            .map(|&(x, y)| {
                by_link[x].iter().any(|&i| {
                    by_link[y].iter().any(|&j| {
                        box_gap(&self.boxes[i as usize], &self.boxes[j as usize]) < self.margin
                            && self
                                .pair_distance(i, j, self.margin, &mut [0, 0])
                                .is_ok_and(|d| d < self.margin)
                    })
                })
            })
            .collect()
    }

    /// Each item's owner and world pose after the last query, with its
    /// solid: for markers and drawings.
    pub fn solids(&self) -> impl Iterator<Item = (Owner, &Isometry<Real>, &Solid)> {
        self.items
            .iter()
            .zip(&self.poses)
            .map(|(it, p)| (it.owner, p, &it.part.solid))
    }

    /// Places the world at `axes` without measuring (for drawings).
    pub fn pose_at(&mut self, axes: &[f64]) {
        self.place(axes);
    }
}

/// The solid of an obstacle's geometry, in the obstacle's frame.
fn obstacle_part(g: &Geometry) -> Part {
    match g {
        Geometry::Box { size } => Part::new(Solid::cuboid(*size), Isometry::identity()),
        Geometry::Sphere { radius } => Part::new(
            Solid::Ball(parry3d_f64::shape::Ball::new(*radius)),
            Isometry::identity(),
        ),
        Geometry::Cylinder { radius, length } => {
            let (turn, s) = Solid::cylinder(*radius, *length);
            Part::new(s, turn)
        }
        Geometry::Capsule { radius, length } => Part::new(
            Solid::capsule([0.0, 0.0, -length / 2.0], [0.0, 0.0, length / 2.0], *radius),
            Isometry::identity(),
        ),
        Geometry::Mesh { .. } => unreachable!("workspace files have no meshes"),
    }
}

/// The gap between two boxes (0 when they overlap).
fn box_gap(a: &Aabb, b: &Aabb) -> f64 {
    let mut s = 0.0;
    for k in 0..3 {
        let g = (a.mins[k] - b.maxs[k]).max(b.mins[k] - a.maxs[k]);
        if g > 0.0 {
            s += g * g;
        }
    }
    s.sqrt()
}
