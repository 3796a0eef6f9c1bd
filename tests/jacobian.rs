//! Acceptance tests of the constrained Jacobian (Levenberg-Marquardt) solver:
//! the behaviour a user relies on, on the project arm and, when the shared
//! conformance data is present, on the real robots.
//!
//! Budgets are generous (50 ms) and counted on the solving thread's CPU
//! time (`common::cpu_clock`), so that these tests are about accuracy and
//! behaviour, not timing, however loaded the machine: timing goals live in
//! the benchmarks. Targets come
//! from fixed-seed generators, so every run is reproducible. Run with
//! `--nocapture` to see the figures.

mod common;

use arm_ik::ik::{
    Clock, Common, JacobianOptions, JointMode, Reason, Solution, SolveStatus, Solver, SolverConfig,
    Target, Tolerance,
};
use arm_ik::model::Chain;
use common::{TestRng, cpu_clock, pose_of, position_of, project_urdf, random_q, shared_dir};
use nalgebra::{UnitQuaternion, Vector3};
use std::time::Duration;

/// The protocol's tolerances: 1e-5 m, 1e-5 rad.
const TOL: Tolerance = Tolerance {
    position: 1e-5,
    orientation: 1e-5,
};

fn arm() -> Chain {
    Chain::from_urdf_file(project_urdf("arm.urdf"), None, None).expect("arm.urdf loads")
}

/// The budget of the accuracy tests: 50 ms in release, so the outcome is
/// about accuracy and never about timing (release solves take 5-15 µs median,
/// under 0.5 ms at p99). An unoptimised build runs the solver about 100 times
/// slower, so debug builds get 2 s: enough that the budget still never
/// decides a reachable target. Counted on CPU time ([`generous`]), so
/// preemption by other tests or processes does not decide it either.
const GENEROUS: Duration = if cfg!(debug_assertions) {
    Duration::from_secs(2)
} else {
    Duration::from_millis(50)
};

/// Options with the generous budget, on the CPU clock.
fn generous() -> JacobianOptions {
    JacobianOptions {
        budget: GENEROUS,
        clock: cpu_clock(),
        ..JacobianOptions::default()
    }
}

/// For best-effort answers whose quality is checked: they search until the
/// budget ends, so it must hold several full descents even unoptimised.
const BEST_EFFORT_MS: u64 = if cfg!(debug_assertions) { 200 } else { 10 };

/// Options with a short budget, for solves expected to run it out (a
/// best-effort answer searches until the budget ends), on the CPU clock:
/// preempted, the search still gets all of its computing time.
fn short(budget_ms: u64) -> JacobianOptions {
    JacobianOptions {
        budget: Duration::from_millis(budget_ms),
        clock: cpu_clock(),
        ..JacobianOptions::default()
    }
}

fn solver(chain: &Chain, options: JacobianOptions, modes: Vec<JointMode>) -> Solver {
    Solver::new(
        chain,
        SolverConfig::Jacobian(options),
        Common {
            tolerance: TOL,
            modes,
        },
    )
    .expect("valid options")
}

/// Every answer, whatever its status: one finite value per joint, inside
/// the URDF limits, with finite reported errors that match the answer.
fn assert_sane(chain: &Chain, target: &Target, s: &Solution) {
    assert_eq!(s.q.len(), chain.dof());
    assert!(chain.within_limits(&s.q), "outside the limits: {:?}", s.q);
    let tip = chain.fk(&s.q);
    let pe = (target.position - tip.translation.vector).norm();
    assert!(
        (pe - s.position_error).abs() <= 1e-12 * (1.0 + pe),
        "reported position error {} but FK says {pe}",
        s.position_error
    );
    assert!(s.orientation_error.is_finite());
}

fn distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt()
}

/// Debug builds run fewer targets: the solver is ~20x slower unoptimised.
fn count(release: usize) -> usize {
    if cfg!(debug_assertions) {
        release / 4
    } else {
        release
    }
}

