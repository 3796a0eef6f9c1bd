//! Joint bounds as the solvers see them: the URDF limits narrowed by the
//! per-joint modes. Every solver projects onto these bounds inside its loop,
//! so no intermediate or final answer ever leaves them.

use super::{IkError, Rng};
use crate::model::{Chain, Joint, JointKind, wrap_angle};
use std::f64::consts::TAU;

/// How the solver may move one joint (per axis, as in the Unity Jacobian
/// IK project): anywhere within its URDF limits, within a narrower range,
/// or not at all.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum JointMode {
    /// Within the URDF limits.
    #[default]
    Free,
    /// Within `[min, max]` intersected with the URDF limits.
    Clamp { min: f64, max: f64 },
    /// Held at the seed value.
    Lock,
}

impl JointMode {
    /// Checks the mode against the joint it applies to.
    pub fn validate(&self, joint: &Joint) -> Result<(), IkError> {
        if let JointMode::Clamp { min, max } = *self {
            let bad = |why: String| IkError::BadMode {
                joint: joint.name.clone(),
                why,
            };
            if !(min.is_finite() && max.is_finite()) {
                return Err(bad(format!("clamp range [{min}, {max}] is not finite")));
            }
            if min > max {
                return Err(bad(format!("clamp min {min} is above max {max}")));
            }
            if max < joint.limits.lower || min > joint.limits.upper {
                return Err(bad(format!(
                    "clamp range [{min}, {max}] lies outside the joint limits [{}, {}]",
                    joint.limits.lower, joint.limits.upper
                )));
            }
        }
        Ok(())
    }
}

/// Effective per-joint bounds for one solve.
#[derive(Debug, Clone, Default)]
pub struct Bounds {
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
    pub locked: Vec<bool>,
    continuous: Vec<bool>,
    /// Revolute joints (not continuous): a whole turn is the same pose.
    revolute: Vec<bool>,
}

impl Bounds {
    /// Bounds for a chain with the given modes (empty: all free). Locked
    /// joints are set by [`Bounds::lock_at`] from each solve's seed.
    pub fn new(chain: &Chain, modes: &[JointMode]) -> Bounds {
        let n = chain.dof();
        let mut b = Bounds {
            lower: Vec::with_capacity(n),
            upper: Vec::with_capacity(n),
            locked: Vec::with_capacity(n),
            continuous: Vec::with_capacity(n),
            revolute: Vec::with_capacity(n),
        };
        for (i, j) in chain.joints.iter().enumerate() {
            let mode = modes.get(i).copied().unwrap_or_default();
            let (lo, hi) = match mode {
                JointMode::Clamp { min, max } => (min.max(j.limits.lower), max.min(j.limits.upper)),
                _ => (j.limits.lower, j.limits.upper),
            };
            b.lower.push(lo);
            b.upper.push(hi);
            b.locked.push(mode == JointMode::Lock);
            b.continuous
                .push(j.kind == JointKind::Continuous && mode == JointMode::Free);
            b.revolute.push(j.kind == JointKind::Revolute);
        }
        b
    }

    /// Brings a seed into range (NaN becomes the middle of the range) and
    /// pins locked joints at it. Call once per solve, before iterating.
    pub fn lock_at(&mut self, chain: &Chain, seed: &[f64], q: &mut [f64]) {
        for i in 0..q.len() {
            let s = seed[i];
            let v = if s.is_finite() {
                s
            } else {
                chain.joints[i]
                    .limits
                    .mid()
                    .clamp(self.lower[i], self.upper[i])
            };
            q[i] = if self.continuous[i] {
                wrap_angle(v)
            } else {
                v.clamp(self.lower[i], self.upper[i])
            };
            if self.locked[i] {
                self.lower[i] = q[i];
                self.upper[i] = q[i];
            }
        }
    }

    /// Clamps `q[i]` into its bounds; the projection every step ends with.
    #[inline]
    pub fn clamp_one(&self, i: usize, v: f64) -> f64 {
        v.clamp(self.lower[i], self.upper[i])
    }

    /// Final form of a joint vector: clamped, continuous joints wrapped into
    /// `[-pi, pi]`, NaN replaced by `fallback`.
    pub fn normalize(&self, q: &mut [f64], fallback: &[f64]) {
        for i in 0..q.len() {
            let v = if q[i].is_finite() { q[i] } else { fallback[i] };
            q[i] = if self.continuous[i] {
                wrap_angle(v)
            } else {
                self.clamp_one(i, v)
            };
        }
    }

