//! Named joint-space poses (`home`, `rest`, ...) from a YAML file, checked
//! against the robot before anything moves.
//!
//! The file maps each pose's name to its joint positions (URDF units):
//!
//! ```yaml
//! home: {base_yaw: 0.0, shoulder: 0.0, elbow: 0.0, wrist_pitch: 0.0, wrist_roll: 0.0}
//! rest: {base_yaw: 0.0, shoulder: -1.2, elbow: 2.0, wrist_pitch: 0.8, wrist_roll: 0.0, gripper: 0.0}
//! ```
//!
//! Every pose names every joint of the chain (a pose is a whole arm
//! pose, never half of one); the actuated joints off the chain (a gripper)
//! are optional and keep their command when left out. Pose names are
//! letters, digits and underscores, so each can be a ROS service name.

pub mod store;

use crate::model::Chain;
use crate::node::joints::JointLayout;
use std::collections::BTreeMap;
use std::path::Path;
use thiserror::Error;

/// A poses file that cannot be used, and exactly why.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum PoseError {
    #[error("poses file {path}: {detail}")]
    Unreadable { path: String, detail: String },
    #[error("poses file {path}: {detail} (expected pose names mapping joint names to positions)")]
    NotPoses { path: String, detail: String },
    #[error("poses file {path}: no pose '{pose}' (every poses file has {})", PoseFile::REQUIRED.join(" and "))]
    Missing { path: String, pose: &'static str },
    #[error(
        "poses file {path}: pose name '{pose}' must be letters, digits and underscores, starting with a letter"
    )]
    BadName { path: String, pose: String },
    #[error("poses file {path}: pose '{pose}': joint '{joint}' is {value}, not a finite number")]
    NotFinite {
        path: String,
        pose: String,
        joint: String,
        value: f64,
    },
    #[error("poses file {path}: pose '{pose}': no joint '{joint}' is moved by the node{hint}")]
    UnknownJoint {
        path: String,
        pose: String,
        joint: String,
        hint: String,
    },
    #[error(
        "poses file {path}: pose '{pose}': joint '{joint}' at {value} is outside its limits [{lower}, {upper}]"
    )]
    OutsideLimits {
        path: String,
        pose: String,
        joint: String,
        value: f64,
        lower: f64,
        upper: f64,
    },
    #[error("poses file {path}: pose '{pose}' does not give {}", .joints.join(", "))]
    MissingJoints {
        path: String,
        pose: String,
        joints: Vec<String>,
    },
}

/// A poses file as read, before it meets the robot: its pose names are
/// known (`ik_node` offers one service per pose before the robot model
/// arrives).
#[derive(Debug, Clone, PartialEq)]
pub struct PoseFile {
    path: String,
    poses: BTreeMap<String, BTreeMap<String, f64>>,
}

/// The poses checked against a robot: each a list of (axis, position).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Poses {
    poses: BTreeMap<String, Vec<(usize, f64)>>,
}

impl PoseFile {
    /// The poses every file must have.
    pub const REQUIRED: [&'static str; 2] = ["home", "rest"];

    pub fn load(path: &Path) -> Result<PoseFile, PoseError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| PoseError::Unreadable {
            path: name.clone(),
            detail: e.to_string(),
        })?;
        PoseFile::parse(&text, &name)
    }

    /// Reads the YAML text; `path` names it in errors.
    pub fn parse(text: &str, path: &str) -> Result<PoseFile, PoseError> {
        let path = path.to_owned();
        let poses: BTreeMap<String, BTreeMap<String, f64>> =
            serde_norway::from_str(text).map_err(|e| PoseError::NotPoses {
                path: path.clone(),
                detail: e.to_string(),
            })?;
        for pose in PoseFile::REQUIRED {
            if !poses.contains_key(pose) {
                return Err(PoseError::Missing { path, pose });
            }
        }
        for (pose, joints) in &poses {
            if !valid_name(pose) {
                return Err(PoseError::BadName {
                    path,
                    pose: pose.clone(),
                });
            }
            if let Some((joint, &value)) = joints.iter().find(|(_, v)| !v.is_finite()) {
                return Err(PoseError::NotFinite {
                    path,
                    pose: pose.clone(),
                    joint: joint.clone(),
                    value,
                });
            }
        }
        Ok(PoseFile { path, poses })
    }

    /// The pose names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.poses.keys().map(String::as_str)
    }

    /// The poses on `chain`: every joint known, moved by the node and
    /// inside its limits, and every chain joint given.
    pub fn check(&self, chain: &Chain) -> Result<Poses, PoseError> {
        let layout = JointLayout::new(chain);
        let mut out = BTreeMap::new();
        for (pose, joints) in &self.poses {
            let mut axes = Vec::with_capacity(joints.len());
            for (joint, &value) in joints {
                let axis = self.axis(&layout, pose, joint)?;
                let l = layout.limits(chain, axis);
                if !l.contains(value) {
                    return Err(PoseError::OutsideLimits {
                        path: self.path.clone(),
                        pose: pose.clone(),
                        joint: joint.clone(),
                        value,
                        lower: l.lower,
                        upper: l.upper,
                    });
                }
                axes.push((axis, value));
            }
            let missing: Vec<String> = chain
                .joints
                .iter()
                .filter(|j| !joints.contains_key(&j.name))
                .map(|j| j.name.clone())
                .collect();
            if !missing.is_empty() {
                return Err(PoseError::MissingJoints {
                    path: self.path.clone(),
                    pose: pose.clone(),
                    joints: missing,
                });
            }
            axes.sort_by_key(|&(axis, _)| axis);
            out.insert(pose.clone(), axes);
        }
        Ok(Poses { poses: out })
    }

    fn axis(&self, layout: &JointLayout, pose: &str, joint: &str) -> Result<usize, PoseError> {
        layout.axis(joint).ok_or_else(|| PoseError::UnknownJoint {
            path: self.path.clone(),
            pose: pose.to_owned(),
            joint: joint.to_owned(),
            hint: match layout.leader_of(joint) {
                Some(leader) => format!(" (it mimics '{leader}': give '{leader}' instead)"),
                None => format!(" (those are: {})", layout.names().join(", ")),
            },
        })
    }
}

