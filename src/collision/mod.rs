//! Collision safety: a model of the robot's body and of its workspace,
//! and the distance queries between them (parry's GJK and EPA).
//!
//! * [`body`]: the links' `<collision>` shapes as solids (meshes become
//!   their convex hulls, [`mesh`]), capsules where a link has none, and
//!   the links' poses for the node's axes.
//! * [`acm`]: which pairs are never checked (adjacent links, an SRDF, or a
//!   matrix sampled the way MoveIt's Setup Assistant does it, cached).
//! * [`workspace`]: the floor and the obstacles, from a YAML file that may
//!   change while the node runs.
//! * [`world`]: all of it together, with the queries the node and the
//!   solvers ask: the nearest pair, and whether every pair keeps a
//!   clearance.
//! * [`markers`]: what RViz shows, without ROS.
//!
//! Part of the application (feature `app`): the kinematics library stays
//! on nalgebra, urdf-rs and thiserror. The solvers see the checker only
//! through [`crate::ik::Admissible`].

pub mod acm;
pub mod body;
pub mod hull;
pub mod markers;
pub mod mesh;
pub mod sampling;
pub mod simplify;
pub mod solid;
pub mod workspace;
pub mod world;

pub use acm::Matrix;
pub use body::{Approximation, Body, FloorOrigin};
pub use workspace::{Floor, ObstacleDef, Workspace, WorkspaceWatch};
pub use world::{Nearest, Owner, World};

use crate::ik::Admissible;
use crate::model::Chain;
use std::path::PathBuf;
use thiserror::Error;

/// Why the collision model cannot be built, naming the file or link.
#[derive(Debug, Clone, Error)]
#[non_exhaustive]
pub enum CollisionError {
    #[error("mesh '{uri}' not found (looked in: {}); add its folder with --mesh-path (ROS: mesh_path)", .looked.join(", "))]
    MeshNotFound { uri: String, looked: Vec<String> },
    #[error("{path}: cannot use the mesh: {why}")]
    BadMesh { path: String, why: String },
    #[error("{path}: workspace file: {why}")]
    Workspace { path: String, why: String },
    #[error("{path}: SRDF: {why}")]
    Srdf { path: String, why: String },
    #[error("{0}")]
    Robot(String),
}

/// What the collision check is built from: the CLI's flags and the ROS
/// parameters both convert into this (see `crate::node::settings`).
#[derive(Debug, Clone, PartialEq)]
pub struct CollisionOptions {
    /// Check at all (the parameter `collision_check`).
    pub check: bool,
    /// The workspace file (`workspace_file`, `--workspace`); without one,
    /// the floor at the base link's lowest point.
    pub workspace: Option<PathBuf>,
    /// An SRDF whose `<disable_collisions>` say which pairs are not
    /// checked (`srdf_path`, `--srdf`); without one, a sampled matrix.
    pub srdf: Option<PathBuf>,
    /// Folders `package://` meshes are looked for in (`mesh_path`,
    /// `--mesh-path`), after `AMENT_PREFIX_PATH`'s share folders.
    pub mesh_path: Vec<PathBuf>,
    /// The clearance every motion keeps (m).
    pub margin: f64,
    /// Radius of the capsules that stand in for links without geometry (m).
    pub capsule_radius: f64,
}

impl Default for CollisionOptions {
    fn default() -> Self {
        CollisionOptions {
            check: true,
            workspace: None,
            srdf: None,
            mesh_path: Vec::new(),
            margin: 0.01,
            capsule_radius: 0.02,
        }
    }
}

/// Builds the world of `chain`'s robot as `options` say: the body, the
/// workspace file, and the allowed-collision matrix (the SRDF's, or
/// sampled and cached).
pub fn build(chain: &Chain, options: &CollisionOptions) -> Result<World, CollisionError> {
    let workspace = match &options.workspace {
        Some(p) => Workspace::load(p)?,
        None => Workspace::default(),
    };
    let body = Body::new(chain, options)?;
    let adjacent = Matrix::adjacent_only(&body);
    let mut world = World::with_body(body, options.margin, adjacent, &workspace)?;
    let matrix = match &options.srdf {
        Some(p) => Matrix::from_srdf(world.body(), p)?,
        None => sampling::generate(chain, &mut world),
    };
    world.set_matrix(matrix);
    Ok(world)
}

