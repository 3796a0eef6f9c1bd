//! A stream of targets that, followed target by target, needs the arm to
//! swing to another configuration (issue 22: the project arm's position
//! track of seed 41, path 2, passes near full reach, and 9 s later the
//! side its answers took runs into the shoulder's limit). The node holds
//! the arm instead of sweeping its tip off the path, says why, and moves
//! it only once the stream pauses.

// Needs the application (feature `app`, on by default).
#![cfg(feature = "app")]

mod common;

use arm_ik::bench::TargetSet;
use arm_ik::model::Chain;
use arm_ik::node::track::{path_samples, sample_message};
use arm_ik::node::{
    Command, JointCommandMsg, NodeConfig, NodeCore, NodeSettings, RejectReason, SolveOutcome,
};

const RATE_HZ: f64 = 20.0;

fn arm_track() -> (Chain, TargetSet) {
    let urdf = common::project_urdf("arm.urdf");
    let chain = Chain::from_urdf_file(&urdf, Some("base_link"), Some("tool")).unwrap();
    let set =
        TargetSet::generate_track(&chain, urdf.to_str().unwrap(), (3, 60.0, RATE_HZ), 41, true);
    (chain, set)
}

/// The node core at the start of path 2, streamed the path at 20 Hz on
/// its ticks until it holds: the core, the set, the node time, the next
/// sample and why it held.
fn streamed_until_held() -> (NodeCore, TargetSet, f64, usize, String) {
    let (chain, set) = arm_track();
    let settings = NodeSettings::default();
    let (solver, common) = settings.solver_config(&chain).unwrap();
    let config = NodeConfig {
        initial: Some(set.paths[2].start.clone()),
        ..settings.node_config(&chain).unwrap()
    };
    let mut core = NodeCore::with_virtual_servos(&chain, solver, common, config).unwrap();
    let dt = 1.0 / core.config().rate_hz;
    let samples = path_samples(&set, 2);
    let (mut now, mut next) = (0.0, 0);
    let mut held = None;
    while next < samples.len() && held.is_none() {
        if next as f64 / RATE_HZ <= now + 1e-9 {
            core.on_target(&sample_message(&set, &samples[next]), now);
            next += 1;
        }
        if let Some(SolveOutcome::Refused { why }) = core.tick(now).solve {
            held = Some(why);
        }
        now += dt;
    }
    let why = held.expect("the stream needs a swing and the node holds");
    (core, set, now, next, why)
}

#[test]
fn a_stream_that_needs_a_swing_holds_the_arm_until_it_pauses() {
    let (mut core, set, mut now, mut next, why) = streamed_until_held();
    let samples = path_samples(&set, 2);
    let dt = 1.0 / core.config().rate_hz;
    let dof = core.layout().dof();
    assert!(
        why.contains("off the path to another configuration") && why.contains("pause the stream"),
        "{why}"
    );
    let st = core.status();
    assert_eq!(st.targets.rejected.reconfiguration, 1, "{st:?}");
    assert_eq!(
        st.last_rejection.as_ref().unwrap().0,
        RejectReason::Reconfiguration
    );
    assert!(st.holding);

    // The stream goes on for another second: the arm comes to rest where
    // it was going and stays there; nothing swings.
    let mut rest = Vec::new();
    for k in 0..50 {
        if next < samples.len() && next as f64 / RATE_HZ <= now + 1e-9 {
            core.on_target(&sample_message(&set, &samples[next]), now);
            next += 1;
        }
        core.tick(now);
        now += dt;
        if k == 25 {
            rest = core.motion().position()[..dof].to_vec();
        }
    }
    let q = &core.motion().position()[..dof];
    let moved = q
        .iter()
        .zip(&rest)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(moved < 1e-9, "the held arm moved {moved} rad");
    assert!(core.status().targets.rejected.reconfiguration > 10);

    // A pause longer than a stream's gap, then the next target: the arm
    // moves to it as to a single target, and reaches it.
    for _ in 0..20 {
        core.tick(now);
        now += dt;
    }
    let target = sample_message(&set, &samples[next]);
    core.on_target(&target, now);
    let out = core.tick(now).solve;
    assert!(matches!(out, Some(SolveOutcome::Reached { .. })), "{out:?}");
    for _ in 0..500 {
        now += dt;
        core.tick(now);
    }
    let tip = core.tip_pose().translation.vector;
    let off = (tip - nalgebra::Vector3::from(target.position)).norm();
    assert!(
        off < 1e-3,
        "the tip is {off} m from the target after the pause"
    );
    assert!(!core.status().holding);
}

/// A joint command (or any input that moves the arm off the stream's
/// answers) right after a hold: the next streamed target is solved from
/// where the arm is going, not held against the stream's old answer.
#[test]
fn after_a_joint_command_the_next_target_is_no_swing() {
    let (mut core, set, now, next, _) = streamed_until_held();
    let names = core.layout().names()[..core.layout().dof()].to_vec();
    let start = set.paths[2].start.clone();
    let cmd = Command::JointCommand(JointCommandMsg {
        name: names,
        position: start,
    });
    core.command(&cmd, now).unwrap();
    core.tick(now);
    let samples = path_samples(&set, 2);
    let t = now + 0.02;
    core.on_target(&sample_message(&set, &samples[next]), t);
    let out = core.tick(t).solve;
    assert!(matches!(out, Some(SolveOutcome::Reached { .. })), "{out:?}");
    assert_eq!(core.status().targets.rejected.reconfiguration, 1);
}
