//! The project's own benchmark target sets (`benches/targets/*.json`) are
//! consistent with the robots and up to date with their generator
//! (`examples/make_targets.rs`, i.e. [`TargetSet::generate`]).

mod common;

use arm_ik::bench::TargetSet;
use arm_ik::model::{Chain, JointKind};
use nalgebra::{Quaternion, UnitQuaternion, Vector3};

/// Each file, whether it is position-only, and its size.
const SETS: [(&str, bool); 3] = [
    ("arm.json", false),
    ("arm_position.json", true),
    ("leg.json", true),
];

const N: usize = 1000;

fn load(name: &str) -> (TargetSet, Chain) {
    let path = common::project_dir()
        .join("benches")
        .join("targets")
        .join(name);
    let set = TargetSet::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let chain = Chain::from_urdf_file(set.urdf_path(), Some(&set.base_link), Some(&set.tip_link))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    (set, chain)
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

#[test]
fn files_match_their_robots() {
    for (name, position_only) in SETS {
        let (set, chain) = load(name);
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
        let (set, chain) = load(name);
        let seed = set
            .rng_seed
            .unwrap_or_else(|| panic!("{name}: no rng_seed"));
        let fresh = TargetSet::generate(
            &chain,
            &set.urdf,
            set.samples.len(),
            seed,
            set.position_only,
        );
        let hint = "regenerate with `cargo run --release --example make_targets` (see its docs)";
        assert_eq!(set.seeds, fresh.seeds, "{name}: seeds; {hint}");
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
