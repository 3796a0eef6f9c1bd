//! Acceptance tests of the analytic hip-knee solver.
//!
//! Conformance tests on the shared real robots skip (with a printed
//! `SKIP: ../shared not found`) when the shared folder is absent, unless the
//! `CI` environment variable is set: then they fail.

mod common;

use arm_ik::ik::{
    AnalyticOptions, Bend, Common, IkError, Reason, Rng, SolveStatus, Solver, SolverConfig, Target,
    Tolerance,
};
use arm_ik::ik::{HipKnee, Layout, approach_pitch};
use arm_ik::model::{Chain, Frames, wrap_angle};
use common::random_q;
use nalgebra::{Quaternion, UnitQuaternion, Vector3};
use std::path::PathBuf;

const TIGHT: Tolerance = Tolerance {
    position: 1e-9,
    orientation: 1e-9,
};

fn urdf(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("urdf")
        .join(name)
}

/// The shared folder, or `None` (after printing SKIP) when it is absent
/// outside CI. In CI a missing folder is a failure.
fn shared() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var_os("CI").is_some() {
        panic!("../shared not found ({}) and CI is set", dir.display());
    }
    println!("SKIP: ../shared not found");
    None
}

fn solver(chain: &Chain, options: AnalyticOptions) -> Solver {
    let common = Common {
        tolerance: TIGHT,
        ..Common::default()
    };
    Solver::new(chain, SolverConfig::Analytic(options), common).expect("analytic fits")
}

fn leg() -> Chain {
    Chain::from_urdf_file(urdf("leg.urdf"), Some("body"), Some("foot")).unwrap()
}

fn arm() -> Chain {
    Chain::from_urdf_file(urdf("arm.urdf"), Some("base_link"), Some("tool")).unwrap()
}

fn so101(shared: &std::path::Path) -> Chain {
    Chain::from_urdf_file(
        shared.join("robots/so101.urdf"),
        Some("base_link"),
        Some("gripper_frame_link"),
    )
    .unwrap()
}

/// World position of joint `i` at `q`.
fn joint_origin(chain: &Chain, q: &[f64], i: usize) -> Vector3<f64> {
    let mut frames = Frames::new(chain);
    chain.joint_frames(q, &mut frames);
    frames.origins[i].coords
}

#[derive(serde::Deserialize)]
struct TargetSet {
    seeds: Vec<Seed>,
    samples: Vec<Sample>,
}

#[derive(serde::Deserialize)]
struct Seed {
    name: String,
    q: Vec<f64>,
}

#[derive(serde::Deserialize)]
struct Sample {
    position: [f64; 3],
    quaternion: [f64; 4],
}

fn load_targets(path: PathBuf) -> (Vec<f64>, Vec<Sample>) {
    let text = std::fs::read_to_string(&path).unwrap();
    let set: TargetSet = serde_json::from_str(&text).unwrap();
    let mid = set.seeds.into_iter().find(|s| s.name == "mid").unwrap().q;
    (mid, set.samples)
}

fn quat(xyzw: [f64; 4]) -> UnitQuaternion<f64> {
    UnitQuaternion::from_quaternion(Quaternion::new(xyzw[3], xyzw[0], xyzw[1], xyzw[2]))
}

#[test]
fn leg_random_targets_all_reached() {
    let chain = leg();
    let mut s = solver(&chain, AnalyticOptions::default());
    let mut rng = Rng::new(42);
    let mid = chain.mid_configuration();
    for k in 0..2000 {
        let q = random_q(&chain, &mut rng);
        let p = chain.fk(&q).translation.vector;
        let sol = s.solve(&Target::position(p), &mid).unwrap();
        assert_eq!(
            sol.status,
            SolveStatus::Converged,
            "sample {k}: q {q:?} -> {sol:?}"
        );
        assert!(sol.position_error <= 1e-9);
        assert!(chain.within_limits(&sol.q));
    }
}

