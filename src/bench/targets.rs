//! Benchmark target files (`../shared/targets/*.json`): the robot, the
//! chain, named seeds and the sampled poses. [`TargetSet::generate`] makes
//! the project's own (`benches/targets/*.json`).

use crate::ik::Rng;
use crate::model::{Chain, JointKind};
use nalgebra::UnitQuaternion;
use serde::{Deserialize, Serialize};
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
    /// Seed of the generator that drew the samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rng_seed: Option<u64>,
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

impl TargetSet {
    /// Draws `n` configurations of `chain` uniformly within the joints'
    /// sampling ranges ([`crate::model::Joint::sample_range`]: the limits,
    /// `[-pi, pi]` for continuous joints) with SplitMix64 seeded by
    /// `rng_seed`, and records each one's tip pose. `urdf` is stored as given
    /// (the robot file relative to where the set will be written). The same
    /// arguments always give the same set.
    pub fn generate(
        chain: &Chain,
        urdf: &str,
        n: usize,
        rng_seed: u64,
        position_only: bool,
    ) -> TargetSet {
        let ranges: Vec<(f64, f64)> = chain.joints.iter().map(|j| j.sample_range()).collect();
        let mid = chain.mid_configuration();
        let mut rng = Rng::new(rng_seed);
        let samples = (0..n)
            .map(|_| {
                let q: Vec<f64> = ranges.iter().map(|&(lo, hi)| rng.range(lo, hi)).collect();
                let tip = chain.fk(&q);
                let r = UnitQuaternion::from_rotation_matrix(&tip.rotation);
                // q and -q are the same rotation; keep w >= 0 so files diff cleanly.
                let s = if r.w < 0.0 { -1.0 } else { 1.0 };
                Sample {
                    position: tip.translation.vector.into(),
                    quaternion: [s * r.i, s * r.j, s * r.k, s * r.w],
                    q,
                }
            })
            .collect();
        let seed = |name: &str, q: Vec<f64>| NamedSeed {
            name: name.to_owned(),
            q,
        };
        TargetSet {
            urdf: urdf.to_owned(),
            base_link: chain.base.clone(),
            tip_link: chain.tip.clone(),
            joint_names: chain.joints.iter().map(|j| j.name.clone()).collect(),
            lower: ranges.iter().map(|r| r.0).collect(),
            upper: ranges.iter().map(|r| r.1).collect(),
            continuous: chain
                .joints
                .iter()
                .map(|j| j.kind == JointKind::Continuous)
                .collect(),
            position_only,
            rng_seed: Some(rng_seed),
            seeds: vec![
                seed("mid", mid.clone()),
                seed("zero", vec![0.0; mid.len()]),
                seed("mid+0.1", mid.iter().map(|v| v + 0.1).collect()),
            ],
            samples,
            path: PathBuf::new(),
        }
    }

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
