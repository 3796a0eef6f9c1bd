//! The Dynamixel arms the project ships servo files for, driven the way a
//! user drives them: `arm_ik drive` with config/servos_koch.yaml and
//! config/servos_open_manipulator_x.yaml, and the node with `sim: false`
//! (`run::build_node`, what ik_node and the no-ROS runner use), each
//! against the simulated bus holding that robot's servos (ids, models,
//! the gripper in current-based position mode), on the stand-ins of the
//! robots' URDFs (same joint names and limits). Needs `python3` (SKIP
//! without it, unless `CI` is set).
#![cfg(feature = "app")]

mod common;

use arm_ik::model::Chain;
use arm_ik::servo::calibration::Calibration;
use common::bus_sim::{Sim, ids};
use common::dynamixel::KOCH_BUS;
use common::{TempDir, have_python, project_dir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// One robot: its stand-in URDF and chain, its servo file, and the
/// simulated bus that matches it.
struct Robot {
    urdf: &'static str,
    base: &'static str,
    tip: &'static str,
    config: &'static str,
    bus: &'static [&'static str],
}

const KOCH: Robot = Robot {
    urdf: "tests/data/koch_follower_standin.urdf",
    base: "base_link",
    tip: "link_5",
    config: "servos_koch.yaml",
    bus: KOCH_BUS,
};

const OPEN_MANIPULATOR_X: Robot = Robot {
    urdf: "tests/data/open_manipulator_x_standin.urdf",
    base: "link1",
    tip: "end_effector_link",
    config: "servos_open_manipulator_x.yaml",
    bus: &[
        "--ids",
        "11,12,13,14,15",
        "--default-model",
        "xm430-w350",
        "--mode",
        "15:5",
    ],
};

impl Robot {
    fn chain(&self) -> Chain {
        let urdf = project_dir().join(self.urdf);
        Chain::from_urdf_file(urdf, Some(self.base), Some(self.tip)).unwrap()
    }

    /// The robot's servo file with a faster start-up move (the tests take
    /// seconds) and the 300 ms reply timeout the other bus tests use (the
    /// simulator is a Python process a loaded machine may not schedule for
    /// 100 ms, which is not what these tests check), written into `dir`.
    fn config(&self, dir: &Path) -> (PathBuf, Calibration) {
        let text = common::project_config(self.config)
            .replace("startup_speed: 0.3", "startup_speed: 2.0")
            .replace("reply_timeout_ms: 100", "reply_timeout_ms: 300");
        assert!(text.contains("startup_speed: 2.0") && text.contains("reply_timeout_ms: 300"));
        let path = dir.join(self.config);
        std::fs::write(&path, &text).unwrap();
        let cal = Calibration::from_yaml(&text, self.config, &self.chain()).unwrap();
        (path, cal)
    }

    /// The robot's bus, plugged in at `link`.
    fn bus(&self, dir: &Path, link: &Path) -> Sim {
        let sim = Sim::start("dynamixel_bus.py", &dir.join("log.jsonl"), self.bus);
        sim.plug(link);
        sim
    }

    /// `arm_ik drive` of `joints` (the chain's, then the gripper's) on
    /// this robot's bus: checks it streamed to the connected bus and every
    /// servo's last goal is the command for its joint.
    fn drive(&self, joints: &[f64]) {
        let dir = TempDir::new("dxl-drive");
        let link = dir.path().join("bus");
        let sim = self.bus(dir.path(), &link);
        let (config, cal) = self.config(dir.path());
        let list: Vec<String> = joints.iter().map(f64::to_string).collect();
        let out = Command::new(env!("CARGO_BIN_EXE_arm_ik"))
            .current_dir(project_dir())
            .args(["drive", "--urdf", self.urdf, "--base", self.base])
            .args(["--tip", self.tip, "--config", config.to_str().unwrap()])
            .args(["--port", link.to_str().unwrap(), "--json"])
            .args(["--joints", &list.join(","), "--hold", "3"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {stderr}", self.config);
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["kind"], "dynamixel", "{json}");
        assert_eq!(json["connected"], true, "{json}\n{stderr}");
        assert_eq!(json["ramping"], false, "{json}\n{stderr}");
        let mut want = vec![0; cal.joints.len()];
        cal.commands(joints, &mut want).unwrap();
        assert_eq!(json["commands"], serde_json::json!(want), "{json}");
        for (id, c) in ids(&cal).into_iter().zip(want) {
            assert_eq!(sim.goals(id).last(), Some(&c), "servo {id}: {json}");
        }
    }
}

#[test]
fn drive_poses_the_koch_follower_gripper_included() {
    if have_python() {
        KOCH.drive(&[0.3, -0.4, 0.5, -0.3, 0.2, -0.8]);
    }
}

#[test]
fn drive_poses_the_open_manipulator_x_gripper_included() {
    if have_python() {
        OPEN_MANIPULATOR_X.drive(&[0.5, -0.4, 0.3, 0.6, 0.01]);
    }
}

/// The node as ik_node runs it with `sim: false` and the Koch servo file:
/// the bus is found, a target is solved and reached, and the joint state
/// (the servos' measured positions) puts the tip there. The output also
/// drives the gripper, beside the chain: the node moves the arm and the
/// gripper holds where it was.
#[test]
fn the_node_with_sim_false_drives_the_koch_follower_to_the_target() {
    use arm_ik::node::{MemoryNode, NodeParams, TargetMsg};
    if !have_python() {
        return;
    }
    let dir = TempDir::new("dxl-node");
    let link = dir.path().join("bus");
    let sim = KOCH.bus(dir.path(), &link);
    let (config, _) = KOCH.config(dir.path());
    let chain = KOCH.chain();
    assert_eq!(chain.extras.len(), 1, "joint_6, the gripper");
    let params = NodeParams {
        sim: false,
        servo_config: config.display().to_string(),
        port: link.display().to_string(),
        protocol: "dynamixel".into(),
        ..NodeParams::default()
    };
    let mut node = MemoryNode::new(arm_ik::run::build_node(&params, &chain).unwrap().core);
    let goal = [0.3, 0.4, -0.6, 0.3, 0.2];
    let p = chain.fk(&goal).translation.vector;
    node.push_target(TargetMsg::position([p.x, p.y, p.z]));
    // The servos measure in ticks of 0.088°: the tip to a few millimetres,
    // about 2 s in when the machine is idle.
    let tip =
        |js: &arm_ik::node::JointState| chain.fk(&js.position[..chain.dof()]).translation.vector;
    let js = common::tick_until(&mut node, Duration::from_secs(20), |_, js| {
        (tip(js) - p).norm() < 3e-3
    })
    .expect("no joint state");
    let status = node.core().status();
    let reached = tip(&js);
    assert!(
        (reached - p).norm() < 3e-3,
        "tip {reached} for target {p}: {status:?}"
    );
    // The bus was found once and never lost (a reconnection counts again).
    let link = common::link_status(&node);
    assert_eq!(link.connects, 1, "{link:?}");
    let gripper = sim.goals(6);
    assert!(
        !gripper.is_empty() && gripper.iter().all(|&g| g == 2048),
        "{gripper:?}"
    );
}
