//! 5D targets (issue 22): a position and the direction a tool axis points
//! in, the roll about it free. The solvers that take them reach them to
//! the protocol's tolerances within the limits; the roll is left where the
//! seed has it (it is the arm's to choose); the closed forms refuse them
//! by name; and `arm_ik solve --axis` refuses a direction that is none.

mod common;

use arm_ik::ik::{
    Common, IkError, JacobianOptions, Orientation, Pointing, SolveStatus, Solver, SolverConfig,
    SolverKind, Target, Tolerance, orientation_angle,
};
use arm_ik::model::Chain;
use common::{TestRng, cpu_clock, project_urdf, random_q, shared_dir};
use nalgebra::{Unit, Vector3};
use std::time::Duration;

const TOL: Tolerance = Tolerance {
    position: 1e-5,
    orientation: 1e-5,
};

/// The Jacobian solver with a budget that never decides a reachable
/// target, counted on CPU time so that preemption cannot either.
fn jacobian(chain: &Chain) -> Solver {
    let options = JacobianOptions {
        budget: Duration::from_millis(if cfg!(debug_assertions) { 2000 } else { 50 }),
        clock: cpu_clock(),
        ..JacobianOptions::default()
    };
    let common = Common {
        tolerance: TOL,
        modes: Vec::new(),
    };
    Solver::new(chain, SolverConfig::Jacobian(options), common).unwrap()
}

/// The 5D target of the tip at `q`: where it is and where its +z points.
fn pointing_of(chain: &Chain, q: &[f64]) -> Target {
    let tip = chain.fk(q);
    let z = Unit::new_normalize(tip.rotation * Vector3::z());
    Target::axis(tip.translation.vector, z)
}

/// The chains to solve on: the project arm (5 joints: no joint to
/// spare), the PUMA 560 and, when the shared robots are there, the UR5
/// (6 joints: one to spare).
fn chains() -> Vec<(&'static str, Chain)> {
    let mut out = vec![
        (
            "arm",
            Chain::from_urdf_file(project_urdf("arm.urdf"), None, None).unwrap(),
        ),
        (
            "puma560",
            Chain::from_urdf_file(project_urdf("puma560.urdf"), None, Some("flange")).unwrap(),
        ),
    ];
    if let Some(dir) = shared_dir() {
        let ur5 = dir.join("robots/ur5_robot.urdf");
        out.push((
            "ur5",
            Chain::from_urdf_file(ur5, Some("base_link"), Some("tool0")).unwrap(),
        ));
    }
    out
}

/// Targets drawn from configurations within the limits are reached from
/// the middle of the limits: position within 1e-5 m and the tool axis
/// within 1e-5 rad of its direction (measured again here by FK), every
/// joint within its limits.
#[test]
fn the_jacobian_solver_reaches_5d_targets_within_the_limits() {
    let n = if cfg!(debug_assertions) { 20 } else { 200 };
    for (name, chain) in chains() {
        let mut solver = jacobian(&chain);
        let mut rng = TestRng::new(22);
        let seed = chain.mid_configuration();
        for k in 0..n {
            let target = pointing_of(&chain, &random_q(&chain, &mut rng));
            let s = solver.solve(&target, &seed).unwrap();
            assert_eq!(s.status, SolveStatus::Converged, "{name} {k}: {s:?}");
            assert!(chain.within_limits(&s.q), "{name} {k}: {:?}", s.q);
            let tip = chain.fk(&s.q);
            let pe = (tip.translation.vector - target.position).norm();
            let angle = orientation_angle(&tip, &target.orientation);
            assert!(
                pe <= TOL.position && angle <= TOL.orientation,
                "{name} {k}: {pe} {angle}"
            );
            assert!((angle - s.orientation_error).abs() < 1e-12, "{name} {k}");
        }
    }
}

/// The roll is free: seeded where the UR5's last joint (which only rolls
/// the tool about its +z) is a radian off the pose that made the target
/// (toward the middle of its range),
/// the answer keeps it off (a full pose would have to turn it back), and
/// still meets the target.
#[test]
fn the_roll_about_the_tool_axis_is_left_to_the_arm() {
    let Some(dir) = shared_dir() else { return };
    let ur5 = dir.join("robots/ur5_robot.urdf");
    let chain = Chain::from_urdf_file(ur5, Some("base_link"), Some("tool0")).unwrap();
    let mut solver = jacobian(&chain);
    let mut rng = TestRng::new(5);
    for k in 0..20 {
        let q = random_q(&chain, &mut rng);
        let target = pointing_of(&chain, &q);
        let mut seed = q.clone();
        seed[5] -= q[5].signum();
        let s = solver.solve(&target, &seed).unwrap();
        assert_eq!(s.status, SolveStatus::Converged, "{k}: {s:?}");
        assert!(
            (s.q[5] - seed[5]).abs() < 0.2,
            "{k}: the roll went from {} to {}",
            seed[5],
            s.q[5]
        );
    }
}