    /// Turns each revolute joint by whole turns (the same pose) to the
    /// value inside its bounds nearest `seed`: a UR5 joint ranges over two
    /// turns, and the solver may land a turn away from the seed.
    pub fn wind_toward(&self, q: &mut [f64], seed: &[f64]) {
        for (i, v) in q.iter_mut().enumerate() {
            let (lo, hi) = (self.lower[i], self.upper[i]);
            if !self.revolute[i] || hi - lo < TAU || !v.is_finite() || !seed[i].is_finite() {
                continue;
            }
            let most = ((hi - *v) / TAU).floor();
            let least = ((lo - *v) / TAU).ceil();
            let k = ((seed[i] - *v) / TAU).round().max(least).min(most);
            let w = *v + k * TAU;
            if (lo..=hi).contains(&w) {
                *v = w;
            }
        }
    }

    /// True when joint `i` has a finite range to keep away from the ends of
    /// (not continuous, both bounds finite).
    #[inline]
    pub fn limited(&self, i: usize) -> bool {
        !self.continuous[i] && self.lower[i].is_finite() && self.upper[i].is_finite()
    }

    /// True when `q[i]` sits on a bound and `step` would push it further out.
    #[inline]
    pub fn blocks(&self, i: usize, q: f64, step: f64) -> bool {
        (q <= self.lower[i] && step < 0.0) || (q >= self.upper[i] && step > 0.0)
    }

    /// A uniform random configuration within the bounds (continuous and
    /// unbounded joints in `[-pi, pi]`); locked joints keep their value.
    pub fn sample(&self, rng: &mut Rng, q: &mut [f64]) {
        for (i, v) in q.iter_mut().enumerate() {
            if !self.locked[i] {
                *v = self.place(i, rng.unit());
            }
        }
    }

    /// The point a fraction `u` in `[0, 1)` of the way through joint `i`'s
    /// range (continuous and unbounded joints: `[-pi, pi]`).
    pub fn place(&self, i: usize, u: f64) -> f64 {
        use std::f64::consts::PI;
        let lo = if self.lower[i].is_finite() {
            self.lower[i]
        } else {
            -PI
        };
        let hi = if self.upper[i].is_finite() {
            self.upper[i]
        } else {
            PI
        };
        lo + (hi - lo) * u
    }
}

/// The 2π-equivalent of `angle` inside `[lo, hi]` closest to `near`, or
/// failing that the one closest to the bounds (returned with its violation).
pub(crate) fn fit_winding(angle: f64, near: f64, lo: f64, hi: f64) -> (f64, f64) {
    let base = angle + ((near - angle) / TAU).round() * TAU;
    if (lo..=hi).contains(&base) {
        return (base, 0.0); // the usual case: the nearest turn is allowed
    }
    let mut best = (base, f64::INFINITY, f64::INFINITY);
    for k in [-1.0, 0.0, 1.0] {
        let v = base + k * TAU;
        let violation = (v - v.clamp(lo, hi)).abs();
        let dist = (v - near).abs();
        if (violation, dist) < (best.1, best.2) {
            best = (v, violation, dist);
        }
    }
    (best.0, best.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::{PI, TAU};

    fn chain(lower: f64, upper: f64) -> Chain {
        let xml = format!(
            r#"<robot name="r"><link name="a"/><link name="b"/>
            <joint name="j" type="revolute"><parent link="a"/><child link="b"/>
            <axis xyz="0 0 1"/><limit lower="{lower}" upper="{upper}" effort="1" velocity="1"/></joint>
            </robot>"#
        );
        Chain::from_urdf_str(&xml, None, None).unwrap()
    }

    #[test]
    fn winding_prefers_in_bounds_near_seed() {
        let (v, viol) = fit_winding(3.0 - TAU, 2.5, -10.0, 10.0);
        assert!((v - 3.0).abs() < 1e-12 && viol == 0.0);
        let (v, viol) = fit_winding(2.0, 0.0, -1.0, 1.0);
        assert!((v - 2.0).abs() < 1e-12 && (viol - 1.0).abs() < 1e-12);
        let (v, _) = fit_winding(0.5, 0.0, f64::NEG_INFINITY, f64::INFINITY);
        assert!((v - 0.5).abs() < 1e-12);
    }

    #[test]
    fn whole_turns_toward_the_seed_inside_the_limits() {
        let b = Bounds::new(&chain(-TAU, TAU), &[]);
        let mut q = [5.0];
        b.wind_toward(&mut q, &[0.0]);
        assert!((q[0] - (5.0 - TAU)).abs() < 1e-12);
        // The nearest turn would leave the limits: the next one inside.
        let b = Bounds::new(&chain(-1.5 * PI, 1.5 * PI), &[]);
        let mut q = [-4.0];
        b.wind_toward(&mut q, &[3.0 * PI]);
        assert!((q[0] - (-4.0 + TAU)).abs() < 1e-12);
        // Less than a turn of range: nothing to wind.
        let b = Bounds::new(&chain(-3.0, 3.0), &[]);
        let mut q = [-2.9];
        b.wind_toward(&mut q, &[2.9]);
        assert_eq!(q[0], -2.9);
    }
}