#[test]
fn full_pose_targets_are_reached_to_protocol_tolerance() {
    let chain = arm();
    let mut s = solver(&chain, generous(), Vec::new());
    let mid = chain.mid_configuration();
    let mut rng = TestRng::new(11);
    let n = count(2000);
    let mut converged = 0;
    let mut failures = Vec::new();
    for _ in 0..n {
        let q = random_q(&chain, &mut rng);
        let target = pose_of(&chain, &q);
        let sol = s.solve(&target, &mid).expect("valid target");
        assert_sane(&chain, &target, &sol);
        if sol.status == SolveStatus::Converged {
            // The claim is checked against the chain's own FK.
            assert!(sol.position_error <= TOL.position, "{sol:?}");
            assert!(sol.orientation_error <= TOL.orientation, "{sol:?}");
            converged += 1;
        } else {
            failures.push((q, sol.status));
        }
    }
    let rate = converged as f64 / n as f64;
    println!("arm full pose: {converged}/{n} = {:.2} %", 100.0 * rate);
    assert!(
        rate >= 0.995,
        "only {:.2} % converged; first failures: {:?}",
        100.0 * rate,
        &failures[..failures.len().min(5)]
    );
}

#[test]
fn position_only_targets_ignore_orientation() {
    let chain = arm();
    let mid = chain.mid_configuration();
    let mut rng = TestRng::new(12);
    // Separate solvers so the restart generators are in the same state.
    let mut plain = solver(&chain, generous(), Vec::new());
    let mut weighted = solver(&chain, generous(), Vec::new());
    let n = count(800);
    let mut converged = 0;
    for _ in 0..n {
        let q = random_q(&chain, &mut rng);
        let p = chain.fk(&q).translation.vector;
        let none = Target::position(p);
        // A random orientation, mostly unreachable at that point for a
        // 5-DOF arm: with weight 0 it must not matter at all.
        let o = UnitQuaternion::from_euler_angles(
            rng.range(-3.0, 3.0),
            rng.range(-1.5, 1.5),
            rng.range(-3.0, 3.0),
        );
        let zero_weight = Target {
            orientation_weight: 0.0,
            ..Target::pose(p, o)
        };
        let a = plain.solve(&none, &mid).unwrap();
        let b = weighted.solve(&zero_weight, &mid).unwrap();
        assert_sane(&chain, &none, &a);
        assert_sane(&chain, &zero_weight, &b);
        assert_eq!(a.orientation_error, 0.0, "no orientation asked");
        assert_eq!(
            a.q, b.q,
            "orientation with weight 0 changed the answer for {p:?}"
        );
        assert_eq!(a.status, b.status);
        if a.status == SolveStatus::Converged {
            assert!(a.position_error <= TOL.position);
            converged += 1;
        }
    }
    println!("arm position only: {converged}/{n}");
    // Position only on a 5-DOF arm is redundant: every target converges.
    assert_eq!(converged, n);
}

#[test]
fn locked_joint_stays_exactly_at_the_seed() {
    let chain = arm();
    let mut modes = vec![JointMode::Free; chain.dof()];
    modes[1] = JointMode::Lock;
    let mut s = solver(&chain, generous(), modes);
    let mut rng = TestRng::new(13);
    let mut converged = 0;
    let n = count(200);
    for _ in 0..n {
        let mut q = random_q(&chain, &mut rng);
        let locked = rng.range(-1.2, 1.2);
        q[1] = locked;
        // Reachable with the shoulder at the locked value.
        let target = position_of(&chain, &q);
        let mut seed = chain.mid_configuration();
        seed[1] = locked;
        let sol = s.solve(&target, &seed).unwrap();
        assert_sane(&chain, &target, &sol);
        assert_eq!(sol.q[1].to_bits(), locked.to_bits(), "locked joint moved");
        converged += usize::from(sol.status.is_converged());
    }
    // The four other joints still reach every position the lock allows.
    assert_eq!(converged, n);
}

