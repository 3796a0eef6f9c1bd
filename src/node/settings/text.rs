//! Settings as text: how the command line and the ROS string parameters
//! spell solver names, bends, pitches and the lock and clamp lists, parsed
//! by one function each so both front-ends accept the same text.

use super::SettingError;
use crate::ik::{Bend, IkError, SolverKind};
use nalgebra::{Unit, Vector3};
use std::fmt;

/// One joint's narrowed range, `JOINT=MIN:MAX` as written.
#[derive(Debug, Clone, PartialEq)]
pub struct JointClamp {
    pub joint: String,
    pub min: f64,
    pub max: f64,
}

impl fmt::Display for JointClamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}:{}", self.joint, self.min, self.max)
    }
}

/// A joint's weight in the distance the closest mode minimises, as
/// `JOINT=W` (command line, ROS parameter).
#[derive(Debug, Clone, PartialEq)]
pub struct JointWeight {
    pub joint: String,
    pub weight: f64,
}

impl fmt::Display for JointWeight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.joint, self.weight)
    }
}

/// The bend keywords, as the command line and the ROS parameter spell them;
/// a pole point `x,y,z` is the other choice.
pub const BEND_KEYWORDS: [(&str, Bend); 3] = [
    ("closest", Bend::Closest),
    ("positive", Bend::Positive),
    ("negative", Bend::Negative),
];

/// `bend` as the command line and the ROS parameter spell it.
pub fn bend_name(bend: &Bend) -> String {
    match bend {
        Bend::Pole(p) => format!("{},{},{}", p.x, p.y, p.z),
        other => BEND_KEYWORDS
            .iter()
            .find(|(_, b)| b == other)
            .map(|(name, _)| (*name).to_owned())
            .unwrap_or_default(),
    }
}

/// A solver by name, as the command line and the ROS parameter spell it.
/// A redundancy objective's name ([`crate::ik::Redundancy::name`]).
pub fn parse_redundancy(s: &str) -> Result<crate::ik::Redundancy, SettingError> {
    s.trim()
        .parse()
        .map_err(|why: String| SettingError::new("redundancy", format!("'{s}'"), why))
}

/// What a pose target's orientation asks, by name
/// ([`crate::ik::OrientationMode`]): `full`, `axis` or `ignore`.
pub fn parse_orientation(s: &str) -> Result<crate::ik::OrientationMode, SettingError> {
    s.trim()
        .parse()
        .map_err(|why: String| SettingError::new("target_orientation", format!("'{s}'"), why))
}

/// The tool axis of 5D targets (`tool_axis`, with `target_orientation:
/// axis`): three numbers, the axis in the tip frame, any non-zero length
/// (it is normalised). The ROS parameter is a double array, so its length
/// is checked here; zero, NaN and infinity by
/// [`crate::ik::direction_from_xyz`], each refusal naming `tool_axis`.
/// [`crate::ik::OrientationMode::with_tool`] puts it into the mode.
pub fn parse_tool_axis(v: &[f64]) -> Result<Unit<Vector3<f64>>, SettingError> {
    let shown = || format!("{v:?}");
    let xyz: [f64; 3] = v.try_into().map_err(|_| {
        SettingError::new(
            "tool_axis",
            shown(),
            format!(
                "has {} numbers; it needs 3, the axis [x, y, z] in the tip frame",
                v.len()
            ),
        )
    })?;
    crate::ik::direction_from_xyz("tool_axis", xyz).map_err(|e| {
        let why = match e {
            IkError::NonFiniteTarget { .. } => {
                "is not finite; it needs three finite numbers".into()
            }
            IkError::InvalidTarget { why, .. } => why,
            other => other.to_string(),
        };
        SettingError::new("tool_axis", shown(), why)
    })
}

pub fn parse_solver(s: &str) -> Result<SolverKind, SettingError> {
    s.trim().parse().map_err(|_| {
        let names: Vec<_> = SolverKind::ALL.iter().map(|k| k.name()).collect();
        SettingError::new(
            "solver",
            format!("'{s}'"),
            format!("is not one of {}", names.join(", ")),
        )
    })
}

