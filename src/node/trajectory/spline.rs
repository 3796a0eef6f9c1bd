//! One joint's motion over one trajectory segment: a polynomial in the
//! time since the segment began, linear between positions alone, a cubic
//! Hermite when the velocities at both ends are given, a quintic when the
//! accelerations are too (what ros2_control's joint_trajectory_controller
//! interpolates from the same fields), and the shortest duration that
//! keeps it within a joint's speed and acceleration limits.

/// A joint's knot: where it is, and how fast it moves there when the
/// trajectory says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Knot {
    pub position: f64,
    pub velocity: f64,
    pub acceleration: f64,
}

/// How a segment is interpolated: by what the points give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Positions only: a straight line at constant speed.
    Linear,
    /// Positions and velocities: a cubic Hermite curve.
    Cubic,
    /// Positions, velocities and accelerations: a quintic.
    Quintic,
}

/// `p(t) = c0 + c1 t + ... + c5 t^5` over `[0, duration]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    c: [f64; 6],
    pub duration: f64,
}

impl Segment {
    /// From `a` to `b` in `duration` s (positive), shaped as `shape`.
    pub fn new(shape: Shape, a: Knot, b: Knot, duration: f64) -> Segment {
        let d = duration;
        let dp = b.position - a.position;
        let c = match shape {
            Shape::Linear => [a.position, dp / d, 0.0, 0.0, 0.0, 0.0],
            Shape::Cubic => [
                a.position,
                a.velocity,
                (3.0 * dp / d - 2.0 * a.velocity - b.velocity) / d,
                (-2.0 * dp / d + a.velocity + b.velocity) / (d * d),
                0.0,
                0.0,
            ],
            Shape::Quintic => {
                let (v0, v1, a0, a1) = (a.velocity, b.velocity, a.acceleration, b.acceleration);
                [
                    a.position,
                    v0,
                    a0 / 2.0,
                    (20.0 * dp - (8.0 * v1 + 12.0 * v0) * d - (3.0 * a0 - a1) * d * d)
                        / (2.0 * d.powi(3)),
                    (-30.0 * dp + (14.0 * v1 + 16.0 * v0) * d + (3.0 * a0 - 2.0 * a1) * d * d)
                        / (2.0 * d.powi(4)),
                    (12.0 * dp - 6.0 * (v1 + v0) * d - (a0 - a1) * d * d) / (2.0 * d.powi(5)),
                ]
            }
        };
        Segment { c, duration }
    }

    /// Position at `t` s into the segment (clamped to it).
    pub fn position(&self, t: f64) -> f64 {
        let t = t.clamp(0.0, self.duration);
        self.c.iter().rev().fold(0.0, |acc, &c| acc * t + c)
    }

    /// Velocity at `t`.
    pub fn velocity(&self, t: f64) -> f64 {
        let c = &self.c;
        c[1] + t * (2.0 * c[2] + t * (3.0 * c[3] + t * (4.0 * c[4] + t * 5.0 * c[5])))
    }

    /// Acceleration at `t`.
    pub fn acceleration(&self, t: f64) -> f64 {
        let c = &self.c;
        2.0 * c[2] + t * (6.0 * c[3] + t * (12.0 * c[4] + t * 20.0 * c[5]))
    }

    /// The largest |velocity| and |acceleration| over the segment, from
    /// dense samples (a polynomial of degree 5 at most: 64 samples are
    /// well within a per-mille of the peaks).
    fn peaks(&self) -> (f64, f64) {
        const SAMPLES: usize = 64;
        (0..=SAMPLES)
            .map(|k| self.duration * k as f64 / SAMPLES as f64)
            .fold((0.0_f64, 0.0_f64), |(v, a), t| {
                (
                    v.max(self.velocity(t).abs()),
                    a.max(self.acceleration(t).abs()),
                )
            })
    }
}

/// What bounds a segment's duration when it cannot be met as given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    Speed,
    Acceleration,
}

