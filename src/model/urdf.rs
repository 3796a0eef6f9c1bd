//! Reading URDF into a validated link tree, and cutting a chain out of it.
//!
//! `urdf-rs` does the XML; this module checks what it does not (finite
//! numbers, non-zero axes, tree shape) and reports problems by name.

use super::{Chain, Joint, JointKind, Limits, ModelError, RobotBody, Transform, finite, xacro};
use nalgebra::{Rotation3, Translation3, Unit, Vector3};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

mod links;
pub use links::LinkPose;

/// Which chain to cut out of a robot: `None` picks the default.
#[derive(Debug, Clone, Default)]
pub struct ChainSelection {
    pub base: Option<String>,
    pub tip: Option<String>,
}

impl ChainSelection {
    pub fn new(base: Option<&str>, tip: Option<&str>) -> Self {
        ChainSelection {
            base: base.map(str::to_owned),
            tip: tip.map(str::to_owned),
        }
    }
}

/// A parsed URDF whose links form one tree.
#[derive(Debug, Clone)]
pub struct RobotTree {
    pub source: String,
    pub name: String,
    pub links: Vec<String>,
    joints: Vec<urdf_rs::Joint>,
    /// For each link, the joint whose child it is.
    parent_joint: HashMap<String, usize>,
    /// For each link, the joints whose parent it is.
    child_joints: HashMap<String, Vec<usize>>,
    pub root: String,
    /// Every link with its collision shapes (see [`RobotBody`]).
    pub body: Arc<RobotBody>,
}

