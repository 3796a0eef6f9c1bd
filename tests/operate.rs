//! Operating the arm through the node core and the in-memory transport, as
//! a user of `ik_node` (or of the stdin line format) does: the gripper and
//! the joints off the chain, joint commands, relax and enable, named poses
//! and live tuning.

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

mod common;

use arm_ik::ik::SolverKind;
use arm_ik::model::Chain;
use arm_ik::node::{
    Command, JointCommandMsg, JointState, LiveParams, MemoryNode, NodeCore, NodeParams,
    NodeSettings, ParamValue, PoseFile, RejectReason, TargetMsg,
};
use arm_ik::servo::{Effort, ServoOutput, VirtualServo};
use nalgebra::Vector3;
use std::sync::{Arc, Mutex};

const DT: f64 = 0.02; // the default 50 Hz
const GRIPPER: usize = 5;
const MIRROR: usize = 6;

fn arm() -> Chain {
    Chain::from_urdf_file(common::project_urdf("arm.urdf"), None, None).unwrap()
}

fn node(chain: &Chain) -> MemoryNode {
    MemoryNode::new(NodeCore::from_settings(chain, &NodeSettings::default()).unwrap())
}

/// Ticks `n` times from tick `k0` and returns the joint states.
fn run<S: ServoOutput>(node: &mut MemoryNode<S>, k0: usize, n: usize) -> Vec<JointState> {
    for k in k0..k0 + n {
        node.tick(k as f64 * DT);
    }
    node.drain_joint_states()
}

fn joints(pairs: &[(&str, f64)]) -> Command {
    Command::JointCommand(JointCommandMsg {
        name: pairs.iter().map(|(n, _)| n.to_string()).collect(),
        position: pairs.iter().map(|&(_, q)| q).collect(),
    })
}

/// The largest step of axis `i` between consecutive joint states.
fn largest_step(states: &[JointState], i: usize) -> f64 {
    states
        .windows(2)
        .map(|w| (w[1].position[i] - w[0].position[i]).abs())
        .fold(0.0, f64::max)
}

#[test]
fn joint_states_carry_every_moving_joint_the_mirror_jaw_mirroring_the_gripper() {
    let chain = arm();
    let mut n = node(&chain);
    n.push_command(Command::Gripper { position: 0.8 });
    let states = run(&mut n, 0, 100);
    for js in &states {
        assert_eq!(js.name.len(), 7);
        assert_eq!(&js.name[GRIPPER..], ["gripper", "gripper_mirror"]);
        assert_eq!(js.position.len(), 7);
        assert_eq!(js.position[MIRROR], -js.position[GRIPPER]);
        assert_eq!(js.velocity[MIRROR], -js.velocity[GRIPPER]);
    }
    assert_eq!(states.last().unwrap().position[GRIPPER], 0.8);
    // The arm did not move for the gripper.
    assert_eq!(
        states.last().unwrap().position[..5],
        chain.mid_configuration()
    );
}

#[test]
fn the_gripper_reaches_its_command_at_its_speed_limit_and_no_faster() {
    let chain = arm();
    let mut n = node(&chain);
    let l = n.core().motion().limits()[GRIPPER];
    // The URDF's 3 rad/s under the node's default 2 rad/s cap.
    assert_eq!((l.lower, l.upper, l.velocity), (0.0, 1.2, 2.0));
    n.push_command(Command::OpenGripper);
    let states = run(&mut n, 0, 100);
    let at = states
        .iter()
        .position(|js| js.position[GRIPPER] == 1.2)
        .expect("never opened");
    // Ramping up and down at the acceleration limit, cruising at the speed
    // limit: 0.25 s + 0.35 s + 0.25 s for 1.2 rad.
    let best = 1.2 / l.velocity + l.velocity / l.acceleration;
    let took = (at + 1) as f64 * DT;
    assert!(
        took >= best - DT && took <= best + 3.0 * DT,
        "opened in {took} s, {best} s at the limits"
    );
    assert!(largest_step(&states, GRIPPER) <= l.velocity * DT * (1.0 + 1e-9));
    // Clamped to its limits; closing goes to 0.
    n.push_command(Command::Gripper { position: 5.0 });
    let states = run(&mut n, 100, 50);
    assert!(states.iter().all(|js| js.position[GRIPPER] == 1.2));
    n.push_command(Command::CloseGripper);
    let states = run(&mut n, 150, 100);
    assert_eq!(states.last().unwrap().position[GRIPPER], 0.0);
    let g = n.core().status().gripper.clone().unwrap();
    assert_eq!(
        (g.joint.as_str(), g.command, g.stalled),
        ("gripper", 0.0, false)
    );
}

