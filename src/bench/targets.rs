//! Benchmark target files (`../shared/targets/*.json`): the robot, the
//! chain, named seeds and the sampled poses, and for path sets the paths
//! they form. [`TargetSet::generate`] and [`TargetSet::generate_paths`]
//! make the project's own (`benches/targets/*.json`).

use crate::ik::OrientationMode;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a target file cannot be used, naming the file.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TargetFileError {
    #[error("{path}: cannot read the target file: {detail}")]
    Unreadable { path: String, detail: String },
    #[error("{path}: not a target file: {detail}")]
    Malformed { path: String, detail: String },
    #[error("{path}: no seed named '{name}' (the file has: {})", .available.join(", "))]
    NoSuchSeed {
        path: String,
        name: String,
        available: Vec<String>,
    },
    #[error("{path}: {detail}")]
    BadPaths { path: String, detail: String },
    #[error("{path}: sample {index} has {got} joint values, the file names {expected} joints")]
    SampleLength {
        path: String,
        index: usize,
        got: usize,
        expected: usize,
    },
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct NamedSeed {
    pub name: String,
    pub q: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct Sample {
    /// The configuration that produced the pose: for checking FK only, never
    /// a solver's start.
    pub q: Vec<f64>,
    pub position: [f64; 3],
    /// `x, y, z, w`.
    pub quaternion: [f64; 4],
}

/// One path of a path set: where the arm starts, and how many of the
/// samples (after those of the paths before) it runs through.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct PathSpan {
    /// The configuration the arm is in at the path's start (the generating
    /// configuration of its first sample): the first target's seed.
    pub start: Vec<f64>,
    pub len: usize,
}

/// One target file as written by the shared benchmark generator.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct TargetSet {
    /// Robot file, relative to the target file's folder.
    pub urdf: String,
    pub base_link: String,
    pub tip_link: String,
    pub joint_names: Vec<String>,
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
    #[serde(default)]
    pub continuous: Vec<bool>,
    /// Legs: the targets are positions only.
    #[serde(default)]
    pub position_only: bool,
    /// 5D sets: only where this axis of the tip frame points counts (the
    /// axis of each sample's rotation), the roll about it free.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_axis: Option<[f64; 3]>,
    /// Seed of the generator that drew the samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rng_seed: Option<u64>,
    pub seeds: Vec<NamedSeed>,
    /// Path sets: the samples form these paths, one after another (empty:
    /// a set of independent targets).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<PathSpan>,
    pub samples: Vec<Sample>,
    /// Track sets ([`TargetSet::generate_track`]): the samples are one
    /// continuous path published at this rate (Hz), replayed through the
    /// node core in time; `None`: targets or paths solved one by one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_hz: Option<f64>,
    /// Where the file was read from (filled in by [`TargetSet::load`]).
    #[serde(skip)]
    pub path: PathBuf,
}

impl TargetSet {
    /// What the set's samples ask of the orientation: the one place that
    /// reads `position_only` and `tool_axis`.
    pub fn orientation_mode(&self) -> OrientationMode {
        match self.tool_axis {
            _ if self.position_only => OrientationMode::Ignore,
            Some(t) => OrientationMode::Axis {
                tool: nalgebra::Unit::new_normalize(nalgebra::Vector3::from(t)),
            },
            None => OrientationMode::Full,
        }
    }

    pub fn load(path: impl AsRef<Path>) -> Result<TargetSet, TargetFileError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| TargetFileError::Unreadable {
            path: shown.clone(),
            detail: e.to_string(),
        })?;
        let mut set: TargetSet =
            serde_json::from_str(&text).map_err(|e| TargetFileError::Malformed {
                path: shown.clone(),
                detail: e.to_string(),
            })?;
        let n = set.joint_names.len();
        for (index, s) in set.samples.iter().enumerate() {
            if s.q.len() != n {
                return Err(TargetFileError::SampleLength {
                    path: shown,
                    index,
                    got: s.q.len(),
                    expected: n,
                });
            }
        }
        if let Some(t) = set.tool_axis
            && let Err(e) = crate::ik::direction_from_xyz("tool_axis", t)
        {
            return Err(TargetFileError::Malformed {
                path: shown,
                detail: e.to_string(),
            });
        }
        set.check_paths()
            .map_err(|detail| TargetFileError::BadPaths {
                path: shown,
                detail,
            })?;
        set.path = path.to_path_buf();
        Ok(set)
    }

    /// The paths must cover the samples exactly, and start with one value
    /// per joint.
    fn check_paths(&self) -> Result<(), String> {
        if self.paths.is_empty() {
            return Ok(());
        }
        let covered: usize = self.paths.iter().map(|p| p.len).sum();
        if covered != self.samples.len() {
            return Err(format!(
                "the paths cover {covered} samples, the file has {}",
                self.samples.len()
            ));
        }
        let n = self.joint_names.len();
        match self.paths.iter().position(|p| p.start.len() != n) {
            Some(i) => Err(format!(
                "path {i} starts with {} joint values, the file names {n} joints",
                self.paths[i].start.len()
            )),
            None => Ok(()),
        }
    }

    /// The robot file, resolved against the target file's folder.
    pub fn urdf_path(&self) -> PathBuf {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        dir.join(&self.urdf)
    }

    /// A short name for reports: the file stem (`ur5`, `panda`, ...).
    pub fn name(&self) -> String {
        self.path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    pub fn seed(&self, name: &str) -> Result<&[f64], TargetFileError> {
        self.seeds
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.q.as_slice())
            .ok_or_else(|| TargetFileError::NoSuchSeed {
                path: self.path.display().to_string(),
                name: name.to_owned(),
                available: self.seeds.iter().map(|s| s.name.clone()).collect(),
            })
    }
}

impl TargetSet {
    /// The set as JSON, one sample per line so that diffs stay readable.
    pub fn to_json(&self) -> String {
        let text = serde_json::to_string(self).expect("a target set always serializes");
        // Samples are the only objects that start with "q"; nothing inside
        // one contains '{'.
        let mut out = text
            .replace("\"samples\":[{", "\"samples\":[\n{")
            .replace("},{\"q\":", "},\n{\"q\":");
        out.push('\n');
        out
    }
}