/// True for a name a pose (or a program) may have: letters, digits and
/// underscores, starting with a letter, so it can be part of a ROS service
/// name (`~/go_to/<name>`).
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Poses {
    /// Adds or replaces the pose `name` ((axis, position) pairs): one
    /// just recorded.
    pub fn insert(&mut self, name: &str, mut axes: Vec<(usize, f64)>) {
        axes.sort_by_key(|&(axis, _)| axis);
        self.poses.insert(name.to_owned(), axes);
    }

    /// The pose called `name`: (axis, position) pairs in axis order.
    pub fn get(&self, name: &str) -> Option<&[(usize, f64)]> {
        self.poses.get(name).map(Vec::as_slice)
    }

    /// The pose names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.poses.keys().map(String::as_str)
    }

    pub fn is_empty(&self) -> bool {
        self.poses.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARM_POSES: &str = include_str!("../../config/poses_arm.yaml");

    fn arm() -> Chain {
        Chain::from_urdf_str(include_str!("../../urdf/arm.urdf"), None, None).unwrap()
    }

    fn check(text: &str) -> Result<Poses, PoseError> {
        PoseFile::parse(text, "poses.yaml")?.check(&arm())
    }

    #[test]
    fn the_arms_poses_file_fits_the_arm() {
        let poses = check(ARM_POSES).unwrap();
        let names: Vec<&str> = poses.names().collect();
        assert!(
            names.contains(&"home") && names.contains(&"rest"),
            "{names:?}"
        );
        let home = poses.get("home").unwrap();
        let axes: Vec<usize> = home.iter().map(|&(a, _)| a).collect();
        assert_eq!(axes[..5], [0, 1, 2, 3, 4]);
        assert!(poses.get("nope").is_none());
    }

    #[test]
    fn bad_poses_are_refused_naming_the_pose_and_the_joint() {
        let all = "base_yaw: 0, shoulder: 0, elbow: 0, wrist_pitch: 0, wrist_roll: 0";
        let file = |home: &str| format!("home: {{{home}}}\nrest: {{{all}}}\n");
        check(&file(all)).unwrap();
        let e = check(&file(&format!("{all}, wrist_yaw: 0"))).unwrap_err();
        assert!(
            matches!(&e, PoseError::UnknownJoint { joint, pose, .. } if joint == "wrist_yaw" && pose == "home"),
            "{e}"
        );
        let e = check(&file(&format!("{all}, gripper_mirror: 0"))).unwrap_err();
        assert!(e.to_string().contains("mimics 'gripper'"), "{e}");
        let e = check(&file(&all.replace("elbow: 0", "elbow: 2.5"))).unwrap_err();
        assert!(
            matches!(&e, PoseError::OutsideLimits { joint, value, .. } if joint == "elbow" && *value == 2.5),
            "{e}"
        );
        let e = check(&file("base_yaw: 0, shoulder: 0")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "poses file poses.yaml: pose 'home' does not give elbow, wrist_pitch, wrist_roll"
        );
        let e = check(&format!("home: {{{all}}}\n")).unwrap_err();
        assert!(matches!(e, PoseError::Missing { pose: "rest", .. }), "{e}");
        let e = check(&format!("{}go to: {{{all}}}\n", file(all))).unwrap_err();
        assert!(matches!(e, PoseError::BadName { .. }), "{e}");
        let e = check(&file(&all.replace("elbow: 0", "elbow: .nan"))).unwrap_err();
        assert!(matches!(e, PoseError::NotFinite { .. }), "{e}");
        let e = check("- home\n").unwrap_err();
        assert!(matches!(e, PoseError::NotPoses { .. }), "{e}");
        let e = PoseFile::load(Path::new("/nonexistent/poses.yaml")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/poses.yaml"), "{e}");
    }
}
