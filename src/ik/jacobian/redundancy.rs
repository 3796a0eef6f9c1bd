//! Redundancy resolution: what a redundant arm (more joints than the
//! target constrains) does with its self-motion while it solves. The
//! descent adds `(I - J⁺J) k ∇H` to its first steps (the projected
//! gradient of a secondary objective `H`), so that the self-motion is
//! steered on every solve: a tracking solve from the last answer moves the
//! arm along its self-motion toward the objective a little each tick,
//! instead of letting the minimum-norm steps drift it into a joint limit
//! and a forced reconfiguration (issue 22).

use super::Workspace;
use crate::ik::Bounds;
use crate::model::{Chain, Frames};
use nalgebra::{Matrix3, Matrix6, Vector3, Vector6};
use std::fmt;
use std::str::FromStr;

/// The secondary objective of a redundant arm's self-motion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Redundancy {
    /// No objective: the minimum-norm steps, the self-motion wherever
    /// they take it.
    Off,
    /// Away from the joint limits: `H = Σ s²/(1 - s²)` with `s` the
    /// joint's offset from the middle of its range over half the range,
    /// 0 in the middle and unbounded at a limit, so the push grows as a
    /// joint nears one (continuous joints are left out). On position
    /// targets near a singular pose, the part of that push which would
    /// take the arm nearer the singular pose is dropped (docs/solvers.md,
    /// Redundant arms): the middle of the limits is often one (the
    /// project arm's straight arm).
    #[default]
    Limits,
    /// Toward the rest pose ([`super::JacobianOptions::rest`], by default
    /// the middle of the limits): `H = ½ |q - rest|²`, pulled at full
    /// gain in every step (the pull of earlier versions).
    Posture,
    /// Away from singular poses: up the manipulability
    /// `w = sqrt(det(J Jᵀ))`, its gradient by finite differences (one
    /// Jacobian per joint per step: the costliest objective).
    Manipulability,
}

impl Redundancy {
    /// Every objective, in the order the docs list them.
    pub const ALL: [Redundancy; 4] = [
        Redundancy::Off,
        Redundancy::Limits,
        Redundancy::Posture,
        Redundancy::Manipulability,
    ];

    /// The name the settings use.
    pub fn name(self) -> &'static str {
        match self {
            Redundancy::Off => "off",
            Redundancy::Limits => "limits",
            Redundancy::Posture => "posture",
            Redundancy::Manipulability => "manipulability",
        }
    }
}

impl fmt::Display for Redundancy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Redundancy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Redundancy::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Redundancy::ALL.iter().map(|r| r.name()).collect();
                format!("'{s}' is not one of {}", names.join(", "))
            })
    }
}

/// Largest pull on one joint in one step (rad or m): near a limit the
/// limits' gradient is unbounded.
const MOST_PULL: f64 = 0.05;

/// `z = -k ∇H` at `q` for the limits objective, per joint in its own
/// share of the range: a joint `s` of the way from its middle to a limit
/// is pulled `k s/(1 - s²)²` rad (or m) toward the middle, whatever the
/// width of its range, so that near the middle it is `k (mid - q)/half`.
/// A joint with two turns of range (the xArm7's ±2π joints) is pulled as
/// little as its far limits deserve: pulled by the radian, as a posture
/// pull would (the objective before), its middle held those joints near 0
/// and put the xArm7's self-motion where its wrist passes its lock
/// (joints 5 and 7 in line) and joint 5 had to turn at 2.2 rad/s
/// (benches/README.md, Track sets).
pub(super) fn limits_pull(bounds: &Bounds, q: &[f64], gain: f64, z: &mut [f64]) {
    for (i, zi) in z.iter_mut().enumerate() {
        *zi = 0.0;
        if !bounds.limited(i) {
            continue;
        }
        let (lo, hi) = (bounds.lower[i], bounds.upper[i]);
        let half = 0.5 * (hi - lo);
        if half <= 0.0 {
            continue;
        }
        let s = ((q[i] - 0.5 * (lo + hi)) / half).clamp(-0.999, 0.999);
        let d = 1.0 - s * s;
        *zi = (-gain * s / (d * d)).clamp(-MOST_PULL, MOST_PULL);
    }
}