/// The closed forms solve poses and positions, not a pointing axis: they
/// refuse the target by its kind instead of solving something else; the
/// heuristic solvers take it (the CCD one reaches one on the PUMA).
#[test]
fn closed_forms_refuse_5d_targets_naming_the_kind() {
    let chain = Chain::from_urdf_file(project_urdf("puma560.urdf"), None, Some("flange")).unwrap();
    let q = chain.mid_configuration();
    let mut target = pointing_of(&chain, &q);
    let arm = Chain::from_urdf_file(project_urdf("arm.urdf"), None, None).unwrap();
    let arm_q = arm.mid_configuration();
    for (kind, chain, q) in [
        (SolverKind::Geo, &chain, &q),
        (SolverKind::Analytic, &arm, &arm_q),
    ] {
        let mut s = Solver::new(chain, SolverConfig::default_for(kind), Common::default()).unwrap();
        let e = s.solve(&pointing_of(chain, q), q).unwrap_err();
        assert!(
            matches!(
                e,
                IkError::UnsupportedTarget {
                    kind: "pointing-axis (5D)",
                    ..
                }
            ),
            "{kind}: {e}"
        );
        assert!(e.to_string().contains("pointing-axis (5D)"), "{e}");
    }
    let mut ccd = Solver::new(
        &chain,
        SolverConfig::default_for(SolverKind::Ccd),
        Common::default(),
    )
    .unwrap();
    let seed: Vec<f64> = q.iter().map(|v| v + 0.1).collect();
    let s = ccd.solve(&target, &seed).unwrap();
    let tip = chain.fk(&s.q);
    assert!(orientation_angle(&tip, &target.orientation) < 1e-3, "{s:?}");
    // A target that is not a unit direction is refused, naming the field.
    if let Orientation::Axis(p) = &mut target.orientation {
        *p = Pointing {
            direction: Unit::new_unchecked(Vector3::zeros()),
            ..*p
        };
    }
    let e = ccd.solve(&target, &seed).unwrap_err();
    assert!(
        matches!(e, IkError::InvalidTarget { field: "axis", .. }),
        "{e}"
    );
}

/// `solve --axis` refuses what is not a direction with a usage error
/// naming the flag, and solves a 5D target when it is one.
#[cfg(feature = "app")]
#[test]
fn solve_axis_refuses_a_zero_or_nan_direction_naming_the_flag() {
    let urdf = project_urdf("puma560.urdf");
    let chain = Chain::from_urdf_file(&urdf, None, Some("flange")).unwrap();
    let p = chain.fk(&chain.mid_configuration()).translation.vector;
    let position = format!("{},{},{}", p.x, p.y, p.z);
    let run = |axis: &str| {
        common::arm_ik(&[
            "solve",
            "--urdf",
            urdf.to_str().unwrap(),
            "--tip",
            "flange",
            "--position",
            &position,
            "--axis",
            axis,
        ])
    };
    for bad in ["0,0,0", "nan,0,1", "0,0"] {
        let out = run(bad);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{bad}: {err}");
        assert!(err.contains("--axis"), "{bad}: {err}");
    }
    let z = chain.fk(&chain.mid_configuration()).rotation * Vector3::z();
    let out = run(&format!("{},{},{}", 2.0 * z.x, 2.0 * z.y, 2.0 * z.z));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("converged"), "{text}");
}

