//! Numbers in a URDF must be finite. Rust reads `inf`, `-inf`, `nan` and
//! `1e999` as floats; the reference parser (urdfdom, which reads with a C++
//! stream) refuses them, so a robot that loads here would not load in ROS.
//! Worse, an infinite joint limit would quietly make a revolute joint turn
//! without bound. The check reads the text as written: a bound left out is
//! not an infinite one (URDF 1.0 reads it as 0, URDF 1.2 as "no bound"),
//! so only numbers actually written are judged.

use super::ModelError;
use super::urdf_text::{Item, items};

/// The attributes of `<joint>` and `<link>` contents that hold numbers:
/// (element, attributes).
const NUMERIC: &[(&str, &[&str])] = &[
    ("origin", &["xyz", "rpy", "quat_xyzw"]),
    ("axis", &["xyz"]),
    (
        "limit",
        &[
            "lower",
            "upper",
            "effort",
            "velocity",
            "acceleration",
            "deceleration",
            "jerk",
        ],
    ),
    ("dynamics", &["damping", "friction"]),
    ("mimic", &["multiplier", "offset"]),
    (
        "safety_controller",
        &[
            "soft_lower_limit",
            "soft_upper_limit",
            "k_position",
            "k_velocity",
        ],
    ),
    ("calibration", &["rising", "falling", "reference_position"]),
    ("mass", &["value"]),
    ("inertia", &["ixx", "ixy", "ixz", "iyy", "iyz", "izz"]),
    ("box", &["size"]),
    ("cylinder", &["radius", "length"]),
    ("capsule", &["radius", "length"]),
    ("sphere", &["radius"]),
    ("mesh", &["scale"]),
    ("color", &["rgba"]),
];

/// The largest joint offset or limit (m or rad): a thousand kilometres,
/// or a hundred and fifty thousand turns. Beyond it a number is no
/// robot's, and a few of them (`1e308`) overflow forward kinematics into
/// infinity: "position error inf m".
pub(crate) const MAX_JOINT_NUMBER: f64 = 1e6;

/// The joint attributes that place the chain, held to
/// [`MAX_JOINT_NUMBER`]: (element, attributes).
const BOUNDED: &[(&str, &[&str])] = &[("origin", &["xyz"]), ("limit", &["lower", "upper"])];

