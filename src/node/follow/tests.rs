//! The follower's own tests: one tick at a time on the project arm.

use super::*;
use nalgebra::UnitQuaternion;

fn arm() -> Chain {
    Chain::from_urdf_str(include_str!("../../../urdf/arm.urdf"), None, None).unwrap()
}

/// One tick toward `target` within the URDF limits, each joint moving
/// up to 0.04 rad either way (2 rad/s at 50 Hz), all of it usable for
/// turning.
fn tick(f: &mut Follower, chain: &Chain, q: &mut [f64], target: &Target) -> FollowStep {
    let limits: Vec<_> = chain
        .joints
        .iter()
        .map(|j| (j.limits.lower, j.limits.upper))
        .collect();
    f.step(chain, q, target, &limits, &[(-0.04, 0.04); 5], &[0.04; 5])
}

/// A pose in front of the arm, elbow bent: far from limits and
/// singularities.
const READY: [f64; 5] = [0.1, 0.6, 0.9, 0.5, 0.2];

#[test]
fn small_moves_are_followed_exactly_position_first() {
    let chain = arm();
    let mut f = Follower::new(&chain, &[]);
    let mut q = READY.to_vec();
    let tip = chain.fk(&q);
    let r = UnitQuaternion::from_rotation_matrix(&tip.rotation);
    let p = tip.translation.vector + Vector3::new(0.001, -0.001, 0.0005);
    let step = tick(&mut f, &chain, &mut q, &Target::pose(p, r));
    // The position is exact; this orientation is reachable from
    // nearby too on a 5-joint arm only approximately.
    assert!(step.position_error < 1e-8, "{step:?}");
    assert!(step.orientation_error < 0.01, "{step:?}");
    assert_eq!((step.hold, step.speed_limited), (None, false));
}

#[test]
fn a_far_target_moves_at_most_one_tick_of_speed() {
    let chain = arm();
    let mut f = Follower::new(&chain, &[]);
    let q0 = READY.to_vec();
    let mut q = q0.clone();
    let p = chain.fk(&q).translation.vector + Vector3::new(-0.1, 0.1, 0.05);
    let step = tick(&mut f, &chain, &mut q, &Target::position(p));
    assert!(step.speed_limited, "{step:?}");
    for (a, b) in q.iter().zip(&q0) {
        assert!((a - b).abs() <= 0.04 + 1e-12, "{a} from {b}");
    }
    // And it gets there over a few ticks, never leaving the limits.
    for _ in 0..100 {
        let s = tick(&mut f, &chain, &mut q, &Target::position(p));
        assert!(chain.within_limits(&q));
        if s.position_error < 1e-9 {
            return;
        }
    }
    panic!("never reached {p:?}");
}

#[test]
fn locked_joints_stay_and_limits_hold() {
    let chain = arm();
    let mut modes = [JointMode::Free; 5];
    modes[4] = JointMode::Lock;
    let mut f = Follower::new(&chain, &modes);
    let mut q = READY.to_vec();
    // Straight up and out of reach: pushes the arm into its limits.
    let p = Vector3::new(0.0, 0.0, 1.0);
    for _ in 0..200 {
        tick(&mut f, &chain, &mut q, &Target::position(p));
        assert_eq!(q[4], READY[4]);
        assert!(chain.within_limits(&q));
    }
}

#[test]
fn the_arm_slows_and_stops_before_stretching_straight() {
    let chain = arm();
    let mut f = Follower::new(&chain, &[]);
    let mut q = READY.to_vec();
    let mut p = chain.fk(&q).translation.vector;
    let out = p.normalize();
    let mut held = false;
    let mut last_gap = f64::INFINITY;
    for _ in 0..400 {
        p += out * 0.002;
        let before = q.clone();
        let s = tick(&mut f, &chain, &mut q, &Target::position(p));
        let step: f64 = q.iter().zip(&before).map(|(a, b)| (a - b).abs()).sum();
        assert!(step.is_finite() && step <= 0.2, "{step}");
        held |= s.hold == Some(Hold::Singularity);
        last_gap = s.position_error;
    }
    assert!(held, "never slowed at the singularity");
    // Stopped short of full stretch, not flailing: the target ran away.
    assert!(last_gap > 0.1, "{last_gap}");
    let reach = reach(&chain);
    let r = chain.fk(&q).translation.vector.norm();
    assert!(r < reach && r > 0.8 * reach - 0.1, "{r} of {reach}");
}

/// Holding the tool's orientation while pushing the tip out drives
/// the elbow straight, where the orientation stops being reachable:
/// the elbow settles there (within a few mrad) instead of swinging
/// across it by a full tick of speed every tick.
#[test]
fn an_orientation_out_of_reach_does_not_swing_the_elbow() {
    let chain = arm();
    let mut f = Follower::new(&chain, &[]);
    let mut q = READY.to_vec();
    let tip = chain.fk(&q);
    let r = UnitQuaternion::from_rotation_matrix(&tip.rotation);
    let mut p = tip.translation.vector;
    let out = Vector3::new(p.x, p.y, 0.0).normalize();
    let mut reversals = 0;
    let mut last = 0.0_f64;
    for _ in 0..300 {
        p += out * 0.001;
        let elbow = q[2];
        tick(&mut f, &chain, &mut q, &Target::pose(p, r));
        let step = q[2] - elbow;
        // A quarter of a tick of speed (0.04 rad) is a swing.
        if step.abs() > 0.01 && last.abs() > 0.01 && step.signum() != last.signum() {
            reversals += 1;
        }
        if step.abs() > 0.01 {
            last = step;
        }
    }
    assert!(reversals <= 1, "the elbow reversed {reversals} times");
}
