//! What `sim`, `latency` and `replay` share: the robot (a URDF, or the
//! project's arm built in), so a replay in CI runs the node exactly as
//! `sim` does.

use arm_ik::model::{Chain, ModelError};
use arm_ik::node::{NodeParams, UrdfSource};
use std::path::{Path, PathBuf};

/// The project's arm, built in so `sim` and `replay` run from any directory.
const ARM_URDF: &str = include_str!("../../urdf/arm.urdf");

/// The chain's two ends, for every command that reads a URDF.
#[derive(Debug, clap::Args)]
pub struct LinkArgs {
    /// First link of the chain (default: the URDF's root link).
    #[arg(long, value_name = "LINK")]
    pub base: Option<String>,
    /// Last link of the chain, the tool frame (default: the only leaf link
    /// below the base, or the one leaf the others, a gripper's jaws, hang
    /// below).
    #[arg(long, value_name = "LINK")]
    pub tip: Option<String>,
}

impl LinkArgs {
    /// The chain of the URDF file `path` between these links.
    pub fn chain(&self, path: &Path) -> anyhow::Result<Chain> {
        Chain::from_urdf_file(path, self.base.as_deref(), self.tip.as_deref()).map_err(chain_error)
    }
}

/// A chain that cannot be cut, said with the flag that chooses the link.
pub fn chain_error(e: ModelError) -> anyhow::Error {
    match &e {
        ModelError::AmbiguousTip { leaves, .. } => {
            let first = leaves.first().map_or("LINK", String::as_str);
            anyhow::anyhow!("{e} with --tip (e.g. --tip {first})")
        }
        _ => e.into(),
    }
}

#[derive(Debug, clap::Args)]
pub struct RobotArgs {
    /// The URDF file (default: the built-in 5-DOF desktop arm, urdf/arm.urdf).
    #[arg(long)]
    pub urdf: Option<PathBuf>,
    #[command(flatten)]
    pub links: LinkArgs,
}

impl RobotArgs {
    pub fn chain(&self) -> anyhow::Result<Chain> {
        match &self.urdf {
            Some(p) => self.links.chain(p),
            None => self.chain_of(&UrdfSource::Topic, None, None),
        }
    }

    /// The URDF text of `chain` as `/robot_description` carries it: the
    /// file it was read from, else the built-in arm (what [`Self::chain`]
    /// reads without `--urdf`), else `xml` (a parameter file's
    /// `robot_description`).
    pub fn description(&self, chain: &Chain, xml: Option<&str>) -> anyhow::Result<String> {
        let file = Path::new(&chain.source);
        if file.is_file() {
            return std::fs::read_to_string(file)
                .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()));
        }
        Ok(xml.unwrap_or(ARM_URDF).to_string())
    }

    /// The chain a node parameter file describes, with these arguments
    /// taking precedence: `--urdf`, else the file's `urdf_path` (as given,
    /// else relative to the file's folder) or `robot_description`, else the
    /// built-in arm; `--base`/`--tip`, else the file's links.
    pub fn chain_for(&self, params: &NodeParams, file: &Path) -> anyhow::Result<Chain> {
        let source = match (&self.urdf, params.urdf_source()) {
            (Some(p), _) => UrdfSource::File(p.clone()),
            (None, UrdfSource::File(p)) => {
                let beside = file.parent().unwrap_or(Path::new(".")).join(&p);
                UrdfSource::File(if p.exists() || !beside.exists() {
                    p
                } else {
                    beside
                })
            }
            (None, other) => other,
        };
        self.chain_of(&source, params.base(), params.tip())
    }

    /// The chain of `source` (the built-in arm for the topic, which the
    /// CLI has not), between `--base`/`--tip` or else these links.
    fn chain_of(
        &self,
        source: &UrdfSource,
        base: Option<&str>,
        tip: Option<&str>,
    ) -> anyhow::Result<Chain> {
        let base = self.links.base.as_deref().or(base);
        let tip = self.links.tip.as_deref().or(tip);
        match source {
            UrdfSource::File(p) => Chain::from_urdf_file(p, base, tip),
            UrdfSource::Xml(xml) => Chain::from_urdf_str(xml, base, tip),
            UrdfSource::Topic => Chain::from_urdf_str(ARM_URDF, base, tip),
        }
        .map_err(chain_error)
    }
}
