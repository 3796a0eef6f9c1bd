//! Acceptance tests of the CCD and FABRIK solvers on the desktop arm.
//!
//! Targets come from a fixed-seed generator: a random joint vector within the
//! limits, through forward kinematics, so every target is reachable and the
//! runs are reproducible. Run with `--nocapture` to see the figures.

mod common;

use arm_ik::ik::{
    CcdOptions, Common, FabrikOptions, JointMode, Reason, Rng, Solution, SolveStatus, Solver,
    SolverConfig, Start, Target, Tolerance,
};
use arm_ik::model::Chain;
use common::random_q;
use nalgebra::Vector3;

const TARGETS: usize = 400;

fn chain(name: &str) -> Chain {
    let path = format!("{}/urdf/{name}.urdf", env!("CARGO_MANIFEST_DIR"));
    Chain::from_urdf_file(path, None, None).expect("URDF loads")
}

fn arm() -> Chain {
    chain("arm")
}

/// 0.1 mm position tolerance, as the acceptance criterion asks.
fn common() -> Common {
    Common {
        tolerance: Tolerance {
            position: 1e-4,
            orientation: 1e-3,
        },
        modes: Vec::new(),
    }
}

/// `count` reachable position targets and the joint vectors that reach them.
fn targets(chain: &Chain, count: usize, seed: u64) -> Vec<(Vec<f64>, Target)> {
    let mut rng = Rng::new(seed);
    (0..count)
        .map(|_| {
            let q = random_q(chain, &mut rng);
            let p = chain.fk(&q).translation.vector;
            (q, Target::position(p))
        })
        .collect()
}

fn ccd(chain: &Chain, options: CcdOptions, common: Common) -> Solver {
    Solver::new(chain, SolverConfig::Ccd(options), common).expect("valid options")
}

fn fabrik(chain: &Chain, options: FabrikOptions, common: Common) -> Solver {
    Solver::new(chain, SolverConfig::Fabrik(options), common).expect("valid options")
}

/// Every answer, whatever the status: finite, within the limits.
fn assert_sane(chain: &Chain, s: &Solution) {
    assert!(
        s.q.iter().all(|v| v.is_finite()),
        "non-finite answer {:?}",
        s.q
    );
    assert!(chain.within_limits(&s.q), "outside the limits: {:?}", s.q);
    assert!(s.position_error.is_finite() && s.orientation_error.is_finite());
}

/// Success rate and mean iterations over `targets`, each solved from the
/// middle of the limits.
fn rate(solver: &mut Solver, targets: &[(Vec<f64>, Target)]) -> (f64, f64) {
    let chain = solver.chain().clone();
    let seed = chain.mid_configuration();
    let mut reached = 0;
    let mut iterations = 0u64;
    for (_, t) in targets {
        let s = solver.solve(t, &seed).unwrap();
        assert_sane(&chain, &s);
        if s.status.is_converged() {
            assert!(s.position_error <= 1e-4);
            reached += 1;
        }
        iterations += u64::from(s.iterations);
    }
    let n = targets.len() as f64;
    (reached as f64 / n, iterations as f64 / n)
}

/// Mean iterations over targets that all must converge.
fn mean_iterations_all_converged(solver: &mut Solver, targets: &[(Vec<f64>, Target)]) -> f64 {
    let (r, it) = rate(solver, targets);
    assert!(r >= 0.99, "success rate {r}");
    it
}

#[test]
fn ccd_reaches_99_percent_of_reachable_targets() {
    let arm = arm();
    let mut solver = ccd(&arm, CcdOptions::default(), common());
    let (r, it) = rate(&mut solver, &targets(&arm, TARGETS, 1));
    println!(
        "ccd arm: {:.2} % reached, {it:.1} mean iterations",
        r * 100.0
    );
    assert!(r >= 0.99, "CCD reached only {:.2} %", r * 100.0);
}

#[test]
fn fabrik_reaches_99_percent_of_reachable_targets() {
    let arm = arm();
    let mut solver = fabrik(&arm, FabrikOptions::default(), common());
    let (r, it) = rate(&mut solver, &targets(&arm, TARGETS, 1));
    println!(
        "fabrik arm: {:.2} % reached, {it:.1} mean iterations",
        r * 100.0
    );
    assert!(r >= 0.99, "FABRIK reached only {:.2} %", r * 100.0);
}

