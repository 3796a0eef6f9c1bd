//! The frames a bag's `/tf` and `/tf_static` describe, composed: where
//! each link is in the root frame, and the segments from each link to its
//! children, which is how `arm_ik draw` pictures the arm from what a
//! recording holds rather than from the URDF.

use super::viz::TransformStamped;
use crate::model::Transform;
use nalgebra::{Quaternion, Translation3, UnitQuaternion};
use std::collections::BTreeMap;

/// A point in the root frame (m).
pub type Point = [f64; 3];

/// Child frame -> (parent frame, pose of the child in the parent).
#[derive(Debug, Clone, Default)]
pub struct TfTree {
    frames: BTreeMap<String, (String, Transform)>,
}

impl TfTree {
    /// Adds or replaces the transforms (a newer `/tf` replaces the older).
    pub fn insert(&mut self, transforms: &[TransformStamped]) {
        for t in transforms {
            let [x, y, z] = t.translation;
            let [i, j, k, w] = t.rotation;
            let r = UnitQuaternion::from_quaternion(Quaternion::new(w, i, j, k));
            let pose = Transform::from_parts(Translation3::new(x, y, z), r.to_rotation_matrix());
            let parent = t.header.frame_id.clone();
            self.frames.insert(t.child_frame_id.clone(), (parent, pose));
        }
    }

    /// The pose of `frame` in the root of its tree, and that root; `None`
    /// for a loop.
    pub fn in_root<'a>(&'a self, frame: &'a str) -> Option<(Transform, &'a str)> {
        let mut pose = Transform::identity();
        let mut at = frame;
        for _ in 0..=self.frames.len() {
            match self.frames.get(at) {
                Some((parent, step)) => {
                    pose = step * pose;
                    at = parent;
                }
                None => return Some((pose, at)),
            }
        }
        None
    }

    /// Each parent-to-child segment in the root frame, longer than 1 mm
    /// (frames at the same point draw nothing).
    pub fn segments(&self) -> Vec<(Point, Point)> {
        let at = |f: &str| {
            self.in_root(f).map(|(p, _)| {
                let v = p.translation.vector;
                [v.x, v.y, v.z]
            })
        };
        self.frames
            .iter()
            .filter_map(|(child, (parent, _))| Some((at(parent)?, at(child)?)))
            .filter(|(a, b)| {
                let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
                d.sqrt() > 1e-3
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bag::Header;

    fn tf(parent: &str, child: &str, xyz: [f64; 3], q: [f64; 4]) -> TransformStamped {
        TransformStamped {
            header: Header {
                stamp_ns: 0,
                frame_id: parent.into(),
            },
            child_frame_id: child.into(),
            translation: xyz,
            rotation: q,
        }
    }

    #[test]
    fn frames_compose_from_the_root_down() {
        let half = std::f64::consts::FRAC_1_SQRT_2;
        let mut tree = TfTree::default();
        // b is 1 m up from a, turned 90 degrees about z; c is 1 m along b's x.
        tree.insert(&[
            tf("a", "b", [0.0, 0.0, 1.0], [0.0, 0.0, half, half]),
            tf("b", "c", [1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]),
        ]);
        let (c, root) = tree.in_root("c").unwrap();
        assert_eq!(root, "a");
        let v = c.translation.vector;
        assert!((v - nalgebra::Vector3::new(0.0, 1.0, 1.0)).norm() < 1e-12);
        assert_eq!(tree.segments().len(), 2);
    }
}
