//! Jogging the project arm with twists, through the in-memory transport:
//! what `~/target_twist` and `~/cmd_vel` (teleop_twist_keyboard,
//! teleop_twist_joy) do to the arm.
#![cfg(feature = "app")]

mod common;

use arm_ik::model::Frames;
use arm_ik::node::follow::Hold;
use arm_ik::node::{Command, JogSettings, MemoryNode, RejectReason, SteerMode, TwistMsg};
use nalgebra::Vector3;

fn twist(frame: &str, linear: [f64; 3], angular: [f64; 3]) -> Command {
    Command::Twist(TwistMsg::new(frame, linear, angular))
}

fn base_twist(linear: [f64; 3]) -> Command {
    twist("base_link", linear, [0.0; 3])
}

fn tip(node: &MemoryNode) -> Vector3<f64> {
    node.core().tip_pose().translation.vector
}

#[test]
fn a_jog_along_base_x_for_two_seconds_moves_the_tip_ten_centimetres_on_a_line() {
    let (mut node, dt, mut k) = common::ready_arm_node();
    let start = tip(&node);
    let mut off_axis: f64 = 0.0;
    // 0.05 m/s for 2 s, then the key is let go (teleop sends a zero twist).
    let ticks = (2.0 / dt).round() as u64;
    for i in 0..ticks + 100 {
        if i < ticks {
            node.push_command(base_twist([0.05, 0.0, 0.0]));
        } else if i == ticks {
            node.push_command(base_twist([0.0; 3]));
        }
        node.tick(k as f64 * dt);
        k += 1;
        let d = tip(&node) - start;
        off_axis = off_axis.max(d.y.hypot(d.z));
    }
    let moved = (tip(&node) - start).x;
    assert!((moved - 0.10).abs() <= 0.005, "moved {moved} m along x");
    assert!(off_axis <= 0.002, "{off_axis} m off the x axis");
    let st = &node.core().status().steering;
    assert_eq!(st.twists, ticks + 1);
    assert_eq!(st.mode, SteerMode::Idle, "stopped and handed back");
}

#[test]
fn a_jog_into_a_joint_limit_stops_at_the_limit() {
    // Turning the tool about its own axis is the wrist roll alone.
    let (mut node, dt, mut k) = common::ready_arm_node();
    let roll = 4;
    let upper = node.core().chain().joints[roll].limits.upper;
    let start = tip(&node);
    let mut held_at_limit = false;
    let mut top = f64::NEG_INFINITY;
    for _ in 0..(6.0 / dt) as u64 {
        node.push_command(twist("tool", [0.0; 3], [0.0, 0.0, 0.5]));
        node.tick(k as f64 * dt);
        k += 1;
        let q = node.core().motion().position()[roll];
        assert!(q <= upper, "wrist roll {q} past its limit {upper}");
        top = top.max(q);
        held_at_limit |= node.core().status().steering.hold.is_some();
    }
    assert!(top >= upper - 1e-9, "stopped short: {top} of {upper}");
    assert!(held_at_limit, "the status says what holds the tip");
    for js in node.drain_joint_states() {
        assert!(js.position[roll] <= upper);
    }
    assert!((tip(&node) - start).norm() < 1e-3, "the tip stayed put");
}

#[test]
fn a_silent_teleop_stops_the_tip_within_the_acceleration_limit() {
    let (mut node, dt, mut k) = common::ready_arm_node();
    let jog = JogSettings::default();
    let mut speeds = Vec::new();
    let mut prev = tip(&node);
    let pushed = (1.0 / dt) as u64;
    for i in 0..pushed + 100 {
        // The teleop node dies after 1 s: no zero twist, nothing.
        if i < pushed {
            node.push_command(base_twist([0.08, 0.0, 0.0]));
        }
        node.tick(k as f64 * dt);
        k += 1;
        let p = tip(&node);
        speeds.push((p - prev).norm() / dt);
        prev = p;
    }
    let last_twist = pushed as usize - 1;
    let timeout_ticks = (jog.timeout / dt).round() as usize;
    // Full speed until the twist times out...
    assert!((speeds[last_twist + timeout_ticks - 1] - 0.08).abs() < 1e-3);
    // ...then down, never faster than the acceleration limit...
    for (i, w) in speeds[last_twist..].windows(2).enumerate() {
        let a = (w[1] - w[0]) / dt;
        assert!(
            a <= 1e-6,
            "tick {i} after the last twist: speeding up at {a}"
        );
        assert!(
            -a <= jog.linear_acceleration * 1.05,
            "tick {i}: braking at {a} m/s^2"
        );
    }
    // ...to rest within the time that takes.
    let stop = last_twist + timeout_ticks + (0.08 / jog.linear_acceleration / dt).ceil() as usize;
    assert!(
        speeds[stop + 2..].iter().all(|v| *v < 1e-9),
        "{:?}",
        &speeds[stop..]
    );
    assert_eq!(node.core().status().steering.mode, SteerMode::Idle);
}

