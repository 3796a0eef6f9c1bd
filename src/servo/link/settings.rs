//! The `link:` section of a servo file, and the checked settings the link
//! thread runs with.

use serde::Deserialize;
use std::time::Duration;
use thiserror::Error;

/// What a device with its own watchdog (the firmware bridge) does when it
/// trips.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WatchdogMode {
    /// Keep sending the last pulses (the arm stays where it was).
    #[default]
    Hold,
    /// Stop the pulses (the servos go limp).
    Relax,
}

/// What closing the link does to the servos (`link.on_exit`): when the
/// program ends (`ik_node` and the no-ROS runner on SIGINT or SIGTERM,
/// `arm_ik drive` after `--hold`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnExit {
    /// The servos keep holding their last pose (bus servos keep their
    /// torque; the firmware bridge's watchdog then holds or relaxes as
    /// `link.watchdog` says). The default: a limp arm falls.
    #[default]
    Hold,
    /// The servos go limp, as [`Link::relax`](super::Link::relax) makes
    /// them: bus servos switch their torque off, the firmware bridge
    /// stops its pulses.
    Relax,
}

impl OnExit {
    pub fn name(self) -> &'static str {
        match self {
            OnExit::Hold => "hold",
            OnExit::Relax => "relax",
        }
    }
}

/// Link settings that differ by protocol, used when the file's `link:`
/// section leaves them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkDefaults {
    /// Port speed (baud).
    pub baud: u32,
    /// No reply for this long: the hardware is silent (ms).
    pub reply_timeout_ms: u64,
}

/// The `link:` section of a servo configuration file, as written.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkFile {
    pub baud: Option<u32>,
    pub rate_hz: Option<f64>,
    pub reply_timeout_ms: Option<u64>,
    pub watchdog_ms: Option<u16>,
    pub watchdog: Option<WatchdogMode>,
    pub startup_speed: Option<f64>,
    pub command_timeout_ms: Option<u64>,
    pub on_exit: Option<OnExit>,
    /// Deprecated spelling of `on_exit`: true is `relax`, false `hold`.
    pub torque_off_on_close: Option<bool>,
}

/// Checked link settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkSettings {
    /// Port speed (baud).
    pub baud: u32,
    /// Frames per second.
    pub rate_hz: f64,
    /// No reply for this long: the hardware is reported silent (and an
    /// opening handshake gives up).
    pub reply_timeout: Duration,
    /// Firmware bridge watchdog (ms, 0 = off) and what it does.
    pub watchdog_ms: u16,
    pub watchdog: WatchdogMode,
    /// Joint speed (rad/s or m/s) of the move from where bus servos are at
    /// connection to the first command.
    pub startup_speed: f64,
    /// The host-side watchdog: when the caller (the node) has sent no
    /// commands for this long, the link stops writing to the port, so a
    /// hung solver or node cannot keep the arm streaming a stale pose: the
    /// firmware's own watchdog then holds or relaxes; bus servos hold.
    pub command_timeout: Duration,
    /// What closing the link does: hold (the default, because a limp arm
    /// falls) or relax.
    pub on_exit: OnExit,
    /// Reconnection back-off: first wait and cap.
    pub backoff_min: Duration,
    pub backoff_max: Duration,
    /// The link is paced by its caller and its reads must be fresh (never
    /// set by the file: see
    /// [`SerialServo::open_paced`](crate::servo::SerialServo::open_paced)):
    /// each tick's read waits for this tick's replies, not for a late one
    /// to an earlier read, since the caller is waiting for exactly them:
    /// up to the reply timeout while the servos have been answering, half
    /// a period for one gone quiet.
    pub paced: bool,
}

/// A `link:` value that cannot be used; names the field.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum LinkSettingError {
    #[error("link.baud: must be positive")]
    Baud,
    #[error("link.rate_hz: {0} is not a frame rate in (0, {max}] Hz", max = LinkSettings::MAX_RATE_HZ)]
    RateHz(f64),
    #[error("link.{field}: {value} is not in 1..=60000 ms")]
    Millis { field: &'static str, value: u64 },
    #[error("link.startup_speed: {0} is not a positive speed")]
    StartupSpeed(f64),
    #[error(
        "link.on_exit: {on_exit} contradicts link.torque_off_on_close: {torque_off_on_close} \
         (its deprecated spelling); keep on_exit only"
    )]
    OnExitConflict {
        on_exit: &'static str,
        torque_off_on_close: bool,
    },
}

impl LinkSettingError {
    /// The field of `link:` that is wrong.
    pub fn field(&self) -> &'static str {
        match self {
            LinkSettingError::Baud => "baud",
            LinkSettingError::RateHz(_) => "rate_hz",
            LinkSettingError::Millis { field, .. } => field,
            LinkSettingError::StartupSpeed(_) => "startup_speed",
            LinkSettingError::OnExitConflict { .. } => "on_exit",
        }
    }
}

impl LinkSettings {
    /// The highest frame rate: the link thread sleeps between frames, so
    /// more than this only burns the CPU.
    pub const MAX_RATE_HZ: f64 = 1000.0;