#[test]
fn both_reach_99_percent_on_the_leg() {
    let leg = chain("leg");
    let t = targets(&leg, TARGETS, 2);
    let (rc, ic) = rate(&mut ccd(&leg, CcdOptions::default(), common()), &t);
    let (rf, jf) = rate(&mut fabrik(&leg, FabrikOptions::default(), common()), &t);
    println!(
        "leg: ccd {:.2} % ({ic:.1} it), fabrik {:.2} % ({jf:.1} it)",
        rc * 100.0,
        rf * 100.0
    );
    assert!(rc >= 0.99 && rf >= 0.99);
}

#[test]
fn pure_sweeps_without_restarts_mostly_converge() {
    // Without restarts and pattern moves the figures show what the classic
    // sweeps alone do; the additions exist for the remainder (slow crawls
    // near full stretch, stalls against joint limits).
    let arm = arm();
    let t = targets(&arm, TARGETS, 1);
    let no_restart_ccd = CcdOptions {
        restarts: false,
        pattern_moves: false,
        ..CcdOptions::default()
    };
    let no_restart_fabrik = FabrikOptions {
        restarts: false,
        pattern_moves: false,
        ..FabrikOptions::default()
    };
    let (rc, ic) = rate(&mut ccd(&arm, no_restart_ccd, common()), &t);
    let (rf, jf) = rate(&mut fabrik(&arm, no_restart_fabrik, common()), &t);
    println!(
        "classic sweeps only: ccd {:.2} % ({ic:.1} it), fabrik {:.2} % ({jf:.1} it)",
        rc * 100.0,
        rf * 100.0
    );
    assert!(rc >= 0.9 && rf >= 0.9);
}

#[test]
fn warm_tracking_follows_a_path_of_targets() {
    // Warm start from the previous answer along a random sequence.
    let arm = arm();
    let t = targets(&arm, TARGETS, 3);
    for mut solver in [
        ccd(&arm, CcdOptions::default(), common()),
        fabrik(&arm, FabrikOptions::default(), common()),
    ] {
        let mut q = arm.mid_configuration();
        let mut reached = 0;
        for (_, target) in &t {
            let s = solver.solve(target, &q).unwrap();
            assert_sane(&arm, &s);
            reached += usize::from(s.status.is_converged());
            q = s.q;
        }
        println!("{} warm chain: {reached}/{}", solver.kind(), t.len());
        assert!(reached as f64 >= 0.99 * t.len() as f64);
    }
}

#[test]
fn lower_greediness_takes_more_iterations_but_converges() {
    let arm = arm();
    let t = targets(&arm, 100, 4);
    let greedy = mean_iterations_all_converged(&mut ccd(&arm, CcdOptions::default(), common()), &t);
    let timid = CcdOptions {
        greediness: 0.5,
        max_iterations: 2000,
        ..CcdOptions::default()
    };
    let timid = mean_iterations_all_converged(&mut ccd(&arm, timid, common()), &t);
    println!("greediness 1: {greedy:.1} it, 0.5: {timid:.1} it");
    assert!(timid > greedy);
}

#[test]
fn lower_greediness_moves_the_tip_less_in_one_iteration() {
    let arm = arm();
    let seed = arm.mid_configuration();
    let start = arm.fk(&seed).translation.vector;
    let one = |greediness| CcdOptions {
        max_iterations: 1,
        greediness,
        restarts: false,
        pattern_moves: false,
        ..CcdOptions::default()
    };
    let mut full = ccd(&arm, one(1.0), common());
    let mut half = ccd(&arm, one(0.5), common());
    let (mut moved_full, mut moved_half) = (0.0, 0.0);
    for (_, t) in targets(&arm, 100, 5) {
        for (solver, moved) in [(&mut full, &mut moved_full), (&mut half, &mut moved_half)] {
            let s = solver.solve(&t, &seed).unwrap();
            assert_eq!(s.iterations, 1);
            *moved += (arm.fk(&s.q).translation.vector - start).norm();
        }
    }
    assert!(moved_half < moved_full, "{moved_half} vs {moved_full}");
}