#[test]
fn a_millimetre_per_tick_jog_never_jumps_a_joint() {
    let (mut node, dt, mut k) = common::ready_arm_node();
    let limits = node.core().motion().limits().to_vec();
    // 0.05 m/s at 50 Hz: 1 mm per tick, out, sideways, down and back.
    assert!((0.05 * dt - 0.001).abs() < 1e-12);
    let legs = [
        [0.05, 0.0, 0.0],
        [0.0, 0.05, 0.0],
        [0.0, 0.0, -0.05],
        [-0.035, -0.035, 0.0],
        [0.0, 0.0, 0.05],
    ];
    let mut prev = node.core().motion().position().to_vec();
    let mut ticks = 0;
    for leg in legs {
        for _ in 0..(1.5 / dt) as u64 {
            node.push_command(base_twist(leg));
            node.tick(k as f64 * dt);
            k += 1;
            ticks += 1;
            let q = node.core().motion().position().to_vec();
            for (j, l) in limits.iter().enumerate() {
                let step = (q[j] - prev[j]).abs();
                assert!(step <= 0.1, "tick {ticks}: joint {j} stepped {step} rad");
                assert!(
                    step <= l.velocity * dt + 1e-9,
                    "tick {ticks}: joint {j} stepped {step}, faster than {} rad/s",
                    l.velocity
                );
            }
            prev = q;
        }
    }
}

#[test]
fn a_five_joint_arm_says_once_which_turns_it_ignores() {
    let (mut node, dt, mut k) = common::ready_arm_node();
    let start = tip(&node);
    let mut notices = Vec::new();
    // Rolling the tool about base x: a 5-joint arm cannot, from here.
    for _ in 0..(2.0 / dt) as u64 {
        node.push_command(twist("base_link", [0.0; 3], [0.3, 0.0, 0.0]));
        node.tick(k as f64 * dt);
        k += 1;
        notices.extend(node.core_mut().take_notice());
    }
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("5 joints"), "{}", notices[0]);
    let note = node.core().status().steering.note.clone().unwrap();
    assert_eq!(note, notices[0]);
    // It follows the position it can: the tip stays put.
    assert!((tip(&node) - start).norm() < 1e-3);
}

#[test]
fn a_twist_in_another_frame_is_refused_naming_it() {
    let (mut node, dt, k) = common::ready_arm_node();
    let before = tip(&node);
    let e = node
        .core_mut()
        .command(&twist("world", [0.05, 0.0, 0.0], [0.0; 3]), k as f64 * dt)
        .unwrap_err();
    assert_eq!(e.reason, RejectReason::WrongFrame);
    assert!(
        e.why.contains("'world'") && e.why.contains("base_link"),
        "{}",
        e.why
    );
    node.tick(k as f64 * dt);
    assert_eq!(node.core().status().steering.refused, 1);
    assert_eq!(tip(&node), before);
}

/// Counts, per joint, how often it turned back by more than
/// [`Swings::BACK`] from the furthest it had gone: a swing a person sees.
struct Swings {
    count: Vec<u32>,
    /// The furthest position in the current direction, and the direction
    /// (0 until the joint first moved by more than `BACK`).
    extreme: Vec<(f64, f64)>,
}

impl Swings {
    /// About a degree.
    const BACK: f64 = 0.02;

    fn new(q: &[f64]) -> Swings {
        Swings {
            count: vec![0; q.len()],
            extreme: q.iter().map(|&x| (x, 0.0)).collect(),
        }
    }

    fn record(&mut self, q: &[f64]) {
        for (j, &x) in q.iter().enumerate() {
            let (far, dir) = &mut self.extreme[j];
            let moved = x - *far;
            if *dir == 0.0 {
                if moved.abs() > Self::BACK {
                    (*far, *dir) = (x, moved.signum());
                }
            } else if moved * *dir > 0.0 {
                *far = x;
            } else if moved.abs() > Self::BACK {
                self.count[j] += 1;
                (*far, *dir) = (x, -*dir);
            }
        }
    }
}

/// How far the tip of the project arm reaches along the line `z` above the
/// base through the base axis: the shoulder, elbow and wrist pitch links
/// stretched into one (m).
fn reach_along_x(node: &MemoryNode, z: f64) -> f64 {
    let chain = node.core().chain();
    let mut frames = Frames::new(chain);
    let zero = vec![0.0; chain.dof()];
    let tool = chain.jacobian(&zero, &mut frames).translation.vector;
    let shoulder = frames.origins[1].coords;
    let links = (tool - shoulder).norm();
    (links * links - (z - shoulder.z).powi(2)).sqrt()
}

