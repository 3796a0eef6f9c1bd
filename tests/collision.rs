//! Collision safety as a user of the node sees it: targets whose every
//! solution collides are refused naming the pair, moves stop short of
//! contact, the jog stops at the margin and backs out, the workspace file
//! is re-read while the node runs, and an arm that starts in collision
//! only moves out.

#![cfg(feature = "app")]

mod common;

use arm_ik::collision::CollisionOptions;
use arm_ik::model::Chain;
use arm_ik::node::{
    Command, JointCommandMsg, NodeCore, NodeSettings, RejectReason, SolveOutcome, TargetMsg,
    TwistMsg,
};
use std::path::PathBuf;

const DT: f64 = 0.02;

fn arm() -> Chain {
    Chain::from_urdf_file(common::project_urdf("arm.urdf"), None, None).unwrap()
}

/// A scratch folder of this test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("arm_ik-collision-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The node on the arm with `workspace` (YAML text, written to a file)
/// and `initial` joints.
fn node(name: &str, workspace: &str, initial: Option<Vec<f64>>) -> (NodeCore, PathBuf) {
    let file = scratch(name).join("workspace.yaml");
    std::fs::write(&file, workspace).unwrap();
    let mut settings = NodeSettings {
        collision: CollisionOptions {
            workspace: Some(file.clone()),
            ..CollisionOptions::default()
        },
        ..NodeSettings::default()
    };
    settings.motion.rate_hz = 1.0 / DT;
    // Generous: these tests are about the answers, not timing.
    settings.solver.budget_ms = 500.0;
    let chain = arm();
    let mut core = NodeCore::from_settings(&chain, &settings).unwrap();
    if let Some(q) = initial {
        let mut config = core.config().clone();
        config.initial = Some(q);
        let (solver, common) = settings.solver_config(&chain).unwrap();
        core = NodeCore::with_virtual_servos(&chain, solver, common, config).unwrap();
    }
    // On CPU time, so that preemption cannot end a solve early either.
    core.set_budget_clock(common::cpu_clock());
    (core, file)
}

/// Ticks `n` times from `k0`, returning the clearance after each tick.
fn run(core: &mut NodeCore, k0: usize, n: usize) -> Vec<f64> {
    (k0..k0 + n)
        .map(|k| {
            core.tick(k as f64 * DT);
            core.status().collision.as_ref().unwrap().clearance
        })
        .collect()
}

fn joints(core: &NodeCore) -> Vec<f64> {
    core.motion().position().to_vec()
}

fn joint_command(core: &mut NodeCore, name: &str, q: f64) {
    let cmd = Command::JointCommand(JointCommandMsg {
        name: vec![name.into()],
        position: vec![q],
    });
    core.command(&cmd, 0.0).unwrap();
}

#[test]
fn a_target_under_the_floor_is_refused_and_nothing_moves() {
    let (mut core, _) = node("floor", "", None);
    run(&mut core, 0, 2);
    let before = joints(&core);
    core.on_target(&TargetMsg::position([0.15, 0.0, -0.05]), 0.0);
    let tick = core.tick(2.0 * DT);
    let Some(SolveOutcome::Refused { why }) = tick.solve else {
        panic!("not refused: {:?}", tick.solve);
    };
    assert!(why.contains("floor"), "{why}");
    let st = core.status();
    assert_eq!(st.targets.rejected.collision, 1);
    assert_eq!(
        st.last_rejection.as_ref().unwrap().0,
        RejectReason::Collision
    );
    run(&mut core, 3, 50);
    assert_eq!(joints(&core), before, "the arm moved");
}

