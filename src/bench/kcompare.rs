//! The `k` crate's JacobianIkSolver on the same chain and targets, for
//! `arm_ik bench --compare k`. `k` 0.32 builds on an older nalgebra, so
//! poses cross the boundary as plain arrays.
//!
//! Built with the `compare-k` feature only: nothing else needs `k`. Without
//! it [`KChain`] has no values and [`KChain::load`] says how to build the
//! comparison in.

#[cfg(feature = "compare-k")]
use super::{Answer, Stopwatch, run_with};
use super::{Criteria, Record, TargetSet};
use crate::model::Chain;
#[cfg(feature = "compare-k")]
use k::{InverseKinematicsSolver, nalgebra as kna};
use std::path::Path;
use thiserror::Error;

/// Why the comparison with `k` cannot run.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum KError {
    #[error("k cannot load {path}: {detail}")]
    Load { path: String, detail: String },
    #[error("k has no link '{0}'")]
    NoLink(String),
    #[error("k's chain has joints {k:?}, arm_ik's has {ours:?}")]
    Mismatch { k: Vec<String>, ours: Vec<String> },
    #[error(
        "this arm_ik was built without the comparison with k; build it in with the \
         compare-k feature: cargo run --release --features compare-k -- bench ... --compare k"
    )]
    NotBuilt,
}

/// A `k` serial chain matching one of our chains.
#[cfg(feature = "compare-k")]
pub struct KChain {
    /// From the first joint below our base link to our tip link, so k's
    /// end transform is relative to the base, as ours is.
    chain: k::SerialChain<f64>,
}

#[cfg(feature = "compare-k")]
impl KChain {
    /// Loads `urdf` with `k` and cuts the chain from `base` to `tip`.
    pub fn load(urdf: &Path, ours: &Chain) -> Result<KChain, KError> {
        let whole = k::Chain::<f64>::from_urdf_file(urdf).map_err(|e| KError::Load {
            path: urdf.display().to_string(),
            detail: e.to_string(),
        })?;
        let tip = whole
            .find_link(&ours.tip)
            .ok_or_else(|| KError::NoLink(ours.tip.clone()))?;
        let base = whole
            .find_link(&ours.base)
            .ok_or_else(|| KError::NoLink(ours.base.clone()))?;
        // The first node below the base on the way to the tip.
        let mut below = tip.clone();
        for node in tip.iter_ancestors() {
            if node == *base {
                break;
            }
            below = node;
        }
        let chain = k::SerialChain::from_end_to_root(tip, &below);
        let names: Vec<String> = chain.iter_joints().map(|j| j.name.clone()).collect();
        if names != ours.joint_names() {
            return Err(KError::Mismatch {
                k: names,
                ours: ours.joint_names().into_iter().map(str::to_owned).collect(),
            });
        }
        Ok(KChain { chain })
    }

    /// Tip pose relative to the base for `q` (position, `x y z w`).
    pub fn fk(&self, q: &[f64]) -> ([f64; 3], [f64; 4]) {
        self.chain.set_joint_positions_unchecked(q);
        let t = self.chain.end_transform();
        // end_transform starts at the first node below the base, which is
        // where our chain starts too.
        let p = t.translation.vector;
        let r = t.rotation;
        ([p.x, p.y, p.z], [r.i, r.j, r.k, r.w])
    }

    /// Runs k's JacobianIkSolver on `set` with its protocol, judged by the
    /// same criteria as our solvers.
    pub fn run(&self, ours: &Chain, set: &TargetSet, seed: &[f64], c: &Criteria) -> Vec<Record> {
        let solver =
            k::JacobianIkSolver::new(c.position_tolerance, c.orientation_tolerance, 0.5, 500);
        let rotation = c.orientation == crate::ik::OrientationMode::Full;
        let constraints = k::Constraints {
            rotation_x: rotation,
            rotation_y: rotation,
            rotation_z: rotation,
            ..Default::default()
        };
        let never = std::sync::atomic::AtomicBool::new(false);
        run_with(ours, set, seed, c, &never, |s, seed| {
            let p = s.position;
            let [x, y, z, w] = s.quaternion;
            let target = kna::Isometry3::from_parts(
                kna::Translation3::new(p[0], p[1], p[2]),
                kna::UnitQuaternion::from_quaternion(kna::Quaternion::new(w, x, y, z)),
            );
            self.chain.set_joint_positions_clamped(seed);
            let watch = Stopwatch::start();
            let outcome = solver.solve_with_constraints(&self.chain, &target, &constraints);
            let time = watch.stop();
            Answer {
                q: Some(self.chain.joint_positions()),
                time,
                detail: outcome.err().map(|e| format!("k: {}", reason(&e))),
                iterations: 0,
            }
        })
    }
}

/// k's error as a reason that is the same for every query it stands for
/// (its own messages carry the residuals), so failures can be counted by
/// reason.
#[cfg(feature = "compare-k")]
fn reason(e: &k::Error) -> String {
    match e {
        k::Error::NotConvergedError { .. } => "did not converge".to_owned(),
        k::Error::InverseMatrixError => {
            "singular Jacobian (cannot invert it at the seed or on the way)".to_owned()
        }
        other => other.to_string(),
    }
}

/// Stands for the `k` chain in a build without the `compare-k` feature. It
/// has no values, so [`KChain::load`] is all a caller can reach.
#[cfg(not(feature = "compare-k"))]
pub enum KChain {}

#[cfg(not(feature = "compare-k"))]
impl KChain {
    /// Fails with [`KError::NotBuilt`], which says how to get the
    /// comparison.
    pub fn load(_urdf: &Path, _ours: &Chain) -> Result<KChain, KError> {
        Err(KError::NotBuilt)
    }

    /// Never called: there is no `KChain` to call it on.
    pub fn fk(&self, _q: &[f64]) -> ([f64; 3], [f64; 4]) {
        match *self {}
    }

    /// Never called: there is no `KChain` to call it on.
    pub fn run(&self, _: &Chain, _: &TargetSet, _: &[f64], _: &Criteria) -> Vec<Record> {
        match *self {}
    }
}