#[test]
fn clamped_joint_stays_inside_its_clamp() {
    let chain = arm();
    let (min, max) = (-0.4, 0.6);
    let mut modes = vec![JointMode::Free; chain.dof()];
    modes[2] = JointMode::Clamp { min, max };
    // Targets the clamp allows must converge (generous budget); targets
    // from anywhere in the URDF limits often need the elbow outside the
    // clamp and search until the budget ends (short budget).
    let mut allowed = solver(&chain, generous(), modes.clone());
    let mut any = solver(&chain, short(5), modes);
    let mid = chain.mid_configuration();
    let mut rng = TestRng::new(14);
    let (mut inside, mut converged, mut outside) = (0, 0, 0);
    // The full count in debug too: a quarter leaves too few targets inside.
    let n = 200;
    for _ in 0..n {
        let q = random_q(&chain, &mut rng);
        let target = pose_of(&chain, &q);
        let reachable = (min..=max).contains(&q[2]);
        let s = if reachable { &mut allowed } else { &mut any };
        let sol = s.solve(&target, &mid).unwrap();
        assert_sane(&chain, &target, &sol);
        assert!(
            (min..=max).contains(&sol.q[2]),
            "elbow {} outside the clamp [{min}, {max}]",
            sol.q[2]
        );
        if reachable {
            inside += 1;
            converged += usize::from(sol.status.is_converged());
        } else {
            outside += 1;
        }
    }
    println!(
        "clamp: {converged}/{inside} targets made inside the clamp converged; {outside} made outside"
    );
    assert!(inside > 10 && outside > 10);
    assert!(converged as f64 >= 0.99 * inside as f64);
}

#[test]
fn target_reachable_only_outside_the_clamp_is_best_effort_inside() {
    let chain = arm();
    // The arm's links all lie in the vertical plane of the base yaw: a point
    // at azimuth 1.0 rad (and off the z axis) needs the yaw at 1.0 or
    // 1.0 - pi, both outside this clamp.
    let mut modes = vec![JointMode::Free; chain.dof()];
    modes[0] = JointMode::Clamp {
        min: -0.3,
        max: 0.3,
    };
    let mut s = solver(&chain, short(BEST_EFFORT_MS), modes);
    let q = [1.0, 0.7, 0.5, 0.3, 0.0];
    let target = position_of(&chain, &q);
    let sol = s.solve(&target, &chain.mid_configuration()).unwrap();
    assert_sane(&chain, &target, &sol);
    assert!(
        matches!(sol.status, SolveStatus::BestEffort(_)),
        "status {:?}",
        sol.status
    );
    assert!(
        (-0.3..=0.3).contains(&sol.q[0]),
        "yaw {} left the clamp",
        sol.q[0]
    );
    // Best effort: the yaw sits on the clamp edge nearest the target.
    assert!((sol.q[0] - 0.3).abs() < 1e-9, "yaw {}", sol.q[0]);
}

/// Targets near `rest` (a random offset of up to `spread` rad per joint),
/// solved from `seed` with and without the null-space pull toward `rest`.
/// Both must converge; returns the mean distance to `rest` of the answers
/// with the pull and without, and how often the pull's answer was closer.
fn pull_toward_rest(
    chain: &Chain,
    targets: impl Fn(&[f64]) -> Target,
    seed: &[f64],
    rest: &[f64],
    spread: f64,
    n: usize,
) -> (f64, f64, usize) {
    let make = |gain| {
        let options = JacobianOptions {
            redundancy: arm_ik::ik::Redundancy::Posture,
            rest: Some(rest.to_vec()),
            null_space_gain: gain,
            ..generous()
        };
        solver(chain, options, Vec::new())
    };
    let (mut pulled, mut plain) = (make(0.5), make(0.0));
    let mut rng = TestRng::new(15);
    let (mut closer, mut sum_pulled, mut sum_plain) = (0, 0.0, 0.0);
    for _ in 0..n {
        let q: Vec<f64> = rest
            .iter()
            .zip(&chain.joints)
            .map(|(r, j)| j.limits.clamp(r + rng.range(-spread, spread)))
            .collect();
        let target = targets(&q);
        let a = pulled.solve(&target, seed).unwrap();
        let b = plain.solve(&target, seed).unwrap();
        assert_sane(chain, &target, &a);
        assert_eq!(
            a.status,
            SolveStatus::Converged,
            "the pull broke convergence"
        );
        assert_eq!(b.status, SolveStatus::Converged);
        let (da, db) = (distance(&a.q, rest), distance(&b.q, rest));
        sum_pulled += da;
        sum_plain += db;
        closer += usize::from(da < db);
    }
    (sum_pulled / n as f64, sum_plain / n as f64, closer)
}

