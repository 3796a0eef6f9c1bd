//! r2r's `RosParams` for [`NodeParams`] (ik_node) and [`LeaderParams`]
//! (leader_node), built on their parameter tables:
//! every declared parameter is registered with its description, and get
//! and set go through the table's get and set ([`ParamTable`]), so a
//! value of the wrong type is refused with the parameter named (at start,
//! and for `ros2 param set`, which r2r refuses when `set_parameter` fails).
//!
//! `ik_node` serves [`LiveParams`]: once it runs, a set is refused with the
//! reason unless the parameter is live and its value passes the checks
//! made at start; an accepted set reaches the node core at its next tick.

use crate::node::params::ParamError;
use crate::node::{LeaderParams, LiveError, LiveParams, NodeParams, ParamTable, ParamValue};
use r2r::indexmap::IndexMap;
use r2r::{Parameter, ParameterValue, RosParams};

/// Our value as r2r's.
pub fn to_ros(v: ParamValue) -> ParameterValue {
    match v {
        ParamValue::Bool(b) => ParameterValue::Bool(b),
        ParamValue::Integer(i) => ParameterValue::Integer(i),
        ParamValue::Double(x) => ParameterValue::Double(x),
        ParamValue::String(s) => ParameterValue::String(s),
        ParamValue::DoubleArray(v) => ParameterValue::DoubleArray(v),
    }
}

/// r2r's value as ours, or the error naming parameter `name` of `ik_node`
/// when ours has no such type (arrays other than of doubles, not set).
pub fn from_ros(name: &str, v: &ParameterValue) -> Result<ParamValue, ParamError> {
    from_ros_in::<NodeParams>(name, v)
}

/// [`from_ros`] for the parameters of table `T`.
fn from_ros_in<T: ParamTable>(name: &str, v: &ParameterValue) -> Result<ParamValue, ParamError> {
    Ok(match v {
        ParameterValue::Bool(b) => ParamValue::Bool(*b),
        ParameterValue::Integer(i) => ParamValue::Integer(*i),
        ParameterValue::Double(x) => ParamValue::Double(*x),
        ParameterValue::String(s) => ParamValue::String(s.clone()),
        ParameterValue::DoubleArray(v) => ParamValue::DoubleArray(v.clone()),
        other => {
            let spec =
                T::specs()
                    .iter()
                    .find(|s| s.name == name)
                    .ok_or_else(|| ParamError::Unknown {
                        name: name.to_owned(),
                    })?;
            let mut got = format!("a value of type {}", other.type_name());
            if let ParameterValue::IntegerArray(_) = other {
                got.push_str(&format!(" ({})", ParamError::WRITE_DOUBLES));
            }
            return Err(ParamError::wrong_type(spec.name, spec.kind, &got));
        }
    })
}

/// r2r's error for ours, so `ros2 param set` shows why.
fn ros_error(e: ParamError) -> r2r::Error {
    match e {
        ParamError::Unknown { name } => r2r::Error::InvalidParameterName { name },
        ParamError::WrongType { name, why } => r2r::Error::ParameterValueConv {
            name: name.to_owned(),
            msg: why,
        },
    }
}

/// Declares every parameter of table `T` in r2r's map, after applying
/// the value given at start (`--ros-args -p`, a parameter file), as the
/// derived impl does; parameters of the node's map that are not ours are
/// left alone.
fn register<T: ParamTable>(
    table: &mut T,
    prefix: &str,
    params: &mut IndexMap<String, Parameter>,
) -> r2r::Result<()> {
    for spec in T::specs() {
        let key = if prefix.is_empty() {
            spec.name.to_owned()
        } else {
            format!("{prefix}.{}", spec.name)
        };
        if let Some(given) = params.shift_remove(&key) {
            set_in(table, spec.name, &given.value)?;
        }
        let value = to_ros(table.value(spec.name).map_err(ros_error)?);
        params.insert(
            key,
            Parameter {
                value,
                description: spec.description(),
            },
        );
    }
    Ok(())
}

/// Sets one parameter of table `T` from r2r's value.
fn set_in<T: ParamTable>(table: &mut T, name: &str, v: &ParameterValue) -> r2r::Result<()> {
    let value = from_ros_in::<T>(name, v).map_err(ros_error)?;
    table.assign(name, value).map_err(ros_error)
}

/// r2r's `RosParams` for a node's parameter table, through [`register`]
/// and [`set_in`].
macro_rules! ros_params {
    ($T:ty) => {
        impl RosParams for $T {
            fn register_parameters(
                &mut self,
                prefix: &str,
                _param: Option<Parameter>,
                params: &mut IndexMap<String, Parameter>,
            ) -> r2r::Result<()> {
                register(self, prefix, params)
            }

            fn get_parameter(&mut self, param_name: &str) -> r2r::Result<ParameterValue> {
                self.value(param_name).map(to_ros).map_err(ros_error)
            }

            fn set_parameter(
                &mut self,
                param_name: &str,
                param_val: &ParameterValue,
            ) -> r2r::Result<()> {
                set_in(self, param_name, param_val)
            }

            fn check_parameter(
                &self,
                param_name: &str,
                param_val: &ParameterValue,
            ) -> r2r::Result<()> {
                self.clone().set_parameter(param_name, param_val)
            }
        }
    };
}

ros_params!(NodeParams);
ros_params!(LeaderParams);

/// r2r's error for a refused live change; `ros2 param set` prints it.
fn live_error(e: LiveError) -> r2r::Error {
    match e {
        LiveError::Param(e) => ros_error(e),
        other => r2r::Error::ParameterValueConv {
            name: other.name().to_owned(),
            msg: other.to_string(),
        },
    }
}

impl RosParams for LiveParams {
    /// Declares the parameters as [`NodeParams`] does; only at start, so
    /// every value given is taken as is (checked when the node reads them).
    fn register_parameters(
        &mut self,
        prefix: &str,
        param: Option<Parameter>,
        params: &mut IndexMap<String, Parameter>,
    ) -> r2r::Result<()> {
        let mut p = self.params().clone();
        p.register_parameters(prefix, param, params)?;
        *self = LiveParams::new(p);
        Ok(())
    }

    fn get_parameter(&mut self, param_name: &str) -> r2r::Result<ParameterValue> {
        self.params().get(param_name).map(to_ros).map_err(ros_error)
    }

    fn set_parameter(&mut self, param_name: &str, param_val: &ParameterValue) -> r2r::Result<()> {
        let value = from_ros(param_name, param_val).map_err(ros_error)?;
        self.set(param_name, value).map_err(live_error)
    }

    fn check_parameter(&self, param_name: &str, param_val: &ParameterValue) -> r2r::Result<()> {
        self.clone().set_parameter(param_name, param_val)
    }
}
