//! The path search: continuity, limits, pace, breaks, smoothing.

use super::*;
use crate::ik::{Common, SolverConfig, SolverKind};

fn arm() -> Chain {
    let urdf = concat!(env!("CARGO_MANIFEST_DIR"), "/urdf/arm.urdf");
    Chain::from_urdf_file(urdf, None, None).unwrap()
}

/// The tip's positions along a slow joint-space path of the project
/// arm (200 points), with the configuration it starts in.
fn path(chain: &Chain) -> (Vec<Target>, Vec<f64>) {
    let mid = chain.mid_configuration();
    let q = |k: usize| -> Vec<f64> {
        let t = k as f64 * 0.05;
        mid.iter()
            .enumerate()
            .map(|(i, m)| m + 0.5 * (0.3 * t + i as f64).sin())
            .collect()
    };
    let targets = (0..200)
        .map(|k| Target::position(chain.fk(&q(k)).translation.vector))
        .collect();
    (targets, q(0))
}

fn solver(chain: &Chain) -> Solver {
    let config = SolverConfig::default_for(SolverKind::Jacobian);
    Solver::new(chain, config, Common::default()).unwrap()
}

/// `q` reaches every one of `targets` in order, within the joint limits,
/// each answer within `max_step` of the one before.
fn assert_continuous_through(chain: &Chain, q: &[Vec<f64>], targets: &[Target], max_step: &[f64]) {
    assert_eq!(q.len(), targets.len());
    for (k, (q, t)) in q.iter().zip(targets).enumerate() {
        let off = (chain.fk(q).translation.vector - t.position).norm();
        assert!(off < 1e-4, "point {k}: {off} m off");
        assert!(
            q.iter()
                .zip(&chain.joints)
                .all(|(x, j)| (j.limits.lower..=j.limits.upper).contains(x))
        );
    }
    for w in q.windows(2) {
        assert!(within(chain, &w[0], &w[1], max_step), "{w:?}");
    }
}

#[test]
fn a_path_known_whole_is_solved_continuously_through_every_point() {
    let chain = arm();
    let (targets, start) = path(&chain);
    let mut opts = PathOptions::with_step(&chain, 0.1);
    opts.max_step[2] = 0.03;
    let found = solve_path(&mut solver(&chain), targets.clone(), &start, opts.clone()).unwrap();
    assert_continuous_through(&chain, &found.q, &targets, &opts.max_step);
    assert!(found.largest_step <= 0.1);
}

/// The project arm along a joint path whose pace changes: points
/// `k < 100` a short step apart and `0.005` s, the rest eight times
/// that step and `0.05` s apart.
fn paced_path(chain: &Chain) -> (Vec<Target>, Vec<f64>, Vec<f64>) {
    let mid = chain.mid_configuration();
    let q = |k: usize| -> Vec<f64> {
        let s = if k < 100 {
            0.25 * k as f64
        } else {
            25.0 + 2.0 * (k - 100) as f64
        };
        let t = s * 0.05;
        mid.iter()
            .enumerate()
            .map(|(i, m)| m + 0.5 * (0.3 * t + i as f64).sin())
            .collect()
    };
    let times = (0..200)
        .map(|k| {
            if k < 100 {
                0.005 * k as f64
            } else {
                0.5 + 0.05 * (k - 100) as f64
            }
        })
        .collect();
    let targets = (0..200)
        .map(|k| Target::position(chain.fk(&q(k)).translation.vector))
        .collect();
    (targets, times, q(0))
}

