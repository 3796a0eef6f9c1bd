//! The ROS 2 adapter's library part (feature `ros2`): message conversions
//! for the `ik_node` binary. Kept in the library, not the binary, so the
//! conversions are unit-tested with `cargo test --features
//! ros2,r2r/doc-only --lib ros` on machines without ROS.

pub mod convert;

#[cfg(test)]
mod tests {
    use crate::node::NodeParams;
    use r2r::{Parameter, ParameterValue, RosParams};

    /// What `make_derived_parameter_handler` does at start, minus rcl:
    /// `--ros-args -p` / YAML values (already in the node's map) override
    /// the defaults, and every field is declared with its description.
    #[test]
    fn ros_args_override_defaults_and_every_field_is_declared() {
        let mut map = r2r::indexmap::IndexMap::new();
        map.insert(
            "solver".to_string(),
            Parameter::new(ParameterValue::String("ccd".into())),
        );
        map.insert(
            "rate_hz".to_string(),
            Parameter::new(ParameterValue::Double(100.0)),
        );
        let mut p = NodeParams::default();
        p.register_parameters("", None, &mut map).unwrap();
        assert_eq!(p.solver, "ccd");
        assert_eq!(p.rate_hz, 100.0);
        assert_eq!(map.len(), 19);
        assert!(map.values().all(|x| !x.description.is_empty()));
        assert_eq!(map["sim"].value, ParameterValue::Bool(true));
        assert_eq!(
            map["protocol"].value,
            ParameterValue::String("pwm_bridge".into())
        );
        assert_eq!(
            map["urdf_path"].value,
            ParameterValue::String(String::new())
        );

        let mut map = r2r::indexmap::IndexMap::new();
        map.insert(
            "rate_hz".to_string(),
            Parameter::new(ParameterValue::Integer(50)),
        );
        let e = NodeParams::default()
            .register_parameters("", None, &mut map)
            .unwrap_err();
        assert!(e.to_string().contains("rate_hz"), "{e}");
    }
}
