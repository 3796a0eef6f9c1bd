//! Target scenarios for CI without a robot: a YAML list of timed
//! waypoints, sampled at a fixed rate (linear in position, slerp in
//! orientation) into the target messages `arm_ik make-bag` writes.
//!
//! ```yaml
//! topic: /target_point     # default: /target_point, or /target_pose with orientations
//! frame_id: base_link      # default
//! rate_hz: 50              # default
//! start_time_ns: 1700000000000000000   # bag time of t = 0 (default)
//! repeat: 1                # play the waypoints this many times (default 1)
//! waypoints:
//!   - {time: 0.0, position: [0.20, 0.00, 0.15]}
//!   - {time: 2.0, position: [0.20, 0.08, 0.20], orientation: [0, 0, 0, 1]}
//! ```
//!
//! Orientation is on every waypoint (`PoseStamped` targets) or on none
//! (`PointStamped`: position-only targets). Each goes on the topic
//! `ik_node` takes it on unless `topic` names another; naming the other
//! type's topic is an error, since DDS would match neither the node nor a
//! recorder to it.

use super::messages::{Header, StampedTarget, TargetType};
use crate::ik::quaternion_from_xyzw;
use serde::Deserialize;
use thiserror::Error;

/// The fastest target stream `make-bag` writes without being forced:
/// 1 kHz is the input rate the node is measured at (docs/benchmarks.md);
/// a faster one is a typo more often than a test.
pub const MAX_RATE_HZ: f64 = 1000.0;

/// The most messages `make-bag` writes without being forced: about 3 s of
/// work and at most about 150 MB in MCAP, 450 MB in sqlite3. A scenario at
/// `rate_hz: 1e9` once filled 856 MB of disk in 20 s.
pub const MAX_MESSAGES: u64 = 5_000_000;

/// The latest time a ROS 2 stamp holds (s since 1970): `builtin_interfaces/
/// Time` has 32-bit signed seconds.
pub const MAX_STAMP_S: f64 = i32::MAX as f64;

/// A scenario that would write a larger bag than asked for is likely.
#[derive(Debug, Error, PartialEq)]
#[non_exhaustive]
pub enum TooBig {
    #[error(
        "rate_hz {rate_hz} is above {MAX_RATE_HZ} Hz, the most make-bag writes without --force"
    )]
    Rate { rate_hz: f64 },
    #[error(
        "{messages} messages ({seconds:.0} s at {rate_hz} Hz) are more than {MAX_MESSAGES}, the most make-bag writes without --force; lower rate_hz or repeat"
    )]
    Messages {
        messages: u64,
        seconds: f64,
        rate_hz: f64,
    },
}

