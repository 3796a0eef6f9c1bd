//! Where a redundant arm's self-motion should not go: the poses where a
//! joint lines up the axes of the joints on either side of it. The xArm7's
//! and the Panda's shoulder (joint 2 at 0: joints 1 and 3 turn about one
//! line) and a spherical wrist's middle joint are such places. There the
//! two outer joints' Jacobian columns are the same: the arm loses a
//! direction, and a path passing near it asks the outer joints to swing
//! fast (their sum is set by the pose, their difference by nothing): the
//! tip lags and answers jump (issue 22, benches/README.md "Track sets").
//!
//! The limits objective cannot keep a joint off such a place when it is
//! the middle of the joint's range (the xArm7's and the Panda's joint 2),
//! so the limits objective also pushes the middle joint off the angle
//! where the axes line up, within [`ALIGNMENT_BAND`] of it. Which joints,
//! and at which angles, is read from the URDF once: the measure is the
//! joint's own angle, so the push costs a subtraction per alignment per
//! steering step and nothing on arms without one.

use super::redundancy::MOST_PULL;
use crate::ik::INTERSECTION_TOLERANCE;
use crate::ik::analytic::AXIS_TOLERANCE;
use crate::ik::geometry::angle_about_axis;
use crate::model::{Chain, Frames, wrap_angle};
use nalgebra::Vector3;

/// A joint angle at which the joints before and after it turn about one
/// line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Alignment {
    /// The middle joint (chain index).
    pub joint: usize,
    /// Its angle (rad) where the axes line up.
    pub at: f64,
}

/// How near (rad) the middle joint may come to an alignment before the
/// self-motion is pushed off it: a tuned value (benches/README.md,
/// "Fourth pass"). The xArm7's answers that lagged and jumped passed
/// within 0.01–0.15 rad of its shoulder's alignment; the push grows from 0
/// at the band's edge to [`MOST_PULL`] well inside it.
pub(super) const ALIGNMENT_BAND: f64 = 0.3;

/// The alignments of `chain`: every three consecutive rotating joints
/// whose axes meet in one point (within [`INTERSECTION_TOLERANCE`]), the
/// outer two making the same angle with the middle one (within
/// [`AXIS_TOLERANCE`]), so that some angle of the middle joint puts the
/// outer axes on one line (parallel or opposed; both when they are
/// perpendicular to it). Read at the middle of the limits: a joint's
/// turn moves the axes after it rigidly, so the geometry of three
/// consecutive axes is the same at every configuration.
pub(super) fn alignments(chain: &Chain) -> Vec<Alignment> {
    let n = chain.dof();
    let q = chain.mid_configuration();
    let mut frames = Frames::new(chain);
    chain.joint_frames(&q, &mut frames);
    let mut found = Vec::new();
    for j in 1..n.saturating_sub(1) {
        let (i, k) = (j - 1, j + 1);
        if !(i..=k).all(|m| chain.joints[m].kind.rotates()) {
            continue;
        }
        let line = |m: usize| (frames.origins[m].coords, frames.axes[m].normalize());
        let (a, b, c) = (line(i), line(j), line(k));
        let (Some(p), Some(r)) = (meet(a, b), meet(c, b)) else {
            continue;
        };
        if (p - r).norm() > INTERSECTION_TOLERANCE {
            continue;
        }
        let (ci, ck) = (a.1.dot(&b.1), c.1.dot(&b.1));
        for sign in [1.0, -1.0] {
            if (ck - sign * ci).abs() > AXIS_TOLERANCE {
                continue;
            }
            if let Some(turn) = angle_about_axis(&b.1, &c.1, &(sign * a.1)) {
                found.push(Alignment {
                    joint: j,
                    at: wrap_angle(q[j] + turn),
                });
            }
        }
    }
    if std::env::var("ALIGN_SHOW").is_ok() {
        eprintln!("alignments: {found:?}");
    }
    found
}

/// The point of line `b` where line `a` crosses it (each a point and a
/// unit direction): `None` when they are (near) parallel or miss each
/// other by more than [`INTERSECTION_TOLERANCE`].
fn meet(a: (Vector3<f64>, Vector3<f64>), b: (Vector3<f64>, Vector3<f64>)) -> Option<Vector3<f64>> {
    let normal = a.1.cross(&b.1);
    let sin2 = normal.norm_squared();
    if sin2 < AXIS_TOLERANCE * AXIS_TOLERANCE {
        return None;
    }
    let d = a.0 - b.0;
    if d.dot(&normal).abs() / sin2.sqrt() > INTERSECTION_TOLERANCE {
        return None;
    }
    // b.0 + t b.1 on a: (d - t b.1) × a.1 = 0.
    let t = d.cross(&a.1).dot(&b.1.cross(&a.1)) / sin2;
    Some(b.0 + t * b.1)
}

