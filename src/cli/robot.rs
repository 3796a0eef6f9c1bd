//! What `sim`, `latency` and `replay` share: the robot (a URDF, or the
//! project's arm built in), so a replay in CI runs the node exactly as
//! `sim` does.

use arm_ik::model::Chain;
use arm_ik::node::{NodeParams, UrdfSource};
use std::path::{Path, PathBuf};

/// The project's arm, built in so `sim` and `replay` run from any directory.
const ARM_URDF: &str = include_str!("../../urdf/arm.urdf");

#[derive(Debug, clap::Args)]
pub struct RobotArgs {
    /// The URDF file (default: the built-in 5-DOF desktop arm, urdf/arm.urdf).
    #[arg(long)]
    pub urdf: Option<PathBuf>,
    #[arg(long)]
    pub base: Option<String>,
    #[arg(long)]
    pub tip: Option<String>,
}

impl RobotArgs {
    pub fn chain(&self) -> anyhow::Result<Chain> {
        Ok(match &self.urdf {
            Some(p) => Chain::from_urdf_file(p, self.base.as_deref(), self.tip.as_deref())?,
            None => Chain::from_urdf_str(ARM_URDF, self.base.as_deref(), self.tip.as_deref())?,
        })
    }

    /// The chain a node parameter file describes, with these arguments
    /// taking precedence: `--urdf`, else the file's `urdf_path` (as given,
    /// else relative to the file's folder) or `robot_description`, else the
    /// built-in arm; `--base`/`--tip`, else the file's links.
    pub fn chain_for(&self, params: &NodeParams, file: &Path) -> anyhow::Result<Chain> {
        let base = self.base.as_deref().or(params.base());
        let tip = self.tip.as_deref().or(params.tip());
        if let Some(p) = &self.urdf {
            return Ok(Chain::from_urdf_file(p, base, tip)?);
        }
        Ok(match params.urdf_source() {
            UrdfSource::File(p) => {
                let beside = file.parent().unwrap_or(Path::new(".")).join(&p);
                let path = if p.exists() || !beside.exists() {
                    p
                } else {
                    beside
                };
                Chain::from_urdf_file(path, base, tip)?
            }
            UrdfSource::Xml(xml) => Chain::from_urdf_str(&xml, base, tip)?,
            UrdfSource::Topic => Chain::from_urdf_str(ARM_URDF, base, tip)?,
        })
    }
}
