//! Cartesian paths through the node core and the in-memory transport, as
//! the `{"type":"cartesian_path"}` lines of `arm_ik run` give them: the
//! arm holds while the path is planned whole, then passes every point at
//! its time; a bad point is refused naming it; a target given while the
//! path is planned replaces it.
#![cfg(feature = "app")]

mod common;

use arm_ik::model::Chain;
use arm_ik::node::{
    CartesianPathMsg, CartesianPoint, Command, MemoryNode, NodeCore, NodeSettings, RejectReason,
    TargetMsg,
};

const DT: f64 = 0.02;

fn arm() -> Chain {
    Chain::from_urdf_file(common::project_urdf("arm.urdf"), None, None).unwrap()
}

/// The node on virtual servos resting at `start`.
fn node(chain: &Chain, start: &[f64]) -> MemoryNode {
    let settings = NodeSettings::default();
    let (solver, common) = settings.solver_config(chain).unwrap();
    let config = arm_ik::node::NodeConfig {
        initial: Some(start.to_vec()),
        ..settings.node_config(chain).unwrap()
    };
    MemoryNode::new(NodeCore::with_virtual_servos(chain, solver, common, config).unwrap())
}

/// Where a slow joint-space path of the arm is at `t` s.
fn joints_at(chain: &Chain, t: f64) -> Vec<f64> {
    chain
        .mid_configuration()
        .iter()
        .enumerate()
        .map(|(i, m)| m + 0.4 * (0.5 * t + i as f64).sin())
        .collect()
}

/// The tip's positions along that path, 4 s at 20 Hz.
fn path(chain: &Chain) -> CartesianPathMsg {
    CartesianPathMsg {
        stamp: 0.0,
        frame_id: String::new(),
        points: (0..80)
            .map(|k| {
                let t = k as f64 * 0.05;
                let p = chain.fk(&joints_at(chain, t)).translation.vector;
                CartesianPoint {
                    position: [p.x, p.y, p.z],
                    orientation: None,
                    time_from_start: t,
                }
            })
            .collect(),
    }
}

fn tip(chain: &Chain, q: &[f64]) -> nalgebra::Vector3<f64> {
    chain.fk(&q[..chain.dof()]).translation.vector
}

#[test]
fn the_arm_holds_while_the_path_is_planned_then_passes_every_point_at_its_time() {
    let chain = arm();
    let start = joints_at(&chain, 0.0);
    let mut n = node(&chain, &start);
    let msg = path(&chain);
    n.push_command(Command::CartesianPath(msg.clone()));
    let k = plan(&mut n, 500);
    let st = n.core().status().teach.cartesian.clone();
    assert_eq!((st.accepted, st.solved, st.points), (1, 80, 80));
    assert!(st.largest_step <= 0.1, "{st:?}");
    // Planned a share a tick: the arm held where it was meanwhile.
    assert!(k > 1, "planned in one tick");
    for js in n.drain_joint_states() {
        assert!(
            js.position[..5]
                .iter()
                .zip(&start)
                .all(|(a, b)| (a - b).abs() < 1e-9),
            "moved while planning: {:?}",
            js.position
        );
    }
    // From the tick the planning ended, every point at its time.
    let began = (k - 1) as f64 * DT;
    for j in k..k + 260 {
        n.tick(j as f64 * DT);
    }
    let states = n.drain_joint_states();
    common::assert_limits_kept(&n, &states);
    // (Every tenth point, from the third: due on a tick.)
    for (i, p) in msg.points.iter().enumerate().skip(2).step_by(10) {
        let due = began + p.time_from_start;
        let js = states
            .iter()
            .find(|s| (s.stamp - due).abs() < DT / 2.0)
            .unwrap_or_else(|| panic!("no joint state at {due}"));
        let off = (tip(&chain, &js.position) - nalgebra::Vector3::from(p.position)).norm();
        assert!(
            off < 0.01,
            "point {}: the tip {:.1} mm off at its time",
            i + 1,
            off * 1e3
        );
    }
    assert!(!n.core().busy(), "still busy after the path's end");
}