#[test]
fn solo12_front_left_all_samples_reached_from_mid() {
    let Some(shared) = shared() else { return };
    let chain = Chain::from_urdf_file(
        shared.join("robots/solo12.urdf"),
        Some("base_link"),
        Some("FL_FOOT"),
    )
    .unwrap();
    let (mid, samples) = load_targets(shared.join("targets/solo12_fl.json"));
    assert_eq!(samples.len(), 1000);
    let mut s = solver(&chain, AnalyticOptions::default());
    for (k, sample) in samples.iter().enumerate() {
        let target = Target::position(Vector3::from(sample.position));
        let sol = s.solve(&target, &mid).unwrap();
        assert_eq!(sol.status, SolveStatus::Converged, "sample {k}: {sol:?}");
        assert!(sol.position_error <= 1e-9);
        assert!(chain.within_limits(&sol.q));
    }
}

#[test]
fn positive_and_negative_bends_both_reach_with_opposite_knees() {
    let chain = leg();
    let q = [0.2, 0.4, -1.0];
    let target = Target::position(chain.fk(&q).translation.vector);
    let mid = chain.mid_configuration();
    let mut knees = Vec::new();
    for bend in [Bend::Positive, Bend::Negative] {
        let mut s = solver(
            &chain,
            AnalyticOptions {
                bend,
                ..Default::default()
            },
        );
        let sol = s.solve(&target, &mid).unwrap();
        assert_eq!(sol.status, SolveStatus::Converged, "{bend:?}: {sol:?}");
        knees.push(sol.q[2]);
    }
    assert!(knees[0] > 0.1 && knees[1] < -0.1, "knees {knees:?}");
    // The negative bend is the configuration that made the target.
    let mut s = solver(
        &chain,
        AnalyticOptions {
            bend: Bend::Negative,
            ..Default::default()
        },
    );
    let sol = s.solve(&target, &[0.0; 3]).unwrap();
    for i in 0..3 {
        assert!((sol.q[i] - q[i]).abs() < 1e-9, "{:?} vs {q:?}", sol.q);
    }
}

#[test]
fn closest_bend_follows_the_seed() {
    let chain = leg();
    let target = Target::position(chain.fk(&[0.1, 0.3, 1.2]).translation.vector);
    let mut s = solver(&chain, AnalyticOptions::default());
    let near_positive = s.solve(&target, &[0.0, 0.0, 0.5]).unwrap();
    let near_negative = s.solve(&target, &[0.0, 0.0, -0.5]).unwrap();
    assert!(near_positive.q[2] > 0.0 && near_negative.q[2] < 0.0);
    assert!(near_positive.status.is_converged() && near_negative.status.is_converged());
}

#[test]
fn pole_picks_the_knee_side_towards_the_pole() {
    let chain = leg();
    let target = Target::position(chain.fk(&[0.1, 0.3, -1.2]).translation.vector);
    let hip = joint_origin(&chain, &[0.0; 3], 1);
    let front = hip + Vector3::new(0.3, 0.0, -0.1);
    let behind = hip + Vector3::new(-0.3, 0.0, -0.1);
    let mut knees = Vec::new();
    for pole in [front, behind] {
        let mut s = solver(
            &chain,
            AnalyticOptions {
                bend: Bend::Pole(pole),
                ..Default::default()
            },
        );
        // Seed bent the other way, so Closest alone would not give it.
        for seed in [[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]] {
            let sol = s.solve(&target, &seed).unwrap();
            assert_eq!(sol.status, SolveStatus::Converged);
            knees.push(joint_origin(&chain, &sol.q, 2));
        }
    }
    let (kf, kb) = (knees[0], knees[2]);
    assert_eq!(knees[0], knees[1], "pole, not seed, decides");
    assert_eq!(knees[2], knees[3], "pole, not seed, decides");
    assert!((kf - front).norm() < (kb - front).norm());
    assert!((kb - behind).norm() < (kf - behind).norm());
    assert!(kf.x > kb.x, "front pole: knee forward ({kf:?} vs {kb:?})");
}