/// `z = k (rest - q)`: the posture pull.
pub(super) fn posture_pull(rest: &[f64], q: &[f64], gain: f64, z: &mut [f64]) {
    for ((zi, r), v) in z.iter_mut().zip(rest).zip(q) {
        *zi = gain * (r - v);
    }
}

/// The share of the missing room (the band less the clearance) the first
/// steering step of a solve asks its clearance pull to gain; later steps
/// ask half as much each, as the other pulls fade. About half the missing
/// room in all, before the null-space projection takes the part the task
/// needs.
const CLEARANCE_GAIN: f64 = 0.25;

/// Adds to `z` the clearance objective's pull: the joint step that, were
/// it all self-motion, would raise the clearance `room` (m, from the
/// check) by `CLEARANCE_GAIN · fade · (band - room)` along its gradient
/// `gradient` (m per rad or m): `H = ½ (band - room)²` inside the band,
/// steepest at contact. No joint is pulled more than [`MOST_PULL`] (the
/// step is shortened whole, keeping its direction).
pub(super) fn clearance_pull(room: f64, band: f64, gradient: &[f64], fade: f64, z: &mut [f64]) {
    let norm2: f64 = gradient.iter().map(|g| g * g).sum();
    if !(norm2 > 1e-12 && room.is_finite()) {
        return;
    }
    let scale = CLEARANCE_GAIN * fade * (band - room).max(0.0) / norm2;
    let largest = gradient.iter().fold(0.0f64, |m, g| m.max(g.abs())) * scale;
    let shorten = if largest > MOST_PULL {
        MOST_PULL / largest
    } else {
        1.0
    };
    for (zi, g) in z.iter_mut().zip(gradient) {
        *zi += scale * shorten * g;
    }
}

/// Joint offset of the manipulability's finite differences (rad or m).
const DELTA: f64 = 1e-6;

/// `z = k ∇ log w` at `ws.q` by forward differences, `w` the
/// manipulability of the weighted task Jacobian (`ws.frames` holds the
/// Jacobian at `ws.q`; `ws.trial_frames` and `ws.scratch` are used).
/// `tool`: a pointing target's tool axis (tip frame), whose roll is not
/// part of the task.
pub(super) fn manipulability_pull(
    chain: &Chain,
    weights: (f64, f64),
    tool: Option<Vector3<f64>>,
    gain: f64,
    ws: &mut Workspace,
) {
    let tip = chain.fk(&ws.q);
    let here = log_manipulability(&ws.frames, weights, tool.map(|t| tip.rotation * t));
    for i in 0..ws.q.len() {
        ws.scratch.copy_from_slice(&ws.q);
        ws.scratch[i] += DELTA;
        let tip = chain.jacobian(&ws.scratch, &mut ws.trial_frames);
        let roll = tool.map(|t| tip.rotation * t);
        let there = log_manipulability(&ws.trial_frames, weights, roll);
        let g = gain * (there - here) / DELTA;
        ws.pull[i] = if g.is_finite() {
            g.clamp(-MOST_PULL, MOST_PULL)
        } else {
            0.0
        };
    }
}

/// Below this ratio of the smallest to the largest singular value of the
/// position Jacobian, [`spare_singular`] acts, fully at 0, not at all at
/// the ratio (linearly between). Measured on track sets
/// (benches/README.md, Ten seeds): at 0.3, 7 more of 282 sets pass and
/// none fails that passed; at 0.5 one fails; at 0.1 and 0.2 only one
/// more passes; at 0.7 and above, or without the linear fade, sets that
/// passed fail.
const SINGULAR_SHARE: f64 = 0.3;