impl RobotTree {
    /// Reads and validates a URDF file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<RobotTree, ModelError> {
        let path = path.as_ref();
        let source = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ModelError::Unreadable {
            source_name: source.clone(),
            detail: e.to_string(),
        })?;
        RobotTree::parse(&text, &source, Some(path))
    }

    /// Parses and validates URDF XML; `source` names it in errors.
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(xml: &str, source: &str) -> Result<RobotTree, ModelError> {
        RobotTree::parse(xml, source, None)
    }

    /// `file` is where the text came from, if from a file.
    fn parse(xml: &str, source: &str, file: Option<&Path>) -> Result<RobotTree, ModelError> {
        let not_urdf = |detail: String| ModelError::NotUrdf {
            source_name: source.to_owned(),
            detail,
        };
        // Windows editors save UTF-8 with a byte order mark; it is not
        // whitespace, so drop it before looking for the first '<'.
        let xml = xml.strip_prefix('\u{feff}').unwrap_or(xml);
        let trimmed = xml.trim_start();
        if trimmed.is_empty() {
            return Err(not_urdf("the text is empty".into()));
        }
        if !trimmed.starts_with('<') {
            return Err(not_urdf(format!(
                "XML must start with '<', found {:?}",
                trimmed.chars().take(20).collect::<String>()
            )));
        }
        xacro::refuse_unexpanded(xml, source, file)?;
        if !xml.contains("<robot") {
            return Err(not_urdf("no <robot> element".into()));
        }
        finite::refuse_non_finite(xml, source)?;
        let robot = urdf_rs::read_from_string(xml).map_err(|e| not_urdf(e.to_string()))?;
        let mut tree = Self::from_robot(robot, source)?;
        if let Some(folder) = file.and_then(Path::parent) {
            Arc::make_mut(&mut tree.body).folder = Some(folder.to_path_buf());
        }
        Ok(tree)
    }

    fn from_robot(robot: urdf_rs::Robot, source: &str) -> Result<RobotTree, ModelError> {
        let src = || source.to_owned();
        if robot.links.is_empty() {
            return Err(ModelError::Empty { source_name: src() });
        }
        let links: Vec<String> = robot.links.iter().map(|l| l.name.clone()).collect();
        unique_names(&robot, source)?;
        let known: std::collections::HashSet<&str> = links.iter().map(String::as_str).collect();

        let mut parent_joint: HashMap<String, usize> = HashMap::new();
        let mut child_joints: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, j) in robot.joints.iter().enumerate() {
            check_joint_numbers(j, source)?;
            for link in [&j.parent.link, &j.child.link] {
                if !known.contains(link.as_str()) {
                    return Err(ModelError::DanglingJoint {
                        source_name: src(),
                        joint: j.name.clone(),
                        link: link.clone(),
                    });
                }
            }
            if let Some(&other) = parent_joint.get(&j.child.link) {
                return Err(ModelError::TwoParents {
                    source_name: src(),
                    link: j.child.link.clone(),
                    first: robot.joints[other].name.clone(),
                    second: j.name.clone(),
                });
            }
            parent_joint.insert(j.child.link.clone(), i);
            child_joints
                .entry(j.parent.link.clone())
                .or_default()
                .push(i);
        }

        check_no_loop(&links, &parent_joint, &robot.joints, source)?;
        let roots: Vec<String> = links
            .iter()
            .filter(|l| !parent_joint.contains_key(*l))
            .cloned()
            .collect();
        if roots.len() > 1 {
            return Err(ModelError::SeveralRoots {
                source_name: src(),
                roots,
            });
        }
        let body = Arc::new(RobotBody::from_urdf(&robot, &roots[0]));
        Ok(RobotTree {
            source: src(),
            body,
            name: robot.name,
            links,
            joints: robot.joints,
            parent_joint,
            child_joints,
            root: roots[0].clone(),
        })
    }

    /// Leaf links (no child joint) at or below `link`.
    pub fn leaves_below(&self, link: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![link.to_owned()];
        while let Some(l) = stack.pop() {
            match self.child_joints.get(&l) {
                Some(children) if !children.is_empty() => {
                    for &ji in children.iter().rev() {
                        stack.push(self.joints[ji].child.link.clone());
                    }
                }
                _ => out.push(l),
            }
        }
        out
    }

    fn resolve(&self, name: &str, role: &'static str) -> Result<String, ModelError> {
        if self.links.iter().any(|l| l == name) {
            Ok(name.to_owned())
        } else {
            Err(ModelError::NoSuchLink {
                source_name: self.source.clone(),
                name: name.to_owned(),
                role,
                suggestions: close_names(name, &self.links),
            })
        }
    }

    /// The default tip below `base`: the only leaf, or else the one leaf
    /// that every other leaf hangs below through all of its moving joints and
    /// at least one more (the tool frame beside a gripper's jaws or fingers:
    /// they are reached only through joints off the arm). An error lists the
    /// leaves when no leaf is that one.
    pub fn default_tip(&self, base: &str) -> Result<String, ModelError> {
        let leaves = self.leaves_below(base);
        if let [only] = leaves.as_slice() {
            return Ok(only.clone());
        }
        let moving: Vec<Vec<usize>> = leaves
            .iter()
            .map(|l| self.moving_joints_between(base, l))
            .collect();
        let tool = (0..leaves.len()).find(|&t| {
            !moving[t].is_empty()
                && (0..leaves.len()).all(|l| {
                    l == t
                        || (moving[l].len() > moving[t].len() && moving[l].starts_with(&moving[t]))
                })
        });
        match tool {
            Some(t) => Ok(leaves[t].clone()),
            None => Err(ModelError::AmbiguousTip {
                source_name: self.source.clone(),
                base: base.to_owned(),
                leaves,
            }),
        }
    }

    /// The moving joints from `base` down to `link` (which is below it), in
    /// order from the base.
    fn moving_joints_between(&self, base: &str, link: &str) -> Vec<usize> {
        let mut out = Vec::new();
        let mut l = link;
        while l != base {
            let Some(&ji) = self.parent_joint.get(l) else {
                break;
            };
            if super::extra::kind_of(&self.joints[ji].joint_type).is_some() {
                out.push(ji);
            }
            l = &self.joints[ji].parent.link;
        }
        out.reverse();
        out
    }

    /// Cuts the chain between the selected links. The base defaults to the
    /// root link; the tip to [`RobotTree::default_tip`].
    pub fn chain(&self, sel: &ChainSelection) -> Result<Chain, ModelError> {
        let (base, tip) = self.ends(sel)?;
        let path = self.path(&base, &tip)?;
        let mut joints = Vec::new();
        let mut pending = Transform::identity();
        for &ji in &path {
            let j = &self.joints[ji];
            let origin = pending * origin_transform(&j.origin);
            match self.moving_joint(j, origin)? {
                Some(joint) => {
                    joints.push(joint);
                    pending = Transform::identity();
                }
                // A fixed joint folds into the next moving joint's origin.
                None => pending = origin,
            }
        }
        if joints.is_empty() {
            return Err(ModelError::NoMovingJoint {
                source_name: self.source.clone(),
                base,
                tip,
            });
        }
        let names: Vec<String> = joints.iter().map(|j| j.name.clone()).collect();
        Ok(Chain {
            source: self.source.clone(),
            robot: self.name.clone(),
            base,
            tip,
            joints,
            tip_offset: pending,
            extras: super::extra::extra_joints(&self.joints, &names, &self.source)?,
            body: self.body.clone(),
        })
    }

    /// The base and tip links a selection names, defaults filled in.
    fn ends(&self, sel: &ChainSelection) -> Result<(String, String), ModelError> {
        let base = match &sel.base {
            Some(b) => self.resolve(b, "base")?,
            None => self.root.clone(),
        };
        let tip = match &sel.tip {
            Some(t) => self.resolve(t, "tip")?,
            None => self.default_tip(&base)?,
        };
        Ok((base, tip))
    }

    /// The joints from `base` down to `tip`, in that order.
    fn path(&self, base: &str, tip: &str) -> Result<Vec<usize>, ModelError> {
        let mut path: Vec<usize> = Vec::new();
        let mut link = tip;
        while link != base {
            match self.parent_joint.get(link) {
                Some(&ji) => {
                    path.push(ji);
                    link = &self.joints[ji].parent.link;
                }
                None => {
                    let hint = if self.is_below(base, tip) {
                        format!("'{tip}' is above '{base}'; swap them")
                    } else {
                        format!("'{tip}' is not below '{base}' in the tree")
                    };
                    return Err(ModelError::NoPath {
                        source_name: self.source.clone(),
                        base: base.to_owned(),
                        tip: tip.to_owned(),
                        hint,
                    });
                }
            }
        }
        path.reverse();
        Ok(path)
    }

    /// The chain joint for URDF joint `j` placed at `origin`; `None` for a
    /// fixed joint, an error for a kind the chain cannot hold.
    fn moving_joint(
        &self,
        j: &urdf_rs::Joint,
        origin: Transform,
    ) -> Result<Option<Joint>, ModelError> {
        let kind = match j.joint_type {
            urdf_rs::JointType::Fixed => return Ok(None),
            urdf_rs::JointType::Revolute => JointKind::Revolute,
            urdf_rs::JointType::Continuous => JointKind::Continuous,
            urdf_rs::JointType::Prismatic => JointKind::Prismatic,
            ref other => {
                return Err(ModelError::UnsupportedJoint {
                    source_name: self.source.clone(),
                    joint: j.name.clone(),
                    kind: format!("{other:?}").to_lowercase(),
                });
            }
        };
        if let Some(m) = &j.mimic {
            return Err(ModelError::MimicInChain {
                source_name: self.source.clone(),
                joint: j.name.clone(),
                master: m.joint.clone(),
            });
        }
        let limits = match kind {
            JointKind::Continuous => Limits::UNBOUNDED,
            _ => Limits {
                lower: j.limit.lower,
                upper: j.limit.upper,
            },
        };
        let max_velocity = if j.limit.velocity > 0.0 {
            j.limit.velocity
        } else {
            f64::INFINITY
        };
        Ok(Some(Joint {
            name: j.name.clone(),
            kind,
            origin,
            axis: Unit::new_normalize(Vector3::from(j.axis.xyz.0)),
            limits,
            max_velocity,
        }))
    }

    /// True when `link` is `ancestor` or below it.
    fn is_below(&self, link: &str, ancestor: &str) -> bool {
        let mut l = link;
        loop {
            if l == ancestor {
                return true;
            }
            match self.parent_joint.get(l) {
                Some(&ji) => l = &self.joints[ji].parent.link,
                None => return false,
            }
        }
    }
}

