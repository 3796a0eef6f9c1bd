//! What the URDF's zero pose looks like, in words a person can follow
//! with the arm in front of them: for each joint, where the part after it
//! points at zero and which way a positive angle swings it (REP 103: x
//! forward, y left, z up, in the chain's base frame).

use arm_ik::model::{Chain, Frames, JointKind};
use nalgebra::Vector3;

/// One hint per chain joint, chain order.
pub fn hints(chain: &Chain) -> Vec<String> {
    let mut frames = Frames::new(chain);
    let tip = chain.joint_frames(&vec![0.0; chain.dof()], &mut frames);
    let mut ends: Vec<Vector3<f64>> = frames.origins.iter().map(|p| p.coords).collect();
    ends.push(tip.translation.vector);
    (0..chain.dof())
        .map(|i| {
            let axis = frames.axes[i];
            // The part the joint moves: to the next joint that is
            // somewhere else (wrist joints often share an origin).
            let part = ends[i + 1..]
                .iter()
                .map(|e| e - ends[i])
                .find(|v| v.norm() > 1e-4);
            hint(chain.joints[i].kind, axis, part)
        })
        .collect()
}

fn hint(kind: JointKind, axis: Vector3<f64>, part: Option<Vector3<f64>>) -> String {
    if kind == JointKind::Prismatic {
        return format!("slides; positive moves it {}", way(axis));
    }
    let Some(part) = part else {
        return format!("turns about the {} axis", way(axis));
    };
    let at_zero = format!("at 0 the arm beyond it points {}", way(part));
    let swing = axis.cross(&part);
    if swing.norm() < 1e-3 * part.norm() {
        return format!(
            "{at_zero}; it rolls about it (positive: counter-clockwise seen from the tip)"
        );
    }
    format!("{at_zero}; positive swings it {}", way(swing))
}

/// The direction `v` is closest to, in words.
fn way(v: Vector3<f64>) -> &'static str {
    let (k, _) = v.iamax_full();
    let positive = v[k] > 0.0;
    match (k, positive) {
        (0, true) => "forward (+x)",
        (0, false) => "back (-x)",
        (1, true) => "left (+y)",
        (1, false) => "right (-y)",
        (_, true) => "up (+z)",
        (_, false) => "down (-z)",
    }
}
