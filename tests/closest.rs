//! The Jacobian solver's closest mode: among the solutions inside the
//! limits, the one nearest the seed. What a user relies on: it still
//! reaches every target the plain mode reaches, its answers are nearer the
//! seed, a seed that already solves the target comes back unchanged, and
//! the per-joint weights say which joints should move least.
//!
//! Budgets are generous so that these are about the answers, not timing
//! (the closest mode's time is in `arm_ik bench`).

mod common;

use arm_ik::ik::joint_distance;
use arm_ik::ik::{
    Closest, Common, IkError, JacobianOptions, SolveStatus, Solver, SolverConfig, Target,
};
use arm_ik::model::Chain;
use common::{TestRng, cpu_clock, pose_of, position_of, project_urdf, random_q, shared_urdf};
use std::time::Duration;

fn arm() -> Chain {
    Chain::from_urdf_file(project_urdf("arm.urdf"), None, None).expect("arm.urdf loads")
}

fn solver(chain: &Chain, closest: Option<Closest>) -> Solver {
    let options = JacobianOptions {
        budget: Duration::from_secs(if cfg!(debug_assertions) { 2 } else { 1 }),
        // Preemption on a loaded machine must not end a solve early.
        clock: cpu_clock(),
        closest,
        ..JacobianOptions::default()
    };
    Solver::new(chain, SolverConfig::Jacobian(options), Common::default()).expect("valid options")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Solves `targets` from `seed` in both modes; returns the distances of
/// the answers to the seed (plain, closest). Every answer must converge
/// and stay inside the limits.
fn both_modes(chain: &Chain, targets: &[Target], seed: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let mut plain = solver(chain, None);
    let mut closest = solver(chain, Some(Closest::default()));
    let mut out = (Vec::new(), Vec::new());
    for (k, t) in targets.iter().enumerate() {
        for (s, d) in [(&mut plain, &mut out.0), (&mut closest, &mut out.1)] {
            let sol = s.solve(t, seed).unwrap();
            assert_eq!(sol.status, SolveStatus::Converged, "target {k}: {sol:?}");
            assert!(chain.within_limits(&sol.q), "target {k}: {:?}", sol.q);
            d.push(joint_distance(chain, &sol.q, seed, &[]));
        }
    }
    out
}

fn targets(chain: &Chain, n: usize, of: fn(&Chain, &[f64]) -> Target) -> Vec<Target> {
    let mut rng = TestRng::new(41);
    (0..n)
        .map(|_| of(chain, &random_q(chain, &mut rng)))
        .collect()
}

/// Asserts that the closest mode's answers are nearer the seed than the
/// plain mode's: on average, and target by target far more often than not.
fn nearer_than_plain(what: &str, chain: &Chain, targets: &[Target], seed: &[f64]) {
    let (plain, closest) = both_modes(chain, targets, seed);
    let nearer = plain
        .iter()
        .zip(&closest)
        .filter(|(p, c)| **c < **p - 1e-3)
        .count();
    let farther = plain
        .iter()
        .zip(&closest)
        .filter(|(p, c)| **c > **p + 1e-3)
        .count();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (a, b) = (mean(&plain), mean(&closest));
    println!(
        "{what}: mean |q - seed| {a:.3} plain, {b:.3} closest; nearer for {nearer} \
         targets, farther for {farther}"
    );
    assert!(b < a, "{what}: closest {b} is not nearer than plain {a}");
    assert!(
        nearer >= 3 && farther * 5 <= nearer,
        "{what}: {nearer} nearer, {farther} farther"
    );
}

#[test]
fn answers_are_nearer_the_seed_than_the_first_solution() {
    // Position targets on the project arm: two joints of self-motion, the
    // answer slides along them. (Its full poses have one solution inside
    // the limits: nothing to choose.)
    let chain = arm();
    let seed = chain.mid_configuration();
    nearer_than_plain(
        "arm, position",
        &chain,
        &targets(&chain, 100, position_of),
        &seed,
    );
    // Full poses on the shared arms: eight solution branches on the UR5,
    // a joint of self-motion on the Panda.
    for (urdf, base, tip) in [
        ("ur5_robot.urdf", "base_link", "tool0"),
        ("panda.urdf", "panda_link0", "panda_hand"),
    ] {
        let Some(path) = shared_urdf(urdf) else {
            continue;
        };
        let chain = Chain::from_urdf_file(path, Some(base), Some(tip)).unwrap();
        let seed = chain.mid_configuration();
        let n = if cfg!(debug_assertions) { 10 } else { 50 };
        nearer_than_plain(urdf, &chain, &targets(&chain, n, pose_of), &seed);
    }
}

#[test]
fn ur5_answers_use_the_turn_nearest_the_seed() {
    // Every UR5 joint but the elbow ranges over two turns: the same pose
    // is reached a whole turn away. Both modes return the turn nearest the
    // seed, so no joint is more than half a turn from it.
    let Some(urdf) = shared_urdf("ur5_robot.urdf") else {
        return;
    };
    let chain = Chain::from_urdf_file(urdf, Some("base_link"), Some("tool0")).unwrap();
    let seed = vec![0.0; 6];
    let (plain, closest) = both_modes(&chain, &targets(&chain, 20, pose_of), &seed);
    assert!(median(closest.clone()) <= median(plain));
    let mut s = solver(&chain, None);
    for t in targets(&chain, 20, pose_of) {
        let q = s.solve(&t, &seed).unwrap().q;
        assert!(
            q.iter().all(|v| v.abs() <= std::f64::consts::PI + 1e-9),
            "a joint a turn away from the seed: {q:?}"
        );
    }
}

#[test]
fn a_seed_that_solves_the_target_comes_back() {
    let chain = arm();
    let mut rng = TestRng::new(5);
    let mut s = solver(&chain, Some(Closest::default()));
    for of in [pose_of as fn(&Chain, &[f64]) -> Target, position_of] {
        for _ in 0..20 {
            let q = random_q(&chain, &mut rng);
            let sol = s.solve(&of(&chain, &q), &q).unwrap();
            assert_eq!(sol.status, SolveStatus::Converged);
            let d = joint_distance(&chain, &sol.q, &q, &[]);
            assert!(d < 1e-6, "moved {d} rad from a seed that solves it");
        }
    }
}

#[test]
fn a_heavy_joint_moves_less() {
    // Position targets on the 5-joint arm leave self-motion in the pitch
    // joints (shoulder, elbow, wrist pitch), bounded by their limits:
    // weighting the shoulder 100 times the others keeps it nearer its seed,
    // and the answers are nearer in the weighted distance, which is what
    // the mode minimises.
    let chain = arm();
    let seed = chain.mid_configuration();
    let weights = vec![1.0, 100.0, 1.0, 1.0, 1.0];
    let heavy = Closest {
        weights: weights.clone(),
        ..Closest::default()
    };
    let mut plain = solver(&chain, Some(Closest::default()));
    let mut weighted = solver(&chain, Some(heavy));
    let (mut shoulder, mut distance) = ([0.0; 2], [Vec::new(), Vec::new()]);
    for t in targets(&chain, 40, position_of) {
        for (k, s) in [&mut plain, &mut weighted].into_iter().enumerate() {
            let sol = s.solve(&t, &seed).unwrap();
            assert_eq!(sol.status, SolveStatus::Converged);
            shoulder[k] += (sol.q[1] - seed[1]).abs();
            distance[k].push(joint_distance(&chain, &sol.q, &seed, &weights));
        }
    }
    let [a, b] = distance.map(median);
    println!(
        "shoulder moved {:.3} rad in total, {:.3} when heavy; weighted distance {a:.3}, {b:.3}",
        shoulder[0], shoulder[1]
    );
    assert!(shoulder[1] < 0.9 * shoulder[0]);
    assert!(b < 0.8 * a);
}

#[test]
fn bad_weights_are_refused_by_name() {
    let chain = arm();
    let options = |weights: Vec<f64>| {
        SolverConfig::Jacobian(JacobianOptions {
            closest: Some(Closest {
                weights,
                ..Closest::default()
            }),
            ..JacobianOptions::default()
        })
    };
    let err = Solver::new(&chain, options(vec![1.0; 3]), Common::default()).unwrap_err();
    assert!(
        matches!(&err, IkError::BadOption { option: "closest.weights", why, .. } if why.contains("3 values for 5 joints")),
        "{err}"
    );
    let err = Solver::new(
        &chain,
        options(vec![1.0, 1.0, -2.0, 1.0, 1.0]),
        Common::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("'elbow'"), "{err}");
}

/// The `arm_ik solve` command line (feature `app`).
#[cfg(feature = "app")]
#[test]
fn solve_closest_weighs_joints_by_name_and_belongs_to_the_jacobian_solver() {
    let solve = |extra: &[&str]| {
        let mut args = vec![
            "solve",
            "--urdf",
            "urdf/arm.urdf",
            "--position",
            "0.15,0.1,0.2",
            "--json",
            "--closest",
        ];
        args.extend_from_slice(extra);
        common::arm_ik(&args)
    };
    let out = solve(&["--closest-weight", "shoulder=10"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["status"], "converged");

    // Refused with a message naming why: a joint the robot does not have
    // is an error (1), a value wrong whatever the robot a usage error (64).
    let refused = |extra: &[&str], code: i32, says: &str| {
        let out = solve(extra);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{err}");
        assert!(err.contains(says), "{err}");
    };
    refused(&["--closest-weight", "sholder=10"], 1, "no joint 'sholder'");
    refused(&["--closest-weight", "shoulder=-1"], 64, "'shoulder'");
    refused(&["--solver", "ccd"], 64, "--closest");
}
