//! Timed joint trajectories through the node core and the in-memory
//! transport, as `~/joint_trajectory` and the `{"type":"trajectory"}`
//! lines of `arm_ik run` give them: points reached at their times within
//! every limit, a point the limits cannot meet in time reported and met
//! late (never faster), a new trajectory replacing the old, bad ones
//! refused naming the point and the joint.
#![cfg(feature = "app")]

mod common;

use arm_ik::model::Chain;
use arm_ik::node::{
    Command, HealthMonitor, JointState, Level, MemoryNode, NodeCore, NodeSettings, RejectReason,
    TrajectoryMsg, TrajectoryPoint,
};
use arm_ik::servo::ServoOutput;

const DT: f64 = 0.02;
/// A trajectory stamped 0 starts when it is taken: at the first tick after
/// it was pushed (node time `DT` in these tests).
const T0: f64 = DT;

fn arm_node() -> MemoryNode {
    let chain = Chain::from_urdf_file(common::project_urdf("arm.urdf"), None, None).unwrap();
    let mut n = MemoryNode::new(NodeCore::from_settings(&chain, &NodeSettings::default()).unwrap());
    n.tick(0.0);
    n
}

fn point(positions: &[f64], velocities: &[f64], t: f64) -> TrajectoryPoint {
    TrajectoryPoint {
        positions: positions.to_vec(),
        velocities: velocities.to_vec(),
        accelerations: Vec::new(),
        time_from_start: t,
    }
}

fn trajectory(names: &[&str], points: Vec<TrajectoryPoint>) -> Command {
    Command::Trajectory(TrajectoryMsg {
        stamp: 0.0,
        joint_names: names.iter().map(|s| s.to_string()).collect(),
        points,
    })
}

/// Ticks from tick `k0` to `k1` (exclusive), returning the joint states.
fn run(n: &mut MemoryNode<impl ServoOutput>, k0: usize, k1: usize) -> Vec<JointState> {
    for k in k0..k1 {
        n.tick(k as f64 * DT);
    }
    n.drain_joint_states()
}

/// The joint state at node time `t`.
fn at(states: &[JointState], t: f64) -> &JointState {
    states
        .iter()
        .find(|s| (s.stamp - t).abs() < DT / 2.0)
        .unwrap_or_else(|| panic!("no joint state at {t} s"))
}

fn off(js: &JointState, axes: &[usize], want: &[f64]) -> f64 {
    axes.iter()
        .zip(want)
        .map(|(&a, w)| (js.position[a] - w).abs())
        .fold(0.0, f64::max)
}

/// shoulder (axis 1), elbow (2), wrist_pitch (3).
const NAMES: [&str; 3] = ["shoulder", "elbow", "wrist_pitch"];
const AXES: [usize; 3] = [1, 2, 3];

#[test]
fn a_trajectorys_points_are_reached_at_their_times_within_the_limits() {
    // Positions only: straight lines between the points, at most 0.8 rad/s.
    let mut n = arm_node();
    let points = [[0.4, 0.8, 0.2], [0.0, 1.2, -0.2], [-0.3, 0.6, 0.0]];
    n.push_command(trajectory(
        &NAMES,
        vec![
            point(&points[0], &[], 1.0),
            point(&points[1], &[], 2.0),
            point(&points[2], &[], 3.0),
        ],
    ));
    let states = run(&mut n, 1, 250);
    common::assert_limits_kept(&n, &states);
    // A corner between two straight lines is rounded within the
    // acceleration limit; the last point is where the arm stops.
    for (k, p) in points.iter().enumerate() {
        let e = off(at(&states, T0 + (k + 1) as f64), &AXES, p);
        assert!(e < 0.02, "point {}: {e} rad off at its time", k + 1);
    }
    assert_eq!(off(states.last().unwrap(), &AXES, &points[2]), 0.0);
    let st = &n.core().status().teach.trajectory;
    assert_eq!(
        (st.points, st.passed, st.active, st.late.clone()),
        (3, 3, false, None)
    );
    // The other joints stayed where they were.
    assert!(
        states
            .iter()
            .all(|s| s.position[0] == 0.0 && s.position[4] == 0.0)
    );

    // With velocities: cubic curves through the points at their speeds,
    // followed without lag.
    let mut n = arm_node();
    n.push_command(trajectory(
        &NAMES,
        vec![
            point(&[0.3, 0.5, 0.1], &[0.3, 0.4, 0.0], 1.0),
            point(&[0.6, 1.0, 0.1], &[0.0, 0.0, 0.0], 2.0),
        ],
    ));
    let states = run(&mut n, 1, 150);
    common::assert_limits_kept(&n, &states);
    assert!(off(at(&states, T0 + 1.0), &AXES, &[0.3, 0.5, 0.1]) < 1e-9);
    assert!(off(at(&states, T0 + 2.0), &AXES, &[0.6, 1.0, 0.1]) < 1e-9);
    let st = &n.core().status().teach.trajectory;
    assert!(st.max_lag < 1e-9, "{st:?}");
}

