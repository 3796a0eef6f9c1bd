//! Timed joint trajectories, as ros2_control's joint_trajectory_controller
//! takes them on its topic (`trajectory_msgs/JointTrajectory`): joint
//! names, points with positions, optional velocities (and accelerations)
//! and a time from the start. Decided here without ROS:
//!
//! - what is refused, naming it: a joint the node does not move (the core
//!   resolves names), a point whose lengths do not match the names, a
//!   non-finite value, times that do not increase, a position outside its
//!   joint's limits, a velocity above its joint's speed limit;
//! - how it is interpolated: from where the arm is (position and velocity)
//!   through every point, straight lines when the points give positions
//!   only, cubic curves with velocities, quintics with accelerations too
//!   ([`spline`]);
//! - when the limits cannot meet a point's time: the segment to it is
//!   stretched to the shortest duration within the speed (and, for
//!   curves, acceleration) limits, every later point moving with it, and
//!   the first such point is reported with the joint and limit that held
//!   it back: reported, never driven faster;
//! - where the arm should be at each moment: the core samples the plan
//!   every tick and the motion limiter tracks it (the same limiter as
//!   every other move).
//!
//! A new trajectory replaces what is left of the old one, starting from
//! where the arm is then.

pub mod spline;

use super::motion::AxisLimits;
use serde::{Deserialize, Serialize};
use spline::{Bound, Knot, Segment, Shape};

/// A joint trajectory (`trajectory_msgs/JointTrajectory`). JSON form:
/// `{"type":"trajectory","joint_names":["elbow"],"points":[{"positions":[1.0],"time_from_start":1.5}]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryMsg {
    /// When the trajectory starts, on the node clock (s); 0 means now.
    #[serde(default)]
    pub stamp: f64,
    pub joint_names: Vec<String>,
    pub points: Vec<TrajectoryPoint>,
}

/// One point: positions by `joint_names`, optional velocities and
/// accelerations (empty, or one per name), and when it is due.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrajectoryPoint {
    pub positions: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub velocities: Vec<f64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accelerations: Vec<f64>,
    /// Seconds from the trajectory's start.
    pub time_from_start: f64,
}

/// A trajectory that cannot be taken, and exactly why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TrajectoryError {
    /// An empty trajectory, a repeated joint, a point whose lengths do not
    /// match the names, times that do not increase.
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    NotFinite(String),
    /// A position outside its joint's range, a velocity above its speed
    /// limit.
    #[error("{0}")]
    OutsideLimits(String),
}

/// A joint of a trajectory as the core resolved it: its axis, name and
/// limits.
#[derive(Debug, Clone)]
pub struct TrajectoryJoint {
    pub axis: usize,
    pub name: String,
    pub limits: AxisLimits,
}

/// The first point the limits cannot meet in time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatePoint {
    /// 1-based, as a person counts the message's points.
    pub point: usize,
    pub due_s: f64,
    /// When the plan reaches it.
    pub at_s: f64,
    pub joint: String,
    /// `speed` or `acceleration`.
    pub limit: &'static str,
    /// The limit's value (rad/s, rad/s^2 or m/s, m/s^2).
    pub value: f64,
}

impl LatePoint {
    pub fn describe(&self, points: usize) -> String {
        format!(
            "trajectory point {} of {points} (due at {:.2} s) cannot be met in time: joint '{}' is held to its {} limit of {}; reached at {:.2} s, {:.2} s late",
            self.point,
            self.due_s,
            self.joint,
            self.limit,
            self.value,
            self.at_s,
            self.at_s - self.due_s
        )
    }
}

/// The trajectory being followed or last followed, for the status and
/// `/diagnostics`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TrajectoryStatus {
    /// Trajectories taken since start.
    pub accepted: u64,
    /// Points of the latest one.
    pub points: usize,
    /// Points whose time has come.
    pub passed: usize,
    /// Following one now.
    pub active: bool,
    /// Its duration as planned (s).
    pub duration_s: f64,
    /// The first point the limits could not meet in time, if any.
    pub late: Option<LatePoint>,
    /// The largest distance of a joint from where the plan had it, over
    /// the ticks so far (rad or m).
    pub max_lag: f64,
    /// Why it ended before its end: the collision check stopped the arm
    /// on its way (the rest is dropped, as joint_trajectory_controller
    /// aborts a goal it cannot follow).
    pub aborted: Option<String>,
}

