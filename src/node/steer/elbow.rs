//! Keeping the elbow's bend while steering by hand.
//!
//! An arm with more pitch joints than the position needs (shoulder, elbow
//! and wrist pitch on the project arm and the SO-101) reaches a point near
//! the edge of its workspace along a small loop of joint poses, and a
//! follower taking the least joint motion tick after tick can wander along
//! that loop: the elbow passes straight and comes out bent the other way
//! while the tip barely moves. Nothing is singular there (the wrist is
//! still bent), so slowing near singularities does not stop it, yet to the
//! person at the joystick the elbow just flipped. So while a jog or a drag
//! steers, the elbow keeps the side of straight it is bent to, as if a
//! position limit stood a little short of straight; the motion limiter's
//! braking then stops it there like at any other limit, and the other
//! joints carry on. A target or a joint command may still move it across.
//!
//! The elbow is found from the chain's geometry, not its name: the second
//! joint of a run of consecutive revolute joints with parallel axes (the
//! knee of a hip-knee leg too). Straight is where the joint before it, the
//! elbow and the next point down the chain (the next joint away from the
//! elbow's axis, or the tip) line up, seen along the axis.

use crate::model::{Chain, Frames};
use nalgebra::Vector3;
use std::f64::consts::PI;

/// How far short of straight the elbow stops (rad): about 3 degrees, which
/// costs a fraction of a millimetre of reach.
const MARGIN: f64 = 0.05;
/// Axes closer to parallel than this (sine of the angle) are parallel.
const PARALLEL: f64 = 1e-6;
/// Links shorter than this (m) across an axis do not define a bend.
const SHORT: f64 = 1e-6;

/// One elbow: its joint, its straight angle and the side it is bent to.
#[derive(Debug, Clone, PartialEq)]
struct Elbow {
    joint: usize,
    /// The joint angle at which the elbow is straight (rad).
    straight: f64,
    /// +1 or -1 once the elbow is bent more than [`MARGIN`] to that side
    /// since steering began.
    side: Option<f64>,
}

/// The chain's elbows, and the side each keeps while steering.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Elbows {
    elbows: Vec<Elbow>,
}

impl Elbows {
    /// Finds the elbows of `chain` (see the module documentation).
    pub(super) fn new(chain: &Chain) -> Elbows {
        let n = chain.dof();
        let mut frames = Frames::new(chain);
        let tip = chain
            .jacobian(&vec![0.0; n], &mut frames)
            .translation
            .vector;
        let revolute = |i: usize| chain.joints[i].kind.rotates();
        let parallel = |a: usize, b: usize| frames.axes[a].cross(&frames.axes[b]).norm() < PARALLEL;
        let mut elbows = Vec::new();
        for i in 1..n {
            let second = revolute(i - 1) && revolute(i) && parallel(i - 1, i);
            let third = i >= 2 && revolute(i - 2) && parallel(i - 2, i - 1);
            if !second || third {
                continue;
            }
            let axis = frames.axes[i];
            let across = |v: Vector3<f64>| v - axis * v.dot(&axis);
            let here = frames.origins[i].coords;
            let before = across(here - frames.origins[i - 1].coords);
            let next = (i + 1..n)
                .map(|k| frames.origins[k].coords)
                .chain(std::iter::once(tip))
                .map(|p| across(p - here))
                .find(|w| w.norm() > SHORT);
            let Some(after) = next.filter(|_| before.norm() > SHORT) else {
                continue;
            };
            let bend = axis.dot(&before.cross(&after)).atan2(before.dot(&after));
            elbows.push(Elbow {
                joint: i,
                straight: -bend,
                side: None,
            });
        }
        Elbows { elbows }
    }

    /// Steering begins: each elbow keeps the side it is bent to from now.
    pub(super) fn begin(&mut self) {
        self.elbows.iter_mut().for_each(|e| e.side = None);
    }

    /// Narrows joint `i`'s range `(lower, upper)` at position `q` to the
    /// side of straight its elbow keeps, if it is an elbow bent to a side.
    pub(super) fn narrow(&mut self, i: usize, q: f64, (lower, upper): (f64, f64)) -> (f64, f64) {
        let Some(e) = self.elbows.iter_mut().find(|e| e.joint == i) else {
            return (lower, upper);
        };
        let bend = wrap(q - e.straight);
        if e.side.is_none() && bend.abs() >= MARGIN {
            e.side = Some(bend.signum());
        }
        // Straight, in the same turn as `q`.
        let straight = q - bend;
        match e.side {
            Some(s) if s > 0.0 => (lower.max(straight + MARGIN).min(upper), upper),
            Some(_) => (lower, upper.min(straight - MARGIN).max(lower)),
            None => (lower, upper),
        }
    }
}

/// `a` in `(-pi, pi]`.
fn wrap(a: f64) -> f64 {
    let w = a.rem_euclid(2.0 * PI);
    if w > PI { w - 2.0 * PI } else { w }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/urdf/arm.urdf");

    #[test]
    fn the_project_arm_has_one_elbow_straight_at_zero() {
        let chain = Chain::from_urdf_file(ARM, None, None).unwrap();
        let elbows = Elbows::new(&chain);
        assert_eq!(elbows.elbows.len(), 1, "{elbows:?}");
        let e = &elbows.elbows[0];
        assert_eq!(chain.joints[e.joint].name, "elbow");
        assert!(e.straight.abs() < 1e-9, "{}", e.straight);
    }

    fn close((a, b): (f64, f64), (c, d): (f64, f64)) -> bool {
        (a - c).abs() < 1e-12 && (b - d).abs() < 1e-12
    }

    #[test]
    fn a_bent_elbow_keeps_its_side_and_a_straight_one_picks_one_later() {
        let chain = Chain::from_urdf_file(ARM, None, None).unwrap();
        let mut elbows = Elbows::new(&chain);
        let j = elbows.elbows[0].joint;
        let range = (-2.0944, 2.0944);
        elbows.begin();
        assert!(close(elbows.narrow(j, 1.2, range), (MARGIN, 2.0944)));
        // Still that side when it comes back near straight.
        assert!(close(elbows.narrow(j, 0.06, range), (MARGIN, 2.0944)));
        elbows.begin();
        assert_eq!(elbows.narrow(j, 0.01, range), range, "not bent yet");
        assert!(close(elbows.narrow(j, -0.3, range), (-2.0944, -MARGIN)));
        // Other joints are left alone.
        assert_eq!(elbows.narrow(j + 1, 0.01, range), range);
    }
}