/// Pushed out of reach at 0.1 m/s along base x, the arm slows and stops at
/// the edge of its reach on the line: the elbow and the wrist never pass
/// straight (no flip), the tip never leaves the line by more than 2 mm,
/// no joint steps faster than its limit, the status says why it stopped,
/// and it stays there however long the push goes on. Jogged back inward,
/// it leaves the stretched pose smoothly: on the line, no joint swinging
/// back and forth.
#[test]
fn a_jog_out_of_reach_stops_at_the_edge_on_the_line_without_flipping() {
    let (mut node, dt, mut k) = common::ready_arm_node();
    let chain = node.core().chain().clone();
    let limits = node.core().motion().limits().to_vec();
    let (elbow, wrist) = (2, 3);
    let start = tip(&node);
    let edge = reach_along_x(&node, start.z);
    let q0 = node.core().motion().position().to_vec();
    assert!(
        q0[elbow] > 0.5 && q0[wrist] > 0.5,
        "bent to start with: {q0:?}"
    );
    let mut prev = q0;
    let mut held = false;
    let mut off_line: f64 = 0.0;
    for i in 0..(6.0 / dt) as u64 {
        node.push_command(base_twist([0.1, 0.0, 0.0]));
        node.tick(k as f64 * dt);
        k += 1;
        held |= node.core().status().steering.hold == Some(Hold::Singularity);
        let q = node.core().motion().position().to_vec();
        assert!(chain.within_limits(&q[..chain.dof()]), "tick {i}: {q:?}");
        assert!(q[elbow] > 0.0, "tick {i}: the elbow flipped: {q:?}");
        assert!(q[wrist] > 0.0, "tick {i}: the wrist flipped: {q:?}");
        for (j, l) in limits.iter().enumerate() {
            let step = (q[j] - prev[j]).abs();
            assert!(
                step <= l.velocity * dt + 1e-9,
                "tick {i}: joint {j} stepped {step}"
            );
        }
        let d = tip(&node) - start;
        off_line = off_line.max(d.y.hypot(d.z));
        prev = q;
    }
    assert!(held, "the status never said the arm is near a singularity");
    assert!(off_line <= 0.002, "the tip left the line by {off_line} m");
    let rest = tip(&node);
    assert!(
        rest.x >= edge - 0.002 && rest.x <= edge,
        "stopped at x = {} m, the edge of the reach is at {edge} m",
        rest.x
    );
    // Halted, the arm stays put however long the push goes on.
    let mut drift: f64 = 0.0;
    for _ in 0..(1.0 / dt) as u64 {
        node.push_command(base_twist([0.1, 0.0, 0.0]));
        node.tick(k as f64 * dt);
        k += 1;
        drift = drift.max((tip(&node) - rest).norm());
    }
    assert!(
        drift < 0.001,
        "the pushed tip drifted {drift} m after the halt"
    );
    // Back inward at 0.05 m/s for 1 s: the elbow bends from nearly
    // straight, so the first centimetres go slower than asked, but on the
    // line and without a joint swinging back and forth.
    let mut swings = Swings::new(node.core().motion().position());
    for _ in 0..(1.0 / dt) as u64 {
        node.push_command(base_twist([-0.05, 0.0, 0.0]));
        node.tick(k as f64 * dt);
        k += 1;
        swings.record(node.core().motion().position());
        let d = tip(&node) - start;
        off_line = off_line.max(d.y.hypot(d.z));
    }
    let back = rest.x - tip(&node).x;
    assert!(back > 0.025, "jogging inward moved the tip only {back} m");
    assert!(off_line <= 0.002, "the tip left the line by {off_line} m");
    let turned_back = swings.count;
    assert!(
        turned_back.iter().all(|&n| n == 0),
        "joints turned back and forth jogging inward: {turned_back:?}"
    );
}

