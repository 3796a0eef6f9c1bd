//! Program files: read, and checked against the robot before anything
//! moves (every joint known and inside its limits, every pose in the
//! poses file, a gripper when a step uses one, finite numbers), each
//! refusal naming the file, the step and what is wrong.

use crate::model::Chain;
use crate::node::joints::JointLayout;
use crate::node::poses::{Poses, valid_name};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use thiserror::Error;

/// A program that cannot be used, and exactly why.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ProgramError {
    #[error("program {path}: {detail}")]
    Unreadable { path: String, detail: String },
    #[error(
        "program {path}: {detail} (expected a list of steps: pose, target, joints, gripper or wait)"
    )]
    NotProgram { path: String, detail: String },
    #[error(
        "program {path}: the name '{name}' (the file's name) must be letters, digits and underscores, starting with a letter"
    )]
    BadName { path: String, name: String },
    #[error("program {path}: two programs are called '{name}'")]
    Twice { path: String, name: String },
    #[error("program {path}: step {step}: {why}")]
    Step {
        path: String,
        step: usize,
        why: String,
    },
}

/// A tip target step.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetStep {
    /// Metres, in the chain's base frame.
    pub position: [f64; 3],
    /// Quaternion `x, y, z, w`; none for a position-only target.
    #[serde(default)]
    pub orientation: Option<[f64; 4]>,
}

/// Where a gripper step sends the gripper.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GripperGoal {
    Open,
    Close,
    Position(f64),
}

/// A checked step.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Pose(String),
    Target(TargetStep),
    /// (axis, position) pairs.
    Joints(Vec<(usize, f64)>),
    Gripper(GripperGoal),
    Wait(f64),
}

impl Step {
    /// The step as a person reads it in a message.
    pub fn describe(&self) -> String {
        match self {
            Step::Pose(name) => format!("pose '{name}'"),
            Step::Target(t) => {
                let [x, y, z] = t.position;
                format!("target ({x:.3}, {y:.3}, {z:.3}) m")
            }
            Step::Joints(j) => format!("joints, {} of them", j.len()),
            Step::Gripper(GripperGoal::Open) => "gripper open".into(),
            Step::Gripper(GripperGoal::Close) => "gripper close".into(),
            Step::Gripper(GripperGoal::Position(p)) => format!("gripper to {p}"),
            Step::Wait(s) => format!("wait {s} s"),
        }
    }
}

/// A step as written: a mapping with one of these keys.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StepText {
    pose: Option<String>,
    target: Option<TargetStep>,
    joints: Option<BTreeMap<String, f64>>,
    gripper: Option<GripperText>,
    wait: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum GripperText {
    Position(f64),
    Word(String),
}

/// A program checked against the robot, named by its file.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    pub name: String,
    pub steps: Vec<Step>,
}

/// What a program's steps may use on a robot.
pub struct RobotView<'a> {
    pub chain: &'a Chain,
    pub poses: &'a Poses,
    pub has_gripper: bool,
}

