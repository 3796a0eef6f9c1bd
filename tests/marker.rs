//! Dragging the target marker in RViz, through the in-memory transport:
//! what `~/target_marker/feedback` does to the arm and what
//! `~/target_marker/update` and `get_interactive_markers` say.
#![cfg(feature = "app")]

mod common;

use arm_ik::node::marker::{MARKER_NAME, pose_of};
use arm_ik::node::{
    Command, FeedbackEvent, MarkerFeedback, MarkerUpdate, MemoryNode, SteerMode, TargetMsg,
    TwistMsg,
};
use nalgebra::Vector3;

fn tip(node: &MemoryNode) -> Vector3<f64> {
    node.core().tip_pose().translation.vector
}

/// Every update's seq_num is one higher than the last, as RViz's client
/// checks (a gap makes it reset and drop a drag).
fn assert_sequence(updates: &[MarkerUpdate], mut last: u64) -> u64 {
    for u in updates {
        assert_eq!(u.seq_num, last + 1, "{u:?}");
        last = u.seq_num;
    }
    last
}

#[test]
fn the_marker_starts_at_the_tip_and_follows_targets_and_jog() {
    let (mut node, dt, mut k) = common::ready_arm_node();
    let first = node.drain_marker_updates();
    assert_eq!(first[0].seq_num, 1);
    assert_eq!(
        first[0].markers.len(),
        1,
        "the first update creates the marker"
    );
    let seq = assert_sequence(&first, 0);
    let snap = node.core().marker_snapshot();
    assert_eq!(snap.sequence_number, seq);
    let shown = snap.markers[0].position;
    assert!(
        (Vector3::from(shown) - tip(&node)).norm() < 1e-3,
        "{shown:?}"
    );
    assert_eq!(snap.markers[0].name, MARKER_NAME);
    // A target from elsewhere, then a jog: the marker goes along.
    node.push_target(TargetMsg::position([0.18, 0.05, 0.12]));
    for i in 0..200 {
        if (100..150).contains(&i) {
            node.push_command(Command::Twist(TwistMsg::new(
                "base_link",
                [0.0, 0.0, 0.03],
                [0.0; 3],
            )));
        }
        node.tick(k as f64 * dt);
        k += 1;
    }
    let updates = node.drain_marker_updates();
    let seq = assert_sequence(&updates, seq);
    assert!(updates.len() > 10);
    let last = updates.iter().rev().find_map(|u| u.poses.first()).unwrap();
    assert!((Vector3::from(last.position) - tip(&node)).norm() < 2e-4);
    assert_eq!(node.core().marker_snapshot().sequence_number, seq);
}

#[test]
fn a_drag_is_followed_smoothly_and_the_release_is_the_final_target() {
    let (mut node, dt, mut k) = common::ready_arm_node();
    let seq = assert_sequence(&node.drain_marker_updates(), 0);
    let limits = node.core().motion().limits().to_vec();
    let (start, orientation) = pose_of(&node.core().tip_pose());
    let feedback = |event, p: Vector3<f64>| {
        Command::MarkerFeedback(MarkerFeedback::new(event, [p.x, p.y, p.z], orientation))
    };
    let mut p = Vector3::from(start);
    node.push_command(feedback(FeedbackEvent::MouseDown, p));
    // RViz sends a pose per mouse move: 1 mm per tick, out and to the side.
    let mut prev = node.core().motion().position().to_vec();
    let mut lag: f64 = 0.0;
    for i in 0..150 {
        p += if i < 80 {
            Vector3::new(0.001, 0.0, 0.0)
        } else {
            Vector3::new(0.0, 0.001, 0.0)
        };
        node.push_command(feedback(FeedbackEvent::PoseUpdate, p));
        node.tick(k as f64 * dt);
        k += 1;
        assert_eq!(node.core().status().steering.mode, SteerMode::Drag);
        lag = lag.max((tip(&node) - p).norm());
        let q = node.core().motion().position().to_vec();
        for (j, l) in limits.iter().enumerate() {
            let step = (q[j] - prev[j]).abs();
            assert!(
                step <= 0.1 && step <= l.velocity * dt + 1e-9,
                "tick {i}: joint {j} {step}"
            );
        }
        prev = q;
    }
    assert!(lag < 0.005, "the tip trailed the marker by {lag} m");
    node.push_command(feedback(FeedbackEvent::MouseUp, p));
    for _ in 0..100 {
        node.tick(k as f64 * dt);
        k += 1;
    }
    assert!(
        (tip(&node) - p).norm() < 1e-4,
        "released at {p:?}, tip at {:?}",
        tip(&node)
    );
    assert_eq!(node.core().status().steering.mode, SteerMode::Idle);
    assert_eq!(node.core().status().steering.marker_feedback, 152);
    // Held where the user dragged it, then back on the tip once there.
    let updates = node.drain_marker_updates();
    let seq2 = assert_sequence(&updates, seq);
    assert!(seq2 > seq);
    let shown = node.core().marker_snapshot().markers[0].position;
    assert!((Vector3::from(shown) - tip(&node)).norm() < 2e-4);
}

