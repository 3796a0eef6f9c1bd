//! A mesh's convex hull with a fast support function. A hull of a curved
//! part has thousands of vertices (SO-101's are 450-4900), and parry's
//! [`ConvexPolyhedron`] finds the farthest one in a direction by looking at
//! every vertex, which made one GJK query cost microseconds. Here the
//! search climbs from vertex to neighbouring vertex along the hull's edges
//! while that gets farther: on a convex polytope a vertex no neighbour of
//! which is farther is the farthest of all (the simplex method's
//! argument), so the answer is exact. The climb starts from the better of
//! the last answer (GJK asks in nearby directions) and the answer for the
//! nearest of a fixed set of directions (a cube map, looked up in constant
//! time), so it takes a few steps whatever was asked before.

use parry3d_f64::math::{Point, Real, Vector};
use parry3d_f64::shape::{ConvexPolyhedron, SupportMap};
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};

/// A convex hull and its vertices' neighbours.
#[derive(Debug)]
pub struct Hull {
    /// The polyhedron itself: its bounding box, faces for markers.
    pub poly: ConvexPolyhedron,
    /// The solid is `poly` swept by a ball of this radius (m; see
    /// [`super::simplify`]): distances to it are shorter by this much.
    pub round: f64,
    /// Its vertices, in the climb's order.
    points: Vec<Point<Real>>,
    /// Neighbours of vertex `v`: `adjacent[first[v]..first[v + 1]]`.
    first: Vec<u32>,
    adjacent: Vec<u32>,
    /// Where the last search ended: the next one starts there.
    hint: AtomicU32,
    /// The farthest vertex in the direction of each cube-map cell's centre
    /// (see [`cell`]).
    map: Vec<u32>,
}

/// Cells along each side of a face of the cube map.
const CELLS: usize = 8;

/// The cube-map cell of direction `d`: the face of its largest
/// component, then the cell of the other two divided by it.
fn cell(d: &Vector<Real>) -> usize {
    let a = d.abs();
    let (face, u, v, m) = if a.x >= a.y && a.x >= a.z {
        (usize::from(d.x < 0.0), d.y, d.z, a.x)
    } else if a.y >= a.z {
        (2 + usize::from(d.y < 0.0), d.z, d.x, a.y)
    } else {
        (4 + usize::from(d.z < 0.0), d.x, d.y, a.z)
    };
    if m == 0.0 {
        return 0;
    }
    let at = |t: f64| (((t / m + 1.0) * 0.5 * CELLS as f64) as usize).min(CELLS - 1);
    (face * CELLS + at(u)) * CELLS + at(v)
}

/// The centre direction of cube-map cell `c` (the inverse of [`cell`]).
fn centre(c: usize) -> Vector<Real> {
    let (face, rest) = (c / (CELLS * CELLS), c % (CELLS * CELLS));
    let t = |i: usize| (i as f64 + 0.5) / CELLS as f64 * 2.0 - 1.0;
    let (u, v) = (t(rest / CELLS), t(rest % CELLS));
    let s = if face % 2 == 0 { 1.0 } else { -1.0 };
    match face / 2 {
        0 => Vector::new(s, u, v),
        1 => Vector::new(v, s, u),
        _ => Vector::new(u, v, s),
    }
}

impl Clone for Hull {
    fn clone(&self) -> Hull {
        Hull {
            poly: self.poly.clone(),
            round: self.round,
            points: self.points.clone(),
            first: self.first.clone(),
            adjacent: self.adjacent.clone(),
            hint: AtomicU32::new(self.hint.load(Ordering::Relaxed)),
            map: self.map.clone(),
        }
    }
}