/// Bus servos whose gripper closes on an object at `object` rad: the jaw
/// stops there and its servo's load rises while it is told to close
/// further.
#[derive(Clone)]
struct GripOnObject {
    object: f64,
    told: Arc<Mutex<Vec<f64>>>,
}

impl GripOnObject {
    fn gripper_told(&self) -> f64 {
        self.told.lock().unwrap()[GRIPPER]
    }
}

impl ServoOutput for GripOnObject {
    fn command(&mut self, positions: &[f64], _t: f64) {
        self.told.lock().unwrap().clone_from(&positions.to_vec());
    }
    fn feedback(&self) -> Option<Vec<f64>> {
        let mut q = self.told.lock().unwrap().clone();
        q[GRIPPER] = q[GRIPPER].max(self.object);
        Some(q)
    }
    fn measured(&self) -> bool {
        true
    }
    fn effort(&self) -> Option<Vec<Effort>> {
        let pushing = self.gripper_told() < self.object - 0.01;
        let mut e = vec![Effort::default(); 6];
        e[GRIPPER].load = Some(if pushing { -0.9 } else { -0.05 });
        Some(e)
    }
}

#[test]
fn a_gripper_blocked_by_an_object_holds_where_it_stalled_until_a_new_command() {
    let chain = arm();
    let mut start = chain.mid_configuration();
    start.push(1.2); // open
    let servos = GripOnObject {
        object: 0.5,
        told: Arc::new(Mutex::new(start)),
    };
    let settings = NodeSettings::default();
    let (solver, common) = settings.solver_config(&chain).unwrap();
    let config = settings.node_config(&chain).unwrap();
    let core = NodeCore::new(&chain, solver, common, config, servos.clone()).unwrap();
    let mut n = MemoryNode::new(core);
    n.push_command(Command::CloseGripper);
    let states = run(&mut n, 0, 100);
    let g = n.core().status().gripper.clone().unwrap();
    assert!(g.stalled, "{g:?}");
    assert_eq!(g.position, 0.5, "{g:?}");
    assert_eq!(g.command, 0.5, "holds where it stalled: {g:?}");
    assert_eq!(g.load, Some(-0.05), "no longer pushing: {g:?}");
    // It pushed at most one tick's travel past the object, then held.
    assert!(servos.gripper_told() == 0.5, "{}", servos.gripper_told());
    let last = states.last().unwrap();
    assert_eq!(last.position[GRIPPER], 0.5);
    assert_eq!(last.position[MIRROR], -0.5);
    // Serialised for /diagnostics.
    let json = serde_json::to_string(n.core().status()).unwrap();
    assert!(json.contains(r#""stalled":true"#), "{json}");
    // A new command releases it.
    n.push_command(Command::OpenGripper);
    run(&mut n, 100, 100);
    let g = n.core().status().gripper.clone().unwrap();
    assert!(!g.stalled && g.position == 1.2, "{g:?}");
}

#[test]
fn a_joint_command_reaches_its_pose_within_the_limits_and_replaces_the_target() {
    let chain = arm();
    let mut n = node(&chain);
    n.push_target(TargetMsg::position([0.2, 0.05, 0.15]));
    run(&mut n, 0, 5);
    assert!(n.core().active_target().is_some());
    // The shoulder beyond its limit is clamped to it (the elbow bent up:
    // bent down, the hand would go through the table, which the collision
    // check stops).
    n.push_command(joints(&[
        ("elbow", -1.0),
        ("shoulder", 5.0),
        ("gripper", 0.6),
    ]));
    let states = run(&mut n, 5, 300);
    let last = states.last().unwrap();
    let shoulder_max = chain.joints[1].limits.upper;
    assert_eq!(last.position[1], shoulder_max);
    assert_eq!((last.position[2], last.position[GRIPPER]), (-1.0, 0.6));
    assert!(n.core().active_target().is_none(), "the target was dropped");
    let limits = n.core().motion().limits().to_vec();
    for js in &states {
        for (i, l) in limits.iter().enumerate() {
            assert!(l.lower <= js.position[i] && js.position[i] <= l.upper);
        }
    }
    for (i, l) in limits.iter().enumerate() {
        assert!(largest_step(&states, i) <= l.velocity * DT * (1.0 + 1e-9));
    }
    // A target replaces the joint command in turn.
    let goal = [0.2, 0.05, 0.15];
    n.push_target(TargetMsg::position(goal));
    let last = run(&mut n, 305, 300).pop().unwrap();
    let tip = chain.fk(&last.position[..5]).translation.vector;
    assert!((tip - Vector3::from(goal)).norm() < 1e-3);
}

#[test]
fn bad_joint_commands_are_refused_naming_the_joint() {
    let chain = arm();
    let mut n = node(&chain);
    let refused = |n: &mut MemoryNode, cmd: Command| n.core_mut().command(&cmd, 0.0).unwrap_err();
    let e = refused(&mut n, joints(&[("elbow", 0.1), ("knee", 0.2)]));
    assert_eq!(e.reason, RejectReason::UnknownJoint);
    assert!(e.why.contains("'knee'"), "{}", e.why);
    let e = refused(&mut n, joints(&[("elbow", f64::NAN)]));
    assert_eq!(e.reason, RejectReason::NotFinite);
    assert!(e.why.contains("'elbow'"), "{}", e.why);
    let e = refused(&mut n, joints(&[("gripper_mirror", 0.2)]));
    assert_eq!(e.reason, RejectReason::UnknownJoint);
    assert!(e.why.contains("mimics 'gripper'"), "{}", e.why);
    let s = n.core().status();
    assert_eq!((s.commands.received, s.commands.accepted), (3, 0));
    assert_eq!(s.commands.refused.unknown_joint, 2);
    // Nothing moved.
    let js = run(&mut n, 0, 20).pop().unwrap();
    assert_eq!(js.position[..5], chain.mid_configuration());
}

/// Bus servos that measure where they are; the test moves them "by hand".
#[derive(Clone)]
struct HandMoved {
    at: Arc<Mutex<Vec<f64>>>,
    relaxed: Arc<Mutex<bool>>,
    told: Arc<Mutex<Vec<Vec<f64>>>>,
}

impl ServoOutput for HandMoved {
    fn command(&mut self, positions: &[f64], _t: f64) {
        self.told.lock().unwrap().push(positions.to_vec());
        if !*self.relaxed.lock().unwrap() {
            self.at.lock().unwrap().clone_from(&positions.to_vec());
        }
    }
    fn feedback(&self) -> Option<Vec<f64>> {
        Some(self.at.lock().unwrap().clone())
    }
    fn measured(&self) -> bool {
        true
    }
    fn relax(&mut self) {
        *self.relaxed.lock().unwrap() = true;
    }
    fn enable(&mut self) {
        *self.relaxed.lock().unwrap() = false;
    }
    fn relaxed(&self) -> bool {
        *self.relaxed.lock().unwrap()
    }
}

#[test]
fn relax_refuses_targets_until_enable_and_enable_resumes_where_the_arm_is_without_a_jump() {
    let chain = arm();
    let mut start = chain.mid_configuration();
    start.push(0.0);
    let servos = HandMoved {
        at: Arc::new(Mutex::new(start)),
        relaxed: Arc::new(Mutex::new(false)),
        told: Arc::new(Mutex::new(Vec::new())),
    };
    let settings = NodeSettings::default();
    let (solver, common) = settings.solver_config(&chain).unwrap();
    let config = settings.node_config(&chain).unwrap();
    let core = NodeCore::new(&chain, solver, common, config, servos.clone()).unwrap();
    let mut n = MemoryNode::new(core);
    n.push_target(TargetMsg::position([0.2, 0.05, 0.15]));
    run(&mut n, 0, 10);
    n.push_command(Command::Relax);
    run(&mut n, 10, 1);
    assert!(servos.relaxed() && n.core().status().relaxed);
    // Refused while relaxed, with the reason.
    let target = Command::Target(TargetMsg::position([0.2, 0.0, 0.2]));
    for cmd in [
        target.clone(),
        joints(&[("elbow", 0.5)]),
        Command::OpenGripper,
        Command::Pose {
            name: "home".into(),
        },
    ] {
        let e = n.core_mut().command(&cmd, 11.0 * DT).unwrap_err();
        assert_eq!(e.reason, RejectReason::Relaxed, "{cmd:?}");
    }
    assert_eq!(n.core().status().targets.rejected.relaxed, 1);
    assert_eq!(n.core().status().commands.refused.relaxed, 3);
    // Limp, the arm is moved by hand: the joint states follow it.
    let by_hand = vec![0.5, 0.2, 0.8, -0.3, 0.1, 0.4];
    servos.at.lock().unwrap().clone_from(&by_hand);
    let js = run(&mut n, 11, 10).pop().unwrap();
    assert_eq!(js.position[..6], by_hand);
    // Enabled, it resumes from there: the first command is where the arm
    // is, give or take what the acceleration limit allows in one tick.
    n.push_command(Command::Enable);
    let told_before = servos.told.lock().unwrap().len();
    run(&mut n, 21, 1);
    assert!(!servos.relaxed() && !n.core().status().relaxed);
    let first = servos.told.lock().unwrap()[told_before].clone();
    assert_eq!(first, by_hand, "enable moved the arm");
    // And targets are taken again.
    n.core_mut().command(&target, 22.0 * DT).unwrap();
    let last = run(&mut n, 22, 300).pop().unwrap();
    let tip = chain.fk(&last.position[..5]).translation.vector;
    assert!((tip - Vector3::new(0.2, 0.0, 0.2)).norm() < 1e-3);
}

#[test]
fn virtual_servos_resume_from_where_they_were_told_after_relax() {
    let chain = arm();
    let mut n = node(&chain);
    n.push_command(joints(&[("elbow", 1.0)]));
    run(&mut n, 0, 20); // still moving
    n.push_command(Command::Relax);
    let held = run(&mut n, 20, 10);
    // Relaxed mid-move: stopped where it was told last.
    assert!(held.windows(2).all(|w| w[0].position == w[1].position));
    n.push_command(Command::Enable);
    let after = run(&mut n, 30, 10);
    assert_eq!(after[0].position, held.last().unwrap().position);
    assert!(after.iter().all(|js| js.position == after[0].position));
}

#[test]
fn named_poses_are_reached_in_joint_space_and_unknown_ones_refused() {
    let chain = arm();
    let file = PoseFile::load(&common::project_dir().join("config/poses_arm.yaml")).unwrap();
    let poses = file.check(&chain).unwrap();
    let home = poses.get("home").unwrap().to_vec();
    let core = NodeCore::from_settings(&chain, &NodeSettings::default())
        .unwrap()
        .with_poses(poses);
    let mut n = MemoryNode::new(core);
    n.push_command(Command::Pose {
        name: "home".into(),
    });
    let last = run(&mut n, 0, 300).pop().unwrap();
    for (axis, q) in home {
        assert_eq!(last.position[axis], q, "axis {axis}");
    }
    let e = n
        .core_mut()
        .command(
            &Command::Pose {
                name: "away".into(),
            },
            0.0,
        )
        .unwrap_err();
    assert_eq!(e.reason, RejectReason::UnknownPose);
    assert!(
        e.why.contains("home") && e.why.contains("rest"),
        "{}",
        e.why
    );
}

#[test]
fn a_live_parameter_change_takes_effect_on_the_next_tick_and_a_bad_one_is_refused() {
    let chain = arm();
    let mut params = LiveParams::new(NodeParams::default());
    params.read();
    params.run_on(chain.clone());
    let mut n =
        MemoryNode::new(NodeCore::from_settings(&chain, &params.settings().unwrap()).unwrap());
    n.push_command(joints(&[("base_yaw", 1.4)]));
    run(&mut n, 0, 30);
    let v0 = n.core().motion().velocity()[0];
    assert!(v0 > 1.0, "{v0}");

    // A bad value: refused by the parameters, nothing changes.
    let e = params
        .set("max_acceleration", ParamValue::Double(-2.0))
        .unwrap_err();
    assert_eq!(e.name(), "max_acceleration");
    assert_eq!(params.params().max_acceleration, 8.0, "the old value stays");
    let e = params
        .set("rate_hz", ParamValue::Double(100.0))
        .unwrap_err();
    assert!(e.to_string().contains("restart"), "{e}");

    // A good one: checked at once, taken at the next tick.
    params.set("max_velocity", ParamValue::Double(0.3)).unwrap();
    params
        .set("solver", ParamValue::String("ccd".into()))
        .unwrap();
    n.core_mut().retune(&params.settings().unwrap()).unwrap();
    assert!(n.core().retune_pending());
    assert_eq!(n.core().motion().limits()[0].velocity, 2.0);
    assert_eq!(n.core().status().solver, SolverKind::Jacobian);
    let states = run(&mut n, 30, 1);
    assert!(!n.core().retune_pending());
    assert!(n.core().motion().limits().iter().all(|l| l.velocity == 0.3));
    assert_eq!(n.core().status().solver, SolverKind::Ccd);
    // The arm keeps moving where it was, slowing at the acceleration limit.
    let v1 = n.core().motion().velocity()[0];
    assert!((v0 - v1).abs() <= 8.0 * DT * (1.0 + 1e-9), "{v0} -> {v1}");
    assert!(states[0].position[0] > 0.0);
    let slowed = run(&mut n, 31, 50);
    assert!(slowed.last().unwrap().velocity[0] <= 0.3);

    // The core refuses what cannot change live, and keeps its settings.
    let mut bad = params.settings().unwrap();
    bad.motion.rate_hz = 100.0;
    let e = n.core_mut().retune(&bad).unwrap_err();
    assert!(e.to_string().contains("rate_hz"), "{e}");
    assert!(!n.core().retune_pending());
}

/// `ros2 param set gripper_open` answered, then `~/open_gripper` at once,
/// before any tick: the command uses the new position (ik_node used the
/// old one until the next tick).
#[test]
fn a_command_right_after_a_live_change_uses_the_new_setting() {
    let chain = arm();
    let mut params = LiveParams::new(NodeParams::default());
    params.read();
    params.run_on(chain.clone());
    let mut n =
        MemoryNode::new(NodeCore::from_settings(&chain, &params.settings().unwrap()).unwrap());
    run(&mut n, 0, 2);
    params
        .set("gripper_open", ParamValue::String("0.9".into()))
        .unwrap();
    n.core_mut().retune(&params.settings().unwrap()).unwrap();
    n.core_mut().command(&Command::OpenGripper, 0.04).unwrap();
    assert!(!n.core().retune_pending());
    // The status shows the gripper's command from the next tick on.
    run(&mut n, 2, 1);
    let g = n.core().status().gripper.clone().unwrap();
    assert_eq!(g.command, 0.9, "{g:?}");
}

#[test]
fn a_robot_without_a_gripper_refuses_gripper_commands() {
    let chain = Chain::from_urdf_file(common::project_urdf("leg.urdf"), None, None).unwrap();
    let mut n = MemoryNode::new(
        NodeCore::<VirtualServo>::from_settings(&chain, &NodeSettings::default()).unwrap(),
    );
    let e = n
        .core_mut()
        .command(&Command::CloseGripper, 0.0)
        .unwrap_err();
    assert_eq!(e.reason, RejectReason::NoGripper);
    assert!(n.core().status().gripper.is_none());
}
