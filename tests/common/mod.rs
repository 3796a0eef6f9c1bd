//! Helpers shared by the integration tests (`mod common;` in each file).
//!
//! Not every test file uses every helper.
#![allow(dead_code)]

#[cfg(feature = "app")]
pub mod firmware;

use arm_ik::model::Chain;
use std::path::PathBuf;

/// The crate root (where `urdf/` lives).
pub fn project_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A project robot, e.g. `project_urdf("arm.urdf")`.
pub fn project_urdf(name: &str) -> PathBuf {
    project_dir().join("urdf").join(name)
}

/// The shared conformance data: `$ARM_IK_SHARED`, else `<manifest>/../shared`.
///
/// When it is missing, CI (env `CI` set and non-empty) fails loudly, because
/// CI must run the conformance tests; a developer's clone just skips them.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("ARM_IK_SHARED") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => project_dir().join("..").join("shared"),
    };
    if dir.is_dir() {
        return Some(dir);
    }
    let in_ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
    if in_ci {
        panic!(
            "conformance data not found at {} (CI is set, so the shared robots are required; \
             set ARM_IK_SHARED to the directory holding robots/*.urdf)",
            dir.display()
        );
    }
    eprintln!("SKIP: ../shared not found (conformance tests need it)");
    None
}

/// A shared robot file, e.g. `shared_urdf("panda.urdf")`; None when the
/// shared data is absent (see [`shared_dir`]).
pub fn shared_urdf(name: &str) -> Option<PathBuf> {
    shared_dir().map(|d| d.join("robots").join(name))
}

/// The library's deterministic generator (SplitMix64), so failures
/// reproduce exactly.
pub use arm_ik::ik::Rng as TestRng;

/// A random configuration within the joint limits; continuous joints in
/// `[-pi, pi]`.
pub fn random_q(chain: &Chain, rng: &mut TestRng) -> Vec<f64> {
    chain
        .joints
        .iter()
        .map(|j| {
            let (lo, hi) = j.sample_range();
            rng.range(lo, hi)
        })
        .collect()
}

/// The chains the conformance tests cut from the shared robots:
/// (file under `robots/`, base link, tip link, DOF).
pub const SHARED_CHAINS: &[(&str, &str, &str, usize)] = &[
    ("ur5_robot.urdf", "base_link", "tool0", 6),
    ("panda.urdf", "panda_link0", "panda_hand", 7),
    ("so101.urdf", "base_link", "gripper_frame_link", 5),
    ("solo12.urdf", "base_link", "FL_FOOT", 3),
    ("solo12.urdf", "base_link", "FR_FOOT", 3),
    ("solo12.urdf", "base_link", "HL_FOOT", 3),
    ("solo12.urdf", "base_link", "HR_FOOT", 3),
];

/// Every chain worth testing kinematics on: the project robots, the messy
/// fixture, and the shared robots when present. (path, base, tip).
pub fn all_chains() -> Vec<(PathBuf, Option<&'static str>, Option<&'static str>)> {
    let mut out = vec![
        (project_urdf("arm.urdf"), None, None),
        (project_urdf("leg.urdf"), None, None),
        (
            project_dir().join("tests/data/messy.urdf"),
            None,
            Some("tool_tip"),
        ),
    ];
    if let Some(dir) = shared_dir() {
        for &(file, base, tip, _) in SHARED_CHAINS {
            out.push((dir.join("robots").join(file), Some(base), Some(tip)));
        }
    }
    out
}

/// Runs the `arm_ik` binary of this build from the project folder.
#[cfg(feature = "app")]
pub fn arm_ik(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_arm_ik"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run arm_ik")
}

/// The tip pose at `q` as a full pose target.
pub fn pose_of(chain: &Chain, q: &[f64]) -> arm_ik::ik::Target {
    let tip = chain.fk(q);
    arm_ik::ik::Target::pose(
        tip.translation.vector,
        nalgebra::UnitQuaternion::from_rotation_matrix(&tip.rotation),
    )
}

/// The tip position at `q` as a position-only target.
pub fn position_of(chain: &Chain, q: &[f64]) -> arm_ik::ik::Target {
    arm_ik::ik::Target::position(chain.fk(q).translation.vector)
}