/// `tool_axis` on the node (issue 22: 6-DOF arms on 5D targets, a
/// gripper along the tip's +x): the node core runs under
/// `target_orientation: axis`, its `tool_axis` changed to [1, 0, 0] while
/// it runs (through the parameters and `retune`, as `ros2 param set`
/// does), and is sent a pose rolled half a turn about its own +x. The tip
/// reaches the position with its +x along the pose's +x; its +z, which
/// the pose turned over, is left where the arm has it (a full pose would
/// need it turned over too). With the tool axis ignored the node would
/// point the tip's +z along the pose's instead, and +x would miss.
#[cfg(feature = "app")]
#[test]
fn the_node_points_the_tool_axis_it_is_given() {
    use arm_ik::node::{LiveParams, MemoryNode, NodeCore, NodeParams, ParamValue, TargetMsg};
    use nalgebra::{IsometryMatrix3, Rotation3, UnitQuaternion};
    let chain = Chain::from_urdf_file(project_urdf("arm.urdf"), None, None).unwrap();
    let mut params = LiveParams::new(NodeParams {
        target_orientation: "axis".into(),
        ..NodeParams::default()
    });
    params.read();
    params.run_on(chain.clone());
    let core = NodeCore::from_settings(&chain, &params.settings().unwrap()).unwrap();
    let mut n = MemoryNode::new(core);
    params
        .set("tool_axis", ParamValue::DoubleArray(vec![1.0, 0.0, 0.0]))
        .unwrap();
    n.core_mut().retune(&params.settings().unwrap()).unwrap();
    let goal = chain.fk(&[0.4, 0.5, 0.8, 0.7, -0.3]);
    let half_turn = Rotation3::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI);
    let rolled = IsometryMatrix3::from_parts(goal.translation, goal.rotation * half_turn);
    let q = UnitQuaternion::from_rotation_matrix(&rolled.rotation);
    let p = rolled.translation.vector;
    n.push_target(TargetMsg {
        orientation: Some([q.i, q.j, q.k, q.w]),
        ..TargetMsg::position([p.x, p.y, p.z])
    });
    for k in 0..250 {
        n.tick(k as f64 * 0.02); // 5 s at 50 Hz
    }
    let last = n.drain_joint_states().pop().unwrap();
    let tip = chain.fk(&last.position[..chain.dof()]);
    let angle = |a: Vector3<f64>, b: Vector3<f64>| a.angle(&b);
    let x = |t: &IsometryMatrix3<f64>| t.rotation * Vector3::x();
    let z = |t: &IsometryMatrix3<f64>| t.rotation * Vector3::z();
    assert!((tip.translation.vector - p).norm() < 1e-3, "{tip:?}");
    assert!(angle(x(&tip), x(&rolled)) < 1e-3, "{tip:?}");
    assert!(
        angle(z(&tip), z(&rolled)) > 1.0,
        "the roll was not asked for"
    );
    let s = n.core().status();
    assert_eq!((s.targets.received, s.targets.reached), (1, 1));
}

/// `--tool-axis` is one flag of every command with the solver options:
/// what is not a direction is a usage error naming it (exit 64), on
/// `solve` and on the node's commands alike.
#[cfg(feature = "app")]
#[test]
fn a_tool_axis_that_is_no_direction_is_a_usage_error_naming_the_flag() {
    let urdf = project_urdf("arm.urdf");
    let urdf = urdf.to_str().unwrap();
    for bad in ["0,0,0", "nan,0,1", "1,0", "0,inf,0"] {
        for argv in [
            vec!["solve", "--urdf", urdf, "--position", "0.2,0,0.2"],
            vec!["sim", "--urdf", urdf, "--target-orientation", "axis"],
            vec!["bench", "--urdf", urdf],
        ] {
            let mut argv = argv.clone();
            argv.extend(["--tool-axis", bad]);
            let out = common::arm_ik(&argv);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(64), "{argv:?}: {err}");
            assert!(err.contains("--tool-axis"), "{argv:?}: {err}");
        }
    }
}

/// The one `--tool-axis` serves both 5D targets of `solve`: `--axis` and a
/// pose under `--target-orientation axis`. On the PUMA 560 with the tool
/// axis +x, the answer's flange +x points along the direction asked (the
/// mid pose's +x), by FK of the printed joints.
#[cfg(feature = "app")]
#[test]
fn solve_points_the_tool_axis_for_axis_and_for_a_pose() {
    let urdf = project_urdf("puma560.urdf");
    let chain = Chain::from_urdf_file(&urdf, None, Some("flange")).unwrap();
    let q0: Vec<f64> = chain.mid_configuration().iter().map(|v| v + 0.3).collect();
    let goal = chain.fk(&q0);
    let p = goal.translation.vector;
    let x = goal.rotation * Vector3::x();
    // The pose turned over about its +x: the same +x, its +z reversed.
    let rolled = nalgebra::UnitQuaternion::from_rotation_matrix(&goal.rotation)
        * nalgebra::UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI);
    let csv = |v: &[f64]| v.iter().map(f64::to_string).collect::<Vec<_>>().join(",");
    let position = csv(&[p.x, p.y, p.z]);
    let along = csv(&[3.0 * x.x, 3.0 * x.y, 3.0 * x.z]);
    let pose = csv(&[rolled.i, rolled.j, rolled.k, rolled.w]);
    let urdf = urdf.to_str().unwrap();
    let base = ["solve", "--urdf", urdf, "--tip", "flange", "--json"];
    let base = [
        &base[..],
        &["--position", &position, "--tool-axis", "1,0,0"],
    ]
    .concat();
    for extra in [
        vec!["--axis", &along],
        vec!["--orientation", &pose, "--target-orientation", "axis"],
    ] {
        let out = common::arm_ik(&[&base[..], &extra[..]].concat());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{extra:?}: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let q: Vec<f64> = serde_json::from_value(v["q"].clone()).unwrap();
        let tip = chain.fk(&q);
        assert!(
            (tip.translation.vector - p).norm() < 1e-4,
            "{extra:?}: {q:?}"
        );
        let angle = (tip.rotation * Vector3::x()).angle(&x);
        assert!(angle < 1e-3, "{extra:?}: +x {angle} rad off");
    }
}