/// A bend keyword ([`BEND_KEYWORDS`]) or a pole point `x,y,z` (m, base
/// frame).
pub fn parse_bend(s: &str) -> Result<Bend, SettingError> {
    s.parse().map_err(|_| {
        let names: Vec<_> = BEND_KEYWORDS.iter().map(|(n, _)| *n).collect();
        SettingError::new(
            "bend",
            format!("'{s}'"),
            format!("is not one of {}, or a pole point x,y,z", names.join(", ")),
        )
    })
}

/// An approach pitch (rad); blank text: the solver chooses.
pub fn parse_pitch(s: &str) -> Result<Option<f64>, SettingError> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(None);
    }
    s.parse().map(Some).map_err(|_| {
        SettingError::new(
            "pitch",
            format!("'{s}'"),
            "is not a number; give an angle (rad), or leave it empty for the solver to choose",
        )
    })
}

/// Joint names from a comma-separated list (`"wrist_roll, elbow"`); empty
/// text is no joint. The ROS parameter `lock` and each `--lock` use this.
pub fn parse_locks(s: &str) -> Result<Vec<String>, SettingError> {
    list_items(s)
        .map(|item| {
            if item.is_empty() {
                Err(SettingError::new(
                    "lock",
                    format!("'{s}'"),
                    "has an empty joint name; expected JOINT[,JOINT...]",
                ))
            } else {
                Ok(item.to_owned())
            }
        })
        .collect()
}

/// Clamps from a comma-separated list (`"shoulder=-0.5:1.0,elbow=0:1"`);
/// empty text is no clamp. The ROS parameter `clamp` and each `--clamp`
/// use this.
pub fn parse_clamps(s: &str) -> Result<Vec<JointClamp>, SettingError> {
    list_items(s).map(|item| parse_clamp(item, s)).collect()
}

/// `JOINT=W,...`: closest-mode weights, each finite and not negative.
pub fn parse_weights(s: &str) -> Result<Vec<JointWeight>, SettingError> {
    list_items(s)
        .map(|item| {
            let bad = |why: String| SettingError::new("closest_weight", format!("'{s}'"), why);
            let (joint, w) = item
                .split_once('=')
                .filter(|(j, _)| !j.trim().is_empty())
                .ok_or_else(|| bad(format!("'{item}': expected JOINT=W")))?;
            let weight = w
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|w| w.is_finite() && *w >= 0.0)
                .ok_or_else(|| {
                    bad(format!(
                        "joint '{}': '{}' is not a weight >= 0",
                        joint.trim(),
                        w.trim()
                    ))
                })?;
            Ok(JointWeight {
                joint: joint.trim().to_owned(),
                weight,
            })
        })
        .collect()
}

/// Items of a comma-separated list, trimmed; none for blank text.
fn list_items(s: &str) -> impl Iterator<Item = &str> {
    let blank = s.trim().is_empty();
    s.split(',').map(str::trim).filter(move |_| !blank)
}

