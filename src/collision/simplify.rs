//! A mesh hull with fewer vertices. The hull of a curved part has
//! thousands of vertices, which makes every GJK query slow (more
//! iterations, and vertices out of the cache). What is kept instead is
//! the hull of a few hundred of them, grown back by a rounding radius: a
//! vertex left out is within `tolerance` of the smaller hull, so the
//! smaller hull swept by a ball of that radius contains the whole mesh.
//! Distances to it are never longer than to the mesh's hull, and shorter
//! by at most the tolerance: the check stays on the safe side.

use parry3d_f64::math::{Point, Real, Vector};
use parry3d_f64::query::PointQuery;
use parry3d_f64::shape::ConvexPolyhedron;

/// How far (m) a vertex left out may be from the smaller hull.
pub const TOLERANCE: f64 = 1e-3;
/// Vertices added to the smaller hull per round, farthest first.
const BATCH: usize = 32;

/// A hull of some of `hull`'s vertices within `tolerance` of every other,
/// and the largest such distance (the rounding radius to add back). Starts
/// from the vertices farthest in 98 directions (a cube map of 4 cells a
/// side, its faces' centres and corners), then adds the vertex farthest
/// outside until none is farther than `tolerance`. `hull` itself (radius
/// 0) when it has few vertices or the smaller one fails to build.
pub fn simplify(hull: ConvexPolyhedron, tolerance: f64) -> (ConvexPolyhedron, f64) {
    let points = hull.points();
    if points.len() <= 2 * BATCH {
        return (hull, 0.0);
    }
    let mut keep: Vec<bool> = vec![false; points.len()];
    for d in directions() {
        let far = (0..points.len())
            .max_by(|&a, &b| {
                points[a]
                    .coords
                    .dot(&d)
                    .total_cmp(&points[b].coords.dot(&d))
            })
            .unwrap_or(0);
        keep[far] = true;
    }
    loop {
        let kept: Vec<Point<Real>> = (0..points.len())
            .filter(|&v| keep[v])
            .map(|v| points[v])
            .collect();
        let Some(small) = ConvexPolyhedron::from_convex_hull(&kept) else {
            return (hull, 0.0);
        };
        let mut outside: Vec<(f64, usize)> = (0..points.len())
            .filter(|&v| !keep[v])
            .map(|v| (small.distance_to_local_point(&points[v], true), v))
            .filter(|&(d, _)| d > 0.0)
            .collect();
        outside.sort_by(|a, b| b.0.total_cmp(&a.0));
        let worst = outside.first().map_or(0.0, |o| o.0);
        if worst <= tolerance {
            return (small, worst);
        }
        for &(d, v) in outside.iter().take(BATCH) {
            if d > tolerance {
                keep[v] = true;
            }
        }
    }
}

/// 98 directions: the faces' centres (6), edges' middles (12), corners (8)
/// and more of a cube subdivided 4 a side, normalised.
fn directions() -> impl Iterator<Item = Vector<Real>> {
    let steps = [-1.0, -0.5, 0.0, 0.5, 1.0];
    steps.into_iter().flat_map(move |x| {
        steps.into_iter().flat_map(move |y| {
            steps.into_iter().filter_map(move |z| {
                let v = Vector::new(x, y, z);
                // Only the cube's surface, not its inside.
                (v.amax() == 1.0).then(|| v.normalize())
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ik::Rng;

    /// A rounded blob of 3000 points: far fewer vertices kept, every one
    /// left out within the tolerance of the smaller hull.
    #[test]
    fn a_curved_hull_keeps_few_vertices_and_covers_the_rest() {
        let mut rng = Rng::new(9);
        let points: Vec<Point<Real>> = (0..3000)
            .map(|_| {
                let v = Vector::new(
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                    rng.range(-1.0, 1.0),
                );
                Point::from(v.normalize().component_mul(&Vector::new(0.04, 0.03, 0.06)))
            })
            .collect();
        let full = ConvexPolyhedron::from_convex_hull(&points).unwrap();
        let n = full.points().len();
        let (small, round) = simplify(full.clone(), TOLERANCE);
        assert!(
            small.points().len() * 4 < n,
            "{} of {n}",
            small.points().len()
        );
        assert!(round > 0.0 && round <= TOLERANCE, "{round}");
        for p in full.points() {
            assert!(small.distance_to_local_point(p, true) <= round + 1e-12);
        }
    }
}