#[test]
fn null_space_pull_moves_redundant_solutions_toward_rest() {
    // Position only on the 5-DOF arm leaves two joints' worth of freedom
    // (the wrist roll and one planar self-motion).
    let chain = arm();
    let mid = chain.mid_configuration();
    let rest = [0.3, 0.5, 0.9, 0.6, 0.4];
    let n = count(200);
    let (pulled, plain, closer) =
        pull_toward_rest(&chain, |q| position_of(&chain, q), &mid, &rest, 0.3, n);
    println!(
        "arm null space: mean distance to rest {pulled:.3} with the pull, {plain:.3} without; closer in {closer}/{n}"
    );
    assert!(pulled < 0.65 * plain);
    assert!(closer as f64 >= 0.9 * n as f64);
}

#[test]
fn null_space_pull_on_panda_full_pose() {
    let Some(dir) = shared_dir() else { return };
    let chain = Chain::from_urdf_file(
        dir.join("robots/panda.urdf"),
        Some("panda_link0"),
        Some("panda_hand"),
    )
    .unwrap();
    let mid = chain.mid_configuration();
    // A rest pose away from the seed (the middle of the limits); full pose
    // on 7 joints leaves one joint's worth of self-motion (the elbow).
    let rest = [0.5, 0.3, -0.6, -1.2, 0.4, 1.5, 0.3];
    let n = count(200);
    let (pulled, plain, closer) =
        pull_toward_rest(&chain, |q| pose_of(&chain, q), &mid, &rest, 0.3, n);
    println!(
        "panda null space: mean distance to rest {pulled:.3} with the pull, {plain:.3} without; closer in {closer}/{n}"
    );
    assert!(pulled < 0.7 * plain);
    assert!(closer as f64 >= 0.8 * n as f64);
}

#[test]
fn unreachable_target_points_the_arm_at_it() {
    let chain = arm();
    let mut s = solver(&chain, short(BEST_EFFORT_MS), Vec::new());
    // Everything from the shoulder on is one 0.33 m stretch when straight.
    let shoulder = Vector3::new(0.0, 0.0, 0.085);
    let length = 0.12 + 0.11 + 0.045 + 0.055;
    for (yaw, tilt, dist) in [(0.4, 0.6, 2.0), (-1.0, 1.2, 0.5), (0.0, 0.0, 10.0)] {
        let dir = Vector3::new(
            f64::sin(tilt) * f64::cos(yaw),
            f64::sin(tilt) * f64::sin(yaw),
            f64::cos(tilt),
        );
        let target = Target::position(shoulder + dist * dir);
        let sol = s.solve(&target, &chain.mid_configuration()).unwrap();
        assert_sane(&chain, &target, &sol);
        assert_eq!(sol.status, SolveStatus::BestEffort(Reason::OutOfReach));
        let tip = chain.fk(&sol.q).translation.vector;
        let pointing = (tip - shoulder).normalize().dot(&dir);
        assert!(
            pointing > 1.0 - 1e-6,
            "tip points {pointing} off the target"
        );
        let expected = dist - length;
        assert!(
            (sol.position_error - expected).abs() < 1e-6,
            "error {} but the closest pose is {expected} away",
            sol.position_error
        );
    }
}