fn default_frame() -> String {
    "base_link".into()
}
fn default_rate() -> f64 {
    50.0
}
fn default_start() -> u64 {
    1_700_000_000_000_000_000
}
fn default_repeat() -> u64 {
    1
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Default: the type's own topic (see [`Scenario::topic`]).
    #[serde(default)]
    pub topic: Option<String>,
    #[serde(default = "default_frame")]
    pub frame_id: String,
    #[serde(default = "default_rate")]
    pub rate_hz: f64,
    #[serde(default = "default_start")]
    pub start_time_ns: u64,
    #[serde(default = "default_repeat")]
    pub repeat: u64,
    pub waypoints: Vec<Waypoint>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Waypoint {
    /// Seconds from the start.
    pub time: f64,
    /// Metres, in `frame_id`.
    pub position: [f64; 3],
    /// `x, y, z, w`; normalised when read (its length must be within
    /// [`QUATERNION_LENGTH_TOLERANCE`](crate::ik::QUATERNION_LENGTH_TOLERANCE) of 1).
    #[serde(default)]
    pub orientation: Option<[f64; 4]>,
}

impl Scenario {
    /// Parses and checks a scenario; errors say which waypoint is wrong.
    pub fn from_yaml(text: &str) -> Result<Scenario, String> {
        let mut s: Scenario = serde_norway::from_str(text).map_err(|e| e.to_string())?;
        s.check()?;
        Ok(s)
    }

    fn check(&mut self) -> Result<(), String> {
        if !(self.rate_hz.is_finite() && self.rate_hz > 0.0) {
            return Err(format!(
                "rate_hz {} must be a positive number",
                self.rate_hz
            ));
        }
        if self.waypoints.is_empty() {
            return Err("no waypoints".into());
        }
        self.check_topic()?;
        let with_q = self.waypoints[0].orientation.is_some();
        let mut last = f64::NEG_INFINITY;
        for (i, w) in self.waypoints.iter_mut().enumerate() {
            if !w.time.is_finite() || w.time < 0.0 || w.time <= last {
                return Err(format!(
                    "waypoint {i}: time {} must be finite, 0 or more, and after the previous one",
                    w.time
                ));
            }
            last = w.time;
            if w.position.iter().any(|x| !x.is_finite()) {
                return Err(format!(
                    "waypoint {i}: position {:?} is not finite",
                    w.position
                ));
            }
            if w.orientation.is_some() != with_q {
                return Err(format!(
                    "waypoint {i}: give an orientation on every waypoint or on none"
                ));
            }
            if let Some(q) = &mut w.orientation {
                // The node's rule for a target's quaternion, so a scenario
                // never writes a bag that the node would refuse.
                let unit = quaternion_from_xyzw(*q).map_err(|e| format!("waypoint {i}: {e}"))?;
                *q = [unit.i, unit.j, unit.k, unit.w];
            }
        }
        self.check_end()
    }

    /// The bag must end at a time a ROS 2 stamp can hold: its seconds are
    /// a 32-bit integer. Computed in floating point, so a waypoint at
    /// `time: 1e19` is refused here instead of overflowing the message
    /// count into an empty bag.
    pub fn check_end(&self) -> Result<(), String> {
        let last = self.waypoints[self.waypoints.len() - 1].time;
        let per_pass = (last * self.rate_hz + 1e-9).floor() + 1.0;
        let messages = per_pass * self.repeat as f64;
        let start_s = self.start_time_ns as f64 / 1e9;
        let end_s = start_s + (messages - 1.0) / self.rate_hz;
        if !(messages < 2f64.powi(53) && end_s <= MAX_STAMP_S) {
            return Err(format!(
                "the bag would end {:.3e} s after 1970 ({messages:.3e} messages: the last waypoint at {last:.3e} s, rate_hz {:.3e}, repeat {}), past the latest time a ROS 2 stamp holds ({MAX_STAMP_S} s, 2038-01-19); lower the times, rate_hz, repeat or start_time_ns",
                end_s, self.rate_hz, self.repeat
            ));
        }
        Ok(())
    }

    /// A topic that `ik_node` takes the other type on is refused.
    fn check_topic(&self) -> Result<(), String> {
        let ty = self.target_type();
        match &self.topic {
            Some(t) if t.trim_start_matches('/') == ty.other().topic().trim_start_matches('/') => {
                Err(format!(
                    "topic {t} carries {} for ik_node, but these waypoints are {} ({}): \
                     leave topic out for {}, or name a remapped topic",
                    ty.other().short_name(),
                    ty.short_name(),
                    if ty == TargetType::Point {
                        "no orientation"
                    } else {
                        "with orientations"
                    },
                    ty.topic()
                ))
            }
            _ => Ok(()),
        }
    }

    /// The topic the targets go on.
    pub fn topic(&self) -> &str {
        self.topic
            .as_deref()
            .unwrap_or_else(|| self.target_type().topic())
    }

    pub fn target_type(&self) -> TargetType {
        if self.waypoints[0].orientation.is_some() {
            TargetType::Pose
        } else {
            TargetType::Point
        }
    }

    /// Samples in one pass through the waypoints.
    fn per_pass(&self) -> u64 {
        let last = self.waypoints[self.waypoints.len() - 1].time;
        (last * self.rate_hz + 1e-9).floor() as u64 + 1
    }

    /// Refuses a scenario larger than `make-bag` writes without `--force`:
    /// a rate above 1 kHz or a bag of more than five million messages
    /// ([`TooBig`] says which, and by how much).
    pub fn check_size(&self) -> Result<(), TooBig> {
        if self.rate_hz > MAX_RATE_HZ {
            return Err(TooBig::Rate {
                rate_hz: self.rate_hz,
            });
        }
        let messages = self.len();
        if messages > MAX_MESSAGES {
            return Err(TooBig::Messages {
                messages,
                seconds: messages as f64 / self.rate_hz,
                rate_hz: self.rate_hz,
            });
        }
        Ok(())
    }

    /// How many messages [`Scenario::samples`] yields.
    pub fn len(&self) -> u64 {
        self.per_pass().saturating_mul(self.repeat)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The targets with their bag time (ns), generated lazily, evenly
    /// spaced at `rate_hz` across passes.
    pub fn samples(&self) -> impl Iterator<Item = (u64, StampedTarget)> + '_ {
        let n = self.per_pass();
        (0..self.len()).map(move |i| {
            let local = (i % n) as f64 / self.rate_hz;
            let t_ns = self.start_time_ns + (i as f64 / self.rate_hz * 1e9).round() as u64;
            let (position, orientation) = self.at(local);
            let target = StampedTarget {
                header: Header {
                    stamp_ns: t_ns as i64,
                    frame_id: self.frame_id.clone(),
                },
                position,
                orientation,
            };
            (t_ns, target)
        })
    }

    /// The pose at `t` seconds into a pass.
    pub fn at(&self, t: f64) -> ([f64; 3], Option<[f64; 4]>) {
        let w = &self.waypoints;
        let j = w.partition_point(|p| p.time <= t);
        if j == 0 {
            return (w[0].position, w[0].orientation);
        }
        if j == w.len() {
            return (w[j - 1].position, w[j - 1].orientation);
        }
        let (a, b) = (&w[j - 1], &w[j]);
        let s = (t - a.time) / (b.time - a.time);
        let p: [f64; 3] =
            std::array::from_fn(|k| a.position[k] + s * (b.position[k] - a.position[k]));
        let q = match (a.orientation, b.orientation) {
            (Some(qa), Some(qb)) => Some(slerp(qa, qb, s)),
            _ => None,
        };
        (p, q)
    }
}

/// Spherical linear interpolation of unit quaternions along the shorter
/// arc; normalised linear interpolation when they are nearly equal (where
/// slerp's `1/sin` loses precision).
pub fn slerp(a: [f64; 4], b: [f64; 4], s: f64) -> [f64; 4] {
    let mut d: f64 = (0..4).map(|k| a[k] * b[k]).sum();
    let mut b = b;
    if d < 0.0 {
        b = b.map(|x| -x);
        d = -d;
    }
    let (wa, wb) = if d > 0.9995 {
        (1.0 - s, s)
    } else {
        let theta = d.min(1.0).acos();
        let sin = theta.sin();
        (((1.0 - s) * theta).sin() / sin, (s * theta).sin() / sin)
    };
    let q: [f64; 4] = std::array::from_fn(|k| wa * a[k] + wb * b[k]);
    let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
    q.map(|x| x / n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_interpolate_and_repeat() {
        let s = Scenario::from_yaml(
            "rate_hz: 10\nrepeat: 2\nwaypoints:\n  - {time: 0, position: [0, 0, 0]}\n  - {time: 1, position: [1, 2, 3]}\n",
        )
        .unwrap();
        assert_eq!(s.len(), 22);
        let v: Vec<_> = s.samples().collect();
        assert_eq!(v[5].1.position, [0.5, 1.0, 1.5]);
        assert_eq!(v[10].1.position, [1.0, 2.0, 3.0]);
        assert_eq!(v[11].1.position, [0.0, 0.0, 0.0]);
        assert_eq!(v[11].0 - v[10].0, 100_000_000);
        assert_eq!(s.target_type(), TargetType::Point);
    }

    #[test]
    fn slerp_halfway_about_z() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let q = slerp([0.0, 0.0, 0.0, 1.0], [0.0, 0.0, h, h], 0.5);
        let want = (std::f64::consts::PI / 8.0).sin();
        assert!((q[2] - want).abs() < 1e-12, "{q:?}");
        // The short way round even when the second is given negated.
        let q2 = slerp([0.0, 0.0, 0.0, 1.0], [0.0, 0.0, -h, -h], 0.5);
        assert!((q2[2] - want).abs() < 1e-12, "{q2:?}");
    }

    #[test]
    fn bad_scenarios_say_which_waypoint() {
        let e = Scenario::from_yaml(
            "waypoints:\n  - {time: 1, position: [0, 0, 0]}\n  - {time: 0.5, position: [0, 0, 0]}\n",
        )
        .unwrap_err();
        assert!(e.contains("waypoint 1"), "{e}");
        let e = Scenario::from_yaml(
            "waypoints:\n  - {time: 0, position: [0, 0, 0], orientation: [0, 0, 0, 1]}\n  - {time: 1, position: [0, 0, 0]}\n",
        )
        .unwrap_err();
        assert!(e.contains("every waypoint"), "{e}");
    }

    #[test]
    fn rates_and_counts_beyond_the_maximum_are_refused() {
        let yaml = |rate: &str| {
            format!(
                "rate_hz: {rate}\nwaypoints:\n  - {{time: 0, position: [0, 0, 0]}}\n  - {{time: 10, position: [0, 0, 1]}}\n"
            )
        };
        let s = Scenario::from_yaml(&yaml("1e9")).unwrap();
        assert_eq!(s.check_size(), Err(TooBig::Rate { rate_hz: 1e9 }));
        let mut s = Scenario::from_yaml(&yaml("1000")).unwrap();
        assert_eq!(s.check_size(), Ok(()));
        s.repeat = 500;
        let e = s.check_size().unwrap_err();
        assert!(
            matches!(
                e,
                TooBig::Messages {
                    messages: 5_000_500,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("--force"), "{e}");
    }

    /// Times whose message count or end would overflow are refused with
    /// the reason, not written as an empty bag.
    #[test]
    fn a_bag_ending_past_what_a_ros_stamp_holds_is_refused() {
        for time in ["1e9", "1e16", "1e19", "1e20", "1e300"] {
            let e = Scenario::from_yaml(&format!(
                "rate_hz: 1000\nwaypoints:\n  - {{time: 0, position: [0, 0, 0]}}\n  - {{time: {time}, position: [0, 0, 1]}}\n"
            ))
            .unwrap_err();
            assert!(
                e.contains("2038-01-19") && e.contains("lower the times"),
                "{time}: {e}"
            );
        }
        let mut s = Scenario::from_yaml(
            "waypoints:\n  - {time: 0, position: [0, 0, 0]}\n  - {time: 1, position: [0, 0, 1]}\n",
        )
        .unwrap();
        assert_eq!(s.check_end(), Ok(()));
        s.repeat = u64::MAX;
        assert!(s.check_end().unwrap_err().contains("repeat"));
    }

    #[test]
    fn targets_go_on_the_topic_ik_node_takes_their_type_on() {
        let points = "waypoints:\n  - {time: 0, position: [0, 0, 0]}\n";
        let poses = "waypoints:\n  - {time: 0, position: [0, 0, 0], orientation: [0, 0, 0, 1]}\n";
        assert_eq!(
            Scenario::from_yaml(points).unwrap().topic(),
            "/target_point"
        );
        assert_eq!(Scenario::from_yaml(poses).unwrap().topic(), "/target_pose");
        let remapped = format!("topic: /arm/goal\n{points}");
        assert_eq!(Scenario::from_yaml(&remapped).unwrap().topic(), "/arm/goal");
        let e = Scenario::from_yaml(&format!("topic: /target_pose\n{points}")).unwrap_err();
        assert!(
            e.contains("PoseStamped") && e.contains("/target_point"),
            "{e}"
        );
        let e = Scenario::from_yaml(&format!("topic: target_point\n{poses}")).unwrap_err();
        assert!(
            e.contains("PointStamped") && e.contains("/target_pose"),
            "{e}"
        );
    }
}
