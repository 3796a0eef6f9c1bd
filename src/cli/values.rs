//! clap value parsers of the numeric flags. A value that is not finite or
//! is out of range is refused while the command line is read: a usage
//! error (exit 64) that clap prefixes with the flag, e.g. `invalid value
//! 'nan' for '--settle <SETTLE>': must be 0 or a positive number`. The
//! rules are the library's, so a flag refuses what the matching ROS
//! parameter refuses.

use arm_ik::node::settings;
use arm_ik::servo::link::LinkSettings;

fn number(s: &str) -> Result<f64, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number"))
}

/// A finite number above 0: a time, a rate, a limit that cannot be 0.
pub fn positive(s: &str) -> Result<f64, String> {
    settings::positive("", number(s)?).map_err(|e| e.why)
}

/// A finite number, 0 or above: a time that may be none, a distance.
pub fn non_negative(s: &str) -> Result<f64, String> {
    settings::non_negative("", number(s)?).map_err(|e| e.why)
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
        for bad in ["nan", "inf", "-inf", "0", "-1"] {
            assert!(positive(bad).unwrap_err().contains("positive"), "{bad}");
        }
        for bad in ["nan", "inf", "-0.5"] {
            assert!(non_negative(bad).unwrap_err().contains("0 or"), "{bad}");
        }
        assert!(positive("x").unwrap_err().contains("'x' is not a number"));
        assert!(frame_rate("5000").unwrap_err().contains("at most 1000 Hz"));
        assert_eq!(frame_rate("50"), Ok(50.0));
    }
}