impl Program {
    /// Reads the program at `path`, named by the file's stem, and checks
    /// it against `robot`.
    pub fn load(path: &Path, robot: &RobotView) -> Result<Program, ProgramError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ProgramError::Unreadable {
            path: shown.clone(),
            detail: e.to_string(),
        })?;
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Program::parse(&text, &name, &shown, robot)
    }

    /// The program `name` from YAML `text` (`path` names it in errors).
    pub fn parse(
        text: &str,
        name: &str,
        path: &str,
        robot: &RobotView,
    ) -> Result<Program, ProgramError> {
        if !valid_name(name) {
            return Err(ProgramError::BadName {
                path: path.into(),
                name: name.into(),
            });
        }
        let written: Vec<StepText> =
            serde_norway::from_str(text).map_err(|e| ProgramError::NotProgram {
                path: path.into(),
                detail: e.to_string(),
            })?;
        if written.is_empty() {
            return Err(ProgramError::NotProgram {
                path: path.into(),
                detail: "no steps".into(),
            });
        }
        let layout = JointLayout::new(robot.chain);
        let steps = written
            .into_iter()
            .enumerate()
            .map(|(k, s)| {
                check(s, robot, &layout).map_err(|why| ProgramError::Step {
                    path: path.into(),
                    step: k + 1,
                    why,
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(Program {
            name: name.into(),
            steps,
        })
    }
}

fn finite(what: &str, x: f64) -> Result<f64, String> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(format!("{what} {x} is not a finite number"))
    }
}

fn check(s: StepText, robot: &RobotView, layout: &JointLayout) -> Result<Step, String> {
    let given = [
        s.pose.is_some(),
        s.target.is_some(),
        s.joints.is_some(),
        s.gripper.is_some(),
        s.wait.is_some(),
    ];
    if given.iter().filter(|&&g| g).count() != 1 {
        return Err("give exactly one of pose, target, joints, gripper or wait".into());
    }
    if let Some(name) = s.pose {
        return pose(name, robot);
    }
    if let Some(t) = s.target {
        for x in t.position.iter().chain(t.orientation.iter().flatten()) {
            finite("target value", *x)?;
        }
        return Ok(Step::Target(t));
    }
    if let Some(joints) = s.joints {
        return joints_step(joints, robot, layout);
    }
    if let Some(g) = s.gripper {
        if !robot.has_gripper {
            return Err("a gripper step, but the robot has no gripper".into());
        }
        return Ok(Step::Gripper(match g {
            GripperText::Word(w) if w == "open" => GripperGoal::Open,
            GripperText::Word(w) if w == "close" => GripperGoal::Close,
            GripperText::Word(w) => {
                return Err(format!("gripper '{w}': expected open, close or a position"));
            }
            GripperText::Position(p) => GripperGoal::Position(finite("gripper", p)?),
        }));
    }
    let s = s.wait.unwrap_or_default();
    if !(s.is_finite() && s >= 0.0) {
        return Err(format!("wait {s}: not a duration in seconds"));
    }
    Ok(Step::Wait(s))
}

fn pose(name: String, robot: &RobotView) -> Result<Step, String> {
    if robot.poses.get(&name).is_none() {
        let known: Vec<&str> = robot.poses.names().collect();
        return Err(if known.is_empty() {
            format!("pose '{name}', but no poses file was given")
        } else {
            format!("no pose '{name}' (the poses are {})", known.join(", "))
        });
    }
    Ok(Step::Pose(name))
}

fn joints_step(
    joints: BTreeMap<String, f64>,
    robot: &RobotView,
    layout: &JointLayout,
) -> Result<Step, String> {
    if joints.is_empty() {
        return Err("joints: none given".into());
    }
    let mut axes = Vec::with_capacity(joints.len());
    for (joint, value) in joints {
        let axis = layout.axis(&joint).ok_or_else(|| {
            format!(
                "no joint '{joint}' is moved by the node (those are: {})",
                layout.names()[..layout.axes()].join(", ")
            )
        })?;
        let l = layout.limits(robot.chain, axis);
        let value = finite(&format!("joint '{joint}'"), value)?;
        if !l.contains(value) {
            return Err(format!(
                "joint '{joint}' at {value} is outside its limits [{}, {}]",
                l.lower, l.upper
            ));
        }
        axes.push((axis, value));
    }
    Ok(Step::Joints(axes))
}

/// The programs a node serves, by name.
#[derive(Debug, Clone, Default)]
pub struct Programs {
    programs: BTreeMap<String, Arc<Program>>,
}

impl Programs {
    /// Every program of `paths`, checked against `robot`; two with one
    /// name are refused.
    pub fn load<P: AsRef<Path>>(paths: &[P], robot: &RobotView) -> Result<Programs, ProgramError> {
        let mut out = Programs::default();
        for path in paths {
            let p = Program::load(path.as_ref(), robot)?;
            if out.programs.contains_key(&p.name) {
                return Err(ProgramError::Twice {
                    path: path.as_ref().display().to_string(),
                    name: p.name,
                });
            }
            out.programs.insert(p.name.clone(), Arc::new(p));
        }
        Ok(out)
    }

    pub fn get(&self, name: &str) -> Option<&Arc<Program>> {
        self.programs.get(name)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.programs.keys().map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.programs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::poses::PoseFile;

    fn arm() -> Chain {
        Chain::from_urdf_str(include_str!("../../../urdf/arm.urdf"), None, None).unwrap()
    }

    fn parse(text: &str) -> Result<Program, ProgramError> {
        let chain = arm();
        let poses = PoseFile::parse(include_str!("../../../config/poses_arm.yaml"), "poses")
            .unwrap()
            .check(&chain)
            .unwrap();
        let robot = RobotView {
            chain: &chain,
            poses: &poses,
            has_gripper: true,
        };
        Program::parse(text, "pick", "pick.yaml", &robot)
    }

    #[test]
    fn every_kind_of_step_is_read() {
        let p = parse(
            "- pose: home\n- gripper: open\n- gripper: 0.4\n- target: {position: [0.2, 0, 0.1]}\n\
             - joints: {elbow: 1.0}\n- wait: 0.5\n- gripper: close\n",
        )
        .unwrap();
        assert_eq!(p.name, "pick");
        assert_eq!(p.steps.len(), 7);
        assert_eq!(p.steps[2], Step::Gripper(GripperGoal::Position(0.4)));
        assert_eq!(p.steps[4], Step::Joints(vec![(2, 1.0)]));
        assert_eq!(p.steps[5], Step::Wait(0.5));
    }

    #[test]
    fn a_bad_step_is_refused_naming_the_step_and_what_is_wrong() {
        let why = |text: &str| parse(text).unwrap_err().to_string();
        let e = why("- pose: home\n- pose: nope\n");
        assert!(
            e.starts_with("program pick.yaml: step 2: no pose 'nope'"),
            "{e}"
        );
        let e = why("- joints: {elbow: 3.0}\n");
        assert!(
            e.contains("step 1: joint 'elbow' at 3 is outside its limits"),
            "{e}"
        );
        let e = why("- joints: {elbw: 1.0}\n");
        assert!(e.contains("no joint 'elbw'"), "{e}");
        let e = why("- wait: -1\n");
        assert!(e.contains("wait -1"), "{e}");
        let e = why("- jump: 3\n");
        assert!(
            e.contains("jump") && e.contains("expected a list of steps"),
            "{e}"
        );
        let e = why("- target: {position: [0.2, .nan, 0.1]}\n");
        assert!(e.contains("step 1: target value NaN"), "{e}");
    }
}
