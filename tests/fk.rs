//! `arm_ik fk` against an independent forward kinematics, the `k` crate's:
//! every link of every test chain at random joint positions, as a user
//! reads the command's JSON.

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

mod common;

use arm_ik::model::Chain;
use common::{TestRng, all_chains, random_q};
use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use serde_json::Value;
use std::path::Path;

/// `arm_ik fk --all --json` on a chain at `q`.
fn fk(path: &Path, base: Option<&str>, tip: Option<&str>, q: &[f64]) -> Value {
    let joints: Vec<String> = q.iter().map(|x| format!("{x:e}")).collect();
    let joints = joints.join(",");
    let mut args = vec!["fk", "--urdf", path.to_str().unwrap(), "--joints", &joints];
    args.extend(["--all", "--json"]);
    if let Some(b) = base {
        args.extend(["--base", b]);
    }
    if let Some(t) = tip {
        args.extend(["--tip", t]);
    }
    let out = common::arm_ik(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn vec3(v: &Value) -> Vector3<f64> {
    Vector3::from_iterator((0..3).map(|i| v[i].as_f64().unwrap()))
}

fn quat(v: &Value) -> UnitQuaternion<f64> {
    let c: Vec<f64> = (0..4).map(|i| v[i].as_f64().unwrap()).collect();
    UnitQuaternion::new_unchecked(Quaternion::new(c[3], c[0], c[1], c[2]))
}

/// Each link's pose, relative to the base link, from k: its serial chain
/// from k's root, set to the leading joint positions it has.
fn k_pose(kc: &k::Chain<f64>, base: &str, link: &str, q: &[f64]) -> (Vector3<f64>, [[f64; 3]; 3]) {
    let to_base = k::SerialChain::from_end(kc.find_link(base).unwrap()).end_transform();
    let s = k::SerialChain::from_end(kc.find_link(link).unwrap());
    s.set_joint_positions_unchecked(&q[..s.dof()]);
    let t = to_base.inverse() * s.end_transform();
    let v = t.translation.vector;
    let m = t.rotation.to_rotation_matrix();
    (
        Vector3::new(v.x, v.y, v.z),
        std::array::from_fn(|r| std::array::from_fn(|c| m[(r, c)])),
    )
}

#[test]
fn fk_gives_every_link_where_k_puts_it() {
    for (i, (path, base, tip)) in all_chains().iter().enumerate() {
        let chain = Chain::from_urdf_file(path, *base, *tip).unwrap();
        let kc = k::Chain::<f64>::from_urdf_file(path).unwrap();
        let mut rng = TestRng::new(700 + i as u64);
        for _ in 0..3 {
            let q = random_q(&chain, &mut rng);
            let v = fk(path, *base, *tip, &q);
            let links = v["links"].as_array().unwrap();
            assert_eq!(links[0]["link"], chain.base.as_str());
            assert_eq!(links.last().unwrap()["link"], chain.tip.as_str());
            assert_eq!(v["position"], links.last().unwrap()["position"]);
            for l in links {
                let name = l["link"].as_str().unwrap();
                let (p, m) = k_pose(&kc, &chain.base, name, &q);
                let what = format!("{} {name} at {q:?}", path.display());
                assert!((vec3(&l["position"]) - p).norm() < 1e-9, "{what}: {l}");
                let ours = quat(&l["orientation"]).to_rotation_matrix();
                for (r, row) in m.iter().enumerate() {
                    for (c, x) in row.iter().enumerate() {
                        assert!((ours[(r, c)] - x).abs() < 1e-9, "{what}: {l}");
                    }
                }
            }
        }
    }
}

/// A wrong number of joints names them; a joint past its limit is a
/// warning, not a refusal (the pose is still where it would be).
#[test]
fn fk_says_which_joints_it_wants() {
    let out = common::arm_ik(&["fk", "--urdf", "urdf/arm.urdf", "--joints", "0,0"]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(
        e.contains("2 values for the 5 moving joints") && e.contains("wrist_roll"),
        "{e}"
    );
    let out = common::arm_ik(&["fk", "--urdf", "urdf/arm.urdf", "--joints", "0,0,9,0,0"]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{e}");
    assert!(e.contains("elbow = 9 is outside its limits"), "{e}");
}