/// The shortest duration, at least `given`, for one joint to go from `a`
/// to `b` as `shape` within `speed` and `acceleration` (straight lines
/// are only speed-bound: their corners are the motion limiter's to
/// round), and what bounds it when it is longer than `given`.
pub fn shortest(
    shape: Shape,
    a: Knot,
    b: Knot,
    given: f64,
    speed: f64,
    acceleration: f64,
) -> (f64, Option<Bound>) {
    let dp = (b.position - a.position).abs();
    if shape == Shape::Linear {
        let need = dp / speed;
        return if need > given * (1.0 + 1e-9) {
            (need, Some(Bound::Speed))
        } else {
            (given, None)
        };
    }
    let fits = |d: f64| -> Option<Bound> {
        if d <= 0.0 {
            return Some(Bound::Speed);
        }
        let (v, acc) = Segment::new(shape, a, b, d).peaks();
        if v > speed * (1.0 + 1e-9) {
            Some(Bound::Speed)
        } else if acc > acceleration * (1.0 + 1e-9) {
            Some(Bound::Acceleration)
        } else {
            None
        }
    };
    if fits(given).is_none() {
        return (given, None);
    }
    // Grow until it fits, then halve the gap to the longest that does not.
    let mut lo = given;
    let mut hi = given.max(dp / speed).max(1e-3);
    let mut tries = 0;
    while fits(hi).is_some() {
        lo = hi;
        hi *= 1.5;
        tries += 1;
        if tries > 80 {
            return (hi, fits(lo));
        }
    }
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if fits(mid).is_some() {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // What fails just short of it is what bounds it.
    (hi, fits(lo).or(Some(Bound::Speed)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knot(position: f64, velocity: f64, acceleration: f64) -> Knot {
        Knot {
            position,
            velocity,
            acceleration,
        }
    }

    #[test]
    fn every_shape_meets_its_end_conditions() {
        let (a, b) = (knot(0.2, 0.5, -1.0), knot(1.0, -0.3, 2.0));
        for shape in [Shape::Linear, Shape::Cubic, Shape::Quintic] {
            let s = Segment::new(shape, a, b, 1.3);
            assert!((s.position(0.0) - 0.2).abs() < 1e-12, "{shape:?}");
            assert!((s.position(1.3) - 1.0).abs() < 1e-12, "{shape:?}");
            if shape != Shape::Linear {
                assert!((s.velocity(0.0) - 0.5).abs() < 1e-12, "{shape:?}");
                assert!((s.velocity(1.3) + 0.3).abs() < 1e-12, "{shape:?}");
            }
            if shape == Shape::Quintic {
                assert!((s.acceleration(0.0) + 1.0).abs() < 1e-9);
                assert!((s.acceleration(1.3) - 2.0).abs() < 1e-9);
            }
        }
        assert_eq!(Segment::new(Shape::Linear, a, b, 2.0).velocity(0.7), 0.4);
    }

    #[test]
    fn the_shortest_duration_keeps_the_limits_and_names_what_bounds_it() {
        let (a, b) = (knot(0.0, 0.0, 0.0), knot(1.0, 0.0, 0.0));
        // 1 rad at 2 rad/s takes 0.5 s in a straight line.
        assert_eq!(
            shortest(Shape::Linear, a, b, 0.2, 2.0, 8.0),
            (0.5, Some(Bound::Speed))
        );
        assert_eq!(shortest(Shape::Linear, a, b, 0.7, 2.0, 8.0), (0.7, None));
        // Rest to rest as a cubic: peak speed 1.5/d, peak acceleration 6/d^2:
        // at 8 rad/s^2 that is d = 0.866 s, more than the speed needs.
        let (d, bound) = shortest(Shape::Cubic, a, b, 0.2, 2.0, 8.0);
        assert_eq!(bound, Some(Bound::Acceleration));
        assert!((d - (6.0_f64 / 8.0).sqrt()).abs() < 1e-3, "{d}");
        let s = Segment::new(Shape::Cubic, a, b, d);
        assert!(s.peaks().1 <= 8.0 * (1.0 + 1e-6));
        let (d, bound) = shortest(Shape::Quintic, a, b, 5.0, 2.0, 8.0);
        assert_eq!((d, bound), (5.0, None));
    }
}
