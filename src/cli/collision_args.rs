//! The collision check's flags, named as the ROS parameters are
//! (`--workspace` is `workspace_file`, `--srdf` is `srdf_path`): the node's
//! commands take [`CollisionArgs`], the commands that only build the model
//! (`bench`, `collisions`) take [`WorldArgs`].

use super::values;
use arm_ik::collision::CollisionOptions;
use arm_ik::node::SettingError;
use arm_ik::node::settings::validate_collision;
use std::path::PathBuf;

/// Whether motions are checked, and against what.
#[derive(Debug, clap::Args)]
pub struct CollisionArgs {
    /// Do not check motions for collisions (with the arm itself, the floor
    /// and the workspace's obstacles).
    #[arg(long = "no-collision", action = clap::ArgAction::SetFalse)]
    pub collision_check: bool,
    #[command(flatten)]
    pub world: WorldArgs,
}

impl CollisionArgs {
    /// The collision settings these flags give, checked.
    pub fn options(&self) -> Result<CollisionOptions, SettingError> {
        self.world.options(self.collision_check)
    }
}

/// The collision model: the workspace, the margin, the pairs left out,
/// where meshes are, what stands in for missing geometry.
#[derive(Debug, clap::Args)]
pub struct WorldArgs {
    /// Workspace file (YAML: floor_z, obstacles), re-read when it changes;
    /// default: the floor at the base link's lowest point.
    #[arg(long = "workspace", value_name = "FILE")]
    pub workspace_file: Option<PathBuf>,
    /// Clearance every motion keeps (m; 0 to 1e6).
    #[arg(long, default_value_t = CollisionOptions::default().margin, value_parser = values::non_negative)]
    pub collision_margin: f64,
    /// SRDF whose <disable_collisions> say which link pairs are not
    /// checked; default: a matrix sampled as MoveIt's Setup Assistant does.
    #[arg(long = "srdf", value_name = "FILE")]
    pub srdf_path: Option<PathBuf>,
    /// A folder package:// meshes are looked for in, as DIR/PACKAGE/...
    /// (repeatable; AMENT_PREFIX_PATH's shares come first).
    #[arg(long = "mesh-path", value_name = "DIR")]
    pub mesh_path: Vec<PathBuf>,
    /// Radius of the capsule around a link without collision geometry (m;
    /// above 0, at most 1e6).
    #[arg(long = "capsule-radius", default_value_t = CollisionOptions::default().capsule_radius, value_parser = values::positive)]
    pub collision_capsule_radius: f64,
}

impl WorldArgs {
    /// The collision settings these flags give (`check`: whether motions
    /// are checked at all), checked.
    pub fn options(&self, check: bool) -> Result<CollisionOptions, SettingError> {
        let o = CollisionOptions {
            check,
            workspace: self.workspace_file.clone(),
            srdf: self.srdf_path.clone(),
            mesh_path: self.mesh_path.clone(),
            margin: self.collision_margin,
            capsule_radius: self.collision_capsule_radius,
        };
        validate_collision(&o)?;
        Ok(o)
    }
}