/// Keeps the limits' pull in `ws.pull` (position targets) from steering
/// the arm toward a singular pose while it is near one: removes from the
/// pull its component down the gradient of the position manipulability
/// `log w` (when the pull has one), weighted by how near the pose is
/// ([`SINGULAR_SHARE`]). `ws.frames` holds the Jacobian at `ws.q`; the
/// gradient ([`lift_gradient`]) goes to `ws.lift`. Why: where the middle
/// of the limits is itself singular (the project arm's straight arm, the
/// Panda's shoulder lock), the limits' pull drags the self-motion along
/// the singular pose, where its loop shrinks and the answer leaves it on
/// the other bend than the path; adding the manipulability's gradient
/// instead (pushing away) made as many sets fail as it fixed.
pub(super) fn spare_singular(chain: &Chain, ws: &mut Workspace) {
    let gram = position_gram(&ws.frames);
    let share = position_share(&gram);
    if share.is_nan() || share >= SINGULAR_SHARE {
        return;
    }
    let weight = 1.0 - share / SINGULAR_SHARE;
    lift_gradient(chain, &ws.frames, &gram, &mut ws.lift);
    let gg: f64 = ws.lift.iter().map(|g| g * g).sum();
    let down: f64 = ws.pull.iter().zip(&ws.lift).map(|(p, g)| p * g).sum();
    if gg > 0.0 && down < 0.0 {
        let drop = weight * down / gg;
        for (p, g) in ws.pull.iter_mut().zip(&ws.lift) {
            *p -= drop * g;
        }
    }
}

/// `∇ log sqrt(det(J Jᵀ))` over the position rows `J` of the Jacobian in
/// `frames`, into `lift`, in closed form: `∂/∂qᵢ = Σₖ Jₖᵀ (J Jᵀ)⁻¹ ∂Jₖ/∂qᵢ`,
/// where a turning joint `i` before `k` turns column `k` (`∂Jₖ = wᵢ × Jₖ`)
/// and any joint `i` from `k` on moves the tip (`∂Jₖ = wₖ × Jᵢ` for a
/// turning `k`; a sliding `k`'s column is its axis). Cross products only:
/// by finite differences it took a Jacobian per joint. 0 at an exactly
/// singular pose, where it has no value. `gram`: `J Jᵀ`
/// ([`position_gram`]).
fn lift_gradient(chain: &Chain, frames: &Frames, gram: &Matrix3<f64>, lift: &mut [f64]) {
    let cols = &frames.columns;
    let Some(inverse) = gram.try_inverse() else {
        lift.fill(0.0);
        return;
    };
    let turns = |i: usize| chain.joints[i].kind.rotates();
    for (i, g) in lift.iter_mut().enumerate() {
        *g = 0.0;
        for (k, ck) in cols.iter().enumerate() {
            let d = if i < k {
                if turns(i) {
                    frames.axes[i].cross(&ck.linear)
                } else {
                    continue;
                }
            } else if turns(k) {
                frames.axes[k].cross(&cols[i].linear)
            } else {
                continue;
            };
            *g += (inverse * ck.linear).dot(&d);
        }
        if !g.is_finite() {
            *g = 0.0;
        }
    }
}

/// `J Jᵀ` of the position rows `J` of the Jacobian in `frames`: what
/// [`position_share`] and [`lift_gradient`] both start from.
fn position_gram(frames: &Frames) -> Matrix3<f64> {
    let mut m = Matrix3::<f64>::zeros();
    for c in &frames.columns {
        m += c.linear * c.linear.transpose();
    }
    m
}

/// The smallest over the largest singular value of the position rows of
/// the Jacobian whose `J Jᵀ` is `gram`: 0 at a singular pose, whatever
/// the arm's size.
fn position_share(gram: &Matrix3<f64>) -> f64 {
    let ev = gram.symmetric_eigenvalues();
    let largest = ev.max();
    if largest.is_nan() || largest <= 0.0 {
        return 0.0;
    }
    (ev.min().max(0.0) / largest).sqrt()
}

