//! The collision check as a fresh install has it, with no workspace file
//! and no flags: the project arm refuses to go below its own base, and a
//! URDF without collision geometry (the Koch stand-in, as many published
//! URDFs are once copied away from their meshes) gets capsules, is told
//! so, and still reaches every target whose pose is clear.

#![cfg(feature = "app")]

mod common;

use arm_ik::collision::{self, CollisionOptions, FloorOrigin};
use arm_ik::ik::Rng;
use arm_ik::model::Chain;
use arm_ik::node::{NodeCore, NodeSettings, SolveOutcome, TargetMsg};

const DT: f64 = 0.02;

fn core(chain: &Chain) -> NodeCore {
    let mut settings = NodeSettings::default();
    settings.motion.rate_hz = 1.0 / DT;
    // Generous and on CPU time: these tests are about the answers, not
    // timing (a loaded machine must not make a clear target look
    // unreachable).
    settings.solver.budget_ms = 500.0;
    let mut core = NodeCore::from_settings(chain, &settings).unwrap();
    core.set_budget_clock(common::cpu_clock());
    core
}

fn notices(core: &mut NodeCore) -> Vec<String> {
    std::iter::from_fn(|| core.take_notice()).collect()
}

/// The outcome of `target` sent at tick `k`.
fn solve(core: &mut NodeCore, target: [f64; 3], k: usize) -> SolveOutcome {
    core.on_target(&TargetMsg::position(target), k as f64 * DT);
    core.tick(k as f64 * DT)
        .solve
        .expect("the target was not solved")
}

#[test]
fn a_fresh_install_with_the_project_arm_refuses_to_go_below_its_base() {
    let chain = Chain::from_urdf_file(common::project_urdf("arm.urdf"), None, None).unwrap();
    let mut core = core(&chain);
    for k in 0..2 {
        core.tick(k as f64 * DT);
    }
    let said = notices(&mut core).join("\n");
    assert!(said.contains("the floor at z = 0.000 m"), "{said}");
    // Beside the base, 2 cm below its bottom: refused, nothing moves.
    let before = core.motion().position().to_vec();
    let SolveOutcome::Refused { why } = solve(&mut core, [0.15, 0.0, -0.02], 2) else {
        panic!("a target below the base was not refused");
    };
    assert!(why.contains("floor"), "{why}");
    for k in 3..50 {
        core.tick(k as f64 * DT);
    }
    assert_eq!(core.motion().position(), &before[..]);
    // Above the table, in front of the base: reached.
    let out = solve(&mut core, [0.15, 0.0, 0.05], 50);
    assert!(matches!(out, SolveOutcome::Reached { .. }), "{out:?}");
}

#[test]
fn a_urdf_without_collision_geometry_gets_capsules_says_so_and_reaches_clear_targets() {
    let chain = Chain::from_urdf_file(
        common::project_dir().join("tests/data/koch_follower_standin.urdf"),
        None,
        None,
    )
    .unwrap();
    let options = CollisionOptions::default();
    let mut world = collision::build(&chain, &options).unwrap();
    // No base geometry: the floor at the base's origin, the mounting face.
    assert_eq!(world.floor(), Some(0.0));
    assert_eq!(world.floor_origin(), Some(FloorOrigin::BaseOrigin));
    // The default pose keeps the margin: nothing starts in collision.
    let rest = world.body().rest.clone();
    assert!(world.nearest(&rest).distance > options.margin);

    let mut core = core(&chain);
    core.tick(0.0);
    let said = notices(&mut core).join("\n");
    assert!(
        said.contains("a capsule") && said.contains("link_3"),
        "{said}"
    );
    // Random poses within the limits whose every pair keeps the margin:
    // the node reaches each of their tip positions.
    let mut rng = Rng::new(21);
    let (mut tried, mut k) = (0, 1);
    while tried < 40 {
        let q = rng.configuration(&chain);
        if world.clear_of(&q, options.margin, None).is_err() {
            continue;
        }
        tried += 1;
        let p = chain.fk(&q).translation.vector;
        let out = solve(&mut core, [p.x, p.y, p.z], k);
        k += 1;
        assert!(
            matches!(out, SolveOutcome::Reached { .. }),
            "{q:?} -> {p}: {out:?}"
        );
    }
    // Below the base's origin: refused, naming the floor.
    let SolveOutcome::Refused { why } = solve(&mut core, [0.12, 0.0, -0.03], k) else {
        panic!("a target below the base was not refused");
    };
    assert!(why.contains("floor"), "{why}");
}