#[test]
fn feedback_for_another_marker_is_refused_and_counted() {
    let (mut node, dt, k) = common::ready_arm_node();
    let mut fb = MarkerFeedback::new(
        FeedbackEvent::PoseUpdate,
        [0.2, 0.0, 0.2],
        [0.0, 0.0, 0.0, 1.0],
    );
    fb.marker_name = "elsewhere".into();
    let before = tip(&node);
    let e = node
        .core_mut()
        .command(&Command::MarkerFeedback(fb), k as f64 * dt)
        .unwrap_err();
    assert!(e.why.contains("'elsewhere'"), "{}", e.why);
    node.tick(k as f64 * dt);
    assert_eq!(node.core().status().steering.refused, 1);
    assert_eq!(tip(&node), before);
}

/// What ROS 2's own `interactive_markers` server publishes on `<ns>/update`
/// for its marker at `start`, last update `seq0`, when given `feedback`,
/// and what its `get_interactive_markers` answers after: one pose per
/// POSE_UPDATE, each one sequence number higher (its `processFeedback`
/// sets the pose and applies the change), nothing for MOUSE_DOWN or
/// MOUSE_UP, never a keep-alive; the answer carries the last sequence
/// number and the last pose. (Its first update, `insert` + `applyChanges`,
/// is the marker alone with seq 1: see the first test.) Read from
/// interactive_markers 2.3 (Humble; the same in Jazzy):
/// `interactive_marker_server.py` and `interactive_marker_server.cpp`.
/// An update as compared: sequence number, markers, pose positions.
type Sent = (u64, usize, Vec<[f64; 3]>);

fn reference_server(
    seq0: u64,
    start: [f64; 3],
    feedback: &[(FeedbackEvent, [f64; 3])],
) -> (Vec<Sent>, (u64, [f64; 3])) {
    let mut sent = Vec::new();
    let (mut seq, mut pose) = (seq0, start);
    for &(event, p) in feedback {
        if event == FeedbackEvent::PoseUpdate {
            (seq, pose) = (seq + 1, p);
            sent.push((seq, 0, vec![p]));
        }
    }
    (sent, (seq, pose))
}