/// A trajectory planned from where the arm was.
#[derive(Debug, Clone)]
pub struct Trajectory {
    axes: Vec<usize>,
    /// Start times of the segments (s from the start), and the end.
    knots: Vec<f64>,
    /// Per segment, per joint.
    segments: Vec<Vec<Segment>>,
    /// Node time of its start.
    pub start: f64,
    pub status: TrajectoryStatus,
}

/// Checks `msg` against `joints` (one per name, resolved by the core) and
/// plans it from positions `q` and velocities `v` of every axis, to start
/// at node time `start`.
pub fn plan(
    msg: &TrajectoryMsg,
    joints: &[TrajectoryJoint],
    q: &[f64],
    v: &[f64],
    start: f64,
) -> Result<Trajectory, TrajectoryError> {
    let shape = check(msg, joints)?;
    let n = joints.len();
    let start_knots: Vec<Knot> = joints
        .iter()
        .map(|j| Knot {
            position: q[j.axis],
            velocity: if shape == Shape::Linear {
                0.0
            } else {
                v[j.axis]
            },
            acceleration: 0.0,
        })
        .collect();
    let mut prev = start_knots;
    let (mut t_given, mut t_plan) = (0.0, 0.0);
    let mut knots = vec![0.0];
    let mut segments = Vec::with_capacity(msg.points.len());
    let mut late: Option<LatePoint> = None;
    for (k, p) in msg.points.iter().enumerate() {
        let next: Vec<Knot> = (0..n)
            .map(|i| Knot {
                position: p.positions[i],
                velocity: p.velocities.get(i).copied().unwrap_or(0.0),
                acceleration: p.accelerations.get(i).copied().unwrap_or(0.0),
            })
            .collect();
        let given = p.time_from_start - t_given;
        t_given = p.time_from_start;
        let mut duration = given;
        let mut binding = None;
        for (i, j) in joints.iter().enumerate() {
            let l = j.limits;
            let (d, bound) =
                spline::shortest(shape, prev[i], next[i], given, l.velocity, l.acceleration);
            if let Some(b) = bound
                && d > duration
            {
                duration = d;
                binding = Some((i, b));
            }
        }
        t_plan += duration;
        if let (None, Some((i, b))) = (&late, binding) {
            let l = joints[i].limits;
            late = Some(LatePoint {
                point: k + 1,
                due_s: p.time_from_start,
                at_s: t_plan,
                joint: joints[i].name.clone(),
                limit: match b {
                    Bound::Speed => "speed",
                    Bound::Acceleration => "acceleration",
                },
                value: match b {
                    Bound::Speed => l.velocity,
                    Bound::Acceleration => l.acceleration,
                },
            });
        }
        if duration > 0.0 {
            segments.push(
                (0..n)
                    .map(|i| Segment::new(shape, prev[i], next[i], duration))
                    .collect(),
            );
            knots.push(t_plan);
        }
        prev = next;
    }
    Ok(Trajectory {
        axes: joints.iter().map(|j| j.axis).collect(),
        status: TrajectoryStatus {
            points: msg.points.len(),
            active: true,
            duration_s: t_plan,
            late,
            ..TrajectoryStatus::default()
        },
        knots,
        segments,
        start,
    })
}

/// The checks of a message, and the shape its points call for.
fn check(msg: &TrajectoryMsg, joints: &[TrajectoryJoint]) -> Result<Shape, TrajectoryError> {
    let invalid = |s: String| Err(TrajectoryError::Invalid(s));
    if msg.points.is_empty() {
        return invalid("the trajectory has no points".into());
    }
    let n = joints.len();
    let mut shape = None;
    let mut last = f64::NEG_INFINITY;
    for (k, p) in msg.points.iter().enumerate() {
        let at = k + 1;
        if p.positions.len() != n {
            return invalid(format!(
                "point {at} has {} positions for {n} joint names",
                p.positions.len()
            ));
        }
        for (what, len) in [
            ("velocities", p.velocities.len()),
            ("accelerations", p.accelerations.len()),
        ] {
            if len != 0 && len != n {
                return invalid(format!(
                    "point {at} has {len} {what} for {n} joint names (give none or one each)"
                ));
            }
        }
        let this = match (p.velocities.is_empty(), p.accelerations.is_empty()) {
            (true, true) => Shape::Linear,
            (false, true) => Shape::Cubic,
            (false, false) => Shape::Quintic,
            (true, false) => {
                return invalid(format!("point {at} gives accelerations without velocities"));
            }
        };
        if shape.is_some_and(|s| s != this) {
            return invalid(format!(
                "point {at} gives {} where the first point gives {}: every point must give the same fields",
                fields(this),
                fields(shape.unwrap_or(this))
            ));
        }
        shape = Some(this);
        let t = p.time_from_start;
        if !t.is_finite() {
            return Err(TrajectoryError::NotFinite(format!(
                "point {at}: time_from_start {t}"
            )));
        }
        if t < 0.0 || t <= last || (k > 0 && t == 0.0) {
            return invalid(format!(
                "point {at}: time_from_start {t} s does not come after the point before ({last} s); times must increase"
            ));
        }
        last = t;
        check_values(p, at, joints)?;
    }
    Ok(shape.unwrap_or(Shape::Linear))
}

