//! Benchmark target files (`../shared/targets/*.json`): the robot, the
//! chain, named seeds and the sampled poses.

use serde::Deserialize;
use std::path::{Path, PathBuf};
use thiserror::Error;

#[derive(Debug, Error)]
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
    #[error("{path}: sample {index} has {got} joint values, the file names {expected} joints")]
    SampleLength {
        path: String,
        index: usize,
        got: usize,
        expected: usize,
    },
}

#[derive(Debug, Clone, Deserialize)]
pub struct NamedSeed {
    pub name: String,
    pub q: Vec<f64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Sample {
    /// The configuration that produced the pose: for checking FK only, never
    /// a solver's start.
    pub q: Vec<f64>,
    pub position: [f64; 3],
    /// `x, y, z, w`.
    pub quaternion: [f64; 4],
}

/// One target file as written by the shared benchmark generator.
#[derive(Debug, Clone, Deserialize)]
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
    pub seeds: Vec<NamedSeed>,
    pub samples: Vec<Sample>,
    /// Where the file was read from (filled in by [`TargetSet::load`]).
    #[serde(skip)]
    pub path: PathBuf,
}

impl TargetSet {
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
        set.path = path.to_path_buf();
        Ok(set)
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