#[test]
fn out_of_reach_is_clamped_along_the_line_and_flagged() {
    let chain = leg();
    let g = HipKnee::measure(&chain).unwrap();
    let reach = g.links.0 + g.links.1;
    let hip = joint_origin(&chain, &[0.0; 3], 1);
    // Straight below the hip flexion axis, 1 m down: the leg stretches.
    let target = hip + Vector3::new(0.0, 0.0, -1.0);
    let mut s = solver(&chain, AnalyticOptions::default());
    let sol = s
        .solve(&Target::position(target), &chain.mid_configuration())
        .unwrap();
    assert_eq!(sol.status, SolveStatus::BestEffort(Reason::OutOfReach));
    assert!(chain.within_limits(&sol.q));
    let tip = chain.fk(&sol.q).translation.vector;
    let hip = joint_origin(&chain, &sol.q, 1);
    println!(
        "out of reach: |tip - hip| {:.12} (reach {reach}), error {:.12} (1 - reach {:.12})",
        (tip - hip).norm(),
        sol.position_error,
        1.0 - reach
    );
    // Stretched, on the line from the hip towards the target (up to the
    // small abduction the polish adds: turning it brings the offset foot
    // a little closer than the closed-form clamp).
    assert!(((tip - hip).norm() - reach).abs() < 1e-9, "stretched");
    assert!(sol.position_error <= 1.0 - reach + 1e-12, "{sol:?}");
    assert!((sol.position_error - (1.0 - reach)).abs() < 1e-3, "{sol:?}");
    // In the limb plane, the foot points from the hip straight at the target.
    let mut frames = Frames::new(&chain);
    chain.joint_frames(&sol.q, &mut frames);
    let a = frames.axes[1];
    let to_target = target - hip;
    let in_plane = (to_target - a * a.dot(&to_target)).normalize();
    assert!(((tip - hip) - in_plane * reach).norm() < 1e-9);
}

#[test]
fn far_targets_give_finite_in_limit_best_effort() {
    let mut chains = vec![leg(), arm()];
    if let Some(shared) = shared() {
        chains.push(so101(&shared));
    }
    let mut rng = Rng::new(7);
    for chain in &chains {
        let mut s = solver(chain, AnalyticOptions::default());
        for _ in 0..200 {
            let dir = Vector3::new(
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
                rng.range(-1.0, 1.0),
            );
            let seed = random_q(chain, &mut rng);
            for scale in [1e6, 10.0] {
                let target = Target::position(dir * scale);
                let sol = s.solve(&target, &seed).unwrap();
                assert_eq!(sol.status, SolveStatus::BestEffort(Reason::OutOfReach));
                assert!(chain.within_limits(&sol.q), "{:?}", sol.q);
                assert!(sol.position_error.is_finite());
            }
            // On joint 1's axis, and exactly at the base origin.
            for p in [Vector3::zeros(), Vector3::new(0.0, 0.0, 1e6)] {
                let sol = s.solve(&Target::position(p), &seed).unwrap();
                assert!(chain.within_limits(&sol.q), "{:?}", sol.q);
            }
        }
    }
}

/// Random configurations -> position and approach pitch -> solve with that
/// pitch from `seed`: the position and the pitch must match.
fn check_position_pitch(chain: &Chain, fixed_roll: Option<f64>, count: usize) {
    let mut rng = Rng::new(99);
    let mid = chain.mid_configuration();
    let mut reached = 0;
    for k in 0..count {
        let mut q = random_q(chain, &mut rng);
        if let Some(r) = fixed_roll {
            q[4] = r;
        }
        let p = chain.fk(&q).translation.vector;
        let pitch = approach_pitch(chain, &q).unwrap();
        let mut s = solver(
            chain,
            AnalyticOptions {
                pitch: Some(pitch),
                ..Default::default()
            },
        );
        let sol = s.solve(&Target::position(p), &mid).unwrap();
        assert!(chain.within_limits(&sol.q));
        let got = approach_pitch(chain, &sol.q).unwrap();
        if sol.status == SolveStatus::Converged && wrap_angle(got - pitch).abs() < 1e-9 {
            reached += 1;
        } else {
            println!("sample {k}: q {q:?} pitch {pitch} -> {sol:?} pitch {got}");
        }
    }
    assert_eq!(reached, count);
}

