//! The ROS 2 adapter's library part (feature `ros2`): message conversions
//! and the node's parameters as r2r sees them, for the `ik_node` binary.
//! Kept in the library, not the binary, so they are unit-tested with
//! `cargo test --features ros2,r2r/doc-only --lib ros` on machines without
//! ROS.

pub mod convert;
pub mod params;

#[cfg(test)]
mod tests {
    use crate::model::Chain;
    use crate::node::{LiveParams, NodeParams};
    use r2r::{Parameter, ParameterValue, RosParams};

    /// What `make_derived_parameter_handler` does at start, minus rcl:
    /// `--ros-args -p` / YAML values (already in the node's map) override
    /// the defaults, and every parameter of the table is declared with its
    /// description.
    #[test]
    fn ros_args_override_defaults_and_every_parameter_is_declared() {
        let mut map = r2r::indexmap::IndexMap::new();
        map.insert(
            "solver".to_string(),
            Parameter::new(ParameterValue::String("ccd".into())),
        );
        map.insert(
            "rate_hz".to_string(),
            Parameter::new(ParameterValue::Double(100.0)),
        );
        map.insert(
            "use_sim_time".to_string(),
            Parameter::new(ParameterValue::Bool(false)),
        );
        let mut p = NodeParams::default();
        p.register_parameters("", None, &mut map).unwrap();
        assert_eq!(p.solver, "ccd");
        assert_eq!(p.rate_hz, 100.0);
        // Ours, plus the one that is not ours, left as it was.
        assert_eq!(map.len(), NodeParams::SPECS.len() + 1);
        assert_eq!(map["use_sim_time"].value, ParameterValue::Bool(false));
        for spec in NodeParams::SPECS {
            assert_eq!(map[spec.name].description, spec.description());
            assert!(!spec.description().is_empty());
        }
        assert_eq!(map["sim"].value, ParameterValue::Bool(true));
        assert_eq!(
            map["protocol"].value,
            ParameterValue::String("pwm_bridge".into())
        );
        assert_eq!(map["lock"].value, ParameterValue::String(String::new()));

        let mut map = r2r::indexmap::IndexMap::new();
        map.insert(
            "rate_hz".to_string(),
            Parameter::new(ParameterValue::Integer(50)),
        );
        let e = NodeParams::default()
            .register_parameters("", None, &mut map)
            .unwrap_err();
        assert!(
            e.to_string().contains("rate_hz") && e.to_string().contains("50.0"),
            "{e}"
        );
    }

    /// leader_node's table is declared the same way: its own parameters
    /// only, given values taken, a wrong type refused with the name.
    #[test]
    fn leader_node_declares_its_own_parameters() {
        use crate::node::LeaderParams;
        let mut map = r2r::indexmap::IndexMap::new();
        map.insert(
            "leader_port".to_string(),
            Parameter::new(ParameterValue::String("/dev/ttyACM1".into())),
        );
        let mut p = LeaderParams::default();
        p.register_parameters("", None, &mut map).unwrap();
        assert_eq!(p.leader_port, "/dev/ttyACM1");
        assert_eq!(map.len(), LeaderParams::SPECS.len());
        assert!(!map.contains_key("solver"));
        let e = p
            .set_parameter("rate_hz", &ParameterValue::Integer(30))
            .unwrap_err();
        assert!(e.to_string().contains("rate_hz"), "{e}");
        assert!(
            p.set_parameter("solver", &ParameterValue::String("ccd".into()))
                .is_err()
        );
    }

    /// `ros2 param get` / `set`: by name, typed, refused with the name.
    #[test]
    fn get_and_set_by_name_refuse_wrong_types() {
        let mut p = NodeParams::default();
        p.set_parameter("clamp", &ParameterValue::String("elbow=0:1".into()))
            .unwrap();
        assert_eq!(
            p.get_parameter("clamp").unwrap(),
            ParameterValue::String("elbow=0:1".into())
        );
        let lock = ParameterValue::StringArray(vec!["elbow".into()]);
        let e = p.set_parameter("lock", &lock).unwrap_err().to_string();
        assert!(e.contains("lock") && e.contains("string array"), "{e}");
        assert!(p.check_parameter("lock", &lock).is_err());
        assert!(
            p.check_parameter("lock", &ParameterValue::String("elbow".into()))
                .is_ok()
        );
        assert_eq!(p.lock, "");
        let e = p.get_parameter("nope").unwrap_err().to_string();
        assert!(e.contains("nope"), "{e}");
    }