/// `log sqrt(det(J W Jᵀ))` over the rows the target weighs (position
/// only: the 3 × 3 block); very negative at a singular pose. `roll`
/// (pointing targets, base frame): the angular rows are taken across it,
/// and the roll direction itself counted once, so that the determinant
/// measures the five rows the task has.
fn log_manipulability(frames: &Frames, (wp, wo): (f64, f64), roll: Option<Vector3<f64>>) -> f64 {
    let mut m = Matrix6::<f64>::zeros();
    for c in &frames.columns {
        let angular = match roll {
            Some(r) => c.angular - r * r.dot(&c.angular),
            None => c.angular,
        };
        let v = Vector6::new(
            wp * c.linear.x,
            wp * c.linear.y,
            wp * c.linear.z,
            wo * angular.x,
            wo * angular.y,
            wo * angular.z,
        );
        m += v * v.transpose();
    }
    if let Some(r) = roll {
        let v = Vector6::new(0.0, 0.0, 0.0, wo * r.x, wo * r.y, wo * r.z);
        m += v * v.transpose();
    }
    let det = if wo == 0.0 {
        Matrix3::from(m.fixed_view::<3, 3>(0, 0)).determinant()
    } else {
        m.determinant()
    };
    0.5 * det.max(1e-300).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two joints as far toward a limit as a share of their ranges are
    /// pulled alike; one with two turns of range, as far off its middle in
    /// radians as a narrow one, much less.
    #[test]
    fn the_limits_pull_goes_by_the_share_of_the_range() {
        let urdf = r#"<robot name="two">
          <link name="a"/><link name="b"/><link name="c"/>
          <joint name="narrow" type="revolute"><parent link="a"/><child link="b"/>
            <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
          <joint name="wide" type="revolute"><parent link="b"/><child link="c"/>
            <origin xyz="0.1 0 0"/><axis xyz="0 0 1"/>
            <limit lower="-6.283185307179586" upper="6.283185307179586" effort="1" velocity="1"/></joint>
        </robot>"#;
        let chain = Chain::from_urdf_str(urdf, None, None).unwrap();
        let bounds = Bounds::new(&chain, &[]);
        let mut z = [0.0; 2];
        limits_pull(&bounds, &[0.5, std::f64::consts::PI], 0.03, &mut z);
        assert!(z[0] < 0.0 && z[1] < 0.0, "both toward the middle: {z:?}");
        assert!(
            (z[0] - z[1]).abs() < 1e-12,
            "the same share, the same pull: {z:?}"
        );
        limits_pull(&bounds, &[0.5, 0.5], 0.03, &mut z);
        assert!(
            z[1].abs() * 6.0 < z[0].abs(),
            "the wide joint is hardly pulled: {z:?}"
        );
    }

    /// A yaw and three pitch joints in a line along x: the middle of the
    /// limits is the straight arm, a singular pose.
    const STRAIGHT_MIDDLE: &str = r#"<robot name="line">
      <link name="a"/><link name="b"/><link name="c"/><link name="d"/><link name="e"/><link name="tip"/>
      <joint name="yaw" type="revolute"><parent link="a"/><child link="b"/>
        <axis xyz="0 0 1"/><limit lower="-1.5" upper="1.5" effort="1" velocity="1"/></joint>
      <joint name="p1" type="revolute"><parent link="b"/><child link="c"/>
        <axis xyz="0 1 0"/><limit lower="-1.5" upper="1.5" effort="1" velocity="1"/></joint>
      <joint name="p2" type="revolute"><parent link="c"/><child link="d"/>
        <origin xyz="0.1 0 0"/><axis xyz="0 1 0"/><limit lower="-1.5" upper="1.5" effort="1" velocity="1"/></joint>
      <joint name="p3" type="revolute"><parent link="d"/><child link="e"/>
        <origin xyz="0.1 0 0"/><axis xyz="0 1 0"/><limit lower="-1.5" upper="1.5" effort="1" velocity="1"/></joint>
      <joint name="t" type="fixed"><parent link="e"/><child link="tip"/><origin xyz="0.1 0 0"/></joint>
    </robot>"#;

    /// The limits' pull at `q`, before and after [`spare_singular`], and
    /// the rate of the position manipulability `log w` along each.
    fn spared(q: [f64; 4]) -> (Vec<f64>, Vec<f64>, f64, f64) {
        let chain = Chain::from_urdf_str(STRAIGHT_MIDDLE, None, None).unwrap();
        let mut ws = Workspace::new(&chain, Bounds::new(&chain, &[]));
        ws.q.copy_from_slice(&q);
        chain.jacobian(&ws.q, &mut ws.frames);
        limits_pull(&ws.bounds, &ws.q, 0.05, &mut ws.pull);
        let before = ws.pull.clone();
        spare_singular(&chain, &mut ws);
        let after = ws.pull.clone();
        let rate = |pull: &[f64]| {
            let mut frames = Frames::new(&chain);
            chain.jacobian(&q, &mut frames);
            let here = log_manipulability(&frames, (1.0, 0.0), None);
            let moved: Vec<f64> = q.iter().zip(pull).map(|(v, p)| v + 1e-4 * p).collect();
            chain.jacobian(&moved, &mut frames);
            (log_manipulability(&frames, (1.0, 0.0), None) - here) / 1e-4
        };
        let (r0, r1) = (rate(&before), rate(&after));
        (before, after, r0, r1)
    }

    /// Nearly straight, the limits pull the arm straighter (toward their
    /// middle): spared, the pull no longer lowers the manipulability, or
    /// hardly, and still pulls the joints toward the middle on the whole.
    #[test]
    fn near_a_singular_middle_the_limits_no_longer_straighten_the_arm() {
        let (before, after, r0, r1) = spared([0.1, 0.12, 0.1, -0.15]);
        assert!(r0 < 0.0, "the limits' pull straightens the arm: {r0}");
        assert!(r1 > 0.3 * r0, "spared, it hardly does: {r1} against {r0}");
        let toward: f64 = after.iter().zip(&before).map(|(a, b)| a * b).sum();
        assert!(
            toward > 0.0,
            "still toward the middle: {after:?} {before:?}"
        );
    }

    /// Near the singular pose too, a pull that bends the arm further
    /// (up the manipulability) is left as it is: only straightening is
    /// spared.
    #[test]
    fn a_limits_pull_that_bends_the_arm_is_left_alone() {
        let (before, after, r0, _) = spared([0.1, 0.6, 1.2, -0.9]);
        assert!(r0 > 0.0, "this pull bends the arm: {r0}");
        assert_eq!(before, after);
    }

    /// The closed-form gradient is the finite differences' of `log w`,
    /// with turning and sliding joints.
    #[test]
    fn the_manipulability_gradient_matches_finite_differences() {
        let sliding = STRAIGHT_MIDDLE
            .replace(r#"name="p2" type="revolute""#, r#"name="p2" type="prismatic""#)
            .replace(r#"<origin xyz="0.1 0 0"/><axis xyz="0 1 0"/><limit lower="-1.5" upper="1.5" effort="1" velocity="1"/></joint>
      <joint name="p3""#, r#"<origin xyz="0.1 0 0"/><axis xyz="1 0 1"/><limit lower="-0.1" upper="0.1" effort="1" velocity="1"/></joint>
      <joint name="p3""#);
        assert!(sliding.contains("prismatic") && sliding.contains(r#"axis xyz="1 0 1""#));
        for urdf in [STRAIGHT_MIDDLE, sliding.as_str()] {
            let chain = Chain::from_urdf_str(urdf, None, None).unwrap();
            let q = [0.3, 0.5, 0.04, -0.7];
            let mut frames = Frames::new(&chain);
            chain.jacobian(&q, &mut frames);
            let mut lift = [0.0; 4];
            lift_gradient(&chain, &frames, &position_gram(&frames), &mut lift);
            let here = log_manipulability(&frames, (1.0, 0.0), None);
            for i in 0..4 {
                let mut moved = q;
                moved[i] += 1e-7;
                chain.jacobian(&moved, &mut frames);
                let there = log_manipulability(&frames, (1.0, 0.0), None);
                let fd = (there - here) / 1e-7;
                assert!(
                    (fd - lift[i]).abs() < 1e-4 * (1.0 + fd.abs()),
                    "joint {i}: {} against {fd} ({urdf})",
                    lift[i]
                );
            }
        }
    }

    #[test]
    fn names_round_trip_and_a_wrong_one_lists_the_others() {
        for r in Redundancy::ALL {
            assert_eq!(r.name().parse::<Redundancy>(), Ok(r));
        }
        let e = "sideways".parse::<Redundancy>().unwrap_err();
        assert!(e.contains("limits") && e.contains("posture"), "{e}");
    }
}