fn parse_clamp(item: &str, whole: &str) -> Result<JointClamp, SettingError> {
    let bad = |why: String| SettingError::new("clamp", format!("'{whole}'"), why);
    let shape = || bad(format!("'{item}': expected JOINT=MIN:MAX"));
    let (joint, range) = item.split_once('=').ok_or_else(shape)?;
    let (lo, hi) = range.split_once(':').ok_or_else(shape)?;
    let num = |s: &str| {
        let s = s.trim();
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| bad(format!("'{item}': '{s}' is not a finite number")))
    };
    let joint = joint.trim();
    if joint.is_empty() {
        return Err(shape());
    }
    Ok(JointClamp {
        joint: joint.to_owned(),
        min: num(lo)?,
        max: num(hi)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_axis_is_three_numbers_of_some_length_and_bad_ones_are_named() {
        let x = parse_tool_axis(&[2.0, 0.0, 0.0]).unwrap();
        assert_eq!(x, Vector3::x_axis());
        for bad in [
            vec![0.0, 0.0, 0.0],
            vec![f64::NAN, 0.0, 1.0],
            vec![0.0, f64::INFINITY, 0.0],
            vec![1.0, 0.0],
            vec![1.0, 0.0, 0.0, 0.0],
            vec![],
        ] {
            let e = parse_tool_axis(&bad).unwrap_err();
            assert_eq!(e.name, "tool_axis", "{bad:?}: {e}");
            assert!(e.to_string().starts_with("tool_axis = ["), "{e}");
        }
        let e = parse_tool_axis(&[0.0; 3]).unwrap_err();
        assert!(e.why.contains("zero"), "{e}");
        let e = parse_tool_axis(&[1.0, 0.0]).unwrap_err();
        assert!(e.why.contains("2 numbers") && e.why.contains("3"), "{e}");
        let e = parse_tool_axis(&[f64::NAN, 0.0, 1.0]).unwrap_err();
        assert!(e.why.contains("not finite"), "{e}");
    }

    #[test]
    fn closest_weights_parse_and_bad_ones_are_named() {
        assert_eq!(parse_weights("").unwrap(), []);
        let w = parse_weights("a=2, b=0").unwrap();
        assert_eq!(
            (w[0].joint.as_str(), w[0].weight, w[1].weight),
            ("a", 2.0, 0.0)
        );
        assert_eq!(w[0].to_string(), "a=2");
        for bad in ["a", "=1", "a=-1", "a=nan", "a=x"] {
            let e = parse_weights(bad).unwrap_err();
            assert_eq!(e.name, "closest_weight", "{bad}: {e}");
        }
    }

    #[test]
    fn lists_parse_and_bad_items_are_named() {
        assert_eq!(parse_locks("").unwrap(), Vec::<String>::new());
        assert_eq!(parse_locks("a, b").unwrap(), ["a", "b"]);
        assert_eq!(parse_locks("a,,b").unwrap_err().name, "lock");
        assert_eq!(parse_clamps("  ").unwrap(), []);
        let c = parse_clamps("shoulder=-0.5:1.0").unwrap();
        assert_eq!(c[0].to_string(), "shoulder=-0.5:1");
        for bad in [
            "shoulder",
            "shoulder=1",
            "=0:1",
            "shoulder=a:1",
            "shoulder=0:nan",
        ] {
            let e = parse_clamps(bad).unwrap_err();
            assert_eq!(e.name, "clamp", "{bad}");
            assert!(e.to_string().contains(bad), "{e}");
        }
    }

    #[test]
    fn names_parse_and_unknown_ones_list_the_choices() {
        assert_eq!(parse_solver(" ccd ").unwrap(), SolverKind::Ccd);
        let e = parse_solver("newton").unwrap_err();
        assert_eq!(e.name, "solver");
        assert!(e.why.contains("jacobian, analytic, ccd, fabrik"), "{e}");
        assert_eq!(parse_bend("negative").unwrap(), Bend::Negative);
        let e = parse_bend("1,2").unwrap_err();
        assert!(e.name == "bend" && e.why.contains("closest"), "{e}");
        assert_eq!(parse_pitch(" ").unwrap(), None);
        assert_eq!(parse_pitch("-0.5").unwrap(), Some(-0.5));
        assert_eq!(parse_pitch("flat").unwrap_err().name, "pitch");
    }

    #[test]
    fn bend_names_round_trip() {
        for (name, bend) in BEND_KEYWORDS {
            assert_eq!(name.parse::<Bend>().unwrap(), bend);
            assert_eq!(bend_name(&bend), name);
        }
        let pole = Bend::Pole(Vector3::new(0.1, -2.0, 0.0));
        assert_eq!(bend_name(&pole).parse::<Bend>().unwrap(), pole);
        assert_eq!(bend_name(&Bend::default()), "closest");
    }
}
