//! The project's own benchmark target sets (`benches/targets/*.json`) are
//! consistent with the robots and up to date with their generator
//! (`examples/make_targets.rs`, i.e. [`TargetSet::generate`] and
//! [`TargetSet::generate_paths`]). The path sets of the shared robots are
//! checked when `../shared` is there.

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

mod common;

use arm_ik::bench::{TargetSet, largest_step};
use arm_ik::ik::rotation_error;
use arm_ik::model::{Chain, JointKind};
use nalgebra::{Quaternion, UnitQuaternion, Vector3};

/// Each file, and whether it is position-only.
const SETS: [(&str, bool); 8] = [
    ("arm.json", false),
    ("puma560.json", false),
    ("arm_position.json", true),
    ("leg.json", true),
    ("arm_paths.json", false),
    ("ur5_paths.json", false),
    ("panda_paths.json", false),
    ("so101_paths.json", false),
];

const N: usize = 1000;

/// The set and its chain; `None` for a shared robot's set when `../shared`
/// is absent (outside CI).
fn load(name: &str) -> Option<(TargetSet, Chain)> {
    let path = common::project_dir()
        .join("benches")
        .join("targets")
        .join(name);
    let set = TargetSet::load(&path).unwrap_or_else(|e| panic!("{e}"));
    // A shared robot is found wherever the shared data is ($ARM_IK_SHARED).
    let urdf = match set.urdf.split_once("shared/robots/") {
        Some((_, file)) => common::shared_urdf(file)?,
        None => set.urdf_path(),
    };
    let chain = Chain::from_urdf_file(urdf, Some(&set.base_link), Some(&set.tip_link))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    Some((set, chain))
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

#[test]
fn files_match_their_robots() {
    for (name, position_only) in SETS {
        let Some((set, chain)) = load(name) else {
            continue;
        };
        assert_eq!(set.samples.len(), N, "{name}");
        assert_eq!(set.position_only, position_only, "{name}");
        assert_eq!(set.joint_names, chain.joint_names(), "{name}");
        let (lower, upper): (Vec<f64>, Vec<f64>) =
            chain.joints.iter().map(|j| j.sample_range()).unzip();
        assert_eq!(set.lower, lower, "{name}: lower limits");
        assert_eq!(set.upper, upper, "{name}: upper limits");
        let continuous: Vec<bool> = chain
            .joints
            .iter()
            .map(|j| j.kind == JointKind::Continuous)
            .collect();
        assert_eq!(set.continuous, continuous, "{name}");
        assert_eq!(
            set.seed("mid").unwrap(),
            chain.mid_configuration().as_slice()
        );
        assert!(set.seed("zero").is_ok() && set.seed("mid+0.1").is_ok());

        for (i, s) in set.samples.iter().enumerate() {
            assert!(
                chain.within_limits(&s.q),
                "{name} sample {i}: q outside the limits"
            );
            let tip = chain.fk(&s.q);
            let dp = (tip.translation.vector - Vector3::from(s.position)).norm();
            let [x, y, z, w] = s.quaternion;
            let r = UnitQuaternion::from_quaternion(Quaternion::new(w, x, y, z));
            let dr = UnitQuaternion::from_rotation_matrix(&tip.rotation).angle_to(&r);
            assert!(
                dp <= 1e-12 && dr <= 1e-12,
                "{name} sample {i}: FK differs from the stored pose by {dp:e} m, {dr:e} rad"
            );
        }
    }
}

#[test]
fn files_are_up_to_date() {
    for (name, _) in SETS {
        let Some((set, chain)) = load(name) else {
            continue;
        };
        let seed = set
            .rng_seed
            .unwrap_or_else(|| panic!("{name}: no rng_seed"));
        let fresh = match set.paths.first() {
            None => TargetSet::generate(
                &chain,
                &set.urdf,
                set.samples.len(),
                seed,
                set.position_only,
            ),
            Some(p) => TargetSet::generate_paths(
                &chain,
                &set.urdf,
                set.paths.len(),
                p.len,
                seed,
                set.position_only,
            ),
        };
        let hint = "regenerate with the commands in benches/README.md";
        assert_eq!(set.seeds, fresh.seeds, "{name}: seeds; {hint}");
        assert_eq!(set.paths, fresh.paths, "{name}: paths; {hint}");
        for (i, (a, b)) in set.samples.iter().zip(&fresh.samples).enumerate() {
            // The joint values are plain arithmetic on the generator's
            // output and parse exactly (serde_json's float_roundtrip): equal
            // bit for bit. The poses go through sin/cos, whose last bit may
            // differ between platforms' maths libraries.
            let same = a.q == b.q
                && close(&a.position, &b.position, 1e-14)
                && close(&a.quaternion, &b.quaternion, 1e-14);
            assert!(same, "{name} sample {i} differs: {a:?} vs {b:?}; {hint}");
        }
    }
}

#[test]
fn paths_are_continuous() {
    for (name, _) in SETS {
        let Some((set, chain)) = load(name) else {
            continue;
        };
        if set.paths.is_empty() {
            continue;
        }
        let mut first = 0;
        for (k, path) in set.paths.iter().enumerate() {
            let samples = &set.samples[first..first + path.len];
            assert_eq!(
                path.start, samples[0].q,
                "{name} path {k}: starts off its first target"
            );
            for (i, w) in samples.windows(2).enumerate() {
                let (a, b) = (chain.fk(&w[0].q), chain.fk(&w[1].q));
                let moved = (b.translation.vector - a.translation.vector).norm();
                let r = UnitQuaternion::from_rotation_matrix(&a.rotation);
                let turned = rotation_error(&b, &r).norm();
                let step = largest_step(&chain, &w[0].q, &w[1].q);
                assert!(
                    moved <= 1e-3 + 1e-12 && turned <= 0.01 + 1e-12 && step <= 0.01 + 1e-12,
                    "{name} path {k}, target {i}: {moved} m, {turned} rad, joint step {step}"
                );
            }
            first += path.len;
        }
        assert_eq!(first, set.samples.len(), "{name}");
    }
}

/// `make_targets` writes the URDF path as given, relative to the output,
/// without resolving symlinks: with `../shared` a symlink beside the clone,
/// regenerating a shared robot's set must give the committed path (it gave
/// the symlink's target, and `scripts/readme-commands` failed).
#[test]
fn make_targets_writes_the_urdf_path_as_given_through_a_symlink() {
    // Examples are built beside the test binaries (target/<profile>/).
    let exe = std::env::current_exe().unwrap();
    let tool = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/make_targets");
    if !tool.exists() {
        eprintln!("SKIP: {} not built", tool.display());
        return;
    }
    let dir = common::TempDir::new("make-targets-symlink");
    std::os::unix::fs::symlink(
        common::project_dir().join("urdf"),
        dir.path().join("robots"),
    )
    .unwrap();
    let out = std::process::Command::new(&tool)
        .args([
            "--urdf",
            "robots/arm.urdf",
            "--n",
            "10",
            "--output",
            "sets/arm.json",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let set = TargetSet::load(dir.path().join("sets/arm.json")).unwrap();
    assert_eq!(set.urdf, "../robots/arm.urdf");
    assert!(set.urdf_path().exists(), "{}", set.urdf_path().display());
}
