//! From what a person showed the calibration wizard (`arm_ik calibrate`)
//! to a joint's `zero`, `direction` and `range`: pure arithmetic on servo
//! units, the same for bus servos (positions they measured) and hobby
//! servos (pulses the person stepped to).

use thiserror::Error;

/// How far inside each stop the range ends (rad): the joint then never
/// presses on its stop, and a stop read a little short still holds.
pub const STOP_MARGIN_RAD: f64 = 0.02;

/// The least move (rad) that counts as "moved in its positive direction":
/// less is a hand's tremble, not an answer.
pub const MIN_MOVE_RAD: f64 = 0.05;

/// What the person showed for one joint, in servo units (ticks or µs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    /// At the URDF's zero pose.
    pub zero: i32,
    /// After a move in the joint's positive direction.
    pub positive: i32,
    /// At its two stops, in either order.
    pub stops: [i32; 2],
}

/// A joint's numbers for the servo file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Derived {
    pub zero: i32,
    /// +1 when the servo's count grows with the joint angle.
    pub direction: i32,
    /// The stops, `margin` inside each, never outside the device.
    pub range: [i32; 2],
}

/// Why what was shown gives no calibration.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum MeasureError {
    #[error(
        "joint '{joint}' moved {moved} units when asked to move in its positive direction (at least {least} expected): move it further"
    )]
    NoMove {
        joint: String,
        moved: i32,
        least: i32,
    },
    #[error(
        "joint '{joint}': its zero ({zero}) is not between its stops ({}, {}); show the stops again",
        .stops[0], .stops[1]
    )]
    ZeroOutsideStops {
        joint: String,
        zero: i32,
        stops: [i32; 2],
    },
    #[error(
        "joint '{joint}': the stops {} and {} are too close together (at most twice the margin of {margin} units)",
        .stops[0], .stops[1]
    )]
    NarrowRange {
        joint: String,
        stops: [i32; 2],
        margin: i32,
    },
}

/// The joint's numbers from what was shown; `scale` is servo units per
/// radian, `device` the commands the servo takes.
pub fn derive(
    joint: &str,
    shown: Shown,
    scale: f64,
    device: [i32; 2],
) -> Result<Derived, MeasureError> {
    let least = (MIN_MOVE_RAD * scale).round() as i32;
    let moved = shown.positive - shown.zero;
    if moved.abs() < least {
        return Err(MeasureError::NoMove {
            joint: joint.to_string(),
            moved,
            least,
        });
    }
    let lo = shown.stops[0].min(shown.stops[1]);
    let hi = shown.stops[0].max(shown.stops[1]);
    if !(lo..=hi).contains(&shown.zero) {
        return Err(MeasureError::ZeroOutsideStops {
            joint: joint.to_string(),
            zero: shown.zero,
            stops: [lo, hi],
        });
    }
    let margin = (STOP_MARGIN_RAD * scale).round() as i32;
    if hi - lo <= 2 * margin {
        return Err(MeasureError::NarrowRange {
            joint: joint.to_string(),
            stops: [lo, hi],
            margin,
        });
    }
    let range = [
        (lo + margin).clamp(device[0], device[1]),
        (hi - margin).clamp(device[0], device[1]),
    ];
    Ok(Derived {
        zero: shown.zero.clamp(range[0], range[1]),
        direction: moved.signum(),
        range,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STS: f64 = 4096.0 / std::f64::consts::TAU;

    #[test]
    fn a_joint_counting_down_gets_direction_minus_one_and_a_range_inside_its_stops() {
        let shown = Shown {
            zero: 2100,
            positive: 1900,
            stops: [3000, 1200],
        };
        let d = derive("shoulder", shown, STS, [0, 4095]).unwrap();
        assert_eq!(d.direction, -1);
        assert_eq!(d.zero, 2100);
        // 0.02 rad is 13 ticks on a 4096-tick turn.
        assert_eq!(d.range, [1213, 2987]);
    }

    #[test]
    fn a_stop_at_the_end_of_the_device_stays_inside_it() {
        let shown = Shown {
            zero: 1500,
            positive: 1600,
            stops: [400, 2600],
        };
        let d = derive("elbow", shown, 636.62, [500, 2500]).unwrap();
        assert_eq!((d.direction, d.range), (1, [500, 2500]));
    }

    #[test]
    fn no_move_a_zero_outside_the_stops_and_a_narrow_range_are_refused() {
        let base = Shown {
            zero: 2048,
            positive: 2060,
            stops: [1000, 3000],
        };
        let e = derive("wrist", base, STS, [0, 4095]).unwrap_err();
        assert!(e.to_string().contains("moved 12 units"), "{e}");
        let outside = Shown {
            positive: 2200,
            stops: [2100, 3000],
            ..base
        };
        assert!(matches!(
            derive("wrist", outside, STS, [0, 4095]),
            Err(MeasureError::ZeroOutsideStops { .. })
        ));
        let narrow = Shown {
            positive: 2200,
            stops: [2040, 2060],
            ..base
        };
        assert!(matches!(
            derive("wrist", narrow, STS, [0, 4095]),
            Err(MeasureError::NarrowRange { .. })
        ));
    }
}