    /// Checks a frame rate (Hz), e.g. one given on the command line.
    pub fn check_rate(rate_hz: f64) -> Result<f64, LinkSettingError> {
        if rate_hz.is_finite() && rate_hz > 0.0 && rate_hz <= Self::MAX_RATE_HZ {
            Ok(rate_hz)
        } else {
            Err(LinkSettingError::RateHz(rate_hz))
        }
    }
}

/// A timeout in 1..=60000 ms.
fn millis(field: &'static str, value: u64) -> Result<Duration, LinkSettingError> {
    if value == 0 || value > 60_000 {
        Err(LinkSettingError::Millis { field, value })
    } else {
        Ok(Duration::from_millis(value))
    }
}

impl LinkFile {
    /// `on_exit`, or what the deprecated `torque_off_on_close` says; both
    /// given must agree.
    fn on_exit(&self) -> Result<OnExit, LinkSettingError> {
        let old = self
            .torque_off_on_close
            .map(|off| if off { OnExit::Relax } else { OnExit::Hold });
        match (self.on_exit, old) {
            (Some(new), Some(old)) if new != old => Err(LinkSettingError::OnExitConflict {
                on_exit: new.name(),
                torque_off_on_close: old == OnExit::Relax,
            }),
            (new, old) => Ok(new.or(old).unwrap_or_default()),
        }
    }

    /// Fills in the protocol's defaults (and the common ones) and checks
    /// every value.
    pub fn resolve(&self, defaults: &LinkDefaults) -> Result<LinkSettings, LinkSettingError> {
        let baud = self.baud.unwrap_or(defaults.baud);
        if baud == 0 {
            return Err(LinkSettingError::Baud);
        }
        let startup_speed = self.startup_speed.unwrap_or(0.3);
        if !(startup_speed.is_finite() && startup_speed > 0.0) {
            return Err(LinkSettingError::StartupSpeed(startup_speed));
        }
        let reply_ms = self.reply_timeout_ms.unwrap_or(defaults.reply_timeout_ms);
        Ok(LinkSettings {
            baud,
            rate_hz: LinkSettings::check_rate(self.rate_hz.unwrap_or(50.0))?,
            reply_timeout: millis("reply_timeout_ms", reply_ms)?,
            command_timeout: millis("command_timeout_ms", self.command_timeout_ms.unwrap_or(500))?,
            watchdog_ms: self.watchdog_ms.unwrap_or(500),
            watchdog: self.watchdog.unwrap_or_default(),
            startup_speed,
            on_exit: self.on_exit()?,
            backoff_min: Duration::from_millis(100),
            backoff_max: Duration::from_secs(2),
            paced: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BRIDGE: LinkDefaults = LinkDefaults {
        baud: 115_200,
        reply_timeout_ms: 300,
    };

    #[test]
    fn link_settings_defaults_and_errors() {
        let s = LinkFile::default().resolve(&BRIDGE).unwrap();
        assert_eq!((s.baud, s.rate_hz, s.watchdog_ms), (115_200, 50.0, 500));
        assert_eq!(s.reply_timeout, Duration::from_millis(300));
        let err = |f: LinkFile| f.resolve(&BRIDGE).unwrap_err();
        let e = err(LinkFile {
            reply_timeout_ms: Some(0),
            ..LinkFile::default()
        });
        assert_eq!(e.field(), "reply_timeout_ms");
        assert_eq!(
            e.to_string(),
            "link.reply_timeout_ms: 0 is not in 1..=60000 ms"
        );
        let e = err(LinkFile {
            command_timeout_ms: Some(0),
            ..LinkFile::default()
        });
        assert_eq!(e.field(), "command_timeout_ms");
        let e = err(LinkFile {
            startup_speed: Some(f64::NAN),
            ..LinkFile::default()
        });
        assert_eq!(e.field(), "startup_speed");
        let e = err(LinkFile {
            rate_hz: Some(2000.0),
            ..LinkFile::default()
        });
        assert_eq!(e, LinkSettingError::RateHz(2000.0));
        assert!(e.to_string().contains("(0, 1000] Hz"), "{e}");
        let e = err(LinkFile {
            baud: Some(0),
            ..LinkFile::default()
        });
        assert_eq!(e.field(), "baud");
    }

    #[test]
    fn on_exit_and_its_deprecated_spelling() {
        let on_exit = |on_exit, torque_off_on_close| {
            LinkFile {
                on_exit,
                torque_off_on_close,
                ..LinkFile::default()
            }
            .resolve(&BRIDGE)
            .map(|s| s.on_exit)
        };
        assert_eq!(on_exit(None, None), Ok(OnExit::Hold));
        assert_eq!(on_exit(Some(OnExit::Relax), None), Ok(OnExit::Relax));
        assert_eq!(on_exit(None, Some(true)), Ok(OnExit::Relax));
        assert_eq!(on_exit(None, Some(false)), Ok(OnExit::Hold));
        assert_eq!(on_exit(Some(OnExit::Relax), Some(true)), Ok(OnExit::Relax));
        let e = on_exit(Some(OnExit::Hold), Some(true)).unwrap_err();
        assert_eq!(e.field(), "on_exit");
        assert!(e.to_string().contains("torque_off_on_close: true"), "{e}");
    }
}