/// Ticks `n` from 0 until the path it was given is planned, within
/// `max_ticks`, and planned without failing; the ticks run.
fn plan(n: &mut MemoryNode, max_ticks: usize) -> usize {
    let mut k = 0;
    loop {
        n.tick(k as f64 * DT);
        k += 1;
        let st = &n.core().status().teach.cartesian;
        if !st.planning {
            assert_eq!(st.failed, None, "{st:?}");
            return k;
        }
        assert!(k < max_ticks, "still planning after {k} ticks: {st:?}");
    }
}

/// Runs `msg` on the node from `start` until the path is planned, then
/// `seconds` more; the joint states from the tick planning ended, and that
/// tick's time.
fn run_planned(
    chain: &Chain,
    start: &[f64],
    msg: CartesianPathMsg,
    seconds: f64,
) -> (Vec<arm_ik::node::JointState>, f64) {
    let mut n = node(chain, start);
    n.push_command(Command::CartesianPath(msg));
    let k = plan(&mut n, 500);
    n.drain_joint_states();
    let began = (k - 1) as f64 * DT;
    for j in k..k + (seconds / DT) as usize {
        n.tick(j as f64 * DT);
    }
    let states = n.drain_joint_states();
    common::assert_limits_kept(&n, &states);
    (states, began)
}

#[test]
fn two_points_far_apart_are_joined_by_a_straight_line_the_tip_keeps_to() {
    let chain = arm();
    let start = joints_at(&chain, 0.0);
    let a = tip(&chain, &joints_at(&chain, 0.0));
    let b = tip(&chain, &joints_at(&chain, 2.5));
    assert!((b - a).norm() > 0.08, "{} m apart", (b - a).norm());
    let point = |p: nalgebra::Vector3<f64>, t| CartesianPoint {
        position: [p.x, p.y, p.z],
        orientation: None,
        time_from_start: t,
    };
    let msg = CartesianPathMsg {
        stamp: 0.0,
        frame_id: String::new(),
        points: vec![point(a, 0.5), point(b, 3.0)],
    };
    let (states, began) = run_planned(&chain, &start, msg, 4.0);
    let line = (b - a).normalize();
    let mut farthest: f64 = 0.0;
    for js in states.iter().filter(|s| s.stamp >= began + 0.5) {
        let from_a = tip(&chain, &js.position) - a;
        let off = (from_a - line * from_a.dot(&line)).norm();
        farthest = farthest.max(off);
    }
    // Between the two points the joints turn up to 0.4 rad, four path
    // steps: without points in between, the two are refused as too far
    // apart.
    assert!(
        farthest < 0.002,
        "the tip {:.1} mm off the line",
        farthest * 1e3
    );
    let end = states
        .iter()
        .find(|s| (s.stamp - (began + 3.0)).abs() < DT / 2.0)
        .expect("a joint state at the end's time");
    let off = (tip(&chain, &end.position) - b).norm();
    assert!(off < 0.005, "{:.1} mm from the end at its time", off * 1e3);
}

#[test]
fn a_path_faster_than_half_the_speed_limits_uses_the_least_share_that_finds_one() {
    let chain = arm();
    let start = joints_at(&chain, 0.0);
    let slowest = {
        let core = node(&chain, &start);
        core.core().motion().limits()[..chain.dof()]
            .iter()
            .map(|l| l.velocity)
            .fold(f64::INFINITY, f64::min)
    };
    // `joints_at` turns each joint at up to 0.2 rad/s; run it so that
    // the fastest turns at 0.4 of the slowest joint's limit. The answers
    // to its positions (the arm has two joints to spare for them) turn
    // some joints faster than the path's: no path keeps to half.
    let pace = 0.4 * slowest / 0.2;
    let mut msg = path(&chain);
    for p in &mut msg.points {
        p.time_from_start /= pace;
    }
    let mut n = node(&chain, &start);
    n.push_command(Command::CartesianPath(msg));
    plan(&mut n, 2000);
    let st = &n.core().status().teach.cartesian;
    // Not half (no path keeps to it), and not all of it.
    assert!(
        st.speed_share > 0.5 && st.speed_share < 1.0,
        "planned at {} of the speed limits",
        st.speed_share
    );
}

