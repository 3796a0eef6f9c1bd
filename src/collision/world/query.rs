//! The queries the node asks every tick: the closest pair, and whether
//! every pair keeps a clearance. Both settle what they can from bounds
//! (bounding boxes and balls, and the pairs' distances measured by the
//! queries before, [`super::coherence`]) and measure the rest with GJK.

use super::{Nearest, Owner, World};
use parry3d_f64::query::Contact;

/// The closest pair of a query: its distance and owners, its index (into
/// the pairs, then the floor pairs after them), and for a pair of solids
/// the contact measured (points and normal in each one's frame).
pub(super) struct Closest {
    pub near: Nearest,
    pub pair: u32,
    pub contact: Option<Contact>,
}

impl World {
    /// The closest checked pair at `axes` and its signed distance;
    /// infinite when nothing is checked.
    pub fn nearest(&mut self, axes: &[f64]) -> Nearest {
        self.nearest_within(axes, f64::INFINITY)
    }

    /// [`World::nearest`] when the closest pair is closer than `cap` (m),
    /// else no pair (an infinite distance): the question "does anything
    /// come closer than this?", which skips every pair whose bounding
    /// boxes are farther apart than `cap`.
    pub fn nearest_within(&mut self, axes: &[f64], cap: f64) -> Nearest {
        self.closest_pair(axes, cap).near
    }

    /// [`World::nearest_within`] and the index of the pair it is (into
    /// the pairs, then the floor pairs after them).
    pub(super) fn closest_pair(&mut self, axes: &[f64], cap: f64) -> Closest {
        self.place(axes);
        let mut best = Closest {
            near: Nearest {
                distance: cap,
                ..Nearest::NONE
            },
            pair: u32::MAX,
            contact: None,
        };
        // The floor first: one support point per solid measures it.
        let floor = self.floor.unwrap_or(f64::NEG_INFINITY);
        let n = self.pairs.len();
        for f in 0..self.floored.len() {
            let i = self.floored[f];
            if self.boxes[i as usize].mins.z - floor >= best.near.distance {
                continue;
            }
            let mut hint = self.floor_hints[f];
            let d = self.floor_distance(i, &mut hint);
            self.floor_hints[f] = hint;
            if d < best.near.distance {
                let (a, b) = self.owners(i, None);
                best.near = Nearest { distance: d, a, b };
                best.pair = (n + f) as u32;
            }
        }
        // Then the pairs in the order of their bounds (the larger of the
        // bounding boxes' gap and what the queries before kept), each
        // measured only while its bound is below the best so far.
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        for (k, &(i, j)) in self.pairs.iter().enumerate() {
            let kept = self.coherence.bound(k);
            if kept >= best.near.distance {
                continue;
            }
            // Overlapping boxes bound nothing: the solids may overlap deeply.
            let gap = self.gap(i, j, best.near.distance);
            let bound = if gap > 0.0 { gap.max(kept) } else { kept };
            if bound < best.near.distance {
                order.push((bound, k as u32));
            }
        }
        order.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
        for &(bound, k) in &order {
            if bound >= best.near.distance {
                break;
            }
            self.measure_pair(k as usize, &mut best);
        }
        self.order = order;
        // Every pair measured or bounded: none is nearer than the best.
        self.coherence.keep_nearest(axes, best.near.distance);
        if best.near.distance >= cap {
            return Closest {
                near: Nearest::NONE,
                pair: u32::MAX,
                contact: None,
            };
        }
        best
    }

    /// Measures pair `k` up to the `best` distance so far, which it
    /// becomes when closer; what it finds (the distance, or how far beyond
    /// the best GJK showed it) is kept as the pair's bound.
    fn measure_pair(&mut self, k: usize, best: &mut Closest) {
        let (i, j) = self.pairs[k];
        let mut hint = self.hints[k];
        let upto = best.near.distance.max(0.0);
        let found = self.pair_contact(i, j, upto, &mut hint);
        self.hints[k] = hint;
        match found {
            Ok((c, round)) => {
                let d = c.dist - round;
                self.coherence.learn(k, d);
                if d < best.near.distance {
                    let (a, b) = self.owners(i, Some(j));
                    best.near = Nearest { distance: d, a, b };
                    best.pair = k as u32;
                    best.contact = Some(c);
                }
            }
            Err(far) => self.coherence.learn(k, far),
        }
    }

    /// Checks that at `axes` every checked pair is at least `clearance`
    /// apart plus, when `sweep` is given, how far each of its links may
    /// still move (`sweep[link]`, m): `Err` with the first pair that is
    /// not (and its distance).
    pub fn clear_of(
        &mut self,
        axes: &[f64],
        clearance: f64,
        sweep: Option<&[f64]>,
    ) -> Result<(), Nearest> {
        if self.coherence.settles(&self.body, axes, clearance, sweep) {
            return Ok(());
        }
        self.place(axes);
        let extra = |o: Owner| match (o, sweep) {
            (Owner::Link(l), Some(s)) => s[l],
            (Owner::Obstacle(k), Some(s)) => self.obstacles[k].frame.map_or(0.0, |l| s[l]),
            _ => 0.0,
        };
        let floor = self.floor.unwrap_or(f64::NEG_INFINITY);
        for (f, &i) in self.floored.iter().enumerate() {
            let (a, b) = self.owners(i, None);
            let needed = clearance + extra(a);
            if self.boxes[i as usize].mins.z - floor >= needed {
                continue;
            }
            let mut hint = self.floor_hints[f];
            let d = self.floor_distance(i, &mut hint);
            self.floor_hints[f] = hint;
            if d < needed {
                return Err(Nearest { distance: d, a, b });
            }
        }
        for (k, &(i, j)) in self.pairs.iter().enumerate() {
            let (a, b) = self.owners(i, Some(j));
            let needed = clearance + extra(a) + extra(b);
            if self.coherence.bound(k) >= needed {
                continue;
            }
            // Overlapping boxes bound nothing below: the solids may
            // overlap by more than `needed` allows.
            let gap = self.gap(i, j, needed);
            if gap > 0.0 && gap >= needed {
                continue;
            }
            let mut hint = self.hints[k];
            let d = self.pair_distance(i, j, needed, &mut hint);
            self.hints[k] = hint;
            self.coherence.learn(k, d.unwrap_or_else(|far| far));
            if let Ok(d) = d
                && d < needed
            {
                return Err(Nearest { distance: d, a, b });
            }
        }
        Ok(())
    }
}