#[test]
fn incremental_greediness_reaches_one_by_the_last_iteration() {
    let arm = arm();
    let incremental = |max_iterations| CcdOptions {
        max_iterations,
        greediness: 0.2,
        incremental: true,
        restarts: false,
        ..CcdOptions::default()
    };
    let o = incremental(50);
    assert_eq!(o.greediness_at(0), 0.2);
    assert!((o.greediness_at(25) - (0.2 + 0.8 * 25.0 / 49.0)).abs() < 1e-12);
    assert_eq!(o.greediness_at(49), 1.0);

    // With a single iteration, that iteration is the last: greediness 1.
    let seed = arm.mid_configuration();
    let greedy_once = CcdOptions {
        max_iterations: 1,
        restarts: false,
        ..CcdOptions::default()
    };
    let timid_once = CcdOptions {
        greediness: 0.2,
        ..greedy_once.clone()
    };
    let mut inc = ccd(&arm, incremental(1), common());
    let mut greedy = ccd(&arm, greedy_once, common());
    let mut timid = ccd(&arm, timid_once, common());
    for (_, t) in targets(&arm, 20, 6) {
        let a = inc.solve(&t, &seed).unwrap();
        let b = greedy.solve(&t, &seed).unwrap();
        let c = timid.solve(&t, &seed).unwrap();
        assert_eq!(a.q, b.q);
        assert_ne!(a.q, c.q);
    }

    // And it still converges with the default cap.
    let t = targets(&arm, 100, 7);
    let rising = CcdOptions {
        greediness: 0.2,
        incremental: true,
        ..CcdOptions::default()
    };
    let rising = mean_iterations_all_converged(&mut ccd(&arm, rising, common()), &t);
    println!("greediness rising from 0.2: {rising:.1} it");
}

/// Total iterations and worst position error for one epsilon.
fn with_epsilon(solver: &mut Solver, t: &[(Vec<f64>, Target)]) -> (u32, f64) {
    let seed = solver.chain().mid_configuration();
    let (mut total, mut worst) = (0, 0.0f64);
    for (_, target) in t {
        let s = solver.solve(target, &seed).unwrap();
        total += s.iterations;
        worst = worst.max(s.position_error);
    }
    (total, worst)
}

#[test]
fn epsilon_exits_early() {
    let arm = arm();
    let t = targets(&arm, 50, 8);
    let ccd_eps = |e| CcdOptions {
        epsilon: Some(e),
        ..CcdOptions::default()
    };
    let fabrik_eps = |e| FabrikOptions {
        epsilon: Some(e),
        ..FabrikOptions::default()
    };
    let runs = [
        (
            "ccd",
            ccd(&arm, ccd_eps(1e-2), common()),
            ccd(&arm, ccd_eps(1e-7), common()),
        ),
        (
            "fabrik",
            fabrik(&arm, fabrik_eps(1e-2), common()),
            fabrik(&arm, fabrik_eps(1e-7), common()),
        ),
    ];
    for (name, mut loose, mut tight) in runs {
        let (loose_it, loose_err) = with_epsilon(&mut loose, &t);
        let (tight_it, tight_err) = with_epsilon(&mut tight, &t);
        println!("{name}: epsilon 1e-2 {loose_it} it, 1e-7 {tight_it} it");
        assert!(loose_it < tight_it);
        assert!(loose_it < 200 * t.len() as u32);
        assert!(loose_err < 1e-2 && tight_err < 1e-4);
    }
}

#[test]
fn start_already_within_epsilon_takes_no_iteration() {
    let arm = arm();
    let (q, t) = targets(&arm, 1, 9).remove(0);
    for mut solver in [
        ccd(&arm, CcdOptions::default(), common()),
        fabrik(&arm, FabrikOptions::default(), common()),
    ] {
        let s = solver.solve(&t, &q).unwrap();
        assert_eq!((s.iterations, s.status), (0, SolveStatus::Converged));
    }
}