/// Bus servos still connecting when the trajectory comes: the arm is
/// held, and the trajectory waits with it. Once the servos say where the
/// arm is, the trajectory is planned from there and its clock starts, so
/// its points are reached at their times counted from then (a clock that
/// ran while the arm was held would leave the arm chasing it).
#[test]
fn a_trajectory_sent_before_the_servos_report_starts_when_they_do_from_where_they_are() {
    let chain = Chain::from_urdf_file(common::project_urdf("arm.urdf"), None, None).unwrap();
    let (mut n, present, commands) = common::measuring::node(&chain, None);
    let held = chain.mid_configuration();
    let points = [[0.4, 0.8, 0.2], [0.0, 1.2, -0.2]];
    n.push_command(trajectory(
        &NAMES,
        vec![point(&points[0], &[], 1.0), point(&points[1], &[], 2.0)],
    ));
    // Half a second connecting: nothing moves, nothing is sent away from
    // where the node holds the arm.
    for js in run(&mut n, 0, 25) {
        assert_eq!(js.position[..5], held);
    }
    assert!(n.core().status().teach.trajectory.active);
    // Connected at tick 25 (0.5 s), measured away from the held pose.
    let measured = vec![0.1, -0.3, 0.5, -0.4, 0.2];
    *present.lock().unwrap() = Some(measured.clone());
    let sent_before = commands.lock().unwrap().len();
    run(&mut n, 25, 200);
    // The servos measure, so the joint states are where they say; what
    // the arm is driven along is the commands, one a tick from 0.5 s.
    let sent = commands.lock().unwrap()[sent_before..].to_vec();
    let at_time = |t: f64| &sent[((t - 25.0 * DT) / DT).round() as usize];
    for (k, p) in points.iter().enumerate() {
        let q = at_time(25.0 * DT + (k + 1) as f64);
        let e = AXES
            .iter()
            .zip(p)
            .map(|(&a, w)| (q[a] - w).abs())
            .fold(0.0, f64::max);
        assert!(e < 0.02, "point {}: {e} rad off at its time", k + 1);
    }
    // From the measured pose, within the speed limits at every tick.
    let limits = n.core().motion().limits();
    let mut prev = &measured;
    for (k, q) in sent.iter().enumerate() {
        for (a, (x, y)) in q.iter().zip(prev).enumerate().take(5) {
            let step = (x - y).abs();
            assert!(
                step <= limits[a].velocity * DT + 1e-9,
                "tick {k}: joint {a} moved {step} rad"
            );
        }
        prev = q;
    }
    let st = &n.core().status().teach.trajectory;
    assert_eq!((st.accepted, st.passed, st.late.clone()), (1, 2, None));
}

#[test]
fn a_point_the_limits_cannot_meet_in_time_is_reported_and_reached_late_within_them() {
    let mut n = arm_node();
    // 1.8 rad in 0.5 s is 3.6 rad/s; the elbow may do 2 rad/s.
    n.push_command(trajectory(
        &["elbow"],
        vec![point(&[1.8], &[], 0.5), point(&[1.8], &[], 1.5)],
    ));
    let mut health = HealthMonitor::new();
    let states = run(&mut n, 1, 10);
    let h = health.check(n.core().status(), 50.0);
    assert_eq!(h.level, Level::Warn, "{h:?}");
    assert!(
        h.message
            .contains("point 1 of 2 (due at 0.50 s) cannot be met in time")
            && h.message.contains("'elbow'")
            && h.message.contains("speed limit of 2"),
        "{}",
        h.message
    );
    let late = n.core().status().teach.trajectory.late.clone().unwrap();
    assert_eq!(
        (late.point, late.joint.as_str(), late.limit),
        (1, "elbow", "speed")
    );
    assert!((late.at_s - 0.9).abs() < 1e-9, "{late:?}");
    let states = [states, run(&mut n, 10, 150)].concat();
    common::assert_limits_kept(&n, &states);
    // Not at 0.5 s; there about when the plan said, then held.
    assert!(at(&states, 0.5).position[2] < 1.2, "{:?}", at(&states, 0.5));
    let reached = states.iter().find(|s| s.position[2] == 1.8).unwrap().stamp;
    assert!((0.9..1.2).contains(&reached), "reached at {reached} s");
    assert_eq!(states.last().unwrap().position[2], 1.8);
    // Reported once more after it ended, then no longer.
    let h = health.check(n.core().status(), 50.0);
    assert!(!h.message.contains("cannot be met"), "{}", h.message);
}