#[test]
fn a_target_only_reached_through_the_base_is_refused_while_one_beside_it_is_reached() {
    let (mut core, _) = node("fold", "floor_z: off\n", None);
    run(&mut core, 0, 2);
    // Beside the base, below its top: the hand would be inside the base.
    core.on_target(&TargetMsg::position([0.05, 0.0, 0.02]), 0.0);
    let tick = core.tick(2.0 * DT);
    let Some(SolveOutcome::Refused { why }) = tick.solve else {
        panic!("not refused: {:?}", tick.solve);
    };
    assert!(why.contains("base_link"), "{why}");
    // A little farther out and higher: reached, and kept clear.
    core.on_target(&TargetMsg::position([0.16, 0.0, 0.06]), 0.0);
    let tick = core.tick(3.0 * DT);
    assert!(
        matches!(tick.solve, Some(SolveOutcome::Reached { .. })),
        "{:?}",
        tick.solve
    );
    let clear = run(&mut core, 4, 300);
    let tip = core.tip_pose().translation.vector;
    assert!(
        (tip - nalgebra::Vector3::new(0.16, 0.0, 0.06)).norm() < 1e-3,
        "{tip}"
    );
    let margin = CollisionOptions::default().margin;
    assert!(clear.iter().all(|&d| d >= margin - 1e-9), "{clear:?}");
}

const BOX_AHEAD: &str = "obstacles:\n  - name: box\n    shape: box\n    size: [0.06, 0.2, 0.3]\n    position: [0.2, 0.0, 0.15]\n";

#[test]
fn a_joint_command_through_a_box_stops_before_it() {
    let (mut core, _) = node("box", BOX_AHEAD, None);
    run(&mut core, 0, 2);
    joint_command(&mut core, "shoulder", 1.4);
    let clear = run(&mut core, 2, 200);
    let st = core.status().collision.clone().unwrap();
    assert_eq!(st.stops, 1, "{st:?}");
    assert!(st.last_stop.as_deref().unwrap().contains("box"), "{st:?}");
    let margin = CollisionOptions::default().margin;
    assert!(clear.iter().all(|&d| d >= margin - 1e-9), "{clear:?}");
    // It moved toward the box, stopped short of it, and rests.
    let q = joints(&core);
    assert!(q[1] > 0.2 && q[1] < 1.4, "{q:?}");
    assert!(core.motion().is_settled());
    assert!(clear.last().unwrap() < &(margin + 0.02), "{clear:?}");
}

#[test]
fn a_jog_toward_the_table_stops_at_the_margin_and_jogs_back_up() {
    let (mut core, _) = node(
        "table",
        "floor_z: 0.0\n",
        Some(vec![0.0, 0.6, 0.9, 0.6, 0.0]),
    );
    run(&mut core, 0, 2);
    let tip0 = core.tip_pose().translation.vector;
    let margin = CollisionOptions::default().margin;
    let mut clear = Vec::new();
    for k in 2..400 {
        let t = TwistMsg::new("base_link", [0.0, 0.0, -0.05], [0.0; 3]);
        core.command(&Command::Twist(t), k as f64 * DT).unwrap();
        clear.extend(run(&mut core, k, 1));
    }
    let low = core.tip_pose().translation.vector;
    assert!(low.z < tip0.z - 0.02, "did not go down: {tip0} -> {low}");
    assert!(clear.iter().all(|&d| d >= margin - 1e-9), "{clear:?}");
    let st = core.status().collision.clone().unwrap();
    assert!(st.closest.contains("floor"), "{st:?}");
    assert!(
        *clear.last().unwrap() < margin + 0.01,
        "stopped early: {clear:?}"
    );
    for k in 400..500 {
        let t = TwistMsg::new("base_link", [0.0, 0.0, 0.05], [0.0; 3]);
        core.command(&Command::Twist(t), k as f64 * DT).unwrap();
        run(&mut core, k, 1);
    }
    let up = core.tip_pose().translation.vector;
    assert!(up.z > low.z + 0.05, "did not come back up: {low} -> {up}");
}

