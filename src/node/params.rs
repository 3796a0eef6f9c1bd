//! The ROS node's parameters as a plain struct, and what they mean for the
//! node core.
//!
//! The struct is ROS-free so the mapping to [`NodeConfig`], [`SolverConfig`]
//! and [`Common`] is tested in the normal test run; with the `ros2` feature
//! it also derives r2r's `RosParams`, which declares every field as a ROS
//! parameter with its first doc line as the description, applies
//! `--ros-args -p` and YAML values at start, and serves `ros2 param get`.
//! Fields are only the types `RosParams` supports (bool, i64, f64, String),
//! so "unset" is spelled as an empty string or 0 rather than `Option`.

use super::core::{NodeConfig, NodeError};
use crate::ik::{
    AnalyticOptions, Bend, CcdOptions, Common, FabrikOptions, JacobianOptions, SolverConfig,
    SolverKind, Tolerance,
};
use crate::model::Chain;
use std::path::PathBuf;
use std::time::Duration;

/// Everything `ik_node` can be told at start. Defaults match `arm_ik sim`.
///
/// Doubles must be given as doubles (`-p rate_hz:=50.0`, not `50`): ROS
/// parameters are typed and r2r refuses an integer for a double.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
#[cfg_attr(feature = "ros2", derive(r2r::RosParams))]
pub struct NodeParams {
    /// URDF file to load; empty: use robot_description (parameter, else topic).
    pub urdf_path: String,
    /// URDF XML text; used when urdf_path is empty; empty too: wait for the robot_description topic.
    pub robot_description: String,
    /// First link of the chain; empty: the URDF's root link.
    pub base_link: String,
    /// Last link of the chain; empty: the only leaf link of the URDF.
    pub tip_link: String,
    /// IK solver: jacobian, analytic, ccd or fabrik.
    pub solver: String,
    /// A target counts as reached within this distance (m).
    pub position_tolerance: f64,
    /// A target counts as reached within this angle (rad).
    pub orientation_tolerance: f64,
    /// Wall-clock budget of one jacobian solve (ms).
    pub budget_ms: f64,
    /// Iteration cap (jacobian per attempt, ccd and fabrik per solve); 0: the solver's default.
    pub max_iterations: i64,
    /// Analytic solver bend: closest, positive, negative, or a pole point "x,y,z".
    pub bend: String,
    /// Control rate (Hz): one solve at most, one motion step and one joint_states message per tick.
    pub rate_hz: f64,
    /// Speed limit of every joint (rad/s or m/s); 0: each joint's URDF velocity, capped at 2.
    pub max_velocity: f64,
    /// Acceleration limit of every joint (rad/s^2 or m/s^2).
    pub max_acceleration: f64,
    /// Follow a best-effort IK answer only when its position error is below this (m).
    pub max_best_effort_error: f64,
    /// Targets stamped further than this from the node clock are rejected as stale (s).
    pub max_target_age: f64,
    /// Servo calibration and link file (YAML, e.g. config/servos_pwm.yaml); needed when sim is false.
    pub servo_config: String,
    /// Drive virtual servos instead of hardware.
    pub sim: bool,
    /// Serial port of the servo bus or bridge (hardware output only).
    pub port: String,
    /// Servo protocol on the port: pwm_bridge or feetech; must match servo_config's kind (hardware output only).
    pub protocol: String,
}

impl Default for NodeParams {
    fn default() -> Self {
        let node = NodeConfig::default();
        let jacobian = JacobianOptions::default();
        let tolerance = Tolerance::default();
        NodeParams {
            urdf_path: String::new(),
            robot_description: String::new(),
            base_link: String::new(),
            tip_link: String::new(),
            solver: SolverKind::Jacobian.name().to_string(),
            position_tolerance: tolerance.position,
            orientation_tolerance: tolerance.orientation,
            budget_ms: jacobian.budget.as_secs_f64() * 1e3,
            max_iterations: 0,
            bend: "closest".to_string(),
            rate_hz: node.rate_hz,
            max_velocity: 0.0,
            max_acceleration: node.default_acceleration,
            max_best_effort_error: node.max_best_effort_error,
            max_target_age: node.max_target_age,
            servo_config: String::new(),
            sim: true,
            port: "/dev/ttyUSB0".into(),
            protocol: "pwm_bridge".into(),
        }
    }
}

/// Why a ROS 2 parameter file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ParamFileError {
    #[error("{source_name}: cannot read the parameter file: {detail}")]
    Unreadable { source_name: String, detail: String },
    #[error("{source_name}: not YAML: {detail}")]
    NotYaml { source_name: String, detail: String },
    #[error("{source_name}: no `ik_node: ros__parameters:` (or `/**: ros__parameters:`) section; top-level keys: {}", .found.join(", "))]
    NoSection {
        source_name: String,
        found: Vec<String>,
    },
    #[error("{source_name}: ik_node parameters: {detail}")]
    Parameter { source_name: String, detail: String },
}