#[test]
fn a_new_trajectory_replaces_what_is_left_of_the_old_one() {
    let mut n = arm_node();
    n.push_command(trajectory(
        &["base_yaw"],
        vec![point(&[1.0], &[], 2.0), point(&[-1.0], &[], 4.0)],
    ));
    run(&mut n, 1, 50);
    n.push_command(trajectory(&["base_yaw"], vec![point(&[0.2], &[], 1.0)]));
    let states = run(&mut n, 50, 300);
    common::assert_limits_kept(&n, &states);
    // It was at 0.49 rad going 0.5 rad/s toward 1.0: it brakes within
    // the acceleration limit and turns back, never going on to 1.0.
    let highest = states
        .iter()
        .map(|s| s.position[0])
        .fold(f64::MIN, f64::max);
    assert!(highest < 0.6, "went on with the old one: up to {highest}");
    assert_eq!(states.last().unwrap().position[0], 0.2);
    assert_eq!(n.core().status().teach.trajectory.accepted, 2);
    // A joint command in between takes over the joints it names.
    n.push_command(trajectory(&["base_yaw"], vec![point(&[1.0], &[], 2.0)]));
    run(&mut n, 300, 310);
    n.push_command(Command::Pose {
        name: "nope".into(),
    });
    n.push_command(Command::Gripper { position: 0.5 });
    run(&mut n, 310, 320);
    assert!(
        n.core().status().teach.trajectory.active,
        "a gripper command left it alone"
    );
    n.push_command(Command::JointCommand(arm_ik::node::JointCommandMsg {
        name: vec!["base_yaw".into()],
        position: vec![-0.5],
    }));
    let states = run(&mut n, 320, 500);
    assert!(!n.core().status().teach.trajectory.active);
    assert_eq!(states.last().unwrap().position[0], -0.5);
}

#[test]
fn bad_trajectories_are_refused_naming_the_point_and_the_joint() {
    let mut n = arm_node();
    let mut refused = |cmd: Command| {
        let core = n.core_mut();
        let e = core.command(&cmd, 0.02).unwrap_err();
        (e.reason, e.why)
    };
    let (r, why) = refused(trajectory(&["elbw"], vec![point(&[0.1], &[], 1.0)]));
    assert_eq!(r, RejectReason::UnknownJoint);
    assert!(why.contains("'elbw'"), "{why}");
    let (r, why) = refused(trajectory(
        &["gripper_mirror"],
        vec![point(&[0.1], &[], 1.0)],
    ));
    assert_eq!(r, RejectReason::UnknownJoint);
    assert!(why.contains("mimics 'gripper'"), "{why}");
    let (r, why) = refused(trajectory(
        &["shoulder", "elbow"],
        vec![point(&[0.1, 0.2], &[], 1.0), point(&[0.1, 3.0], &[], 2.0)],
    ));
    assert_eq!(r, RejectReason::Invalid);
    assert!(
        why.contains("point 2: joint 'elbow' at 3 is outside its limits"),
        "{why}"
    );
    let (r, _) = refused(trajectory(&["elbow"], vec![point(&[f64::NAN], &[], 1.0)]));
    assert_eq!(r, RejectReason::NotFinite);
    n.push_command(Command::Relax);
    n.tick(0.04);
    let e = n
        .core_mut()
        .command(&trajectory(&["elbow"], vec![point(&[0.1], &[], 1.0)]), 0.06)
        .unwrap_err();
    assert_eq!(e.reason, RejectReason::Relaxed);
    assert!(!n.core().status().teach.trajectory.active);
}
