//! The robot's moving joints as the node drives and publishes them.
//!
//! The node moves its *axes*: the chain's joints (solved for) and then the
//! robot's actuated joints off the chain (a gripper), in URDF order, the
//! order [`ServoOutput`](crate::servo::ServoOutput) takes. It publishes
//! every moving joint of the URDF, so robot_state_publisher and RViz show
//! the whole robot: the axes, then the joints that mimic another, computed
//! from their leader (`leader * multiplier + offset`, as URDF's `<mimic>`
//! says).

use crate::model::{Chain, ExtraJoint, Limits};
use std::sync::Arc;

/// A joint computed from an axis.
#[derive(Debug, Clone, PartialEq)]
struct MimicJoint {
    leader: usize,
    multiplier: f64,
    offset: f64,
}

/// Which joints the node drives and publishes, and in which order.
#[derive(Debug, Clone)]
pub struct JointLayout {
    /// Published names: the axes, then the mimic joints.
    names: Arc<[String]>,
    dof: usize,
    /// The actuated joints off the chain, in axis order after the chain's.
    extras: Vec<ExtraJoint>,
    mimics: Vec<MimicJoint>,
}

impl JointLayout {
    pub fn new(chain: &Chain) -> JointLayout {
        let extras: Vec<ExtraJoint> = chain
            .extras
            .iter()
            .filter(|e| e.actuated())
            .cloned()
            .collect();
        let mut names: Vec<String> = chain.joints.iter().map(|j| j.name.clone()).collect();
        names.extend(extras.iter().map(|e| e.name.clone()));
        let mut mimics = Vec::new();
        for e in &chain.extras {
            let Some(m) = &e.mimic else { continue };
            // The model checked that every leader is a moving joint that
            // follows no other: a chain joint or an actuated extra.
            let Some(leader) = names.iter().position(|n| *n == m.leader) else {
                continue;
            };
            mimics.push(MimicJoint {
                leader,
                multiplier: m.multiplier,
                offset: m.offset,
            });
            names.push(e.name.clone());
        }
        JointLayout {
            names: names.into(),
            dof: chain.dof(),
            extras,
            mimics,
        }
    }

    /// Every published joint name: the axes, then the mimic joints.
    pub fn names(&self) -> &Arc<[String]> {
        &self.names
    }

    /// The chain's joints: the first axes.
    pub fn dof(&self) -> usize {
        self.dof
    }

    /// Every joint the node moves: the chain's, then the actuated extras.
    pub fn axes(&self) -> usize {
        self.dof + self.extras.len()
    }

    /// The actuated joints off the chain, in axis order after the chain.
    pub fn extras(&self) -> &[ExtraJoint] {
        &self.extras
    }

    /// The axis of the joint called `name`.
    pub fn axis(&self, name: &str) -> Option<usize> {
        self.names[..self.axes()].iter().position(|n| n == name)
    }

    /// The leader's name when `name` is a mimic joint.
    pub fn leader_of(&self, name: &str) -> Option<&str> {
        let i = self.names[self.axes()..].iter().position(|n| n == name)?;
        Some(&self.names[self.mimics[i].leader])
    }

    /// The position limits of axis `i`.
    pub fn limits(&self, chain: &Chain, i: usize) -> Limits {
        match i.checked_sub(self.dof) {
            None => chain.joints[i].limits,
            Some(e) => self.extras[e].limits,
        }
    }

    /// A start for every axis: `start` for the chain (and for the extras
    /// it covers), each other extra at its rest position.
    pub fn start(&self, start: &[f64]) -> Vec<f64> {
        let mut q: Vec<f64> = start.iter().copied().take(self.axes()).collect();
        q.extend(
            self.extras[q.len().saturating_sub(self.dof)..]
                .iter()
                .map(|e| e.rest()),
        );
        q
    }

    /// Positions and velocities of every published joint from the axes'.
    pub fn publish(&self, q: &[f64], v: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let mut position = q.to_vec();
        let mut velocity = v.to_vec();
        for m in &self.mimics {
            position.push(q[m.leader] * m.multiplier + m.offset);
            velocity.push(v[m.leader] * m.multiplier);
        }
        (position, velocity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm() -> Chain {
        Chain::from_urdf_str(include_str!("../../urdf/arm.urdf"), None, None).unwrap()
    }

    #[test]
    fn the_arm_drives_its_gripper_and_publishes_the_mirror_jaw() {
        let chain = arm();
        let l = JointLayout::new(&chain);
        assert_eq!((l.dof(), l.axes()), (5, 6));
        assert_eq!(l.names()[5], "gripper");
        assert_eq!(l.names()[6], "gripper_mirror");
        assert_eq!(l.axis("gripper"), Some(5));
        assert_eq!(l.axis("gripper_mirror"), None);
        assert_eq!(l.leader_of("gripper_mirror"), Some("gripper"));
        assert_eq!(l.leader_of("elbow"), None);
        assert_eq!(l.limits(&chain, 5).upper, 1.2);
        assert_eq!(l.start(&[0.1; 5]), [0.1, 0.1, 0.1, 0.1, 0.1, 0.0]);
        assert_eq!(l.start(&[0.1; 6]), [0.1; 6]);
        let (q, v) = l.publish(
            &[0.0, 0.0, 0.0, 0.0, 0.0, 0.7],
            &[0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
        );
        assert_eq!(q[5..], [0.7, -0.7]);
        assert_eq!(v[5..], [1.0, -1.0]);
    }
}
