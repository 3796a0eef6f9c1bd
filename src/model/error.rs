//! Errors raised while turning a URDF into a kinematic chain.
//!
//! Every variant names where the URDF came from (`source`: a file path or
//! `robot_description`) and the link or joint at fault, so a user with a
//! 2000-line vendor URDF can go straight to the line that needs fixing.

use thiserror::Error;

/// Why a URDF could not be turned into a chain.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ModelError {
    #[error("{source_name}: cannot read the URDF file: {detail}")]
    Unreadable { source_name: String, detail: String },

    #[error("{source_name}: not a URDF document: {detail}")]
    NotUrdf { source_name: String, detail: String },

    #[error("{source_name}: the robot has no links")]
    Empty { source_name: String },

    #[error("{source_name}: no link named '{name}' (asked for as the {role} link){}", suggest(.suggestions))]
    NoSuchLink {
        source_name: String,
        name: String,
        role: &'static str,
        suggestions: Vec<String>,
    },

    #[error("{source_name}: two {kind}s are named '{name}'; names must be unique")]
    DuplicateName {
        source_name: String,
        kind: &'static str,
        name: String,
    },

    #[error("{source_name}: joint '{joint}' refers to link '{link}', which is not defined")]
    DanglingJoint {
        source_name: String,
        joint: String,
        link: String,
    },

    #[error("{source_name}: no path from base link '{base}' down to tip link '{tip}'{}", hint_suffix(.hint))]
    NoPath {
        source_name: String,
        base: String,
        tip: String,
        hint: String,
    },

    #[error("{source_name}: base link '{base}' has several leaf links below it ({}); choose one as the tip link", .leaves.join(", "))]
    AmbiguousTip {
        source_name: String,
        base: String,
        leaves: Vec<String>,
    },

    #[error("{source_name}: joint '{joint}' has a zero-length axis ({x} {y} {z})")]
    ZeroAxis {
        source_name: String,
        joint: String,
        x: f64,
        y: f64,
        z: f64,
    },

    /// A number written as `inf`, `nan` or beyond the range of a float.
    #[error(
        "{source_name}: {kind} '{name}' has a non-finite {field}: \"{value}\" (line {line}); URDF numbers must be finite, as ROS's URDF parser requires{}",
        unbounded_hint(.field)
    )]
    NonFinite {
        source_name: String,
        /// `joint` or `link`.
        kind: &'static str,
        name: String,
        /// The element path below the joint or link and the attribute,
        /// e.g. `limit lower` or `inertial origin xyz`.
        field: String,
        /// The attribute as written.
        value: String,
        line: usize,
    },

    /// A joint's offset or limit so large that forward kinematics
    /// overflows (`1e308`): finite, but no robot's.
    #[error(
        "{source_name}: joint '{joint}' has {field} \"{value}\" (line {line}): beyond {max:e} (m or rad), no robot's size, and large enough to overflow forward kinematics into infinity"
    )]
    TooLarge {
        source_name: String,
        joint: String,
        /// `origin xyz`, `limit lower` or `limit upper`.
        field: String,
        /// The attribute as written.
        value: String,
        line: usize,
        max: f64,
    },

    #[error("{source_name}: unexpanded xacro, not URDF ({sign}): {}", xacro_hint(.file))]
    UnexpandedXacro {
        source_name: String,
        /// What gave it away, with its line.
        sign: String,
        /// The file, when the text came from one.
        file: Option<String>,
    },

    #[error(
        "{source_name}: joint '{joint}' is {kind} but has no <limit> element (only continuous joints may omit it)"
    )]
    MissingLimit {
        source_name: String,
        joint: String,
        kind: &'static str,
    },

    #[error("{source_name}: joint '{joint}' has lower limit {lower} above upper limit {upper}")]
    InvertedLimits {
        source_name: String,
        joint: String,
        lower: f64,
        upper: f64,
    },

    #[error("{source_name}: the links form a loop, URDF must be a tree: {}", .cycle.join(" -> "))]
    Loop {
        source_name: String,
        cycle: Vec<String>,
    },

    #[error(
        "{source_name}: link '{link}' is the child of two joints ('{first}' and '{second}'); URDF must be a tree"
    )]
    TwoParents {
        source_name: String,
        link: String,
        first: String,
        second: String,
    },

    #[error("{source_name}: several root links ({}): the robot is not connected", .roots.join(", "))]
    SeveralRoots {
        source_name: String,
        roots: Vec<String>,
    },

    #[error(
        "{source_name}: joint '{joint}' on the chain is of type {kind}, which arm_ik does not solve for"
    )]
    UnsupportedJoint {
        source_name: String,
        joint: String,
        kind: String,
    },

    #[error(
        "{source_name}: joint '{joint}' on the chain mimics '{master}'; mimic joints inside the chain are not supported (put the tip before it)"
    )]
    MimicInChain {
        source_name: String,
        joint: String,
        master: String,
    },

    #[error(
        "{source_name}: joint '{joint}' mimics '{leader}', which is not a moving joint of the robot that follows no other"
    )]
    BadMimic {
        source_name: String,
        joint: String,
        leader: String,
    },

    #[error("{source_name}: the chain from '{base}' to '{tip}' has no moving joint")]
    NoMovingJoint {
        source_name: String,
        base: String,
        tip: String,
    },
}

fn suggest(s: &[String]) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!(
            "; did you mean {}?",
            s.iter()
                .map(|n| format!("'{n}'"))
                .collect::<Vec<_>>()
                .join(" or ")
        )
    }
}

fn hint_suffix(h: &str) -> String {
    if h.is_empty() {
        String::new()
    } else {
        format!(": {h}")
    }
}

fn unbounded_hint(field: &str) -> &'static str {
    if field == "limit lower" || field == "limit upper" {
        "; a joint that turns without bounds is type=\"continuous\""
    } else {
        ""
    }
}

/// How to expand xacro, for a file or for `robot_description` text.
fn xacro_hint(file: &Option<String>) -> String {
    match file {
        Some(f) => format!(
            "expand it first with `xacro {f} > robot.urdf` (with ROS 2 sourced: `ros2 run xacro xacro {f} > robot.urdf`) and give robot.urdf"
        ),
        None => "expand the xacro before it becomes robot_description: `xacro robot.urdf.xacro > robot.urdf` (with ROS 2 sourced: `ros2 run xacro xacro robot.urdf.xacro > robot.urdf`), or in a launch file `Command(['xacro ', path])`".into(),
    }
}