/// What the start-up message says about the model: the links that are
/// approximated and why, what is checked, where the floor and the matrix
/// came from.
pub fn describe(world: &World) -> Vec<String> {
    let mut lines = Vec::new();
    let body = world.body();
    let named = |f: &dyn Fn(&Approximation) -> bool| -> Vec<&str> {
        body.links
            .iter()
            .filter(|l| l.approximated.as_ref().is_some_and(f))
            .map(|l| l.name.as_str())
            .collect()
    };
    let capsules = named(&|a| *a == Approximation::NoGeometry);
    if !capsules.is_empty() {
        lines.push(format!(
            "no <collision> geometry, a capsule of {:.0} mm radius instead: {}",
            body.capsule_radius * 1e3,
            capsules.join(", ")
        ));
    }
    for l in &body.links {
        if let Some(a @ Approximation::Mesh { .. }) = &l.approximated {
            lines.push(format!("link '{}': {a}", l.name));
        }
    }
    let frames = named(&|a| *a == Approximation::Frame);
    if !frames.is_empty() {
        lines.push(format!(
            "not checked (no geometry, no link below): {}",
            frames.join(", ")
        ));
    }
    let floor = match (world.floor(), world.floor_origin()) {
        (None, _) => "no floor".to_string(),
        (Some(z), why) => {
            let why = match why {
                None => "",
                Some(FloorOrigin::BaseGeometry) => ", the base's lowest point",
                Some(FloorOrigin::BaseOrigin) => ", the base's origin (it has no geometry)",
                Some(FloorOrigin::BelowRest) => ", below the default pose's lowest point",
            };
            // A hair below zero is shown as 0.000, not -0.000.
            let z = if z.abs() < 5e-4 { 0.0 } else { z };
            format!("the floor at z = {z:.3} m{why}")
        }
    };
    let origin = match &world.matrix().origin {
        acm::Origin::Srdf(p) => format!("from {}", p.display()),
        acm::Origin::Generated { cache: Some(p) } => {
            format!(
                "sampled on {} configurations, cached in {}",
                acm::SAMPLES,
                p.display()
            )
        }
        acm::Origin::Generated { cache: None } => {
            format!("sampled on {} configurations (not cached)", acm::SAMPLES)
        }
        acm::Origin::Cached(p) => format!("read from the cache {}", p.display()),
        acm::Origin::AdjacentOnly => "adjacent links only".into(),
    };
    lines.push(format!(
        "{} pairs checked ({} links, {}, {} obstacles), margin {:.0} mm; {} pairs left out, {origin}",
        world.pair_count(),
        body.links.len(),
        floor,
        world.obstacle_count(),
        world.margin() * 1e3,
        world.matrix().disabled.len(),
    ));
    lines
}

/// The solvers' view of the world: a solution is admissible when every
/// checked pair keeps the margin. Counts which pair refused the solutions
/// (not the best efforts), so a refusal can name the one that stood in the
/// way most often.
pub struct Clear<'a> {
    pub world: &'a mut World,
    /// Each pair that refused a solution, with how many.
    tally: Vec<(Nearest, usize)>,
}

impl<'a> Clear<'a> {
    pub fn new(world: &'a mut World) -> Clear<'a> {
        Clear {
            world,
            tally: Vec::new(),
        }
    }

    /// The pair that refused the most solutions (the first such), if any
    /// was refused.
    pub fn refused(&self) -> Option<Nearest> {
        let most = self.tally.iter().map(|t| t.1).max()?;
        self.tally.iter().find(|t| t.1 == most).map(|t| t.0)
    }
}

impl Admissible for Clear<'_> {
    fn admits(&mut self, q: &[f64], reaches: bool) -> bool {
        let margin = self.world.margin();
        match self.world.clear_of(q, margin, None) {
            Ok(()) => true,
            Err(n) => {
                if reaches {
                    match self.tally.iter_mut().find(|t| (t.0.a, t.0.b) == (n.a, n.b)) {
                        Some(t) => t.1 += 1,
                        None => self.tally.push((n, 1)),
                    }
                }
                false
            }
        }
    }

    fn refusal(&self) -> Option<String> {
        self.refused().map(|n| self.world.describe(&n))
    }

    /// The closest pair's distance less the margin and its gradient, from
    /// one query ([`World::distance_gradient`]), when it is within `band`
    /// of the margin.
    fn clearance(&mut self, q: &[f64], band: f64, gradient: &mut [f64]) -> Option<f64> {
        let margin = self.world.margin();
        self.world
            .distance_gradient(q, margin + band, gradient)
            .map(|d| d - margin)
    }
}
