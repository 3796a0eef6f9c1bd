//! Jog settings: how fast a twist may move the tip, how quickly it may
//! speed up and slow down, how long a twist lasts, and which frame an
//! unstamped twist (`cmd_vel`) is in.

use super::{SettingError, positive};
use serde::Serialize;

/// The frame a twist's vectors are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TwistFrame {
    /// The tip link: "forward" is along the tool's own x axis and turns
    /// about the tool's axes, as a hand-held tool moves.
    Tip,
    /// The chain's base link: x forward, z up, whatever the tool's pose.
    Base,
}

impl TwistFrame {
    /// The names the `cmd_vel_frame` parameter takes.
    pub const NAMES: [&'static str; 2] = ["tip", "base"];

    pub fn name(self) -> &'static str {
        match self {
            TwistFrame::Tip => "tip",
            TwistFrame::Base => "base",
        }
    }

    /// `tip` or `base`, refused naming the setting `name`.
    pub fn parse(name: &'static str, s: &str) -> Result<TwistFrame, SettingError> {
        match s.trim() {
            "tip" => Ok(TwistFrame::Tip),
            "base" => Ok(TwistFrame::Base),
            other => Err(SettingError::new(
                name,
                format!("'{other}'"),
                "must be tip or base",
            )),
        }
    }
}

/// How twists (`target_twist`, `cmd_vel`, `{"type":"twist"}` lines) move the
/// tip. A twist asks for a velocity; the jog integrates a target pose from
/// it every tick, never faster than these speeds and never changing speed
/// faster than these accelerations, so a key press or a stick flick starts
/// and stops the arm smoothly.
#[derive(Debug, Clone, PartialEq)]
pub struct JogSettings {
    /// Top speed of the tip (m/s); faster twists are scaled down to it,
    /// keeping their direction.
    pub linear_speed: f64,
    /// Top turning speed of the tip (rad/s).
    pub angular_speed: f64,
    /// How fast the tip's speed may change (m/s²).
    pub linear_acceleration: f64,
    /// How fast its turning speed may change (rad/s²).
    pub angular_acceleration: f64,
    /// A twist holds for this long after it arrived (s); with no newer one
    /// the tip slows to a stop within the accelerations above, so a
    /// teleop node that dies mid-press cannot run the arm into its limits.
    pub timeout: f64,
    /// The frame of twists that name none (`cmd_vel`, which has no header).
    pub cmd_vel_frame: TwistFrame,
}

impl Default for JogSettings {
    fn default() -> Self {
        JogSettings {
            linear_speed: 0.1,
            angular_speed: 0.5,
            linear_acceleration: 0.5,
            angular_acceleration: 2.5,
            timeout: 0.2,
            cmd_vel_frame: TwistFrame::Tip,
        }
    }
}

impl JogSettings {
    /// Checks every value, naming the ROS parameter of a bad one.
    pub fn validate(&self) -> Result<(), SettingError> {
        positive("jog_linear_speed", self.linear_speed)?;
        positive("jog_angular_speed", self.angular_speed)?;
        positive("jog_linear_acceleration", self.linear_acceleration)?;
        positive("jog_angular_acceleration", self.angular_acceleration)?;
        positive("jog_timeout", self.timeout)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_name_the_parameter() {
        assert!(JogSettings::default().validate().is_ok());
        let d = JogSettings::default;
        for (s, name) in [
            (
                JogSettings {
                    linear_speed: 0.0,
                    ..d()
                },
                "jog_linear_speed",
            ),
            (
                JogSettings {
                    angular_speed: f64::NAN,
                    ..d()
                },
                "jog_angular_speed",
            ),
            (
                JogSettings {
                    linear_acceleration: -1.0,
                    ..d()
                },
                "jog_linear_acceleration",
            ),
            (
                JogSettings {
                    angular_acceleration: f64::INFINITY,
                    ..d()
                },
                "jog_angular_acceleration",
            ),
            (
                JogSettings {
                    timeout: 0.0,
                    ..d()
                },
                "jog_timeout",
            ),
        ] {
            assert_eq!(s.validate().unwrap_err().name, name);
        }
    }

    #[test]
    fn twist_frames_parse_by_name() {
        assert_eq!(TwistFrame::parse("f", " base "), Ok(TwistFrame::Base));
        assert_eq!(TwistFrame::parse("f", "tip"), Ok(TwistFrame::Tip));
        let e = TwistFrame::parse("cmd_vel_frame", "tool").unwrap_err();
        assert_eq!(e.to_string(), "cmd_vel_frame = 'tool': must be tip or base");
        for name in TwistFrame::NAMES {
            assert_eq!(TwistFrame::parse("f", name).unwrap().name(), name);
        }
    }
}