#[test]
fn warm_start_stays_near_and_reset_ignores_the_seed() {
    let arm = arm();
    let mut rng = Rng::new(10);
    let configs: [(CcdOptions, FabrikOptions); 2] = [
        (CcdOptions::default(), FabrikOptions::default()),
        (
            CcdOptions {
                start: Start::Reset(None),
                ..CcdOptions::default()
            },
            FabrikOptions {
                start: Start::Reset(None),
                ..FabrikOptions::default()
            },
        ),
    ];
    let [(warm_ccd, warm_fabrik), (reset_ccd, reset_fabrik)] = configs;
    let pairs = [
        (
            ccd(&arm, warm_ccd, common()),
            ccd(&arm, reset_ccd, common()),
        ),
        (
            fabrik(&arm, warm_fabrik, common()),
            fabrik(&arm, reset_fabrik, common()),
        ),
    ];
    for (mut warm, mut reset) in pairs {
        let (mut warm_it, mut reset_it) = (0, 0);
        let (mut warm_moved, mut reset_moved) = (0.0, 0.0);
        for (_, a) in targets(&arm, 50, 11) {
            // A solution, then a target 5 mm away from it.
            // From a random seed, so the first answer is not the one a reset
            // start would find anyway.
            let first = warm.solve(&a, &random_q(&arm, &mut rng)).unwrap();
            assert!(first.status.is_converged());
            let margin = arm.joints.iter().zip(&first.q);
            if margin
                .map(|(j, v)| (v - j.limits.lower).min(j.limits.upper - v))
                .any(|m| m < 0.1)
            {
                continue; // a step may need the other branch (yaw past its limit)
            }
            let step = Vector3::new(rng.range(-1.0, 1.0), rng.range(-1.0, 1.0), 0.5);
            let b = Target::position(a.position + 0.005 * step.normalize());
            let w = warm.solve(&b, &first.q).unwrap();
            let r = reset.solve(&b, &first.q).unwrap();
            if !(w.status.is_converged() && r.status.is_converged()) {
                continue; // stepped out of the workspace
            }
            warm_it += w.iterations;
            reset_it += r.iterations;
            let moved =
                |q: &[f64]| -> f64 { q.iter().zip(&first.q).map(|(x, y)| (x - y).abs()).sum() };
            assert!(
                moved(&w.q) < 1.0,
                "{} warm start jumped by {} rad: {:?} -> {:?} ({}, {} it)",
                warm.kind(),
                moved(&w.q),
                first.q,
                w.q,
                w.status,
                w.iterations
            );
            warm_moved += moved(&w.q);
            reset_moved += moved(&r.q);

            // Reset: the same answer whatever the seed.
            let other = random_q(&arm, &mut rng);
            assert_eq!(reset.solve(&b, &other).unwrap().q, r.q);
        }
        println!(
            "{}: warm {warm_it} it, moved {warm_moved:.2} rad; reset {reset_it} it, moved {reset_moved:.2} rad",
            warm.kind()
        );
        assert!(warm_it < reset_it);
        assert!(warm_moved * 3.0 < reset_moved);
    }
}

#[test]
fn reset_starts_from_the_given_rest_pose() {
    let arm = arm();
    let rest = vec![0.3, 0.5, 0.8, 0.4, 0.0];
    let once = CcdOptions {
        max_iterations: 0,
        start: Start::Reset(Some(rest.clone())),
        ..CcdOptions::default()
    };
    let far = Target::position(Vector3::new(0.2, 0.1, 0.1));
    let s = ccd(&arm, once, common())
        .solve(&far, &arm.mid_configuration())
        .unwrap();
    assert_eq!(s.q, rest);
    assert_eq!(s.status, SolveStatus::BestEffort(Reason::IterationCap));
}

#[test]
fn limits_hold_with_clamp_and_lock_modes() {
    let arm = arm();
    let mut c = common();
    c.modes = vec![
        JointMode::Free,
        JointMode::Clamp {
            min: -0.4,
            max: 0.6,
        },
        JointMode::Lock,
        JointMode::Free,
        JointMode::Clamp { min: 0.1, max: 0.2 },
    ];
    let mut rng = Rng::new(12);
    for mut solver in [
        ccd(&arm, CcdOptions::default(), c.clone()),
        fabrik(&arm, FabrikOptions::default(), c.clone()),
    ] {
        let mut reached = 0;
        for (_, t) in targets(&arm, 100, 13) {
            let seed = random_q(&arm, &mut rng);
            let s = solver.solve(&t, &seed).unwrap();
            assert_sane(&arm, &s);
            assert_eq!(s.q[2], seed[2], "locked elbow moved");
            assert!((-0.4..=0.6).contains(&s.q[1]));
            assert!((0.1..=0.2).contains(&s.q[4]));
            reached += usize::from(s.status.is_converged());
        }
        // Some targets stay reachable with these modes, which shows the
        // solver still works rather than freezing everything.
        println!("{} with modes: {reached}/100", solver.kind());
    }

    // A target reachable with the locked elbow is found.
    let seed = vec![0.0, 0.0, 0.9, 0.0, 0.15];
    let goal = arm.fk(&[0.7, 0.3, 0.9, -0.5, 0.15]).translation.vector;
    for mut solver in [
        ccd(&arm, CcdOptions::default(), c.clone()),
        fabrik(&arm, FabrikOptions::default(), c.clone()),
    ] {
        let s = solver.solve(&Target::position(goal), &seed).unwrap();
        assert_eq!(s.status, SolveStatus::Converged, "{}", solver.kind());
        assert_eq!(s.q[2], 0.9);
    }
}

