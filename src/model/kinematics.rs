//! Forward kinematics and the geometric Jacobian.
//!
//! Both run in the solvers' inner loops, so neither allocates: the tip pose
//! needs no storage, and the Jacobian writes into a [`Frames`] buffer that the
//! caller creates once per chain and reuses.

use super::{Chain, Joint, JointKind, Transform};
use nalgebra::{Matrix3, Point3, Vector3};

/// One Jacobian column: the tip's linear and angular velocity for a unit
/// speed of one joint, both in the base frame.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Twist {
    pub linear: Vector3<f64>,
    pub angular: Vector3<f64>,
}

/// Reusable per-chain storage for the joint frames and the Jacobian.
#[derive(Debug, Clone)]
pub struct Frames {
    /// World (base-frame) position of each joint's origin.
    pub origins: Vec<Point3<f64>>,
    /// World (base-frame) unit axis of each joint.
    pub axes: Vec<Vector3<f64>>,
    /// Jacobian columns, one per joint, filled by [`Chain::jacobian`].
    pub columns: Vec<Twist>,
    /// Tip pose of the last evaluation.
    pub tip: Transform,
}

impl Frames {
    pub fn new(chain: &Chain) -> Frames {
        let n = chain.dof();
        Frames {
            origins: vec![Point3::origin(); n],
            axes: vec![Vector3::zeros(); n],
            columns: vec![Twist::default(); n],
            tip: Transform::identity(),
        }
    }
}

impl Joint {
    /// `t * self.motion(q)`, in place: the frame after the joint moved by
    /// `q`. The hot step of forward kinematics: a rotation about a
    /// coordinate axis (what almost every URDF has) mixes two columns of
    /// `t` instead of building a rotation matrix and multiplying by it.
    #[inline]
    pub fn move_frame(&self, t: &mut Transform, q: f64) {
        let (s, c) = if self.kind == JointKind::Prismatic {
            (0.0, 1.0)
        } else {
            q.sin_cos()
        };
        self.move_frame_trig(t, q, s, c);
    }

    /// [`move_frame`](Joint::move_frame) with the sine and cosine of `q`
    /// already known (`s`, `c`): a solver that found the angle from them
    /// (the closed forms) need not call `sin_cos` again.
    #[inline]
    pub fn move_frame_trig(&self, t: &mut Transform, q: f64, s: f64, c: f64) {
        let a = self.axis.into_inner();
        if self.kind == JointKind::Prismatic {
            t.translation.vector += t.rotation * (a * q);
            return;
        }
        // Each case is a right multiplication by a rotation matrix, so the
        // result stays a rotation (`matrix_mut_unchecked` does not check).
        let m = t.rotation.matrix_mut_unchecked();
        let mix = |m: &mut Matrix3<f64>, i: usize, j: usize, s: f64| {
            // columns (i, j) times [[c, -s], [s, c]]
            for r in 0..3 {
                let (mi, mj) = (m[(r, i)], m[(r, j)]);
                m[(r, i)] = c * mi + s * mj;
                m[(r, j)] = c * mj - s * mi;
            }
        };
        match (a.x, a.y, a.z) {
            (x, 0.0, 0.0) if x.abs() == 1.0 => mix(m, 1, 2, x * s),
            (0.0, y, 0.0) if y.abs() == 1.0 => mix(m, 2, 0, y * s),
            (0.0, 0.0, z) if z.abs() == 1.0 => mix(m, 0, 1, z * s),
            _ => *m *= axis_rotation(&a, s, c),
        }
    }
}

/// The rotation about the unit `k` whose angle has sine `s` and cosine
/// `c` (Rodrigues: `c I + s [k]x + (1 - c) k kᵀ`).
#[inline]
pub fn axis_rotation(k: &Vector3<f64>, s: f64, c: f64) -> Matrix3<f64> {
    let t = 1.0 - c;
    Matrix3::new(
        c + k.x * k.x * t,
        k.x * k.y * t - k.z * s,
        k.x * k.z * t + k.y * s,
        k.y * k.x * t + k.z * s,
        c + k.y * k.y * t,
        k.y * k.z * t - k.x * s,
        k.z * k.x * t - k.y * s,
        k.z * k.y * t + k.x * s,
        c + k.z * k.z * t,
    )
}

/// `t *= origin`, skipping the rotation product when the origin does not
/// rotate (most joints of most URDFs: `rpy="0 0 0"`): a translation is
/// then all it adds. The check costs less than the product it saves.
#[inline]
fn follow_origin(t: &mut Transform, origin: &Transform) {
    if origin.rotation.matrix() == &Matrix3::identity() {
        t.translation.vector += t.rotation * origin.translation.vector;
    } else {
        *t *= origin;
    }
}

impl Chain {
    /// The tip pose in the base frame for joint positions `q`.
    ///
    /// `q` must hold one value per moving joint (checked in debug builds).
    pub fn fk(&self, q: &[f64]) -> Transform {
        debug_assert_eq!(q.len(), self.joints.len());
        let mut t = Transform::identity();
        for (joint, &qi) in self.joints.iter().zip(q) {
            follow_origin(&mut t, &joint.origin);
            joint.move_frame(&mut t, qi);
        }
        t * self.tip_offset
    }

    /// [`fk`](Chain::fk) with each joint's `(sin, cos)` already known
    /// (`trig[i]` of `q[i]`; prismatic joints use `q` alone).
    pub fn fk_trig(&self, q: &[f64], trig: &[(f64, f64)]) -> Transform {
        debug_assert_eq!(q.len(), self.joints.len());
        debug_assert_eq!(trig.len(), self.joints.len());
        let mut t = Transform::identity();
        for ((joint, &qi), &(s, c)) in self.joints.iter().zip(q).zip(trig) {
            follow_origin(&mut t, &joint.origin);
            joint.move_frame_trig(&mut t, qi, s, c);
        }
        t * self.tip_offset
    }

    /// Forward kinematics that also records every joint's world origin and
    /// axis in `frames` (what CCD, FABRIK and the Jacobian need).
    pub fn joint_frames(&self, q: &[f64], frames: &mut Frames) -> Transform {
        debug_assert_eq!(q.len(), self.joints.len());
        let mut t = Transform::identity();
        for (i, (joint, &qi)) in self.joints.iter().zip(q).enumerate() {
            t *= joint.origin;
            frames.origins[i] = Point3::from(t.translation.vector);
            frames.axes[i] = t.rotation * joint.axis.into_inner();
            joint.move_frame(&mut t, qi);
        }
        let tip = t * self.tip_offset;
        frames.tip = tip;
        tip
    }

    /// The geometric Jacobian at `q` (linear velocity of the tip origin and
    /// angular velocity, base frame), written to `frames.columns`. Returns
    /// the tip pose.
    pub fn jacobian(&self, q: &[f64], frames: &mut Frames) -> Transform {
        let tip = self.joint_frames(q, frames);
        let p = Point3::from(tip.translation.vector);
        for (i, joint) in self.joints.iter().enumerate() {
            let w = frames.axes[i];
            frames.columns[i] = if joint.kind.rotates() {
                Twist {
                    linear: w.cross(&(p - frames.origins[i])),
                    angular: w,
                }
            } else {
                Twist {
                    linear: w,
                    angular: Vector3::zeros(),
                }
            };
        }
        tip
    }
}
