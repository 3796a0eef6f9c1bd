//! The node core as a user of the ROS node sees it, through the in-memory
//! transport: targets in, joint states and servo commands out.

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

mod common;

use arm_ik::ik::{Common, SolverConfig, SolverKind};
use arm_ik::model::Chain;
use arm_ik::node::{JointState, MemoryNode, NodeConfig, NodeCore, RejectReason, TargetMsg};
use arm_ik::servo::{ServoOutput, VirtualServo};
use nalgebra::Vector3;
use std::sync::{Arc, Mutex};

const DT: f64 = 0.02; // the default 50 Hz

fn arm() -> Chain {
    Chain::from_urdf_file(common::project_urdf("arm.urdf"), None, None).unwrap()
}

fn node(chain: &Chain) -> MemoryNode {
    let core = NodeCore::with_virtual_servos(
        chain,
        SolverConfig::default_for(SolverKind::Jacobian),
        Common::default(),
        NodeConfig::default(),
    )
    .unwrap();
    MemoryNode::new(core)
}

/// Ticks `n` times from tick `k0` and returns the joint states.
fn run(node: &mut MemoryNode<impl ServoOutput>, k0: usize, n: usize) -> Vec<JointState> {
    for k in k0..k0 + n {
        node.tick(k as f64 * DT);
    }
    node.drain_joint_states()
}

/// The tip where the joint state puts it (the chain's joints come first).
fn tip(chain: &Chain, js: &JointState) -> Vector3<f64> {
    chain.fk(&js.position[..chain.dof()]).translation.vector
}

#[test]
fn a_reachable_target_is_reached_and_joint_states_show_it() {
    let chain = arm();
    let mut n = node(&chain);
    let goal = [0.2, 0.05, 0.15];
    n.push_target(TargetMsg::position(goal));
    let states = run(&mut n, 0, 250); // 5 s
    assert_eq!(states.len(), 250, "one joint state per tick");
    let last = states.last().unwrap();
    // The chain, the gripper, then its mirror jaw (which mimics it).
    assert_eq!(
        &*last.name,
        [
            "base_yaw",
            "shoulder",
            "elbow",
            "wrist_pitch",
            "wrist_roll",
            "gripper",
            "gripper_mirror"
        ]
    );
    let err = (tip(&chain, last) - Vector3::from(goal)).norm();
    assert!(err < 1e-3, "tip {err} m from the target");
    assert!(last.velocity.iter().all(|&v| v == 0.0), "still moving");
    common::assert_limits_kept(&n, &states);
    let s = n.core().status();
    assert_eq!((s.targets.received, s.targets.reached), (1, 1));
    assert!(s.tracking_error < 1e-3 && !s.holding);
    assert_eq!(s.link, "virtual");
    // The virtual servos have caught up with the command by now.
    assert!(s.servo_lag < 1e-6, "servo lag {}", s.servo_lag);
}

#[test]
fn an_unreachable_target_holds_and_reports() {
    let chain = arm();
    let mut n = node(&chain);
    n.push_target(TargetMsg::position([0.2, 0.0, 0.2]));
    let held = run(&mut n, 0, 200).pop().unwrap();

    // 1 m away: the arm reaches 0.42 m.
    n.push_target(TargetMsg::position([1.0, 0.0, 0.2]));
    let states = run(&mut n, 200, 100);
    for js in &states {
        assert_eq!(
            js.position, held.position,
            "moved toward an unreachable target"
        );
    }
    let s = n.core().status();
    assert_eq!(s.targets.unreachable, 1);
    assert!(s.holding);
    assert!(s.last_position_error > 0.5, "{}", s.last_position_error);

    // 4 mm beyond straight up: within max_best_effort_error, so followed.
    n.push_target(TargetMsg::position([0.0, 0.0, 0.419]));
    let last = run(&mut n, 300, 250).pop().unwrap();
    let s = n.core().status();
    assert_eq!((s.targets.best_effort, s.holding), (1, false));
    assert!((tip(&chain, &last) - Vector3::new(0.0, 0.0, 0.419)).norm() < 0.005);
}