#[test]
fn far_targets_are_out_of_reach_finite_and_in_limits() {
    let arm = arm();
    let far = [
        Vector3::new(1e6, 0.0, 0.0),
        Vector3::new(0.0, 0.0, 1e6),
        Vector3::new(-1e6, 3e5, -2e6),
        Vector3::new(0.0, -1e6, 1.0),
    ];
    let mut rng = Rng::new(14);
    for mut solver in [
        ccd(&arm, CcdOptions::default(), common()),
        fabrik(&arm, FabrikOptions::default(), common()),
    ] {
        for p in far {
            let seed = random_q(&arm, &mut rng);
            let s = solver.solve(&Target::position(p), &seed).unwrap();
            assert_sane(&arm, &s);
            assert_eq!(s.status, SolveStatus::BestEffort(Reason::OutOfReach));
        }
        // Straight out along +x the arm can stretch towards it: the answer
        // must get the tip closer than the zero pose (pointing up) does.
        let p = Vector3::new(1e6, 0.0, 0.0);
        let s = solver.solve(&Target::position(p), &[0.0; 5]).unwrap();
        let root = arm.fk(&[0.0; 5]).translation.vector - Vector3::new(0.0, 0.0, 0.37);
        let best = (p - root).norm() - 0.37;
        let up = (p - arm.fk(&[0.0; 5]).translation.vector).norm();
        println!(
            "{} at 1e6 m along x: {:.4} m worse than fully stretched, q = {:.3?}",
            solver.kind(),
            s.position_error - best,
            s.q
        );
        assert!(s.position_error < up - 0.2, "{}", solver.kind());
    }
}

#[test]
fn non_finite_seeds_give_finite_answers() {
    let arm = arm();
    let (_, t) = targets(&arm, 1, 15).remove(0);
    let seed = [f64::NAN, f64::INFINITY, 0.0, f64::NEG_INFINITY, f64::NAN];
    for mut solver in [
        ccd(&arm, CcdOptions::default(), common()),
        fabrik(&arm, FabrikOptions::default(), common()),
    ] {
        let s = solver.solve(&t, &seed).unwrap();
        assert_sane(&arm, &s);
        assert!(s.status.is_converged());
    }
}

#[test]
fn bad_options_are_rejected() {
    let arm = arm();
    for greediness in [0.0, -0.5, 1.5, f64::NAN] {
        let o = CcdOptions {
            greediness,
            ..CcdOptions::default()
        };
        assert!(Solver::new(&arm, SolverConfig::Ccd(o), common()).is_err());
    }
    let o = FabrikOptions {
        epsilon: Some(-1.0),
        ..FabrikOptions::default()
    };
    assert!(Solver::new(&arm, SolverConfig::Fabrik(o), common()).is_err());
    let o = FabrikOptions {
        start: Start::Reset(Some(vec![0.0; 3])),
        ..FabrikOptions::default()
    };
    assert!(Solver::new(&arm, SolverConfig::Fabrik(o), common()).is_err());
}

#[test]
fn ccd_also_reduces_orientation_error_on_pose_targets() {
    // Poses made by forward kinematics are reachable even for 5 DOF.
    let arm = arm();
    let mut rng = Rng::new(16);
    let mut solver = ccd(&arm, CcdOptions::default(), common());
    let seed = arm.mid_configuration();
    let mut reached = 0;
    let (mut before, mut after) = (0.0, 0.0);
    let count = 100;
    for _ in 0..count {
        let q = random_q(&arm, &mut rng);
        let tip = arm.fk(&q);
        let rot = nalgebra::UnitQuaternion::from_rotation_matrix(&tip.rotation);
        let s = solver
            .solve(&Target::pose(tip.translation.vector, rot), &seed)
            .unwrap();
        assert_sane(&arm, &s);
        reached += usize::from(s.status.is_converged());
        before += arm.fk(&seed).rotation.angle_to(&tip.rotation);
        after += s.orientation_error;
    }
    println!(
        "ccd pose targets: {reached}/{count} within 0.1 mm and 1 mrad, mean angle {:.4} -> {:.4} rad",
        before / count as f64,
        after / count as f64
    );
    assert!(reached * 2 >= count);
    assert!(after < 0.2 * before);
}