fn fields(s: Shape) -> &'static str {
    match s {
        Shape::Linear => "positions only",
        Shape::Cubic => "velocities",
        Shape::Quintic => "velocities and accelerations",
    }
}

/// Every value of point `at` finite, positions within their joints'
/// ranges and velocities within their speed limits.
fn check_values(
    p: &TrajectoryPoint,
    at: usize,
    joints: &[TrajectoryJoint],
) -> Result<(), TrajectoryError> {
    for (i, j) in joints.iter().enumerate() {
        let l = j.limits;
        let values = [
            ("position", p.positions.get(i)),
            ("velocity", p.velocities.get(i)),
            ("acceleration", p.accelerations.get(i)),
        ];
        for (what, x) in values {
            if let Some(&x) = x
                && !x.is_finite()
            {
                return Err(TrajectoryError::NotFinite(format!(
                    "point {at}: joint '{}' {what} {x}",
                    j.name
                )));
            }
        }
        let q = p.positions[i];
        if q < l.lower || q > l.upper {
            return Err(TrajectoryError::OutsideLimits(format!(
                "point {at}: joint '{}' at {q} is outside its limits [{}, {}]",
                j.name, l.lower, l.upper
            )));
        }
        if let Some(&v) = p.velocities.get(i)
            && v.abs() > l.velocity * (1.0 + 1e-9)
        {
            return Err(TrajectoryError::OutsideLimits(format!(
                "point {at}: joint '{}' velocity {v} is above its speed limit {}",
                j.name, l.velocity
            )));
        }
    }
    Ok(())
}

impl Trajectory {
    /// The axes it moves.
    pub fn axes(&self) -> &[usize] {
        &self.axes
    }

    /// Where its joints should be at node time `now` (one position per
    /// axis of [`Trajectory::axes`]); before its start, where it starts.
    pub fn sample(&self, now: f64) -> Vec<f64> {
        let tau = (now - self.start).max(0.0);
        let k = self.knots[1..]
            .iter()
            .position(|&t| tau < t)
            .unwrap_or(self.segments.len().saturating_sub(1));
        let Some(seg) = self.segments.get(k) else {
            // Every point was where the arm already was at once: no motion.
            return Vec::new();
        };
        let t = tau - self.knots[k];
        seg.iter().map(|s| s.position(t)).collect()
    }

    /// True once its time is over.
    pub fn over(&self, now: f64) -> bool {
        now - self.start >= self.status.duration_s
    }