/// Records every servo command, to check what hardware would receive.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Vec<f64>>>>);

impl ServoOutput for Recorder {
    fn command(&mut self, positions: &[f64], _t: f64) {
        self.0.lock().unwrap().push(positions.to_vec());
    }
    fn feedback(&self) -> Option<Vec<f64>> {
        None
    }
}

#[test]
fn nan_targets_are_rejected_and_never_reach_the_servos() {
    let chain = arm();
    let rec = Recorder::default();
    let core = NodeCore::new(
        &chain,
        SolverConfig::default_for(SolverKind::Jacobian),
        Common::default(),
        NodeConfig::default(),
        rec.clone(),
    )
    .unwrap();
    let mut n = MemoryNode::new(core);
    n.push_target(TargetMsg::position([0.2, 0.0, 0.2]));
    let mut states = run(&mut n, 0, 10);
    let bad = [
        TargetMsg::position([f64::NAN, 0.0, 0.2]),
        TargetMsg::position([0.2, f64::INFINITY, 0.2]),
        TargetMsg {
            orientation: Some([0.0, f64::NAN, 0.0, 1.0]),
            ..TargetMsg::position([0.2, 0.0, 0.2])
        },
        TargetMsg {
            stamp: f64::NAN,
            ..TargetMsg::position([0.2, 0.0, 0.2])
        },
    ];
    for (k, msg) in bad.iter().enumerate() {
        n.push_target(msg.clone());
        states.extend(run(&mut n, 10 + 10 * k, 10));
    }
    states.extend(run(&mut n, 50, 200));
    let s = n.core().status();
    assert_eq!(s.targets.rejected.not_finite, 4);
    assert_eq!(s.targets.accepted, 1);
    assert_eq!(
        s.last_rejection.as_ref().unwrap().0,
        RejectReason::NotFinite
    );
    let commands = rec.0.lock().unwrap();
    assert_eq!(commands.len(), 250, "one command per tick");
    assert!(commands.iter().flatten().all(|x| x.is_finite()));
    assert!(states.iter().all(|js| {
        js.position
            .iter()
            .chain(&js.velocity)
            .all(|x| x.is_finite())
    }));
    // The good target was still reached.
    let err = (tip(&chain, states.last().unwrap()) - Vector3::new(0.2, 0.0, 0.2)).norm();
    assert!(err < 1e-3, "{err}");
}

#[test]
fn a_target_in_another_frame_is_rejected() {
    let chain = arm();
    let mut n = node(&chain);
    let start = run(&mut n, 0, 1).pop().unwrap();
    n.push_target(TargetMsg {
        frame_id: "world".into(),
        ..TargetMsg::position([0.2, 0.0, 0.2])
    });
    let states = run(&mut n, 1, 50);
    assert!(states.iter().all(|js| js.position == start.position));
    let s = n.core().status();
    assert_eq!(s.targets.rejected.wrong_frame, 1);
    let (reason, why) = s.last_rejection.clone().unwrap();
    assert_eq!(reason, RejectReason::WrongFrame);
    assert!(why.contains("world") && why.contains("base_link"), "{why}");

    // The base link by name is fine.
    n.push_target(TargetMsg {
        frame_id: "base_link".into(),
        ..TargetMsg::position([0.2, 0.0, 0.2])
    });
    run(&mut n, 51, 1);
    assert_eq!(n.core().status().targets.accepted, 1);
}

#[test]
fn stale_targets_are_rejected() {
    let chain = arm();
    let mut n = node(&chain);
    let now = 10.0;
    let at = |stamp| TargetMsg {
        stamp,
        ..TargetMsg::position([0.2, 0.0, 0.2])
    };
    let core = n.core_mut();
    assert_eq!(core.on_target(&at(9.0), now), Some(RejectReason::Stale));
    assert_eq!(core.on_target(&at(11.0), now), Some(RejectReason::Stale));
    assert_eq!(core.on_target(&at(9.8), now), None);
    assert_eq!(core.on_target(&at(0.0), now), None, "0 means now");
    let t = core.status().targets;
    assert_eq!((t.received, t.accepted, t.rejected.stale), (4, 2, 2));
    // A stale target never moves the arm.
    let mut n = node(&chain);
    let start = run(&mut n, 0, 1).pop().unwrap();
    n.push_target(at(0.02 - 0.6));
    assert!(
        run(&mut n, 1, 50)
            .iter()
            .all(|js| js.position == start.position)
    );
}

