//! What a ROS parameter of the node is, without ROS: its value type, its
//! declaration (name, type, description, allowed values, whether it can
//! change at run time), and the macro that turns one table of
//! declarations into the [`NodeParams`](super::NodeParams) struct, its
//! defaults, get/set by name and the schema, so none of them can drift
//! from the others.

use serde::Serialize;
use std::fmt;

/// The ROS parameter types the node uses: the four scalars, and a double
/// array for what is a vector (`tool_axis`); a list of names is one
/// comma-separated string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamType {
    Bool,
    Integer,
    Double,
    String,
    DoubleArray,
}

impl ParamType {
    /// As ROS names it (`ros2 param describe`, the table in docs/ros.md).
    pub fn name(self) -> &'static str {
        match self {
            ParamType::Bool => "bool",
            ParamType::Integer => "integer",
            ParamType::Double => "double",
            ParamType::String => "string",
            ParamType::DoubleArray => "double array",
        }
    }
}

impl Serialize for ParamType {
    /// By its [name](ParamType::name), as the docs' table spells it.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl fmt::Display for ParamType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A parameter value, typed as ROS types it: `50` is an integer and `50.0`
/// a double, and a double parameter takes only the latter.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    Bool(bool),
    Integer(i64),
    Double(f64),
    String(String),
    DoubleArray(Vec<f64>),
}

impl ParamValue {
    pub fn kind(&self) -> ParamType {
        match self {
            ParamValue::Bool(_) => ParamType::Bool,
            ParamValue::Integer(_) => ParamType::Integer,
            ParamValue::Double(_) => ParamType::Double,
            ParamValue::String(_) => ParamType::String,
            ParamValue::DoubleArray(_) => ParamType::DoubleArray,
        }
    }
}

impl fmt::Display for ParamValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Integer(i) => write!(f, "{i}"),
            ParamValue::Double(x) => write!(f, "{x:?}"),
            ParamValue::String(s) => write!(f, "{s:?}"),
            ParamValue::DoubleArray(v) => {
                let items: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
                write!(f, "[{}]", items.join(", "))
            }
        }
    }
}

/// A parameter that was refused before its value was looked at.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamError {
    #[error("no parameter '{name}' (`arm_ik params` lists them)")]
    Unknown { name: String },
    #[error("{name}: {why}")]
    WrongType { name: &'static str, why: String },
}

impl ParamError {
    /// How to write numbers where a list of them arrived with integers
    /// (a parameter file's YAML list, `ros2 param set` with `[1, 0, 0]`):
    /// one wording for both front-ends.
    pub const WRITE_DOUBLES: &'static str =
        "write each number as a double, 1.0 not 1: ROS parameters are typed";

    /// `got` (e.g. "the integer 50", "a list") where an `expected` value
    /// belongs; an integer for a double says how to write it.
    pub fn wrong_type(name: &'static str, expected: ParamType, got: &str) -> ParamError {
        ParamError::WrongType {
            name,
            why: format!("must be a {expected}, not {got}"),
        }
    }

    fn mismatch(name: &'static str, expected: ParamType, got: &ParamValue) -> ParamError {
        let mut e = ParamError::wrong_type(name, expected, &format!("the {} {got}", got.kind()));
        if let (ParamType::Double, ParamValue::Integer(i), ParamError::WrongType { why, .. }) =
            (expected, got, &mut e)
        {
            why.push_str(&format!(" (write {i}.0: ROS parameters are typed)"));
        }
        e
    }

    /// The parameter's name as given.
    pub fn name(&self) -> &str {
        match self {
            ParamError::Unknown { name } => name,
            ParamError::WrongType { name, .. } => name,
        }
    }
}

/// A Rust field type that holds one ROS parameter type.
pub trait ParamField: Sized {
    const KIND: ParamType;
    fn into_value(self) -> ParamValue;
    /// The value back when it has another type.
    fn from_value(v: ParamValue) -> Result<Self, ParamValue>;

