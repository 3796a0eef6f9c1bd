//! Every tick's joint state against the joint, velocity and acceleration
//! limits, checked on what was commanded (finite differences of the
//! positions), independently of the motion limiter that produced it: a
//! limiter bug must not hide itself.

use super::outcome::LimitKind;
use super::report::{Report, TickFailure};
use crate::node::{AxisLimits, JointState};

/// The previous tick's positions and velocities, to difference against.
#[derive(Debug, Clone)]
pub(super) struct LimitCheck {
    dt: f64,
    prev_q: Vec<f64>,
    prev_v: Vec<f64>,
    /// Cap on the listed tick failures; the rest are counted.
    max_listed: usize,
}

impl LimitCheck {
    pub fn new(dt: f64, q0: &[f64], max_listed: usize) -> LimitCheck {
        LimitCheck {
            dt,
            prev_q: q0.to_vec(),
            prev_v: vec![0.0; q0.len()],
            max_listed,
        }
    }

    /// Checks tick number `tick` at simulated time `t` (s), counting and
    /// listing what it broke in `report`.
    pub fn check(
        &mut self,
        (tick, t): (u64, f64),
        js: &JointState,
        limits: &[AxisLimits],
        report: &mut Report,
    ) {
        let dt = self.dt;
        let fail = |report: &mut Report, kind, i: usize, value, limit| {
            if report.tick_failures.len() < self.max_listed {
                report.tick_failures.push(TickFailure {
                    tick,
                    time_s: t,
                    kind,
                    joint: js.name[i].clone(),
                    value,
                    limit,
                });
            } else {
                report.tick_failures_not_listed += 1;
            }
        };
        // The joints the node moves (the motion's limits); the mimic joints
        // listed after them in the joint state follow them.
        for (i, l) in limits.iter().enumerate().take(js.position.len()) {
            let q = js.position[i];
            if !q.is_finite() || !js.velocity[i].is_finite() {
                report.non_finite += 1;
                fail(report, LimitKind::NotFinite, i, q, 0.0);
                continue;
            }
            if q < l.lower - 1e-9 || q > l.upper + 1e-9 {
                report.limit_violations += 1;
                let limit = if q < l.lower { l.lower } else { l.upper };
                fail(report, LimitKind::JointLimit, i, q, limit);
            }
            let v = (q - self.prev_q[i]) / dt;
            if v.abs() > l.velocity * (1.0 + 1e-6) + 1e-9 {
                report.velocity_violations += 1;
                fail(report, LimitKind::Velocity, i, v, l.velocity);
            }
            let a = (v - self.prev_v[i]) / dt;
            if a.abs() > l.acceleration * (1.0 + 1e-6) + 1e-6 {
                report.acceleration_violations += 1;
                fail(report, LimitKind::Acceleration, i, a, l.acceleration);
            }
            self.prev_q[i] = q;
            self.prev_v[i] = v;
        }
    }
}