#[test]
fn singular_seed_on_the_arm_still_converges() {
    // At q = 0 the arm points straight up: the Jacobian has no z row, so a
    // target straight below the tip gives a zero gradient. Damping alone
    // cannot move; the restarts must.
    let chain = arm();
    let zero = vec![0.0; chain.dof()];
    let mut s = solver(&chain, generous(), Vec::new());
    for z in [0.35, 0.3, 0.2] {
        let target = Target::position(Vector3::new(0.0, 0.0, z));
        let sol = s.solve(&target, &zero).unwrap();
        assert_sane(&chain, &target, &sol);
        assert_eq!(sol.status, SolveStatus::Converged, "z = {z}: {sol:?}");
    }
    // And a full pose next to the singular seed.
    let target = pose_of(&chain, &[0.0, 0.05, -0.1, 0.05, 0.2]);
    let sol = s.solve(&target, &zero).unwrap();
    assert_eq!(sol.status, SolveStatus::Converged, "{sol:?}");
}

#[test]
fn restarts_escape_what_a_single_descent_cannot() {
    // The same singular seed and target as above: without restarts the
    // descent has nowhere to go.
    let chain = arm();
    let zero = vec![0.0; chain.dof()];
    let target = Target::position(Vector3::new(0.0, 0.0, 0.2));
    let single = JacobianOptions {
        restarts: false,
        ..generous()
    };
    let max_iterations = single.max_iterations;
    let mut without = solver(&chain, single, Vec::new());
    let sol = without.solve(&target, &zero).unwrap();
    assert_sane(&chain, &target, &sol);
    assert!(
        matches!(sol.status, SolveStatus::BestEffort(_)),
        "a single descent from a zero gradient should not converge: {sol:?}"
    );
    assert!(sol.iterations <= max_iterations);
    let mut with = solver(&chain, generous(), Vec::new());
    assert_eq!(
        with.solve(&target, &zero).unwrap().status,
        SolveStatus::Converged
    );
}

#[test]
fn without_restarts_one_attempt_never_exceeds_the_iteration_cap() {
    let chain = arm();
    let single = JacobianOptions {
        restarts: false,
        max_iterations: 25,
        ..generous()
    };
    let mut s = solver(&chain, single, Vec::new());
    let mid = chain.mid_configuration();
    let mut rng = TestRng::new(16);
    for _ in 0..count(200) {
        let q = random_q(&chain, &mut rng);
        let target = pose_of(&chain, &q);
        let sol = s.solve(&target, &mid).unwrap();
        assert_sane(&chain, &target, &sol);
        assert!(sol.iterations <= 25, "{} iterations", sol.iterations);
    }
}

/// An own clock that never advances: the thread "never ran".
fn frozen() -> Duration {
    Duration::ZERO
}

/// An own clock a second later at every reading.
fn jumping() -> Duration {
    use std::sync::atomic::{AtomicU64, Ordering};
    static TICKS: AtomicU64 = AtomicU64::new(0);
    Duration::from_secs(TICKS.fetch_add(1, Ordering::Relaxed))
}

#[test]
fn the_budget_is_counted_on_the_chosen_clock() {
    // The singular seed of the test above: its first descent cannot
    // converge, so only restarts (time) reach the target. A budget of
    // 1 ns ends the search at its first check on the wall clock, and on an
    // own clock that jumps; on one that never advances time never ends it
    // and the restarts find the solution.
    let chain = arm();
    let zero = vec![0.0; chain.dof()];
    let target = Target::position(Vector3::new(0.0, 0.0, 0.2));
    let on = |clock| JacobianOptions {
        budget: Duration::from_nanos(1),
        clock,
        ..JacobianOptions::default()
    };
    for (name, clock) in [("wall", Clock::Wall), ("jumping", Clock::Own(jumping))] {
        let sol = solver(&chain, on(clock), Vec::new())
            .solve(&target, &zero)
            .unwrap();
        assert_sane(&chain, &target, &sol);
        assert!(
            matches!(
                sol.status,
                SolveStatus::BestEffort(Reason::TimeBudget)
                    | SolveStatus::Failed(Reason::TimeBudget)
            ),
            "{name}: {sol:?}"
        );
    }
    let sol = solver(&chain, on(Clock::Own(frozen)), Vec::new())
        .solve(&target, &zero)
        .unwrap();
    assert_eq!(sol.status, SolveStatus::Converged, "{sol:?}");
}