/// The first number written as a non-finite value inside a top-level
/// `<joint>` or `<link>`, or a joint offset or limit beyond
/// [`MAX_JOINT_NUMBER`], as an error naming it and the attribute.
pub(crate) fn refuse_non_finite(xml: &str, source: &str) -> Result<(), ModelError> {
    // Element names from <robot> down to the current element.
    let mut path: Vec<&str> = Vec::new();
    // The joint or link being read: (kind, name).
    let mut owner: Option<(&'static str, &str)> = None;
    for item in items(xml) {
        match item {
            Item::Open(tag) => {
                path.push(tag.name);
                if path.len() == 2 {
                    owner = match tag.name {
                        "joint" => Some(("joint", tag.attr("name").unwrap_or(""))),
                        "link" => Some(("link", tag.attr("name").unwrap_or(""))),
                        _ => None,
                    };
                }
                let Some((kind, name)) = owner else { continue };
                let Some((_, attrs)) = NUMERIC.iter().find(|(e, _)| *e == tag.name) else {
                    continue;
                };
                for (attr, value) in &tag.attrs {
                    if !attrs.contains(attr) {
                        continue;
                    }
                    let mut field = path[2..].join(" ");
                    field.push(' ');
                    field.push_str(attr);
                    if !all_finite(value) {
                        return Err(ModelError::NonFinite {
                            source_name: source.to_owned(),
                            kind,
                            name: name.to_owned(),
                            field,
                            value: value.to_string(),
                            line: tag.line,
                        });
                    }
                    // Directly in the <joint>: robot, joint, element.
                    let placed = path.len() == 3
                        && BOUNDED
                            .iter()
                            .any(|(e, a)| *e == tag.name && a.contains(attr));
                    if kind == "joint" && placed && !all_within(value, MAX_JOINT_NUMBER) {
                        return Err(ModelError::TooLarge {
                            source_name: source.to_owned(),
                            joint: name.to_owned(),
                            field,
                            value: value.to_string(),
                            line: tag.line,
                            max: MAX_JOINT_NUMBER,
                        });
                    }
                }
            }
            Item::Close => {
                path.pop();
                if path.len() < 2 {
                    owner = None;
                }
            }
            Item::Text(..) => {}
        }
    }
    Ok(())
}

/// False when a whitespace-separated token reads as a float that is not
/// finite. Tokens that are not numbers at all are left to `urdf-rs`, whose
/// error names them.
fn all_finite(value: &str) -> bool {
    value
        .split_whitespace()
        .all(|t| t.parse::<f64>().map_or(true, f64::is_finite))
}

/// False when a whitespace-separated token reads as a number larger than
/// `max` in size.
fn all_within(value: &str, max: f64) -> bool {
    value
        .split_whitespace()
        .all(|t| t.parse::<f64>().map_or(true, |x| x.abs() <= max))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(xml: &str) -> String {
        refuse_non_finite(xml, "r.urdf").unwrap_err().to_string()
    }

    #[test]
    fn written_non_finite_numbers_are_named_with_joint_or_link_and_attribute() {
        let e = err(
            "<robot>\n<joint name=\"elbow\" type=\"revolute\">\n<limit lower=\"-inf\" upper=\"1\"/></joint></robot>",
        );
        assert!(
            e.contains("joint 'elbow'") && e.contains("limit lower") && e.contains("-inf"),
            "{e}"
        );
        assert!(e.contains("line 3"), "{e}");
        let e = err(
            "<robot><link name=\"l\"><inertial><origin xyz=\"0 0 1e999\"/></inertial></link></robot>",
        );
        assert!(
            e.contains("link 'l'") && e.contains("inertial origin xyz"),
            "{e}"
        );
        let e = err(
            "<robot><link name=\"l\"><visual><geometry><mesh scale=\"1 NaN 1\"/></geometry></visual></link></robot>",
        );
        assert!(e.contains("visual geometry mesh scale"), "{e}");
    }

    /// Offsets and limits that overflow forward kinematics are refused;
    /// the same numbers elsewhere (a link's inertia) are not judged.
    #[test]
    fn joint_offsets_and_limits_of_no_robot_are_refused() {
        let e = err(
            "<robot>\n<joint name=\"elbow\" type=\"revolute\">\n<origin xyz=\"1e308 0 0\"/></joint></robot>",
        );
        assert!(
            e.contains("joint 'elbow'") && e.contains("origin xyz") && e.contains("line 3"),
            "{e}"
        );
        assert!(e.contains("overflow"), "{e}");
        let e = err("<robot><joint name=\"j\"><limit lower=\"-2e6\" upper=\"1\"/></joint></robot>");
        assert!(e.contains("limit lower"), "{e}");
        let ok = "<robot><link name=\"l\"><inertial><inertia ixx=\"1e9\"/></inertial></link><joint name=\"j\"><origin xyz=\"1000 0 0\"/></joint></robot>";
        assert!(refuse_non_finite(ok, "r").is_ok());
    }

    #[test]
    fn missing_bounds_names_and_other_elements_are_not_judged() {
        let ok = [
            "<robot><joint name=\"j\"><limit upper=\"1\" effort=\"1\" velocity=\"1\"/></joint></robot>",
            "<robot><link name=\"inf\"/><joint name=\"nan\"><origin xyz=\"0 0 0\"/></joint></robot>",
            "<robot><transmission name=\"t\"><joint name=\"j\"><origin xyz=\"inf 0 0\"/></joint></transmission></robot>",
            "<robot><joint name=\"j\"><origin xyz=\"0 0 ${x}\"/></joint></robot>",
        ];
        for xml in ok {
            assert!(refuse_non_finite(xml, "r").is_ok(), "{xml}");
        }
    }
}
