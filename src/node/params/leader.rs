//! The ROS parameters of `leader_node` (the ROS side of `arm_ik teleop`),
//! declared once as ik_node's are (`declare_params!`), and what they
//! mean: [`LeaderParams::settings`] checks them into a [`LeaderSettings`]
//! before anything is opened, each error naming the parameter. ROS-free:
//! the binary only hands r2r's values in (`crate::ros::params`), and
//! `arm_ik params --node leader_node` prints the same table.

use super::table::declare_params;
use crate::node::MotionSettings;
use crate::node::settings::SettingError;
use crate::node::teleop::names::parse_map;
use std::path::PathBuf;

fn rate() -> f64 {
    MotionSettings::default().rate_hz
}

declare_params! {
    /// Everything `leader_node` can be told; read at start (none is live:
    /// a running leader keeps its port, robot and rate).
    pub struct LeaderParams for "leader_node" {
        /// The leader's servo file (calibration as for ik_node's servo_config); its servos must report their position (bus servos, not PWM). Needed.
        leader_config: String = String::new(), live: false;
        /// Serial port of the leader arm. Needed.
        leader_port: String = String::new(), live: false;
        /// The leader's URDF file. Needed.
        urdf_path: String = String::new(), live: false;
        /// First link of the leader's chain; empty: the URDF's root link.
        base_link: String = String::new(), live: false;
        /// Last link of the leader's chain; empty: found as ik_node finds it.
        tip_link: String = String::new(), live: false;
        /// The follower's URDF when it is not the leader's make (joints then matched by role, or by joint_map); empty: the leader's.
        follower_urdf_path: String = String::new(), live: false;
        /// Leader joints mapped by hand to follower joints, comma-separated LEADER=FOLLOWER; empty: by name, else by role.
        joint_map: String = String::new(), live: false;
        /// Reads of the leader per second (Hz).
        rate_hz: f64 = rate(), live: false;
        /// Where each reading goes as a frame: the follower's ~/joint_command (run the follower with follow_leader).
        follower_command_topic: String = "/ik_node/joint_command".into(), live: false;
    }
}

/// What `leader_node`'s parameters say, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaderSettings {
    /// The leader's servo file.
    pub config: PathBuf,
    pub port: String,
    /// The leader's URDF and chain.
    pub urdf: PathBuf,
    pub base: Option<String>,
    pub tip: Option<String>,
    /// The follower's URDF; `None`: the leader's make.
    pub follower_urdf: Option<PathBuf>,
    /// `LEADER=FOLLOWER` pairs, as given (names are checked against the
    /// chains when they are loaded).
    pub joint_map: Vec<(String, String)>,
    pub rate_hz: f64,
    pub follower_command_topic: String,
}

impl LeaderSettings {
    /// The map as `arm_ik::run::map_joints` takes it (`LEADER=FOLLOWER`
    /// items).
    pub fn map_items(&self) -> Vec<String> {
        self.joint_map
            .iter()
            .map(|(l, f)| format!("{l}={f}"))
            .collect()
    }
}

fn trimmed(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_owned())
}

/// A string parameter that must be given.
fn needed(name: &'static str, value: &str, what: &str) -> Result<String, SettingError> {
    trimmed(value).ok_or_else(|| SettingError::new(name, "\"\"", format!("is needed: {what}")))
}

impl LeaderParams {
    /// The settings these parameters give; the first problem is an error
    /// naming its parameter (a missing servo file, port or URDF, a rate
    /// out of range, a joint_map item that is not LEADER=FOLLOWER, an
    /// empty topic).
    pub fn settings(&self) -> Result<LeaderSettings, SettingError> {
        let config = needed(
            "leader_config",
            &self.leader_config,
            "the leader's servo file",
        )?;
        let port = needed(
            "leader_port",
            &self.leader_port,
            "the leader arm's serial port",
        )?;
        let urdf = needed("urdf_path", &self.urdf_path, "the leader's URDF")?;
        let rate_hz = MotionSettings::check_rate(self.rate_hz)?;
        let joint_map = parse_map(&self.joint_map).map_err(|e| {
            SettingError::new("joint_map", format!("'{}'", self.joint_map), e.to_string())
        })?;
        let topic = needed(
            "follower_command_topic",
            &self.follower_command_topic,
            "the follower's joint_command topic",
        )?;
        Ok(LeaderSettings {
            config: config.into(),
            port,
            urdf: urdf.into(),
            base: trimmed(&self.base_link),
            tip: trimmed(&self.tip_link),
            follower_urdf: trimmed(&self.follower_urdf_path).map(PathBuf::from),
            joint_map,
            rate_hz,
            follower_command_topic: topic,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given() -> LeaderParams {
        LeaderParams {
            leader_config: "config/servos_feetech.yaml".into(),
            leader_port: "/dev/ttyACM0".into(),
            urdf_path: "urdf/arm.urdf".into(),
            ..LeaderParams::default()
        }
    }

    #[test]
    fn given_parameters_become_settings() {
        let mut p = given();
        p.joint_map = " elbow_flex=elbow , wrist_flex=wrist".into();
        p.tip_link = " gripper ".into();
        let s = p.settings().unwrap();
        assert_eq!(s.map_items(), ["elbow_flex=elbow", "wrist_flex=wrist"]);
        assert_eq!(s.config, PathBuf::from("config/servos_feetech.yaml"));
        assert_eq!(s.port, "/dev/ttyACM0");
        assert_eq!(s.base, None);
        assert_eq!(s.tip.as_deref(), Some("gripper"));
        assert_eq!(s.follower_urdf, None);
        assert_eq!(
            s.joint_map,
            [("elbow_flex", "elbow"), ("wrist_flex", "wrist")].map(|(a, b)| (a.into(), b.into()))
        );
        assert_eq!(s.rate_hz, MotionSettings::default().rate_hz);
        assert_eq!(s.follower_command_topic, "/ik_node/joint_command");
    }

    #[test]
    fn a_missing_required_string_is_named() {
        for name in ["leader_config", "leader_port", "urdf_path"] {
            let mut p = given();
            p.set(name, super::super::ParamValue::String("  ".into()))
                .unwrap();
            let e = p.settings().unwrap_err();
            assert_eq!(e.name, name);
            assert!(e.to_string().contains("is needed"), "{e}");
        }
    }

    #[test]
    fn a_bad_rate_is_refused() {
        for rate in [0.0, -5.0, f64::NAN, 1e9] {
            let p = LeaderParams {
                rate_hz: rate,
                ..given()
            };
            let e = p.settings().unwrap_err();
            assert_eq!(e.name, "rate_hz", "{rate}: {e}");
        }
    }

    #[test]
    fn a_bad_joint_map_is_named_with_its_item() {
        let p = LeaderParams {
            joint_map: "elbow_flex=elbow,wrist".into(),
            ..given()
        };
        let e = p.settings().unwrap_err();
        assert_eq!(e.name, "joint_map");
        assert!(e.to_string().contains("'wrist'"), "{e}");
    }

    #[test]
    fn every_parameter_is_declared_with_a_description() {
        let names: Vec<_> = LeaderParams::SPECS.iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "leader_config",
                "leader_port",
                "urdf_path",
                "base_link",
                "tip_link",
                "follower_urdf_path",
                "joint_map",
                "rate_hz",
                "follower_command_topic"
            ]
        );
        assert!(
            LeaderParams::SPECS
                .iter()
                .all(|s| !s.live && !s.description().is_empty())
        );
    }
}