#[test]
fn each_step_is_bounded_by_the_speed_over_its_own_time() {
    let chain = arm();
    let (targets, times, start) = paced_path(&chain);
    let speed = vec![1.0; chain.dof()];
    let timed = PathOptions {
        timing: Some(PathTiming {
            times: times.clone(),
            speed: speed.clone(),
        }),
        ..PathOptions::with_step(&chain, 0.1)
    };
    // As the node searches: the candidates try the self-motion.
    let mut s = solver(&chain);
    s.set_redundancy(crate::ik::Redundancy::Off);
    let found = solve_path(&mut s, targets.clone(), &start, timed).unwrap();
    for (k, w) in found.q.windows(2).enumerate() {
        let gap = times[k + 1] - times[k];
        let step = largest_step(&chain, &w[0], &w[1]);
        assert!(
            step <= gap * speed[0] + 1e-12,
            "step {k}: {step} rad in {gap} s"
        );
    }
    // The slow part's pace is too tight for the fast part's steps: a
    // single bound for the whole path, from its closest two points,
    // finds no path.
    let one_bound = PathOptions::with_step(&chain, 0.005);
    let e = solve_path(&mut s, targets.clone(), &start, one_bound).unwrap_err();
    assert!(
        matches!(e, PathError::Broken { index, .. } if index >= 100),
        "{e}"
    );
    let mut late = times;
    late[7] = late[6];
    let bad = PathOptions {
        timing: Some(PathTiming { times: late, speed }),
        ..PathOptions::with_step(&chain, 0.1)
    };
    let e = PathSearch::new(&chain, targets, &start, bad).unwrap_err();
    assert!(matches!(e, PathError::TimeOrder { index: 7, .. }), "{e}");
}

#[test]
fn a_point_out_of_reach_breaks_the_path_there() {
    let chain = arm();
    let (mut targets, start) = path(&chain);
    targets[50] = Target::position(nalgebra::Vector3::new(5.0, 0.0, 0.0));
    let opts = PathOptions::with_step(&chain, 0.1);
    let e = solve_path(&mut solver(&chain), targets, &start, opts).unwrap_err();
    assert!(
        matches!(
            e,
            PathError::Broken {
                index: 50,
                count: 200
            }
        ),
        "{e}"
    );
}

#[test]
fn a_search_a_few_solves_at_a_time_finds_the_same_path() {
    let chain = arm();
    let (targets, start) = path(&chain);
    let opts = PathOptions::with_step(&chain, 0.1);
    let mut s = solver(&chain);
    let whole = solve_path(&mut s, targets.clone(), &start, opts.clone()).unwrap();
    let mut search = PathSearch::new(&chain, targets, &start, opts).unwrap();
    let mut calls = 0;
    while search.step(&mut s, 100, &mut Unchecked).unwrap() == Progress::Searching {
        calls += 1;
    }
    assert!(calls > 10, "{calls}");
    assert_eq!(search.finish(), whole);
}

#[test]
fn an_empty_path_and_a_step_per_joint_missing_are_refused() {
    let chain = arm();
    let opts = PathOptions::with_step(&chain, 0.1);
    let start = chain.mid_configuration();
    let e = PathSearch::new(&chain, Vec::new(), &start, opts.clone()).unwrap_err();
    assert!(matches!(e, PathError::Empty), "{e}");
    let short = PathOptions {
        max_step: vec![0.1; 2],
        ..opts
    };
    let (targets, _) = path(&chain);
    let e = PathSearch::new(&chain, targets, &start, short).unwrap_err();
    assert_eq!(e.to_string(), "max_step has 2 values for 5 joints");
}

/// How much a joint path bends: the sum over its inner answers and
/// joints of the squared second difference.
fn total_bend(q: &[Vec<f64>]) -> f64 {
    q.windows(3)
        .flat_map(|w| (0..w[0].len()).map(move |k| w[2][k] - 2.0 * w[1][k] + w[0][k]))
        .map(|d| d * d)
        .sum()
}