#[test]
fn a_drag_sends_what_ros2s_interactive_markers_server_sends() {
    let (mut node, dt, mut k) = common::ready_arm_node();
    let seq0 = assert_sequence(&node.drain_marker_updates(), 0);
    let (start, orientation) = pose_of(&node.core().tip_pose());
    let mut p = start;
    let mut feedback = vec![(FeedbackEvent::MouseDown, p)];
    for i in 0..30 {
        p[(i / 10) % 3] += 0.002;
        feedback.push((FeedbackEvent::PoseUpdate, p));
    }
    // RViz sends the release's pose as a POSE_UPDATE just before MOUSE_UP.
    feedback.push((FeedbackEvent::PoseUpdate, p));
    feedback.push((FeedbackEvent::MouseUp, p));
    let mut updates = Vec::new();
    for &(event, at) in &feedback {
        let mut fb = MarkerFeedback::new(event, at, orientation);
        fb.frame_id = "base_link".into();
        fb.client_id = "/rviz".into();
        node.push_command(Command::MarkerFeedback(fb));
        node.tick(k as f64 * dt);
        k += 1;
        updates.extend(node.drain_marker_updates());
    }
    let sent: Vec<_> = updates
        .iter()
        .map(|u| {
            for pose in &u.poses {
                assert_eq!(
                    (pose.name, pose.frame_id.as_str()),
                    (MARKER_NAME, "base_link")
                );
            }
            let poses = u.poses.iter().map(|p| p.position).collect();
            (u.seq_num, u.markers.len(), poses)
        })
        .collect();
    let (expected, (seq, pose)) = reference_server(seq0, start, &feedback);
    assert_eq!(sent, expected);
    let snap = node.core().marker_snapshot();
    assert_eq!(
        (snap.sequence_number, snap.markers[0].position),
        (seq, pose)
    );
}
/// Drags the marker from the tip by `step` per tick for `ticks` ticks,
/// releases it there and waits for the arm; returns where it was let go
/// and the farthest the tip strayed from the straight line the marker
/// went along. Every joint stays within its limits and speed.
fn drag_by(
    node: &mut MemoryNode,
    dt: f64,
    step: Vector3<f64>,
    ticks: usize,
) -> (Vector3<f64>, f64) {
    let (start, orientation) = pose_of(&node.core().tip_pose());
    let feedback = |event, p: Vector3<f64>| {
        let mut fb = MarkerFeedback::new(event, [p.x, p.y, p.z], orientation);
        // As RViz sends it: frame-locked, the marker's frame, its node name.
        fb.frame_id = "base_link".into();
        fb.client_id = "/rviz".into();
        Command::MarkerFeedback(fb)
    };
    let mut p = Vector3::from(start);
    let mut k = 1;
    node.push_command(feedback(FeedbackEvent::MouseDown, p));
    let limits = node.core().motion().limits().to_vec();
    let mut prev = node.core().motion().position().to_vec();
    let line = step.normalize();
    let mut strayed: f64 = 0.0;
    for i in 0..ticks {
        p += step;
        node.push_command(feedback(FeedbackEvent::PoseUpdate, p));
        node.tick(k as f64 * dt);
        k += 1;
        let q = node.core().motion().position().to_vec();
        for (j, l) in limits.iter().enumerate() {
            let moved = (q[j] - prev[j]).abs();
            assert!(
                moved <= l.velocity * dt + 1e-9,
                "tick {i}: joint {j} moved {moved}"
            );
            assert!(
                (l.lower..=l.upper).contains(&q[j]),
                "tick {i}: joint {j} at {}",
                q[j]
            );
        }
        let off = tip(node) - Vector3::from(start);
        strayed = strayed.max((off - line * off.dot(&line)).norm());
        prev = q;
    }
    node.push_command(feedback(FeedbackEvent::MouseUp, p));
    for _ in 0..200 {
        node.tick(k as f64 * dt);
        k += 1;
    }
    (p, strayed)
}

#[test]
fn a_drag_down_from_the_stretched_start_pose_moves_the_tip_down() {
    let (mut node, dt) = common::start_pose_arm_node();
    let top = tip(&node);
    // RViz's z arrow pulled 55 mm down, a millimetre a frame.
    let (released, strayed) = drag_by(&mut node, dt, Vector3::new(0.0, 0.0, -0.001), 55);
    let now = tip(&node);
    assert!(
        (now - released).norm() < 1e-4,
        "let go at {released:?}, the tip is at {now:?} (it started at {top:?})"
    );
    assert!(
        strayed < 0.001,
        "the tip strayed {strayed} m off the drag's line"
    );
    // The elbow bent; the base did not swing round.
    let q = node.core().motion().position();
    assert!(q[0].abs() < 1e-9, "base yaw {}", q[0]);
    assert_eq!(node.core().status().steering.mode, SteerMode::Idle);
}

#[test]
fn a_drag_sideways_from_the_stretched_start_pose_moves_the_tip_sideways() {
    let (mut node, dt) = common::start_pose_arm_node();
    // Down and to the side (straight to the side is out of reach from
    // the top): the base turns toward it as the arm bends.
    let (released, _) = drag_by(&mut node, dt, Vector3::new(0.0, 0.001, -0.001), 40);
    let now = tip(&node);
    assert!(
        (now - released).norm() < 1e-4,
        "let go at {released:?}, tip at {now:?}"
    );
}