/// The shared benchmark protocol on the real robots; the target files
/// and the protocol live in `bench`, part of the application.
#[cfg(feature = "app")]
mod protocol {
    use super::*;
    use arm_ik::bench::{self, Criteria, TargetSet, Verdict};
    use std::path::Path;

    #[test]
    fn singular_zero_seed_on_ur5_converges() {
        let Some(dir) = shared_dir() else { return };
        let set = TargetSet::load(dir.join("targets/ur5.json")).unwrap();
        let chain =
            Chain::from_urdf_file(set.urdf_path(), Some(&set.base_link), Some(&set.tip_link))
                .unwrap();
        let zero = vec![0.0; chain.dof()];
        let mut s = solver(&chain, generous(), Vec::new());
        let samples: Vec<_> = set.samples.iter().step_by(10).collect();
        let mut converged = 0;
        for sample in &samples {
            let target = bench::sample_target(sample, arm_ik::ik::OrientationMode::Full);
            let sol = s.solve(&target, &zero).unwrap();
            assert_sane(&chain, &target, &sol);
            converged += usize::from(sol.status.is_converged());
        }
        println!("ur5 from zero: {converged}/{}", samples.len());
        assert_eq!(converged, samples.len());
    }

    /// Runs the shared protocol on one target file. Debug builds run every 5th
    /// sample (a deterministic subset): all 1000 LM solves per robot take tens
    /// of seconds unoptimised. Release runs the full file.
    fn conformance(name: &str, dir: &Path) {
        let mut set = TargetSet::load(dir.join(format!("targets/{name}.json"))).unwrap();
        if cfg!(debug_assertions) {
            set.samples = set.samples.into_iter().step_by(5).collect();
        }
        let chain =
            Chain::from_urdf_file(set.urdf_path(), Some(&set.base_link), Some(&set.tip_link))
                .unwrap();
        let seed = set.seed("mid").unwrap().to_vec();
        let criteria = Criteria {
            position_tolerance: 1e-5,
            orientation_tolerance: 1e-5,
            budget: GENEROUS,
            clock: arm_ik::ik::BudgetClock::Cpu,
            orientation: set.orientation_mode(),
        };
        let mut s = solver(&chain, generous(), Vec::new());
        let records = bench::run(&mut s, &set, &seed, &criteria);
        let summary = bench::summarize("jacobian", &set, &records, &criteria);
        println!(
            "{name}: {} targets, {:.1} % success, p50 {:.0} us, p99 {:.0} us",
            summary.n,
            100.0 * summary.success_rate,
            summary.p50_us,
            summary.p99_us
        );
        let failed: Vec<_> = records
            .iter()
            .enumerate()
            .filter(|(_, r)| r.status != Verdict::Success)
            .map(|(i, r)| (i, r.status, r.detail.clone()))
            .collect();
        assert!(
            summary.success_rate >= 0.999,
            "{name}: {:.2} % success; failures: {:?}",
            100.0 * summary.success_rate,
            &failed[..failed.len().min(10)]
        );
    }

    #[test]
    fn conformance_ur5() {
        if let Some(dir) = shared_dir() {
            conformance("ur5", &dir);
        }
    }

    #[test]
    fn conformance_panda() {
        if let Some(dir) = shared_dir() {
            conformance("panda", &dir);
        }
    }

    #[test]
    fn conformance_so101() {
        if let Some(dir) = shared_dir() {
            conformance("so101", &dir);
        }
    }
}
