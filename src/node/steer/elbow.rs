//! Keeping the elbow's (and the wrist's) bend while steering by hand.
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
//! The wrist pitch (a later joint of the same run) keeps its bend the same
//! way while the steering only places the tip: how the tool points is then
//! the least joint motion's choice, and a wrist swinging through straight
//! as the arm stretches is a flip to the person watching. While the tip is
//! being turned, the wrist may pass straight: pitching the tool up or down
//! takes that.
//!
//! The bends are found from the chain's geometry, not their names: the
//! second and later joints of a run of consecutive revolute joints with
//! parallel axes (the elbow is the second; the knee of a hip-knee leg
//! too). Straight is where the joint before it, the joint and the next
//! point down the chain (the next joint away from its axis, or the tip)
//! line up, seen along the axis.

use crate::model::{Chain, Frames, wrap_angle};
use nalgebra::Vector3;

/// How far short of straight the elbow stops (rad): about 3 degrees, which
/// costs a fraction of a millimetre of reach.
const MARGIN: f64 = 0.05;
/// Axes closer to parallel than this (sine of the angle) are parallel.
const PARALLEL: f64 = 1e-6;
/// Links shorter than this (m) across an axis do not define a bend.
const SHORT: f64 = 1e-6;

/// One bend: its joint, its straight angle and the side it is bent to.
#[derive(Debug, Clone, PartialEq)]
struct Elbow {
    joint: usize,
    /// The elbow (the second joint of its run), or a wrist after it.
    elbow: bool,
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
            if !(revolute(i - 1) && revolute(i) && parallel(i - 1, i)) {
                continue;
            }
            let elbow = !(i >= 2 && revolute(i - 2) && parallel(i - 2, i - 1));
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
                elbow,
                straight: -bend,
                side: None,
            });
        }
        Elbows { elbows }
    }

    /// The joints that bend (elbows and the wrists after them).
    pub(super) fn joints(&self) -> impl Iterator<Item = usize> + '_ {
        self.elbows.iter().map(|e| e.joint)
    }

    /// Steering begins: each elbow keeps the side it is bent to from now.
    pub(super) fn begin(&mut self) {
        self.elbows.iter_mut().for_each(|e| e.side = None);
    }

    /// Narrows joint `i`'s range `(lower, upper)` at position `q` to the
    /// side of straight it keeps, if it is a bend bent to a side: an elbow
    /// always, a wrist while the steering is `placing` the tip without
    /// turning it.
    pub(super) fn narrow(
        &mut self,
        i: usize,
        q: f64,
        (lower, upper): (f64, f64),
        placing: bool,
    ) -> (f64, f64) {
        let Some(e) = self.elbows.iter_mut().find(|e| e.joint == i) else {
            return (lower, upper);
        };
        if !e.elbow && !placing {
            // Free to pass straight; the side is taken afresh when the
            // tip is only placed again.
            e.side = None;
            return (lower, upper);
        }
        let bend = wrap_angle(q - e.straight);
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

#[cfg(test)]
mod tests {
    use super::*;

    const ARM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/urdf/arm.urdf");

    fn close((a, b): (f64, f64), (c, d): (f64, f64)) -> bool {
        (a - c).abs() < 1e-12 && (b - d).abs() < 1e-12
    }

    #[test]
    fn the_project_arm_bends_at_the_elbow_and_the_wrist_straight_at_zero() {
        let chain = Chain::from_urdf_file(ARM, None, None).unwrap();
        let elbows = Elbows::new(&chain);
        let found: Vec<_> = elbows
            .elbows
            .iter()
            .map(|e| (chain.joints[e.joint].name.as_str(), e.elbow))
            .collect();
        assert_eq!(found, [("elbow", true), ("wrist_pitch", false)]);
        for e in &elbows.elbows {
            assert!(e.straight.abs() < 1e-9, "{e:?}");
        }
    }

    #[test]
    fn a_bent_elbow_keeps_its_side_and_a_straight_one_picks_one_later() {
        let chain = Chain::from_urdf_file(ARM, None, None).unwrap();
        let mut elbows = Elbows::new(&chain);
        let j = elbows.elbows[0].joint;
        let range = (-2.0944, 2.0944);
        elbows.begin();
        assert!(close(elbows.narrow(j, 1.2, range, false), (MARGIN, 2.0944)));
        // Still that side when it comes back near straight.
        assert!(close(elbows.narrow(j, 0.06, range, true), (MARGIN, 2.0944)));
        elbows.begin();
        assert_eq!(elbows.narrow(j, 0.01, range, true), range, "not bent yet");
        assert!(close(
            elbows.narrow(j, -0.3, range, true),
            (-2.0944, -MARGIN)
        ));
        // Other joints are left alone.
        assert_eq!(elbows.narrow(j - 1, 0.01, range, true), range);
    }

    #[test]
    fn the_wrist_keeps_its_bend_only_while_the_tip_is_placed() {
        let chain = Chain::from_urdf_file(ARM, None, None).unwrap();
        let mut elbows = Elbows::new(&chain);
        let w = elbows.elbows[1].joint;
        let range = (-1.5, 1.5);
        elbows.begin();
        assert!(close(elbows.narrow(w, 0.8, range, true), (MARGIN, 1.5)));
        // Turning the tip: free, and the side is forgotten.
        assert_eq!(elbows.narrow(w, -0.4, range, false), range);
        assert!(close(elbows.narrow(w, -0.4, range, true), (-1.5, -MARGIN)));
    }
}