    /// `ros2 param set` while the node runs: a live parameter takes a good
    /// value, a bad one or a fixed parameter is refused with the reason
    /// (r2r sends it back) and the old value stays.
    #[test]
    fn a_running_node_refuses_fixed_parameters_and_bad_values_with_the_reason() {
        let mut map = r2r::indexmap::IndexMap::new();
        map.insert(
            "rate_hz".to_string(),
            Parameter::new(ParameterValue::Double(100.0)),
        );
        let mut p = LiveParams::new(NodeParams::default());
        p.register_parameters("", None, &mut map).unwrap();
        p.read();
        let urdf = include_str!("../../urdf/arm.urdf");
        p.run_on(Chain::from_urdf_str(urdf, None, None).unwrap());
        p.set_parameter("budget_ms", &ParameterValue::Double(2.5))
            .unwrap();
        assert_eq!(p.params().budget_ms, 2.5);
        let e = p
            .set_parameter("rate_hz", &ParameterValue::Double(50.0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("rate_hz") && e.contains("restart"), "{e}");
        let e = p
            .set_parameter("gripper_open", &ParameterValue::String("3".into()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("gripper_open") && e.contains("1.2"), "{e}");
        assert!(
            p.check_parameter("budget_ms", &ParameterValue::Double(-1.0))
                .is_err()
        );
        assert_eq!(
            (p.params().rate_hz, p.params().gripper_open.as_str()),
            (100.0, "")
        );
        assert_eq!(
            p.get_parameter("budget_ms").unwrap(),
            ParameterValue::Double(2.5)
        );
    }

    /// `tool_axis` is a double array, as `-p tool_axis:="[1.0, 0.0, 0.0]"`
    /// and a YAML list give it: taken at start and live, the settings'
    /// mode pointing the tip's +x; a zero axis or integers refused naming
    /// it, the old value kept.
    #[test]
    fn the_tool_axis_is_a_double_array_and_a_bad_one_is_refused() {
        use crate::ik::OrientationMode;
        use nalgebra::Vector3;
        let x = ParameterValue::DoubleArray(vec![1.0, 0.0, 0.0]);
        let mut map = r2r::indexmap::IndexMap::new();
        map.insert("tool_axis".to_string(), Parameter::new(x.clone()));
        map.insert(
            "target_orientation".to_string(),
            Parameter::new(ParameterValue::String("axis".into())),
        );
        let mut p = LiveParams::new(NodeParams::default());
        p.register_parameters("", None, &mut map).unwrap();
        assert_eq!(map["tool_axis"].value, x);
        p.read();
        let urdf = include_str!("../../urdf/arm.urdf");
        p.run_on(Chain::from_urdf_str(urdf, None, None).unwrap());
        let mode = p.settings().unwrap().solver.target_orientation;
        assert_eq!(
            mode,
            OrientationMode::Axis {
                tool: Vector3::x_axis()
            }
        );
        let y = ParameterValue::DoubleArray(vec![0.0, 2.0, 0.0]);
        p.set_parameter("tool_axis", &y).unwrap();
        assert_eq!(p.get_parameter("tool_axis").unwrap(), y);
        let mode = p.settings().unwrap().solver.target_orientation;
        assert_eq!(
            mode,
            OrientationMode::Axis {
                tool: Vector3::y_axis()
            }
        );
        for bad in [
            ParameterValue::DoubleArray(vec![0.0, 0.0, 0.0]),
            ParameterValue::DoubleArray(vec![1.0, 0.0]),
            ParameterValue::DoubleArray(vec![f64::NAN, 0.0, 1.0]),
            ParameterValue::IntegerArray(vec![1, 0, 0]),
            ParameterValue::String("1,0,0".into()),
        ] {
            let e = p.set_parameter("tool_axis", &bad).unwrap_err().to_string();
            assert!(e.contains("tool_axis"), "{bad:?}: {e}");
        }
        let e = p
            .set_parameter("tool_axis", &ParameterValue::IntegerArray(vec![1, 0, 0]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("1.0 not 1"), "{e}");
        assert_eq!(p.get_parameter("tool_axis").unwrap(), y);
    }
}