#[test]
fn a_1khz_moving_target_is_followed_within_all_limits() {
    let chain = arm();
    let mut n = node(&chain);
    // A 5 cm circle once per 2 s, sampled at 1 kHz: 20 targets per tick.
    let circle = |t: f64| {
        let w = std::f64::consts::TAU / 2.0;
        [0.2, 0.05 * (w * t).cos(), 0.2 + 0.05 * (w * t).sin()]
    };
    let ticks = 400;
    let mut states = Vec::new();
    let mut errors = Vec::new();
    for k in 0..ticks {
        let now = k as f64 * DT;
        for j in 0..20 {
            let t = now - DT + (j + 1) as f64 * DT / 20.0;
            n.push_target(TargetMsg {
                stamp: t.max(1e-9),
                ..TargetMsg::position(circle(t))
            });
        }
        n.tick(now);
        let js = n.drain_joint_states().pop().unwrap();
        errors.push((tip(&chain, &js) - Vector3::from(circle(now))).norm());
        states.push(js);
    }
    common::assert_limits_kept(&n, &states);
    let s = n.core().status();
    assert_eq!(s.targets.received, 20 * ticks as u64);
    assert_eq!(s.targets.solved, ticks as u64, "one solve per tick");
    assert_eq!(s.targets.superseded, 19 * ticks as u64);
    assert!((s.loop_rate_hz - 50.0).abs() < 1e-6);
    // Once caught up (after 2 s) the tip stays close to the moving target.
    let worst = errors[100..].iter().cloned().fold(0.0, f64::max);
    assert!(worst < 0.02, "tracking error up to {worst} m");
}

#[test]
fn a_far_target_in_joint_space_moves_smoothly() {
    let chain = arm();
    let mut n = node(&chain);
    // From straight up to low on the right: base yaw alone turns ~80 deg.
    let goal = [0.05, -0.25, 0.1];
    n.push_target(TargetMsg::position(goal));
    let states = run(&mut n, 0, 300);
    common::assert_limits_kept(&n, &states);
    // The arm's joints (the gripper after them is not moved by targets).
    let limits = n.core().motion().limits()[..chain.dof()].to_vec();
    // The first tick can only move as far as the acceleration allows.
    for (i, l) in limits.iter().enumerate() {
        let dq = (states[0].position[i] - chain.mid_configuration()[i]).abs();
        assert!(
            dq <= l.acceleration * DT * DT * (1.0 + 1e-9),
            "joint {i} jumped {dq}"
        );
    }
    let moved = states.last().unwrap().position[0] - states[0].position[0];
    assert!(moved.abs() > 1.0, "base yaw moved only {moved}");
    // It took many ticks, and all joints arrived together.
    let arrived: Vec<usize> = (0..limits.len())
        .map(|i| {
            let fin = states.last().unwrap().position[i];
            states.iter().position(|js| js.position[i] == fin).unwrap()
        })
        .collect();
    let (first, last) = (arrived.iter().min().unwrap(), arrived.iter().max().unwrap());
    assert!(*last > 25, "arrived after {last} ticks: a jump");
    // Synchronisation is approximate (the pace is re-estimated every tick
    // from rest-to-rest times): within an eighth of the move.
    let moving: Vec<usize> = arrived.iter().copied().filter(|&k| k > 0).collect();
    assert!(
        moving.iter().max().unwrap() - moving.iter().min().unwrap() <= (last / 8).max(3),
        "joints arrived at ticks {arrived:?} (first {first})"
    );
    let err = (tip(&chain, states.last().unwrap()) - Vector3::from(goal)).norm();
    assert!(err < 1e-3, "{err}");
}

