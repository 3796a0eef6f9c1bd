//! Our forward kinematics against the `k` crate's, and our Jacobian against
//! finite differences of our forward kinematics.
//!
//! `k` (0.32) builds one tree from the URDF root and `SerialChain::from_end`
//! runs from that root to the given link. Our chains start at their base
//! link, so the reference pose is `inverse(k pose of base) * k pose of tip`;
//! when the base is the root (all chains here but UR5, whose root is
//! `world`) the base pose is the identity. `k` links against an older
//! nalgebra than ours, so poses are compared as plain `f64` arrays.

mod common;

use arm_ik::model::{Chain, Frames, JointKind, Transform};
use common::{TestRng, all_chains, random_q};
use nalgebra::Vector3;
use std::path::Path;

const CONFIGS: usize = 200;

/// Translation then the rotation matrix row by row.
type Pose12 = [f64; 12];

/// Packs a translation and a rotation matrix given as `m(row, col)`.
fn pose12(xyz: [f64; 3], m: impl Fn(usize, usize) -> f64) -> Pose12 {
    std::array::from_fn(|i| {
        if i < 3 {
            xyz[i]
        } else {
            m((i - 3) / 3, (i - 3) % 3)
        }
    })
}

fn ours(t: &Transform) -> Pose12 {
    let v = &t.translation.vector;
    pose12([v.x, v.y, v.z], |r, c| t.rotation.matrix()[(r, c)])
}

/// `k`'s pose, read through its own (older) nalgebra.
fn theirs(t: &k::Isometry3<f64>) -> Pose12 {
    let v = &t.translation.vector;
    let m = t.rotation.to_rotation_matrix();
    pose12([v.x, v.y, v.z], |r, c| m[(r, c)])
}