#[test]
fn a_path_with_a_bad_point_is_refused_naming_the_point() {
    let chain = arm();
    let mut core = NodeCore::from_settings(&chain, &NodeSettings::default()).unwrap();
    core.tick(0.0);
    let mut nan = path(&chain);
    nan.points[1].position[2] = f64::NAN;
    let e = core
        .command(&Command::CartesianPath(nan), 0.02)
        .unwrap_err();
    assert_eq!(e.reason, RejectReason::NotFinite);
    assert!(e.why.starts_with("point 2: "), "{}", e.why);
    let mut frame = path(&chain);
    frame.frame_id = "world".into();
    let e = core
        .command(&Command::CartesianPath(frame), 0.02)
        .unwrap_err();
    assert_eq!(e.reason, RejectReason::WrongFrame);
    assert!(e.why.contains("'world'"), "{}", e.why);
    let mut times = path(&chain);
    times.points[2].time_from_start = times.points[1].time_from_start;
    let e = core
        .command(&Command::CartesianPath(times), 0.02)
        .unwrap_err();
    assert_eq!(e.reason, RejectReason::Invalid);
    assert!(e.why.starts_with("point 3: "), "{}", e.why);
    let st = &core.status().teach.cartesian;
    assert_eq!((st.accepted, st.planning), (0, false));
}

#[test]
fn a_target_given_while_the_path_is_planned_replaces_it() {
    let chain = arm();
    let start = joints_at(&chain, 0.0);
    let mut n = node(&chain, &start);
    n.push_command(Command::CartesianPath(path(&chain)));
    n.tick(0.0);
    assert!(n.core().status().teach.cartesian.planning);
    let goal = chain.fk(&joints_at(&chain, 2.0)).translation.vector;
    n.push_command(Command::Target(TargetMsg::position([
        goal.x, goal.y, goal.z,
    ])));
    for k in 1..300 {
        n.tick(k as f64 * DT);
    }
    let st = &n.core().status().teach.cartesian;
    assert!(!st.planning);
    assert_eq!(st.failed.as_deref(), Some("replaced by a target command"));
    let last = n.drain_joint_states().pop().unwrap();
    assert!((tip(&chain, &last.position) - goal).norm() < 1e-3);
}

/// A path dipping through the floor (the default workspace's, at the base
/// link's lowest point): the planner keeps only answers clear of
/// collisions, so it refuses the path before the arm moves, naming the
/// part of the path and the pair. (Planned without the check, the path
/// ran until the guard stopped the arm short of the floor, partway.)
#[test]
fn a_path_through_the_floor_is_refused_before_the_arm_moves_naming_the_pair() {
    let chain = arm();
    let start = joints_at(&chain, 0.0);
    // Down from above the floor to 2 cm under it, 15 cm in front of the
    // base (within reach), and up again.
    let a = nalgebra::Vector3::new(0.15, 0.0, 0.18);
    let point = |p: [f64; 3], t| CartesianPoint {
        position: p,
        orientation: None,
        time_from_start: t,
    };
    let msg = CartesianPathMsg {
        stamp: 0.0,
        frame_id: String::new(),
        points: vec![
            point([a.x, a.y, a.z], 0.5),
            point([a.x, a.y, -0.02], 3.0),
            point([a.x, a.y, a.z], 5.5),
        ],
    };
    let mut n = node(&chain, &start);
    n.push_command(Command::CartesianPath(msg));
    let mut k = 0;
    while n.core().status().teach.cartesian.planning || k == 0 {
        n.tick(k as f64 * DT);
        k += 1;
        assert!(k < 3000, "still planning");
    }
    let st = &n.core().status().teach.cartesian;
    let why = st.failed.as_deref().expect("planned through the floor");
    assert!(
        why.starts_with("the line from point 1 to point 2 of 3: ")
            && why.contains("in collision")
            && why.contains("vs floor"),
        "{why}"
    );
    for js in n.drain_joint_states() {
        let moved = js.position[..5]
            .iter()
            .zip(&start)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(moved < 1e-9, "moved {moved} rad");
    }
}