/// The URDF origin as a transform: rpy is fixed-axis roll, pitch, yaw.
fn origin_transform(p: &urdf_rs::Pose) -> Transform {
    Transform::from_parts(
        Translation3::new(p.xyz[0], p.xyz[1], p.xyz[2]),
        Rotation3::from_euler_angles(p.rpy[0], p.rpy[1], p.rpy[2]),
    )
}

/// Axes and limits; numbers written as `inf` or `nan` are refused from the
/// text before parsing (see `finite`).
fn check_joint_numbers(j: &urdf_rs::Joint, source: &str) -> Result<(), ModelError> {
    let moving = matches!(
        j.joint_type,
        urdf_rs::JointType::Revolute
            | urdf_rs::JointType::Continuous
            | urdf_rs::JointType::Prismatic
    );
    if !moving {
        return Ok(());
    }
    let a = j.axis.xyz.0;
    if Vector3::from(a).norm() < 1e-9 {
        return Err(ModelError::ZeroAxis {
            source_name: source.to_owned(),
            joint: j.name.clone(),
            x: a[0],
            y: a[1],
            z: a[2],
        });
    }
    if j.joint_type != urdf_rs::JointType::Continuous {
        // urdf-rs fills a missing <limit> with zeros; a real <limit> always
        // has a velocity (it is required), so all-zero means none was given.
        let l = &j.limit;
        if l.lower == 0.0 && l.upper == 0.0 && l.velocity == 0.0 && l.effort == 0.0 {
            return Err(ModelError::MissingLimit {
                source_name: source.to_owned(),
                joint: j.name.clone(),
                kind: if j.joint_type == urdf_rs::JointType::Prismatic {
                    "prismatic"
                } else {
                    "revolute"
                },
            });
        }
        let (lo, hi) = (j.limit.lower, j.limit.upper);
        if lo > hi {
            return Err(ModelError::InvertedLimits {
                source_name: source.to_owned(),
                joint: j.name.clone(),
                lower: lo,
                upper: hi,
            });
        }
    }
    Ok(())
}