#[test]
fn virtual_servos_are_the_default_and_start_from_their_feedback() {
    let chain = arm();
    let start = vec![0.3, -0.2, 0.4, 0.1, 0.0];
    let core = NodeCore::new(
        &chain,
        SolverConfig::default_for(SolverKind::Jacobian),
        Common::default(),
        NodeConfig::default(),
        VirtualServo::new(start.clone()),
    )
    .unwrap();
    let mut n = MemoryNode::new(core);
    let js = run(&mut n, 0, 1).pop().unwrap();
    assert_eq!(
        js.position[..5],
        start,
        "started away from the servos' pose"
    );
}

#[test]
fn measured_servos_are_waited_for_and_their_positions_published() {
    let chain = arm();
    let (mut n, present, commands) = common::measuring::node(&chain, None);
    let start = chain.mid_configuration();
    let target = chain.fk(&[0.4, 0.3, -0.6, 0.2, 0.0]).translation.vector;
    n.push_target(TargetMsg::position([target.x, target.y, target.z]));
    // Not connected yet: the arm's pose is unknown, so nothing moves.
    for js in run(&mut n, 0, 10) {
        assert_eq!(js.position[..5], start);
    }
    assert!(commands.lock().unwrap().iter().all(|c| c[..5] == start));
    // Connected: the node starts from where the servos are, and the joint
    // states are their measured positions.
    let at = vec![0.2, -0.1, 0.3, 0.0, 0.1];
    *present.lock().unwrap() = Some(at.clone());
    let first = run(&mut n, 10, 1).pop().unwrap();
    assert_eq!(first.position[..5], at);
    let sent = commands.lock().unwrap().last().unwrap().clone();
    let step = sent
        .iter()
        .zip(&at)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(
        step <= 2.0 * DT,
        "first command jumped {step} rad from the servos"
    );
    // Motion toward the target continues from there.
    run(&mut n, 11, 400);
    let last = commands.lock().unwrap().last().unwrap().clone();
    let reached = chain.fk(&last[..5]).translation.vector;
    assert!((reached - target).norm() < 1e-3);
}

/// Issue 22: the start-up solve, when the arm's pose is known, starts
/// from it. The project arm measured with its elbow bent one way, asked
/// for a pose next to where it is: the first answer is on that branch (a
/// few hundredths of a radian away), not the mirror branch a solve from
/// the middle of the limits lands on.
#[test]
fn the_first_solve_starts_from_the_measured_pose() {
    let chain = arm();
    let at = vec![0.3, 1.0, -1.2, 0.9, 0.2];
    let near: Vec<f64> = at.iter().map(|v| v + 0.03).collect();
    let pose = chain.fk(&near);
    let quat = nalgebra::UnitQuaternion::from_rotation_matrix(&pose.rotation);
    let target = arm_ik::ik::Target::pose(pose.translation.vector, quat);
    let largest = |q: &[f64]| {
        q.iter()
            .zip(&near)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    };
    // The premise: from the middle of the limits the solver lands on
    // another branch, so only a solve seeded at the pose finds this one.
    let mut solver = arm_ik::ik::Solver::new(
        &chain,
        SolverConfig::default_for(SolverKind::Jacobian),
        Common::default(),
    )
    .unwrap();
    let cold = solver.solve(&target, &chain.mid_configuration()).unwrap();
    assert!(cold.status.is_converged());
    assert!(
        largest(&cold.q) > 0.5,
        "the mid seed found this branch too: {:?}",
        cold.q
    );
    let (mut n, _, _) = common::measuring::node(&chain, Some(at.clone()));
    n.push_target(TargetMsg {
        stamp: 0.0,
        frame_id: String::new(),
        position: pose.translation.vector.into(),
        orientation: Some([quat.i, quat.j, quat.k, quat.w]),
    });
    run(&mut n, 0, 1);
    let goal = n.core().motion().goal()[..5].to_vec();
    assert!(
        largest(&goal) < 0.01,
        "the first answer {goal:?} is not next to the measured pose {at:?}"
    );
}