#[test]
fn the_path_found_is_smoothed_along_the_self_motion_and_keeps_its_bounds() {
    let chain = arm();
    let (targets, start) = path(&chain);
    // As the node searches: the candidates try the self-motion, so on
    // position targets (two joints to spare) neighbouring answers can
    // zig-zag.
    let mut s = solver(&chain);
    s.set_redundancy(crate::ik::Redundancy::Off);
    let search = |sweeps: usize, s: &mut Solver| {
        let opts = PathOptions {
            smooth_sweeps: sweeps,
            ..PathOptions::with_step(&chain, 0.1)
        };
        solve_path(s, targets.clone(), &start, opts).unwrap()
    };
    let rough = search(0, &mut s);
    let smooth = search(4, &mut s);
    let (before, after) = (total_bend(&rough.q), total_bend(&smooth.q));
    // Measured: 6.5e-4 -> 3.0e-5.
    assert!(after < 0.25 * before, "bend {before} -> {after}");
    assert_continuous_through(&chain, &smooth.q, &targets, &[0.1; 5]);
    assert_eq!(smooth.q[0], rough.q[0], "the first answer is the search's");
    assert_eq!(smooth.solves, rough.solves + 4 * (targets.len() - 2));
}

/// Refuses every configuration whose tip is within 1 mm of `around`.
struct Keepout<'a> {
    chain: &'a Chain,
    around: nalgebra::Vector3<f64>,
}

impl Admissible for Keepout<'_> {
    fn admits(&mut self, q: &[f64], _reaches: bool) -> bool {
        (self.chain.fk(q).translation.vector - self.around).norm() > 1e-3
    }
}

#[test]
fn a_point_the_check_refuses_every_answer_of_breaks_the_path_there_as_refused() {
    let chain = arm();
    let (targets, start) = path(&chain);
    let mut check = Keepout {
        chain: &chain,
        around: targets[50].position,
    };
    let opts = PathOptions::with_step(&chain, 0.1);
    let mut search = PathSearch::new(&chain, targets, &start, opts).unwrap();
    let e = loop {
        match search.step(&mut solver(&chain), 1000, &mut check) {
            Ok(Progress::Searching) => {}
            Ok(Progress::Done) => panic!("planned through a refused point"),
            Err(e) => break e,
        }
    };
    assert!(
        matches!(
            e,
            PathError::Inadmissible {
                index: 50,
                count: 200
            }
        ),
        "{e}"
    );
}

/// An obstacle that the shoulder (joint 1) comes near as it falls to
/// `near`: its room is how far above `near` the shoulder is, with that
/// gradient; it refuses nothing.
struct ShoulderRoom {
    near: f64,
}

impl Admissible for ShoulderRoom {
    fn admits(&mut self, _q: &[f64], _reaches: bool) -> bool {
        true
    }

    fn clearance(&mut self, q: &[f64], band: f64, gradient: &mut [f64]) -> Option<f64> {
        let room = q[1] - self.near;
        gradient.fill(0.0);
        gradient[1] = 1.0;
        (room < band).then_some(room)
    }
}

#[test]
fn of_the_continuous_paths_the_one_with_more_room_is_found_and_smoothing_keeps_it() {
    let chain = arm();
    let (targets, start) = path(&chain);
    let mut s = solver(&chain);
    s.set_redundancy(crate::ik::Redundancy::Off);
    // The path's own shoulder goes down to mid - 0.5.
    let near = chain.mid_configuration()[1] - 0.6;
    let mut search = |band: f64| {
        let opts = PathOptions {
            clearance_band: band,
            ..PathOptions::with_step(&chain, 0.1)
        };
        let mut check = ShoulderRoom { near };
        let mut search = PathSearch::new(&chain, targets.clone(), &start, opts).unwrap();
        while search.step(&mut s, 1000, &mut check).unwrap() == Progress::Searching {}
        search.finish().q
    };
    let least_room = |q: &[Vec<f64>]| q.iter().map(|q| q[1] - near).fold(f64::MAX, f64::min);
    let (blind, keeping) = (search(0.0), search(0.5));
    let (before, after) = (least_room(&blind), least_room(&keeping));
    eprintln!("least room {before} -> {after}");
    // Measured: -0.49 (the shoulder 0.49 below `near`) -> 0.19.
    assert!(
        after > 0.0 && after > before + 0.3,
        "least room {before} -> {after}"
    );
    assert_continuous_through(&chain, &keeping, &targets, &[0.1; 5]);
}