#[test]
fn a_box_added_to_the_workspace_file_is_respected_from_the_next_tick() {
    let (mut core, file) = node("reload", "obstacles: []\n", None);
    run(&mut core, 0, 2);
    // The arm sets off toward where the box will be.
    joint_command(&mut core, "shoulder", 1.4);
    run(&mut core, 2, 3);
    assert_eq!(core.guard().unwrap().world().obstacle_count(), 0);
    std::fs::write(&file, BOX_AHEAD).unwrap();
    let clear = run(&mut core, 5, 200);
    let st = core.status().collision.clone().unwrap();
    assert_eq!(st.workspace_loads, 1, "{st:?}");
    assert_eq!(core.guard().unwrap().world().obstacle_count(), 1);
    assert_eq!(st.stops, 1, "{st:?}");
    assert!(st.last_stop.as_deref().unwrap().contains("box"), "{st:?}");
    let margin = CollisionOptions::default().margin;
    assert!(clear.iter().all(|&d| d >= margin - 1e-9), "{clear:?}");
    // A file that does not parse keeps the box and says why.
    std::fs::write(&file, "obstacles: [oops\n").unwrap();
    run(&mut core, 204, 1);
    let st = core.status().collision.clone().unwrap();
    assert!(st.workspace_error.is_some(), "{st:?}");
    assert_eq!(core.guard().unwrap().world().obstacle_count(), 1);
}

#[test]
fn an_arm_that_starts_in_collision_says_so_and_only_moves_out() {
    // A box around the upper arm where the arm starts (straight up).
    let inside = "obstacles:\n  - name: post\n    shape: box\n    size: [0.04, 0.1, 0.06]\n    position: [0.03, 0.0, 0.15]\n";
    let (mut core, _) = node("start", inside, None);
    run(&mut core, 0, 2);
    let st = core.status().collision.clone().unwrap();
    let said = st.start_in_collision.clone().expect("not reported");
    assert!(said.contains("post"), "{said}");
    let d0 = st.clearance;
    assert!(d0 < 0.0, "{d0}");
    // Leaning into the post is stopped at once.
    joint_command(&mut core, "shoulder", 0.8);
    let deeper = run(&mut core, 2, 100);
    assert!(deeper.iter().all(|&d| d >= d0 - 1e-9), "{deeper:?}");
    assert!(joints(&core)[1] < 0.05, "{:?}", joints(&core));
    // Leaning away is allowed and takes it out.
    joint_command(&mut core, "shoulder", -0.8);
    let out = run(&mut core, 102, 150);
    assert!(out.windows(2).all(|w| w[1] >= w[0] - 1e-9), "{out:?}");
    assert!(*out.last().unwrap() > 0.01, "{out:?}");
    assert!((joints(&core)[1] + 0.8).abs() < 1e-9);
}

/// `ros2 param set` of `workspace_file` and `collision_margin`: checked at
/// once (a file that does not load is refused, nothing changes), taken
/// from the next tick.
#[test]
fn a_workspace_file_and_margin_set_live_are_respected_from_the_next_tick() {
    use arm_ik::node::{LiveParams, NodeParams, ParamValue};
    let dir = scratch("live");
    let boxed = dir.join("box.yaml");
    std::fs::write(&boxed, BOX_AHEAD).unwrap();
    let chain = arm();
    let mut params = LiveParams::new(NodeParams {
        rate_hz: 1.0 / DT,
        ..NodeParams::default()
    });
    params.read();
    params.run_on(chain.clone());
    let mut core = NodeCore::from_settings(&chain, &params.settings().unwrap()).unwrap();
    run(&mut core, 0, 2);
    assert_eq!(core.guard().unwrap().world().obstacle_count(), 0);

    // A file that is not there: refused by the core, nothing changes.
    params
        .set(
            "workspace_file",
            ParamValue::String(dir.join("none.yaml").display().to_string()),
        )
        .unwrap();
    let e = core.retune(&params.settings().unwrap()).unwrap_err();
    assert!(e.to_string().contains("none.yaml"), "{e}");
    assert!(!core.retune_pending());

    // The box, and a 3 cm margin: taken at the next tick.
    params
        .set(
            "workspace_file",
            ParamValue::String(boxed.display().to_string()),
        )
        .unwrap();
    params
        .set("collision_margin", ParamValue::Double(0.03))
        .unwrap();
    core.retune(&params.settings().unwrap()).unwrap();
    assert_eq!(core.guard().unwrap().world().obstacle_count(), 0);
    joint_command(&mut core, "shoulder", 1.4);
    let clear = run(&mut core, 2, 200);
    let world = core.guard().unwrap().world();
    assert_eq!((world.obstacle_count(), world.margin()), (1, 0.03));
    let st = core.status().collision.clone().unwrap();
    assert_eq!(st.stops, 1, "{st:?}");
    assert!(st.last_stop.as_deref().unwrap().contains("box"), "{st:?}");
    assert!(clear.iter().all(|&d| d >= 0.03 - 1e-9), "{clear:?}");
    assert!(*clear.last().unwrap() < 0.05, "{clear:?}");
    // The file keeps being watched: emptied, the box is gone.
    std::fs::write(&boxed, "obstacles: []\n").unwrap();
    run(&mut core, 202, 1);
    assert_eq!(core.guard().unwrap().world().obstacle_count(), 0);
}

