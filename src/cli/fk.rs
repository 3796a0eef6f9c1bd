//! `arm_ik fk`: joint angles in, the tip's pose out (with `--all`, every
//! link of the chain): what `solve` answers, run the other way, to make
//! targets and to check answers.

use super::robot::LinkArgs;
use super::values;
use arm_ik::model::{ChainSelection, LinkPose, RobotTree, Transform};
use nalgebra::UnitQuaternion;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The URDF file.
    #[arg(long)]
    urdf: PathBuf,
    #[command(flatten)]
    links: LinkArgs,
    /// Joint positions, one per moving joint of the chain in chain order
    /// (`arm_ik check` lists them): rad, or m for prismatic joints; each
    /// finite, at most 1e6 in size.
    #[arg(long, required = true, value_delimiter = ',', allow_hyphen_values = true,
          value_parser = values::finite)]
    joints: Vec<f64>,
    /// Every link from the base to the tip, not only the tip.
    #[arg(long)]
    all: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// A pose as `solve` takes it: position (m) and quaternion `x,y,z,w`, and
/// the same rotation as fixed-axis roll, pitch, yaw (rad, URDF's `rpy`).
fn pose_json(t: &Transform) -> serde_json::Value {
    let q = UnitQuaternion::from_rotation_matrix(&t.rotation);
    let (r, p, y) = t.rotation.euler_angles();
    let v = &t.translation.vector;
    json!({
        "position": [v.x, v.y, v.z],
        "orientation": [q.i, q.j, q.k, q.w],
        "rpy": [r, p, y],
    })
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let tree = RobotTree::from_file(&a.urdf)?;
    let sel = ChainSelection::new(a.links.base.as_deref(), a.links.tip.as_deref());
    let chain = tree.chain(&sel).map_err(super::robot::chain_error)?;
    if a.joints.len() != chain.dof() {
        anyhow::bail!(
            "--joints: {} values for the {} moving joints of {} -> {} ({})",
            a.joints.len(),
            chain.dof(),
            chain.base,
            chain.tip,
            chain.joint_names().join(", ")
        );
    }
    for (j, &q) in chain.joints.iter().zip(&a.joints) {
        if !j.limits.contains(q) {
            errln!(
                "arm_ik fk: warning: {} = {q} is outside its limits [{}, {}]; the pose is where it would be",
                j.name,
                j.limits.lower,
                j.limits.upper
            );
        }
    }
    let links = tree.link_poses(&sel, &a.joints)?;
    let tip = &links.last().expect("the tip is a link").pose;
    if a.json {
        let mut out = json!({
            "source": chain.source,
            "base": chain.base,
            "tip": chain.tip,
            "joint_names": chain.joint_names(),
            "q": a.joints,
        });
        out.as_object_mut()
            .expect("an object")
            .extend(pose_json(tip).as_object().expect("an object").clone());
        if a.all {
            let all: Vec<serde_json::Value> = links.iter().map(link_json).collect();
            out["links"] = json!(all);
        }
        outln!("{}", serde_json::to_string_pretty(&out)?)?;
    } else if a.all {
        outln!(
            "{:<24} {:<24} {:>9} {:>9} {:>9}  {:>8} {:>8} {:>8} {:>8}",
            "link",
            "joint",
            "x",
            "y",
            "z",
            "qx",
            "qy",
            "qz",
            "qw"
        )?;
        for l in &links {
            let (p, q) = parts(&l.pose);
            outln!(
                "{:<24} {:<24} {:>9.5} {:>9.5} {:>9.5}  {:>8.5} {:>8.5} {:>8.5} {:>8.5}",
                l.link,
                l.joint.as_deref().unwrap_or("-"),
                p[0],
                p[1],
                p[2],
                q[0],
                q[1],
                q[2],
                q[3]
            )?;
        }
    } else {
        let (p, q) = parts(tip);
        let (r, pi, y) = tip.rotation.euler_angles();
        outln!("{} in {}:", chain.tip, chain.base)?;
        outln!("  position     {:.6},{:.6},{:.6}", p[0], p[1], p[2])?;
        outln!(
            "  orientation  {:.6},{:.6},{:.6},{:.6}  (x,y,z,w; rpy {r:.6},{pi:.6},{y:.6} rad)",
            q[0],
            q[1],
            q[2],
            q[3]
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Position and quaternion `x,y,z,w`.
fn parts(t: &Transform) -> ([f64; 3], [f64; 4]) {
    let q = UnitQuaternion::from_rotation_matrix(&t.rotation);
    let v = &t.translation.vector;
    ([v.x, v.y, v.z], [q.i, q.j, q.k, q.w])
}

fn link_json(l: &LinkPose) -> serde_json::Value {
    let mut v = json!({"link": l.link, "joint": l.joint});
    v.as_object_mut()
        .expect("an object")
        .extend(pose_json(&l.pose).as_object().expect("an object").clone());
    v
}
