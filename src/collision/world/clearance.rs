//! The smallest distance's gradient with respect to the joints, for the
//! solvers' null-space steering ([`crate::ik::Admissible::clearance`]):
//! from the closest pair's witness points and normal and the point
//! Jacobians of the two links there, one distance query rather than one
//! per joint (as finite differences would need).

use super::{Owner, World};
use parry3d_f64::math::{Point, Real, Vector};
use parry3d_f64::shape::SupportMap;

impl World {
    /// The signed distance of the closest checked pair at `axes` when it
    /// is below `cap` (m), with its derivative with respect to each of the
    /// first `gradient.len()` axes in `gradient`. With witness points `pa`
    /// and `pb` and the unit normal `n` from the first solid to the second,
    /// `d = n · (pb - pa)`, so `∂d/∂q = n · (∂pb/∂q - ∂pa/∂q)`; each
    /// point's rate is its link's ([`super::Body::add_point_rate`]), zero
    /// for the floor and the obstacles fixed in the base frame. `None`
    /// when nothing comes within `cap`.
    pub fn distance_gradient(
        &mut self,
        axes: &[f64],
        cap: f64,
        gradient: &mut [f64],
    ) -> Option<f64> {
        let closest = self.closest_pair(axes, cap);
        let (near, k) = (closest.near, closest.pair);
        if !near.distance.is_finite() {
            return None;
        }
        gradient.fill(0.0);
        let n = self.pairs.len() as u32;
        if k < n {
            let (i, j) = self.pairs[k as usize];
            let c = closest.contact?;
            let (pose_a, pose_b) = (self.poses[i as usize], self.poses[j as usize]);
            let normal = pose_a * c.normal1.into_inner();
            let (a, b) = (self.items[i as usize].owner, self.items[j as usize].owner);
            self.add_rate(a, &(pose_a * c.point1), &-normal, gradient);
            self.add_rate(b, &(pose_b * c.point2), &normal, gradient);
        } else {
            let f = (k - n) as usize;
            let i = self.floored[f] as usize;
            let item = &self.items[i];
            let s = item.part.solid.support_from(self.floor_hints[f]);
            let low = s.support_point(&self.poses[i], &-Vector::z());
            self.add_rate(item.owner, &low, &Vector::z(), gradient);
        }
        Some(near.distance)
    }

    /// Adds how fast `point`, fixed on `owner`, moves along `dir` per unit
    /// of each axis (nothing for what the base frame holds still).
    fn add_rate(&self, owner: Owner, point: &Point<Real>, dir: &Vector<Real>, out: &mut [f64]) {
        let link = match owner {
            Owner::Link(l) => l,
            Owner::Obstacle(k) => match self.obstacles[k].frame {
                Some(l) => l,
                None => return,
            },
            Owner::Floor => return,
        };
        self.body.add_point_rate(link, point, dir, out);
    }
}