    /// [`ParamField::from_value`], refused with the parameter named.
    fn from_param(name: &'static str, v: ParamValue) -> Result<Self, ParamError> {
        Self::from_value(v).map_err(|v| ParamError::mismatch(name, Self::KIND, &v))
    }
}

macro_rules! param_field {
    ($ty:ty, $variant:ident) => {
        impl ParamField for $ty {
            const KIND: ParamType = ParamType::$variant;
            fn into_value(self) -> ParamValue {
                ParamValue::$variant(self)
            }
            fn from_value(v: ParamValue) -> Result<Self, ParamValue> {
                match v {
                    ParamValue::$variant(x) => Ok(x),
                    other => Err(other),
                }
            }
        }
    };
}
param_field!(bool, Bool);
param_field!(i64, Integer);
param_field!(f64, Double);
param_field!(String, String);
param_field!(Vec<f64>, DoubleArray);

/// One parameter's declaration.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamType,
    /// The doc line of the field, as written.
    pub doc: &'static str,
    /// Whether the node can apply a new value while it runs (solver
    /// options, tolerances, limits) or only at start (robot, chain, servo
    /// output).
    pub live: bool,
    /// The closed set of values, where there is one.
    pub allowed: fn() -> Vec<&'static str>,
}

impl ParamSpec {
    /// The description ROS shows (`ros2 param describe`).
    pub fn description(&self) -> &'static str {
        self.doc.trim()
    }
}

/// For parameters without a closed set of values.
pub fn any_value() -> Vec<&'static str> {
    Vec::new()
}

/// One row of the schema, as `arm_ik params --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParamInfo {
    pub name: &'static str,
    #[serde(rename = "type")]
    pub kind: ParamType,
    pub default: ParamValue,
    pub description: &'static str,
    /// Empty when any value of the type may do.
    pub allowed: Vec<&'static str>,
    pub live: bool,
}

/// What every declared parameter table offers (`declare_params!` makes
/// it): the front-ends (r2r's parameters, `arm_ik params`) handle any
/// node's table through it.
pub trait ParamTable: Clone {
    /// The node these are the parameters of.
    const NODE: &'static str;
    /// Every parameter, in declaration order.
    fn specs() -> &'static [ParamSpec];
    /// The value of the parameter called `name`.
    fn value(&self, name: &str) -> Result<ParamValue, ParamError>;
    /// Sets the parameter called `name` (of its type).
    fn assign(&mut self, name: &str, value: ParamValue) -> Result<(), ParamError>;
    /// Every parameter with its default.
    fn table() -> Vec<ParamInfo>;
}

