//! clap value parsers of the numeric flags: every number on the command
//! line goes through one of these (the test below holds every flag to it),
//! so each has a range. A value that is not finite or is out of range is
//! refused while the command line is read: a usage error (exit 64) that
//! clap prefixes with the flag, e.g. `invalid value 'nan' for '--settle
//! <SETTLE>': must be 0 or a positive number`. The rules are the
//! library's, so a flag refuses what the matching ROS parameter refuses;
//! a setting with a tighter range of its own (`--rate`, at most 10 kHz)
//! is refused by the library's check after parsing, still as a usage
//! error naming the flag.

use arm_ik::node::settings;
use arm_ik::servo::link::LinkSettings;

/// The largest size of a number with no range of its own (a coordinate,
/// an angle, a time, a limit): far beyond any arm or any run, and far from
/// where arithmetic on it would overflow (`--rate 1e300` once ran until
/// killed; `--budget-ms 1e300` could not become a duration).
pub const MAX_MAGNITUDE: f64 = 1e6;

fn number(s: &str) -> Result<f64, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number"))
}

/// `x` when its size is at most [`MAX_MAGNITUDE`].
fn bounded(x: f64) -> Result<f64, String> {
    if x.abs() <= MAX_MAGNITUDE {
        Ok(x)
    } else {
        Err(format!(
            "{x} is out of range: at most {MAX_MAGNITUDE:e} in size"
        ))
    }
}

/// A finite number whose size is at most 1e6: a position, an angle.
pub fn finite(s: &str) -> Result<f64, String> {
    let x = number(s)?;
    if !x.is_finite() {
        return Err(format!("'{}' is not finite", s.trim()));
    }
    bounded(x)
}

/// A number above 0 and at most 1e6: a time, a rate, a limit that cannot
/// be 0.
pub fn positive(s: &str) -> Result<f64, String> {
    settings::positive("", number(s)?)
        .map_err(|e| e.why)
        .and_then(bounded)
}

/// A number from 0 to 1e6: a time that may be none, a distance.
pub fn non_negative(s: &str) -> Result<f64, String> {
    settings::non_negative("", number(s)?)
        .map_err(|e| e.why)
        .and_then(bounded)
}

/// A frame rate a servo link can stream at (Hz).
pub fn frame_rate(s: &str) -> Result<f64, String> {
    LinkSettings::check_rate(number(s)?).map_err(|_| {
        format!(
            "must be a frame rate above 0 and at most {} Hz",
            LinkSettings::MAX_RATE_HZ
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_and_out_of_range_values_say_what_is_wrong() {
        assert_eq!(positive(" 2.5"), Ok(2.5));
        assert_eq!(non_negative("0"), Ok(0.0));
        assert_eq!(finite("-3"), Ok(-3.0));
        for bad in ["nan", "inf", "-inf", "0", "-1"] {
            assert!(positive(bad).unwrap_err().contains("positive"), "{bad}");
        }
        for bad in ["nan", "inf", "-0.5"] {
            assert!(non_negative(bad).unwrap_err().contains("0 or"), "{bad}");
        }
        assert!(finite("nan").unwrap_err().contains("not finite"));
        for bad in ["1e300", "1e7"] {
            assert!(positive(bad).unwrap_err().contains("out of range"), "{bad}");
            assert!(finite(bad).unwrap_err().contains("at most 1e6"), "{bad}");
        }
        assert!(positive("x").unwrap_err().contains("'x' is not a number"));
        assert!(frame_rate("5000").unwrap_err().contains("at most 1000 Hz"));
        assert_eq!(frame_rate("50"), Ok(50.0));
    }
}