/// Pushed out of reach up, sideways and on a slant, neither the elbow nor
/// the wrist passes straight: near the edge of the workspace the three
/// pitch joints can reach a point along a small loop of poses, and the
/// least-motion answer wandered along it, bending the elbow the other way
/// while the wrist was still bent (nothing singular to slow down for), or
/// (straight up) swinging the wrist through straight. The tip stays on the
/// line it was pushed along, also where the collision check slows it down
/// and out near the floor (it slows the jog's own speed, so the tip keeps
/// to the line; slowing the joints' steps left it by 4.7 mm).
#[test]
fn jogs_out_of_reach_in_any_direction_keep_the_elbow_and_wrist_bent_their_way() {
    let (elbow, wrist) = (2, 3);
    for (dir, check) in [
        ([0.0, 0.0, 1.0], true),
        ([0.6, 0.3, 0.74], true),
        ([1.0, 1.0, 0.0], true),
        ([0.894, 0.0, -0.447], false),
        ([0.894, 0.0, -0.447], true),
    ] {
        let mut config = arm_ik::node::NodeConfig::default();
        config.collision.check = check;
        let (mut node, dt, mut k) = common::ready_arm_node_with(config);
        let d = Vector3::from(dir).normalize();
        let start = tip(&node);
        let mut off_line: f64 = 0.0;
        for i in 0..(5.0 / dt) as u64 {
            node.push_command(base_twist((d * 0.1).into()));
            node.tick(k as f64 * dt);
            k += 1;
            let q = node.core().motion().position();
            assert!(
                q[elbow] > 0.0,
                "{dir:?}, tick {i}: the elbow flipped: {q:?}"
            );
            assert!(
                q[wrist] > 0.0,
                "{dir:?}, tick {i}: the wrist flipped: {q:?}"
            );
            let e = tip(&node) - start;
            off_line = off_line.max((e - d * e.dot(&d)).norm());
        }
        assert!(
            off_line <= 0.003,
            "{dir:?} (collision check {check}): the tip left the line by {off_line} m"
        );
        if let Some(c) = &node.core().status().collision {
            assert!(
                c.ticks_in_collision == 0 && c.min_clearance > 0.0,
                "{dir:?}: {c:?}"
            );
        }
        // Held at the edge of what it can reach: a singularity, or (down
        // and out) the shoulder's limit.
        let st = &node.core().status().steering;
        assert!(st.hold.is_some(), "{dir:?}: not held at the edge");
    }
}

mod random {
    use super::*;
    use proptest::prelude::*;

    /// One leg of a random jog: a twist held for a while, in the base or
    /// the tool frame.
    fn leg() -> impl Strategy<Value = (bool, [f64; 3], [f64; 3], u64)> {
        let v = || prop::array::uniform3(-0.15..0.15f64);
        let w = || prop::array::uniform3(-0.8..0.8f64);
        (any::<bool>(), v(), w(), 10..60u64)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

        /// Whatever a stick does (out of reach, into limits, turning what
        /// five joints cannot), every joint stays within its limits and
        /// never steps faster than its speed limit, nothing is NaN, and
        /// the elbow keeps the side it is bent to.
        #[test]
        fn random_jogs_keep_every_limit_and_the_elbow_bent(legs in prop::collection::vec(leg(), 4..8)) {
            let (mut node, dt, mut k) = common::ready_arm_node();
            let chain = node.core().chain().clone();
            let limits = node.core().motion().limits().to_vec();
            let mut prev = node.core().motion().position().to_vec();
            for (tool, v, w, ticks) in legs {
                let frame = if tool { "tool" } else { "base_link" };
                for _ in 0..ticks {
                    node.push_command(twist(frame, v, w));
                    node.tick(k as f64 * dt);
                    k += 1;
                    let q = node.core().motion().position().to_vec();
                    prop_assert!(q.iter().all(|x| x.is_finite()), "{q:?}");
                    prop_assert!(chain.within_limits(&q[..chain.dof()]), "{q:?}");
                    prop_assert!(q[2] > 0.0, "the elbow flipped: {q:?}");
                    for (j, l) in limits.iter().enumerate() {
                        let step = (q[j] - prev[j]).abs();
                        prop_assert!(step <= l.velocity * dt + 1e-9, "joint {j} stepped {step}");
                    }
                    prev = q;
                }
            }
        }
    }
}

#[test]
fn a_jog_down_from_the_stretched_start_pose_moves_the_tip_down_its_axis() {
    // Straight up, every joint at zero: to first order the tip cannot move
    // along the arm, yet bending the elbow takes it down.
    let (mut node, dt) = common::start_pose_arm_node();
    let start = tip(&node);
    let ticks = (1.0 / dt).round() as u64;
    let mut off_axis: f64 = 0.0;
    for k in 1..=ticks + 100 {
        if k <= ticks {
            node.push_command(base_twist([0.0, 0.0, -0.05]));
        }
        node.tick(k as f64 * dt);
        let d = tip(&node) - start;
        off_axis = off_axis.max(d.x.hypot(d.y));
    }
    let moved = start.z - tip(&node).z;
    // 0.05 m/s for 1 s, less what the speed ramps and the unbending take.
    assert!((0.035..=0.055).contains(&moved), "moved {moved} m down");
    assert!(off_axis <= 0.002, "{off_axis} m off the axis");
    assert_eq!(node.core().status().steering.mode, SteerMode::Idle);
}