/// Names within a small edit distance of `name`, closest first (at most 3).
fn close_names(name: &str, candidates: &[String]) -> Vec<String> {
    let lname = name.to_lowercase();
    let mut scored: Vec<(usize, &String)> = candidates
        .iter()
        .filter_map(|c| {
            let lc = c.to_lowercase();
            let d = edit_distance(&lname, &lc);
            let close =
                d <= (name.len().max(3) / 3).max(2) || lc.contains(&lname) || lname.contains(&lc);
            close.then_some((d, c))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(3).map(|(_, c)| c.clone()).collect()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Each link name and each joint name appears once.
fn unique_names(robot: &urdf_rs::Robot, source: &str) -> Result<(), ModelError> {
    let dup = |kind: &'static str, name: &str| ModelError::DuplicateName {
        source_name: source.to_owned(),
        kind,
        name: name.to_owned(),
    };
    let mut links = std::collections::HashSet::new();
    if let Some(l) = robot.links.iter().find(|l| !links.insert(l.name.as_str())) {
        return Err(dup("link", &l.name));
    }
    let mut joints = std::collections::HashSet::new();
    if let Some(j) = robot
        .joints
        .iter()
        .find(|j| !joints.insert(j.name.as_str()))
    {
        return Err(dup("joint", &j.name));
    }
    Ok(())
}

/// Every link reaches a root by walking up its parent joints; a walk that
/// revisits a link is a loop, named by its links.
fn check_no_loop(
    links: &[String],
    parent_joint: &HashMap<String, usize>,
    joints: &[urdf_rs::Joint],
    source: &str,
) -> Result<(), ModelError> {
    for start in links {
        let mut seen: Vec<&str> = vec![start];
        let mut link = start.as_str();
        while let Some(&ji) = parent_joint.get(link) {
            link = &joints[ji].parent.link;
            if let Some(pos) = seen.iter().position(|l| *l == link) {
                let mut cycle: Vec<String> =
                    seen[pos..].iter().rev().map(|s| s.to_string()).collect();
                cycle.push(cycle[0].clone());
                return Err(ModelError::Loop {
                    source_name: source.to_owned(),
                    cycle,
                });
            }
            seen.push(link);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_rank_by_distance() {
        let names: Vec<String> = ["base_link", "tool0", "wrist_3_link"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(close_names("tool", &names), vec!["tool0".to_string()]);
        assert_eq!(
            close_names("wrist3_link", &names),
            vec!["wrist_3_link".to_string()]
        );
        assert!(close_names("zzzzzzzz", &names).is_empty());
    }
}