    /// Counts the points whose time has come by `now` and how far the arm
    /// (`q`, every axis) is from where the plan has it.
    pub fn record(&mut self, now: f64, q: &[f64], reference: &[f64]) {
        let tau = now - self.start;
        // Segments of zero length were dropped; count by the plan's knots
        // when every point has its own, else by the end.
        let passed = self.knots[1..].iter().filter(|&&t| tau >= t - 1e-9).count();
        self.status.passed = if self.knots.len() == self.status.points + 1 {
            passed
        } else if self.over(now) {
            self.status.points
        } else {
            passed.min(self.status.points)
        };
        for (&a, &r) in self.axes.iter().zip(reference) {
            self.status.max_lag = self.status.max_lag.max((q[a] - r).abs());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn joint(axis: usize, name: &str) -> TrajectoryJoint {
        TrajectoryJoint {
            axis,
            name: name.into(),
            limits: AxisLimits {
                lower: -2.0,
                upper: 2.0,
                velocity: 2.0,
                acceleration: 8.0,
            },
        }
    }

    fn point(positions: &[f64], t: f64) -> TrajectoryPoint {
        TrajectoryPoint {
            positions: positions.to_vec(),
            velocities: Vec::new(),
            accelerations: Vec::new(),
            time_from_start: t,
        }
    }

    fn msg(points: Vec<TrajectoryPoint>) -> TrajectoryMsg {
        TrajectoryMsg {
            stamp: 0.0,
            joint_names: vec!["a".into(), "b".into()],
            points,
        }
    }

    #[test]
    fn points_are_passed_at_their_times_from_where_the_arm_is() {
        let joints = [joint(1, "a"), joint(0, "b")];
        let m = msg(vec![point(&[0.5, -0.5], 1.0), point(&[1.0, 0.0], 2.0)]);
        let t = plan(&m, &joints, &[0.1, 0.0], &[0.0, 0.0], 10.0).unwrap();
        assert_eq!(t.axes(), [1, 0]);
        assert_eq!(t.sample(10.0), [0.0, 0.1]);
        assert_eq!(t.sample(11.0), [0.5, -0.5]);
        assert_eq!(t.sample(11.5), [0.75, -0.25]);
        assert_eq!(t.sample(13.0), [1.0, 0.0]);
        assert!(t.over(12.0) && !t.over(11.99));
        assert_eq!(t.status.late, None);
    }

    #[test]
    fn a_point_the_speed_limit_cannot_meet_is_late_naming_the_joint() {
        let joints = [joint(0, "a"), joint(1, "b")];
        // b must go 1.6 rad in 0.5 s: 3.2 rad/s, over its 2 rad/s.
        let m = msg(vec![point(&[0.1, 1.6], 0.5), point(&[0.1, 1.6], 1.0)]);
        let t = plan(&m, &joints, &[0.0, 0.0], &[0.0, 0.0], 0.0).unwrap();
        let late = t.status.late.clone().unwrap();
        assert_eq!(
            (late.point, late.joint.as_str(), late.limit),
            (1, "b", "speed")
        );
        assert!((late.at_s - 0.8).abs() < 1e-12, "{late:?}");
        assert!((t.status.duration_s - 1.3).abs() < 1e-12);
        let text = late.describe(2);
        assert!(
            text.contains("point 1 of 2") && text.contains("'b'") && text.contains("0.30 s late"),
            "{text}"
        );
    }

    #[test]
    fn bad_trajectories_are_refused_naming_the_point_and_the_joint() {
        let joints = [joint(0, "a"), joint(1, "b")];
        let refuse = |m: TrajectoryMsg| plan(&m, &joints, &[0.0; 2], &[0.0; 2], 0.0).unwrap_err();
        let e = refuse(msg(vec![point(&[0.0, 2.5], 1.0)]));
        assert!(
            matches!(&e, TrajectoryError::OutsideLimits(s) if s.contains("point 1: joint 'b' at 2.5")),
            "{e}"
        );
        let e = refuse(msg(vec![point(&[0.0], 1.0)]));
        assert!(e.to_string().contains("1 positions for 2"), "{e}");
        let e = refuse(msg(vec![point(&[0.0, 0.0], 1.0), point(&[0.0, 0.0], 1.0)]));
        assert!(
            e.to_string().contains("point 2") && e.to_string().contains("increase"),
            "{e}"
        );
        let e = refuse(msg(vec![point(&[0.0, f64::NAN], 1.0)]));
        assert!(matches!(e, TrajectoryError::NotFinite(_)), "{e}");
        let mut fast = point(&[0.0, 0.0], 1.0);
        fast.velocities = vec![0.0, 3.0];
        let e = refuse(msg(vec![fast]));
        assert!(
            e.to_string().contains("velocity 3") && e.to_string().contains("'b'"),
            "{e}"
        );
        let e = refuse(msg(vec![]));
        assert!(e.to_string().contains("no points"), "{e}");
    }

    #[test]
    fn velocities_make_a_cubic_that_keeps_them() {
        let joints = [joint(0, "a")];
        let mut p = point(&[1.0], 1.0);
        p.velocities = vec![0.5];
        let m = TrajectoryMsg {
            stamp: 0.0,
            joint_names: vec!["a".into()],
            points: vec![p, point_v(1.5, 0.0, 2.0)],
        };
        let t = plan(&m, &joints, &[0.0], &[0.0], 0.0).unwrap();
        let dt = 1e-4;
        let slope = (t.sample(1.0 + dt)[0] - t.sample(1.0 - dt)[0]) / (2.0 * dt);
        assert!((slope - 0.5).abs() < 1e-3, "{slope}");
        assert!((t.sample(1.0)[0] - 1.0).abs() < 1e-12);
    }

    fn point_v(q: f64, v: f64, t: f64) -> TrajectoryPoint {
        TrajectoryPoint {
            positions: vec![q],
            velocities: vec![v],
            accelerations: Vec::new(),
            time_from_start: t,
        }
    }
}
