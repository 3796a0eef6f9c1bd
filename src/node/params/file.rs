//! The node's section of a ROS 2 parameter file, read as ROS reads it, so
//! `replay --config` runs the node exactly as configured for the live robot.

use super::NodeParams;
use super::table::{ParamError, ParamValue};
use serde_norway::Value;

/// Why a ROS 2 parameter file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
    #[error("{source_name}: ik_node parameters: {error}")]
    Parameter {
        source_name: String,
        error: ParamError,
    },
}

/// A YAML value as the ROS parameter it would be, or what it is instead.
fn param_value(v: &Value) -> Result<ParamValue, String> {
    Ok(match v {
        Value::Bool(b) => ParamValue::Bool(*b),
        Value::Number(n) if n.is_f64() => ParamValue::Double(n.as_f64().unwrap_or(f64::NAN)),
        Value::Number(n) => ParamValue::Integer(
            n.as_i64()
                .ok_or_else(|| format!("the integer {n}, which is out of range"))?,
        ),
        Value::String(s) => ParamValue::String(s.clone()),
        Value::Null => return Err("an empty value".into()),
        Value::Sequence(items) => return sequence_value(items),
        Value::Mapping(_) => return Err("a mapping".into()),
        Value::Tagged(_) => return Err("a tagged value".into()),
    })
}

/// A YAML list as ROS reads it: a double array when every item is a
/// double (`[1.0, 0.0, 0.0]`); integers among them make it another type
/// to ROS, and names are one string in this node's parameters.
fn sequence_value(items: &[Value]) -> Result<ParamValue, String> {
    let doubles: Option<Vec<f64>> = items
        .iter()
        .map(|v| v.as_f64().filter(|_| v.is_f64()))
        .collect();
    match doubles {
        Some(v) if !v.is_empty() => Ok(ParamValue::DoubleArray(v)),
        _ if items.is_empty() => Err("an empty list".into()),
        _ if items.iter().all(Value::is_number) => Err(format!(
            "a list with integers ({})",
            ParamError::WRITE_DOUBLES
        )),
        _ => Err("a list (write lists of names as one string: \"a,b\")".into()),
    }
}

/// Applies one `name: value` entry of the file.
fn apply(params: &mut NodeParams, key: &Value, value: &Value) -> Result<(), ParamError> {
    let name = key.as_str().ok_or_else(|| ParamError::Unknown {
        name: format!("{key:?}"),
    })?;
    let spec = NodeParams::spec(name).ok_or_else(|| ParamError::Unknown {
        name: name.to_owned(),
    })?;
    let value =
        param_value(value).map_err(|got| ParamError::wrong_type(spec.name, spec.kind, &got))?;
    params.set(spec.name, value)
}

impl NodeParams {
    /// Reads the node's section of a ROS 2 parameter file (`ik_node:` or
    /// `/**:`, then `ros__parameters:`), as the launch files pass it, on
    /// top of the defaults. Every entry goes through [`NodeParams::set`],
    /// as ROS applies it: unknown names and wrong types (an integer for a
    /// double) are errors naming the parameter. The values are checked
    /// when the settings are made ([`NodeParams::settings`]).
    pub fn from_ros_yaml(text: &str, source_name: &str) -> Result<NodeParams, ParamFileError> {
        let src = || source_name.to_owned();
        let doc: Value = serde_norway::from_str(text).map_err(|e| ParamFileError::NotYaml {
            source_name: src(),
            detail: e.to_string(),
        })?;
        let section = ["ik_node", "/ik_node", "/**"]
            .iter()
            .find_map(|name| doc.get(*name).and_then(|n| n.get("ros__parameters")))
            .ok_or_else(|| ParamFileError::NoSection {
                source_name: src(),
                found: doc
                    .as_mapping()
                    .map(|m| {
                        m.keys()
                            .filter_map(|k| k.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
            })?;
        let mut params = NodeParams::default();
        let empty = serde_norway::Mapping::new();
        let entries = match section {
            Value::Null => &empty,
            v => v.as_mapping().ok_or_else(|| ParamFileError::NotYaml {
                source_name: src(),
                detail: "ros__parameters is not a mapping of names to values".into(),
            })?,
        };
        for (k, v) in entries {
            apply(&mut params, k, v).map_err(|error| ParamFileError::Parameter {
                source_name: src(),
                error,
            })?;
        }
        Ok(params)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::{MotionSettings, NodeSettings, SolverSettings};

    fn read(body: &str) -> Result<NodeParams, ParamFileError> {
        NodeParams::from_ros_yaml(&format!("ik_node:\n  ros__parameters:\n{body}"), "p.yaml")
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
        // The settings the node runs with, as before the parameters gained
        // the CLI's solver options.
        let s = p.settings().unwrap();
        assert_eq!(
            s,
            NodeSettings {
                solver: SolverSettings {
                    position_tolerance: 1e-4,
                    orientation_tolerance: 1e-3,
                    max_iterations: Some(60),
                    ..SolverSettings::default()
                },
                motion: MotionSettings {
                    max_velocity: Some(1.5),
                    max_acceleration: 6.0,
                    ..MotionSettings::default()
                },
                ..NodeSettings::default()
            }
        );
        let so101 = NodeParams::from_ros_yaml_file(&root.join("config/so101.yaml")).unwrap();
        assert_eq!(so101.tip_link, "gripper_frame_link");
        let s = so101.settings().unwrap();
        assert_eq!(s.solver.solver, crate::ik::SolverKind::Analytic);
        assert_eq!(s.motion.max_velocity, Some(1.0));
    }

    #[test]
    fn parameter_file_errors_name_the_file_and_the_parameter() {
        let e = read("    rate: 50.0\n").unwrap_err().to_string();
        assert!(e.starts_with("p.yaml") && e.contains("'rate'"), "{e}");
        let e = read("    rate_hz: fast\n").unwrap_err().to_string();
        assert!(e.contains("rate_hz") && e.contains("string"), "{e}");
        // What the live node refuses: an integer for a double.
        let e = read("    rate_hz: 50\n").unwrap_err().to_string();
        assert!(e.contains("rate_hz") && e.contains("write 50.0"), "{e}");
        let e = read("    lock: [elbow, shoulder]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("lock") && e.contains("a list"), "{e}");
        // A double array is read as one; integers in it are refused as ROS
        // refuses them.
        let p = read("    tool_axis: [1.0, 0.0, 0.0]\n").unwrap();
        assert_eq!(p.tool_axis, [1.0, 0.0, 0.0]);
        let e = read("    tool_axis: [1, 0, 0]\n").unwrap_err().to_string();
        assert!(e.contains("tool_axis") && e.contains("1.0 not 1"), "{e}");
        let e = read("    tool_axis: 1.0\n").unwrap_err().to_string();
        assert!(e.contains("tool_axis") && e.contains("double array"), "{e}");
        let e = read("    lock: [1.0]\n").unwrap_err().to_string();
        assert!(e.contains("lock") && e.contains("double array"), "{e}");
        let e = read("    sim: ~\n").unwrap_err().to_string();
        assert!(e.contains("sim") && e.contains("empty"), "{e}");
        let e = NodeParams::from_ros_yaml("other_node:\n  ros__parameters: {}\n", "p.yaml")
            .unwrap_err();
        assert!(e.to_string().contains("other_node"), "{e}");
        let p = NodeParams::from_ros_yaml("/**:\n  ros__parameters:\n    solver: ccd\n", "p.yaml")
            .unwrap();
        assert_eq!(p.solver, "ccd");
        assert_eq!(read("").unwrap(), NodeParams::default());
    }
}