impl Hull {
    /// The hull of `poly`, with each vertex's neighbours along its edges.
    /// The vertices are kept in the order of the cube-map cell they face
    /// from the centre, so a climb's neighbours lie close in memory (a
    /// search that missed the cache at every step cost more than GJK).
    pub fn new(poly: ConvexPolyhedron, round: f64) -> Hull {
        let n = poly.points().len();
        let c = poly
            .points()
            .iter()
            .fold(Vector::zeros(), |s, p| s + p.coords)
            / n.max(1) as f64;
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&v| cell(&(poly.points()[v].coords - c)));
        let mut rank = vec![0u32; n];
        for (r, &v) in order.iter().enumerate() {
            rank[v] = r as u32;
        }
        let points: Vec<Point<Real>> = order.iter().map(|&v| poly.points()[v]).collect();
        let mut neighbours: Vec<Vec<u32>> = vec![Vec::new(); n];
        for e in poly.edges() {
            let (a, b) = (rank[e.vertices.x as usize], rank[e.vertices.y as usize]);
            neighbours[a as usize].push(b);
            neighbours[b as usize].push(a);
        }
        let mut first = Vec::with_capacity(n + 1);
        let mut adjacent = Vec::new();
        for mut list in neighbours {
            first.push(adjacent.len() as u32);
            list.sort_unstable();
            list.dedup();
            adjacent.extend(list);
        }
        first.push(adjacent.len() as u32);
        let map = (0..6 * CELLS * CELLS)
            .map(|c| {
                let d = centre(c);
                let p = &points;
                (0..p.len())
                    .max_by(|&a, &b| p[a].coords.dot(&d).total_cmp(&p[b].coords.dot(&d)))
                    .unwrap_or(0) as u32
            })
            .collect();
        Hull {
            poly,
            round,
            points,
            first,
            adjacent,
            hint: AtomicU32::new(0),
            map,
        }
    }

    pub fn points(&self) -> &[Point<Real>] {
        &self.points
    }
}

impl Hull {
    /// The farthest vertex in `dir`, climbing from vertex `start`, which
    /// becomes the one found.
    pub fn climb(&self, dir: &Vector<Real>, start: &mut u32) -> Point<Real> {
        let points = &self.points;
        let mut at = (*start as usize).min(points.len() - 1);
        let mut best = points[at].coords.dot(dir);
        let mapped = self.map[cell(dir)] as usize;
        let d = points[mapped].coords.dot(dir);
        if d > best {
            (at, best) = (mapped, d);
        }
        loop {
            let mut next = at;
            for &v in &self.adjacent[self.first[at] as usize..self.first[at + 1] as usize] {
                let d = points[v as usize].coords.dot(dir);
                if d > best {
                    best = d;
                    next = v as usize;
                }
            }
            if next == at {
                break;
            }
            at = next;
        }
        *start = at as u32;
        points[at]
    }
}

impl SupportMap for Hull {
    fn local_support_point(&self, dir: &Vector<Real>) -> Point<Real> {
        let mut at = self.hint.load(Ordering::Relaxed);
        let p = self.climb(dir, &mut at);
        self.hint.store(at, Ordering::Relaxed);
        p
    }
}

/// A hull searched from a start vertex of the caller's: a pair of solids
/// asked about tick after tick keeps its own start on each hull, so GJK's
/// searches (in nearly the directions of the tick before) take a step or
/// two, where a start shared by every pair a hull is in took dozens.
pub struct Hinted<'a> {
    pub hull: &'a Hull,
    pub start: Cell<u32>,
}

impl SupportMap for Hinted<'_> {
    fn local_support_point(&self, dir: &Vector<Real>) -> Point<Real> {
        let mut at = self.start.get();
        let p = self.hull.climb(dir, &mut at);
        self.start.set(at);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ik::Rng;

    #[test]
    fn every_cube_map_cell_holds_its_centre() {
        for c in 0..6 * CELLS * CELLS {
            assert_eq!(cell(&centre(c)), c);
        }
    }

    /// The climb finds the vertex a scan of all of them finds, in any
    /// direction, from wherever the last search ended.
    #[test]
    fn the_climb_finds_the_farthest_vertex() {
        let mut rng = Rng::new(5);
        let mut random = |s: f64| Vector::new(rng.range(-s, s), rng.range(-s, s), rng.range(-s, s));
        // A rounded blob: many vertices on a curved surface.
        let points: Vec<Point<Real>> = (0..2000)
            .map(|_| {
                let v = random(1.0);
                Point::from(v.normalize().component_mul(&Vector::new(0.05, 0.02, 0.08)))
            })
            .collect();
        let hull = Hull::new(ConvexPolyhedron::from_convex_hull(&points).unwrap(), 0.0);
        assert!(hull.points().len() > 500, "{}", hull.points().len());
        for _ in 0..2000 {
            let dir = random(1.0);
            let climbed = hull.local_support_point(&dir).coords.dot(&dir);
            let scanned = hull
                .points()
                .iter()
                .map(|p| p.coords.dot(&dir))
                .fold(f64::NEG_INFINITY, f64::max);
            assert!(climbed >= scanned - 1e-15, "{climbed} < {scanned}");
        }
    }
}
