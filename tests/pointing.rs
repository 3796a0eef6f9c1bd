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
use common::{TestRng, project_urdf, random_q, shared_dir};
use nalgebra::{Unit, Vector3};
use std::time::Duration;

const TOL: Tolerance = Tolerance {
    position: 1e-5,
    orientation: 1e-5,
};

fn jacobian(chain: &Chain) -> Solver {
    let options = JacobianOptions {
        budget: Duration::from_millis(if cfg!(debug_assertions) { 2000 } else { 50 }),
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