fn max_diff(a: &Pose12, b: &Pose12) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn load(path: &Path, base: Option<&str>, tip: Option<&str>) -> Chain {
    Chain::from_urdf_file(path, base, tip).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn fk_matches_k(path: &Path, base: Option<&str>, tip: Option<&str>, seed: u64) {
    let chain = load(path, base, tip);
    let what = format!("{} {}->{}", path.display(), chain.base, chain.tip);

    let kc = k::Chain::<f64>::from_urdf_file(path).unwrap();
    let k_tip = k::SerialChain::from_end(kc.find_link(&chain.tip).unwrap());
    let k_base = k::SerialChain::from_end(kc.find_link(&chain.base).unwrap());
    // Between k's root and our base only fixed joints (checked), so the
    // base pose does not depend on q.
    assert_eq!(k_base.dof(), 0, "{what}: moving joints above the base");
    let base_inv = k_base.end_transform().inverse();

    let k_names: Vec<String> = k_tip.iter_joints().map(|j| j.name.clone()).collect();
    assert_eq!(k_names, chain.joint_names(), "{what}: joint order");
    assert_eq!(k_tip.dof(), chain.dof(), "{what}: DOF");
    // k agrees on the limits of the bounded joints (continuous joints that
    // carry a <limit> tag are bounded in k, unbounded for us).
    for (kj, j) in k_tip.iter_joints().zip(&chain.joints) {
        if j.kind != JointKind::Continuous {
            let r = kj.limits.expect("bounded joint");
            assert_eq!((r.min, r.max), (j.limits.lower, j.limits.upper), "{what}");
        }
    }

    let mut rng = TestRng::new(seed);
    let mut worst = 0.0_f64;
    for n in 0..CONFIGS {
        let q = random_q(&chain, &mut rng);
        assert!(chain.within_limits(&q));
        // Unchecked: k would refuse a continuous joint past its URDF <limit>.
        k_tip.set_joint_positions_unchecked(&q);
        let reference = theirs(&(base_inv * k_tip.end_transform()));
        let got = ours(&chain.fk(&q));
        let d = max_diff(&got, &reference);
        assert!(
            d <= 1e-9,
            "{what}: config #{n} q={q:?}\n ours  {got:?}\n k     {reference:?}\n diff {d:e}"
        );
        worst = worst.max(d);
    }
    // The comparison is not vacuous: poses move with q.
    let a = ours(&chain.fk(&random_q(&chain, &mut rng)));
    let b = ours(&chain.fk(&random_q(&chain, &mut rng)));
    assert!(max_diff(&a, &b) > 1e-3, "{what}: FK ignores q?");
    eprintln!("{what}: worst |ours - k| = {worst:e}");
}

#[test]
fn fk_matches_k_on_every_chain() {
    let chains = all_chains();
    for (i, (path, base, tip)) in chains.iter().enumerate() {
        fk_matches_k(path, *base, *tip, 1000 + i as u64);
    }
}

#[test]
fn ur5_base_is_below_the_root() {
    // The one chain where k's root (`world`) differs from our base.
    let Some(dir) = common::shared_dir() else {
        return;
    };
    let path = dir.join("robots/ur5_robot.urdf");
    let kc = k::Chain::<f64>::from_urdf_file(&path).unwrap();
    let root_link = kc
        .iter()
        .next()
        .unwrap()
        .link()
        .as_ref()
        .unwrap()
        .name
        .clone();
    assert_eq!(root_link, "world");
    fk_matches_k(&path, Some("base_link"), Some("tool0"), 42);
    // From the root the poses are the same (world_joint is the identity).
    fk_matches_k(&path, None, Some("tool0"), 43);
}

// ---- Jacobian against finite differences ----

/// The rotation vector (axis * angle) of a rotation matrix, accurate for
/// tiny angles: the angle comes from atan2(|skew part|, cos), not from
/// acos(cos), which loses half the digits near 0 (nalgebra's `scaled_axis`
/// is off by ~1e-5 relative for a 2e-6 rad rotation).
fn rotation_log(r: &nalgebra::Matrix3<f64>) -> Vector3<f64> {
    let s = Vector3::new(
        r[(2, 1)] - r[(1, 2)],
        r[(0, 2)] - r[(2, 0)],
        r[(1, 0)] - r[(0, 1)],
    ) / 2.0;
    let sin = s.norm();
    let cos = (r.trace() - 1.0) / 2.0;
    assert!(cos > 0.0, "rotation log used far from identity");
    if sin == 0.0 {
        Vector3::zeros()
    } else {
        s * (sin.atan2(cos) / sin)
    }
}

/// Central differences of our FK: position columns, and angular columns
/// from the rotation log of R(q+h) R(q-h)^T / 2h.
fn fd_jacobian(chain: &Chain, q: &[f64], h: f64) -> Vec<(Vector3<f64>, Vector3<f64>)> {
    (0..q.len())
        .map(|i| {
            let mut qp = q.to_vec();
            let mut qm = q.to_vec();
            qp[i] += h;
            qm[i] -= h;
            let (tp, tm) = (chain.fk(&qp), chain.fk(&qm));
            let lin = (tp.translation.vector - tm.translation.vector) / (2.0 * h);
            let ang = rotation_log(&(tp.rotation * tm.rotation.inverse()).into_inner()) / (2.0 * h);
            (lin, ang)
        })
        .collect()
}

fn jacobian_matches_fd(path: &Path, base: Option<&str>, tip: Option<&str>, seed: u64) {
    let chain = load(path, base, tip);
    let what = format!("{} {}->{}", path.display(), chain.base, chain.tip);
    let mut frames = Frames::new(&chain);
    let mut rng = TestRng::new(seed);
    for n in 0..50 {
        let q = random_q(&chain, &mut rng);
        let tip_pose = chain.jacobian(&q, &mut frames);
        assert!(
            max_diff(&ours(&tip_pose), &ours(&chain.fk(&q))) < 1e-15,
            "{what}: jacobian's tip pose differs from fk"
        );
        for (i, (col, (lin, ang))) in frames
            .columns
            .iter()
            .zip(fd_jacobian(&chain, &q, 1e-6))
            .enumerate()
        {
            let name = &chain.joints[i].name;
            assert!(
                (col.linear - lin).amax() < 1e-6,
                "{what}: config #{n}, joint {name}: linear {:?} vs FD {:?}",
                col.linear,
                lin
            );
            assert!(
                (col.angular - ang).amax() < 1e-6,
                "{what}: config #{n}, joint {name}: angular {:?} vs FD {:?}",
                col.angular,
                ang
            );
            if chain.joints[i].kind.rotates() {
                assert!(
                    (col.angular.norm() - 1.0).abs() < 1e-12,
                    "{what}: unit axis"
                );
            }
        }
    }
}

#[test]
fn jacobian_matches_finite_differences() {
    let chains = all_chains();
    for (i, (path, base, tip)) in chains.iter().enumerate() {
        jacobian_matches_fd(path, *base, *tip, 2000 + i as u64);
    }
}