/// How far (rad) the self-motion should turn `a`'s joint away from it
/// in one steering step of gain `k`, on the side the joint is on: 0
/// outside [`ALIGNMENT_BAND`], `k (1 - r)/r²` at `r` of the band from it,
/// at most [`MOST_PULL`]. (`H = Σ (1/r - 1)²`, unbounded at the alignment,
/// like the limits' barrier.)
pub(super) fn alignment_push(a: &Alignment, q: &[f64], gain: f64) -> f64 {
    let band: f64 = std::env::var("ALIGN_BAND")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ALIGNMENT_BAND);
    let k: f64 = std::env::var("ALIGN_K")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0);
    let off = wrap_angle(q[a.joint] - a.at);
    let r = off.abs() / band;
    if r >= 1.0 {
        return 0.0;
    }
    let push = k * gain * (1.0 - r) / (r * r).max(1e-6);
    push.min(
        std::env::var("ALIGN_MOST")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(MOST_PULL),
    )
    .copysign(off)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    /// Three joints: `axes` their axes, all through one point unless
    /// `offset` moves the third one's along x.
    fn chain(axes: [&str; 3], offset: f64) -> Chain {
        let urdf = format!(
            r#"<robot name="three">
          <link name="a"/><link name="b"/><link name="c"/><link name="d"/>
          <joint name="j1" type="revolute"><parent link="a"/><child link="b"/>
            <axis xyz="{}"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
          <joint name="j2" type="revolute"><parent link="b"/><child link="c"/>
            <origin xyz="0 0 0.2"/>
            <axis xyz="{}"/><limit lower="-2" upper="2.4" effort="1" velocity="1"/></joint>
          <joint name="j3" type="revolute"><parent link="c"/><child link="d"/>
            <origin xyz="{offset} 0 0"/>
            <axis xyz="{}"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
        </robot>"#,
            axes[0], axes[1], axes[2]
        );
        Chain::from_urdf_str(&urdf, None, None).unwrap()
    }

    /// The xArm7's and the Panda's shoulder: z, y, z through one point.
    /// Joint 2 lines up joints 1 and 3 at 0 (parallel) and at π (opposed),
    /// whatever the middle of its range (0.2 here); with the third axis
    /// along x, at -π/2 and π/2. At each angle found the outer axes are
    /// on one line.
    #[test]
    fn a_shoulder_whose_middle_joint_lines_up_its_neighbours_is_found() {
        for (third, expected) in [("0 0 1", [0.0, PI]), ("1 0 0", [PI / 2.0, PI / 2.0])] {
            let chain = chain(["0 0 1", "0 1 0", third], 0.0);
            let found = alignments(&chain);
            assert_eq!(found.len(), 2, "{found:?}");
            let mut at: Vec<f64> = found.iter().map(|a| a.at.abs()).collect();
            at.sort_by(f64::total_cmp);
            assert!((at[0] - expected[0]).abs() < 1e-9, "{third}: {found:?}");
            assert!((at[1] - expected[1]).abs() < 1e-9, "{third}: {found:?}");
            let mut frames = Frames::new(&chain);
            for a in &found {
                assert_eq!(a.joint, 1, "{found:?}");
                chain.joint_frames(&[0.3, a.at, -0.4], &mut frames);
                let (z1, z3) = (frames.axes[0].normalize(), frames.axes[2].normalize());
                assert!(
                    z1.cross(&z3).norm() < 1e-9,
                    "{third} at {}: {z1} {z3}",
                    a.at
                );
                let apart = frames.origins[2] - frames.origins[0];
                assert!(apart.cross(&z1).norm() < 1e-9, "{third}: not on one line");
            }
        }
    }

    /// Axes that miss each other (an offset elbow), or that are parallel
    /// (a planar arm's pitch joints), never line up.
    #[test]
    fn offset_or_parallel_axes_have_no_alignment() {
        assert!(alignments(&chain(["0 0 1", "0 1 0", "0 0 1"], 0.05)).is_empty());
        assert!(alignments(&chain(["0 1 0", "0 1 0", "0 1 0"], 0.0)).is_empty());
        // Axis 3 at 45° to axis 2, axis 1 at 90°: no turn of joint 2
        // brings them together.
        assert!(alignments(&chain(["0 0 1", "0 1 0", "0 1 1"], 0.0)).is_empty());
    }

    /// The push is 0 outside the band, away from the alignment on the
    /// side the joint is on, stronger nearer it, and never above the most
    /// one step may pull.
    #[test]
    fn the_push_leads_away_from_the_alignment_and_grows_toward_it() {
        let a = Alignment { joint: 0, at: 0.0 };
        let push = |q: f64| alignment_push(&a, &[q], 0.01);
        assert_eq!(push(ALIGNMENT_BAND * 1.01), 0.0);
        assert_eq!(push(-3.0), 0.0);
        assert!(push(0.2) > 0.0 && push(-0.2) < 0.0);
        assert!(push(0.1) > push(0.2));
        assert!((push(1e-9) - MOST_PULL).abs() < 1e-12);
        // Alignments wrap: a joint near π is near an alignment at -π.
        let a = Alignment { joint: 0, at: -PI };
        assert!(alignment_push(&a, &[PI - 0.1], 0.01) < 0.0);
    }
}