impl NodeParams {
    /// Reads the node's section of a ROS 2 parameter file (`ik_node:` or
    /// `/**:`, then `ros__parameters:`), as the launch files pass it, on top
    /// of the defaults. Lets `replay` run the node exactly as configured
    /// for the live robot, without ROS. Unknown names and wrong types are
    /// errors, as ROS would refuse them.
    pub fn from_ros_yaml(text: &str, source_name: &str) -> Result<NodeParams, ParamFileError> {
        let src = || source_name.to_owned();
        let doc: serde_norway::Value =
            serde_norway::from_str(text).map_err(|e| ParamFileError::NotYaml {
                source_name: src(),
                detail: e.to_string(),
            })?;
        let keys: Vec<String> = doc
            .as_mapping()
            .map(|m| {
                m.keys()
                    .filter_map(|k| k.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let section = ["ik_node", "/ik_node", "/**"]
            .iter()
            .find_map(|name| doc.get(*name).and_then(|n| n.get("ros__parameters")))
            .ok_or_else(|| ParamFileError::NoSection {
                source_name: src(),
                found: keys,
            })?;
        // One entry at a time first, so a wrong type names its parameter.
        if let Some(map) = section.as_mapping() {
            for (k, v) in map {
                let mut one = serde_norway::Mapping::new();
                one.insert(k.clone(), v.clone());
                if let Err(e) =
                    serde_norway::from_value::<NodeParams>(serde_norway::Value::Mapping(one))
                {
                    return Err(ParamFileError::Parameter {
                        source_name: src(),
                        detail: format!("{}: {e}", k.as_str().unwrap_or("?")),
                    });
                }
            }
        }
        serde_norway::from_value(section.clone()).map_err(|e| ParamFileError::Parameter {
            source_name: src(),
            detail: e.to_string(),
        })
    }

    /// [`NodeParams::from_ros_yaml`] on a file.
    pub fn from_ros_yaml_file(path: &std::path::Path) -> Result<NodeParams, ParamFileError> {
        let text = std::fs::read_to_string(path).map_err(|e| ParamFileError::Unreadable {
            source_name: path.display().to_string(),
            detail: e.to_string(),
        })?;
        NodeParams::from_ros_yaml(&text, &path.display().to_string())
    }
}

/// Where the robot model comes from, in order of precedence.
#[derive(Debug, Clone, PartialEq)]
pub enum UrdfSource {
    /// `urdf_path`.
    File(PathBuf),
    /// The `robot_description` parameter.
    Xml(String),
    /// Neither parameter: the `robot_description` topic, as
    /// robot_state_publisher publishes it.
    Topic,
}

fn bad(name: &'static str, why: impl Into<String>) -> NodeError {
    NodeError::Config {
        name,
        why: why.into(),
    }
}

/// `""` as "not given".
fn non_empty(s: &str) -> Option<&str> {
    let s = s.trim();
    (!s.is_empty()).then_some(s)
}

impl NodeParams {
    /// Where to read the URDF: a path wins over XML text, and with neither
    /// the node waits for the topic (so a launch file that starts
    /// robot_state_publisher needs no extra parameter).
    pub fn urdf_source(&self) -> UrdfSource {
        if let Some(p) = non_empty(&self.urdf_path) {
            UrdfSource::File(PathBuf::from(p))
        } else if non_empty(&self.robot_description).is_some() {
            UrdfSource::Xml(self.robot_description.clone())
        } else {
            UrdfSource::Topic
        }
    }

    pub fn base(&self) -> Option<&str> {
        non_empty(&self.base_link)
    }

    pub fn tip(&self) -> Option<&str> {
        non_empty(&self.tip_link)
    }

    /// The solver and its common options. Chain-independent: per-joint
    /// locks and clamps are not ROS parameters yet, and the solver checks
    /// its options against the chain when the node core binds it.
    pub fn solver_config(&self) -> Result<(SolverConfig, Common), NodeError> {
        let kind: SolverKind = self.solver.trim().parse().map_err(|e| bad("solver", e))?;
        let positive = |name, x: f64| {
            if x.is_finite() && x > 0.0 {
                Ok(x)
            } else {
                Err(bad(name, format!("{x} must be a positive number")))
            }
        };
        let max_iterations = match self.max_iterations {
            0 => None,
            m => Some(u32::try_from(m).ok().filter(|&m| m > 0).ok_or_else(|| {
                bad(
                    "max_iterations",
                    format!("{m} must be 0 (solver default) or a positive count"),
                )
            })?),
        };
        let config = match kind {
            SolverKind::Jacobian => {
                let mut o = JacobianOptions {
                    budget: Duration::from_secs_f64(positive("budget_ms", self.budget_ms)? / 1e3),
                    ..Default::default()
                };
                if let Some(m) = max_iterations {
                    o.max_iterations = m;
                }
                SolverConfig::Jacobian(o)
            }
            SolverKind::Analytic => SolverConfig::Analytic(AnalyticOptions {
                bend: parse_bend(&self.bend)?,
                pitch: None,
            }),
            SolverKind::Ccd => {
                let mut o = CcdOptions::default();
                if let Some(m) = max_iterations {
                    o.max_iterations = m;
                }
                SolverConfig::Ccd(o)
            }
            SolverKind::Fabrik => {
                let mut o = FabrikOptions::default();
                if let Some(m) = max_iterations {
                    o.max_iterations = m;
                }
                SolverConfig::Fabrik(o)
            }
        };
        let common = Common {
            tolerance: Tolerance {
                position: positive("position_tolerance", self.position_tolerance)?,
                orientation: positive("orientation_tolerance", self.orientation_tolerance)?,
            },
            modes: Vec::new(),
        };
        Ok((config, common))
    }

    /// The node core settings. `max_velocity` > 0 sets every joint's limit
    /// and the cap (like `arm_ik sim --max-velocity`); 0 keeps the URDF
    /// speeds under the default cap. Range checks happen in
    /// [`NodeConfig::axis_limits`] when the core is built, so the core and
    /// the node refuse the same values with the same message.
    pub fn node_config(&self, chain: &Chain) -> Result<NodeConfig, NodeError> {
        let mut config = NodeConfig {
            rate_hz: self.rate_hz,
            default_acceleration: self.max_acceleration,
            max_best_effort_error: self.max_best_effort_error,
            max_target_age: self.max_target_age,
            ..NodeConfig::default()
        };
        if self.max_velocity.is_nan() || self.max_velocity < 0.0 {
            return Err(bad(
                "max_velocity",
                format!(
                    "{} must be 0 (URDF limits) or a positive speed",
                    self.max_velocity
                ),
            ));
        }
        if !(self.max_acceleration.is_finite() && self.max_acceleration > 0.0) {
            return Err(bad(
                "max_acceleration",
                format!("{} must be a positive number", self.max_acceleration),
            ));
        }
        if self.max_velocity > 0.0 {
            config.max_velocity = vec![self.max_velocity; chain.dof()];
            config.velocity_cap = self.max_velocity;
        }
        config.axis_limits(chain)?;
        Ok(config)
    }
}

/// `closest`, `positive`, `negative` or a pole point `x,y,z` (m, base frame).
pub fn parse_bend(s: &str) -> Result<Bend, NodeError> {
    s.parse().map_err(|e: String| bad("bend", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARM: &str = include_str!("../../urdf/arm.urdf");

    fn arm() -> Chain {
        Chain::from_urdf_str(ARM, None, None).unwrap()
    }

    #[test]
    fn defaults_build_the_same_node_as_sim() {
        let p = NodeParams::default();
        assert_eq!(p.urdf_source(), UrdfSource::Topic);
        let (solver, common) = p.solver_config().unwrap();
        assert_eq!(solver, SolverConfig::default_for(SolverKind::Jacobian));
        assert_eq!(common, Common::default());
        assert_eq!(p.node_config(&arm()).unwrap(), NodeConfig::default());
    }

    #[test]
    fn urdf_path_wins_over_xml_and_blank_means_unset() {
        let mut p = NodeParams {
            robot_description: "<robot/>".into(),
            urdf_path: "  ".into(),
            base_link: " ".into(),
            ..NodeParams::default()
        };
        assert_eq!(p.urdf_source(), UrdfSource::Xml("<robot/>".into()));
        assert_eq!(p.base(), None);
        p.urdf_path = "/x/arm.urdf".into();
        assert_eq!(p.urdf_source(), UrdfSource::File("/x/arm.urdf".into()));
    }

    #[test]
    fn solver_options_map_onto_each_solver() {
        let p = NodeParams {
            solver: "jacobian".into(),
            budget_ms: 2.0,
            max_iterations: 7,
            position_tolerance: 1e-4,
            orientation_tolerance: 1e-3,
            ..NodeParams::default()
        };
        let (s, c) = p.solver_config().unwrap();
        match s {
            SolverConfig::Jacobian(o) => {
                assert_eq!(o.budget, Duration::from_millis(2));
                assert_eq!(o.max_iterations, 7);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(c.tolerance.position, 1e-4);
        assert_eq!(c.tolerance.orientation, 1e-3);

        for (name, bend) in [
            ("negative", Bend::Negative),
            (
                "0.1, 0, 0.3",
                Bend::Pole(nalgebra::Vector3::new(0.1, 0.0, 0.3)),
            ),
        ] {
            let p = NodeParams {
                solver: "analytic".into(),
                bend: name.into(),
                ..NodeParams::default()
            };
            assert_eq!(
                p.solver_config().unwrap().0,
                SolverConfig::Analytic(AnalyticOptions { bend, pitch: None })
            );
        }
        let p = NodeParams {
            solver: "ccd".into(),
            max_iterations: 3,
            ..NodeParams::default()
        };
        assert!(
            matches!(p.solver_config().unwrap().0, SolverConfig::Ccd(o) if o.max_iterations == 3)
        );
        let p = NodeParams {
            solver: "fabrik".into(),
            ..NodeParams::default()
        };
        assert_eq!(
            p.solver_config().unwrap().0,
            SolverConfig::default_for(SolverKind::Fabrik)
        );
    }

    #[test]
    fn bad_values_name_the_parameter() {
        let cases = [
            (
                NodeParams {
                    solver: "newton".into(),
                    ..NodeParams::default()
                },
                "solver",
            ),
            (
                NodeParams {
                    max_iterations: -1,
                    ..NodeParams::default()
                },
                "max_iterations",
            ),
            (
                NodeParams {
                    budget_ms: 0.0,
                    ..NodeParams::default()
                },
                "budget_ms",
            ),
            (
                NodeParams {
                    position_tolerance: f64::NAN,
                    ..NodeParams::default()
                },
                "position_tolerance",
            ),
            (
                NodeParams {
                    solver: "analytic".into(),
                    bend: "1,2".into(),
                    ..NodeParams::default()
                },
                "bend",
            ),
        ];
        for (p, name) in cases {
            let e = p.solver_config().unwrap_err().to_string();
            assert!(e.contains(name), "{name}: {e}");
        }
        let chain = arm();
        for (p, name) in [
            (
                NodeParams {
                    rate_hz: 0.0,
                    ..NodeParams::default()
                },
                "rate_hz",
            ),
            (
                NodeParams {
                    max_velocity: -1.0,
                    ..NodeParams::default()
                },
                "max_velocity",
            ),
            (
                NodeParams {
                    max_acceleration: 0.0,
                    ..NodeParams::default()
                },
                "max_acceleration",
            ),
            (
                NodeParams {
                    max_target_age: f64::INFINITY,
                    ..NodeParams::default()
                },
                "max_target_age",
            ),
        ] {
            let e = p.node_config(&chain).unwrap_err().to_string();
            assert!(e.contains(name), "{name}: {e}");
        }
    }

    #[test]
    fn one_max_velocity_limits_every_joint_and_the_cap() {
        let chain = arm();
        let p = NodeParams {
            max_velocity: 0.5,
            rate_hz: 100.0,
            ..NodeParams::default()
        };
        let c = p.node_config(&chain).unwrap();
        assert_eq!(c.max_velocity, vec![0.5; chain.dof()]);
        assert_eq!(c.velocity_cap, 0.5);
        assert_eq!(c.rate_hz, 100.0);
    }

    #[test]
    fn the_project_parameter_files_read_as_the_node_reads_them() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let p = NodeParams::from_ros_yaml_file(&root.join("config/arm.yaml")).unwrap();
        assert_eq!(
            (p.base_link.as_str(), p.tip_link.as_str()),
            ("base_link", "tool")
        );
        assert_eq!(p.max_velocity, 1.5);
        assert_eq!(p.max_acceleration, 6.0);
        assert_eq!(p.position_tolerance, 1e-4);
        // Unset parameters keep the defaults.
        assert_eq!(p.port, NodeParams::default().port);
        let so101 = NodeParams::from_ros_yaml_file(&root.join("config/so101.yaml")).unwrap();
        assert_eq!(so101.tip_link, "gripper_frame_link");
    }

    #[test]
    fn parameter_file_errors_name_the_file_and_the_parameter() {
        let e =
            NodeParams::from_ros_yaml("ik_node:\n  ros__parameters:\n    rate: 50.0\n", "p.yaml")
                .unwrap_err();
        assert!(
            e.to_string().starts_with("p.yaml") && e.to_string().contains("rate"),
            "{e}"
        );
        let e = NodeParams::from_ros_yaml(
            "ik_node:\n  ros__parameters:\n    rate_hz: fast\n",
            "p.yaml",
        )
        .unwrap_err();
        assert!(e.to_string().contains("rate_hz"), "{e}");
        let e = NodeParams::from_ros_yaml("other_node:\n  ros__parameters: {}\n", "p.yaml")
            .unwrap_err();
        assert!(e.to_string().contains("other_node"), "{e}");
        let p = NodeParams::from_ros_yaml("/**:\n  ros__parameters:\n    solver: ccd\n", "p.yaml")
            .unwrap();
        assert_eq!(p.solver, "ccd");
    }
}