#[test]
fn arm_position_and_pitch_targets() {
    check_position_pitch(&arm(), None, 1000);
}

#[test]
fn so101_position_and_pitch_targets() {
    let Some(shared) = shared() else { return };
    let chain = so101(&shared);
    let roll = chain.mid_configuration()[4];
    check_position_pitch(&chain, Some(roll), 1000);
}

#[test]
fn pitch_none_keeps_the_seed_pitch() {
    let chain = arm();
    let mut s = solver(&chain, AnalyticOptions::default());
    let seed = [0.1, 0.3, 0.6, -0.4, 0.2];
    let want = approach_pitch(&chain, &seed).unwrap();
    let p = chain.fk(&[-0.3, 0.2, 0.9, 0.1, 0.0]).translation.vector;
    let sol = s.solve(&Target::position(p), &seed).unwrap();
    assert_eq!(sol.status, SolveStatus::Converged);
    assert!(wrap_angle(approach_pitch(&chain, &sol.q).unwrap() - want).abs() < 1e-9);
    assert_eq!(sol.q[4], seed[4], "roll stays");
}

#[test]
fn arm_pitch_convention() {
    let chain = arm();
    // Zero pose points straight up; shoulder +90 deg about y lays the arm
    // forward along +x: pitch 0.
    let up = approach_pitch(&chain, &[0.0; 5]).unwrap();
    assert!((up - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
    let forward =
        approach_pitch(&chain, &[0.0, std::f64::consts::FRAC_PI_2, 0.0, 0.0, 0.0]).unwrap();
    assert!(forward.abs() < 1e-9);
}

#[test]
fn arm_full_orientation_from_reachable_poses() {
    let chain = arm();
    let mut s = solver(&chain, AnalyticOptions::default());
    let mut rng = Rng::new(5);
    let mid = chain.mid_configuration();
    for _ in 0..500 {
        let q = random_q(&chain, &mut rng);
        let pose = chain.fk(&q);
        let rot = UnitQuaternion::from_rotation_matrix(&pose.rotation);
        let sol = s
            .solve(&Target::pose(pose.translation.vector, rot), &mid)
            .unwrap();
        assert_eq!(sol.status, SolveStatus::Converged, "q {q:?}: {sol:?}");
    }
}

#[test]
fn so101_orientation_samples_reached_from_mid() {
    let Some(shared) = shared() else { return };
    let chain = so101(&shared);
    let (mid, samples) = load_targets(shared.join("targets/so101.json"));
    let mut s = solver(&chain, AnalyticOptions::default());
    let mut failed = Vec::new();
    for (k, sample) in samples.iter().enumerate() {
        let target = Target::pose(Vector3::from(sample.position), quat(sample.quaternion));
        let sol = s.solve(&target, &mid).unwrap();
        assert!(chain.within_limits(&sol.q));
        if sol.status != SolveStatus::Converged {
            failed.push((k, sol));
        }
    }
    for (k, sol) in failed.iter().take(10) {
        println!("sample {k}: {sol:?}");
    }
    assert!(
        failed.is_empty(),
        "{} of {} not reached",
        failed.len(),
        samples.len()
    );
}

#[test]
fn unsupported_chains_name_the_joint() {
    // Two joints.
    let two = Chain::from_urdf_file(urdf("leg.urdf"), Some("body"), Some("thigh")).unwrap();
    let err = HipKnee::measure(&two).unwrap_err();
    assert!(
        matches!(&err, IkError::Unsupported { solver: "analytic", why } if why.contains("2 moving joints") && why.contains("hip_flexion")),
        "{err}"
    );
    // Shoulder first: the elbow is parallel, not perpendicular, to it.
    let shoulder_first =
        Chain::from_urdf_file(urdf("arm.urdf"), Some("turntable"), Some("tool")).unwrap();
    let err = HipKnee::measure(&shoulder_first).unwrap_err();
    assert!(
        matches!(&err, IkError::Unsupported { why, .. } if why.contains("'elbow'") && why.contains("perpendicular")),
        "{err}"
    );
    // Solver::new refuses too.
    assert!(
        Solver::new(
            &two,
            SolverConfig::Analytic(AnalyticOptions::default()),
            Common::default()
        )
        .is_err()
    );
    let Some(shared) = shared() else { return };
    let ur5 = Chain::from_urdf_file(
        shared.join("robots/ur5_robot.urdf"),
        Some("base_link"),
        Some("tool0"),
    )
    .unwrap();
    let err = HipKnee::measure(&ur5).unwrap_err();
    println!("ur5: {err}");
    assert!(
        matches!(&err, IkError::Unsupported { why, .. } if why.contains("6 moving joints") && why.contains("wrist_3_joint")),
        "{err}"
    );
}

#[test]
fn measure_reports_layout_and_offsets() {
    let g = HipKnee::measure(&leg()).unwrap();
    assert_eq!(g.layout, Layout::HipKnee);
    assert!((g.lateral_offset.abs() - 0.035).abs() < 1e-12);
    assert!((g.links.0 - 0.12).abs() < 1e-12 && (g.links.1 - 0.125).abs() < 1e-12);
    assert_eq!(g.deviation, 0.0);
    let g = HipKnee::measure(&arm()).unwrap();
    assert_eq!(g.layout, Layout::WristPitchRoll);
    println!("{g}");
    if let Some(shared) = shared() {
        let g = HipKnee::measure(&so101(&shared)).unwrap();
        assert_eq!(g.layout, Layout::WristPitchRoll);
        assert!(g.deviation > 1e-7 && g.deviation < 1e-4, "{g}");
        println!("{g}");
    }
}

#[test]
fn locked_joint_out_of_reach_is_best_effort_in_bounds() {
    use arm_ik::ik::JointMode;
    let chain = leg();
    let common = Common {
        tolerance: TIGHT,
        modes: vec![JointMode::Lock, JointMode::Free, JointMode::Free],
    };
    let mut s = Solver::new(
        &chain,
        SolverConfig::Analytic(AnalyticOptions::default()),
        common,
    )
    .unwrap();
    let target = Target::position(chain.fk(&[0.5, 0.3, -1.0]).translation.vector);
    let sol = s.solve(&target, &[0.0, 0.0, 0.0]).unwrap();
    assert_eq!(sol.q[0], 0.0, "locked joint stays");
    assert_eq!(sol.status, SolveStatus::BestEffort(Reason::OutOfReach));
}

/// Not an assertion: prints the median solve time (run with --nocapture).
#[test]
fn timing_report() {
    let mut cases = vec![("leg", leg()), ("arm", arm())];
    if let Some(shared) = shared() {
        cases.push(("so101", so101(&shared)));
    }
    for (name, chain) in cases {
        let mut s = solver(&chain, AnalyticOptions::default());
        let mut rng = Rng::new(3);
        let mid = chain.mid_configuration();
        let targets: Vec<Target> = (0..2000)
            .map(|_| {
                let pose = chain.fk(&random_q(&chain, &mut rng));
                let rot = UnitQuaternion::from_rotation_matrix(&pose.rotation);
                if chain.dof() == 5 {
                    Target::pose(pose.translation.vector, rot)
                } else {
                    Target::position(pose.translation.vector)
                }
            })
            .collect();
        let mut times: Vec<f64> = targets
            .iter()
            .map(|t| {
                let start = std::time::Instant::now();
                let sol = s.solve(t, &mid).unwrap();
                std::hint::black_box(sol);
                start.elapsed().as_secs_f64() * 1e6
            })
            .collect();
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "timing {name}: median {:.2} us, p99 {:.2} us",
            times[times.len() / 2],
            times[times.len() * 99 / 100]
        );
    }
}

/// Not an assertion: median solve time of position-only targets with the
/// pitch left to the solver (`pitch: None`), from the mid seed and from a
/// warm seed (the configuration that made the target, slightly moved).
#[test]
fn timing_report_position_only() {
    let mut cases = vec![("arm", arm())];
    if let Some(shared) = shared() {
        cases.push(("so101", so101(&shared)));
    }
    for (name, chain) in cases {
        let mut s = solver(&chain, AnalyticOptions::default());
        let mut rng = Rng::new(4);
        let mid = chain.mid_configuration();
        let samples: Vec<(Target, Vec<f64>)> = (0..2000)
            .map(|_| {
                let mut q = random_q(&chain, &mut rng);
                q[4] = mid[4];
                let target = Target::position(chain.fk(&q).translation.vector);
                let warm: Vec<f64> = q.iter().map(|v| v + rng.range(-0.01, 0.01)).collect();
                (target, warm)
            })
            .collect();
        for warm in [false, true] {
            let mut times: Vec<f64> = samples
                .iter()
                .map(|(t, w)| {
                    let seed = if warm { w.as_slice() } else { mid.as_slice() };
                    let start = std::time::Instant::now();
                    let sol = s.solve(t, seed).unwrap();
                    std::hint::black_box(sol);
                    start.elapsed().as_secs_f64() * 1e6
                })
                .collect();
            times.sort_by(|a, b| a.partial_cmp(b).unwrap());
            println!(
                "timing {name} position only, {} seed: median {:.2} us, p99 {:.2} us",
                if warm { "warm" } else { "mid" },
                times[times.len() / 2],
                times[times.len() * 99 / 100]
            );
        }
    }
}

/// Position-only targets from random in-limit configurations, `pitch: None`,
/// from `seed`: the share reached at 1e-9 m, in limits. Prints the misses.
///
/// The solver keeps the seed's wrist roll on a position-only target; on an
/// arm whose tool sits off the roll axis (SO-101) the targets are made with
/// the seed's roll (`keep_roll`), as other rolls reach other points.
fn position_only_rate(
    chain: &Chain,
    seed: &[f64],
    keep_roll: bool,
    count: usize,
    rng_seed: u64,
) -> f64 {
    let mut s = solver(chain, AnalyticOptions::default());
    let mut rng = Rng::new(rng_seed);
    let mut reached = 0;
    for k in 0..count {
        let mut q = random_q(chain, &mut rng);
        if keep_roll {
            q[4] = seed[4];
        }
        let p = chain.fk(&q).translation.vector;
        let sol = s.solve(&Target::position(p), seed).unwrap();
        assert!(chain.within_limits(&sol.q), "sample {k}: {:?}", sol.q);
        if sol.status == SolveStatus::Converged && sol.position_error <= 1e-9 {
            reached += 1;
        } else {
            println!("miss {k}: q {q:?} -> {sol:?}");
        }
    }
    let rate = reached as f64 / count as f64;
    println!(
        "position only: {reached} / {count} reached ({:.2} %)",
        100.0 * rate
    );
    rate
}

/// Tracks joint-space paths between random configurations, cut into target
/// steps of at most `step` m, each solve seeded with the previous solution.
/// Returns (reached share, share of steps changing a joint by more than
/// 0.1 rad, 99th percentile of the largest joint change of a step).
/// `keep_roll`: the path keeps its start's wrist roll (see
/// [`position_only_rate`]).
///
/// Large steps remain where the path drives two planar joints onto their
/// limits: the pitch kept from the seed has no in-limit solution left and
/// the solver jumps to the nearest pitch that has one (the solver does not
/// plan ahead). They are counted as the share of steps over 0.1 rad.
fn track(
    chain: &Chain,
    keep_roll: bool,
    paths: usize,
    step: f64,
    rng_seed: u64,
) -> (f64, f64, f64) {
    let mut s = solver(chain, AnalyticOptions::default());
    let mut rng = Rng::new(rng_seed);
    let n = chain.dof();
    let (mut total, mut reached) = (0usize, 0usize);
    let mut jumps = Vec::new();
    for _ in 0..paths {
        let (a, mut b) = (random_q(chain, &mut rng), random_q(chain, &mut rng));
        if keep_roll {
            b[4] = a[4];
        }
        let at = |t: f64| -> Vec<f64> { (0..n).map(|i| a[i] + t * (b[i] - a[i])).collect() };
        let mut prev = a.clone();
        let mut last = chain.fk(&a).translation.vector;
        let mut t: f64 = 0.0;
        while t < 1.0 {
            // Advance along the path until the target has moved `step`.
            let mut dt: f64 = 1e-3;
            let mut p = chain.fk(&at((t + dt).min(1.0))).translation.vector;
            while (p - last).norm() > step && dt > 1e-9 {
                dt *= 0.5;
                p = chain.fk(&at((t + dt).min(1.0))).translation.vector;
            }
            t += dt;
            last = p;
            let sol = s.solve(&Target::position(p), &prev).unwrap();
            assert!(chain.within_limits(&sol.q));
            total += 1;
            if sol.status == SolveStatus::Converged && sol.position_error <= 1e-9 {
                reached += 1;
            }
            let jump = (0..n)
                .map(|i| (sol.q[i] - prev[i]).abs())
                .fold(0.0, f64::max);
            if jump > 0.2 && std::env::var_os("SHOW_JUMPS").is_some() {
                println!(
                    "jump {jump:.3}: target {p:?} prev {prev:?} (pitch {:.3}) -> {:?} (pitch {:.3}) {:?}",
                    approach_pitch(chain, &prev).unwrap(),
                    sol.q,
                    approach_pitch(chain, &sol.q).unwrap(),
                    sol.status
                );
            }
            jumps.push(jump);
            prev = sol.q;
        }
    }
    jumps.sort_by(|x, y| x.partial_cmp(y).unwrap());
    let p99 = jumps[jumps.len() * 99 / 100];
    let max = *jumps.last().unwrap();
    let big = jumps.iter().filter(|&&j| j > 0.1).count();
    println!(
        "tracking: {reached} / {total} steps reached, joint change per step: p99 {p99:.4} rad, \
         max {max:.4} rad, {big} steps over 0.1 rad"
    );
    (
        reached as f64 / total as f64,
        big as f64 / total as f64,
        p99,
    )
}

#[test]
fn arm_position_only_targets_from_mid() {
    let chain = arm();
    let mid = chain.mid_configuration();
    assert!(mid.iter().all(|&v| v == 0.0), "mid is straight up");
    let rate = position_only_rate(&chain, &mid, false, 2000, 11);
    assert!(rate >= 0.995, "{rate}");
}

#[test]
fn arm_example_point_is_reached() {
    // The reported case: straight-up seed, forward and low target.
    let chain = arm();
    let mut s = solver(&chain, AnalyticOptions::default());
    let sol = s
        .solve(&Target::position(Vector3::new(0.2, 0.05, 0.15)), &[0.0; 5])
        .unwrap();
    assert_eq!(sol.status, SolveStatus::Converged, "{sol:?}");
    assert!(chain.within_limits(&sol.q));
}

#[test]
fn arm_position_only_tracking_is_continuous() {
    let chain = arm();
    let (rate, big, p99) = track(&chain, false, 40, 1e-3, 21);
    assert!(rate >= 0.995, "{rate}");
    assert!(p99 < 0.02, "p99 joint change {p99}");
    assert!(big < 1e-3, "share of steps over 0.1 rad {big}");
}

#[test]
fn so101_position_only_targets_from_mid() {
    let Some(shared) = shared() else { return };
    let chain = so101(&shared);
    let mid = chain.mid_configuration();
    let rate = position_only_rate(&chain, &mid, true, 2000, 12);
    assert!(rate >= 0.99, "{rate}");
}

#[test]
fn so101_position_only_tracking_is_continuous() {
    let Some(shared) = shared() else { return };
    let chain = so101(&shared);
    let (rate, big, p99) = track(&chain, true, 40, 1e-3, 22);
    assert!(rate >= 0.99, "{rate}");
    assert!(p99 < 0.03, "p99 joint change {p99}");
    assert!(big < 1e-3, "share of steps over 0.1 rad {big}");
}