/// The clearance's gradient, which the Jacobian solver steers a redundant
/// arm's self-motion by, is the smallest distance's derivative with
/// respect to each joint: computed from one query (the closest pair's
/// witness points and normal), it agrees with central differences of the
/// distance on the project arm near a box and the floor, for pairs of
/// two links as for a link and an obstacle or the floor.
#[test]
fn the_clearance_gradient_is_the_derivative_of_the_smallest_distance() {
    let chain = arm();
    let file = scratch("gradient").join("workspace.yaml");
    std::fs::write(
        &file,
        std::fs::read_to_string(common::project_dir().join("examples/workspace_table.yaml"))
            .unwrap(),
    )
    .unwrap();
    let options = CollisionOptions {
        workspace: Some(file),
        ..CollisionOptions::default()
    };
    let mut world = arm_ik::collision::build(&chain, &options).unwrap();
    let mut rng = common::TestRng::new(21);
    let mut gradient = vec![0.0; chain.dof()];
    let (mut compared, mut kinds) = (0, std::collections::HashSet::new());
    const H: f64 = 1e-6;
    while compared < 200 {
        let q = common::random_q(&chain, &mut rng);
        let Some(d) = world.distance_gradient(&q, 0.1, &mut gradient) else {
            continue;
        };
        let near = world.nearest(&q);
        assert!((near.distance - d).abs() < 1e-9, "{d} vs {near:?}");
        if d <= 0.002 {
            continue; // overlaps: EPA's depth, not measured here
        }
        let mut differences = Vec::new();
        for i in 0..q.len() {
            let at = |world: &mut arm_ik::collision::World, h: f64| {
                let mut p = q.clone();
                p[i] += h;
                world.nearest(&p)
            };
            let (up, down) = (at(&mut world, H), at(&mut world, -H));
            if (up.a, up.b) != (near.a, near.b) || (down.a, down.b) != (near.a, near.b) {
                differences.clear();
                break; // the closest pair changes: no derivative
            }
            differences.push((up.distance - down.distance) / (2.0 * H));
        }
        if differences.is_empty() {
            continue;
        }
        for (i, (g, f)) in gradient.iter().zip(&differences).enumerate() {
            assert!(
                (g - f).abs() <= 2e-3 + 0.02 * f.abs(),
                "joint {i} at {q:?} ({}): gradient {g}, differences {f}",
                world.describe(&near)
            );
        }
        use arm_ik::collision::Owner;
        kinds.insert(match near.b {
            Owner::Link(_) => "two links",
            Owner::Obstacle(_) => "a link and the box",
            Owner::Floor => "a link and the floor",
        });
        compared += 1;
    }
    assert_eq!(kinds.len(), 3, "only {kinds:?} were compared");
}