/// Declares the parameter struct of one node (`pub struct Name for
/// "node_name"`) from one table: per field its one-line
/// doc (the ROS description), name, type (`String`, `f64`, `i64`,
/// `bool` or `Vec<f64>`), default, whether it is live, and optionally the function
/// listing its allowed values.
macro_rules! declare_params {
    (@allowed) => { $crate::node::params::table::any_value };
    (@allowed $f:expr) => { $f };
    (
        $(#[$meta:meta])*
        pub struct $Struct:ident for $node:literal {
            $(
                #[doc = $doc:literal]
                $name:ident : $ty:ty = $default:expr, live: $live:literal
                    $(, allowed: $allowed:expr)? ;
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $Struct {
            $( #[doc = $doc] pub $name: $ty, )*
        }

        impl Default for $Struct {
            fn default() -> Self {
                $Struct { $( $name: $default, )* }
            }
        }

        impl $Struct {
            /// Every parameter, in declaration order.
            pub const SPECS: &'static [$crate::node::params::table::ParamSpec] = &[$(
                $crate::node::params::table::ParamSpec {
                    name: stringify!($name),
                    kind: <$ty as $crate::node::params::table::ParamField>::KIND,
                    doc: $doc,
                    live: $live,
                    allowed: declare_params!(@allowed $($allowed)?),
                },
            )*];

            /// The declaration of the parameter called `name`.
            pub fn spec(name: &str) -> Option<&'static $crate::node::params::table::ParamSpec> {
                Self::SPECS.iter().find(|s| s.name == name)
            }

            /// Every parameter with its default, as `arm_ik params` prints it.
            pub fn schema() -> Vec<$crate::node::params::table::ParamInfo> {
                let defaults = Self::default();
                Self::SPECS
                    .iter()
                    .map(|s| $crate::node::params::table::ParamInfo {
                        name: s.name,
                        kind: s.kind,
                        default: defaults.get(s.name).expect("every declared name has a field"),
                        description: s.description(),
                        allowed: (s.allowed)(),
                        live: s.live,
                    })
                    .collect()
            }

            /// The value of the parameter called `name`.
            pub fn get(&self, name: &str) -> Result<
                $crate::node::params::table::ParamValue,
                $crate::node::params::table::ParamError,
            > {
                use $crate::node::params::table::ParamField as _;
                match name {
                    $( stringify!($name) => Ok(self.$name.clone().into_value()), )*
                    _ => Err($crate::node::params::table::ParamError::Unknown {
                        name: name.to_owned(),
                    }),
                }
            }

            /// Sets the parameter called `name`; a value of another type
            /// is refused, naming the parameter. Values are checked when
            /// the settings are made from the parameters.
            pub fn set(
                &mut self,
                name: &str,
                value: $crate::node::params::table::ParamValue,
            ) -> Result<(), $crate::node::params::table::ParamError> {
                use $crate::node::params::table::ParamField as _;
                match name {
                    $( stringify!($name) => {
                        self.$name = <$ty>::from_param(stringify!($name), value)?;
                        Ok(())
                    } )*
                    _ => Err($crate::node::params::table::ParamError::Unknown {
                        name: name.to_owned(),
                    }),
                }
            }
        }

        impl $crate::node::params::table::ParamTable for $Struct {
            const NODE: &'static str = $node;
            fn specs() -> &'static [$crate::node::params::table::ParamSpec] {
                Self::SPECS
            }
            fn value(&self, name: &str) -> Result<
                $crate::node::params::table::ParamValue,
                $crate::node::params::table::ParamError,
            > {
                self.get(name)
            }
            fn assign(
                &mut self,
                name: &str,
                value: $crate::node::params::table::ParamValue,
            ) -> Result<(), $crate::node::params::table::ParamError> {
                self.set(name, value)
            }
            fn table() -> Vec<$crate::node::params::table::ParamInfo> {
                Self::schema()
            }
        }
    };
}
pub(crate) use declare_params;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_integer_for_a_double_says_how_to_write_it() {
        let e = f64::from_param("rate_hz", ParamValue::Integer(50)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "rate_hz: must be a double, not the integer 50 (write 50.0: ROS parameters are typed)"
        );
        let e = bool::from_param("sim", ParamValue::String("yes".into())).unwrap_err();
        assert_eq!(e.to_string(), "sim: must be a bool, not the string \"yes\"");
        assert_eq!(e.name(), "sim");
        assert_eq!(f64::from_param("x", ParamValue::Double(0.5)), Ok(0.5));
    }

    #[test]
    fn values_serialise_as_their_json_type() {
        let v = [
            ParamValue::Double(5.0),
            ParamValue::Integer(0),
            ParamValue::Bool(true),
            ParamValue::String(String::new()),
            ParamValue::DoubleArray(vec![1.0, 0.0, 0.0]),
        ];
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"[5.0,0,true,"",[1.0,0.0,0.0]]"#
        );
        assert_eq!(v[4].to_string(), "[1.0, 0.0, 0.0]");
        assert_eq!(
            serde_json::to_string(&ParamType::DoubleArray).unwrap(),
            r#""double array""#
        );
        let e = Vec::<f64>::from_param("tool_axis", ParamValue::String("1,0,0".into()));
        assert_eq!(
            e.unwrap_err().to_string(),
            "tool_axis: must be a double array, not the string \"1,0,0\""
        );
    }
}
