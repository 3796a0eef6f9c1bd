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

/// The largest size of a number with no range of its own: the library's
/// (see there why).
pub use settings::MAX_MAGNITUDE;

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
            "{x:e} is out of range: at most {MAX_MAGNITUDE:e} in size"
        ))
    }
}

/// An address to serve on: `HOST:PORT`, or a bare port on 127.0.0.1.
pub fn socket_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    if let Ok(port) = s.parse::<u16>() {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse().map_err(|_| {
        format!(
            "'{s}' is not an address to serve on: give HOST:PORT (e.g. 127.0.0.1:8765) or a port"
        )
    })
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

/// A number in [0, 1] (`--null-space-gain`).
pub fn unit_interval(s: &str) -> Result<f64, String> {
    let x = number(s)?;
    if (0.0..=1.0).contains(&x) {
        Ok(x)
    } else {
        Err("must be in [0, 1]".into())
    }
}

/// A fraction: above 0 and at most 1 (`--greediness`).
pub fn fraction(s: &str) -> Result<f64, String> {
    let x = number(s)?;
    if x > 0.0 && x <= 1.0 {
        Ok(x)
    } else {
        Err("must be in (0, 1]".into())
    }
}

/// The clock a time budget is counted on: `wall` or `cpu`
/// (`--budget-clock`).
pub fn budget_clock(s: &str) -> Result<arm_ik::ik::BudgetClock, String> {
    s.parse()
}

/// A direction `x,y,z` (`solve --axis`): three finite numbers, at most
/// 1e6 in size and not all zero, normalised to unit length.
pub fn direction(s: &str) -> Result<[f64; 3], String> {
    let v = super::parse::numbers::<3>(s)?;
    let d = arm_ik::ik::direction_from_xyz("direction", v)
        .map_err(|_| format!("'{s}' has no direction: a direction needs a non-zero length"))?;
    Ok([d.x, d.y, d.z])
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
            assert!(positive(bad).unwrap_err().contains("at most 1e6"), "{bad}");
            assert!(finite(bad).unwrap_err().contains("at most 1e6"), "{bad}");
        }
        assert!(positive("x").unwrap_err().contains("'x' is not a number"));
        assert!(frame_rate("5000").unwrap_err().contains("at most 1000 Hz"));
        assert_eq!(frame_rate("50"), Ok(50.0));
        assert_eq!(budget_clock("cpu"), Ok(arm_ik::ik::BudgetClock::Cpu));
        assert!(budget_clock("CPU").unwrap_err().contains("choose wall"));
        assert_eq!(direction("0,0,-2"), Ok([0.0, 0.0, -1.0]));
        assert!(direction("0,0,0").unwrap_err().contains("non-zero length"));
        assert!(direction("0,nan,1").unwrap_err().contains("not finite"));
    }
}

/// Every flag that takes numbers, found in clap's own definition of the
/// command line (so a new flag is covered without editing this test),
/// refuses what is not finite or is out of any range while the command
/// line is read: a usage error, exit 64, the same for every flag.
#[cfg(test)]
mod every_flag {
    use crate::cli::Cli;
    use clap::CommandFactory;
    use clap::error::ErrorKind;
    use std::any::TypeId;

    /// The value types of flags that take numbers: scalars, and the
    /// fixed-size lists (`--position x,y,z`).
    fn numeric(t: clap::builder::ValueParser) -> bool {
        let id = t.type_id();
        [
            TypeId::of::<f64>(),
            TypeId::of::<f32>(),
            TypeId::of::<u64>(),
            TypeId::of::<u32>(),
            TypeId::of::<u16>(),
            TypeId::of::<u8>(),
            TypeId::of::<usize>(),
            TypeId::of::<i64>(),
            TypeId::of::<i32>(),
            TypeId::of::<[f64; 3]>(),
            TypeId::of::<[f64; 4]>(),
        ]
        .iter()
        .any(|n| id == *n)
    }

    #[test]
    fn every_numeric_flag_refuses_non_finite_and_huge_values() {
        let cli = Cli::command();
        let mut checked = Vec::new();
        let mut failed = Vec::new();
        for sub in cli.get_subcommands() {
            for arg in sub.get_arguments() {
                if !numeric(arg.get_value_parser().clone()) {
                    continue;
                }
                let name = format!("{} --{}", sub.get_name(), arg.get_id());
                let long = format!("--{}", arg.get_long().expect("numbers come with flags"));
                for bad in [
                    "nan",
                    "inf",
                    "-inf",
                    "1e300",
                    "nan,0,0",
                    "nan,0,0,1",
                    "0,0,1e300",
                ] {
                    // The flag alone: a value it takes leaves only the
                    // other required arguments to complain about.
                    let line = [sub.get_name(), &long, bad];
                    let refused = match sub
                        .clone()
                        .allow_negative_numbers(true)
                        .try_get_matches_from(line)
                    {
                        Ok(_) => false,
                        Err(e) => !matches!(
                            e.kind(),
                            ErrorKind::MissingRequiredArgument | ErrorKind::ArgumentConflict
                        ),
                    };
                    if !refused {
                        failed.push(format!("{name} {bad}"));
                    }
                }
                checked.push(name);
            }
        }
        assert!(failed.is_empty(), "accepted: {failed:#?}");
        // The flags of the issue are among those checked.
        for flag in [
            "solve --seed",
            "drive --joints",
            "sim --gripper_open",
            "sim --rate_hz",
            "solve --budget_ms",
            "drive --hold",
        ] {
            assert!(
                checked.iter().any(|c| c == flag),
                "{flag} not checked: {checked:#?}"
            );
        }
    }
}
